#include "runtime/model_description.h"

#include <utility>

#include "ir/onnx_import.h"
#include "runtime/session_values.h"

namespace dlrt {
namespace {

const char* kind_name(ir::ValueKind k) {
  switch (k) {
    case ir::ValueKind::kTensor: return "tensor";
    case ir::ValueKind::kSequence: return "sequence";
    case ir::ValueKind::kOptional: return "optional";
    case ir::ValueKind::kMap: return "map";
    case ir::ValueKind::kUnknown: return "unknown";
  }
  return "unknown";
}

ModelValueInfo value_info(const ir::Value& v) {
  ModelValueInfo out;
  out.name = v.name;
  out.kind = kind_name(v.type.kind);
  out.dtype = v.type.dtype;
  out.key_dtype = v.type.key_dtype;
  out.has_shape = v.type.shape.has_value();
  if (v.type.shape) {
    for (const ir::Dim& d : *v.type.shape) {
      out.shape.push_back(d.is_static() ? d.size : -1);
      out.dim_names.push_back(d.symbol);
    }
  }
  out.type = onnx_type_string(v.type);
  return out;
}

struct Totals {
  std::map<std::pair<std::string, std::string>, int64_t> ops;
  ModelInfo* info;

  void visit(const ir::Graph& g) {
    for (const ir::Value& v : g.values) {
      if (!v.constant || !v.constant->valid()) continue;
      info->parameter_count += v.constant->size();
      if (v.constant->dtype() == DType::kString) {
        for (int64_t i = 0; i < v.constant->size(); ++i)
          info->parameter_bytes += static_cast<int64_t>(v.constant->data<std::string>()[i].size());
      } else {
        info->parameter_bytes += static_cast<int64_t>(v.constant->nbytes());
      }
    }
    for (const ir::Node& n : g.nodes) {
      ++info->node_count;
      ++ops[{n.domain, n.op_type}];
      for (const auto& [name, a] : n.attributes) {
        if (a.g) {
          ++info->subgraph_count;
          visit(*a.g);
        }
        for (const auto& sg : a.graphs) {
          if (!sg) continue;
          ++info->subgraph_count;
          visit(*sg);
        }
      }
    }
  }
};

}  // namespace

ModelInfo describe_model(const ir::Model& model, const ModelMetadata& metadata) {
  ModelInfo info;
  info.ir_version = model.ir_version;
  info.opsets = model.opsets;
  info.metadata = metadata;
  if (!model.graph) return info;
  const ir::Graph& g = *model.graph;
  for (ir::ValueId id : g.inputs) info.inputs.push_back(value_info(g.values[static_cast<size_t>(id)]));
  for (ir::ValueId id : g.outputs) info.outputs.push_back(value_info(g.values[static_cast<size_t>(id)]));
  Totals totals{{}, &info};
  totals.visit(g);
  for (const auto& [key, n] : totals.ops) info.ops.push_back({key.first, key.second, n});
  return info;
}

Result<ModelInfo> read_model_info(const std::string& path) {
  ModelMetadata metadata;
  ir::ImportOptions o;
  o.metadata = &metadata;
  DLRT_ASSIGN_OR_RETURN(ir::Model model, ir::import_onnx_file(path, o));
  if (!model.graph) return Status(StatusCode::kInternal, path + ": the importer returned no graph");
  return describe_model(model, metadata);
}

}  // namespace dlrt
