// dlrt inspect MODEL: what a model declares and what it is made of.
#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_args.h"
#include "commands.h"
#include "dlrt/session.h"
#include "ir/onnx_import.h"
#include "json_out.h"
#include "run_inputs.h"
#include "runtime/session_internal.h"
#include "tensor_format.h"

namespace dlrt::cli {
namespace {

constexpr const char* kInspectHelp =
    "usage: dlrt inspect MODEL [options]\n"
    "\n"
    "Prints the model's inputs and outputs, opsets, node count, op histogram (nodes of\n"
    "If/Loop/Scan bodies included) and the parameter count and bytes (initializers and\n"
    "constants).\n"
    "\n"
    "options:\n"
    "  --device SPEC   also create a session for SPEC and show where each partition would run\n"
    "  --strict        with --device: fail instead of falling back\n"
    "  --json          print one JSON object\n"
    "  -h, --help      this help\n";

struct Totals {
  std::map<std::string, int64_t> ops;
  int64_t nodes = 0;
  int64_t params = 0;
  int64_t bytes = 0;
  int64_t subgraphs = 0;
};

void visit(const ir::Graph& g, Totals& t) {
  for (const auto& v : g.values) {
    if (!v.constant || !v.constant->valid()) continue;
    t.params += v.constant->size();
    if (v.constant->dtype() == DType::kString) {
      for (int64_t i = 0; i < v.constant->size(); ++i) t.bytes += static_cast<int64_t>(v.constant->data<std::string>()[i].size());
    } else {
      t.bytes += static_cast<int64_t>(v.constant->nbytes());
    }
  }
  for (const auto& n : g.nodes) {
    ++t.nodes;
    ++t.ops[n.domain.empty() ? n.op_type : n.domain + "::" + n.op_type];
    for (const auto& [name, a] : n.attributes) {
      if (a.g) {
        ++t.subgraphs;
        visit(*a.g, t);
      }
      for (const auto& sg : a.graphs) {
        if (!sg) continue;
        ++t.subgraphs;
        visit(*sg, t);
      }
    }
  }
}

std::string type_string(const ir::TypeInfo& type) {
  std::string s;
  const std::string map = type.key_dtype != DType::kUndefined
                              ? std::string("map ") + dtype_name(type.key_dtype) + " -> " + dtype_name(type.dtype)
                              : "";
  switch (type.kind) {
    case ir::ValueKind::kSequence: s = "sequence of "; break;
    case ir::ValueKind::kOptional: s = "optional "; break;
    case ir::ValueKind::kMap: return map;
    case ir::ValueKind::kUnknown: return "unknown type";
    case ir::ValueKind::kTensor: break;
  }
  if (!map.empty()) return s + map + "s";
  s += dtype_name(type.dtype);
  if (!type.shape) return s + " [rank unknown]";
  s += " [";
  for (size_t i = 0; i < type.shape->size(); ++i) {
    const auto& d = (*type.shape)[i];
    if (i) s += ", ";
    s += d.is_static() ? std::to_string(d.size) : (d.symbol.empty() ? "?" : d.symbol);
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

nlohmann::json value_json(const ir::Value& v) {
  nlohmann::json j;
  j["name"] = v.name;
  j["kind"] = v.type.kind == ir::ValueKind::kTensor     ? "tensor"
              : v.type.kind == ir::ValueKind::kSequence ? "sequence"
              : v.type.kind == ir::ValueKind::kOptional ? "optional"
                                                        : "unknown";
  j["dtype"] = dtype_name(v.type.dtype);
  if (v.type.shape) {
    nlohmann::json shape = nlohmann::json::array();
    for (const auto& d : *v.type.shape) {
      if (d.is_static()) shape.push_back(d.size);
      else shape.push_back(d.symbol.empty() ? nlohmann::json(nullptr) : nlohmann::json(d.symbol));
    }
    j["shape"] = shape;
  } else {
    j["shape"] = nullptr;
  }
  return j;
}

}  // namespace

int cmd_inspect(int argc, char** argv) {
  const std::vector<FlagSpec> specs = {{"device", true, false}, {"strict", false, false}, {"json", false, false}};
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

  auto model_r = ir::import_onnx_file(path);
  if (!model_r.ok()) {
    std::fprintf(stderr, "dlrt inspect: error: cannot load model %s: %s\n", path.c_str(), model_r.status().to_string().c_str());
    return exit_code_for_model_status(model_r.status());
  }
  const ir::Model& model = *model_r;
  if (!model.graph) {
    std::fprintf(stderr, "dlrt inspect: error: %s: the importer returned no graph\n", path.c_str());
    return kExitRuntimeError;
  }
  const ir::Graph& g = *model.graph;
  Totals totals;
  visit(g, totals);
  std::vector<std::pair<std::string, int64_t>> hist(totals.ops.begin(), totals.ops.end());
  std::stable_sort(hist.begin(), hist.end(), [](const auto& a, const auto& b) { return a.second > b.second; });

  RunReport placement;
  std::vector<NodePlacement> nodes_placed;
  bool have_placement = false;
  if (args.has("device")) {
    SessionOptions options;
    options.device = args.get("device");
    options.strict = args.has("strict");
    auto s = Session::create(path, options);
    if (!s.ok()) {
      std::fprintf(stderr, "dlrt inspect: error: cannot create a session for device '%s': %s\n", options.device.c_str(),
                   s.status().to_string().c_str());
      return exit_code_for_model_status(s.status());
    }
    placement = (*s)->placement();
    nodes_placed = session_node_placement(**s);
    have_placement = true;
  }

  if (args.has("json")) {
    nlohmann::json j;
    j["model"] = path;
    j["ir_version"] = model.ir_version;
    j["producer"] = model.producer_name + (model.producer_version.empty() ? "" : " " + model.producer_version);
    j["opsets"] = nlohmann::json::object();
    for (const auto& [domain, v] : model.opsets) j["opsets"][domain.empty() ? "ai.onnx" : domain] = v;
    j["inputs"] = nlohmann::json::array();
    for (auto id : g.inputs) j["inputs"].push_back(value_json(g.values[static_cast<size_t>(id)]));
    j["outputs"] = nlohmann::json::array();
    for (auto id : g.outputs) j["outputs"].push_back(value_json(g.values[static_cast<size_t>(id)]));
    j["node_count"] = totals.nodes;
    j["subgraph_count"] = totals.subgraphs;
    j["op_histogram"] = nlohmann::json::object();
    for (const auto& [op, n] : totals.ops) j["op_histogram"][op] = n;
    j["parameter_count"] = totals.params;
    j["parameter_bytes"] = totals.bytes;
    if (have_placement) {
      j["placement"] = nlohmann::json::array();
      for (const auto& p : placement.partitions)
        j["placement"].push_back({{"backend", p.backend}, {"device", p.device}, {"node_count", p.node_count},
                                  {"degraded", p.degraded}, {"reason", p.reason}});
      j["nodes"] = nlohmann::json::array();
      for (const auto& n : nodes_placed) {
        const auto& p = placement.partitions[static_cast<size_t>(n.partition)];
        nlohmann::json e = {{"node", n.node}, {"op_type", n.op_type}, {"partition", n.partition},
                            {"backend", p.backend}, {"device", p.device}};
        if (!n.cpu_reason.empty()) e["cpu_reason"] = n.cpu_reason;
        j["nodes"].push_back(std::move(e));
      }
    }
    print_json(j);
    return kExitOk;
  }

  std::printf("model: %s\n", path.c_str());
  std::printf("ir_version: %lld, producer: %s %s\n", static_cast<long long>(model.ir_version),
              model.producer_name.empty() ? "(none)" : model.producer_name.c_str(), model.producer_version.c_str());
  std::printf("opsets:");
  for (const auto& [domain, v] : model.opsets) std::printf(" %s=%d", domain.empty() ? "ai.onnx" : domain.c_str(), v);
  std::printf("\ninputs:\n");
  for (auto id : g.inputs) {
    const auto& v = g.values[static_cast<size_t>(id)];
    std::printf("  %s: %s\n", v.name.c_str(), type_string(v.type).c_str());
  }
  std::printf("outputs:\n");
  for (auto id : g.outputs) {
    const auto& v = g.values[static_cast<size_t>(id)];
    std::printf("  %s: %s\n", v.name.c_str(), type_string(v.type).c_str());
  }
  std::printf("nodes: %lld (%lld subgraphs)\n", static_cast<long long>(totals.nodes), static_cast<long long>(totals.subgraphs));
  std::printf("op histogram:\n");
  for (const auto& [op, n] : hist) std::printf("  %6lld  %s\n", static_cast<long long>(n), op.c_str());
  std::printf("parameters: %lld (%lld bytes, %.2f MiB)\n", static_cast<long long>(totals.params),
              static_cast<long long>(totals.bytes), static_cast<double>(totals.bytes) / (1024.0 * 1024.0));
  if (have_placement) {
    std::printf("placement for --device %s:\n", args.get("device").c_str());
    for (size_t i = 0; i < placement.partitions.size(); ++i) {
      const auto& p = placement.partitions[i];
      std::printf("  partition %zu: %d nodes on %s (%s)%s%s%s%s\n", i, p.node_count, p.backend.c_str(),
                  device_label(p).c_str(), p.precision.empty() ? "" : ", computes in ", p.precision.c_str(),
                  p.degraded ? ", DEGRADED: " : "", p.degraded ? p.reason.c_str() : "");
    }
    print_cpu_reasons(nodes_placed);
  }
  return kExitOk;
}

}  // namespace dlrt::cli
