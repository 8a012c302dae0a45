#include "backends/gpu/lowering.h"

#include "ir/passes/passes.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <optional>

namespace dlrt::gpu {

namespace {

constexpr int64_t kMaxIndex = std::numeric_limits<int32_t>::max();

Status bad(const ir::Node& n, const std::string& msg) { return InvalidArgument(n.describe() + ": " + msg); }
Status unsup(const ir::Node& n, const std::string& msg) { return Unsupported(n.describe() + ": " + msg); }

int64_t numel(const Shape& s) {
  int64_t n = 1;
  for (auto d : s) n *= d;
  return n;
}

std::vector<int64_t> contiguous_strides(const Shape& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (int i = static_cast<int>(s.size()) - 2; i >= 0; --i) st[i] = st[i + 1] * s[i + 1];
  return st;
}

// Strides of `in` broadcast to `out` (right-aligned; 0 on broadcast dims).
std::vector<int64_t> broadcast_strides(const Shape& in, const Shape& out) {
  std::vector<int64_t> st(out.size(), 0);
  auto cs = contiguous_strides(in);
  size_t off = out.size() - in.size();
  for (size_t i = 0; i < in.size(); ++i) st[off + i] = in[i] == 1 && out[off + i] != 1 ? 0 : cs[i];
  return st;
}

Result<Shape> broadcast_shape(const std::vector<Shape>& shapes, const ir::Node& n) {
  size_t rank = 0;
  for (auto& s : shapes) rank = std::max(rank, s.size());
  Shape out(rank, 1);
  for (auto& s : shapes)
    for (size_t i = 0; i < s.size(); ++i) {
      int64_t& o = out[rank - s.size() + i];
      int64_t d = s[i];
      if (d == o || d == 1) continue;
      if (o == 1) o = d;
      else return bad(n, "shapes cannot be broadcast together");
    }
  return out;
}

// Builds a geometry over `dims` with up to four stride sets, dropping size-1
// dims and merging dims that are contiguous for every operand.
Result<GeoArgs> make_geo(const Shape& dims, const std::vector<std::vector<int64_t>>& strides, const ir::Node& n) {
  GeoArgs g;
  int64_t total = numel(dims);
  if (total > kMaxIndex) return unsup(n, "tensor too large for 32-bit indexing");
  std::vector<int64_t> d2;
  std::vector<std::vector<int64_t>> s2(strides.size());
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == 1) continue;
    bool merge = !d2.empty();
    for (size_t k = 0; k < strides.size() && merge; ++k) merge = s2[k].back() == strides[k][i] * dims[i];
    if (merge) {
      d2.back() *= dims[i];
      for (size_t k = 0; k < strides.size(); ++k) s2[k].back() = strides[k][i];
    } else {
      d2.push_back(dims[i]);
      for (size_t k = 0; k < strides.size(); ++k) s2[k].push_back(strides[k][i]);
    }
  }
  if (d2.empty()) {
    d2.push_back(1);
    for (auto& s : s2) s.push_back(0);
  }
  if (d2.size() > kMaxRank) return unsup(n, "more than 6 non-mergeable dimensions");
  g.rank = static_cast<int32_t>(d2.size());
  g.n = static_cast<int32_t>(total);
  for (size_t i = 0; i < d2.size(); ++i) {
    g.dims[i] = static_cast<int32_t>(d2[i]);
    for (size_t k = 0; k < s2.size(); ++k) {
      if (std::abs(s2[k][i]) > kMaxIndex) return unsup(n, "stride too large for 32-bit indexing");
      g.s[k][i] = static_cast<int32_t>(s2[k][i]);
    }
  }
  return g;
}

Result<std::vector<int64_t>> ints_of(const Tensor* t, const ir::Node& n, const char* what) {
  if (!t) return unsup(n, std::string(what) + " must be known on the host");
  std::vector<int64_t> v(t->size());
  if (t->dtype() == DType::kInt64) std::copy(t->data<int64_t>(), t->data<int64_t>() + t->size(), v.begin());
  else if (t->dtype() == DType::kInt32) std::copy(t->data<int32_t>(), t->data<int32_t>() + t->size(), v.begin());
  else return bad(n, std::string(what) + " must be int64 or int32");
  return v;
}

Result<float> float_scalar(const Tensor* t, const ir::Node& n, const char* what) {
  if (!t) return unsup(n, std::string(what) + " must be known on the host");
  if (t->dtype() != DType::kFloat32 || t->size() != 1) return bad(n, std::string(what) + " must be a float32 scalar");
  return t->data<float>()[0];
}

Result<int64_t> norm_axis(int64_t axis, int64_t rank, const ir::Node& n) {
  if (axis < -rank || (axis >= rank && !(rank == 0 && axis == 0)))
    return bad(n, "axis " + std::to_string(axis) + " out of range for rank " + std::to_string(rank));
  return axis < 0 ? axis + rank : axis;
}

size_t elem_bytes(DType t) { return dtype_size(t); }

const char* copy_kernel(DType t) {
  switch (dtype_size(t)) {
    case 1: return "copy_nd_1";
    case 4: return "copy_nd_4";
    case 8: return "copy_nd_8";
    default: return nullptr;
  }
}

size_t pow2_at_most(size_t v) {
  size_t p = 1;
  while (p * 2 <= v) p *= 2;
  return p;
}

// Emits copy_nd: dst[dst_off + sum c*dst_strides] = src[src_off + sum c*src_strides].
Status emit_copy(LowerCtx& c, const ir::Node& n, DType t, int src, int64_t src_off, int dst, int64_t dst_off,
                 const Shape& dims, const std::vector<int64_t>& src_strides, const std::vector<int64_t>& dst_strides) {
  if (numel(dims) == 0) return Status::Ok();
  const char* k = copy_kernel(t);
  if (!k) return unsup(n, "element size not supported");
  DLRT_ASSIGN_OR_RETURN(GeoArgs g, make_geo(dims, {src_strides, dst_strides}, n));
  if (src_off > kMaxIndex || dst_off > kMaxIndex) return unsup(n, "offset too large");
  Launch l;
  l.kernel = k;
  l.slot(src).val(static_cast<int32_t>(src_off)).slot(dst).val(static_cast<int32_t>(dst_off)).val(g);
  l.gws[0] = static_cast<size_t>(g.n);
  c.launch(std::move(l));
  return Status::Ok();
}

Launch elementwise_launch(const char* kernel, int64_t count) {
  Launch l;
  l.kernel = kernel;
  l.gws[0] = static_cast<size_t>(count);
  return l;
}

// ---- element-wise ----

struct UnaryInfo {
  int32_t act;
  float a, b;
};

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

// ---- GEMM family ----

void set_epilogue(GemmArgs& p, const Epilogue& e) {
  p.act = e.act;
  p.act_a = e.a;
  p.act_b = e.b;
}

// C (M x N) = A (M x K) x B (K x N), all three row-major and contiguous.
GemmArgs row_major_gemm(int64_t M, int64_t N, int64_t K) {
  GemmArgs p;
  p.M = static_cast<int32_t>(M);
  p.N = static_cast<int32_t>(N);
  p.K = static_cast<int32_t>(K);
  p.a_sm = static_cast<int32_t>(K);
  p.a_sk = 1;
  p.b_sk = static_cast<int32_t>(N);
  p.b_sn = 1;
  p.c_sm = static_cast<int32_t>(N);
  p.c_sn = 1;
  return p;
}

void emit_gemm(LowerCtx& c, const GemmArgs& p, int a, int b, int y, int bias, int batch) {
  const DeviceParams& d = c.device();
  size_t rts = static_cast<size_t>(d.gemm_ts / d.gemm_wpt);
  Launch l;
  l.kernel = "gemm_f32";
  l.slot(a).slot(b).slot(y).slot(bias >= 0 ? bias : a).val(p);
  l.dims = 3;
  l.gws[0] = static_cast<size_t>((p.N + d.gemm_ts - 1) / d.gemm_ts) * rts;
  l.gws[1] = static_cast<size_t>((p.M + d.gemm_ts - 1) / d.gemm_ts) * rts;
  l.gws[2] = static_cast<size_t>(batch);
  l.lws[0] = rts;
  l.lws[1] = rts;
  l.lws[2] = 1;
  c.launch(std::move(l));
}

bool fits(int64_t v) { return v >= 0 && v <= kMaxIndex; }

