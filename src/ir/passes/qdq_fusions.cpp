// QDQ-format models -> integer (QOperator) ops, the way ONNX Runtime's CPU
// graph optimiser runs them (see passes.h, fuse_qdq, for the rules).
//
// A QDQ model wraps float ops in DequantizeLinear (DQ) / QuantizeLinear (Q)
// pairs: DQ(x), DQ(w), DQ(bias) -> Conv -> Q. Run literally that is a float
// Conv on dequantised values; ONNX Runtime instead runs one integer kernel per
// "DQ inputs -> op -> Q" group (QLinearConv, com.microsoft QLinearAdd, ...) and
// lets data-movement ops (Reshape, MaxPool, ...) work on the quantised values.
// Its results on such a model equal those on the QOperator-format model, and
// so do dlrt's after this pass.
//
// A DQ read by several nodes is treated as if each reader had its own copy
// (ONNX Runtime duplicates such DQs before matching): a group reads the DQ's
// quantised input directly and the DQ stays for its other readers.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>

#include "ir/passes/rewriter.h"

namespace dlrt::ir::passes {

namespace {

constexpr const char* kPass = "qdq";
constexpr const char* kMsDomain = "com.microsoft";

bool is_16bit(DType t) { return t == DType::kUInt16 || t == DType::kInt16; }

// One side of a quantisation: the scale and zero point a DQ reads its input
// with, or a Q writes its output with.
struct QParams {
  ValueId scale = kNoValue;
  ValueId zp = kNoValue;  // kNoValue: absent (zero of `type`)
  DType type = DType::kUndefined;
  int64_t axis = 1;
};

class QdqMatcher {
 public:
  QdqMatcher(Graph& g, PassContext& ctx) : g_(g), ctx_(ctx), rw_(g, ctx) {}

  Rewriter& rw() { return rw_; }

  DType dtype_of(ValueId v) const {
    if (v < 0) return DType::kUndefined;
    if (const Tensor* t = rw_.constant(v)) return t->dtype();
    return g_.values[v].type.dtype;
  }

  // The DequantizeLinear node producing v (per tensor or per axis, not
  // blocked), or -1.
  int dq_of(ValueId v) const {
    int p = rw_.producer(v);
    if (p < 0) return -1;
    const Node& n = g_.nodes[p];
    if (!is_op(n, "DequantizeLinear") || n.inputs.size() < 2 || n.outputs.size() != 1) return -1;
    if (n.attr_int("block_size", 0) != 0) return -1;
    return p;
  }

  // The QuantizeLinear node that is the only reader of node i's single
  // output (which must not be a graph output), or -1.
  int sole_q_after(ValueId out) const {
    const int c = out < 0 ? -1 : sole_consumer(rw_, out, "QuantizeLinear");
    if (c < 0) return -1;
    const Node& n = g_.nodes[c];
    if (n.inputs.size() < 2 || n.inputs[0] != out || n.outputs.size() != 1) return -1;
    if (n.attr_int("block_size", 0) != 0) return -1;
    return c;
  }

  QParams dq_params(int dq) const {
    const Node& n = g_.nodes[dq];
    QParams p;
    p.scale = n.inputs[1];
    p.zp = n.inputs.size() > 2 ? n.inputs[2] : kNoValue;
    p.type = dtype_of(n.inputs[0]);
    if (p.type == DType::kUndefined && p.zp != kNoValue) p.type = dtype_of(p.zp);
    p.axis = n.attr_int("axis", 1);
    return p;
  }

  QParams q_params(int q) const {
    const Node& n = g_.nodes[q];
    QParams p;
    p.scale = n.inputs[1];
    p.zp = n.inputs.size() > 2 ? n.inputs[2] : kNoValue;
    if (p.zp != kNoValue) p.type = dtype_of(p.zp);
    else if (n.opset >= 21 && n.attr_int("output_dtype", 0) != 0) p.type = g_.values[n.outputs[0]].type.dtype;
    else p.type = DType::kUInt8;
    p.axis = n.attr_int("axis", 1);
    return p;
  }

