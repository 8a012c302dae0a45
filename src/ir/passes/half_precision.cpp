// float16/bfloat16 models computed in float32 (see passes.h).
#include <set>
#include <string>

#include "ir/passes/rewriter.h"

namespace dlrt::ir::passes {
namespace {

bool is_half(DType t) { return t == DType::kFloat16 || t == DType::kBFloat16; }

// Ops whose result in float32 is their float16 result computed without the
// intermediate roundings: elementwise arithmetic, activations, linear
// algebra, convolutions, normalisations, pooling, reductions, data movement.
// Ops whose meaning depends on the element type (Cast's target aside, which
// is rewritten) are not here, and a model using one on a half value is left
// as it is.
const std::set<std::string>& float_agnostic_ops() {
  static const std::set<std::string> ops = {
      "Abs", "Add", "AveragePool", "BatchNormalization", "Cast", "Ceil", "Clip", "Concat", "Conv",
      "ConvTranspose", "Cos", "DepthToSpace", "Div", "Dropout", "Elu", "Equal", "Erf", "Exp", "Expand",
      "Flatten", "Floor", "Gather", "Gelu", "Gemm", "GlobalAveragePool", "GlobalMaxPool", "Greater",
      "GreaterOrEqual", "HardSigmoid", "HardSwish", "Identity", "InstanceNormalization", "LayerNormalization",
      "LeakyRelu", "Less", "LessOrEqual", "Log", "LogSoftmax", "MatMul", "Max", "MaxPool", "Mean", "Min", "Mish",
      "Mul", "Neg", "Pad", "Pow", "PRelu", "Reciprocal", "ReduceL2", "ReduceMax", "ReduceMean", "ReduceMin",
      "ReduceSum", "Relu", "Reshape", "Resize", "Shape", "Sigmoid", "Sin", "Slice", "Softmax", "Softplus",
      "SpaceToDepth", "Split", "Sqrt", "Squeeze", "Sub", "Sum", "Tanh", "Tile", "Transpose", "Unsqueeze",
      "Upsample", "Where"};
  return ops;
}

// com.microsoft ops of ONNX Runtime's transformer optimizer (its float16
// "O4" models), float-agnostic in the same sense; SimplifiedLayerNormalization
// is ONNX Runtime's, in the ONNX domain.
bool float_agnostic(const Node& n) {
  // ConstantOfShape: its value attribute is converted with the values.
  if (n.domain.empty() && (n.op_type == "ConstantOfShape" || n.op_type == "Trilu")) return true;
  static const std::set<std::string> ms = {"Attention",          "BiasAdd",          "BiasGelu",
                                           "EmbedLayerNormalization", "FastGelu",    "FusedMatMul",
                                           "Gelu",               "GroupQueryAttention", "MultiHeadAttention",
                                           "QuickGelu",          "RotaryEmbedding",  "SkipLayerNormalization",
                                           "SkipSimplifiedLayerNormalization"};
  if (n.domain.empty()) return float_agnostic_ops().count(n.op_type) > 0 || n.op_type == "SimplifiedLayerNormalization";
  return n.domain == "com.microsoft" && ms.count(n.op_type) > 0;
}

Tensor to_float32(const Tensor& t) {
  Tensor f = Tensor::allocate(DType::kFloat32, t.shape()).value();
  float* dst = f.data<float>();
  for (int64_t i = 0; i < t.size(); ++i)
    dst[i] = t.dtype() == DType::kFloat16 ? static_cast<float>(t.data<Float16>()[i])
                                          : static_cast<float>(t.data<BFloat16>()[i]);
  return f;
}

TypeInfo float32_like(TypeInfo t) {
  t.dtype = DType::kFloat32;
  return t;
}

ir::Node cast_node(const std::string& name, ValueId in, ValueId out, DType to, int opset) {
  ir::Node n;
  n.name = name;
  n.op_type = "Cast";
  n.opset = opset;
  n.inputs = {in};
  n.outputs = {out};
  n.attributes["to"] = make_attr_int(static_cast<int64_t>(to));
  return n;
}

}  // namespace

bool half_in_float32_op(const std::string& op_type) { return float_agnostic_ops().count(op_type) > 0; }

int compute_half_in_float32(Graph& g, PassContext& ctx) {
  // Which values are half, and whether every node touching one is float-agnostic.
  std::vector<bool> half(g.values.size(), false);
  bool any = false;
  for (size_t v = 0; v < g.values.size(); ++v)
    if (is_half(g.values[v].type.dtype)) {
      if (ctx.keeps_rounding(static_cast<ValueId>(v))) return 0;  // float32 math would round otherwise
      half[v] = any = true;
    }
  if (!any) return 0;
  const int opset = g.opsets.count("") ? static_cast<int>(g.opsets.at("")) : 13;
  for (const Node& n : g.nodes) {
    bool touches = false;
    for (ValueId v : n.inputs) touches = touches || (v != kNoValue && half[v]);
    for (ValueId v : n.outputs) touches = touches || (v != kNoValue && half[v]);
    for (const auto& [name, a] : n.attributes)
      if (a.kind == Attribute::Kind::kGraph || a.kind == Attribute::Kind::kGraphs) return 0;  // captures
    if (!touches) continue;
    if (!float_agnostic(n)) return 0;
    if (n.op_type == "Cast" && !is_half(static_cast<DType>(n.attr_int("to", 0))) && n.outputs[0] != kNoValue &&
        half[n.outputs[0]])
      return 0;  // (cannot happen in a valid model)
  }
  if (!g.captures.empty()) return 0;
  // Graph inputs and outputs keep their type: a Cast to float32 after each
  // half input, a Cast back before each half output.
  std::set<ValueId> io(g.inputs.begin(), g.inputs.end());
  io.insert(g.outputs.begin(), g.outputs.end());
  Rewriter rw(g, ctx);
  int changed = 0;
  std::vector<Node> head;
  for (ValueId in : g.inputs) {
    if (!half[in] || rw.consumers(in).empty()) continue;
    const ValueId f = rw.new_value(g.values[in].name + "_f32", float32_like(g.values[in].type));
    for (int c : rw.consumers(in))
      for (ValueId& x : rw.node(c).inputs)
        if (x == in) x = f;
    head.push_back(cast_node(g.values[in].name + "_to_f32", in, f, DType::kFloat32, opset));
  }
  for (int i = 0; i < rw.size(); ++i) {
    Node& n = rw.node(i);
    if (n.op_type == "Cast" && n.domain.empty() && is_half(static_cast<DType>(n.attr_int("to", 0))) &&
        !io.count(n.outputs[0]))
      n.attributes["to"] = make_attr_int(static_cast<int64_t>(DType::kFloat32));
    if (n.op_type == "ConstantOfShape" && n.domain.empty() && n.has_attr("value") &&
        is_half(n.attr("value")->t.dtype())) {
      Attribute a = *n.attr("value");
      a.t = to_float32(a.t);
      n.attributes["value"] = std::move(a);
    }
    for (ValueId& o : n.outputs) {
      if (o == kNoValue || !half[o] || !io.count(o)) continue;
      // A half graph output: computed in float32, then cast back.
      const DType want = g.values[o].type.dtype;
      const ValueId f = rw.new_value(g.values[o].name + "_f32", float32_like(g.values[o].type));
      const ValueId orig = o;
      o = f;
      if (n.op_type == "Cast" && n.domain.empty())  // the Cast itself now yields float32, then casts back
        n.attributes["to"] = make_attr_int(static_cast<int64_t>(DType::kFloat32));
      rw.insert_before(i + 1, cast_node(g.values[orig].name + "_to_half", f, orig, want, opset));
    }
  }
  for (size_t v = 0; v < half.size(); ++v) {
    if (!half[v] || io.count(static_cast<ValueId>(v))) continue;
    Value& val = g.values[v];
    val.type.dtype = DType::kFloat32;
    if (val.constant) val.constant = to_float32(*val.constant);
    ++changed;
  }
  for (Node& n : head) rw.insert_before(0, std::move(n));
  rw.commit();
  log_fired("half-in-float32", std::to_string(changed) + " float16/bfloat16 values now float32");
  ctx.count("half-in-float32", changed > 0 ? 1 : 0);
  return changed > 0 ? 1 : 0;
}

}  // namespace dlrt::ir::passes
