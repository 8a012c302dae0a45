// Fusions into ops only the CPU backend runs: Gelu (opset 20), com.dlrt
// Attention, FusedMatMul, FusedGemm, FusedConv, FusedExpandDepthwise.
#include <algorithm>
#include <cmath>

#include "ir/passes/rewriter.h"

namespace dlrt::ir::passes {

namespace {

// Transpose perm of node p, if it is a Transpose with an explicit perm.
// A Clip's bounds: attributes before opset 11, constant scalar inputs from
// it on (absent: unbounded); nullopt when an input bound is not a constant.
std::optional<std::pair<float, float>> clip_bounds(Rewriter& rw, const Node& n) {
  float lo = -INFINITY, hi = INFINITY;
  if (n.opset < 11) {
    lo = n.attr_float("min", -3.4028234663852886e+38f);
    hi = n.attr_float("max", 3.4028234663852886e+38f);
    return std::make_pair(lo, hi);
  }
  if (n.inputs.size() > 1 && n.inputs[1] != kNoValue) {
    auto c = rw.scalar(n.inputs[1]);
    if (!c) return std::nullopt;
    lo = static_cast<float>(*c);
  }
  if (n.inputs.size() > 2 && n.inputs[2] != kNoValue) {
    auto c = rw.scalar(n.inputs[2]);
    if (!c) return std::nullopt;
    hi = static_cast<float>(*c);
  }
  return std::make_pair(lo, hi);
}

std::optional<std::vector<int64_t>> perm_of(Rewriter& rw, int p) {
  if (p < 0 || !is_op(rw.node(p), "Transpose") || !rw.node(p).has_attr("perm")) return std::nullopt;
  return rw.node(p).attr_ints("perm");
}

}  // namespace

int fuse_gelu(Graph& g, PassContext& ctx) {
  if (!ctx.can_run("Gelu", "", 20)) return 0;
  Rewriter rw(g, ctx);
  int fired = 0;
  for (int e = 0; e < rw.size(); ++e) {
    if (rw.dead(e) || !is_op(rw.node(e), "Erf")) continue;
    // u = x / sqrt(2) or x * (1 / sqrt(2))
    ValueId u = rw.node(e).inputs[0];
    int pu = rw.producer(u);
    if (pu < 0 || !rw.single_use(u) || rw.node(pu).inputs.size() != 2) continue;
    const Node& un = rw.node(pu);
    ValueId x = kNoValue;
    if (is_op(un, "Div")) {
      auto c = rw.scalar(un.inputs[1]);
      if (c && near(*c, std::sqrt(2.0))) x = un.inputs[0];
    } else if (is_op(un, "Mul")) {
      for (int k = 0; k < 2 && x == kNoValue; ++k) {
        auto c = rw.scalar(un.inputs[k]);
        if (c && near(*c, std::sqrt(0.5))) x = un.inputs[1 - k];
      }
    }
    if (x == kNoValue || !is_float32(g, x)) continue;
    int add = sole_consumer(rw, rw.node(e).outputs[0], "Add");
    if (add < 0) continue;
    auto one = rw.scalar(other_input(rw.node(add), rw.node(e).outputs[0]));
    if (!one || *one != 1.0) continue;
    ValueId a = rw.node(add).outputs[0];
    int m = sole_consumer(rw, a, "Mul");
    if (m < 0) continue;
    ValueId o = other_input(rw.node(m), a);
    std::vector<int> chain = {pu, e, add, m};
    int last = -1;
    auto half = rw.scalar(o);
    if (o == x) {  // (x * a) * 0.5
      int m2 = sole_consumer(rw, rw.node(m).outputs[0], "Mul");
      if (m2 < 0) continue;
      auto h = rw.scalar(other_input(rw.node(m2), rw.node(m).outputs[0]));
      if (!h || !near(*h, 0.5)) continue;
      chain.push_back(m2);
      last = m2;
    } else if (half && near(*half, 0.5)) {  // x * (a * 0.5)
      int m2 = sole_consumer(rw, rw.node(m).outputs[0], "Mul");
      if (m2 < 0 || other_input(rw.node(m2), rw.node(m).outputs[0]) != x) continue;
      chain.push_back(m2);
      last = m2;
    } else if (int ph = rw.producer_op(o, "Mul"); ph >= 0 && rw.single_use(o)) {  // (x * 0.5) * a
      ValueId hv = other_input(rw.node(ph), x);
      auto h = rw.scalar(hv);
      if (hv == kNoValue || !h || !near(*h, 0.5)) continue;
      chain.push_back(ph);
      last = m;
    } else {
      continue;
    }
    if (ctx.keeps_rounding(rw.node(last).outputs[0])) continue;  // Gelu's erf rounds differently
    Node gelu;
    gelu.name = rw.node(e).name + "_gelu";
    gelu.op_type = "Gelu";
    gelu.opset = 20;
    gelu.inputs = {x};
    gelu.outputs = {rw.node(last).outputs[0]};
    gelu.attributes["approximate"] = make_attr_string("none");
    log_fired("gelu", "fused " + std::to_string(chain.size()) + " nodes around " + rw.node(e).describe());
    for (int k : chain)
      if (k != last) rw.remove(k);
    rw.replace(last, std::move(gelu));
    ++fired;
  }
  rw.commit();
  ctx.count("gelu", fired);
  return fired;
}

namespace {

// Where Q, K or V comes from: the tensor the kernel reads and its layout.
struct Source {
  ValueId value = kNoValue;
  std::string layout;      // "bshd", "bhsd", "bhds" (K only: already transposed)
  std::vector<int> nodes;  // nodes absorbed into the fusion
  int64_t packed_index = -1;  // >= 0: value is a packed [B,S,3,H,D] tensor
  ValueId packed = kNoValue;
};

// A [B,H,S,D] operand (`kt` false) or Kᵀ [B,H,D,S] (`kt` true) read through
// the Transposes / packed-QKV Gather in front of it.
std::optional<Source> trace_operand(Rewriter& rw, ValueId v, bool kt) {
  Source s;
  int p = rw.producer(v);
  auto perm = perm_of(rw, p);
  if (perm && perm->size() == 4 && rw.single_use(v)) {
    const std::vector<int64_t>& q = *perm;
    ValueId in = rw.node(p).inputs[0];
    if (!kt && q == std::vector<int64_t>{0, 2, 1, 3}) return Source{in, "bshd", {p}};
    if (kt && q == std::vector<int64_t>{0, 2, 3, 1}) return Source{in, "bshd", {p}};
    if (kt && q == std::vector<int64_t>{0, 1, 3, 2}) {
      // Kᵀ of a [B,H,S,D] tensor: trace that one further.
      auto inner = trace_operand(rw, in, false);
      if (inner) {
        inner->nodes.push_back(p);
        return inner;
      }
      return Source{in, "bhsd", {p}};
    }
    return std::nullopt;
  }
  // Packed QKV: Gather(Transpose(x5, [2,0,3,1,4]), i, axis 0) with x5 [B,S,3,H,D].
  if (int gth = rw.producer_op(v, "Gather"); gth >= 0 && rw.single_use(v) && !kt) {
    const Node& gn = rw.node(gth);
    auto idx = rw.scalar(gn.inputs[1]);
    const Tensor* it = rw.constant(gn.inputs[1]);
    if (gn.attr_int("axis", 0) == 0 && idx && it && it->rank() == 0 && *idx >= 0 && *idx < 3) {
      int tp = rw.producer(gn.inputs[0]);
      auto tperm = perm_of(rw, tp);
      if (tperm && *tperm == std::vector<int64_t>{2, 0, 3, 1, 4}) {
        Source r;
        r.value = rw.node(tp).inputs[0];
        r.layout = "packed";
        r.nodes = {gth};
        r.packed_index = static_cast<int64_t>(*idx);
        r.packed = gn.inputs[0];
        return r;
      }
    }
  }
  // Plain operand, no layout change known: only with a known rank 4.
  const auto& shape = rw.graph().values[v].type.shape;
  if (shape && shape->size() == 4) return Source{v, kt ? "bhds" : "bhsd", {}};
  return std::nullopt;
}

// The MatMul reading Softmax output `probs` as its first input, directly or
// through the NaN guard exporters put after a masked softmax,
// Where(IsNaN(probs), 0, probs) (then `guarded`, and the IsNaN and the Where
// appended to `nodes`); -1 when neither.
int probs_reader(Rewriter& rw, ValueId probs, std::vector<int>& nodes, bool& guarded) {
  guarded = false;
  if (int mm = sole_consumer(rw, probs, "MatMul"); mm >= 0) return rw.node(mm).inputs[0] == probs ? mm : -1;
  const std::vector<int> users = rw.consumers(probs);
  if (users.size() != 2 || rw.escapes(probs)) return -1;
  int nan = -1, where = -1;
  for (int u : users) {
    if (is_op(rw.node(u), "IsNaN")) nan = u;
    else if (is_op(rw.node(u), "Where")) where = u;
  }
  if (nan < 0 || where < 0) return -1;
  const Node& w = rw.node(where);
  if (w.inputs.size() != 3 || w.inputs[0] != rw.node(nan).outputs[0] || w.inputs[2] != probs ||
      !rw.single_use(w.inputs[0]))
    return -1;
  // A zero of at most the scores' rank, so the Where's output is the probabilities' shape.
  const Tensor* zero = rw.constant(w.inputs[1]);
  if (!zero || rw.scalar(w.inputs[1]) != 0.0 || zero->dtype() != DType::kFloat32 || zero->rank() > 4) return -1;
  const int mm = sole_consumer(rw, w.outputs[0], "MatMul");
  if (mm < 0 || rw.node(mm).inputs[0] != w.outputs[0]) return -1;
  nodes.push_back(nan);
  nodes.push_back(where);
  guarded = true;
  return mm;
}

}  // namespace

int fuse_attention(Graph& g, PassContext& ctx) {
  if (!ctx.can_run("Attention", "com.dlrt", 1)) return 0;
  Rewriter rw(g, ctx);
  int fired = 0;
  for (int sm = 0; sm < rw.size(); ++sm) {
    if (rw.dead(sm) || !is_op(rw.node(sm), "Softmax")) continue;
    const Node& smn = rw.node(sm);
    int64_t axis = smn.attr_int("axis", smn.opset >= 13 ? -1 : 1);
    if (axis != -1 && axis != 3) continue;
    if (axis == 3 && smn.opset < 13) continue;
    ValueId probs = smn.outputs[0];
    std::vector<int> chain = {sm};
    bool guarded = false;
    const int mm2 = probs_reader(rw, probs, chain, guarded);
    if (mm2 < 0) continue;
    chain.push_back(mm2);
    // Scores: [Add(mask)] <- [Div/Mul scale] <- MatMul(Q, Kᵀ)
    ValueId s = smn.inputs[0];
    ValueId mask = kNoValue;
    double scale = 1.0;
    int mm1 = -1;
    auto trace_scores = [&](ValueId v, std::vector<int>& nodes, double& sc) -> int {
      if (!rw.single_use(v)) return -1;
      int p = rw.producer(v);
      if (p < 0) return -1;
      const Node& n = rw.node(p);
      if (is_op(n, "MatMul")) return p;
      if (is_op(n, "Div")) {
        auto c = rw.scalar(n.inputs[1]);
        int q = rw.producer_op(n.inputs[0], "MatMul");
        if (!c || *c == 0 || q < 0 || !rw.single_use(n.inputs[0])) return -1;
        sc = 1.0 / *c;
        nodes.push_back(p);
        return q;
      }
      if (is_op(n, "Mul")) {
        for (int k = 0; k < 2; ++k) {
          auto c = rw.scalar(n.inputs[k]);
          int q = rw.producer_op(n.inputs[1 - k], "MatMul");
          if (c && q >= 0 && rw.single_use(n.inputs[1 - k])) {
            sc = *c;
            nodes.push_back(p);
            return q;
          }
        }
      }
      return -1;
    };
    std::vector<int> score_nodes;
    if (int add = rw.producer_op(s, "Add"); add >= 0 && rw.single_use(s)) {
      for (int k = 0; k < 2 && mm1 < 0; ++k) {
        std::vector<int> nodes;
        double sc = 1.0;
        int q = trace_scores(rw.node(add).inputs[k], nodes, sc);
        if (q >= 0) {
          mm1 = q;
          mask = rw.node(add).inputs[1 - k];
          scale = sc;
          score_nodes = nodes;
          score_nodes.push_back(add);
        }
      }
    } else {
      mm1 = trace_scores(s, score_nodes, scale);
    }
    if (mm1 < 0) continue;
    chain.push_back(mm1);
    chain.insert(chain.end(), score_nodes.begin(), score_nodes.end());
    if (mask != kNoValue && !is_float32(g, mask)) continue;
    auto q = trace_operand(rw, rw.node(mm1).inputs[0], false);
    auto k = trace_operand(rw, rw.node(mm1).inputs[1], true);
    auto v = trace_operand(rw, rw.node(mm2).inputs[1], false);
    if (!q || !k || !v) continue;
    bool packed = q->layout == "packed" || k->layout == "packed" || v->layout == "packed";
    if (packed) {
      // All three from the same packed tensor, through the same Transpose.
      if (q->layout != "packed" || k->layout != "packed" || v->layout != "packed" || q->value != k->value ||
          q->value != v->value || q->packed != k->packed || q->packed != v->packed)
        continue;
      auto users = rw.consumers(q->packed);
      if (users.size() != 3 || rw.escapes(q->packed)) continue;
      chain.push_back(rw.producer(q->packed));
    }
    if (!is_float32(g, packed ? q->value : q->value)) {
      // Types may be unknown where shape inference did not reach: accept
      // when the Softmax input is known float32 instead.
      if (!is_float32(g, s) && !is_float32(g, probs)) continue;
    }
    for (auto* src : {&*q, &*k, &*v}) chain.insert(chain.end(), src->nodes.begin(), src->nodes.end());
    // Output: absorb Transpose(0,2,1,3) back to [B,S,H,D] when it is the only reader.
    ValueId out = rw.node(mm2).outputs[0];
    std::string out_layout = "bhsd";
    int last = mm2;
    if (int ot = sole_consumer(rw, out, "Transpose"); ot >= 0) {
      auto p = perm_of(rw, ot);
      if (p && *p == std::vector<int64_t>{0, 2, 1, 3}) {
        out = rw.node(ot).outputs[0];
        out_layout = "bshd";
        chain.push_back(ot);
        last = ot;
      }
    }
    if (ctx.keeps_rounding(out)) continue;  // the fused kernel sums and exponentiates in its own order
    Node att;
    att.name = rw.node(mm1).name + "_attention";
    att.op_type = "Attention";
    att.domain = "com.dlrt";
    att.opset = 1;
    att.attributes["scale"] = make_attr_float(static_cast<float>(scale));
    att.attributes["output_layout"] = make_attr_string(out_layout);
    if (guarded) att.attributes["zero_undefined_rows"] = make_attr_int(1);
    if (packed) {
      att.inputs = {q->value, kNoValue, kNoValue};
      att.attributes["qkv_layout"] = make_attr_string("packed");
      att.attributes["packed_indices"] = make_attr_ints({q->packed_index, k->packed_index, v->packed_index});
    } else {
      att.inputs = {q->value, k->value, v->value};
      att.attributes["q_layout"] = make_attr_string(q->layout);
      att.attributes["k_layout"] = make_attr_string(k->layout);
      att.attributes["v_layout"] = make_attr_string(v->layout);
    }
    if (mask != kNoValue) att.inputs.push_back(mask);
    att.outputs = {out};
    log_fired("attention", "fused " + std::to_string(chain.size()) + " nodes into " + att.name + " (scale " +
                               std::to_string(scale) + (mask != kNoValue ? ", masked" : "") +
                               (guarded ? ", NaN rows zero" : "") + ", " +
                               (packed ? std::string("packed qkv") : q->layout + "/" + k->layout + "/" + v->layout) + ")");
    for (int n : chain)
      if (n != last) rw.remove(n);
    rw.replace(last, std::move(att));
    ++fired;
  }
  rw.commit();
  ctx.count("attention", fired);
  return fired;
}

namespace {

// A Clip of x + 3 to [0, 6] as a decomposed HardSwish has it: the Add's other
// input when `clip` is Clip(Add(x, 3), 0, 6) with the Add read by it alone.
ValueId hard_swish_input(Rewriter& rw, int clip) {
  const Node& c = rw.node(clip);
  if (!is_op(c, "Clip") || c.inputs.empty()) return kNoValue;
  const auto bounds = clip_bounds(rw, c);
  if (!bounds || bounds->first != 0.0f || bounds->second != 6.0f) return kNoValue;
  const int add = rw.producer_op(c.inputs[0], "Add");
  if (add < 0 || !rw.single_use(c.inputs[0])) return kNoValue;
  for (int k = 0; k < 2; ++k) {
    auto three = rw.scalar(rw.node(add).inputs[k]);
    if (three && *three == 3.0) return rw.node(add).inputs[1 - k];
  }
  return kNoValue;
}

// The node dividing `v` by 6 (Div by 6 or Mul by 1/6) when it is v's only reader, else -1.
int divides_by_six(Rewriter& rw, ValueId v) {
  for (const char* op : {"Div", "Mul"}) {
    const int d = sole_consumer(rw, v, op);
    if (d < 0) continue;
    const Node& n = rw.node(d);
    if (n.inputs.size() != 2 || (op[0] == 'D' && n.inputs[0] != v)) continue;
    auto c = rw.scalar(other_input(n, v));
    if (c && near(*c, op[0] == 'D' ? 6.0 : 1.0 / 6.0, 1e-6)) return d;
  }
  return -1;
}

}  // namespace

int fuse_hard_swish(Graph& g, PassContext& ctx) {
  if (!ctx.can_run("HardSwish", "", 14)) return 0;
  Rewriter rw(g, ctx);
  int fired = 0;
  for (int c = 0; c < rw.size(); ++c) {
    if (rw.dead(c)) continue;
    const ValueId x = hard_swish_input(rw, c);
    if (x == kNoValue || !is_float32(g, x)) continue;
    const ValueId clipped = rw.node(c).outputs[0];
    std::vector<int> chain = {rw.producer(rw.node(c).inputs[0]), c};
    int last = -1;
    if (const int m = sole_consumer(rw, clipped, "Mul"); m >= 0 && other_input(rw.node(m), clipped) == x) {
      const int d = divides_by_six(rw, rw.node(m).outputs[0]);  // (x * clip) / 6
      if (d < 0) continue;
      chain.push_back(m);
      last = d;
    } else if (const int d = divides_by_six(rw, clipped); d >= 0) {  // x * (clip / 6)
      const int m2 = sole_consumer(rw, rw.node(d).outputs[0], "Mul");
      if (m2 < 0 || other_input(rw.node(m2), rw.node(d).outputs[0]) != x) continue;
      chain.push_back(d);
      last = m2;
    } else {
      continue;
    }
    if (ctx.keeps_rounding(rw.node(last).outputs[0])) continue;
    Node hs;
    hs.name = rw.node(c).name + "_hard_swish";
    hs.op_type = "HardSwish";
    hs.opset = 14;
    hs.inputs = {x};
    hs.outputs = {rw.node(last).outputs[0]};
    log_fired("hard-swish", "fused " + std::to_string(chain.size() + 1) + " nodes around " + rw.node(c).describe());
    for (int k : chain) rw.remove(k);
    rw.replace(last, std::move(hs));
    ++fired;
  }
  rw.commit();
  ctx.count("hard-swish", fired);
  return fired;
}

namespace {

// Activation node -> (name, params) for the fused kernels.
std::optional<std::pair<std::string, std::vector<float>>> activation_of(Rewriter& rw, const Node& n) {
  if (!n.domain.empty()) return std::nullopt;
  const std::string& op = n.op_type;
  if (op == "Relu" || op == "Sigmoid" || op == "Tanh") return std::make_pair(op, std::vector<float>{});
  if (op == "LeakyRelu") return std::make_pair(op, std::vector<float>{n.attr_float("alpha", 0.01f)});
  if (op == "HardSigmoid")
    return std::make_pair(op, std::vector<float>{n.attr_float("alpha", 0.2f), n.attr_float("beta", 0.5f)});
  if (op == "HardSwish") return std::make_pair(op, std::vector<float>{});
  if (op == "Gelu" && n.opset >= 20) {
    std::string a = n.attr_string("approximate", "none");
    return std::make_pair(std::string(a == "tanh" ? "Gelu_tanh" : "Gelu"), std::vector<float>{});
  }
  if (op == "Clip") {
    const auto bounds = clip_bounds(rw, n);
    if (!bounds) return std::nullopt;
    return std::make_pair(std::string("Clip"), std::vector<float>{bounds->first, bounds->second});
  }
  return std::nullopt;
}

// SiLU as ONNX exports it: Sigmoid(v) and Mul(v, Sigmoid(v)) as the only
// readers of v, the Sigmoid's output read by that Mul alone. Returns the
// indices of the Sigmoid and the Mul, or nullopt.
std::optional<std::pair<int, int>> silu_of(const Rewriter& rw, ValueId v) {
  if (rw.escapes(v)) return std::nullopt;
  const std::vector<int> users = rw.consumers(v);
  if (users.size() != 2) return std::nullopt;
  for (int k = 0; k < 2; ++k) {
    const int sig = users[k], mul = users[1 - k];
    const Node& sn = rw.node(sig);
    if (!is_op(sn, "Sigmoid") || sn.inputs.size() != 1 || sn.outputs.size() != 1) continue;
    if (sole_consumer(rw, sn.outputs[0], "Mul") != mul || rw.node(mul).outputs.size() != 1) continue;
    if (other_input(rw.node(mul), v) == sn.outputs[0]) return std::make_pair(sig, mul);
  }
  return std::nullopt;
}

}  // namespace

int fuse_bias_activation(Graph& g, PassContext& ctx) {
  Rewriter rw(g, ctx);
  int fired = 0;
  for (int i = 0; i < rw.size(); ++i) {
    if (rw.dead(i)) continue;
    const Node& n = rw.node(i);
    bool conv = is_op(n, "Conv"), gemm = is_op(n, "Gemm"), matmul = is_op(n, "MatMul");
    if (!conv && !gemm && !matmul) continue;
    const char* fused_op = conv ? "FusedConv" : gemm ? "FusedGemm" : "FusedMatMul";
    if (!ctx.can_run(fused_op, "com.dlrt", 1)) continue;
    if (n.outputs.size() != 1 || n.inputs.size() < 2 || n.inputs[0] < 0 || n.inputs[1] < 0) continue;
    if (!is_float32(g, n.inputs[0]) && !(rw.constant(n.inputs[1]) && rw.constant(n.inputs[1])->dtype() == DType::kFloat32))
      continue;
    Node fused = n;
    fused.name = n.name + "_fused";
    fused.op_type = fused_op;
    fused.domain = "com.dlrt";
    fused.opset = 1;
    ValueId out = n.outputs[0];
    std::vector<int> chain = {i};
    int last = i;
    // Bias: MatMul + Add(constant 1-D of N) (N from a constant 2-D B).
    if (matmul) {
      const Tensor* b = rw.constant(n.inputs[1]);
      if (int ad = sole_consumer(rw, out, "Add"); ad >= 0 && b && b->rank() == 2) {
        ValueId bias = other_input(rw.node(ad), out);
        const Tensor* bt = rw.constant(bias);
        if (bt && bt->rank() == 1 && bt->size() == b->dim(1) && bt->dtype() == DType::kFloat32) {
          fused.inputs = {n.inputs[0], n.inputs[1], bias};
          out = rw.node(ad).outputs[0];
          chain.push_back(ad);
          last = ad;
        }
      }
    }
    // Conv / MatMul: residual Add of a same-shape tensor (Z, input 3), only
    // when shapes are known equal (the epilogue adds Z element by element).
    if (conv || matmul) {
      if (int ad = sole_consumer(rw, out, "Add"); ad >= 0) {
        // (No other input: an Add of `out` with itself, or with an omitted input.)
        ValueId z = other_input(rw.node(ad), out);
        bool same = false;
        if (z != kNoValue) {
          const auto& zs = g.values[z].type.shape;
          const auto& ys = g.values[out].type.shape;
          same = zs && ys && zs->size() == ys->size();
          if (same)
            for (size_t k = 0; k < zs->size(); ++k) {
              const Dim &a = (*zs)[k], &c = (*ys)[k];
              same = same && (a.is_static() ? c.is_static() && a.size == c.size : !a.symbol.empty() && a.symbol == c.symbol);
            }
        }
        if (same && rw.producer(z) != i) {
          while (fused.inputs.size() < 3) fused.inputs.push_back(kNoValue);
          fused.inputs.resize(3);
          fused.inputs.push_back(z);
          out = rw.node(ad).outputs[0];
          chain.push_back(ad);
          last = ad;
        }
      }
    }
    // Activation: one node, or SiLU's Sigmoid and Mul.
    if (auto silu = silu_of(rw, out)) {
      fused.attributes["activation"] = make_attr_string("Silu");
      out = rw.node(silu->second).outputs[0];
      chain.push_back(silu->first);
      chain.push_back(silu->second);
      last = silu->second;
    } else if (rw.single_use(out)) {
      int a = rw.consumers(out)[0];
      const Node& an = rw.node(a);
      auto act = activation_of(rw, an);
      if (act && !an.inputs.empty() && an.inputs[0] == out) {
        fused.attributes["activation"] = make_attr_string(act->first);
        if (!act->second.empty()) fused.attributes["activation_params"] = make_attr_floats(act->second);
        out = an.outputs[0];
        chain.push_back(a);
        last = a;
      }
    }
    if (chain.size() == 1 || ctx.keeps_rounding(out)) continue;
    fused.outputs = {out};
    log_fired("bias-activation", "fused " + std::to_string(chain.size()) + " nodes into " + fused.describe());
    for (int k : chain)
      if (k != last) rw.remove(k);
    rw.replace(last, std::move(fused));
    ++fired;
  }
  rw.commit();
  ctx.count("bias-activation", fired);
  return fired;
}

}  // namespace dlrt::ir::passes