  // Constant float32 scale with one element, and a constant one-element zero
  // point of the quantised type (or none).
  bool scalar_params(const QParams& p) const {
    const Tensor* s = rw_.constant(p.scale);
    if (!s || s->size() != 1 || s->dtype() != DType::kFloat32) return false;
    if (p.zp == kNoValue) return true;
    const Tensor* z = rw_.constant(p.zp);
    return z && z->size() == 1 && z->dtype() == p.type;
  }
  // The same, with a positive scale (order-preserving quantisation).
  bool positive_scalar_params(const QParams& p) const {
    return scalar_params(p) && rw_.constant(p.scale)->data<float>()[0] > 0;
  }
  float scale_value(const QParams& p, int64_t i = 0) const {
    const Tensor* s = rw_.constant(p.scale);
    return s->data<float>()[s->size() == 1 ? 0 : i];
  }
  int64_t zp_value(const QParams& p, int64_t i = 0) const {
    if (p.zp == kNoValue) return 0;
    const Tensor* z = rw_.constant(p.zp);
    return static_cast<int64_t>(element_as_double(*z, z->size() == 1 ? 0 : i));
  }

  // Weight parameters: a constant float32 scale that is a scalar or has one
  // value per index of axis `axis` (of a weight of rank `rank` whose extent
  // there is `extent`), a zero point of the same shape (or none).
  bool channel_params(const QParams& p, int64_t axis, int64_t rank, int64_t extent) const {
    if (scalar_params(p)) return true;
    const Tensor* s = rw_.constant(p.scale);
    if (!s || s->dtype() != DType::kFloat32 || s->rank() != 1 || s->dim(0) != extent) return false;
    int64_t a = p.axis < 0 ? p.axis + rank : p.axis;
    if (a != axis) return false;
    if (p.zp == kNoValue) return true;
    const Tensor* z = rw_.constant(p.zp);
    return z && z->dtype() == p.type && z->shape() == s->shape();
  }

  // Same scale and zero point (values and types) on both sides: a DQ -> op ->
  // Q chain then moves quantised values unchanged.
  bool same_params(const QParams& a, const QParams& b) const {
    if (a.type != b.type || !scalar_params(a) || !scalar_params(b)) return false;
    // ONNX Runtime wants the zero points present on both sides.
    if (a.zp == kNoValue || b.zp == kNoValue) return false;
    return scale_value(a) == scale_value(b) && zp_value(a) == zp_value(b);
  }

  // The zero point input for a QLinear op: the model's, or a zero scalar.
  ValueId zp_input(const QParams& p) {
    if (p.zp != kNoValue) return p.zp;
    auto it = zeros_.find(p.type);
    if (it != zeros_.end()) return it->second;
    auto t = Tensor::allocate(p.type, {});
    ValueId v = rw_.new_constant(std::string("qdq_zero_point_") + dtype_name(p.type), std::move(t).value());
    zeros_[p.type] = v;
    return v;
  }

  // An int32 bias DQ whose scale is scale_x * scale_w (per output channel, M
  // channels) and zero point 0: the bias the integer kernels take as is.
  bool bias_matches(int dq_b, const QParams& x, const QParams& w, int64_t channels) const {
    QParams b = dq_params(dq_b);
    if (b.type != DType::kInt32) return false;
    const Tensor* bt = rw_.constant(g_.nodes[dq_b].inputs[0]);
    const Tensor* bs = rw_.constant(b.scale);
    const Tensor* ws = rw_.constant(w.scale);
    if (!bs || bs->dtype() != DType::kFloat32 || !ws) return false;
    if (bt && (bt->rank() != 1 || bt->dim(0) != channels)) return false;
    if (bs->size() != 1 && bs->size() != channels) return false;
    if (b.zp != kNoValue) {
      const Tensor* z = rw_.constant(b.zp);
      if (!z) return false;
      for (int64_t i = 0; i < z->size(); ++i)
        if (element_as_double(*z, i) != 0) return false;
    }
    const float xs = scale_value(x);
    for (int64_t m = 0; m < channels; ++m) {
      const float want = xs * ws->data<float>()[ws->size() == 1 ? 0 : m];
      const float got = bs->data<float>()[bs->size() == 1 ? 0 : m];
      if (!(std::abs(got - want) <= 1e-5f * std::abs(want))) return false;
    }
    return true;
  }

