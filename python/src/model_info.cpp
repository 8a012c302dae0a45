// dlrt.read_model_info(path), Session.model_info() and Session.node_placement()
// over dlrt::read_model_info / model_info / node_placement (dlrt/model_info.h,
// dlrt/placement.h): plain dicts and lists, as `dlrt inspect --json` prints them.
#include <nanobind/stl/map.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "bindings.h"
#include "dlrt/model_info.h"
#include "dlrt/placement.h"

namespace dlrt::python {
namespace {

nb::dict value_dict(const ModelValueInfo& v) {
  nb::dict d;
  d["name"] = v.name;
  d["kind"] = v.kind;
  d["dtype"] = dtype_name(v.dtype);
  d["key_dtype"] = v.key_dtype == DType::kUndefined ? nb::none() : nb::cast(std::string(dtype_name(v.key_dtype)));
  if (v.has_shape) {
    nb::list shape;
    for (size_t i = 0; i < v.shape.size(); ++i) {
      if (v.shape[i] >= 0) shape.append(v.shape[i]);
      else if (!v.dim_names[i].empty()) shape.append(v.dim_names[i]);
      else shape.append(nb::none());
    }
    d["shape"] = shape;
  } else {
    d["shape"] = nb::none();
  }
  d["type"] = v.type;
  return d;
}

nb::list values_list(const std::vector<ModelValueInfo>& values) {
  nb::list out;
  for (const ModelValueInfo& v : values) out.append(value_dict(v));
  return out;
}

}  // namespace

nb::dict model_info_dict(const ModelInfo& m) {
  nb::dict d;
  d["ir_version"] = m.ir_version;
  nb::dict opsets;
  for (const auto& [domain, version] : m.opsets) opsets[nb::cast(domain.empty() ? "ai.onnx" : domain)] = version;
  d["opsets"] = opsets;
  const ModelMetadata& meta = m.metadata;
  d["producer_name"] = meta.producer_name;
  d["producer_version"] = meta.producer_version;
  d["domain"] = meta.domain;
  d["description"] = meta.description;
  d["model_version"] = meta.version ? nb::cast(*meta.version) : nb::none();
  d["graph_name"] = meta.graph_name;
  d["graph_description"] = meta.graph_description;
  d["metadata_props"] = meta.custom;
  d["inputs"] = values_list(m.inputs);
  d["outputs"] = values_list(m.outputs);
  d["node_count"] = m.node_count;
  d["subgraph_count"] = m.subgraph_count;
  nb::list ops;
  for (const OpCount& op : m.ops) {
    nb::dict o;
    o["domain"] = op.domain;
    o["op_type"] = op.op_type;
    o["count"] = op.count;
    ops.append(o);
  }
  d["ops"] = ops;
  d["parameter_count"] = m.parameter_count;
  d["parameter_bytes"] = m.parameter_bytes;
  return d;
}

nb::list node_placement_list(const Session& session) {
  const RunReport placement = session.placement();
  nb::list out;
  for (const NodePlacement& n : node_placement(session)) {
    nb::dict d;
    d["node"] = n.node;
    d["op_type"] = n.op_type;
    d["partition"] = n.partition;
    const auto p = static_cast<size_t>(n.partition);
    d["backend"] = p < placement.partitions.size() ? placement.partitions[p].backend : std::string();
    d["device"] = p < placement.partitions.size() ? placement.partitions[p].device : std::string();
    d["cpu_reason"] = n.cpu_reason;
    out.append(d);
  }
  return out;
}

void bind_model_info(nb::module_& m) {
  m.def("read_model_info", [](const std::string& path) {
        Result<ModelInfo> info = [&] {
          nb::gil_scoped_release unlocked;
          return read_model_info(path);
        }();
        check(info.status());
        return model_info_dict(*info);
      },
      nb::arg("path"), nb::sig("def read_model_info(path: str) -> dict[str, object]"),
      "What the ONNX model at `path` declares and what it is made of, without creating a session:\n"
      "a dict with ir_version, opsets (domain -> version), producer_name, producer_version, domain,\n"
      "description, model_version, graph_name, graph_description, metadata_props (dict), inputs and\n"
      "outputs (dicts: name, kind, dtype, key_dtype, shape: ints, dim symbols or None, None when the\n"
      "rank is unknown; type as ONNX writes it), node_count and subgraph_count (subgraphs included),\n"
      "ops (dicts: domain, op_type, count), parameter_count and parameter_bytes. Raises dlrt.IoError,\n"
      "dlrt.InvalidModel or dlrt.Unsupported as Session does.");
}

}  // namespace dlrt::python
