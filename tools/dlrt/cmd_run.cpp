// dlrt run MODEL: run a model once and show outputs, placement and timings.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_args.h"
#include "commands.h"
#include "core/npy.h"
#include "dlrt/precision_choice.h"
#include "dlrt/session.h"
#include "embed/models/precision_json.h"
#include "json_out.h"
#include "run_inputs.h"
#include "tensor_format.h"

namespace dlrt::cli {
namespace {

constexpr const char* kRunHelp =
    "usage: dlrt run MODEL [options]\n"
    "\n"
    "Runs MODEL once and prints each output (dtype, shape, first values, min/max/mean),\n"
    "where each partition of the graph ran, and the session-create and run times.\n"
    "Inputs not given with --input get random values of the right dtype and shape\n"
    "(floats in [-1, 1), integers 0 or 1); dynamic dims default to 1.\n"
    "\n"
    "options:\n"
    "  --device SPEC         auto, cpu, gpu, npu, a backend or backend:device; comma-separated\n"
    "                        priority list (default: $DLRT_DEVICE, else auto)\n"
    "  --strict              fail instead of falling back to another device (also DLRT_STRICT=1)\n"
    "  --input NAME=FILE     feed input NAME from a .npy file (repeatable)\n"
    "  --shape NAME=DIMS     shape of a random input, e.g. --shape input_ids=1x128; inputs sharing\n"
    "                        its named dims follow it. --shape DIM=N sizes a named dim (dim_param)\n"
    "                        in every input, e.g. --shape sequence=128 (repeatable)\n"
    "  --output-dir DIR      write each output to DIR/<output name>.npy (characters outside\n"
    "                        [A-Za-z0-9._-] replaced by '_'); a sequence's tensors to\n"
    "                        <name>.0.npy, <name>.1.npy ...; a map's (or ZipMap's sequence of\n"
    "                        maps') keys and values to <name>.keys.npy and <name>.values.npy\n"
    "  --threads N           intra-op threads (default 0: one per core)\n"
    "  --precision P         CPU float matmuls: f32 (default), bf16 (one bf16 product per term,\n"
    "                        AVX512-BF16 or Arm BF16; about 1e-3 relative error) or bf16x3 (AMX\n"
    "                        tiles, about 1e-5; each f32 where the CPU lacks the instructions), or\n"
    "                        auto (the fastest of these within a bound of f32, measured at create\n"
    "                        on the --input files when they give every input, else on generated\n"
    "                        inputs; the report says what it measured). Also DLRT_CPU_PRECISION\n"
    "  --seed N              seed of the random inputs (default 0)\n"
    "  --json                print one JSON object: inputs, outputs, report, timings_ms\n"
    "  -h, --help            this help\n"
    "\n"
    "exit codes: 0 ok, 1 runtime error, 2 usage error, 3 invalid or unsupported model,\n"
    "            4 requested device unavailable in strict mode\n";

int run_fail(const std::string& message, int code) { return command_error("run", message, code); }

// --device, --strict, --precision, --threads and --seed; kExitOk or the usage error's code.
int parse_run_options(const Args& args, SessionOptions& options, uint64_t& seed) {
  options.device = args.get("device");
  options.strict = args.has("strict");
  if (args.has("precision")) {
    auto precision = parse_precision(args.get("precision"));
    if (!precision.ok()) return usage_error("run", precision.status().message());
    options.cpu_precision = *precision;
  }
  if (args.has("threads")) {
    auto n = parse_nonnegative_int(args.get("threads"), "--threads");
    if (!n.ok()) return usage_error("run", n.status().message());
    if (*n > kMaxThreads) return usage_error("run", "--threads must be at most " + std::to_string(kMaxThreads));
    options.threads = static_cast<int>(*n);
  }
  seed = 0;
  if (args.has("seed")) {
    auto n = parse_nonnegative_int(args.get("seed"), "--seed");
    if (!n.ok()) return usage_error("run", n.status().message());
    seed = static_cast<uint64_t>(*n);
  }
  return kExitOk;
}

// One tensor of an output: the output itself, a sequence's item (".0", ".1",
// ...) or a map's keys or values (".keys", ".values").
struct Part {
  size_t output;
  std::string suffix;
  Tensor tensor;
};

// What one run made, for printing.
struct RunOutcome {
  std::string model_path;
  std::vector<PreparedInput> plans;
  std::vector<TensorInfo> out_infos;
  std::vector<Part> parts;
  std::vector<std::string> written;  // the .npy file of parts[i], when --output-dir
  RunReport report;
  PrecisionChoice precision;  // what cpu_precision "auto" measured
  double create_ms = 0;
  double run_ms = 0;