  // A Relu or Clip whose effect a following Q (positive scalar scale) already
  // has: every value it changes quantises to the type's limit anyway.
  bool clip_redundant(int c, const QParams& q) const {
    if (!positive_scalar_params(q) || (!is_8bit(q.type) && !is_16bit(q.type))) return false;
    double lo = 0, hi = 0;
    switch (q.type) {
      case DType::kUInt8: lo = 0, hi = 255; break;
      case DType::kInt8: lo = -128, hi = 127; break;
      case DType::kUInt16: lo = 0, hi = 65535; break;
      default: lo = -32768, hi = 32767; break;
    }
    const double zp = static_cast<double>(zp_value(q));
    const Node& n = g_.nodes[c];
    if (is_op(n, "Relu")) return zp == lo;
    if (!is_op(n, "Clip")) return false;
    double cmin = -std::numeric_limits<double>::infinity(), cmax = std::numeric_limits<double>::infinity();
    if (n.opset < 11) {
      cmin = n.attr_float("min", -std::numeric_limits<float>::max());
      cmax = n.attr_float("max", std::numeric_limits<float>::max());
    } else {
      if (n.inputs.size() > 1 && n.inputs[1] != kNoValue) {
        auto v = rw_.scalar(n.inputs[1]);
        if (!v) return false;
        cmin = *v;
      }
      if (n.inputs.size() > 2 && n.inputs[2] != kNoValue) {
        auto v = rw_.scalar(n.inputs[2]);
        if (!v) return false;
        cmax = *v;
      }
    }
    const double s = scale_value(q);
    const double qmin = std::nearbyint(static_cast<float>(cmin) / static_cast<float>(s)) + zp;
    const double qmax = std::nearbyint(static_cast<float>(cmax) / static_cast<float>(s)) + zp;
    return qmin <= lo && qmax >= hi;
  }

