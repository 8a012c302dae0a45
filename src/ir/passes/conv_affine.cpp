// Per-output-channel affine ops folded into the conv before them
// (passes.h: fold_conv_affine, fold_conv_batchnorm).
#include <cmath>
#include <optional>
#include <vector>

#include "ir/passes/rewriter.h"

namespace dlrt::ir::passes {
namespace {

// Conv / ConvTranspose with a constant float32 W of rank >= 3 and a constant
// float32 B (or none), one output: its output channel count, else -1.
int64_t foldable_conv(const Rewriter& rw, const Node& n) {
  const bool transpose = is_op(n, "ConvTranspose");
  if ((!is_op(n, "Conv") && !transpose) || n.inputs.size() < 2 || n.outputs.size() != 1) return -1;
  const Tensor* w = rw.constant(n.inputs[1]);
  if (!w || w->dtype() != DType::kFloat32 || w->rank() < 3) return -1;
  const int64_t group = n.attr_int("group", 1);
  if (group < 1 || w->dim(0) % group != 0) return -1;
  const int64_t m = transpose ? w->dim(1) * group : w->dim(0);
  if (n.inputs.size() > 2 && n.inputs[2] != kNoValue) {
    const Tensor* b = rw.constant(n.inputs[2]);
    if (!b || b->dtype() != DType::kFloat32 || b->size() != m) return -1;
  }
  return m;
}

// The per-channel values of a constant c that, broadcast against a conv
// output of rank `rank` with m channels, varies along the channel axis only
// (a scalar, [1], [m, 1, 1], [1, m, 1, 1], ...): m values, else nullopt.
std::optional<std::vector<double>> per_channel(const Tensor* c, int64_t rank, int64_t m) {
  if (!c || c->dtype() != DType::kFloat32 || c->rank() > rank) return std::nullopt;
  const int64_t channel_axis = 1 - (rank - c->rank());  // the conv's axis 1 in c's dims
  for (int64_t k = 0; k < c->rank(); ++k)
    if (c->dim(k) != 1 && !(k == channel_axis && c->dim(k) == m)) return std::nullopt;
  std::vector<double> v(static_cast<size_t>(m));
  const bool scalar = c->size() == 1;
  for (int64_t o = 0; o < m; ++o) {
    v[o] = element_as_double(*c, scalar ? 0 : o);
    if (!std::isfinite(v[o])) return std::nullopt;  // inf * 0 weights would not match (conv * inf)
  }
  return v;
}

// conv' = conv * scale + shift per output channel (scale or shift may be empty).
Result<Node> scaled_conv(Rewriter& rw, const Node& conv, const std::vector<double>& scale,
                         const std::vector<double>& shift, ValueId out) {
  const bool transpose = is_op(conv, "ConvTranspose");
  const Tensor& w = *rw.constant(conv.inputs[1]);
  const bool has_b = conv.inputs.size() > 2 && conv.inputs[2] != kNoValue;
  const Tensor* b = has_b ? rw.constant(conv.inputs[2]) : nullptr;
  const int64_t m = static_cast<int64_t>(scale.empty() ? shift.size() : scale.size());
  // Both tensors are made before new_constant, which may move the graph's constants.
  std::optional<Tensor> nw, nb;
  if (!scale.empty()) {
    DLRT_ASSIGN_OR_RETURN(nw, Tensor::allocate(DType::kFloat32, w.shape()));
    const float* src = w.data<float>();
    float* dst = nw->data<float>();
    if (!transpose) {  // [M, C/group, k...]: row o belongs to channel o
      const int64_t per = w.size() / m;
      for (int64_t o = 0; o < m; ++o)
        for (int64_t k = 0; k < per; ++k) dst[o * per + k] = static_cast<float>(src[o * per + k] * scale[o]);
    } else {  // [C, M/group, k...]: input channel ci of group g feeds channels g * M/group + j
      const int64_t group = conv.attr_int("group", 1), mg = w.dim(1), cin = w.dim(0), cg = cin / group;
      const int64_t per = w.size() / (cin * mg);
      for (int64_t ci = 0; ci < cin; ++ci)
        for (int64_t j = 0; j < mg; ++j) {
          const double f = scale[(ci / cg) * mg + j];
          const int64_t base = (ci * mg + j) * per;
          for (int64_t k = 0; k < per; ++k) dst[base + k] = static_cast<float>(src[base + k] * f);
        }
    }
  }
  if (b || !shift.empty()) {
    DLRT_ASSIGN_OR_RETURN(nb, Tensor::allocate(DType::kFloat32, {m}));
    for (int64_t o = 0; o < m; ++o) {
      double v = b ? b->data<float>()[o] : 0.0;
      if (!scale.empty()) v *= scale[o];
      if (!shift.empty()) v += shift[o];
      nb->data<float>()[o] = static_cast<float>(v);
    }
  }
  Node fused = conv;
  fused.outputs = {out};
  if (nw) fused.inputs[1] = rw.new_constant(conv.name + "_affine_W", std::move(*nw));
  if (nb) {
    fused.inputs.resize(3, kNoValue);
    fused.inputs[2] = rw.new_constant(conv.name + "_affine_B", std::move(*nb));
  }
  return fused;
}

}  // namespace

int fold_conv_affine(Graph& g, PassContext& ctx) {
  Rewriter rw(g, ctx);
  int fired = 0;
  for (int i = 0; i < rw.size(); ++i) {
    if (rw.dead(i)) continue;
    const Node& n = rw.node(i);
    const bool mul = is_op(n, "Mul"), add = is_op(n, "Add"), sub = is_op(n, "Sub");
    if ((!mul && !add && !sub) || n.inputs.size() != 2 || n.outputs.size() != 1) continue;
    if (ctx.keeps_rounding(n.outputs[0])) continue;  // folded weights round differently
    for (int side = 0; side < 2; ++side) {
      const ValueId y = n.inputs[side], other = n.inputs[1 - side];
      if (sub && side == 1) break;  // c - conv: not an affine of the conv's channels alone
      if (y == kNoValue || y == other || !rw.single_use(y)) continue;
      const int c = rw.producer(y);
      if (c < 0) continue;
      const Node conv = rw.node(c);
      const int64_t m = foldable_conv(rw, conv);
      if (m < 0) continue;
      const int64_t rank = rw.constant(conv.inputs[1])->rank();
      auto v = per_channel(rw.constant(other), rank, m);
      if (!v) continue;
      if (sub)
        for (double& x : *v) x = -x;
      auto fused = mul ? scaled_conv(rw, conv, *v, {}, n.outputs[0]) : scaled_conv(rw, conv, {}, *v, n.outputs[0]);
      if (!fused.ok()) break;
      log_fired("conv-affine", "folded " + n.describe() + " into " + conv.describe());
      rw.remove(c);
      rw.replace(i, std::move(fused).value());
      ++fired;
      break;
    }
  }
  rw.commit();
  ctx.count("conv-affine", fired);
  return fired;
}

int fold_conv_batchnorm(Graph& g, PassContext& ctx) {
  Rewriter rw(g, ctx);
  int fired = 0;
  for (int i = 0; i < rw.size(); ++i) {
    if (rw.dead(i) || !is_op(rw.node(i), "BatchNormalization")) continue;
    const Node bn = rw.node(i);
    if (!inference_batchnorm(bn) || ctx.keeps_rounding(bn.outputs[0])) continue;
    const int c = rw.producer(bn.inputs[0]);
    if (c < 0 || !rw.single_use(bn.inputs[0])) continue;
    const Node conv = rw.node(c);
    const int64_t m = foldable_conv(rw, conv);  // -1 for anything but a Conv / ConvTranspose
    if (m < 0) continue;
    const Tensor *scale = rw.constant(bn.inputs[1]), *bias = rw.constant(bn.inputs[2]),
                 *mean = rw.constant(bn.inputs[3]), *var = rw.constant(bn.inputs[4]);
    bool ok = true;
    for (const Tensor* t : {scale, bias, mean, var}) ok = ok && t && t->size() == m;  // any float type
    if (!ok) continue;
    const double eps = bn.attr_float("epsilon", 1e-5f);
    std::vector<double> f(static_cast<size_t>(m)), t(static_cast<size_t>(m));
    for (int64_t o = 0; o < m; ++o) {
      f[o] = element_as_double(*scale, o) / std::sqrt(element_as_double(*var, o) + eps);
      t[o] = element_as_double(*bias, o) - element_as_double(*mean, o) * f[o];
    }
    auto fused = scaled_conv(rw, conv, f, t, bn.outputs[0]);
    if (!fused.ok()) continue;
    log_fired("conv-bn", "folded " + bn.describe() + " into " + conv.describe());
    rw.remove(c);
    rw.replace(i, std::move(fused).value());
    ++fired;
  }
  rw.commit();
  ctx.count("conv-bn", fired);
  return fired;
}

}  // namespace dlrt::ir::passes