  std::string output_name(size_t i) const {
    return i < out_infos.size() ? out_infos[i].name : "output_" + std::to_string(i);
  }
  std::string part_name(const Part& p) const { return output_name(p.output) + p.suffix; }
};

std::vector<Part> parts_of(std::vector<Value>& outputs) {
  std::vector<Part> parts;
  for (size_t i = 0; i < outputs.size(); ++i) {
    Value& v = outputs[i];
    switch (v.kind) {
      case Value::Kind::kTensor: parts.push_back({i, "", std::move(v.tensor)}); break;
      case Value::Kind::kSequence:
        for (size_t k = 0; k < v.sequence.size(); ++k) parts.push_back({i, "." + std::to_string(k), std::move(v.sequence[k])});
        break;
      case Value::Kind::kMap:
      case Value::Kind::kMapSequence:
        parts.push_back({i, ".keys", std::move(v.keys)});
        parts.push_back({i, ".values", std::move(v.values)});
        break;
      case Value::Kind::kNone: break;
    }
  }
  return parts;
}

// Writes every part to DIR/<name><suffix>.npy (--output-dir); kExitOk or the failure's code.
int write_parts(const std::filesystem::path& dir, RunOutcome& r) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return run_fail("cannot create output folder " + dir.string() + ": " + ec.message(), kExitRuntimeError);
  std::map<std::string, std::string> used;
  for (const Part& p : r.parts) {
    std::string file = sanitize_file_name(r.output_name(p.output)) + p.suffix;
    if (used.count(file))
      return run_fail("outputs '" + used[file] + "' and '" + r.part_name(p) + "' map to the same file name " + file + ".npy",
                      kExitRuntimeError);
    used[file] = r.part_name(p);
    std::string path = (dir / (file + ".npy")).string();
    Status s = write_npy_file(path, p.tensor);
    if (!s.ok()) return run_fail("cannot write output '" + r.part_name(p) + "': " + s.message(), kExitRuntimeError);
    r.written.push_back(path);
  }
  return kExitOk;
}

void print_run_json(const RunOutcome& r) {
  nlohmann::json j;
  j["model"] = r.model_path;
  j["inputs"] = inputs_json(r.plans);
  j["outputs"] = nlohmann::json::array();
  for (size_t i = 0; i < r.parts.size(); ++i) {
    nlohmann::json o = tensor_summary_json(r.part_name(r.parts[i]), r.parts[i].tensor);
    if (i < r.written.size()) o["file"] = r.written[i];
    j["outputs"].push_back(o);
  }
  j["report"] = report_json(r.report);
  j["cpu_precision"] = embed::precision_choice_json(r.precision);
  j["timings_ms"] = {{"session_create", r.create_ms}, {"run", r.run_ms}};
  print_json(j);
}

void print_run_text(const RunOutcome& r) {
  std::printf("model: %s\n", r.model_path.c_str());
  std::printf("inputs:\n");
  for (const auto& plan : r.plans)
    std::printf("  %s: %s %s (%s)\n", plan.name.c_str(), dtype_name(plan.tensor.dtype()), shape_to_string(plan.tensor.shape()).c_str(),
                plan.source.c_str());
  std::printf("outputs:\n");
  const std::vector<Part>& parts = r.parts;
  for (size_t i = 0; i < parts.size(); ++i) {
    const Tensor& t = parts[i].tensor;
    if (!parts[i].suffix.empty() && (i == 0 || parts[i - 1].output != parts[i].output))
      std::printf("  %s: %s\n", r.output_name(parts[i].output).c_str(), r.out_infos[parts[i].output].type.c_str());
    std::printf("  %s: %s %s\n", r.part_name(parts[i]).c_str(), dtype_name(t.dtype()), shape_to_string(t.shape()).c_str());
    std::printf("    values: %s\n", value_preview(t).c_str());
    TensorStats st = tensor_stats(t);
    if (st.numeric && t.size() > 0) {
      std::printf("    min %.6g  max %.6g  mean %.6g", st.min, st.max, st.mean);
      if (st.nan_count) std::printf("  nan %lld", static_cast<long long>(st.nan_count));
      if (st.inf_count) std::printf("  inf %lld", static_cast<long long>(st.inf_count));
      std::printf("\n");
    }
    if (i < r.written.size()) std::printf("    written to %s\n", r.written[i].c_str());
  }
  std::printf("placement:\n");
  if (r.report.partitions.empty()) std::printf("  (the session reported no partitions)\n");
  for (size_t i = 0; i < r.report.partitions.size(); ++i) {
    const auto& p = r.report.partitions[i];
    // The reason is printed for every partition that has one: why it degraded, or a note such as
    // which compiled blob was used or why a CPU partition was not taken by an accelerator.
    std::printf("  partition %zu: %d nodes on %s (%s), %s ms%s%s\n", i, p.node_count, p.backend.c_str(),
                device_label(p).c_str(),
                format_ms(p.time_ms).c_str(), p.degraded ? ", DEGRADED: " : (p.reason.empty() ? "" : ": "),
                p.reason.c_str());
  }
  if (r.precision.automatic) std::printf("cpu precision auto: %s\n", r.precision.reason.c_str());
  std::printf("timings: session_create %s ms, run %s ms\n", format_ms(r.create_ms).c_str(), format_ms(r.run_ms).c_str());
}

}  // namespace

