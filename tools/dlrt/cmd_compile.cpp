// dlrt compile MODEL --device SPEC -o OUT.onnx: ahead-of-time compile of every
// partition the spec's backend takes (virtual devices included) into an ONNX
// model of com.dlrt.CompiledPartition nodes (src/runtime/compiled_model.h).
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_args.h"
#include "commands.h"
#include "dlrt/compile.h"
#include "json_out.h"

namespace dlrt::cli {
namespace {

constexpr const char* kCompileHelp =
    "usage: dlrt compile MODEL --device SPEC -o OUT.onnx [options]\n"
    "\n"
    "Compiles every partition of MODEL that SPEC's devices take, ahead of time, and writes\n"
    "OUT.onnx: each compiled partition becomes one com.dlrt.CompiledPartition node holding\n"
    "the backend's blob, what it is compatible with (backend runtime version, device,\n"
    "driver) and the original subgraph. `dlrt run OUT.onnx` uses the blob when it fits the\n"
    "machine and recompiles the subgraph when not (the report says which and why).\n"
    "Virtual devices count: `--device openvino:NPU` compiles for an NPU on a machine\n"
    "without one when the backend offers a virtual NPU. `--device cpu` compiles the whole\n"
    "graph for the CPU backend. Nodes no requested device takes stay as they are.\n"
    "\n"
    "options:\n"
    "  --device SPEC          as for dlrt run (default: auto)\n"
    "  -o, --output OUT       the compiled model to write (required); large blobs go to\n"
    "                         side files OUT.<node>.blob next to it\n"
    "  --option KEY=VALUE     backend compile option (repeatable), e.g.\n"
    "                         --option performance_hint=THROUGHPUT\n"
    "  --embed-limit-mb N     blobs up to N MiB are embedded in OUT, larger ones go to side\n"
    "                         files (default 64; 0: always side files)\n"
    "  --strict               fail when a requested device is unavailable or a partition\n"
    "                         does not compile (default: keep its nodes uncompiled)\n"
    "  --json                 print a JSON summary\n"
    "  -h, --help             this help\n"
    "\n"
    "exit codes: 0 ok, 1 runtime error (compile or write failed), 2 usage error,\n"
    "            3 invalid or unsupported model, 4 no requested device can compile\n";

int compile_fail(const std::string& message, int code) {
  std::fprintf(stderr, "dlrt compile: error: %s\n", message.c_str());
  return code;
}

std::string size_text(uint64_t n) {
  char buf[64];
  if (n >= (1u << 20)) std::snprintf(buf, sizeof buf, "%.1f MiB", n / 1048576.0);
  else if (n >= 1024) std::snprintf(buf, sizeof buf, "%.1f KiB", n / 1024.0);
  else std::snprintf(buf, sizeof buf, "%llu bytes", static_cast<unsigned long long>(n));
  return buf;
}

}  // namespace

int cmd_compile(int argc, char** argv) {
  // "-o" is the one short flag; the shared parser knows long flags only.
  std::vector<std::string> storage(argv, argv + argc);
  for (size_t i = 2; i < storage.size(); ++i) {
    if (storage[i] == "--") break;
    if (storage[i] == "-o") storage[i] = "--output";
    else if (storage[i].rfind("-o", 0) == 0 && storage[i].rfind("--", 0) != 0) storage[i] = "--output=" + storage[i].substr(2);
  }
  std::vector<char*> args_v;
  for (auto& s : storage) args_v.push_back(s.data());
  const std::vector<FlagSpec> specs = {
      {"device", true, false}, {"output", true, false},          {"option", true, true},
      {"strict", false, false}, {"embed-limit-mb", true, false}, {"json", false, false},
  };
  auto parsed = parse_args(static_cast<int>(args_v.size()), args_v.data(), 2, specs);
  if (!parsed.ok()) return usage_error("compile", parsed.status().message());
  const Args& args = *parsed;
  if (args.has("help")) {
    std::fputs(kCompileHelp, stdout);
    return kExitOk;
  }
  if (args.positional.size() != 1)
    return usage_error("compile", args.positional.empty() ? "missing MODEL"
                                                          : "expected one MODEL, got " + std::to_string(args.positional.size()) +
                                                                " positional arguments");
  if (!args.has("output") || args.get("output").empty()) return usage_error("compile", "missing -o OUT.onnx");

  CompileModelOptions options;
  options.device = args.get("device", "auto");
  options.strict = args.has("strict");
  for (const auto& a : args.all("option")) {
    std::string k, v;
    Status s = split_assignment(a, "option", k, v);
    if (!s.ok()) return usage_error("compile", s.message());
    options.options[k] = v;
  }
  if (args.has("embed-limit-mb")) {
    auto n = parse_nonnegative_int(args.get("embed-limit-mb"), "--embed-limit-mb");
    if (!n.ok()) return usage_error("compile", n.status().message());
    if (*n > 1024) return usage_error("compile", "--embed-limit-mb must be at most 1024 (ONNX files are limited to 2 GiB)");
    options.max_embedded_bytes = static_cast<uint64_t>(*n) << 20;
  }
  const std::string model = args.positional[0];
  const std::string out = args.get("output");
  {
    std::error_code ec;
    std::filesystem::path dir = std::filesystem::path(out).parent_path();
    if (!dir.empty() && !std::filesystem::is_directory(dir, ec))
      return usage_error("compile", "the output folder " + dir.string() + " does not exist");
    if (std::filesystem::is_directory(out, ec)) return usage_error("compile", "-o " + out + " is a folder; name the output file");
  }

  auto r = compile_model_file(model, out, options);
  if (!r.ok()) {
    const Status& s = r.status();
    int code = kExitRuntimeError;
    if (s.code() == StatusCode::kInvalidArgument) return usage_error("compile", s.message());
    if (s.code() == StatusCode::kDeviceUnavailable) code = kExitDeviceUnavailable;
    else if (s.code() == StatusCode::kInvalidModel || s.code() == StatusCode::kUnsupported || s.code() == StatusCode::kIoError)
      code = exit_code_for_model_status(s);
    return compile_fail(s.to_string(), code);
  }
  const CompileModelResult& res = *r;
  int compiled = 0;
  for (const auto& p : res.partitions) compiled += p.compiled ? 1 : 0;

  if (args.has("json")) {
    nlohmann::json j;
    j["model"] = model;
    j["output"] = out;
    j["device"] = options.device;
    j["partitions"] = nlohmann::json::array();
    for (const auto& p : res.partitions)
      j["partitions"].push_back({{"backend", p.backend}, {"device", p.device}, {"virtual", p.is_virtual},
                                 {"node_count", p.node_count}, {"compiled", p.compiled}, {"error", p.error},
                                 {"blob_bytes", p.blob_bytes}, {"blob_file", p.blob_file}});
    j["plain_nodes"] = res.plain_nodes;
    j["unavailable"] = res.unavailable;
    print_json(j);
    return kExitOk;
  }
  std::printf("compiled %s -> %s\n", model.c_str(), out.c_str());
  for (const auto& u : res.unavailable) std::printf("  unavailable: %s\n", u.c_str());
  for (size_t i = 0; i < res.partitions.size(); ++i) {
    const auto& p = res.partitions[i];
    if (p.compiled)
      std::printf("  partition %zu: %d nodes for %s%s, blob %s %s\n", i, p.node_count, p.device.c_str(),
                  p.is_virtual ? " (virtual device)" : "", size_text(p.blob_bytes).c_str(),
                  p.blob_file.empty() ? "embedded" : ("in " + p.blob_file).c_str());
    else
      std::printf("  partition %zu: %d nodes for %s NOT compiled (kept as ONNX nodes): %s\n", i, p.node_count,
                  p.device.c_str(), p.error.c_str());
  }
  if (res.plain_nodes > 0) std::printf("  %d nodes left as ordinary ONNX nodes\n", res.plain_nodes);
  if (compiled == 0) std::printf("  note: nothing was compiled; the output runs like the input model\n");
  return kExitOk;
}

}  // namespace dlrt::cli
