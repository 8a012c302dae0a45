// com.microsoft GroupQueryAttention with ONNX Runtime's CPU semantics: query
// [B, S, N H] (or packed QKV [B, S, (N + 2 kvN) H]), key/value [B, S, kvN H],
// past [B, kvN, P, H]. Per batch entry the total length is seqlens_k[b] + 1;
// the first prompt (S == total_sequence_length) has no past, otherwise the
// past is total - S long (batch 1 when S > 1); total_sequence_length must be
// P + S (a dynamic cache) or at most P (a static one), as ONNX Runtime
// requires. The present [B, kvN, max(P, total_sequence_length), H] is the
// past, then the new keys, zeros after; query row i sees keys [start, end)
// with end = min(past + i + 1, total) and start = end - local_window_size
// (when > 0). do_rotary rotates Q
// and K at positions past + i (or position_ids) by the cos/sin caches;
// softcap maps scores through softcap * tanh(score / softcap), then
// attention_bias [B or 1, N or 1, S, total_sequence_length] is added;
// head_sink (a logit per head) or smooth_softmax (a logit 0) adds exp(sink)
// to the softmax's denominator. float32
// (float16 graphs run in float32 through the half-precision pass).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>

#include "backends/cpu/kernel_families.h"
#include "backends/cpu/kernel_util.h"
#include "backends/cpu/kernels/gemm.h"
#include "backends/cpu/ops/attention_run.h"
#include "backends/cpu/ops/contrib_attention_util.h"
#include "backends/cpu/scratch.h"
#include "backends/cpu/scratch_check.h"

namespace dlrt::cpu {
namespace {

using namespace ms_attn;

// GroupQueryAttention's inputs and attributes, checked.
struct Gqa {
  const Tensor *q = nullptr, *k = nullptr, *v = nullptr, *pk = nullptr, *pv = nullptr, *pos_ids = nullptr;
  const Tensor *ab = nullptr, *sink = nullptr;  // attention_bias [B or 1, N or 1, S, total], head_sink [N]
  const int32_t* lens = nullptr;
  int64_t B = 0, S = 0, N = 0, KV = 0, H = 0, Pbuf = 0, Tp = 0, total = 0, window = -1;
  bool first = false, packed = false, rotary = false, inter = false, smooth = false;
  float softcap = 0.0f;
  RotaryCache cache;