Status lower_gemm(LowerCtx& c, const ir::Node& n, const Epilogue& epi, ir::ValueId out) {
  const Shape& sa = c.shape(n.inputs[0]);
  const Shape& sb = c.shape(n.inputs[1]);
  if (sa.size() != 2 || sb.size() != 2) return bad(n, "A and B must be 2-D");
  bool ta = n.attr_int("transA", 0) != 0, tb = n.attr_int("transB", 0) != 0;
  int64_t M = ta ? sa[1] : sa[0], K = ta ? sa[0] : sa[1];
  int64_t KB = tb ? sb[1] : sb[0], N = tb ? sb[0] : sb[1];
  if (K != KB) return bad(n, "inner dimensions differ");
  if (!fits(M * K) || !fits(K * N) || !fits(M * N)) return unsup(n, "too large");
  GemmArgs p;
  p.M = static_cast<int32_t>(M);
  p.N = static_cast<int32_t>(N);
  p.K = static_cast<int32_t>(K);
  p.a_sm = ta ? 1 : static_cast<int32_t>(sa[1]);
  p.a_sk = ta ? static_cast<int32_t>(sa[1]) : 1;
  p.b_sk = tb ? 1 : static_cast<int32_t>(sb[1]);
  p.b_sn = tb ? static_cast<int32_t>(sb[1]) : 1;
  p.c_sm = static_cast<int32_t>(N);
  p.c_sn = 1;
  p.alpha = n.attr_float("alpha", 1.0f);
  p.beta = n.attr_float("beta", 1.0f);
  set_epilogue(p, epi);
  DLRT_ASSIGN_OR_RETURN(int as, c.slot_of(n.inputs[0]));
  DLRT_ASSIGN_OR_RETURN(int bs, c.slot_of(n.inputs[1]));
  int biass = -1;
  if (n.inputs.size() > 2 && n.inputs[2] != ir::kNoValue) {
    Shape sc = c.shape(n.inputs[2]);
    if (sc.size() > 2) return bad(n, "C must have rank <= 2");
    while (sc.size() < 2) sc.insert(sc.begin(), 1);
    if ((sc[0] != 1 && sc[0] != M) || (sc[1] != 1 && sc[1] != N)) return bad(n, "C does not broadcast to (M, N)");
    DLRT_ASSIGN_OR_RETURN(biass, c.slot_of(n.inputs[2]));
    p.has_bias = 1;
    p.bias_sm = sc[0] == 1 ? 0 : static_cast<int32_t>(sc[1]);
    p.bias_sn = sc[1] == 1 ? 0 : 1;
  }
  DLRT_ASSIGN_OR_RETURN(int ys, c.define(out, {M, N}, DType::kFloat32));
  if (M == 0 || N == 0) return Status::Ok();
  emit_gemm(c, p, as, bs, ys, biass, 1);
  return Status::Ok();
}

// MatMul with numpy batch broadcasting; an optional bias (a fused Add of a
// [N] vector) comes in through `bias`.
Status lower_matmul(LowerCtx& c, const ir::Node& n, const Epilogue& epi, ir::ValueId out, ir::ValueId bias) {
  Shape sa = c.shape(n.inputs[0]), sb = c.shape(n.inputs[1]);
  if (sa.empty() || sb.empty()) return bad(n, "MatMul inputs must have rank >= 1");
  bool a_vec = sa.size() == 1, b_vec = sb.size() == 1;
  if (a_vec) sa.insert(sa.begin(), 1);
  if (b_vec) sb.push_back(1);
  int64_t M = sa[sa.size() - 2], K = sa.back(), N = sb.back();
  if (sb[sb.size() - 2] != K) return bad(n, "inner dimensions differ");
  Shape ba(sa.begin(), sa.end() - 2), bb(sb.begin(), sb.end() - 2);
  DLRT_ASSIGN_OR_RETURN(Shape bo, broadcast_shape({ba, bb}, n));
  Shape out_shape = bo;
  if (!a_vec) out_shape.push_back(M);
  if (!b_vec) out_shape.push_back(N);
  DLRT_ASSIGN_OR_RETURN(int as, c.slot_of(n.inputs[0]));
  DLRT_ASSIGN_OR_RETURN(int bs, c.slot_of(n.inputs[1]));
  int biass = -1;
  if (bias != ir::kNoValue) {
    DLRT_ASSIGN_OR_RETURN(biass, c.slot_of(bias));
  }
  DLRT_ASSIGN_OR_RETURN(int ys, c.define(out, out_shape, DType::kFloat32));
  int64_t batch = numel(bo);
  if (M == 0 || N == 0 || batch == 0) return Status::Ok();
  if (!fits(numel(sa)) || !fits(numel(sb)) || !fits(numel(out_shape))) return unsup(n, "too large");
  // Batch strides (element units) of A, B and C over bo.
  auto sa_b = broadcast_strides(ba, bo), sb_b = broadcast_strides(bb, bo);
  for (auto& s : sa_b) s *= M * K;
  for (auto& s : sb_b) s *= K * N;
  auto sc_b = contiguous_strides(bo);
  for (auto& s : sc_b) s *= M * N;
  GemmArgs p = row_major_gemm(M, N, K);
  set_epilogue(p, epi);
  if (biass >= 0) {
    p.has_bias = 1;
    p.bias_sm = 0;
    p.bias_sn = 1;
  }
  // Collapse batch dims (drop 1s, merge contiguous).
  std::vector<int64_t> dims, s1, s2, s3;
  for (size_t i = 0; i < bo.size(); ++i) {
    if (bo[i] == 1) continue;
    if (!dims.empty() && s1.back() == sa_b[i] * bo[i] && s2.back() == sb_b[i] * bo[i] && s3.back() == sc_b[i] * bo[i]) {
      dims.back() *= bo[i];
      s1.back() = sa_b[i];
      s2.back() = sb_b[i];
      s3.back() = sc_b[i];
    } else {
      dims.push_back(bo[i]);
      s1.push_back(sa_b[i]);
      s2.push_back(sb_b[i]);
      s3.push_back(sc_b[i]);
    }
  }
  // B shared by every batch and A contiguous: fold the batch into M.
  if (dims.size() == 1 && s2[0] == 0 && s1[0] == M * K) {
    p.M = static_cast<int32_t>(M * dims[0]);
    dims.clear();
  }
  while (dims.size() < 2) {
    dims.insert(dims.begin(), 1);
    s1.insert(s1.begin(), 0);
    s2.insert(s2.begin(), 0);
    s3.insert(s3.begin(), 0);
  }
  // Leading dims beyond two: one launch per index.
  size_t lead = dims.size() - 2;
  int64_t outer = 1;
  for (size_t i = 0; i < lead; ++i) outer *= dims[i];
  p.nb2 = static_cast<int32_t>(dims[lead + 1]);
  p.a_sb1 = static_cast<int32_t>(s1[lead]);
  p.a_sb2 = static_cast<int32_t>(s1[lead + 1]);
  p.b_sb1 = static_cast<int32_t>(s2[lead]);
  p.b_sb2 = static_cast<int32_t>(s2[lead + 1]);
  p.c_sb1 = static_cast<int32_t>(s3[lead]);
  p.c_sb2 = static_cast<int32_t>(s3[lead + 1]);
  for (int64_t o = 0; o < outer; ++o) {
    int64_t r = o, ao = 0, bo2 = 0, co = 0;
    for (int i = static_cast<int>(lead) - 1; i >= 0; --i) {
      int64_t ci = r % dims[i];
      r /= dims[i];
      ao += ci * s1[i];
      bo2 += ci * s2[i];
      co += ci * s3[i];
    }
    GemmArgs q = p;
    q.a_off = static_cast<int32_t>(ao);
    q.b_off = static_cast<int32_t>(bo2);
    q.c_off = static_cast<int32_t>(co);
    emit_gemm(c, q, as, bs, ys, biass, static_cast<int>(dims[lead] * dims[lead + 1]));
  }
  return Status::Ok();
}

// ---- convolution and pooling ----

struct Window {
  std::vector<int64_t> kernel, strides, dilations, pads;  // pads: begins then ends
  std::vector<int64_t> out;
};

Result<Window> window(const ir::Node& n, const Shape& x, const std::vector<int64_t>& kernel, bool ceil_mode) {
  size_t sp = x.size() - 2;
  Window w;
  w.kernel = kernel;
  if (w.kernel.size() != sp) return bad(n, "kernel_shape rank does not match the input");
  w.strides = n.attr_ints("strides", std::vector<int64_t>(sp, 1));
  w.dilations = n.attr_ints("dilations", std::vector<int64_t>(sp, 1));
  w.pads = n.attr_ints("pads", std::vector<int64_t>(2 * sp, 0));
  if (w.strides.size() != sp || w.dilations.size() != sp || w.pads.size() != 2 * sp) return bad(n, "bad strides/dilations/pads");
  std::string ap = n.attr_string("auto_pad", "NOTSET");
  for (size_t i = 0; i < sp; ++i) {
    if (w.strides[i] <= 0 || w.dilations[i] <= 0 || w.kernel[i] <= 0) return bad(n, "non-positive window parameter");
    int64_t ext = (w.kernel[i] - 1) * w.dilations[i] + 1;
    int64_t in = x[2 + i];
    int64_t o;
    if (ap == "SAME_UPPER" || ap == "SAME_LOWER") {
      o = (in + w.strides[i] - 1) / w.strides[i];
      int64_t total = std::max<int64_t>(0, (o - 1) * w.strides[i] + ext - in);
      int64_t small = total / 2, big = total - small;
      w.pads[i] = ap == "SAME_UPPER" ? small : big;
      w.pads[i + sp] = ap == "SAME_UPPER" ? big : small;
    } else if (ap == "VALID") {
      w.pads[i] = w.pads[i + sp] = 0;
      o = (in - ext) / w.strides[i] + 1;
    } else if (ap == "NOTSET") {
      int64_t span = in + w.pads[i] + w.pads[i + sp] - ext;
      if (span < 0) return bad(n, "window larger than the padded input");
      o = ceil_mode ? (span + w.strides[i] - 1) / w.strides[i] + 1 : span / w.strides[i] + 1;
      if (ceil_mode && (o - 1) * w.strides[i] >= in + w.pads[i]) --o;
    } else {
      return bad(n, "unknown auto_pad '" + ap + "'");
    }
    if (o < 0) return bad(n, "negative output size");
    w.out.push_back(o);
  }
  return w;
}

