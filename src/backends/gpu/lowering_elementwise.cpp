// Lowering of the element-wise ops (lowering.h): unary activations, binary
// arithmetic with broadcasting, comparisons, Where, Cast.
#include "backends/gpu/lowering_internal.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <optional>

namespace dlrt::gpu::lowering_detail {

Result<UnaryInfo> unary_info(const ir::Node& n, const std::vector<const Tensor*>& host) {
  const std::string& op = n.op_type;
  static const std::map<std::string, int32_t> simple = {
      {"Relu", kActRelu}, {"Sigmoid", kActSigmoid}, {"Tanh", kActTanh}, {"Exp", kActExp}, {"Log", kActLog},
      {"Sqrt", kActSqrt}, {"Abs", kActAbs}, {"Neg", kActNeg}, {"Erf", kActErf}, {"Reciprocal", kActRecip},
      {"Floor", kActFloor}, {"Ceil", kActCeil}, {"Softplus", kActSoftplus}, {"Sin", kActSin}, {"Cos", kActCos},
      {"Round", kActRound}, {"Sign", kActSign}, {"Softsign", kActSoftsign}, {"Mish", kActMish},
      {"HardSwish", kActHardSwish}};
  if (auto it = simple.find(op); it != simple.end()) return UnaryInfo{it->second, 0, 0};
  if (op == "LeakyRelu") return UnaryInfo{kActLeaky, n.attr_float("alpha", 0.01f), 0};
  if (op == "Elu") return UnaryInfo{kActElu, n.attr_float("alpha", 1.0f), 0};
  if (op == "Selu") return UnaryInfo{kActSelu, n.attr_float("alpha", 1.67326319217681884765625f),
                                     n.attr_float("gamma", 1.05070102214813232421875f)};
  if (op == "HardSigmoid") return UnaryInfo{kActHardSigmoid, n.attr_float("alpha", 0.2f), n.attr_float("beta", 0.5f)};
  if (op == "Gelu") {
    std::string approx = n.attr_string("approximate", "none");
    if (approx == "none") return UnaryInfo{kActGeluErf, 0, 0};
    if (approx == "tanh") return UnaryInfo{kActGeluTanh, 0, 0};
    return bad(n, "unknown approximate '" + approx + "'");
  }
  if (op == "Clip") {
    float lo = -std::numeric_limits<float>::infinity(), hi = std::numeric_limits<float>::infinity();
    if (n.opset < 11) {
      lo = n.attr_float("min", lo);
      hi = n.attr_float("max", hi);
    } else {
      if (n.inputs.size() > 1 && n.inputs[1] != ir::kNoValue) {
        DLRT_ASSIGN_OR_RETURN(lo, float_scalar(host.size() > 1 ? host[1] : nullptr, n, "Clip min"));
      }
      if (n.inputs.size() > 2 && n.inputs[2] != ir::kNoValue) {
        DLRT_ASSIGN_OR_RETURN(hi, float_scalar(host.size() > 2 ? host[2] : nullptr, n, "Clip max"));
      }
    }
    return UnaryInfo{kActClip, lo, hi};
  }
  return unsup(n, "not a unary op");
}

std::vector<const Tensor*> host_inputs(LowerCtx& c, const ir::Node& n) {
  std::vector<const Tensor*> h;
  for (auto v : n.inputs) h.push_back(v == ir::kNoValue ? nullptr : c.host(v));
  return h;
}

ir::ValueId out0(const ir::Node& n, ir::ValueId override_out) {
  return override_out != ir::kNoValue ? override_out : n.outputs[0];
}

Status lower_unary(LowerCtx& c, const ir::Node& n) {
  DLRT_ASSIGN_OR_RETURN(UnaryInfo u, unary_info(n, host_inputs(c, n)));
  ir::ValueId x = n.inputs[0];
  Shape s = c.shape(x);
  DLRT_ASSIGN_OR_RETURN(int xs, c.slot_of(x));
  DLRT_ASSIGN_OR_RETURN(int ys, c.define(n.outputs[0], s, DType::kFloat32));
  int64_t count = numel(s);
  if (count == 0) return Status::Ok();
  if (count > kMaxIndex) return unsup(n, "tensor too large");
  Launch l = elementwise_launch("unary_f32", count);
  l.slot(xs).slot(ys).val(static_cast<int32_t>(count)).val(u.act).val(u.a).val(u.b);
  c.launch(std::move(l));
  return Status::Ok();
}

Status lower_alias(LowerCtx& c, const ir::Node& n) {  // Identity, Dropout (inference)
  if (n.outputs.size() > 1 && n.outputs[1] != ir::kNoValue) return unsup(n, "Dropout mask output");
  return c.alias(n.outputs[0], n.inputs[0], c.shape(n.inputs[0]));
}

int32_t binary_code(const std::string& op) {
  static const std::map<std::string, int32_t> m = {{"Add", 0}, {"Sum", 0}, {"Sub", 1}, {"Mul", 2}, {"Div", 3},
                                                   {"Pow", 4}, {"Max", 5}, {"Min", 6}, {"PRelu", 7}, {"Mod", 8}};
  auto it = m.find(op);
  return it == m.end() ? -1 : it->second;
}

Status emit_binary(LowerCtx& c, const ir::Node& n, const char* kernel, int32_t code, ir::ValueId a, ir::ValueId b,
                   ir::ValueId out, DType out_type) {
  const Shape& sa = c.shape(a);
  const Shape& sb = c.shape(b);
  DLRT_ASSIGN_OR_RETURN(Shape so, broadcast_shape({sa, sb}, n));
  if (n.op_type == "PRelu" && so != sa) return bad(n, "slope must broadcast to X's shape");
  DLRT_ASSIGN_OR_RETURN(int as, c.slot_of(a));
  DLRT_ASSIGN_OR_RETURN(int bs, c.slot_of(b));
  DLRT_ASSIGN_OR_RETURN(int ys, c.define(out, so, out_type));
  if (numel(so) == 0) return Status::Ok();
  DLRT_ASSIGN_OR_RETURN(GeoArgs g, make_geo(so, {broadcast_strides(sa, so), broadcast_strides(sb, so)}, n));
  Launch l = elementwise_launch(kernel, g.n);
  l.slot(as).slot(bs).slot(ys).val(g).val(code);
  c.launch(std::move(l));
  return Status::Ok();
}

Status lower_binary(LowerCtx& c, const ir::Node& n) {
  int32_t code = binary_code(n.op_type);
  if (n.op_type == "Mod" && n.attr_int("fmod", 0) != 1) return unsup(n, "float Mod needs fmod=1");
  std::vector<ir::ValueId> ins;
  for (auto v : n.inputs)
    if (v != ir::kNoValue) ins.push_back(v);
  if (ins.empty()) return bad(n, "no inputs");
  if (ins.size() == 1) return c.alias(n.outputs[0], ins[0], c.shape(ins[0]));  // Sum/Max/Min of one
  // Variadic Sum/Max/Min: chain through the output value's slot... each step defines a temporary value.
  if (ins.size() > 2) return unsup(n, "more than two inputs");
  return emit_binary(c, n, "binary_f32", code, ins[0], ins[1], n.outputs[0], DType::kFloat32);
}

Status lower_compare(LowerCtx& c, const ir::Node& n) {
  static const std::map<std::string, int32_t> m = {
      {"Equal", 0}, {"Less", 1}, {"LessOrEqual", 2}, {"Greater", 3}, {"GreaterOrEqual", 4}};
  return emit_binary(c, n, "compare_f32", m.at(n.op_type), n.inputs[0], n.inputs[1], n.outputs[0], DType::kBool);
}

Status lower_where(LowerCtx& c, const ir::Node& n) {
  ir::ValueId cv = n.inputs[0], x = n.inputs[1], z = n.inputs[2];
  if (c.dtype(cv) != DType::kBool) return unsup(n, "condition must be bool");
  DLRT_ASSIGN_OR_RETURN(Shape so, broadcast_shape({c.shape(cv), c.shape(x), c.shape(z)}, n));
  DLRT_ASSIGN_OR_RETURN(int cs, c.slot_of(cv));
  DLRT_ASSIGN_OR_RETURN(int xs, c.slot_of(x));
  DLRT_ASSIGN_OR_RETURN(int zs, c.slot_of(z));
  DLRT_ASSIGN_OR_RETURN(int ys, c.define(n.outputs[0], so, DType::kFloat32));
  if (numel(so) == 0) return Status::Ok();
  DLRT_ASSIGN_OR_RETURN(GeoArgs g, make_geo(so, {broadcast_strides(c.shape(cv), so), broadcast_strides(c.shape(x), so),
                                               broadcast_strides(c.shape(z), so)}, n));
  Launch l = elementwise_launch("where_f32", g.n);
  l.slot(cs).slot(xs).slot(zs).slot(ys).val(g);
  c.launch(std::move(l));
  return Status::Ok();
}

Status lower_cast(LowerCtx& c, const ir::Node& n) {
  DType to = static_cast<DType>(n.attr_int("to", 0));
  ir::ValueId x = n.inputs[0];
  DType from = c.dtype(x);
  if (from == to) return c.alias(n.outputs[0], x, c.shape(x));
  const char* k = nullptr;
  if (to == DType::kFloat32) {
    if (from == DType::kInt64) k = "cast_i64_f32";
    else if (from == DType::kInt32) k = "cast_i32_f32";
    else if (from == DType::kBool || from == DType::kUInt8) k = "cast_u8_f32";
    else if (from == DType::kFloat16) k = "cast_f16_f32";
    else if (from == DType::kBFloat16) k = "cast_bf16_f32";
  } else if (to == DType::kBool && from == DType::kFloat32) {
    k = "cast_f32_u8";
  } else if (to == DType::kFloat16 && from == DType::kFloat32) {
    k = "cast_f32_f16";
  } else if (to == DType::kBFloat16 && from == DType::kFloat32) {
    k = "cast_f32_bf16";
  }
  if (!k) return unsup(n, "cast not supported on the device");
  DLRT_ASSIGN_OR_RETURN(int xs, c.slot_of(x));
  DLRT_ASSIGN_OR_RETURN(int ys, c.define(n.outputs[0], c.shape(x), to));
  int64_t count = numel(c.shape(x));
  if (count == 0) return Status::Ok();
  if (count > kMaxIndex) return unsup(n, "tensor too large");
  Launch l = elementwise_launch(k, count);
  l.slot(xs).slot(ys).val(static_cast<int32_t>(count));
  c.launch(std::move(l));
  return Status::Ok();
}

}  // namespace dlrt::gpu::lowering_detail
