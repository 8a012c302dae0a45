// Fused transformer kernels (domain com.dlrt, opset 1), emitted by the graph
// optimiser (src/ir/passes/cpu_fusions.cpp).
//
// Attention: Y = softmax(scale * Q·Kᵀ + mask) · V per batch and head.
//   Inputs: Q, K, V, optional mask (float32, additive, broadcastable to
//   [B, H, Sq, Skv]). Layout attributes say how each operand is stored:
//     q_layout / v_layout: "bshd" ([B, S, H, D], the Reshape before the
//       exporter's Transpose) or "bhsd" ([B, H, S, D]);
//     k_layout: "bshd", "bhsd" or "bhds" (Kᵀ as [B, H, D, S]);
//     qkv_layout "packed": input 0 is one [B, S, 3, H, D] tensor (a fused
//       QKV projection reshaped), inputs 1 and 2 omitted, and
//       packed_indices [iq, ik, iv] pick Q, K and V along dim 2.
//   output_layout: "bshd" ([B, Sq, H, Dv], what the exporter's Transpose
//   back produced) or "bhsd". scale: float (default 1).
//   zero_undefined_rows: int (default 0); 1: a query row whose softmax is
//   undefined (every key masked with -inf: 0/0) gives zeros, not NaN, as
//   the exporters' Where(IsNaN(P), 0, P) after the Softmax makes it.
//
// Work is split over batch x head x blocks of query rows; each task packs
// Kᵀ for its head once, then runs 4 query rows at a time through Q·Kᵀ
// (vectorised along the keys), a fused scale/mask/softmax, and P·V
// (vectorised along the head dim). AVX-512 or AVX2+FMA is picked at run time
// (isa.h).
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>  // the x86 paths only
#endif

#include "backends/cpu/kernel_families.h"
#include "backends/cpu/kernels/attention.h"
#include "backends/cpu/ops/attention_run.h"
#include "backends/cpu/kernels/gemm_amx.h"
#include "backends/cpu/kernels/gemm_bf16.h"
#include "backends/cpu/kernels/isa.h"
#include "backends/cpu/kernels/isa_target.h"
#include "backends/cpu/scratch.h"
#include "exec/kernel_build_options.h"

namespace dlrt::cpu {

namespace {

using attention::Problem;
using attention::View;

bool use_avx2() {
#if defined(__x86_64__)
  return cpu_has_avx2();
#else
  return false;
#endif
}

// Dims and strides of a Q/K/V operand stored in `layout`; dims out as B,H,S,D.
bool view_of(const Tensor& t, const std::string& layout, View& v, int64_t dims[4]) {
  if (t.rank() != 4) return false;
  const auto& s = t.shape();
  v.base = t.data<float>();
  if (layout == "bshd") {
    dims[0] = s[0], dims[1] = s[2], dims[2] = s[1], dims[3] = s[3];
    v.sb = s[1] * s[2] * s[3], v.ss = s[2] * s[3], v.sh = s[3], v.sd = 1;
  } else if (layout == "bhsd") {
    dims[0] = s[0], dims[1] = s[1], dims[2] = s[2], dims[3] = s[3];
    v.sb = s[1] * s[2] * s[3], v.sh = s[2] * s[3], v.ss = s[3], v.sd = 1;
  } else if (layout == "bhds") {
    dims[0] = s[0], dims[1] = s[1], dims[2] = s[3], dims[3] = s[2];
    v.sb = s[1] * s[2] * s[3], v.sh = s[2] * s[3], v.sd = s[3], v.ss = 1;
  } else {
    return false;
  }
  return true;
}

}  // namespace

void run_attention(ThreadPool& pool, const attention::Problem& p, bool amx_allowed, bool bf16_allowed) {
  // Tasks: (b, h, row block); enough blocks that few heads (tiny_vit: 3)
  // still split evenly over the threads. Each block repacks its head's Kᵀ,
  // so more blocks cost more (docs/performance-decisions.md).
  const int64_t heads = p.B * p.H;
  int64_t threads = pool.num_threads();
  // One thread: one task per head (each task packs its head's Kᵀ). More:
  // the fewest row blocks per head that give every thread as many tasks,
  // at least 16 rows a block (balance beat more tasks; docs/performance-decisions.md).
  int64_t blocks = 1;
  if (threads > 1) {
    const int64_t cap = std::max<int64_t>(1, (p.Sq + 15) / 16);
    while (blocks < cap && (heads * blocks < threads || heads * blocks % threads != 0)) ++blocks;
  }
  int64_t rows_per = (p.Sq + blocks - 1) / blocks;
  [[maybe_unused]] const bool avx2 = use_avx2();  // read by the x86 paths only
#if defined(__x86_64__) || defined(__i386__)
  const bool avx512 = cpu_has_avx512();
  // bf16x3: Q's and V's head dims contiguous, and AMX still usable. Heads
  // of 64+ dims over 64+ keys only: with fewer the tile products are too
  // short for their setup (A/B on tiny_vit and minilm: docs/performance-decisions.md).
  const bool amx = amx_allowed && p.q.sd == 1 && p.v.sd == 1 && p.D >= 64 && p.Skv >= 64 && amx_bf16x3_available();
  // bf16: the same layouts, any head size.
  const bool bf16 = bf16_allowed && p.q.sd == 1 && p.v.sd == 1 && bf16_dot_available();
#else
  [[maybe_unused]] const bool bf16 = false;
  [[maybe_unused]] const bool avx512 = false;
  [[maybe_unused]] const bool amx = false;
#endif
  // Whole row blocks of the path that runs.
#if defined(__x86_64__)
  const int64_t tile_rows = avx2 && !avx512 ? attention::kRowsAvx2 : attention::kRows;
#else
  const int64_t tile_rows = attention::kRows;
#endif
  rows_per = (rows_per + tile_rows - 1) / tile_rows * tile_rows;
  blocks = (p.Sq + rows_per - 1) / rows_per;
  // Chunks of at least ~32K multiply-adds: the shortest sequences run on
  // one thread rather than pay for a dispatch. minilm at sequence 16 (16K
  // per head) splits its 12 heads in two: the Q, K and V projections before
  // it split their columns over the threads, so each thread then reads the
  // heads it wrote, in its own L2 (docs/performance-decisions.md).
  const int64_t task_work = std::max<int64_t>(1, rows_per * p.Skv * (p.D + p.Dv));
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 15) / task_work);
  pool.parallel_for(heads * blocks, grain, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      int64_t bh = t / blocks, blk = t % blocks;
      int64_t r0 = blk * rows_per, r1 = std::min(p.Sq, r0 + rows_per);
      if (r0 >= r1) continue;
#if defined(__x86_64__) || defined(__i386__)
      if (amx) {
        attention::attend_amx(p, bh / p.H, bh % p.H, r0, r1);
        continue;
      }
      if (bf16) {
        attention::attend_bf16(p, bh / p.H, bh % p.H, r0, r1);
        continue;
      }
#endif
      if (avx2) {  // AVX2 or AVX-512: the vector kernel at the CPU's width
        attention::attend_vec(simd_width(), p, bh / p.H, bh % p.H, r0, r1);
        continue;
      }
      attention::attend_generic(p, bh / p.H, bh % p.H, r0, r1);
    }
  });
}