// The geometry fields the conv-like kernels' argument structs share.
template <typename Args>
void set_geometry(Args& a, int64_t C, int64_t H, int64_t W, int64_t OH, int64_t OW, const int64_t k[2],
                  const int64_t s[2], const int64_t p[2], const int64_t d[2]) {
  a.C = static_cast<int32_t>(C);
  a.H = static_cast<int32_t>(H);
  a.W = static_cast<int32_t>(W);
  a.OH = static_cast<int32_t>(OH);
  a.OW = static_cast<int32_t>(OW);
  a.KH = static_cast<int32_t>(k[0]);
  a.KW = static_cast<int32_t>(k[1]);
  a.sh = static_cast<int32_t>(s[0]);
  a.sw = static_cast<int32_t>(s[1]);
  a.ph = static_cast<int32_t>(p[0]);
  a.pw = static_cast<int32_t>(p[1]);
  a.dh = static_cast<int32_t>(d[0]);
  a.dw = static_cast<int32_t>(d[1]);
}

Status lower_conv(LowerCtx& c, const ir::Node& n, const Epilogue& epi, ir::ValueId out) {
  const Shape& sx = c.shape(n.inputs[0]);
  const Shape& sw = c.shape(n.inputs[1]);
  if (sx.size() != 4 || sw.size() != 4) return unsup(n, "only 2-D convolution");
  int64_t N = sx[0], C = sx[1], H = sx[2], W = sx[3], M = sw[0];
  int64_t G = n.attr_int("group", 1);
  if (G <= 0 || C % G != 0 || M % G != 0 || sw[1] != C / G) return bad(n, "channels do not match the weights and group");
  DLRT_ASSIGN_OR_RETURN(Window w, window(n, sx, n.attr_ints("kernel_shape", {sw[2], sw[3]}), false));
  if (w.kernel[0] != sw[2] || w.kernel[1] != sw[3]) return bad(n, "kernel_shape does not match the weights");
  int64_t OH = w.out[0], OW = w.out[1];
  bool has_bias = n.inputs.size() > 2 && n.inputs[2] != ir::kNoValue;
  if (has_bias && numel(c.shape(n.inputs[2])) != M) return bad(n, "bias must have M elements");
  DLRT_ASSIGN_OR_RETURN(int xs, c.slot_of(n.inputs[0]));
  DLRT_ASSIGN_OR_RETURN(int ws, c.slot_of(n.inputs[1]));
  int bs = -1;
  if (has_bias) {
    DLRT_ASSIGN_OR_RETURN(bs, c.slot_of(n.inputs[2]));
  }
  DLRT_ASSIGN_OR_RETURN(int ys, c.define(out, {N, M, OH, OW}, DType::kFloat32));
  int64_t P = OH * OW;
  if (N == 0 || M == 0 || P == 0) return Status::Ok();
  if (!fits(numel(sx)) || !fits(N * M * P) || !fits(numel(sw))) return unsup(n, "too large");
  if (G == C && sw[1] == 1) {  // depthwise: direct
    DwArgs d;
    set_geometry(d, C, H, W, OH, OW, w.kernel.data(), w.strides.data(), w.pads.data(), w.dilations.data());
    d.M = static_cast<int32_t>(M);
    d.mult = static_cast<int32_t>(M / C);
    d.has_bias = has_bias;
    d.act = epi.act;
    d.act_a = epi.a;
    d.act_b = epi.b;
    d.n = static_cast<int32_t>(N * M * P);
    Launch l = elementwise_launch("dwconv_f32", d.n);
    l.slot(xs).slot(ws).slot(bs >= 0 ? bs : ws).slot(ys).val(d);
    c.launch(std::move(l));
    return Status::Ok();
  }
  int64_t Cg = C / G, Mg = M / G, K = Cg * w.kernel[0] * w.kernel[1];
  bool direct = w.kernel[0] == 1 && w.kernel[1] == 1 && w.strides[0] == 1 && w.strides[1] == 1 &&
                std::all_of(w.pads.begin(), w.pads.end(), [](int64_t v) { return v == 0; });
  if (!fits(K * P)) return unsup(n, "im2col buffer too large");
  // Images per GEMM: all of them when their im2col buffer stays small enough
  // (one im2col and one batched GEMM per group), else one at a time.
  constexpr int64_t kMaxColBytes = int64_t{256} << 20;
  int64_t per = direct || (fits(N * K * P) && N * K * P * 4 <= kMaxColBytes) ? N : 1;
  int col = direct ? -1 : c.scratch(static_cast<size_t>(per * K * P) * sizeof(float));
  // Small output planes (the last stages of a CNN, batch > 1) make narrow
  // GEMMs: there the images go side by side in one wide GEMM (col is
  // K x per*P) into a scratch [Mg][per][P], copied to the output's
  // [per][M][P] order after. Wider planes run as one GEMM per image.
  constexpr int64_t kFoldBelowPlane = 1024;
  const bool fold = !direct && per > 1 && P < kFoldBelowPlane && fits(Mg * per * P);
  int folded = fold ? c.scratch(static_cast<size_t>(Mg * per * P) * sizeof(float)) : -1;
  GemmArgs p = row_major_gemm(Mg, P, K);
  p.has_bias = has_bias;
  p.bias_sm = 1;
  p.bias_sn = 0;
  p.nb2 = static_cast<int32_t>(per);
  p.c_sb2 = static_cast<int32_t>(M * P);  // batch: images; weights shared (a_sb2 = 0)
  p.b_sb2 = static_cast<int32_t>(direct ? C * H * W : K * P);
  set_epilogue(p, epi);
  for (int64_t b = 0; b < N; b += per)
    for (int64_t g = 0; g < G; ++g) {
      int64_t x_off = (b * C + g * Cg) * H * W;
      GemmArgs q = p;
      q.a_off = static_cast<int32_t>(g * Mg * K);
      q.c_off = static_cast<int32_t>((b * M + g * Mg) * P);
      q.bias_off = static_cast<int32_t>(g * Mg);
      if (direct) {
        q.b_off = static_cast<int32_t>(x_off);
        emit_gemm(c, q, ws, xs, ys, bs, static_cast<int>(per));
        continue;
      }
      ConvArgs cv;
      set_geometry(cv, Cg, H, W, OH, OW, w.kernel.data(), w.strides.data(), w.pads.data(), w.dilations.data());
      cv.x_off = static_cast<int32_t>(x_off);
      cv.kp = static_cast<int32_t>(K * P);
      cv.x_bstride = static_cast<int32_t>(C * H * W);
      cv.col_img = static_cast<int32_t>(fold ? P : K * P);
      cv.col_row = static_cast<int32_t>(fold ? per * P : P);
      cv.n = static_cast<int32_t>(per * K * P);
      cv.fast = K * P < (int64_t{1} << 22);
      cv.r_p = 1.0f / static_cast<float>(P);
      cv.r_ow = 1.0f / static_cast<float>(OW);
      cv.r_kw = 1.0f / static_cast<float>(w.kernel[1]);
      cv.r_kh = 1.0f / static_cast<float>(w.kernel[0]);
      Launch l;
      l.kernel = "im2col_f32";
      l.dims = 2;
      const size_t lw = std::min<size_t>(256, pow2_at_most(std::max<size_t>(1, c.device().max_wg)));
      l.lws[0] = lw;
      l.lws[1] = 1;
      l.gws[0] = (static_cast<size_t>(K * P) + lw - 1) / lw * lw;
      l.gws[1] = static_cast<size_t>(per);
      l.slot(xs).slot(col).val(cv);
      c.launch(std::move(l));
      if (!fold) {
        emit_gemm(c, q, ws, col, ys, bs, static_cast<int>(per));
        continue;
      }
      GemmArgs f = q;
      f.N = static_cast<int32_t>(per * P);
      f.b_sk = f.N;
      f.c_sm = f.N;
      f.c_off = 0;
      f.nb2 = 1;
      f.b_sb2 = f.c_sb2 = 0;
      emit_gemm(c, f, ws, col, folded, bs, 1);
      DLRT_RETURN_IF_ERROR(emit_copy(c, n, DType::kFloat32, folded, 0, ys, (b * M + g * Mg) * P, {per, Mg, P},
                                     {P, per * P, 1}, {M * P, P, 1}));
    }
  return Status::Ok();
}

