// dlrt inspect MODEL: what a model declares and what it is made of.
#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_args.h"
#include "commands.h"
#include "dlrt/model_info.h"
#include "dlrt/placement.h"
#include "dlrt/precision_choice.h"
#include "dlrt/session.h"
#include "embed/models/precision_json.h"
#include "json_out.h"
#include "run_inputs.h"
#include "tensor_format.h"

namespace dlrt::cli {
namespace {

constexpr const char* kInspectHelp =
    "usage: dlrt inspect MODEL [options]\n"
    "\n"
    "Prints the model's inputs and outputs, opsets, node count, op histogram (nodes of\n"
    "If/Loop/Scan bodies included) and the parameter count and bytes (initializers and\n"
    "constants), as the model declares them. With --device or --precision it also shows what a\n"
    "session would run: each partition and what it computes in, after the graph rewrites (a\n"
    "static QDQ model's int8 ops included).\n"
    "\n"
    "options:\n"
    "  --device SPEC   also create a session for SPEC and show where each partition would run\n"
    "  --strict        with --device: fail instead of falling back\n"
    "  --precision P   also create a session with CPU precision P (f32, bf16, bf16x3, auto) and show\n"
    "                  its placement; auto: each precision measured and the one chosen\n"
    "  --json          print one JSON object\n"
    "  -h, --help      this help\n";

std::string type_string(const ModelValueInfo& v) {
  std::string s;
  const std::string map = v.key_dtype != DType::kUndefined
                              ? std::string("map ") + dtype_name(v.key_dtype) + " -> " + dtype_name(v.dtype)
                              : "";
  if (v.kind == "sequence") s = "sequence of ";
  else if (v.kind == "optional") s = "optional ";
  else if (v.kind == "map") return map;
  else if (v.kind == "unknown") return "unknown type";
  if (!map.empty()) return s + map + "s";
  s += dtype_name(v.dtype);
  if (!v.has_shape) return s + " [rank unknown]";
  s += " [";
  for (size_t i = 0; i < v.shape.size(); ++i) {
    if (i) s += ", ";
    s += v.shape[i] >= 0 ? std::to_string(v.shape[i]) : (v.dim_names[i].empty() ? "?" : v.dim_names[i]);
  }
  return s + "]";
}

// Nodes kept on the CPU although an accelerator was asked for, grouped by op
// type and reason (a model has hundreds of nodes; --json lists every one).
void print_cpu_reasons(const std::vector<NodePlacement>& nodes) {
  std::map<std::pair<std::string, std::string>, std::vector<std::string>> groups;
  for (const auto& n : nodes)
    if (!n.cpu_reason.empty()) groups[{n.op_type, n.cpu_reason}].push_back(n.node.empty() ? "(unnamed)" : n.node);
  if (groups.empty()) return;
  std::printf("on cpu, and why:\n");
  for (const auto& [key, names] : groups) {
    std::string list;
    for (size_t i = 0; i < names.size() && i < 3; ++i) list += (i ? ", " : "") + names[i];
    if (names.size() > 3) list += ", ...";
    std::printf("  %zu x %s (%s): %s\n", names.size(), key.first.c_str(), list.c_str(), key.second.c_str());
  }
}

nlohmann::json value_json(const ModelValueInfo& v) {
  nlohmann::json j;
  j["name"] = v.name;
  j["kind"] = v.kind == "map" ? "unknown" : v.kind;
  j["dtype"] = dtype_name(v.dtype);
  if (v.has_shape) {
    nlohmann::json shape = nlohmann::json::array();
    for (size_t i = 0; i < v.shape.size(); ++i) {
      if (v.shape[i] >= 0) shape.push_back(v.shape[i]);
      else shape.push_back(v.dim_names[i].empty() ? nlohmann::json(nullptr) : nlohmann::json(v.dim_names[i]));
    }
    j["shape"] = shape;
  } else {
    j["shape"] = nullptr;
  }
  return j;
}

// What cpu_precision "auto" measured: one line per precision.
void print_precision_choice(const PrecisionChoice& c) {
  if (!c.automatic) return;
  std::printf("cpu precision auto: %s\n", c.chosen.c_str());
  std::printf("  canary inputs: %s, %d set(s), median of %d rounds; bound: cosine >= %g, rel. error <= %g, "
              "time under %.2fx f32's\n",
              c.canary.c_str(), c.canary_sets, c.rounds, c.bound.min_cosine, c.bound.max_rel_error,
              1 - c.bound.speed_margin);
  for (const PrecisionTrial& t : c.trials) {
    if (t.ran)
      std::printf("  %-7s %9.3f ms  cosine %.6f  rel. error %.1e  %s\n", t.precision.c_str(), t.median_ms, t.min_cosine,
                  t.max_rel_error, t.verdict.c_str());
    else
      std::printf("  %-7s %s\n", t.precision.c_str(), t.verdict.c_str());
  }
}

// "Conv", or "com.microsoft::QAttention" outside the default domain.
std::string op_key(const OpCount& op) { return op.domain.empty() ? op.op_type : op.domain + "::" + op.op_type; }

}  // namespace

int cmd_inspect(int argc, char** argv) {
  const std::vector<FlagSpec> specs = {
      {"device", true, false}, {"strict", false, false}, {"json", false, false}, {"precision", true, false}};
  auto parsed = parse_args(argc, argv, 2, specs);
  if (!parsed.ok()) return usage_error("inspect", parsed.status().message());
  const Args& args = *parsed;
  if (args.has("help")) {
    std::fputs(kInspectHelp, stdout);
    return kExitOk;
  }
  if (args.positional.size() != 1)
    return usage_error("inspect", args.positional.empty() ? "missing MODEL" : "expected one MODEL");
  const std::string path = args.positional[0];

  auto model_r = read_model_info(path);
  if (!model_r.ok()) {
    const StatusCode code = model_r.status().code();
    std::fprintf(stderr, code == StatusCode::kInternal ? "dlrt inspect: error: %s: %s\n"
                                                       : "dlrt inspect: error: cannot load model %s: %s\n",
                 path.c_str(), model_r.status().to_string().c_str());
    return code == StatusCode::kInternal ? kExitRuntimeError : exit_code_for_model_status(model_r.status());
  }
  const ModelInfo& model = *model_r;
  std::map<std::string, int64_t> ops;
  for (const OpCount& op : model.ops) ops[op_key(op)] += op.count;
  std::vector<std::pair<std::string, int64_t>> hist(ops.begin(), ops.end());
  std::stable_sort(hist.begin(), hist.end(), [](const auto& a, const auto& b) { return a.second > b.second; });

  RunReport placement;
  std::vector<NodePlacement> nodes_placed;
  PrecisionChoice precision;
  bool have_placement = false;
  if (args.has("device") || args.has("precision")) {
    SessionOptions options;
    options.device = args.get("device");
    options.strict = args.has("strict");
    if (args.has("precision")) {
      auto p = parse_precision(args.get("precision"));
      if (!p.ok()) return usage_error("inspect", p.status().message());
      options.cpu_precision = *p;
    }
    auto s = Session::create(path, options);
    if (!s.ok()) {
      std::fprintf(stderr, "dlrt inspect: error: cannot create a session for device '%s': %s\n", options.device.c_str(),
                   s.status().to_string().c_str());
      return exit_code_for_model_status(s.status());
    }
    placement = (*s)->placement();
    nodes_placed = node_placement(**s);
    precision = precision_choice(**s);
    have_placement = true;
  }

  if (args.has("json")) {
    nlohmann::json j;
    j["model"] = path;
    j["ir_version"] = model.ir_version;
    const ModelMetadata& meta = model.metadata;
    j["producer"] = meta.producer_name + (meta.producer_version.empty() ? "" : " " + meta.producer_version);
    j["opsets"] = nlohmann::json::object();
    for (const auto& [domain, v] : model.opsets) j["opsets"][domain.empty() ? "ai.onnx" : domain] = v;
    j["inputs"] = nlohmann::json::array();
    for (const ModelValueInfo& v : model.inputs) j["inputs"].push_back(value_json(v));
    j["outputs"] = nlohmann::json::array();
    for (const ModelValueInfo& v : model.outputs) j["outputs"].push_back(value_json(v));
    j["node_count"] = model.node_count;
    j["subgraph_count"] = model.subgraph_count;
    j["op_histogram"] = nlohmann::json::object();
    for (const auto& [op, n] : ops) j["op_histogram"][op] = n;
    j["parameter_count"] = model.parameter_count;
    j["parameter_bytes"] = model.parameter_bytes;
    if (have_placement) {
      j["placement"] = nlohmann::json::array();
      for (const auto& p : placement.partitions) {
        j["placement"].push_back({{"backend", p.backend}, {"device", p.device}, {"node_count", p.node_count},
                                  {"degraded", p.degraded}, {"reason", p.reason}});
        if (!p.precision.empty()) j["placement"].back()["precision"] = p.precision;
      }
      j["nodes"] = nlohmann::json::array();
      for (const auto& n : nodes_placed) {
        const auto& p = placement.partitions[static_cast<size_t>(n.partition)];
        nlohmann::json e = {{"node", n.node}, {"op_type", n.op_type}, {"partition", n.partition},
                            {"backend", p.backend}, {"device", p.device}};
        if (!n.cpu_reason.empty()) e["cpu_reason"] = n.cpu_reason;
        j["nodes"].push_back(std::move(e));
      }
      j["cpu_precision"] = embed::precision_choice_json(precision);
    }
    print_json(j);
    return kExitOk;
  }

  std::printf("model: %s\n", path.c_str());
  std::printf("ir_version: %lld, producer: %s %s\n", static_cast<long long>(model.ir_version),
              model.metadata.producer_name.empty() ? "(none)" : model.metadata.producer_name.c_str(),
              model.metadata.producer_version.c_str());
  std::printf("opsets:");
  for (const auto& [domain, v] : model.opsets) std::printf(" %s=%d", domain.empty() ? "ai.onnx" : domain.c_str(), v);
  std::printf("\ninputs:\n");
  for (const ModelValueInfo& v : model.inputs) std::printf("  %s: %s\n", v.name.c_str(), type_string(v).c_str());
  std::printf("outputs:\n");
  for (const ModelValueInfo& v : model.outputs) std::printf("  %s: %s\n", v.name.c_str(), type_string(v).c_str());
  std::printf("nodes: %lld (%lld subgraphs)\n", static_cast<long long>(model.node_count),
              static_cast<long long>(model.subgraph_count));
  std::printf("op histogram:\n");
  for (const auto& [op, n] : hist) std::printf("  %6lld  %s\n", static_cast<long long>(n), op.c_str());
  std::printf("parameters: %lld (%lld bytes, %.2f MiB)\n", static_cast<long long>(model.parameter_count),
              static_cast<long long>(model.parameter_bytes), static_cast<double>(model.parameter_bytes) / (1024.0 * 1024.0));
  if (have_placement) {
    std::printf("placement for --device %s:\n", args.has("device") ? args.get("device").c_str() : "(default)");
    for (size_t i = 0; i < placement.partitions.size(); ++i) {
      const auto& p = placement.partitions[i];
      std::printf("  partition %zu: %d nodes on %s (%s)%s%s%s%s\n", i, p.node_count, p.backend.c_str(),
                  device_label(p).c_str(), p.precision.empty() ? "" : ", computes in ", p.precision.c_str(),
                  p.degraded ? ", DEGRADED: " : "", p.degraded ? p.reason.c_str() : "");
    }
    print_cpu_reasons(nodes_placed);
    print_precision_choice(precision);
  }
  return kExitOk;
}

}  // namespace dlrt::cli
