// fuse_qkv_projections: the three Q/K/V projections of an attention block
// (com.dlrt FusedMatMul of one input against three constant weights, each
// reshaped to [B, S, H, D] for a com.dlrt Attention in bshd layouts) become
// one FusedMatMul against the weights side by side, reshaped to the packed
// [B, S, 3, H, D] layout the Attention kernel reads directly: one GEMM (and
// one parallel section) instead of three.
#include <algorithm>
#include <cstring>
#include <optional>

#include "ir/passes/rewriter.h"

namespace dlrt::ir::passes {

namespace {

bool same_dim(const Dim& a, const Dim& b) {
  return a.is_static() ? b.is_static() && a.size == b.size : !a.symbol.empty() && a.symbol == b.symbol;
}

// One projection feeding the Attention: Reshape(FusedMatMul(A, W, [bias])).
struct Projection {
  int reshape = -1, matmul = -1;
  ValueId a = kNoValue;
  const Tensor* w = nullptr;
  const Tensor* bias = nullptr;
};

std::optional<Projection> projection_of(Rewriter& rw, ValueId v) {
  Projection p;
  if (!rw.single_use(v)) return std::nullopt;
  p.reshape = rw.producer_op(v, "Reshape");
  if (p.reshape < 0) return std::nullopt;
  const ValueId y = rw.node(p.reshape).inputs[0];
  if (!rw.single_use(y)) return std::nullopt;
  p.matmul = rw.producer(y);
  if (p.matmul < 0) return std::nullopt;
  const Node& mm = rw.node(p.matmul);
  if (mm.domain != "com.dlrt" || mm.op_type != "FusedMatMul" || mm.outputs.size() != 1) return std::nullopt;
  if (mm.inputs.size() < 2 || mm.inputs.size() > 3) return std::nullopt;  // no residual
  if (!mm.attr_string("activation", "").empty() || mm.attr_float("alpha", 1.0f) != 1.0f) return std::nullopt;
  p.a = mm.inputs[0];
  p.w = rw.constant(mm.inputs[1]);
  if (!p.w || p.w->dtype() != DType::kFloat32 || p.w->rank() != 2) return std::nullopt;
  if (mm.inputs.size() == 3 && mm.inputs[2] != kNoValue) {
    p.bias = rw.constant(mm.inputs[2]);
    if (!p.bias || p.bias->dtype() != DType::kFloat32 || p.bias->rank() != 1 || p.bias->size() != p.w->dim(1))
      return std::nullopt;
  }
  return p;
}

}  // namespace

int fuse_qkv_projections(Graph& g, PassContext& ctx) {
  if (!ctx.can_run("FusedMatMul", "com.dlrt", 1) || !ctx.can_run("Attention", "com.dlrt", 1)) return 0;
  Rewriter rw(g, ctx);
  int fired = 0;
  for (int at = 0; at < rw.size(); ++at) {
    if (rw.dead(at)) continue;
    const Node& att = rw.node(at);
    if (att.domain != "com.dlrt" || att.op_type != "Attention" || att.inputs.size() < 3) continue;
    if (att.attr_string("qkv_layout", "") == "packed") continue;
    if (att.attr_string("q_layout", "") != "bshd" || att.attr_string("k_layout", "") != "bshd" ||
        att.attr_string("v_layout", "") != "bshd")
      continue;
    std::optional<Projection> pr[3];
    bool ok = true;
    for (int k = 0; k < 3 && ok; ++k) {
      pr[k] = projection_of(rw, att.inputs[k]);
      ok = pr[k].has_value();
    }
    if (!ok) continue;
    const int64_t K = pr[0]->w->dim(0), N = pr[0]->w->dim(1);
    for (int k = 1; k < 3 && ok; ++k)
      ok = pr[k]->a == pr[0]->a && pr[k]->w->dim(0) == K && pr[k]->w->dim(1) == N &&
           (pr[k]->bias != nullptr) == (pr[0]->bias != nullptr) && pr[k]->matmul != pr[0]->matmul;
    if (!ok) continue;
    // Shapes: A [B, S, K] -> [B, S, N] -> [B, S, H, D] with H * D = N, for all three.
    const auto& ys0 = g.values[rw.node(pr[0]->matmul).outputs[0]].type.shape;
    if (!ys0 || ys0->size() != 3) continue;
    const std::vector<Dim> ys = *ys0;  // a copy: new values below may move g.values
    int64_t H = -1, D = -1;
    for (int k = 0; k < 3 && ok; ++k) {
      const auto& ms = g.values[rw.node(pr[k]->matmul).outputs[0]].type.shape;
      const auto& qs = g.values[att.inputs[k]].type.shape;
      ok = ms && qs && ms->size() == 3 && qs->size() == 4 && same_dim((*qs)[0], (*ms)[0]) &&
           same_dim((*qs)[1], (*ms)[1]) && (*qs)[2].is_static() && (*qs)[3].is_static() &&
           (*qs)[2].size * (*qs)[3].size == N && same_dim((*ms)[0], ys[0]) && same_dim((*ms)[1], ys[1]);
      if (ok && k == 0) H = (*qs)[2].size, D = (*qs)[3].size;
      if (ok) ok = (*qs)[2].size == H && (*qs)[3].size == D;
    }
    if (!ok || H <= 0 || D <= 0) continue;

    // Weights side by side: W[p, k*N + j] = W_k[p, j]; biases concatenated.
    auto wr = Tensor::allocate(DType::kFloat32, {K, 3 * N});
    if (!wr.ok()) continue;
    Tensor w = std::move(*wr);
    float* wd = w.data<float>();
    for (int k = 0; k < 3; ++k) {
      const float* src = pr[k]->w->data<float>();
      for (int64_t p = 0; p < K; ++p) std::memcpy(wd + p * 3 * N + k * N, src + p * N, sizeof(float) * N);
    }
    const Node first = rw.node(pr[0]->matmul);
    Node mm = first;
    mm.name = first.name + "_qkv";
    mm.inputs = {pr[0]->a, rw.new_constant(first.name + "_qkv_w", std::move(w))};
    if (pr[0]->bias) {
      auto br = Tensor::allocate(DType::kFloat32, {3 * N});
      if (!br.ok()) continue;
      Tensor b = std::move(*br);
      for (int k = 0; k < 3; ++k) std::memcpy(b.data<float>() + k * N, pr[k]->bias->data<float>(), sizeof(float) * N);
      mm.inputs.push_back(rw.new_constant(first.name + "_qkv_b", std::move(b)));
    }
    TypeInfo yt;
    yt.dtype = DType::kFloat32;
    yt.shape = std::vector<Dim>{ys[0], ys[1], Dim{3 * N, ""}};
    const ValueId y = rw.new_value(first.name + "_qkv_out", yt);
    mm.outputs = {y};

    Node rs = rw.node(pr[0]->reshape);
    rs.name = first.name + "_qkv_reshape";
    rs.attributes.clear();  // allowzero 0: the zeros copy B and S
    TypeInfo xt;
    xt.dtype = DType::kFloat32;
    xt.shape = std::vector<Dim>{ys[0], ys[1], Dim{3, ""}, Dim{H, ""}, Dim{D, ""}};
    const ValueId x5 = rw.new_value(first.name + "_qkv_packed", xt);
    rs.inputs = {y, rw.new_constant(first.name + "_qkv_shape",
                                    Tensor::from_vector<int64_t>({5}, {0, 0, 3, H, D}))};
    rs.outputs = {x5};

    Node fused = att;
    fused.inputs[0] = x5;
    fused.inputs[1] = kNoValue;
    fused.inputs[2] = kNoValue;
    fused.attributes.erase("q_layout");
    fused.attributes.erase("k_layout");
    fused.attributes.erase("v_layout");
    fused.attributes["qkv_layout"] = make_attr_string("packed");
    fused.attributes["packed_indices"] = make_attr_ints({0, 1, 2});

    // The new GEMM takes the place of the earliest projection (A is ready
    // there); the Reshape goes right before the Attention.
    int earliest = pr[0]->matmul;
    for (int k = 1; k < 3; ++k) earliest = std::min(earliest, pr[k]->matmul);
    for (int k = 0; k < 3; ++k) {
      if (pr[k]->matmul != earliest) rw.remove(pr[k]->matmul);
      rw.remove(pr[k]->reshape);
    }
    log_fired("qkv-projections", "fused " + rw.node(pr[0]->matmul).name + " + 2 projections into " + mm.name +
                                     " (" + std::to_string(K) + " x 3*" + std::to_string(N) + ")");
    rw.replace(earliest, std::move(mm));
    rw.insert_before(at, std::move(rs));
    rw.replace(at, std::move(fused));
    ++fired;
  }
  rw.commit();
  ctx.count("qkv-projections", fired);
  return fired;
}

}  // namespace dlrt::ir::passes