// ConvTranspose (2-D): output size from strides, pads, dilations and
// output_padding, or pads from output_shape (ONNX's rules); a direct gather
// kernel with the bias and a fused activation.
Status lower_convtranspose(LowerCtx& c, const ir::Node& n, const Epilogue& epi, ir::ValueId out) {
  const Shape& sx = c.shape(n.inputs[0]);
  const Shape& sw = c.shape(n.inputs[1]);
  if (sx.size() != 4 || sw.size() != 4) return unsup(n, "only 2-D ConvTranspose");
  int64_t N = sx[0], C = sx[1], H = sx[2], W = sx[3];
  int64_t G = n.attr_int("group", 1);
  if (G <= 0 || C % G != 0 || sw[0] != C) return bad(n, "channels do not match the weights and group");
  int64_t Cg = C / G, Mg = sw[1], M = Mg * G;
  std::vector<int64_t> k = n.attr_ints("kernel_shape", {sw[2], sw[3]});
  std::vector<int64_t> st = n.attr_ints("strides", {1, 1}), dl = n.attr_ints("dilations", {1, 1});
  std::vector<int64_t> op = n.attr_ints("output_padding", {0, 0}), pads = n.attr_ints("pads", {0, 0, 0, 0});
  std::vector<int64_t> oshape = n.attr_ints("output_shape", {});
  std::string ap = n.attr_string("auto_pad", "NOTSET");
  if (k.size() != 2 || st.size() != 2 || dl.size() != 2 || op.size() != 2 || pads.size() != 4)
    return bad(n, "bad kernel_shape/strides/dilations/output_padding/pads");
  if (k[0] != sw[2] || k[1] != sw[3]) return bad(n, "kernel_shape does not match the weights");
  for (int i = 0; i < 2; ++i)
    if (st[i] <= 0 || dl[i] <= 0 || k[i] <= 0) return bad(n, "non-positive window parameter");
  int64_t outs[2];
  for (int i = 0; i < 2; ++i) {
    int64_t in = sx[2 + i], ext = (k[i] - 1) * dl[i] + 1;
    int64_t full = st[i] * (in - 1) + op[i] + ext;
    if (!oshape.empty()) {
      if (oshape.size() != 2 && oshape.size() != 4) return bad(n, "output_shape must have 2 (or 4) values");
      int64_t want = oshape[oshape.size() - 2 + i];
      int64_t total = full - want;
      if (total < 0) return unsup(n, "output_shape larger than the full output");
      bool upper = ap == "SAME_UPPER";
      pads[i] = upper ? total / 2 : total - total / 2;
      pads[i + 2] = total - pads[i];
    } else if (ap == "SAME_UPPER" || ap == "SAME_LOWER") {
      int64_t want = in * st[i];
      int64_t total = std::max<int64_t>(0, full - want);
      pads[i] = ap == "SAME_UPPER" ? total / 2 : total - total / 2;
      pads[i + 2] = total - pads[i];
    } else if (ap == "VALID") {
      pads[i] = pads[i + 2] = 0;
    } else if (ap != "NOTSET") {
      return bad(n, "unknown auto_pad '" + ap + "'");
    }
    outs[i] = full - pads[i] - pads[i + 2];
    if (outs[i] < 0) return bad(n, "negative output size");
  }
  bool has_bias = n.inputs.size() > 2 && n.inputs[2] != ir::kNoValue;
  if (has_bias && numel(c.shape(n.inputs[2])) != M) return bad(n, "bias must have M elements");
  DLRT_ASSIGN_OR_RETURN(int xs, c.slot_of(n.inputs[0]));
  DLRT_ASSIGN_OR_RETURN(int ws, c.slot_of(n.inputs[1]));
  int bs = -1;
  if (has_bias) {
    DLRT_ASSIGN_OR_RETURN(bs, c.slot_of(n.inputs[2]));
  }
  DLRT_ASSIGN_OR_RETURN(int ys, c.define(out, {N, M, outs[0], outs[1]}, DType::kFloat32));
  int64_t total = N * M * outs[0] * outs[1];
  if (total == 0) return Status::Ok();
  if (!fits(numel(sx)) || !fits(total) || !fits(numel(sw))) return unsup(n, "too large");
  ConvTArgs p;
  set_geometry(p, Cg, H, W, outs[0], outs[1], k.data(), st.data(), pads.data(), dl.data());
  p.M = static_cast<int32_t>(Mg);
  p.G = static_cast<int32_t>(G);
  p.has_bias = has_bias;
  p.act = epi.act;
  p.act_a = epi.a;
  p.act_b = epi.b;
  p.n = static_cast<int32_t>(total);
  Launch l = elementwise_launch("convtranspose_f32", total);
  l.slot(xs).slot(ws).slot(bs >= 0 ? bs : ws).slot(ys).val(p);
  c.launch(std::move(l));
  return Status::Ok();
}

Status lower_pool(LowerCtx& c, const ir::Node& n) {
  const Shape& sx = c.shape(n.inputs[0]);
  if (sx.size() != 4) return unsup(n, "only 2-D pooling");
  if (n.outputs.size() > 1 && n.outputs[1] != ir::kNoValue) return unsup(n, "MaxPool Indices output");
  bool is_max = n.op_type == "MaxPool";
  if (is_max && n.attr_int("storage_order", 0) != 0) return unsup(n, "storage_order");
  DLRT_ASSIGN_OR_RETURN(Window w, window(n, sx, n.attr_ints("kernel_shape"), n.attr_int("ceil_mode", 0) != 0));
  DLRT_ASSIGN_OR_RETURN(int xs, c.slot_of(n.inputs[0]));
  DLRT_ASSIGN_OR_RETURN(int ys, c.define(n.outputs[0], {sx[0], sx[1], w.out[0], w.out[1]}, DType::kFloat32));
  PoolArgs p;
  p.C = static_cast<int32_t>(sx[0] * sx[1]);
  p.H = static_cast<int32_t>(sx[2]);
  p.W = static_cast<int32_t>(sx[3]);
  p.OH = static_cast<int32_t>(w.out[0]);
  p.OW = static_cast<int32_t>(w.out[1]);
  p.KH = static_cast<int32_t>(w.kernel[0]);
  p.KW = static_cast<int32_t>(w.kernel[1]);
  p.sh = static_cast<int32_t>(w.strides[0]);
  p.sw = static_cast<int32_t>(w.strides[1]);
  p.ph = static_cast<int32_t>(w.pads[0]);
  p.pw = static_cast<int32_t>(w.pads[1]);
  p.ph_end = static_cast<int32_t>(w.pads[2]);
  p.pw_end = static_cast<int32_t>(w.pads[3]);
  p.dh = is_max ? static_cast<int32_t>(w.dilations[0]) : 1;
  p.dw = is_max ? static_cast<int32_t>(w.dilations[1]) : 1;
  if (!is_max && (w.dilations[0] != 1 || w.dilations[1] != 1)) return unsup(n, "dilated AveragePool");
  p.count_include_pad = static_cast<int32_t>(n.attr_int("count_include_pad", 0));
  int64_t total = sx[0] * sx[1] * w.out[0] * w.out[1];
  if (!fits(total) || !fits(numel(sx))) return unsup(n, "too large");
  p.n = static_cast<int32_t>(total);
  if (total == 0) return Status::Ok();
  Launch l = elementwise_launch(is_max ? "maxpool_f32" : "avgpool_f32", total);
  l.slot(xs).slot(ys).val(p);
  c.launch(std::move(l));
  return Status::Ok();
}

// ---- reductions, softmax, normalization ----

int32_t reduce_code(const std::string& op) {
  static const std::map<std::string, int32_t> m = {
      {"ReduceSum", 0}, {"ReduceMean", 1}, {"ReduceMax", 2}, {"ReduceMin", 3}, {"ReduceProd", 4},
      {"ReduceL1", 5}, {"ReduceL2", 6}, {"ReduceSumSquare", 7}, {"ReduceLogSum", 8}, {"ReduceLogSumExp", 9},
      {"GlobalAveragePool", 1}, {"GlobalMaxPool", 2}};
  auto it = m.find(op);
  return it == m.end() ? -1 : it->second;
}

// Opset at which a reduction's axes moved from attribute to input.
int axes_input_opset(const std::string& op) { return op == "ReduceSum" ? 13 : 18; }

Status emit_reduce(LowerCtx& c, const ir::Node& n, int32_t code, const std::vector<bool>& reduced, bool keepdims) {
  ir::ValueId x = n.inputs[0];
  const Shape& sx = c.shape(x);
  auto st = contiguous_strides(sx);
  Shape kd, rd, out;
  std::vector<int64_t> ks, rs;
  for (size_t i = 0; i < sx.size(); ++i) {
    if (reduced[i]) {
      rd.push_back(sx[i]);
      rs.push_back(st[i]);
      if (keepdims) out.push_back(1);
    } else {
      kd.push_back(sx[i]);
      ks.push_back(st[i]);
      out.push_back(sx[i]);
    }
  }
  DLRT_ASSIGN_OR_RETURN(int xs, c.slot_of(x));
  DLRT_ASSIGN_OR_RETURN(int ys, c.define(n.outputs[0], out, DType::kFloat32));
  if (numel(out) == 0) return Status::Ok();
  DLRT_ASSIGN_OR_RETURN(GeoArgs keep, make_geo(kd, {ks}, n));
  DLRT_ASSIGN_OR_RETURN(GeoArgs red, make_geo(rd, {rs}, n));
  if (numel(rd) == 0) red.n = 0;
  Launch l = elementwise_launch("reduce_f32", keep.n);
  l.slot(xs).slot(ys).val(keep).val(red).val(code);
  c.launch(std::move(l));
  return Status::Ok();
}