namespace {

class AttentionKernel final : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> create(const ir::Node& n) {
    auto k = std::make_unique<AttentionKernel>();
    k->scale_ = n.attr_float("scale", 1.0f);
    k->zero_undefined_rows_ = n.attr_int("zero_undefined_rows", 0) != 0;
    k->amx_ = kernel_build_options().precision == GemmPrecision::kBf16x3 && amx_bf16x3_available();
    k->bf16_ = kernel_build_options().precision == GemmPrecision::kBf16 && bf16_dot_available();
    k->packed_ = n.attr_string("qkv_layout", "") == "packed";
    k->q_layout_ = n.attr_string("q_layout", "bhsd");
    k->k_layout_ = n.attr_string("k_layout", "bhsd");
    k->v_layout_ = n.attr_string("v_layout", "bhsd");
    k->out_bshd_ = n.attr_string("output_layout", "bhsd") == "bshd";
    std::string ol = n.attr_string("output_layout", "bhsd");
    if (ol != "bshd" && ol != "bhsd") return InvalidArgument(n.describe() + ": output_layout must be bshd or bhsd");
    if (k->packed_) {
      k->packed_idx_ = n.attr_ints("packed_indices", {0, 1, 2});
      if (k->packed_idx_.size() != 3) return InvalidArgument(n.describe() + ": packed_indices needs 3 values");
      for (int64_t i : k->packed_idx_)
        if (i < 0) return InvalidArgument(n.describe() + ": packed_indices must be non-negative");
    } else {
      for (const auto* l : {&k->q_layout_, &k->v_layout_})
        if (*l != "bshd" && *l != "bhsd") return InvalidArgument(n.describe() + ": q/v layout must be bshd or bhsd, got " + *l);
      if (k->k_layout_ != "bshd" && k->k_layout_ != "bhsd" && k->k_layout_ != "bhds")
        return InvalidArgument(n.describe() + ": k_layout must be bshd, bhsd or bhds");
    }
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  Status compute(KernelContext& ctx) const override {
    Problem p;
    p.scale = scale_;
    p.zero_undefined_rows = zero_undefined_rows_;
    int64_t qd[4], kd[4], vd[4];
    const Tensor* q = ctx.input(0);
    if (!q || q->dtype() != DType::kFloat32) return ctx.invalid("Q must be a float32 tensor");
    size_t mask_index = 3;
    if (packed_) {
      if (q->rank() != 5) return ctx.invalid("packed QKV must be [B, S, n, H, D], got " + shape_to_string(q->shape()));
      const auto& s = q->shape();
      for (int64_t i : packed_idx_)
        if (i >= s[2]) return ctx.invalid("packed index " + std::to_string(i) + " out of range for " + shape_to_string(s));
      View base;
      base.sb = s[1] * s[2] * s[3] * s[4], base.ss = s[2] * s[3] * s[4], base.sh = s[4], base.sd = 1;
      p.q = p.k = p.v = base;
      p.q.base = q->data<float>() + packed_idx_[0] * s[3] * s[4];
      p.k.base = q->data<float>() + packed_idx_[1] * s[3] * s[4];
      p.v.base = q->data<float>() + packed_idx_[2] * s[3] * s[4];
      qd[0] = kd[0] = vd[0] = s[0];
      qd[1] = kd[1] = vd[1] = s[3];
      qd[2] = kd[2] = vd[2] = s[1];
      qd[3] = kd[3] = vd[3] = s[4];
    } else {
      const Tensor* k = ctx.input(1);
      const Tensor* v = ctx.input(2);
      if (!k || !v || k->dtype() != DType::kFloat32 || v->dtype() != DType::kFloat32)
        return ctx.invalid("K and V must be float32 tensors");
      if (!view_of(*q, q_layout_, p.q, qd) || !view_of(*k, k_layout_, p.k, kd) || !view_of(*v, v_layout_, p.v, vd))
        return ctx.invalid("Q, K, V must be rank 4, got " + shape_to_string(q->shape()) + ", " +
                           shape_to_string(k->shape()) + ", " + shape_to_string(v->shape()));
    }
    if (qd[0] != kd[0] || qd[0] != vd[0] || qd[1] != kd[1] || qd[1] != vd[1] || qd[3] != kd[3] || kd[2] != vd[2])
      return ctx.invalid("Q/K/V dims disagree: Q (B,H,S,D) = " + shape_to_string(std::vector<int64_t>(qd, qd + 4)) +
                         ", K = " + shape_to_string(std::vector<int64_t>(kd, kd + 4)) +
                         ", V = " + shape_to_string(std::vector<int64_t>(vd, vd + 4)));
    p.B = qd[0], p.H = qd[1], p.Sq = qd[2], p.D = qd[3], p.Skv = kd[2], p.Dv = vd[3];
    const int64_t target[4] = {p.B, p.H, p.Sq, p.Skv};
    if (const Tensor* m = ctx.input(mask_index)) {
      if (m->dtype() != DType::kFloat32 || m->rank() > 4) return ctx.invalid("mask must be float32 of rank <= 4");
      int64_t md[4] = {1, 1, 1, 1};
      for (size_t i = 0; i < m->rank(); ++i) md[4 - m->rank() + i] = m->dim(i);
      int64_t stride = 1, st[4];
      for (int i = 3; i >= 0; --i) {
        if (md[i] != 1 && md[i] != target[i])
          return ctx.invalid("mask " + shape_to_string(m->shape()) + " does not broadcast to scores " +
                             shape_to_string(std::vector<int64_t>(target, target + 4)));
        st[i] = md[i] == 1 ? 0 : stride;
        stride *= md[i];
      }
      p.mask = m->data<float>();
      p.mb = st[0], p.mh = st[1], p.mq = st[2], p.mk = st[3];
      if (p.mk != 0 && p.mk != 1) return ctx.invalid("mask layout not supported");
    }
    Shape out_shape = out_bshd_ ? Shape{p.B, p.Sq, p.H, p.Dv} : Shape{p.B, p.H, p.Sq, p.Dv};
    DLRT_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output_uninitialized(0, DType::kFloat32, out_shape));
    if (out->size() == 0) return Status::Ok();
    if (p.Skv == 0) {  // softmax over nothing: zeros (as an empty MatMul gives)
      std::fill(out->data<float>(), out->data<float>() + out->size(), 0.0f);
      return Status::Ok();
    }
    p.out = out->data<float>();
    if (out_bshd_) p.ob = p.Sq * p.H * p.Dv, p.oh = p.Dv, p.os = p.H * p.Dv;
    else p.ob = p.H * p.Sq * p.Dv, p.oh = p.Sq * p.Dv, p.os = p.Dv;
    run_attention(ctx.pool(), p, amx_, bf16_);
    return Status::Ok();
  }

 private:
  float scale_ = 1;
  bool zero_undefined_rows_ = false;
  bool amx_ = false;  // the session's precision is bf16x3 and AMX was usable at create
  bool bf16_ = false;  // the session's precision is bf16 and AVX512-BF16 was usable at create
  bool packed_ = false;
  std::vector<int64_t> packed_idx_;
  std::string q_layout_, k_layout_, v_layout_;
  bool out_bshd_ = false;
};

}  // namespace

uint64_t attention_amx_runs() { return attention::amx_runs(); }
uint64_t attention_bf16_runs() { return attention::bf16_runs(); }

Status register_transformer_kernels(KernelRegistry& r) {
  KernelDef def;
  def.op_type = "Attention";
  def.domain = "com.dlrt";
  def.min_opset = 1;
  def.max_opset = 1;
  def.factory = [](const ir::Node& n) { return AttentionKernel::create(n); };
  return r.add(std::move(def));
}

}  // namespace dlrt::cpu
