// Lowering of Gemm and MatMul (lowering.h), with their fused epilogues.
#include "backends/gpu/lowering_internal.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <optional>

namespace dlrt::gpu::lowering_detail {

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

}  // namespace dlrt::gpu::lowering_detail