Status lower_reduce(LowerCtx& c, const ir::Node& n) {
  ir::ValueId x = n.inputs[0];
  int64_t rank = static_cast<int64_t>(c.shape(x).size());
  int32_t code = reduce_code(n.op_type);
  if (n.op_type == "GlobalAveragePool" || n.op_type == "GlobalMaxPool") {
    if (rank < 3) return bad(n, "input must have rank >= 3");
    std::vector<bool> red(rank, true);
    red[0] = red[1] = false;
    return emit_reduce(c, n, code, red, true);
  }
  std::vector<int64_t> axes;
  if (n.opset >= axes_input_opset(n.op_type)) {
    if (n.inputs.size() > 1 && n.inputs[1] != ir::kNoValue) {
      DLRT_ASSIGN_OR_RETURN(axes, ints_of(c.host(n.inputs[1]), n, "axes"));
    }
  } else {
    axes = n.attr_ints("axes");
  }
  bool keepdims = n.attr_int("keepdims", 1) != 0;
  if (axes.empty() && n.attr_int("noop_with_empty_axes", 0) != 0) return c.alias(n.outputs[0], x, c.shape(x));
  std::vector<bool> red(rank, axes.empty());
  for (auto a : axes) {
    DLRT_ASSIGN_OR_RETURN(int64_t ax, norm_axis(a, rank, n));
    red[ax] = true;
  }
  return emit_reduce(c, n, code, red, keepdims);
}

size_t row_local_size(const LowerCtx& c, int64_t len) {
  size_t cap = std::min<size_t>(256, pow2_at_most(std::max<size_t>(1, c.device().max_wg)));
  size_t l = 1;
  while (l < static_cast<size_t>(len) && l < cap) l *= 2;
  return l;
}

Status lower_softmax(LowerCtx& c, const ir::Node& n) {
  ir::ValueId x = n.inputs[0];
  const Shape& sx = c.shape(x);
  int64_t rank = static_cast<int64_t>(sx.size());
  DLRT_ASSIGN_OR_RETURN(int64_t axis, norm_axis(n.attr_int("axis", n.opset < 13 ? 1 : -1), rank, n));
  int64_t outer = 1, len = 1, inner = 1;
  for (int64_t i = 0; i < rank; ++i) {
    if (i < axis) outer *= sx[i];
    else if (n.opset < 13 || i == axis) len *= sx[i];
    else inner *= sx[i];
  }
  DLRT_ASSIGN_OR_RETURN(int xs, c.slot_of(x));
  DLRT_ASSIGN_OR_RETURN(int ys, c.define(n.outputs[0], sx, DType::kFloat32));
  int64_t rows = outer * inner;
  if (rows == 0 || len == 0) return Status::Ok();
  if (!fits(numel(sx))) return unsup(n, "too large");
  size_t lsz = row_local_size(c, len);
  Launch l;
  l.kernel = "softmax_f32";
  l.slot(xs).slot(ys).val(static_cast<int32_t>(len)).val(static_cast<int32_t>(inner))
      .val(static_cast<int32_t>(n.op_type == "LogSoftmax"));
  l.gws[0] = static_cast<size_t>(rows) * lsz;
  l.lws[0] = lsz;
  c.launch(std::move(l));
  return Status::Ok();
}

Status lower_layernorm(LowerCtx& c, const ir::Node& n) {
  for (size_t i = 1; i < n.outputs.size(); ++i)
    if (n.outputs[i] != ir::kNoValue) return unsup(n, "Mean/InvStdDev outputs");
  ir::ValueId x = n.inputs[0];
  const Shape& sx = c.shape(x);
  int64_t rank = static_cast<int64_t>(sx.size());
  DLRT_ASSIGN_OR_RETURN(int64_t axis, norm_axis(n.attr_int("axis", -1), rank, n));
  int64_t rows = 1, len = 1;
  for (int64_t i = 0; i < rank; ++i) (i < axis ? rows : len) *= sx[i];
  if (numel(c.shape(n.inputs[1])) != len) return unsup(n, "Scale must have the normalized shape");
  bool has_bias = n.inputs.size() > 2 && n.inputs[2] != ir::kNoValue;
  if (has_bias && numel(c.shape(n.inputs[2])) != len) return unsup(n, "B must have the normalized shape");
  DLRT_ASSIGN_OR_RETURN(int xs, c.slot_of(x));
  DLRT_ASSIGN_OR_RETURN(int ss, c.slot_of(n.inputs[1]));
  int bs = ss;
  if (has_bias) {
    DLRT_ASSIGN_OR_RETURN(bs, c.slot_of(n.inputs[2]));
  }
  DLRT_ASSIGN_OR_RETURN(int ys, c.define(n.outputs[0], sx, DType::kFloat32));
  if (rows == 0 || len == 0) return Status::Ok();
  if (!fits(numel(sx))) return unsup(n, "too large");
  size_t lsz = row_local_size(c, len);
  Launch l;
  l.kernel = "layernorm_f32";
  l.slot(xs).slot(ss).slot(bs).slot(ys).val(static_cast<int32_t>(len)).val(n.attr_float("epsilon", 1e-5f))
      .val(static_cast<int32_t>(has_bias));
  l.gws[0] = static_cast<size_t>(rows) * lsz;
  l.lws[0] = lsz;
  c.launch(std::move(l));
  return Status::Ok();
}

// ---- shape and data movement ----

Status lower_reshape(LowerCtx& c, const ir::Node& n) {
  ir::ValueId x = n.inputs[0];
  const Shape& sx = c.shape(x);
  Shape out;
  if (n.op_type == "Reshape") {
    std::vector<int64_t> want;
    if (n.opset < 5) want = n.attr_ints("shape");
    else {
      DLRT_ASSIGN_OR_RETURN(want, ints_of(c.host(n.inputs[1]), n, "shape"));
    }
    bool allowzero = n.attr_int("allowzero", 0) != 0;
    int infer = -1;
    int64_t known = 1;
    for (size_t i = 0; i < want.size(); ++i) {
      int64_t d = want[i];
      if (d == 0 && !allowzero) {
        if (i >= sx.size()) return bad(n, "0 in shape refers past the input's rank");
        d = sx[i];
      }
      if (d == -1) {
        if (infer >= 0) return bad(n, "more than one -1 in shape");
        infer = static_cast<int>(i);
        out.push_back(1);
        continue;
      }
      if (d < 0) return bad(n, "negative dimension in shape");
      out.push_back(d);
      known *= d;
    }
    if (infer >= 0) {
      if (known == 0 || numel(sx) % known != 0) return bad(n, "cannot infer the -1 dimension");
      out[infer] = numel(sx) / known;
    }
  } else if (n.op_type == "Flatten") {
    int64_t rank = static_cast<int64_t>(sx.size());
    int64_t axis = n.attr_int("axis", 1);
    if (axis < 0) axis += rank;
    if (axis < 0 || axis > rank) return bad(n, "axis out of range");
    int64_t a = 1, b = 1;
    for (int64_t i = 0; i < rank; ++i) (i < axis ? a : b) *= sx[i];
    out = {a, b};
  } else if (n.op_type == "Squeeze") {
    std::vector<int64_t> axes;
    if (n.opset < 13) axes = n.attr_ints("axes");
    else if (n.inputs.size() > 1 && n.inputs[1] != ir::kNoValue) {
      DLRT_ASSIGN_OR_RETURN(axes, ints_of(c.host(n.inputs[1]), n, "axes"));
    }
    int64_t rank = static_cast<int64_t>(sx.size());
    std::vector<bool> drop(rank, false);
    if (axes.empty())
      for (int64_t i = 0; i < rank; ++i) drop[i] = sx[i] == 1;
    for (auto a : axes) {
      DLRT_ASSIGN_OR_RETURN(int64_t ax, norm_axis(a, rank, n));
      if (sx[ax] != 1) return bad(n, "cannot squeeze a dimension that is not 1");
      drop[ax] = true;
    }
    for (int64_t i = 0; i < rank; ++i)
      if (!drop[i]) out.push_back(sx[i]);
  } else {  // Unsqueeze
    std::vector<int64_t> axes;
    if (n.opset < 13) axes = n.attr_ints("axes");
    else {
      DLRT_ASSIGN_OR_RETURN(axes, ints_of(c.host(n.inputs[1]), n, "axes"));
    }
    int64_t rank = static_cast<int64_t>(sx.size() + axes.size());
    std::vector<bool> ins(rank, false);
    for (auto a : axes) {
      DLRT_ASSIGN_OR_RETURN(int64_t ax, norm_axis(a, rank, n));
      if (ins[ax]) return bad(n, "repeated axis");
      ins[ax] = true;
    }
    size_t j = 0;
    for (int64_t i = 0; i < rank; ++i) out.push_back(ins[i] ? 1 : sx[j++]);
  }
  if (numel(out) != numel(sx)) return bad(n, "element count changes");
  return c.alias(n.outputs[0], x, out);
}