  Graph& g_;
  PassContext& ctx_;
  Rewriter rw_;
  std::map<DType, ValueId> zeros_;
};

// A group found around a target node: its DQ inputs (by input slot, -1 where
// the input is not dequantised) and the Q on its output (-1 when none).
struct Group {
  int target = -1;
  std::vector<int> dq;
  int q = -1;
};

Group collect(QdqMatcher& m, int t) {
  Group grp;
  grp.target = t;
  const Node& n = m.g_.nodes[t];
  for (ValueId in : n.inputs) grp.dq.push_back(in == kNoValue ? -1 : m.dq_of(in));
  if (n.outputs.size() == 1) grp.q = m.sole_q_after(n.outputs[0]);
  return grp;
}

// Every present input (the first `count`, or all) comes from a DQ.
bool all_dq(const Group& grp, const Node& n, size_t count = SIZE_MAX) {
  size_t k = 0;
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    if (n.inputs[i] == kNoValue) continue;
    if (grp.dq[i] < 0) return false;
    ++k;
  }
  return k > 0 && (count == SIZE_MAX || k == count);
}

std::string fused_name(const Node& target) { return target.name.empty() ? target.op_type + "_quant" : target.name + "_quant"; }

Node make_node(const Node& target, const std::string& op, const std::string& domain, int opset) {
  Node n;
  n.name = fused_name(target);
  n.op_type = op;
  n.domain = domain;
  n.opset = opset;
  return n;
}

// Replaces the group (target, Q) by `fused` at the Q's position (or the
// target's without a Q); the DQs stay for other readers until dead-node
// elimination.
void commit_group(QdqMatcher& m, const Group& grp, Node fused, int& fired) {
  Rewriter& rw = m.rw();
  log_fired(kPass, "fused " + m.g_.nodes[grp.target].describe() + " into " + fused.op_type);
  if (grp.q >= 0) {
    rw.remove(grp.target);
    rw.replace(grp.q, std::move(fused));
  } else {
    rw.replace(grp.target, std::move(fused));
  }
  ++fired;
}

bool fuse_conv(QdqMatcher& m, const Group& grp, int& fired) {
  const Node& conv = m.g_.nodes[grp.target];
  if (grp.q < 0 || conv.inputs.size() < 2 || !all_dq(grp, conv)) return false;
  if (!m.ctx_.can_run("QLinearConv", "", conv.opset)) return false;
  QParams x = m.dq_params(grp.dq[0]), w = m.dq_params(grp.dq[1]), y = m.q_params(grp.q);
  if (!is_8bit(x.type) || !is_8bit(w.type) || x.type != y.type) return false;
  if (x.type == DType::kInt8 && w.type != DType::kInt8) return false;
  if (!m.scalar_params(x) || !m.scalar_params(y)) return false;
  const Tensor* wt = m.rw().constant(m.g_.nodes[grp.dq[1]].inputs[0]);
  if (!wt || wt->rank() < 3) return false;
  const int64_t channels = wt->dim(0);
  if (!m.channel_params(w, 0, static_cast<int64_t>(wt->rank()), channels)) return false;
  const bool has_bias = conv.inputs.size() > 2 && conv.inputs[2] != kNoValue;
  if (has_bias && !m.bias_matches(grp.dq[2], x, w, channels)) return false;
  Node f = make_node(conv, "QLinearConv", "", conv.opset);
  const Node &dx = m.g_.nodes[grp.dq[0]], &dw = m.g_.nodes[grp.dq[1]], &q = m.g_.nodes[grp.q];
  f.inputs = {dx.inputs[0], x.scale, m.zp_input(x), dw.inputs[0], w.scale, m.zp_input(w), y.scale, m.zp_input(y)};
  if (has_bias) f.inputs.push_back(m.g_.nodes[grp.dq[2]].inputs[0]);
  f.outputs = q.outputs;
  f.attributes = conv.attributes;
  commit_group(m, grp, std::move(f), fired);
  return true;
}

bool fuse_matmul(QdqMatcher& m, const Group& grp, int& fired) {
  const Node& mm = m.g_.nodes[grp.target];
  // Without a Q ONNX Runtime's CPU optimiser leaves the group (no
  // MatMulIntegerToFloat by default).
  if (grp.q < 0 || mm.inputs.size() != 2 || !all_dq(grp, mm, 2)) return false;
  if (!m.ctx_.can_run("QLinearMatMul", "", mm.opset)) return false;
  QParams a = m.dq_params(grp.dq[0]), b = m.dq_params(grp.dq[1]), y = m.q_params(grp.q);
  if (!is_8bit(a.type) || !is_8bit(b.type) || a.type != y.type) return false;
  if (a.type == DType::kInt8 && b.type != DType::kInt8) return false;
  if (!m.scalar_params(a) || !m.scalar_params(y)) return false;
  if (!m.scalar_params(b)) {
    // Per-column scales of a constant 2-D B.
    const Tensor* bt = m.rw().constant(m.g_.nodes[grp.dq[1]].inputs[0]);
    if (!bt || bt->rank() != 2 || !m.channel_params(b, 1, 2, bt->dim(1))) return false;
  }
  Node f = make_node(mm, "QLinearMatMul", "", mm.opset);
  const Node &da = m.g_.nodes[grp.dq[0]], &db = m.g_.nodes[grp.dq[1]], &q = m.g_.nodes[grp.q];
  f.inputs = {da.inputs[0], a.scale, m.zp_input(a), db.inputs[0], b.scale, m.zp_input(b), y.scale, m.zp_input(y)};
  f.outputs = q.outputs;
  commit_group(m, grp, std::move(f), fired);
  return true;
}

bool fuse_gemm(QdqMatcher& m, const Group& grp, int& fired) {
  const Node& gm = m.g_.nodes[grp.target];
  if (gm.inputs.size() < 2 || !all_dq(grp, gm)) return false;
  if (!m.ctx_.can_run("QGemm", kMsDomain, 1)) return false;
  // With a Q, it must be the output's only reader; without one the output
  // stays float.
  const ValueId out = gm.outputs.size() == 1 ? gm.outputs[0] : kNoValue;
  if (grp.q < 0) {
    for (int c : m.rw().consumers(out))
      if (is_op(m.g_.nodes[c], "QuantizeLinear")) return false;
  }
  QParams a = m.dq_params(grp.dq[0]), b = m.dq_params(grp.dq[1]);
  if (!is_8bit(a.type) || !is_8bit(b.type)) return false;
  if (a.type == DType::kInt8 && b.type != DType::kInt8) return false;
  QParams y;
  if (grp.q >= 0) {
    y = m.q_params(grp.q);
    if (y.type != a.type || !m.scalar_params(y)) return false;
  }
  if (!m.scalar_params(a)) return false;
  const Tensor* bt = m.rw().constant(m.g_.nodes[grp.dq[1]].inputs[0]);
  if (!bt || bt->rank() != 2) return false;
  const bool trans_b = gm.attr_int("transB", 0) != 0;
  const int64_t n_axis = trans_b ? 0 : 1;
  if (!m.channel_params(b, n_axis, 2, bt->dim(n_axis))) return false;
  const bool has_bias = gm.inputs.size() > 2 && gm.inputs[2] != kNoValue;
  if (has_bias) {
    if (gm.attr_float("beta", 1.0f) != 1.0f) return false;
    if (!m.bias_matches(grp.dq[2], a, b, bt->dim(n_axis))) return false;
  }
  m.g_.opsets.emplace(kMsDomain, 1);
  Node f = make_node(gm, "QGemm", kMsDomain, 1);
  const Node &da = m.g_.nodes[grp.dq[0]], &db = m.g_.nodes[grp.dq[1]];
  f.inputs = {da.inputs[0], a.scale, m.zp_input(a), db.inputs[0], b.scale, m.zp_input(b),
              has_bias ? m.g_.nodes[grp.dq[2]].inputs[0] : kNoValue};
  if (grp.q >= 0) {
    f.inputs.push_back(y.scale);
    f.inputs.push_back(m.zp_input(y));
    f.outputs = m.g_.nodes[grp.q].outputs;
  } else {
    f.outputs = gm.outputs;
  }
  for (const char* k : {"alpha", "transA", "transB"})
    if (const Attribute* at = gm.attr(k)) f.attributes[k] = *at;
  commit_group(m, grp, std::move(f), fired);
  return true;
}

// Two-input elementwise ops -> com.microsoft QLinearAdd / QLinearMul.
bool fuse_binary(QdqMatcher& m, const Group& grp, int& fired) {
  const Node& t = m.g_.nodes[grp.target];
  const std::string op = "QLinear" + t.op_type;
  if (grp.q < 0 || t.inputs.size() != 2 || !all_dq(grp, t, 2)) return false;
  if (!m.ctx_.can_run(op, kMsDomain, 1)) return false;
  QParams a = m.dq_params(grp.dq[0]), b = m.dq_params(grp.dq[1]), y = m.q_params(grp.q);
  if (!is_8bit(a.type) || a.type != b.type || a.type != y.type) return false;
  if (!m.scalar_params(a) || !m.scalar_params(b) || !m.scalar_params(y)) return false;
  m.g_.opsets.emplace(kMsDomain, 1);
  Node f = make_node(t, op, kMsDomain, 1);
  const Node &da = m.g_.nodes[grp.dq[0]], &db = m.g_.nodes[grp.dq[1]];
  f.inputs = {da.inputs[0], a.scale, m.zp_input(a), db.inputs[0], b.scale, m.zp_input(b), y.scale, m.zp_input(y)};
  f.outputs = m.g_.nodes[grp.q].outputs;
  commit_group(m, grp, std::move(f), fired);
  return true;
}

// One-input ops -> com.microsoft QLinear<op> (X, X_scale, X_zp, Y_scale, Y_zp).
bool fuse_unary(QdqMatcher& m, const Group& grp, int& fired) {
  const Node& t = m.g_.nodes[grp.target];
  const std::string op = "QLinear" + t.op_type;
  if (grp.q < 0 || t.inputs.size() != 1 || !all_dq(grp, t, 1)) return false;
  if (!m.ctx_.can_run(op, kMsDomain, 1)) return false;
  QParams x = m.dq_params(grp.dq[0]), y = m.q_params(grp.q);
  if (!is_8bit(x.type) || x.type != y.type || !m.scalar_params(x) || !m.scalar_params(y)) return false;
  m.g_.opsets.emplace(kMsDomain, 1);
  Node f = make_node(t, op, kMsDomain, 1);
  f.inputs = {m.g_.nodes[grp.dq[0]].inputs[0], x.scale, m.zp_input(x), y.scale, m.zp_input(y)};
  f.outputs = m.g_.nodes[grp.q].outputs;
  f.attributes = t.attributes;
  // QLinearSoftmax follows the axis rules of the Softmax version it replaces.
  if (t.op_type == "Softmax") f.attributes["opset"] = make_attr_int(t.opset >= 13 ? 13 : t.opset >= 11 ? 11 : 1);
  commit_group(m, grp, std::move(f), fired);
  return true;
}

// Concat -> com.microsoft QLinearConcat (Y_scale, Y_zp, then X, X_scale, X_zp per input).
bool fuse_concat(QdqMatcher& m, const Group& grp, int& fired) {
  const Node& t = m.g_.nodes[grp.target];
  if (grp.q < 0 || t.inputs.empty() || !all_dq(grp, t)) return false;
  if (!m.ctx_.can_run("QLinearConcat", kMsDomain, 1)) return false;
  QParams y = m.q_params(grp.q);
  if (!is_8bit(y.type) || !m.scalar_params(y)) return false;
  std::vector<QParams> xs;
  for (size_t i = 0; i < t.inputs.size(); ++i) {
    if (t.inputs[i] == kNoValue) return false;
    xs.push_back(m.dq_params(grp.dq[i]));
    if (xs.back().type != y.type || !m.scalar_params(xs.back())) return false;
  }
  m.g_.opsets.emplace(kMsDomain, 1);
  Node f = make_node(t, "QLinearConcat", kMsDomain, 1);
  f.inputs = {y.scale, m.zp_input(y)};
  for (size_t i = 0; i < t.inputs.size(); ++i) {
    f.inputs.push_back(m.g_.nodes[grp.dq[i]].inputs[0]);
    f.inputs.push_back(xs[i].scale);
    f.inputs.push_back(m.zp_input(xs[i]));
  }
  f.outputs = m.g_.nodes[grp.q].outputs;
  f.attributes = t.attributes;
  commit_group(m, grp, std::move(f), fired);
  return true;
}

// DQ -> op -> Q with equal parameters around an op that only moves or
// selects values: the op runs on the quantised values.
bool drop_qdq(QdqMatcher& m, const Group& grp, bool allow_16bit, bool positive_scale, int& fired) {
  const Node& t = m.g_.nodes[grp.target];
  if (grp.q < 0 || t.inputs.empty() || t.outputs.size() != 1 || grp.dq[0] < 0) return false;
  for (size_t i = 1; i < t.inputs.size(); ++i)
    if (grp.dq[i] >= 0) return false;  // exactly one dequantised input, the data
  QParams x = m.dq_params(grp.dq[0]), y = m.q_params(grp.q);
  if (!(is_8bit(x.type) || (allow_16bit && is_16bit(x.type)))) return false;
  if (!m.same_params(x, y)) return false;
  if (positive_scale && !m.positive_scalar_params(y)) return false;
  Node f = t;
  f.inputs[0] = m.g_.nodes[grp.dq[0]].inputs[0];
  f.outputs = m.g_.nodes[grp.q].outputs;
  log_fired(kPass, "dropped DQ/Q around " + t.describe());
  Rewriter& rw = m.rw();
  rw.remove(grp.target);
  rw.replace(grp.q, std::move(f));
  ++fired;
  return true;
}

// DQ -> Split -> one Q per output, every Q with the DQ's parameters: the
// Split runs on the quantised values.
bool drop_split_qdq(QdqMatcher& m, const Group& grp, int& fired) {
  const Node& t = m.g_.nodes[grp.target];
  if (t.inputs.empty() || grp.dq[0] < 0 || t.outputs.empty()) return false;
  for (size_t i = 1; i < t.inputs.size(); ++i)
    if (grp.dq[i] >= 0) return false;
  QParams x = m.dq_params(grp.dq[0]);
  if (!is_8bit(x.type) && !is_16bit(x.type)) return false;
  std::vector<int> qs;
  for (ValueId o : t.outputs) {
    int q = o == kNoValue ? -1 : m.sole_q_after(o);
    if (q < 0 || !m.same_params(x, m.q_params(q))) return false;
    qs.push_back(q);
  }
  Node f = t;
  f.inputs[0] = m.g_.nodes[grp.dq[0]].inputs[0];
  for (size_t k = 0; k < qs.size(); ++k) f.outputs[k] = m.g_.nodes[qs[k]].outputs[0];
  log_fired(kPass, "dropped DQ/Q around " + t.describe());
  Rewriter& rw = m.rw();
  for (int q : qs) rw.remove(q);
  rw.replace(grp.target, std::move(f));
  ++fired;
  return true;
}

// DQ -> ArgMax: the index of the largest value is the same on the quantised
// values when the scale is positive.
bool drop_dq(QdqMatcher& m, const Group& grp, int& fired) {
  const Node& t = m.g_.nodes[grp.target];
  if (t.inputs.size() != 1 || grp.dq[0] < 0) return false;
  QParams x = m.dq_params(grp.dq[0]);
  if (!is_8bit(x.type) || !m.positive_scalar_params(x)) return false;
  Node f = t;
  f.inputs[0] = m.g_.nodes[grp.dq[0]].inputs[0];
  log_fired(kPass, "dropped DQ before " + t.describe());
  m.rw().replace(grp.target, std::move(f));
  ++fired;
  return true;
}

// Relu / Clip -> Q where the Q's range already clips: the Q reads the
// Relu's / Clip's input.
int drop_redundant_clips(QdqMatcher& m) {
  Rewriter& rw = m.rw();
  int fired = 0;
  for (int i = 0; i < rw.size(); ++i) {
    if (rw.dead(i)) continue;
    const Node& n = rw.node(i);
    if (!is_op(n, "Relu") && !is_op(n, "Clip")) continue;
    if (n.inputs.empty() || n.outputs.size() != 1) continue;
    int q = m.sole_q_after(n.outputs[0]);
    if (q < 0 || !m.clip_redundant(i, m.q_params(q))) continue;
    log_fired(kPass, "removed " + n.describe() + " before a QuantizeLinear that clips the same");
    ValueId in = n.inputs[0];
    if (!rw.replace_uses(n.outputs[0], in)) continue;
    rw.remove(i);
    ++fired;
  }
  return fired;
}

bool resize_nearest(const Node& n) { return n.attr_string("mode", "nearest") == "nearest"; }

}  // namespace

