// ir::Graph -> ONNX ModelProto bytes: how partitions are handed to backends
// that take ONNX (the CPU backend's blob, OpenVINO, plugins).
#include "ir/onnx_export.h"

#include <cstring>

#include <onnx/onnx_pb.h>

namespace dlrt::ir {

namespace {

Status tensor_to_proto(const Tensor& t, const std::string& name, onnx::TensorProto* p) {
  p->set_name(name);
  p->set_data_type(static_cast<int>(t.dtype()));
  for (int64_t d : t.shape()) p->add_dims(d);
  if (t.dtype() == DType::kString) {
    for (int64_t i = 0; i < t.size(); ++i) p->add_string_data(t.data<std::string>()[i]);
  } else if (const int bits = dtype_packed_bits(t.dtype())) {
    // Packed 8 / bits per byte, the lower index in the lower bits.
    const int64_t per_byte = 8 / bits;
    const unsigned mask = (1u << bits) - 1;
    std::string packed(static_cast<size_t>((t.size() + per_byte - 1) / per_byte), '\0');
    const auto* s = static_cast<const uint8_t*>(t.raw_data());
    for (int64_t i = 0; i < t.size(); ++i) {
      auto& byte = packed[static_cast<size_t>(i / per_byte)];
      byte = static_cast<char>(static_cast<unsigned char>(byte) | ((s[i] & mask) << ((i % per_byte) * bits)));
    }
    p->set_raw_data(std::move(packed));
  } else if (t.size() > 0) {
    p->set_raw_data(t.raw_data(), t.nbytes());
  }
  return Status::Ok();
}

void type_to_proto(const TypeInfo& ti, onnx::TypeProto* tp) {
  onnx::TypeProto::Tensor* tt = nullptr;
  if (ti.kind == ValueKind::kSequence) tt = tp->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type();
  else if (ti.kind == ValueKind::kOptional) tt = tp->mutable_optional_type()->mutable_elem_type()->mutable_tensor_type();
  else tt = tp->mutable_tensor_type();
  tt->set_elem_type(static_cast<int>(ti.dtype));
  if (ti.shape && ti.kind == ValueKind::kTensor) {
    auto* sh = tt->mutable_shape();
    for (const auto& d : *ti.shape) {
      auto* dim = sh->add_dim();
      if (d.size >= 0) dim->set_dim_value(d.size);
      else if (!d.symbol.empty()) dim->set_dim_param(d.symbol);
    }
  }
}

Status graph_to_proto(const Graph& g, onnx::GraphProto* gp, InternalAttributes internal);

Status attribute_to_proto(const std::string& name, const Attribute& a, onnx::AttributeProto* ap,
                          InternalAttributes internal) {
  using K = Attribute::Kind;
  ap->set_name(name);
  switch (a.kind) {
    case K::kFloat: ap->set_type(onnx::AttributeProto::FLOAT); ap->set_f(a.f); break;
    case K::kInt: ap->set_type(onnx::AttributeProto::INT); ap->set_i(a.i); break;
    case K::kString: ap->set_type(onnx::AttributeProto::STRING); ap->set_s(a.s); break;
    case K::kFloats:
      ap->set_type(onnx::AttributeProto::FLOATS);
      for (float f : a.floats) ap->add_floats(f);
      break;
    case K::kInts:
      ap->set_type(onnx::AttributeProto::INTS);
      for (int64_t i : a.ints) ap->add_ints(i);
      break;
    case K::kStrings:
      ap->set_type(onnx::AttributeProto::STRINGS);
      for (const auto& s : a.strings) ap->add_strings(s);
      break;
    case K::kTensor:
      ap->set_type(onnx::AttributeProto::TENSOR);
      DLRT_RETURN_IF_ERROR(tensor_to_proto(a.t, "", ap->mutable_t()));
      break;
    case K::kTensors:
      ap->set_type(onnx::AttributeProto::TENSORS);
      for (const auto& t : a.tensors) DLRT_RETURN_IF_ERROR(tensor_to_proto(t, "", ap->add_tensors()));
      break;
    case K::kGraph:
      ap->set_type(onnx::AttributeProto::GRAPH);
      DLRT_RETURN_IF_ERROR(graph_to_proto(*a.g, ap->mutable_g(), internal));
      break;
    case K::kGraphs:
      ap->set_type(onnx::AttributeProto::GRAPHS);
      for (const auto& sg : a.graphs) DLRT_RETURN_IF_ERROR(graph_to_proto(*sg, ap->add_graphs(), internal));
      break;
    case K::kTypeProto:
      ap->set_type(onnx::AttributeProto::TYPE_PROTO);
      type_to_proto(a.type, ap->mutable_tp());
      break;
  }
  return Status::Ok();
}

Status graph_to_proto(const Graph& g, onnx::GraphProto* gp, InternalAttributes internal) {
  gp->set_name(g.name.empty() ? "graph" : g.name);
  auto is_input = [&](ValueId id) { return std::find(g.inputs.begin(), g.inputs.end(), id) != g.inputs.end(); };
  for (size_t v = 0; v < g.values.size(); ++v) {
    const Value& val = g.values[v];
    if (val.constant && !is_input(static_cast<ValueId>(v)))
      DLRT_RETURN_IF_ERROR(tensor_to_proto(*val.constant, val.name, gp->add_initializer()));
  }
  for (ValueId id : g.inputs) {
    auto* vi = gp->add_input();
    vi->set_name(g.values[id].name);
    type_to_proto(g.values[id].type, vi->mutable_type());
  }
  for (ValueId id : g.outputs) {
    auto* vi = gp->add_output();
    vi->set_name(g.values[id].name);
    type_to_proto(g.values[id].type, vi->mutable_type());
  }
  // What is known of the values in between (dlrt's shape inference knows
  // more than libonnx's), so that a re-import sees the same types.
  auto is_output = [&](ValueId id) { return std::find(g.outputs.begin(), g.outputs.end(), id) != g.outputs.end(); };
  for (const Node& n : g.nodes)
    for (ValueId out : n.outputs) {
      if (out == kNoValue || is_output(out)) continue;
      const Value& val = g.values[out];
      if (val.name.empty() || val.type.dtype == DType::kUndefined || val.type.kind == ValueKind::kUnknown) continue;
      auto* vi = gp->add_value_info();
      vi->set_name(val.name);
      type_to_proto(val.type, vi->mutable_type());
    }
  for (const Node& n : g.nodes) {
    auto* np = gp->add_node();
    np->set_name(n.name);
    np->set_op_type(n.op_type);
    np->set_domain(n.domain);
    for (ValueId in : n.inputs) np->add_input(in == kNoValue ? "" : g.values[in].name);
    for (ValueId out : n.outputs) np->add_output(out == kNoValue ? "" : g.values[out].name);
    for (const auto& [k, a] : n.attributes) {
      if (internal == InternalAttributes::kDrop && k.rfind(kInternalAttributePrefix, 0) == 0) continue;
      DLRT_RETURN_IF_ERROR(attribute_to_proto(k, a, np->add_attribute(), internal));
    }
  }
  return Status::Ok();
}

}  // namespace

Result<std::string> export_onnx(const Graph& graph, int64_t ir_version, InternalAttributes internal) {
  onnx::ModelProto m;
  m.set_ir_version(ir_version);
  m.set_producer_name("dlrt");
  for (const auto& [domain, version] : graph.opsets) {
    auto* o = m.add_opset_import();
    o->set_domain(domain);
    o->set_version(version);
  }
  DLRT_RETURN_IF_ERROR(graph_to_proto(graph, m.mutable_graph(), internal));
  std::string bytes;
  if (!m.SerializeToString(&bytes)) return Internal("serializing graph '" + graph.name + "' to ONNX failed (over 2 GiB?)");
  return bytes;
}

}  // namespace dlrt::ir