Status lower_transpose(LowerCtx& c, const ir::Node& n) {
  ir::ValueId x = n.inputs[0];
  const Shape& sx = c.shape(x);
  size_t rank = sx.size();
  std::vector<int64_t> perm = n.attr_ints("perm");
  if (perm.empty())
    for (size_t i = 0; i < rank; ++i) perm.push_back(static_cast<int64_t>(rank - 1 - i));
  if (perm.size() != rank) return bad(n, "perm has the wrong length");
  std::vector<bool> seen(rank, false);
  Shape out(rank);
  auto st = contiguous_strides(sx);
  std::vector<int64_t> src(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t p = perm[i];
    if (p < 0 || p >= static_cast<int64_t>(rank) || seen[p]) return bad(n, "perm is not a permutation");
    seen[p] = true;
    out[i] = sx[p];
    src[i] = st[p];
  }
  DLRT_ASSIGN_OR_RETURN(int xs, c.slot_of(x));
  DLRT_ASSIGN_OR_RETURN(int ys, c.define(n.outputs[0], out, c.dtype(x)));
  return emit_copy(c, n, c.dtype(x), xs, 0, ys, 0, out, src, contiguous_strides(out));
}

Status lower_concat(LowerCtx& c, const ir::Node& n) {
  std::vector<ir::ValueId> ins;
  for (auto v : n.inputs)
    if (v != ir::kNoValue) ins.push_back(v);
  if (ins.empty()) return bad(n, "no inputs");
  Shape out = c.shape(ins[0]);
  int64_t rank = static_cast<int64_t>(out.size());
  DLRT_ASSIGN_OR_RETURN(int64_t axis, norm_axis(n.attr_int("axis", 0), rank, n));
  DType t = c.dtype(ins[0]);
  out[axis] = 0;
  for (auto v : ins) {
    const Shape& s = c.shape(v);
    if (static_cast<int64_t>(s.size()) != rank || c.dtype(v) != t) return bad(n, "inputs differ in rank or type");
    for (int64_t i = 0; i < rank; ++i)
      if (i != axis && s[i] != out[i]) return bad(n, "inputs differ outside the axis");
    out[axis] += s[axis];
  }
  std::vector<int> slots;
  for (auto v : ins) {
    DLRT_ASSIGN_OR_RETURN(int s, c.slot_of(v));
    slots.push_back(s);
  }
  DLRT_ASSIGN_OR_RETURN(int ys, c.define(n.outputs[0], out, t));
  auto ost = contiguous_strides(out);
  int64_t off = 0;
  for (size_t i = 0; i < ins.size(); ++i) {
    const Shape& s = c.shape(ins[i]);
    DLRT_RETURN_IF_ERROR(emit_copy(c, n, t, slots[i], 0, ys, off * ost[axis], s, contiguous_strides(s), ost));
    off += s[axis];
  }
  return Status::Ok();
}

Status lower_split(LowerCtx& c, const ir::Node& n) {
  ir::ValueId x = n.inputs[0];
  const Shape& sx = c.shape(x);
  int64_t rank = static_cast<int64_t>(sx.size());
  DLRT_ASSIGN_OR_RETURN(int64_t axis, norm_axis(n.attr_int("axis", 0), rank, n));
  std::vector<int64_t> split;
  if (n.opset < 13) split = n.attr_ints("split");
  else if (n.inputs.size() > 1 && n.inputs[1] != ir::kNoValue) {
    DLRT_ASSIGN_OR_RETURN(split, ints_of(c.host(n.inputs[1]), n, "split"));
  }
  int64_t parts = static_cast<int64_t>(n.outputs.size());
  if (split.empty()) {
    int64_t each = (sx[axis] + parts - 1) / parts;
    for (int64_t i = 0; i < parts; ++i) split.push_back(std::max<int64_t>(0, std::min(each, sx[axis] - i * each)));
  }
  if (static_cast<int64_t>(split.size()) != parts) return bad(n, "split count differs from the outputs");
  int64_t total = 0;
  for (auto s : split) {
    if (s < 0) return bad(n, "negative split");
    total += s;
  }
  if (total != sx[axis]) return bad(n, "split sizes do not add up");
  DLRT_ASSIGN_OR_RETURN(int xs, c.slot_of(x));
  auto st = contiguous_strides(sx);
  int64_t off = 0;
  for (int64_t i = 0; i < parts; ++i) {
    Shape so = sx;
    so[axis] = split[i];
    if (n.outputs[i] != ir::kNoValue) {
      DLRT_ASSIGN_OR_RETURN(int ys, c.define(n.outputs[i], so, c.dtype(x)));
      DLRT_RETURN_IF_ERROR(emit_copy(c, n, c.dtype(x), xs, off * st[axis], ys, 0, so, st, contiguous_strides(so)));
    }
    off += split[i];
  }
  return Status::Ok();
}

Status lower_slice(LowerCtx& c, const ir::Node& n) {
  ir::ValueId x = n.inputs[0];
  const Shape& sx = c.shape(x);
  int64_t rank = static_cast<int64_t>(sx.size());
  std::vector<int64_t> starts, ends, axes, steps;
  if (n.opset < 10) {
    starts = n.attr_ints("starts");
    ends = n.attr_ints("ends");
    axes = n.attr_ints("axes");
  } else {
    DLRT_ASSIGN_OR_RETURN(starts, ints_of(c.host(n.inputs[1]), n, "starts"));
    DLRT_ASSIGN_OR_RETURN(ends, ints_of(c.host(n.inputs[2]), n, "ends"));
    if (n.inputs.size() > 3 && n.inputs[3] != ir::kNoValue) {
      DLRT_ASSIGN_OR_RETURN(axes, ints_of(c.host(n.inputs[3]), n, "axes"));
    }
    if (n.inputs.size() > 4 && n.inputs[4] != ir::kNoValue) {
      DLRT_ASSIGN_OR_RETURN(steps, ints_of(c.host(n.inputs[4]), n, "steps"));
    }
  }
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    return bad(n, "starts, ends, axes and steps differ in length");
  std::vector<int64_t> begin(rank, 0), step(rank, 1);
  Shape out = sx;
  std::vector<bool> seen(rank, false);
  for (size_t i = 0; i < starts.size(); ++i) {
    DLRT_ASSIGN_OR_RETURN(int64_t a, norm_axis(axes[i], rank, n));
    if (seen[a]) return bad(n, "repeated axis");
    seen[a] = true;
    int64_t d = sx[a], s = steps[i];
    if (s == 0) return bad(n, "step 0");
    int64_t b = starts[i], e = ends[i];
    if (b < 0) b += d;
    if (e < 0) e += d;
    int64_t len;
    if (s > 0) {
      b = std::clamp<int64_t>(b, 0, d);
      e = std::clamp<int64_t>(e, 0, d);
      len = e > b ? (e - b + s - 1) / s : 0;
    } else {
      b = std::clamp<int64_t>(b, -1, d - 1);
      e = std::clamp<int64_t>(e, -1, d - 1);
      len = b > e ? (b - e + (-s) - 1) / (-s) : 0;
    }
    begin[a] = len > 0 ? b : 0;
    step[a] = s;
    out[a] = len;
  }
  auto st = contiguous_strides(sx);
  int64_t off = 0;
  std::vector<int64_t> src(rank);
  for (int64_t i = 0; i < rank; ++i) {
    off += begin[i] * st[i];
    src[i] = st[i] * step[i];
  }
  DLRT_ASSIGN_OR_RETURN(int xs, c.slot_of(x));
  DLRT_ASSIGN_OR_RETURN(int ys, c.define(n.outputs[0], out, c.dtype(x)));
  return emit_copy(c, n, c.dtype(x), xs, off, ys, 0, out, src, contiguous_strides(out));
}

Status lower_expand(LowerCtx& c, const ir::Node& n) {
  ir::ValueId x = n.inputs[0];
  DLRT_ASSIGN_OR_RETURN(std::vector<int64_t> want, ints_of(c.host(n.inputs[1]), n, "shape"));
  DLRT_ASSIGN_OR_RETURN(Shape out, broadcast_shape({c.shape(x), Shape(want)}, n));
  DLRT_ASSIGN_OR_RETURN(int xs, c.slot_of(x));
  DLRT_ASSIGN_OR_RETURN(int ys, c.define(n.outputs[0], out, c.dtype(x)));
  return emit_copy(c, n, c.dtype(x), xs, 0, ys, 0, out, broadcast_strides(c.shape(x), out), contiguous_strides(out));
}

Status lower_gather(LowerCtx& c, const ir::Node& n) {
  ir::ValueId x = n.inputs[0], idx = n.inputs[1];
  const Shape& sx = c.shape(x);
  const Shape& si = c.shape(idx);
  int64_t rank = static_cast<int64_t>(sx.size());
  if (rank == 0) return bad(n, "data must have rank >= 1");
  DLRT_ASSIGN_OR_RETURN(int64_t axis, norm_axis(n.attr_int("axis", 0), rank, n));
  DType it = c.dtype(idx);
  if (it != DType::kInt64 && it != DType::kInt32) return bad(n, "indices must be int64 or int32");
  size_t es = elem_bytes(c.dtype(x));
  if (es != 4 && es != 8) return unsup(n, "element size not supported");
  int64_t axis_len = sx[axis];
  if (const Tensor* h = c.host(idx)) {  // known indices: check them here
    DLRT_ASSIGN_OR_RETURN(auto v, ints_of(h, n, "indices"));
    for (auto k : v)
      if (k < -axis_len || k >= axis_len) return bad(n, "index " + std::to_string(k) + " out of range");
  }
  Shape out(sx.begin(), sx.begin() + axis);
  out.insert(out.end(), si.begin(), si.end());
  out.insert(out.end(), sx.begin() + axis + 1, sx.end());
  int64_t inner = 1;
  for (int64_t i = axis + 1; i < rank; ++i) inner *= sx[i];
  DLRT_ASSIGN_OR_RETURN(int xs, c.slot_of(x));
  DLRT_ASSIGN_OR_RETURN(int is, c.slot_of(idx));
  DLRT_ASSIGN_OR_RETURN(int ys, c.define(n.outputs[0], out, c.dtype(x)));
  int64_t total = numel(out);
  if (total == 0) return Status::Ok();
  if (!fits(total) || !fits(numel(sx))) return unsup(n, "too large");
  std::string k = std::string("gather_") + (es == 4 ? "4" : "8") + (it == DType::kInt64 ? "_i64" : "_i32");
  Launch l = elementwise_launch(k.c_str(), total);
  l.slot(xs).slot(is).slot(ys).val(static_cast<int32_t>(std::max<int64_t>(1, numel(si))))
      .val(static_cast<int32_t>(std::max<int64_t>(1, inner))).val(static_cast<int32_t>(axis_len))
      .val(static_cast<int32_t>(total));
  c.launch(std::move(l));
  return Status::Ok();
}

