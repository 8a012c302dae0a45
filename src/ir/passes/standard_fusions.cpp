// Rewrites that keep standard ONNX ops: Identity and transpose elimination,
// decomposed LayerNorm -> LayerNormalization (conv folds: conv_affine.cpp).
#include <cmath>
#include <numeric>

#include "ir/passes/rewriter.h"

namespace dlrt::ir::passes {

namespace {

std::optional<int> value_rank(const Graph& g, ValueId v) {
  const auto& s = g.values[v].type.shape;
  if (!s) return std::nullopt;
  return static_cast<int>(s->size());
}

}  // namespace

int eliminate_identities(Graph& g, PassContext& ctx) {
  Rewriter rw(g, ctx);
  int fired = 0;
  for (int i = 0; i < rw.size(); ++i) {
    if (rw.dead(i) || !is_op(rw.node(i), "Identity")) continue;
    const Node& n = rw.node(i);
    if (n.inputs.size() != 1 || n.outputs.size() != 1 || n.inputs[0] < 0 || n.outputs[0] < 0) continue;
    if (!rw.replace_uses(n.outputs[0], n.inputs[0])) continue;  // a graph output or capture keeps its node
    rw.remove(i);
    ++fired;
  }
  rw.commit();
  ctx.count("identity", fired);
  return fired;
}

int eliminate_transposes(Graph& g, PassContext& ctx) {
  Rewriter rw(g, ctx);
  int fired = 0;
  for (int i = 0; i < rw.size(); ++i) {
    if (rw.dead(i) || !is_op(rw.node(i), "Transpose")) continue;
    Node& t = rw.node(i);
    if (t.inputs.empty() || t.outputs.empty() || !t.has_attr("perm")) continue;
    std::vector<int64_t> perm = t.attr_ints("perm");
    // Transpose of a Transpose: compose the perms and read the inner input.
    int inner = rw.producer_op(t.inputs[0], "Transpose");
    if (inner >= 0 && rw.node(inner).has_attr("perm")) {
      std::vector<int64_t> p1 = rw.node(inner).attr_ints("perm");
      if (p1.size() == perm.size()) {
        std::vector<int64_t> c(perm.size());
        bool ok = true;
        for (size_t k = 0; k < perm.size(); ++k) {
          if (perm[k] < 0 || perm[k] >= static_cast<int64_t>(p1.size())) ok = false;
          else c[k] = p1[perm[k]];
        }
        if (ok) {
          ValueId mid = t.inputs[0];
          Node merged = t;
          merged.inputs[0] = rw.node(inner).inputs[0];
          merged.attributes["perm"] = make_attr_ints(c);
          perm = c;
          rw.replace(i, std::move(merged));
          log_fired("transpose", "merged two Transposes into " + rw.node(i).describe());
          if (rw.consumers(mid).empty() && !rw.escapes(mid)) rw.remove(inner);
          ++fired;
        }
      }
    }
    Node& cur = rw.node(i);
    bool identity = true;
    for (size_t k = 0; k < perm.size(); ++k) identity = identity && perm[k] == static_cast<int64_t>(k);
    if (identity && !perm.empty() && rw.replace_uses(cur.outputs[0], cur.inputs[0])) {
      log_fired("transpose", "removed identity " + cur.describe());
      rw.remove(i);
      ++fired;
    }
  }
  rw.commit();
  ctx.count("transpose", fired);
  return fired;
}

int fuse_layer_norm(Graph& g, PassContext& ctx, bool any_opset) {
  if (!ctx.can_run("LayerNormalization", "", 17)) return 0;
  auto opset = g.opsets.find("");
  if (!any_opset && (opset == g.opsets.end() || opset->second < 17)) return 0;
  Rewriter rw(g, ctx);
  int fired = 0;
  auto last_axis = [&](int node) -> bool {
    const Node& n = rw.node(node);
    if (n.attr_int("keepdims", 1) != 1) return false;
    std::vector<int64_t> axes;
    if (n.opset >= 18) {
      if (n.inputs.size() < 2 || n.inputs[1] == kNoValue) return false;
      const Tensor* a = rw.constant(n.inputs[1]);
      if (!a) return false;
      for (int64_t k = 0; k < a->size(); ++k) axes.push_back(element_as_int64(*a, k));
    } else {
      axes = n.attr_ints("axes");
    }
    if (axes.size() != 1) return false;
    if (axes[0] == -1) return true;
    auto r = value_rank(rw.graph(), n.inputs[0]);
    return r && axes[0] == *r - 1;
  };
  for (int i = 0; i < rw.size(); ++i) {
    if (rw.dead(i) || !is_op(rw.node(i), "ReduceMean") || !last_axis(i)) continue;
    ValueId x = rw.node(i).inputs[0];
    ValueId mean = rw.node(i).outputs[0];
    int sub = sole_consumer(rw, mean, "Sub");
    if (sub < 0 || rw.node(sub).inputs[0] != x || rw.node(sub).inputs[1] != mean) continue;
    ValueId d = rw.node(sub).outputs[0];
    auto users = rw.consumers(d);
    if (users.size() != 2 || rw.escapes(d)) continue;
    int pw = -1, dv = -1;
    for (int u : users) {
      if (is_op(rw.node(u), "Pow") && rw.node(u).inputs[0] == d) pw = u;
      else if (is_op(rw.node(u), "Div") && rw.node(u).inputs[0] == d) dv = u;
    }
    if (pw < 0 || dv < 0) continue;
    auto two = rw.scalar(rw.node(pw).inputs[1]);
    if (!two || *two != 2.0) continue;
    int rm2 = sole_consumer(rw, rw.node(pw).outputs[0], "ReduceMean");
    if (rm2 < 0 || !last_axis(rm2)) continue;
    int add = sole_consumer(rw, rw.node(rm2).outputs[0], "Add");
    if (add < 0) continue;
    auto eps = rw.scalar(other_input(rw.node(add), rw.node(rm2).outputs[0]));
    if (!eps) continue;
    int sq = sole_consumer(rw, rw.node(add).outputs[0], "Sqrt");
    if (sq < 0 || rw.node(dv).inputs[1] != rw.node(sq).outputs[0] || !rw.single_use(rw.node(sq).outputs[0])) continue;
    // Optional affine: Mul by gamma, Add beta (either operand order).
    std::vector<int> chain = {i, sub, pw, rm2, add, sq, dv};
    ValueId out = rw.node(dv).outputs[0];
    ValueId gamma = kNoValue, beta = kNoValue;
    int last = dv;
    if (int mul = sole_consumer(rw, out, "Mul"); mul >= 0) {
      ValueId gm = other_input(rw.node(mul), out);
      const Tensor* gt = rw.constant(gm);
      if (gt && gt->rank() == 1) {
        gamma = gm;
        chain.push_back(mul);
        out = rw.node(mul).outputs[0];
        last = mul;
        if (int ad = sole_consumer(rw, out, "Add"); ad >= 0) {
          ValueId bv = other_input(rw.node(ad), out);
          const Tensor* bt = rw.constant(bv);
          if (bt && bt->rank() == 1 && bt->size() == gt->size() && bt->dtype() == gt->dtype()) {
            beta = bv;
            chain.push_back(ad);
            out = rw.node(ad).outputs[0];
            last = ad;
          }
        }
      }
    }
    if (gamma == kNoValue) {
      // LayerNormalization needs a scale: ones of the last dim's size.
      const auto& s = g.values[x].type.shape;
      if (!s || s->empty() || !s->back().is_static() || g.values[x].type.dtype != DType::kFloat32) continue;
      auto ones = Tensor::allocate(DType::kFloat32, {s->back().size});
      if (!ones.ok()) continue;
      for (int64_t k = 0; k < ones->size(); ++k) ones->data<float>()[k] = 1.0f;
      gamma = rw.new_constant(rw.node(i).name + "_ln_scale", std::move(ones).value());
    }
    if (ctx.keeps_rounding(out)) continue;  // LayerNormalization's kernel rounds differently
    Node ln;
    ln.name = rw.node(i).name + "_layernorm";
    ln.op_type = "LayerNormalization";
    ln.opset = 17;
    ln.inputs = {x, gamma};
    if (beta != kNoValue) ln.inputs.push_back(beta);
    ln.outputs = {out};
    ln.attributes["axis"] = make_attr_int(-1);
    ln.attributes["epsilon"] = make_attr_float(static_cast<float>(*eps));
    log_fired("layer-norm", "fused " + std::to_string(chain.size()) + " nodes from " + rw.node(i).describe());
    for (int k : chain)
      if (k != last) rw.remove(k);
    rw.replace(last, std::move(ln));
    ++fired;
  }
  rw.commit();
  ctx.count("layer-norm", fired);
  return fired;
}

}  // namespace dlrt::ir::passes