  int64_t past(int64_t b) const { return first ? 0 : lens[b] + 1 - S; }
  // Rotary position of token s of batch entry b: position_ids when given, else past + s.
  int64_t position(int64_t b, int64_t s) const { return pos_ids ? pos_ids->data<int64_t>()[b * S + s] : past(b) + s; }
};

// num_heads and kv_num_heads, checked when the kernel is made (as ONNX
// Runtime does): positive, num_heads a multiple of kv_num_heads, and
// num_heads + 2 kv_num_heads (the packed QKV's heads) within int64.
Status gqa_check_heads(const ir::Node& n) {
  const int64_t N = n.attr_int("num_heads", 0), KV = n.attr_int("kv_num_heads", 0);
  int64_t packed = 0;
  if (N <= 0 || KV <= 0 || N % KV)
    return InvalidModel(n.describe() + ": num_heads (" + std::to_string(N) + ") and kv_num_heads (" +
                        std::to_string(KV) + ") must be positive, num_heads a multiple of kv_num_heads");
  if (__builtin_mul_overflow(KV, 2, &packed) || __builtin_add_overflow(packed, N, &packed))
    return InvalidModel(n.describe() + ": num_heads + 2 kv_num_heads overflows int64 (num_heads " + std::to_string(N) +
                        ", kv_num_heads " + std::to_string(KV) + ")");
  return Status::Ok();
}

Result<Gqa> gqa_inputs(KernelContext& ctx) {
  const ir::Node& n = ctx.node();
  DLRT_ASSIGN_OR_RETURN(const Tensor* q, float_in(ctx, 0, "query", true));
  DLRT_ASSIGN_OR_RETURN(const Tensor* k, float_in(ctx, 1, "key", false));
  DLRT_ASSIGN_OR_RETURN(const Tensor* v, float_in(ctx, 2, "value", false));
  DLRT_ASSIGN_OR_RETURN(const Tensor* pk, float_in(ctx, 3, "past_key", false));
  DLRT_ASSIGN_OR_RETURN(const Tensor* pv, float_in(ctx, 4, "past_value", false));
  DLRT_ASSIGN_OR_RETURN(const Tensor* seqlens, required_input(ctx, 5));
  DLRT_ASSIGN_OR_RETURN(const Tensor* total_t, required_input(ctx, 6));
  DLRT_RETURN_IF_ERROR(gqa_check_heads(n));  // (also checked when the kernel was made)
  const int64_t N = n.attr_int("num_heads", 0), KV = n.attr_int("kv_num_heads", 0);
  DLRT_ASSIGN_OR_RETURN(const Tensor* ab, float_in(ctx, 10, "attention_bias", false));
  DLRT_ASSIGN_OR_RETURN(const Tensor* sink, float_in(ctx, 11, "head_sink", false));
  const Tensor* pos_ids = ctx.input(9);
  if (ctx.output_requested(3)) return ctx.unsupported("the output_qk output is not supported");
  const bool smooth = n.attr_int("smooth_softmax", 0) != 0;
  if (n.attr_int("qk_output", 0) != 0) return ctx.unsupported("qk_output is not supported");
  const bool rotary = n.attr_int("do_rotary", 0) != 0, inter = n.attr_int("rotary_interleaved", 0) != 0;
  const float softcap = n.attr_float("softcap", 0.0f);
  const int64_t window = n.attr_int("local_window_size", -1);
  if (q->rank() != 3) return ctx.invalid("query must be [B, S, hidden], got " + shape_to_string(q->shape()));
  const int64_t B = q->dim(0), S = q->dim(1);
  const bool packed = k == nullptr;
  if (packed != (v == nullptr))
    return ctx.invalid("key and value must be given together (or both left out: packed QKV)");
  int64_t H;
  if (packed) {
    if (q->dim(2) % (N + 2 * KV))
      return ctx.invalid("packed QKV width " + std::to_string(q->dim(2)) +
                         " is not (num_heads + 2 kv_num_heads) x head_size");
    H = q->dim(2) / (N + 2 * KV);
  } else {
    if (q->dim(2) % N)
      return ctx.invalid("query hidden size " + std::to_string(q->dim(2)) + " is not a multiple of num_heads " +
                         std::to_string(N));
    H = q->dim(2) / N;
    if (k->rank() != 3 || v->rank() != 3 || k->dim(0) != B || k->dim(1) != S || k->dim(2) != KV * H ||
        v->shape() != k->shape())
      return ctx.invalid("key and value must be [B, S, kv_num_heads x head_size] = [" + std::to_string(B) + ", " +
                         std::to_string(S) + ", " + std::to_string(KV * H) + "], got " + shape_to_string(k->shape()) +
                         " and " + shape_to_string(v->shape()));
  }
  if (H == 0) return ctx.invalid("the head size is 0 (query of shape " + shape_to_string(q->shape()) + ")");
  if (seqlens->dtype() != DType::kInt32 || seqlens->size() != B)
    return ctx.invalid("seqlens_k must be int32 with one value per batch entry");
  if (total_t->dtype() != DType::kInt32 || total_t->size() != 1)
    return ctx.invalid("total_sequence_length must be one int32");
  const int64_t total = total_t->data<int32_t>()[0];
  if ((pk != nullptr) != (pv != nullptr)) return ctx.invalid("past_key and past_value must be given together");
  int64_t Pbuf = 0;
  if (pk) {
    if (pk->rank() != 4 || pk->dim(0) != B || pk->dim(1) != KV || pk->dim(3) != H || pv->shape() != pk->shape())
      return ctx.invalid("past_key/past_value must be [B, kv_num_heads, P, head_size], got " +
                         shape_to_string(pk->shape()) + " and " + shape_to_string(pv->shape()));
    Pbuf = pk->dim(2);
  }
  if (ab && (ab->rank() != 4 || (ab->dim(0) != B && ab->dim(0) != 1) || (ab->dim(1) != N && ab->dim(1) != 1) ||
             ab->dim(2) != S || ab->dim(3) != total))
    return ctx.invalid("attention_bias must be [B or 1, num_heads or 1, S, total_sequence_length], got " +
                       shape_to_string(ab->shape()));
  if (sink && (sink->rank() != 1 || sink->dim(0) != N))
    return ctx.invalid("head_sink must have num_heads values, got " + shape_to_string(sink->shape()));
  // As ONNX Runtime: the present grows by the new tokens (a dynamic cache,
  // total = past + S) or is the past buffer itself (a static cache, total <=
  // past). Either way it is no longer than the inputs make it, so the K/V
  // and mask buffers cannot be sized by a bare number.
  if (total < 1 || (total != Pbuf + S && total > Pbuf))
    return ctx.invalid("total_sequence_length must equal past_sequence_length + kv_sequence_length (" +
                       std::to_string(Pbuf) + " + " + std::to_string(S) +
                       ") for a dynamic cache, or be within past_sequence_length for a static cache, got " +
                       std::to_string(total));
  const bool first = S == total;
  if (!first && S > 1 && B > 1)
    return ctx.invalid("batch size must be 1 when sequence length > 1 and there is past context");
  const int64_t Tp = std::max(Pbuf, total);
  const int32_t* lens = seqlens->data<int32_t>();
  for (int64_t b = 0; b < B; ++b) {
    const int64_t tot = static_cast<int64_t>(lens[b]) + 1;
    const int64_t past = first ? 0 : tot - S;
    if (tot < 1 || tot > Tp || past < 0 || past > Pbuf || past + S > Tp)
      return ctx.invalid("seqlens_k[" + std::to_string(b) + "] = " + std::to_string(lens[b]) +
                         " does not fit the sequence length " + std::to_string(S) + ", past " + std::to_string(Pbuf) +
                         " and total_sequence_length " + std::to_string(total));
  }
  RotaryCache cache;
  if (rotary) {
    DLRT_ASSIGN_OR_RETURN(cache, rotary_cache(ctx, 7, 8));
    if (2 * cache.half > H || cache.half == 0)
      return ctx.invalid("the cos/sin cache width " + std::to_string(cache.half) +
                         " is not within half the head size " + std::to_string(H));
    if (pos_ids) {
      if (pos_ids->dtype() != DType::kInt64 || pos_ids->rank() != 2 || pos_ids->dim(0) != B || pos_ids->dim(1) != S)
        return ctx.invalid("position_ids must be int64 [B, S], got " + shape_to_string(pos_ids->shape()));
      for (int64_t i = 0; i < B * S; ++i)
        if (pos_ids->data<int64_t>()[i] < 0 || pos_ids->data<int64_t>()[i] >= cache.positions)
          return ctx.invalid("position " + std::to_string(pos_ids->data<int64_t>()[i]) +
                             " is outside the cos/sin cache's " + std::to_string(cache.positions) + " rows");
    }
    for (int64_t b = 0; b < B && !pos_ids; ++b) {
      const int64_t past = first ? 0 : lens[b] + 1 - S;
      if (past + S > cache.positions)
        return ctx.invalid("positions up to " + std::to_string(past + S) + " exceed the cos/sin cache's " +
                           std::to_string(cache.positions) + " rows");
    }
  }
  Gqa g;
  g.q = q, g.k = k, g.v = v, g.pk = pk, g.pv = pv, g.pos_ids = pos_ids, g.lens = lens;
  g.B = B, g.S = S, g.N = N, g.KV = KV, g.H = H, g.Pbuf = Pbuf, g.Tp = Tp, g.total = total, g.window = window;
  g.first = first, g.packed = packed, g.rotary = rotary, g.inter = inter, g.softcap = softcap, g.cache = cache;
  g.ab = ab, g.sink = sink, g.smooth = smooth;
  return g;
}

// Fills the present K/V [B, KV, Tp, H] (the past, the new rows rotated when
// do_rotary, zeros after) and, with do_rotary, the rotated queries qrot
// [B, S, N, H].
void gqa_fill(ThreadPool& pool, const Gqa& g, float* kbuf, float* vbuf, float* qrot) {
  const int64_t B = g.B, S = g.S, N = g.N, KV = g.KV, H = g.H, Tp = g.Tp, Pbuf = g.Pbuf;
  const int64_t qw = g.packed ? (N + 2 * KV) * H : N * H;  // width of a query row
  const int64_t kw = g.packed ? qw : KV * H;
  const float* Qin = g.q->data<float>();
  const float* Kin = g.packed ? Qin + N * H : g.k->data<float>();
  const float* Vin = g.packed ? Qin + (N + KV) * H : g.v->data<float>();
  const RotaryCache& cache = g.cache;
  const bool rotary = g.rotary, inter = g.inter;
  const Tensor *pk = g.pk, *pv = g.pv;
  pool.parallel_for(B * KV, 1, [&](int64_t lo, int64_t hi) {
    for (int64_t bh = lo; bh < hi; ++bh) {
      const int64_t b = bh / KV, h = bh % KV;
      const int64_t past = g.past(b);
      float* ko = kbuf + bh * Tp * H;
      float* vo = vbuf + bh * Tp * H;
      if (past) {
        std::memcpy(ko, pk->data<float>() + bh * Pbuf * H, sizeof(float) * static_cast<size_t>(past * H));
        std::memcpy(vo, pv->data<float>() + bh * Pbuf * H, sizeof(float) * static_cast<size_t>(past * H));
      }
      for (int64_t s = 0; s < S; ++s) {
        const float* ks = Kin + (b * S + s) * kw + h * H;
        const float* vs = Vin + (b * S + s) * kw + h * H;
        float* kd = ko + (past + s) * H;
        if (rotary)
          rotate_head(ks, kd, cache.cos + g.position(b, s) * cache.half, cache.sin + g.position(b, s) * cache.half, H,
                      2 * cache.half, inter);
        else
          std::memcpy(kd, ks, sizeof(float) * static_cast<size_t>(H));
        std::memcpy(vo + (past + s) * H, vs, sizeof(float) * static_cast<size_t>(H));
      }
      std::fill(ko + (past + S) * H, ko + Tp * H, 0.0f);
      std::fill(vo + (past + S) * H, vo + Tp * H, 0.0f);
      if (rotary) {
        const int64_t G = N / KV;
        for (int64_t s = 0; s < S; ++s)
          for (int64_t j = 0; j < G; ++j) {
            const int64_t head = h * G + j;
            rotate_head(Qin + (b * S + s) * qw + head * H, qrot + ((b * S + s) * N + head) * H,
                        cache.cos + g.position(b, s) * cache.half, cache.sin + g.position(b, s) * cache.half, H,
                        2 * cache.half, inter);
          }
      }
    }
  });
}

// The additive mask [B, S, Tp]: keys [start, end) of each query row visible.
void gqa_mask(const Gqa& g, float* m) {
  const int64_t S = g.S, Tp = g.Tp, window = g.window;
  for (int64_t b = 0; b < g.B; ++b) {
    const int64_t tot = static_cast<int64_t>(g.lens[b]) + 1, past = g.past(b);
    for (int64_t i = 0; i < S; ++i) {
      const int64_t end = std::min(past + i + 1, tot);
      const int64_t start = window > 0 ? std::max<int64_t>(0, end - window) : 0;
      float* row = m + (b * S + i) * Tp;
      for (int64_t j = 0; j < Tp; ++j) row[j] = j >= start && j < end ? 0.0f : kHidden;
    }
  }
}

// The attention of the options the fused kernels lack, per head on the GEMM:
// scores (scaled) through softcap * tanh(score / softcap), plus
// attention_bias, plus the mask; a softmax whose denominator also holds
// exp(sink - max) with the head's head_sink value (smooth_softmax: sink 0)
// and max = max(scores, sink); then P·V. Qd: the queries, rows qstride
// floats apart.
void gqa_generic(ThreadPool& pool, const Gqa& g, const float* Qd, int64_t qstride, const float* kbuf, const float* vbuf,
                 const float* m, float scale, float* Y) {
  const int64_t B = g.B, S = g.S, N = g.N, KV = g.KV, H = g.H, Tp = g.Tp, G = N / KV;
  const int64_t bias_cols = std::min(g.total, Tp);
  const float softcap = g.softcap;
  pool.parallel_for(B * N, 1, [&](int64_t lo, int64_t hi) {
    thread_local AlignedScratch probs;
    float* pr = probs.get<float>(static_cast<size_t>(S * Tp), AlignedScratch::Growth::kByHalf);
    for (int64_t bn = lo; bn < hi; ++bn) {
      const int64_t b = bn / N, h = bn % N, kvh = h / G;
      const float* Kb = kbuf + (b * KV + kvh) * Tp * H;
      const float* Vb = vbuf + (b * KV + kvh) * Tp * H;
      const SgemmOperand sq{Qd + b * S * qstride + h * H, qstride, false, nullptr, nullptr};
      const SgemmOperand sk{Kb, H, true, nullptr, nullptr};
      (void)sgemm_ex(S, Tp, H, scale, sq, sk, 0.0f, pr, Tp, nullptr, nullptr);
      const bool has_sink = g.sink || g.smooth;
      const float sink = g.sink ? g.sink->data<float>()[h] : 0.0f;
      for (int64_t i = 0; i < S; ++i) {
        float* row = pr + i * Tp;
        const float* mrow = m + (b * S + i) * Tp;
        if (softcap > 0.0f)
          for (int64_t j = 0; j < Tp; ++j) row[j] = softcap * std::tanh(row[j] / softcap);
        if (g.ab) {
          const float* brow =
              g.ab->data<float>() +
              (((g.ab->dim(0) == 1 ? 0 : b) * g.ab->dim(1) + (g.ab->dim(1) == 1 ? 0 : h)) * S + i) * g.total;
          for (int64_t j = 0; j < bias_cols; ++j) row[j] += brow[j];
        }
        float mx = has_sink ? sink : -std::numeric_limits<float>::infinity();
        for (int64_t j = 0; j < Tp; ++j) {
          row[j] += mrow[j];
          mx = std::max(mx, row[j]);
        }
        float sum = has_sink ? std::exp(sink - mx) : 0.0f;
        for (int64_t j = 0; j < Tp; ++j) sum += row[j] = std::exp(row[j] - mx);
        for (int64_t j = 0; j < Tp; ++j) row[j] /= sum;
      }
      const SgemmOperand sp{pr, Tp, false, nullptr, nullptr};
      const SgemmOperand sv{Vb, H, false, nullptr, nullptr};
      (void)sgemm_ex(S, H, Tp, 1.0f, sp, sv, 0.0f, Y + b * S * N * H + h * H, N * H, nullptr, nullptr);
    }
  });
}

Status group_query_attention(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(Gqa g, gqa_inputs(ctx));
  const int64_t B = g.B, S = g.S, N = g.N, KV = g.KV, H = g.H, Tp = g.Tp, G = N / KV;
  // Present K/V [B, KV, Tp, H]: the outputs, or scratch when not asked for.
  thread_local AlignedScratch kv_scratch, q_scratch, mask_scratch;
  float* kbuf = nullptr;
  float* vbuf = nullptr;
  if (ctx.output_requested(1)) {
    DLRT_ASSIGN_OR_RETURN(Tensor * t, ctx.allocate_output_uninitialized(1, DType::kFloat32, {B, KV, Tp, H}));
    kbuf = t->data<float>();
  }
  if (ctx.output_requested(2)) {
    DLRT_ASSIGN_OR_RETURN(Tensor * t, ctx.allocate_output_uninitialized(2, DType::kFloat32, {B, KV, Tp, H}));
    vbuf = t->data<float>();
  }
  // (The mask is the largest buffer of S x total floats; gqa_generic's per-thread
  // probabilities are one batch entry's share of it.)
  DLRT_RETURN_IF_ERROR(check_scratch(ctx, {B, S, Tp}, sizeof(float), "the attention mask [B, S, total]"));
  if (!kbuf || !vbuf) {
    DLRT_RETURN_IF_ERROR(check_scratch(ctx, {2, B, KV, Tp, H}, sizeof(float), "the key/value buffers"));
    float* s = kv_scratch.get<float>(static_cast<size_t>(2 * B * KV * Tp * H), AlignedScratch::Growth::kByHalf);
    if (!kbuf) kbuf = s;
    if (!vbuf) vbuf = s + B * KV * Tp * H;
  }
  float* qrot =
      g.rotary ? q_scratch.get<float>(static_cast<size_t>(B * S * N * H), AlignedScratch::Growth::kByHalf) : nullptr;
  gqa_fill(ctx.pool(), g, kbuf, vbuf, qrot);
  const float* Qd = g.rotary ? qrot : g.q->data<float>();
  const int64_t qstride = g.rotary ? N * H : (g.packed ? (N + 2 * KV) * H : N * H);  // floats between query rows
  float* m = mask_scratch.get<float>(static_cast<size_t>(B * S * Tp), AlignedScratch::Growth::kByHalf);
  gqa_mask(g, m);
  const float scale_attr = ctx.node().attr_float("scale", 0.0f);
  const float scale = scale_attr != 0.0f ? scale_attr : static_cast<float>(1.0 / std::sqrt(static_cast<double>(H)));
  DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, DType::kFloat32, {B, S, N * H}));
  if (y->size() == 0) return Status::Ok();
  float* Y = y->data<float>();
  if (g.softcap > 0.0f || g.ab || g.sink || g.smooth) {
    gqa_generic(ctx.pool(), g, Qd, qstride, kbuf, vbuf, m, scale, Y);
    return Status::Ok();
  }
  // One attention problem per KV head: its G query heads share K and V.
  for (int64_t kvh = 0; kvh < KV; ++kvh) {
    attention::Problem p;
    p.B = B, p.H = G, p.Sq = S, p.Skv = Tp, p.D = H, p.Dv = H;
    p.scale = scale;
    p.q = attention::View{Qd + kvh * G * H, S * qstride, H, qstride, 1};
    p.k = attention::View{kbuf + kvh * Tp * H, KV * Tp * H, 0, H, 1};
    p.v = attention::View{vbuf + kvh * Tp * H, KV * Tp * H, 0, H, 1};
    p.mask = m, p.mb = S * Tp, p.mh = 0, p.mq = Tp, p.mk = 1;
    p.out = Y + kvh * G * H;
    p.ob = S * N * H, p.oh = H, p.os = N * H;
    run_attention(ctx.pool(), p, false);
  }
  return Status::Ok();
}

}  // namespace

Status register_group_query_attention(KernelRegistry& r) {
  KernelDef d;
  d.op_type = "GroupQueryAttention";
  d.domain = "com.microsoft";
  d.factory = [](const ir::Node& n) -> Result<std::unique_ptr<OpKernel>> {
    DLRT_RETURN_IF_ERROR(gqa_check_heads(n));
    return std::unique_ptr<OpKernel>(new FnKernel(group_query_attention));
  };
  return r.add(std::move(d));
}

}  // namespace dlrt::cpu