// The Resize modes the resize_f32 kernel runs, with its codes for them (placement refuses
// the others, see static_shape_reason).
const std::map<std::string, int32_t>& resize_coord_codes() {
  static const std::map<std::string, int32_t> codes = {{"half_pixel", 0}, {"asymmetric", 1}, {"align_corners", 2},
                                                      {"pytorch_half_pixel", 3}, {"tf_half_pixel_for_nn", 4}};
  return codes;
}
const std::map<std::string, int32_t>& resize_nearest_codes() {
  static const std::map<std::string, int32_t> codes = {
      {"round_prefer_floor", 0}, {"round_prefer_ceil", 1}, {"floor", 2}, {"ceil", 3}};
  return codes;
}

Status lower_resize(LowerCtx& c, const ir::Node& n) {
  ir::ValueId x = n.inputs[0];
  const Shape& sx = c.shape(x);
  if (sx.size() != 4) return unsup(n, "only 4-D Resize");
  std::string mode = n.attr_string("mode", "nearest");
  std::string coord = n.attr_string("coordinate_transformation_mode", "half_pixel");
  std::string nearest = n.attr_string("nearest_mode", "round_prefer_floor");
  std::vector<float> scales;
  std::vector<int64_t> sizes;
  if (n.inputs.size() > 2 && n.inputs[2] != ir::kNoValue) {
    const Tensor* t = c.host(n.inputs[2]);
    if (!t) return unsup(n, "scales must be known on the host");
    if (t->dtype() != DType::kFloat32) return bad(n, "scales must be float32");
    scales.assign(t->data<float>(), t->data<float>() + t->size());
  }
  if (n.inputs.size() > 3 && n.inputs[3] != ir::kNoValue) {
    DLRT_ASSIGN_OR_RETURN(sizes, ints_of(c.host(n.inputs[3]), n, "sizes"));
  }
  if (n.has_attr("axes")) return unsup(n, "axes attribute");
  Shape out = sx;
  float sh, sw;
  if (!sizes.empty()) {
    if (sizes.size() != 4) return bad(n, "sizes must have 4 elements");
    out = sizes;
    sh = static_cast<float>(out[2]) / static_cast<float>(sx[2]);
    sw = static_cast<float>(out[3]) / static_cast<float>(sx[3]);
  } else if (scales.size() == 4) {
    if (scales[0] != 1.0f || scales[1] != 1.0f) return unsup(n, "scaling N or C");
    for (int i = 2; i < 4; ++i) {
      if (!(scales[i] > 0)) return bad(n, "scales must be positive");
      out[i] = static_cast<int64_t>(std::floor(static_cast<double>(sx[i]) * scales[i]));
    }
    sh = scales[2];
    sw = scales[3];
  } else {
    return bad(n, "needs 4 scales or 4 sizes");
  }
  if (out[0] != sx[0] || out[1] != sx[1]) return unsup(n, "scaling N or C");
  ResizeArgs p;
  p.C = static_cast<int32_t>(sx[0] * sx[1]);
  p.H = static_cast<int32_t>(sx[2]);
  p.W = static_cast<int32_t>(sx[3]);
  p.OH = static_cast<int32_t>(out[2]);
  p.OW = static_cast<int32_t>(out[3]);
  p.linear = mode == "linear";
  auto ci = resize_coord_codes().find(coord);
  auto ni = resize_nearest_codes().find(nearest);
  if (ci == resize_coord_codes().end() || ni == resize_nearest_codes().end()) return unsup(n, "coordinate/nearest mode");
  p.coord = ci->second;
  p.nearest = ni->second;
  p.scale_h = sh;
  p.scale_w = sw;
  int64_t total = numel(out);
  if (!fits(total) || !fits(numel(sx))) return unsup(n, "too large");
  p.n = static_cast<int32_t>(total);
  DLRT_ASSIGN_OR_RETURN(int xs, c.slot_of(x));
  DLRT_ASSIGN_OR_RETURN(int ys, c.define(n.outputs[0], out, DType::kFloat32));
  if (total == 0 || numel(sx) == 0) return Status::Ok();
  Launch l = elementwise_launch("resize_f32", total);
  l.slot(xs).slot(ys).val(p);
  c.launch(std::move(l));
  return Status::Ok();
}

// ---- the op table ----

enum class Data { kFloat, kAny, kNone };  // what input 0 (and the outputs) must be

struct OpInfo {
  Data data = Data::kFloat;
  std::vector<int> host_params;  // inputs that must be host values
  int min_opset = 1;
  std::function<Status(LowerCtx&, const ir::Node&)> lower;  // for ops without epilogues
};

const std::map<std::string, OpInfo>& op_table() {
  static const std::map<std::string, OpInfo> t = [] {
    std::map<std::string, OpInfo> m;
    for (const char* op : {"Relu", "Sigmoid", "Tanh", "Exp", "Log", "Sqrt", "Abs", "Neg", "Erf", "Reciprocal", "Floor",
                           "Ceil", "Softplus", "Sin", "Cos", "Round", "Sign", "Softsign", "Mish", "HardSwish",
                           "LeakyRelu", "Elu", "Selu", "HardSigmoid", "Gelu"})
      m[op] = {Data::kFloat, {}, 1, lower_unary};
    m["Clip"] = {Data::kFloat, {1, 2}, 1, lower_unary};
    for (const char* op : {"Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Sum", "PRelu", "Mod"})
      m[op] = {Data::kFloat, {}, 7, lower_binary};
    for (const char* op : {"Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual"})
      m[op] = {Data::kFloat, {}, 7, lower_compare};
    m["Where"] = {Data::kNone, {}, 9, lower_where};
    m["Cast"] = {Data::kNone, {}, 6, lower_cast};
    m["Identity"] = {Data::kAny, {}, 1, lower_alias};
    m["Dropout"] = {Data::kFloat, {1, 2}, 7, lower_alias};
    m["Gemm"] = {Data::kFloat, {}, 7, nullptr};
    m["MatMul"] = {Data::kFloat, {}, 1, nullptr};
    m["Conv"] = {Data::kFloat, {}, 1, nullptr};
    m["ConvTranspose"] = {Data::kFloat, {}, 1, nullptr};
    m["MaxPool"] = {Data::kFloat, {}, 1, lower_pool};
    m["AveragePool"] = {Data::kFloat, {}, 7, lower_pool};
    m["GlobalAveragePool"] = {Data::kFloat, {}, 1, lower_reduce};
    m["GlobalMaxPool"] = {Data::kFloat, {}, 1, lower_reduce};
    for (const char* op : {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
                           "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp"})
      m[op] = {Data::kFloat, {1}, 1, lower_reduce};
    m["Softmax"] = {Data::kFloat, {}, 1, lower_softmax};
    m["LogSoftmax"] = {Data::kFloat, {}, 1, lower_softmax};
    m["LayerNormalization"] = {Data::kFloat, {}, 17, lower_layernorm};
    m["Reshape"] = {Data::kAny, {1}, 5, lower_reshape};
    m["Flatten"] = {Data::kAny, {}, 1, lower_reshape};
    m["Squeeze"] = {Data::kAny, {1}, 1, lower_reshape};
    m["Unsqueeze"] = {Data::kAny, {1}, 1, lower_reshape};
    m["Transpose"] = {Data::kAny, {}, 1, lower_transpose};
    m["Concat"] = {Data::kAny, {}, 4, lower_concat};
    m["Split"] = {Data::kAny, {1}, 2, lower_split};
    m["Slice"] = {Data::kAny, {1, 2, 3, 4}, 1, lower_slice};
    m["Expand"] = {Data::kAny, {1}, 8, lower_expand};
    m["Gather"] = {Data::kAny, {}, 1, lower_gather};
    m["Resize"] = {Data::kFloat, {1, 2, 3}, 11, lower_resize};
    return m;
  }();
  return t;
}