namespace dlrt::ir::passes {

namespace {

bool is_fused_conv(const Node& n) { return n.domain == "com.dlrt" && n.op_type == "FusedConv"; }

// No activation, Relu or Clip, no post-affine or post-clamp (what the fused
// depthwise kernel applies).
bool clamp_activation(const Node& n) {
  const std::string a = n.attr_string("activation", "");
  return !n.has_attr("activation_affine") && !n.has_attr("activation_clamp") &&
         (a.empty() || a == "Relu" || a == "Clip");
}

// Every value of an int-list attribute equals v (an absent attribute passes).
bool all_equal(const Node& n, const char* attr, int64_t v) {
  if (!n.has_attr(attr)) return true;
  for (int64_t x : n.attr_ints(attr))
    if (x != v) return false;
  return true;
}

// Whether an int-list attribute is absent or holds `size` values of at least `min`.
bool absent_or(const Node& n, const char* attr, size_t size, int64_t min) {
  if (!n.has_attr(attr)) return true;
  const std::vector<int64_t> v = n.attr_ints(attr);
  return v.size() == size && std::all_of(v.begin(), v.end(), [min](int64_t x) { return x >= min; });
}

// The weights of a 2-D FusedConv with no residual, explicit (or no)
// non-negative padding, strides of at least 1, no dilation and a
// Relu/Clip/no activation, when they are a float32 constant; otherwise null.
const Tensor* plain_conv_weights(Rewriter& rw, const Node& n) {
  if (!is_fused_conv(n) || n.inputs.size() < 2 || n.outputs.size() != 1) return nullptr;
  if (n.inputs.size() > 3 && n.inputs[3] != kNoValue) return nullptr;  // residual Z
  const std::string pad = n.attr_string("auto_pad", "NOTSET");
  if (pad != "NOTSET" || !all_equal(n, "dilations", 1) || !clamp_activation(n)) return nullptr;
  if (!absent_or(n, "strides", 2, 1) || !absent_or(n, "pads", 4, 0)) return nullptr;
  const Tensor* w = rw.constant(n.inputs[1]);
  if (!w || w->dtype() != DType::kFloat32 || w->rank() != 4) return nullptr;
  return w;
}

}  // namespace

int fuse_expand_depthwise(Graph& g, PassContext& ctx) {
  if (!ctx.can_run("FusedExpandDepthwise", "com.dlrt", 1)) return 0;
  Rewriter rw(g, ctx);
  int fired = 0;
  for (int i = 0; i < rw.size(); ++i) {
    if (rw.dead(i)) continue;
    const Node& e = rw.node(i);
    const Tensor* we = plain_conv_weights(rw, e);
    // The first conv: group 1, M a multiple of 8 (of
    // expand_depthwise_channel_multiple); 1x1 with stride 1 and no padding
    // (an expand conv), or at most kMaxStemTaps taps per output (a stem on a
    // few input channels; larger convs keep their own kernels).
    constexpr int64_t kMaxStemTaps = 64;
    const int64_t multiple = std::max<int64_t>(8, ctx.expand_depthwise_channel_multiple);
    if (!we || we->dim(0) % multiple != 0 || e.attr_int("group", 1) != 1 || !is_float32(g, e.inputs[0])) continue;
    const bool pointwise = we->dim(2) == 1 && we->dim(3) == 1 && all_equal(e, "strides", 1) && all_equal(e, "pads", 0);
    if (!pointwise && we->dim(1) * we->dim(2) * we->dim(3) > kMaxStemTaps) continue;
    const int64_t M = we->dim(0);
    const ValueId mid = e.outputs[0];
    if (!rw.single_use(mid)) continue;
    if (ctx.expand_depthwise_min_positions > 0) {
      const auto& ms = g.values[mid].type.shape;
      if (ms && ms->size() == 4 && (*ms)[2].is_static() && (*ms)[3].is_static() &&
          (*ms)[2].size * (*ms)[3].size < ctx.expand_depthwise_min_positions)
        continue;
    }
    const int d = rw.consumers(mid)[0];
    const Node& dn = rw.node(d);
    if (ctx.keeps_rounding(dn.outputs[0])) continue;
    const Tensor* wd = plain_conv_weights(rw, dn);
    // The depthwise conv: group M, one filter per channel, leading pads below the kernel.
    if (!wd || dn.inputs[0] != mid || dn.attr_int("group", 1) != M || wd->dim(0) != M || wd->dim(1) != 1) continue;
    const int64_t kh = wd->dim(2), kw = wd->dim(3);
    if (kh * kw > 256) continue;
    const std::vector<int64_t> pads = dn.has_attr("pads") ? dn.attr_ints("pads") : std::vector<int64_t>(4, 0);
    if (pads[0] >= kh || pads[1] >= kw) continue;
    Node fused = dn;
    fused.name = dn.name + "_expand";
    fused.op_type = "FusedExpandDepthwise";
    fused.inputs = {e.inputs[0], e.inputs[1], e.inputs.size() > 2 ? e.inputs[2] : kNoValue, dn.inputs[1],
                    dn.inputs.size() > 2 ? dn.inputs[2] : kNoValue};
    fused.attributes.erase("auto_pad");
    fused.attributes.erase("dilations");
    if (e.has_attr("strides")) fused.attributes["expand_strides"] = e.attributes.at("strides");
    if (e.has_attr("pads")) fused.attributes["expand_pads"] = e.attributes.at("pads");
    if (e.has_attr("activation")) fused.attributes["expand_activation"] = e.attributes.at("activation");
    if (e.has_attr("activation_params")) fused.attributes["expand_activation_params"] = e.attributes.at("activation_params");
    log_fired("expand-depthwise", "fused " + e.describe() + " and " + dn.describe());
    rw.remove(i);
    rw.replace(d, std::move(fused));
    ++fired;
  }
  rw.commit();
  ctx.count("expand-depthwise", fired);
  return fired;
}

int fuse_expand_depthwise_project(Graph& g, PassContext& ctx) {
  if (!ctx.can_run("FusedExpandDepthwise", "com.dlrt", 1)) return 0;
  Rewriter rw(g, ctx);
  int fired = 0;
  for (int i = 0; i < rw.size(); ++i) {
    if (rw.dead(i)) continue;
    const Node& f = rw.node(i);
    if (f.domain != "com.dlrt" || f.op_type != "FusedExpandDepthwise" || f.inputs.size() != 5 ||
        f.outputs.size() != 1 || !rw.single_use(f.outputs[0]))
      continue;
    const int c = rw.consumers(f.outputs[0])[0];
    const Node& p = rw.node(c);
    if (ctx.keeps_rounding(p.outputs[0])) continue;
    const bool plain_conv = p.domain.empty() && p.op_type == "Conv";  // no bias-activation stage to fuse
    if ((!is_fused_conv(p) && !plain_conv) || p.inputs.size() < 2 || p.outputs.size() != 1 || p.inputs[0] != f.outputs[0])
      continue;
    if (p.attr_int("group", 1) != 1 || p.attr_string("auto_pad", "NOTSET") != "NOTSET") continue;
    if (!all_equal(p, "strides", 1) || !all_equal(p, "pads", 0) || !all_equal(p, "dilations", 1)) continue;
    const Tensor* wp = rw.constant(p.inputs[1]);
    const Tensor* wd = rw.constant(f.inputs[3]);
    if (!wp || !wd || wp->dtype() != DType::kFloat32 || wp->rank() != 4 || wp->dim(1) != wd->dim(0) ||
        wp->dim(2) != 1 || wp->dim(3) != 1)
      continue;
    Node fused = f;
    fused.inputs.push_back(p.inputs[1]);
    fused.inputs.push_back(p.inputs.size() > 2 ? p.inputs[2] : kNoValue);
    fused.inputs.push_back(!plain_conv && p.inputs.size() > 3 ? p.inputs[3] : kNoValue);
    while (fused.inputs.back() == kNoValue) fused.inputs.pop_back();
    if (p.has_attr("activation")) fused.attributes["project_activation"] = p.attributes.at("activation");
    if (p.has_attr("activation_params")) fused.attributes["project_activation_params"] = p.attributes.at("activation_params");
    if (p.has_attr("activation_affine")) fused.attributes["project_activation_affine"] = p.attributes.at("activation_affine");
    if (p.has_attr("activation_clamp"))
      fused.attributes["project_activation_clamp"] = p.attributes.at("activation_clamp");
    fused.outputs = p.outputs;
    log_fired("expand-depthwise-project", "fused " + f.describe() + " and " + p.describe());
    rw.remove(i);
    rw.replace(c, std::move(fused));
    ++fired;
  }
  rw.commit();
  ctx.count("expand-depthwise-project", fired);
  return fired;
}

}  // namespace dlrt::ir::passes