int fuse_qdq(Graph& g, PassContext& ctx) {
  int fired = 0;
  {
    QdqMatcher m(g, ctx);
    fired += drop_redundant_clips(m);
    m.rw().commit();
  }
  QdqMatcher m(g, ctx);
  Rewriter& rw = m.rw();
  const int count = rw.size();
  for (int i = 0; i < count; ++i) {
    if (rw.dead(i)) continue;
    const Node& n = rw.node(i);
    if (!n.domain.empty()) continue;
    const std::string& op = n.op_type;
    if (op == "QuantizeLinear" || op == "DequantizeLinear") continue;
    Group grp = collect(m, i);
    bool any_dq = false;
    for (int d : grp.dq) any_dq = any_dq || d >= 0;
    if (!any_dq) continue;
    if (op == "Conv") fuse_conv(m, grp, fired);
    else if (op == "MatMul") fuse_matmul(m, grp, fired);
    else if (op == "Gemm") fuse_gemm(m, grp, fired);
    else if (op == "Add" || op == "Mul") fuse_binary(m, grp, fired);
    else if (op == "AveragePool" || op == "GlobalAveragePool" || op == "LeakyRelu" || op == "Sigmoid" ||
             op == "Softmax")
      fuse_unary(m, grp, fired);
    else if (op == "Concat") fuse_concat(m, grp, fired);
    else if (op == "Expand" || op == "Flatten" || op == "Gather" || op == "GatherElements" || op == "Reshape" ||
             op == "Slice" || op == "Squeeze" || op == "Tile" || op == "Transpose" || op == "Unsqueeze")
      drop_qdq(m, grp, true, false, fired);
    else if ((op == "MaxPool" && n.opset >= 12 && n.outputs.size() == 1) || op == "ReduceMax" || op == "ReduceMin")
      drop_qdq(m, grp, false, true, fired);
    else if (op == "Resize" && resize_nearest(n))
      drop_qdq(m, grp, false, false, fired);
    else if (op == "Split")
      drop_split_qdq(m, grp, fired);
    else if (op == "ArgMax")
      drop_dq(m, grp, fired);
  }
  // DQs (and the zero constants) nobody reads any more go.
  for (int i = rw.size() - 1; i >= 0; --i) {
    if (rw.dead(i) || !is_op(rw.node(i), "DequantizeLinear")) continue;
    ValueId o = rw.node(i).outputs[0];
    if (o >= 0 && rw.consumers(o).empty() && !rw.escapes(o)) rw.remove(i);
  }
  rw.commit();
  ctx.count(kPass, fired);
  return fired;
}

}  // namespace dlrt::ir::passes