// The kernels' limits that placement can see in the graph's static types and
// attributes: each is also refused by the op's lowering, and claiming such a
// node would only move the refusal to the first run.
std::string static_shape_reason(const ir::Graph& graph, const ir::Node& node) {
  auto rank_of = [&](size_t input) -> std::optional<size_t> {
    if (input >= node.inputs.size() || node.inputs[input] == ir::kNoValue) return std::nullopt;
    const auto& shape = graph.values[node.inputs[input]].type.shape;
    if (!shape) return std::nullopt;
    return shape->size();
  };
  // A rank the kernel needs: known and equal, or the node stays on the cpu.
  auto needs_rank = [&](size_t input, size_t rank, const char* what) -> std::string {
    std::optional<size_t> r = rank_of(input);
    if (!r) return std::string("the rank of input ") + std::to_string(input) + " is unknown at placement (" + what + ")";
    if (*r != rank) return what;
    return "";
  };
  const std::string& op = node.op_type;
  if (op == "Conv" || op == "ConvTranspose") {
    std::string r = needs_rank(0, 4, "only 2-D convolution");
    if (r.empty()) r = needs_rank(1, 4, "only 2-D convolution");
    return r;
  }
  if (op == "MaxPool" || op == "AveragePool") {
    std::string r = needs_rank(0, 4, "only 2-D pooling");
    if (!r.empty()) return r;
    if (op == "MaxPool" && node.attr_int("storage_order", 0) != 0) return "MaxPool storage_order";
    if (op == "AveragePool")
      for (int64_t d : node.attr_ints("dilations", {}))
        if (d != 1) return "dilated AveragePool";
    return "";
  }
  if (op == "Resize") {
    std::string r = needs_rank(0, 4, "only 4-D Resize");
    if (!r.empty()) return r;
    std::string coord = node.attr_string("coordinate_transformation_mode", "half_pixel");
    std::string nearest = node.attr_string("nearest_mode", "round_prefer_floor");
    if (!resize_coord_codes().count(coord)) return "Resize coordinate_transformation_mode '" + coord + "'";
    if (!resize_nearest_codes().count(nearest)) return "Resize nearest_mode '" + nearest + "'";
    return "";
  }
  return "";
}

}  // namespace

std::string device_unsupported_reason(const ir::Graph& graph, const ir::Node& node,
                                      const std::vector<bool>& host_input) {
  if (!node.domain.empty() && node.domain != "ai.onnx") return "domain '" + node.domain + "' has no GPU kernels";
  auto it = op_table().find(node.op_type);
  if (it == op_table().end()) return "op " + node.op_type + " has no GPU kernel";
  const OpInfo& info = it->second;
  if (node.opset < info.min_opset) return node.op_type + " before opset " + std::to_string(info.min_opset);
  for (int p : info.host_params)
    if (p < static_cast<int>(node.inputs.size()) && node.inputs[p] != ir::kNoValue && !host_input[p])
      return node.op_type + " input " + std::to_string(p) + " must be computed on the host (a constant or shape)";
  // Half-precision values count as float32 for the ops the executor computes
  // in float32 (it rewrites its copy of the graph so, see executor.cpp).
  const bool half_as_float = node.domain.empty() && ir::passes::half_in_float32_op(node.op_type);
  auto as_computed = [&](DType t) {
    return half_as_float && (t == DType::kFloat16 || t == DType::kBFloat16) ? DType::kFloat32 : t;
  };
  auto type_of = [&](ir::ValueId v) {
    return as_computed(v >= 0 && v < static_cast<ir::ValueId>(graph.values.size()) ? graph.values[v].type.dtype
                                                                                    : DType::kUndefined);
  };
  auto kind_of = [&](ir::ValueId v) {
    return v >= 0 && v < static_cast<ir::ValueId>(graph.values.size()) ? graph.values[v].type.kind : ir::ValueKind::kUnknown;
  };
  for (auto v : node.inputs)
    if (v != ir::kNoValue && kind_of(v) != ir::ValueKind::kTensor) return "sequence/optional values stay on the cpu";
  for (auto v : node.outputs)
    if (v != ir::kNoValue && kind_of(v) != ir::ValueKind::kTensor) return "sequence/optional values stay on the cpu";
  if (node.inputs.empty() || node.inputs[0] == ir::kNoValue) return "missing first input";
  DType t0 = type_of(node.inputs[0]);
  if (info.data == Data::kFloat) {
    if (t0 != DType::kFloat32) return std::string("GPU kernels take float32 here, not ") + dtype_name(t0);
    for (auto v : node.outputs)
      if (v != ir::kNoValue && type_of(v) != DType::kFloat32 && node.op_type.find("Equal") == std::string::npos &&
          node.op_type.find("Less") == std::string::npos && node.op_type.find("Greater") == std::string::npos &&
          node.op_type != "Dropout")
        return "float32 output expected";
    if (node.op_type == "PRelu" || binary_code(node.op_type) >= 0)
      for (auto v : node.inputs)
        if (v != ir::kNoValue && type_of(v) != DType::kFloat32) return "all inputs must be float32";
  } else if (info.data == Data::kAny) {
    size_t es = dtype_size(t0);
    if (t0 == DType::kUndefined || t0 == DType::kString || (es != 1 && es != 4 && es != 8))
      return std::string("element type ") + dtype_name(t0) + " not handled";
  }
  const std::string& op = node.op_type;
  if (op == "Gather" && dtype_size(t0) != 4 && dtype_size(t0) != 8) return "Gather of 1-byte elements";
  if (op == "Where") {
    if (type_of(node.inputs[0]) != DType::kBool || node.inputs.size() < 3 || type_of(node.inputs[1]) != DType::kFloat32 ||
        type_of(node.inputs[2]) != DType::kFloat32)
      return "Where needs a bool condition and float32 values";
  }
  if (op == "Cast") {
    DType to = as_computed(static_cast<DType>(node.attr_int("to", 0)));
    DType from = graph.values[node.inputs[0]].type.dtype;
    bool half_border = (to == DType::kFloat32 && (from == DType::kFloat16 || from == DType::kBFloat16)) ||
                       (from == DType::kFloat32 && (to == DType::kFloat16 || to == DType::kBFloat16));
    bool ok = t0 == to || half_border ||
              (to == DType::kFloat32 && (t0 == DType::kInt64 || t0 == DType::kInt32 || t0 == DType::kBool ||
                                         t0 == DType::kUInt8)) ||
              (to == DType::kBool && t0 == DType::kFloat32);
    if (!ok) return std::string("Cast ") + dtype_name(t0) + " -> " + dtype_name(to) + " has no GPU kernel";
  }
  if (op == "LayerNormalization")
    for (size_t i = 1; i < node.outputs.size(); ++i)
      if (node.outputs[i] != ir::kNoValue) return "LayerNormalization Mean/InvStdDev outputs";
  if (op == "MaxPool" && node.outputs.size() > 1 && node.outputs[1] != ir::kNoValue) return "MaxPool Indices output";
  if (op == "Dropout" && node.outputs.size() > 1 && node.outputs[1] != ir::kNoValue) return "Dropout mask output";
  if (op == "Resize") {
    std::string mode = node.attr_string("mode", "nearest");
    if (mode != "nearest" && mode != "linear") return "Resize mode '" + mode + "'";
    if (node.attr_string("coordinate_transformation_mode", "half_pixel") == "tf_crop_and_resize")
      return "Resize tf_crop_and_resize";
    if (node.attr_int("antialias", 0) != 0 || node.has_attr("axes")) return "Resize antialias/axes";
    if (node.attr_string("keep_aspect_ratio_policy", "stretch") != "stretch") return "Resize keep_aspect_ratio_policy";
  }
  if ((op == "Sum" || op == "Max" || op == "Min") && node.inputs.size() > 2) return op + " of more than two inputs";
  if (op == "Mod" && node.attr_int("fmod", 0) != 1) return "Mod without fmod=1";
  return static_shape_reason(graph, node);
}

bool epilogue_of(const ir::Node& node, const std::vector<const Tensor*>& host, Epilogue* epi) {
  static const std::map<std::string, bool> ok = {{"Relu", true}, {"Clip", true}, {"Sigmoid", true},
                                                 {"LeakyRelu", true}, {"HardSigmoid", true}, {"HardSwish", true},
                                                 {"Tanh", true}, {"Gelu", true}, {"Erf", false}};
  auto it = ok.find(node.op_type);
  if (it == ok.end() || !it->second || !node.domain.empty()) return false;
  auto u = unary_info(node, host);
  if (!u.ok()) return false;
  *epi = {u->act, u->a, u->b};
  return true;
}

Status lower_node(LowerCtx& c, const ir::Node& n, const Epilogue& epi, ir::ValueId out_override) {
  const std::string& op = n.op_type;
  ir::ValueId out = out0(n, out_override);
  if (op == "Gemm") return lower_gemm(c, n, epi, out);
  if (op == "MatMul") return lower_matmul(c, n, epi, out, ir::kNoValue);
  if (op == "Conv") return lower_conv(c, n, epi, out);
  if (op == "ConvTranspose") return lower_convtranspose(c, n, epi, out);
  auto it = op_table().find(op);
  if (it == op_table().end() || !it->second.lower) return unsup(n, "no GPU lowering");
  return it->second.lower(c, n);
}

Status lower_matmul_bias(LowerCtx& c, const ir::Node& n, ir::ValueId bias, ir::ValueId out, const Epilogue& epi) {
  return lower_matmul(c, n, epi, out, bias);
}

}  // namespace dlrt::gpu