int cmd_run(int argc, char** argv) {
  const std::vector<FlagSpec> specs = {
      {"device", true, false}, {"strict", false, false}, {"input", true, true},   {"shape", true, true},
      {"output-dir", true, false}, {"threads", true, false}, {"precision", true, false}, {"seed", true, false}, {"json", false, false},
  };
  auto parsed = parse_args(argc, argv, 2, specs);
  if (!parsed.ok()) return usage_error("run", parsed.status().message());
  const Args& args = *parsed;
  if (args.has("help")) {
    std::fputs(kRunHelp, stdout);
    return kExitOk;
  }
  if (args.positional.size() != 1)
    return usage_error("run", args.positional.empty() ? "missing MODEL" : "expected one MODEL, got " +
                                                                              std::to_string(args.positional.size()) +
                                                                              " positional arguments");
  RunOutcome r;
  r.model_path = args.positional[0];
  SessionOptions options;
  uint64_t seed = 0;
  if (int rc = parse_run_options(args, options, seed); rc != kExitOk) return rc;
  InputFlags input_flags;
  if (int rc = parse_input_flags(args, "run", input_flags); rc != kExitOk) return rc;

  // Create the session ("auto" measures on the --input files when they give every input).
  if (options.cpu_precision == "auto") options.canary_inputs = canary_from_input_files(r.model_path, input_flags);
  auto t0 = std::chrono::steady_clock::now();
  auto session_r = Session::create(r.model_path, options);
  r.create_ms = ms_since(t0);
  if (!session_r.ok()) {
    const Status& s = session_r.status();
    return run_fail("cannot load model " + r.model_path + ": " + s.to_string(), exit_code_for_model_status(s));
  }
  const Session& session = **session_r;
  r.precision = precision_choice(session);

  // Prepare inputs: from .npy files, else random.
  std::mt19937_64 rng(seed);
  if (int rc = prepare_inputs(session, input_flags, rng, "run", r.plans); rc != kExitOk) return rc;
  std::map<std::string, Value> values;
  for (auto& [name, t] : feeds_of(r.plans)) values.emplace(name, Value::of(t));

  // Run.
  t0 = std::chrono::steady_clock::now();
  auto outputs_r = session.run_values(values, {}, &r.report);
  r.run_ms = ms_since(t0);
  if (!outputs_r.ok()) {
    const Status& s = outputs_r.status();
    return run_fail("run failed: " + s.to_string(), exit_code_for_run_status(s));
  }
  r.out_infos = session.outputs();
  r.parts = parts_of(*outputs_r);
  if (args.has("output-dir"))
    if (int rc = write_parts(args.get("output-dir"), r); rc != kExitOk) return rc;
  if (args.has("json")) {
    print_run_json(r);
  } else {
    print_run_text(r);
  }
  return kExitOk;
}

}  // namespace dlrt::cli
