// com.microsoft attention-family ops, with ONNX Runtime's CPU semantics (its
// contrib op schemas and what its CPU kernels compute):
//   FusedMatMul: Y = alpha * op(A) · op(B), op = the transposes transA/transB
//     of the last two dims and transBatchA/transBatchB (dim 0 moved behind the
//     batch dims: [d0, b..., dl] read as [b..., d0, dl]); numpy batch
//     broadcasting.
//   RotaryEmbedding: rotates the first rotary_embedding_dim values of each
//     head (halves, or even/odd pairs when interleaved) by the cos/sin cache
//     rows of the token's position (position_ids: one offset [1] or [B, S]);
//     input [B, S, hidden] or [B, num_heads, S, head_size]. `scale` is not
//     used by ONNX Runtime's CPU kernel, nor here.
//   MultiHeadAttention: query [B, S, D], key/value [B, L, D] / [B, L, Dv]
//     (bias [D + D + Dv] added) or [B, N, L, H] (no bias added to them), past
//     key/value [B, N, P, H] concatenated in front into present; the additive
//     mask from key_padding_mask ([B] lengths, [B, T] or [B, S, T] 0/1) with
//     mask_filter_value, attention_bias [B or 1, N or 1, S, T]; unidirectional
//     as ONNX Runtime's CPU kernel does it: query row s < S - 1 sees keys
//     [0, P + s + 1), the last row sees every key. Packed QKV/KV are refused
//     as ONNX Runtime's CPU provider refuses them.
//   GroupQueryAttention: contrib_gqa.cpp.
// float32 (float16 graphs are run in float32 by the half-precision pass).
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
#include "backends/cpu/ops/matmul_impl.h"
#include "backends/cpu/scratch.h"
#include "backends/cpu/scratch_check.h"

namespace dlrt::cpu {
namespace ms_attn {

Result<const Tensor*> float_in(KernelContext& ctx, size_t i, const char* what, bool required) {
  const Tensor* t = ctx.input(i);
  if (!t) {
    if (required) return ctx.invalid(std::string("input ") + what + " is required");
    return static_cast<const Tensor*>(nullptr);
  }
  if (t->dtype() != DType::kFloat32)
    return ctx.unsupported(std::string(what) + " of dtype " + dtype_name(t->dtype()) + ": only float32 is supported");
  return t;
}

void rotate_head(const float* x, float* y, const float* cs, const float* sn, int64_t head, int64_t rot, bool inter) {
  const int64_t half = rot / 2;
  if (inter) {
    for (int64_t i = 0; i < half; ++i) {
      const float x1 = x[2 * i], x2 = x[2 * i + 1];
      y[2 * i] = x1 * cs[i] - x2 * sn[i];
      y[2 * i + 1] = x2 * cs[i] + x1 * sn[i];
    }
  } else {
    for (int64_t i = 0; i < half; ++i) {
      const float x1 = x[i], x2 = x[i + half];
      y[i] = x1 * cs[i] - x2 * sn[i];
      y[i + half] = x2 * cs[i] + x1 * sn[i];
    }
  }
  if (y != x) std::copy(x + rot, x + head, y + rot);
}

Result<RotaryCache> rotary_cache(KernelContext& ctx, size_t ci, size_t si) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* c, float_in(ctx, ci, "cos_cache", true));
  DLRT_ASSIGN_OR_RETURN(const Tensor* s, float_in(ctx, si, "sin_cache", true));
  if (c->rank() != 2 || c->shape() != s->shape())
    return ctx.invalid("cos_cache and sin_cache must be 2-D [max_positions, rotary_dim / 2] of one shape, got " +
                       shape_to_string(c->shape()) + " and " + shape_to_string(s->shape()));
  return RotaryCache{c->data<float>(), s->data<float>(), c->dim(0), c->dim(1)};
}

}  // namespace ms_attn

namespace {

using namespace ms_attn;

// ---------------------------------------------------------------- FusedMatMul

// One operand as a batch of row-major matrices: op(X) is rows x cols; the
// stored matrix has leading dim `ld` (transposed when `trans`), matrix j of
// the operand's own flattened batch starts `unit` floats after matrix 0.
struct MatOperand {
  const float* data = nullptr;
  int64_t rows = 0, cols = 0, ld = 0, unit = 0;
  bool trans = false;
  Shape batch;
};

Result<MatOperand> mat_operand(KernelContext& ctx, const Tensor& t, bool trans, bool trans_batch, bool is_a) {
  MatOperand o;
  o.data = t.data<float>();
  const Shape& d = t.shape();
  const int64_t r = static_cast<int64_t>(d.size());
  if (r == 0) return ctx.invalid("FusedMatMul operands must have rank 1 or more");
  if (r == 1) {
    if (trans || trans_batch) return ctx.unsupported("transA/transB/transBatch on a 1-D operand are not supported");
    o.rows = is_a ? 1 : d[0];
    o.cols = is_a ? d[0] : 1;
    o.ld = o.cols;
    o.unit = d[0];
    return o;
  }
  int64_t stored_rows, stored_cols = d[r - 1];
  if (trans_batch && r >= 3) {
    stored_rows = d[0];
    o.batch.assign(d.begin() + 1, d.end() - 1);
    int64_t p = 1;
    for (int64_t v : o.batch) p *= v;
    o.ld = p * stored_cols;
    o.unit = stored_cols;
  } else {
    stored_rows = d[r - 2];
    o.batch.assign(d.begin(), d.end() - 2);
    o.ld = stored_cols;
    o.unit = stored_rows * stored_cols;
  }
  o.trans = trans;
  o.rows = trans ? stored_cols : stored_rows;
  o.cols = trans ? stored_rows : stored_cols;
  return o;
}

// Flat index in an operand's own batch (aligned right, size-1 dims
// broadcast) of output batch element `o`.
int64_t batch_index(int64_t o, const Shape& out, const Shape& mine) {
  int64_t idx = 0, mul = 1;
  const size_t off = out.size() - mine.size();
  for (size_t k = out.size(); k-- > 0;) {
    const int64_t c = o % out[k];
    o /= out[k];
    if (k >= off) {
      const int64_t dm = mine[k - off];
      idx += (dm == 1 ? 0 : c) * mul;
      mul *= dm;
    }
  }
  return idx;
}

Status ms_fused_matmul(KernelContext& ctx, const PackedOperand* pre) {
  const ir::Node& n = ctx.node();
  const bool ta = n.attr_int("transA", 0) != 0, tb = n.attr_int("transB", 0) != 0;
  const bool tba = n.attr_int("transBatchA", 0) != 0, tbb = n.attr_int("transBatchB", 0) != 0;
  const float alpha = n.attr_float("alpha", 1.0f);
  DLRT_ASSIGN_OR_RETURN(const Tensor* a, float_in(ctx, 0, "A", true));
  DLRT_ASSIGN_OR_RETURN(const Tensor* b, float_in(ctx, 1, "B", true));
  // Without transposes it is MatMul scaled by alpha: the MatMul kernel.
  if (!ta && !tb && !(tba && a->rank() >= 3) && !(tbb && b->rank() >= 3)) {
    MatMulFusion f;
    f.alpha = alpha;
    return matmul_run(ctx, pre, f);
  }
  DLRT_ASSIGN_OR_RETURN(MatOperand oa, mat_operand(ctx, *a, ta, tba, true));
  DLRT_ASSIGN_OR_RETURN(MatOperand ob, mat_operand(ctx, *b, tb, tbb, false));
  if (oa.cols != ob.rows)
    return ctx.invalid("op(A) " + shape_to_string(a->shape()) + " and op(B) " + shape_to_string(b->shape()) +
                       " do not multiply: " + std::to_string(oa.cols) + " vs " + std::to_string(ob.rows));
  Shape out_batch(std::max(oa.batch.size(), ob.batch.size()), 1);
  for (size_t k = 0; k < out_batch.size(); ++k) {
    const size_t ka = out_batch.size() - k, kb = ka;
    const int64_t da = ka <= oa.batch.size() ? oa.batch[oa.batch.size() - ka] : 1;
    const int64_t db = kb <= ob.batch.size() ? ob.batch[ob.batch.size() - kb] : 1;
    if (da != db && da != 1 && db != 1)
      return ctx.invalid("batch dims of A " + shape_to_string(a->shape()) + " and B " + shape_to_string(b->shape()) +
                         " do not broadcast");
    out_batch[k] = da == 1 ? db : da;
  }
  const int64_t M = oa.rows, K = oa.cols, N = ob.cols;
  Shape out = out_batch;
  if (a->rank() != 1) out.push_back(M);
  if (b->rank() != 1) out.push_back(N);
  DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, DType::kFloat32, out));
  if (y->size() == 0) return Status::Ok();
  int64_t nb = 1;
  for (int64_t v : out_batch) nb *= v;
  float* Y = y->data<float>();
  auto one = [&](int64_t o, ThreadPool* pool) {
    const SgemmOperand sa{oa.data + batch_index(o, out_batch, oa.batch) * oa.unit, oa.ld, oa.trans, nullptr, nullptr};
    const SgemmOperand sb{ob.data + batch_index(o, out_batch, ob.batch) * ob.unit, ob.ld, ob.trans, nullptr, nullptr};
    return sgemm_ex(M, N, K, alpha, sa, sb, 0.0f, Y + o * M * N, N, nullptr, pool);
  };
  if (nb < ctx.pool().num_threads()) {
    for (int64_t o = 0; o < nb; ++o) DLRT_RETURN_IF_ERROR(one(o, &ctx.pool()));
    return Status::Ok();
  }
  // Plain operands never fail (gemm.h).
  ctx.pool().parallel_for(nb, 1, [&](int64_t lo, int64_t hi) {
    for (int64_t o = lo; o < hi; ++o) (void)one(o, nullptr);
  });
  return Status::Ok();
}

// ------------------------------------------------------------------- Rotary

Status rotary_embedding(KernelContext& ctx) {
  const ir::Node& n = ctx.node();
  DLRT_ASSIGN_OR_RETURN(const Tensor* x, float_in(ctx, 0, "input", true));
  DLRT_ASSIGN_OR_RETURN(const Tensor* pos, required_input(ctx, 1));
  DLRT_ASSIGN_OR_RETURN(RotaryCache cache, rotary_cache(ctx, 2, 3));
  if (n.attr_int("is_packed_batching", 0) != 0)
    return ctx.unsupported("is_packed_batching (ragged batches) is not supported");
  const bool inter = n.attr_int("interleaved", 0) != 0;
  int64_t heads = n.attr_int("num_heads", 0);
  const int64_t rot_attr = n.attr_int("rotary_embedding_dim", 0);
  if (heads < 0 || rot_attr < 0) return ctx.invalid("num_heads and rotary_embedding_dim must not be negative");
  if (rot_attr > 0 && heads == 0) return ctx.invalid("num_heads is required when rotary_embedding_dim is given");
  if (pos->dtype() != DType::kInt64) return ctx.invalid("position_ids must be int64");
  int64_t B, S, head;
  bool bnsh = false;
  if (x->rank() == 3) {
    B = x->dim(0), S = x->dim(1);
    const int64_t hidden = x->dim(2);
    head = heads > 0 ? (hidden % heads ? -1 : hidden / heads) : 2 * cache.half;
    if (head <= 0 || hidden % head)
      return ctx.invalid("hidden size " + std::to_string(hidden) + " does not split into heads of num_heads " +
                         std::to_string(heads) + " / the cache width");
    heads = hidden / head;
  } else if (x->rank() == 4) {
    bnsh = true;
    B = x->dim(0), S = x->dim(2), head = x->dim(3);
    if (heads > 0 && heads != x->dim(1)) return ctx.invalid("num_heads does not match input dim 1");
    heads = x->dim(1);
  } else {
    return ctx.invalid("input must be [B, S, hidden] or [B, num_heads, S, head_size], got " +
                       shape_to_string(x->shape()));
  }
  const int64_t rot = rot_attr > 0 ? rot_attr : head;
  if (rot > head || rot % 2 || cache.half != rot / 2)
    return ctx.invalid("rotary dim " + std::to_string(rot) + " (head size " + std::to_string(head) +
                       ") does not match the cache width " + std::to_string(cache.half));
  const bool offset = pos->rank() == 1 && pos->size() == 1;
  if (!offset && !(pos->rank() == 2 && pos->dim(0) == B && pos->dim(1) == S))
    return ctx.invalid("position_ids must be [1] or [B, S], got " + shape_to_string(pos->shape()));
  const int64_t* P = pos->data<int64_t>();
  // Rows P[i] .. P[i] + span - 1 must be in the cache; written without the sum,
  // which would wrap for P[i] near INT64_MAX.
  const int64_t span = offset ? S : 1;
  for (int64_t i = 0; i < pos->size(); ++i)
    if (P[i] < 0 || P[i] > cache.positions - span)
      return ctx.invalid("position " + std::to_string(P[i]) + (offset ? " + sequence length" : "") +
                         " is outside the cos/sin cache's " + std::to_string(cache.positions) + " rows");
  DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, DType::kFloat32, x->shape()));
  const float* X = x->data<float>();
  float* Y = y->data<float>();
  // Rows are (b, s) pairs; each holds `heads` vectors.
  ctx.pool().parallel_for(B * S, std::max<int64_t>(1, 4096 / std::max<int64_t>(heads * head, 1)),
                          [&](int64_t lo, int64_t hi) {
                            for (int64_t r = lo; r < hi; ++r) {
                              const int64_t b = r / S, s = r % S;
                              const int64_t p = offset ? P[0] + s : P[r];
                              const float* cs = cache.cos + p * cache.half;
                              const float* sn = cache.sin + p * cache.half;
                              for (int64_t h = 0; h < heads; ++h) {
                                const int64_t o = bnsh ? ((b * heads + h) * S + s) * head : (r * heads + h) * head;
                                rotate_head(X + o, Y + o, cs, sn, head, rot, inter);
                              }
                            }
                          });
  return Status::Ok();
}

// ------------------------------------------------------- MultiHeadAttention

// MultiHeadAttention's inputs, checked.
struct MhaInputs {
  const Tensor *q = nullptr, *k = nullptr, *v = nullptr, *bias = nullptr, *kpm = nullptr, *ab = nullptr;
  const Tensor *pk = nullptr, *pv = nullptr;
  int64_t B = 0, S = 0, D = 0, N = 0, H = 0, L = 0, Dv = 0, Hv = 0, P = 0, T = 0;
  bool kv4 = false;  // key/value given as [B, N, L, H]
};

Result<MhaInputs> mha_inputs(KernelContext& ctx) {
  const ir::Node& n = ctx.node();
  DLRT_ASSIGN_OR_RETURN(const Tensor* q, float_in(ctx, 0, "query", true));
  DLRT_ASSIGN_OR_RETURN(const Tensor* k, float_in(ctx, 1, "key", false));
  DLRT_ASSIGN_OR_RETURN(const Tensor* v, float_in(ctx, 2, "value", false));
  DLRT_ASSIGN_OR_RETURN(const Tensor* bias, float_in(ctx, 3, "bias", false));
  const Tensor* kpm = ctx.input(4);
  DLRT_ASSIGN_OR_RETURN(const Tensor* ab, float_in(ctx, 5, "attention_bias", false));
  DLRT_ASSIGN_OR_RETURN(const Tensor* pk, float_in(ctx, 6, "past_key", false));
  DLRT_ASSIGN_OR_RETURN(const Tensor* pv, float_in(ctx, 7, "past_value", false));
  const int64_t N = n.attr_int("num_heads", 0);
  if (N <= 0) return ctx.invalid("attribute num_heads must be positive");
  if (q->rank() == 5)
    return ctx.unsupported(
        "packed QKV [B, L, N, 3, H] is not supported (ONNX Runtime's CPU provider has no kernel for it)");
  if (k && k->rank() == 5)
    return ctx.unsupported(
        "packed KV [B, L, N, 2, H] is not supported (ONNX Runtime's CPU provider has no kernel for it)");
  if (ctx.input(8) || ctx.input(9))
    return ctx.unsupported(
        "past_sequence_length and cache_indirection (shared-buffer decoding, beam search) are not supported");
  if (ctx.output_requested(3)) return ctx.unsupported("the qk output is not supported");
  if (!k || !v) return ctx.invalid("key and value are required (packed QKV is not supported)");
  if (q->rank() != 3) return ctx.invalid("query must be [B, S, hidden], got " + shape_to_string(q->shape()));
  const int64_t B = q->dim(0), S = q->dim(1), D = q->dim(2);
  if (D % N)
    return ctx.invalid("query hidden size " + std::to_string(D) + " is not a multiple of num_heads " +
                       std::to_string(N));
  const int64_t H = D / N;
  if (H == 0) return ctx.invalid("the head size is 0 (query of shape " + shape_to_string(q->shape()) + ")");
  const bool kv4 = k->rank() == 4;
  int64_t L, Dv;
  if (kv4) {
    if (v->rank() != 4 || k->dim(0) != B || k->dim(1) != N || k->dim(3) != H || v->dim(0) != B || v->dim(1) != N ||
        v->dim(2) != k->dim(2))
      return ctx.invalid("key/value [B, N, L, H] must match the query's batch, heads and head size, got " +
                         shape_to_string(k->shape()) + " and " + shape_to_string(v->shape()));
    if (pk || pv) return ctx.invalid("past_key/past_value cannot be used with key/value of shape [B, N, L, H]");
    L = k->dim(2), Dv = v->dim(3) * N;
  } else {
    if (k->rank() != 3 || v->rank() != 3 || k->dim(0) != B || k->dim(2) != D || v->dim(0) != B ||
        v->dim(1) != k->dim(1) || v->dim(2) % N)
      return ctx.invalid("key/value must be [B, L, hidden] matching the query " + shape_to_string(q->shape()) +
                         ", got " + shape_to_string(k->shape()) + " and " + shape_to_string(v->shape()));
    L = k->dim(1), Dv = v->dim(2);
  }
  const int64_t Hv = Dv / N;
  if (bias && (bias->rank() != 1 || bias->dim(0) != D + D + Dv))
    return ctx.invalid("bias must have " + std::to_string(D + D + Dv) + " values, got " +
                       shape_to_string(bias->shape()));
  if ((pk != nullptr) != (pv != nullptr)) return ctx.invalid("past_key and past_value must be given together");
  int64_t P = 0;
  if (pk) {
    if (pk->rank() != 4 || pk->dim(0) != B || pk->dim(1) != N || pk->dim(3) != H || pv->rank() != 4 ||
        pv->dim(0) != B || pv->dim(1) != N || pv->dim(2) != pk->dim(2) || pv->dim(3) != Hv)
      return ctx.invalid("past_key/past_value must be [B, num_heads, P, head_size], got " +
                         shape_to_string(pk->shape()) + " and " + shape_to_string(pv->shape()));
    P = pk->dim(2);
  }
  const int64_t T = P + L;
  if (ab && (ab->rank() != 4 || (ab->dim(0) != B && ab->dim(0) != 1) || (ab->dim(1) != N && ab->dim(1) != 1) ||
             ab->dim(2) != S || ab->dim(3) != T))
    return ctx.invalid("attention_bias must be [B or 1, num_heads or 1, S, T] = [.., .., " + std::to_string(S) + ", " +
                       std::to_string(T) + "], got " + shape_to_string(ab->shape()));
  if (kpm) {
    if (kpm->dtype() != DType::kInt32) return ctx.invalid("key_padding_mask must be int32");
    const auto& s = kpm->shape();
    if (!((s.size() == 1 && s[0] == B) || (s.size() == 2 && s[0] == B && s[1] == T) ||
          (s.size() == 3 && s[0] == B && s[1] == S && s[2] == T)))
      return ctx.unsupported("key_padding_mask of shape " + shape_to_string(s) + " is not supported ([B], [B, " +
                             std::to_string(T) + "] or [B, S, " + std::to_string(T) + "])");
  }
  MhaInputs in;
  in.q = q, in.k = k, in.v = v, in.bias = bias, in.kpm = kpm, in.ab = ab, in.pk = pk, in.pv = pv;
  in.B = B, in.S = S, in.D = D, in.N = N, in.H = H, in.L = L, in.Dv = Dv, in.Hv = Hv, in.P = P, in.T = T;
  in.kv4 = kv4;
  return in;
}

// The additive mask [B, 1 or N, S, T] of key_padding_mask (mask_filter_value),
// ONNX Runtime's causal rows and attention_bias.
void mha_mask(const MhaInputs& in, bool causal, float filter, float* m) {
  const Tensor* kpm = in.kpm;
  const Tensor* ab = in.ab;
  const int64_t B = in.B, S = in.S, T = in.T, P = in.P, mh = ab ? in.N : 1;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < mh; ++h)
      for (int64_t i = 0; i < S; ++i) {
        float* row = m + ((b * mh + h) * S + i) * T;
        for (int64_t j = 0; j < T; ++j) {
          float val = 0.0f;
          if (kpm) {
            const auto& s = kpm->shape();
            const int32_t* km = kpm->data<int32_t>();
            const bool hidden = s.size() == 1   ? j >= km[b]
                                : s.size() == 2 ? km[b * T + j] == 0
                                                : km[(b * S + i) * T + j] == 0;
            if (hidden) val = filter;
          }
          // ONNX Runtime's CPU causal mask leaves the last query row unmasked.
          if (causal && i < S - 1 && j >= P + i + 1) val = kHidden;
          if (ab) {
            const int64_t src = (((ab->dim(0) == 1 ? 0 : b) * ab->dim(1) + (ab->dim(1) == 1 ? 0 : h)) * S + i) * T + j;
            val += ab->data<float>()[src];
          }
          row[j] = val;
        }
      }
}

Status multi_head_attention(KernelContext& ctx) {
  const ir::Node& n = ctx.node();
  DLRT_ASSIGN_OR_RETURN(MhaInputs in, mha_inputs(ctx));
  const Tensor *q = in.q, *k = in.k, *v = in.v, *bias = in.bias, *pk = in.pk, *pv = in.pv;
  const bool kv4 = in.kv4, mask_needed = in.kpm || in.ab;
  const bool with_bias_heads = in.ab != nullptr;
  const int64_t B = in.B, S = in.S, D = in.D, N = in.N, H = in.H, L = in.L, Dv = in.Dv, Hv = in.Hv, P = in.P, T = in.T;
  const bool causal = n.attr_int("unidirectional", 0) != 0;
  const float filter = n.attr_float("mask_filter_value", -10000.0f);
  const float scale = n.attr_float("scale", 0.0f);

  // Q (+ bias) stays [B, S, N, H]; K and V are [B, N, T, H] in the present
  // outputs (or scratch) when there is a past or a bias to add, else read
  // in place.
  thread_local AlignedScratch q_scratch, kv_scratch, mask_scratch;
  const float* Qd = q->data<float>();
  if (bias) {
    float* qb = q_scratch.get<float>(static_cast<size_t>(B * S * D), AlignedScratch::Growth::kByHalf);
    const float* bq = bias->data<float>();
    const float* src = Qd;
    ctx.pool().parallel_for(B * S, std::max<int64_t>(1, 8192 / std::max<int64_t>(D, 1)), [&](int64_t lo, int64_t hi) {
      for (int64_t r = lo; r < hi; ++r)
        for (int64_t i = 0; i < D; ++i) qb[r * D + i] = src[r * D + i] + bq[i];
    });
    Qd = qb;
  }
  attention::Problem p;
  p.B = B, p.H = N, p.Sq = S, p.Skv = T, p.D = H, p.Dv = Hv;
  p.scale = scale != 0.0f ? scale : static_cast<float>(1.0 / std::sqrt(static_cast<double>(H)));
  p.q = attention::View{Qd, S * D, H, D, 1};
  const bool want_pk = ctx.output_requested(1), want_pv = ctx.output_requested(2);
  float* kbuf = nullptr;
  float* vbuf = nullptr;
  if (want_pk) {
    DLRT_ASSIGN_OR_RETURN(Tensor * t, ctx.allocate_output_uninitialized(1, DType::kFloat32, {B, N, T, H}));
    kbuf = t->data<float>();
  }
  if (want_pv) {
    DLRT_ASSIGN_OR_RETURN(Tensor * t, ctx.allocate_output_uninitialized(2, DType::kFloat32, {B, N, T, Hv}));
    vbuf = t->data<float>();
  }
  const bool concat = kv4 ? false : (P > 0 || bias != nullptr);
  if ((concat || kbuf || vbuf) && (!kbuf || !vbuf)) {
    DLRT_RETURN_IF_ERROR(check_scratch(ctx, {B, N, T, H + Hv}, sizeof(float), "the keys and values [B, N, T, H + Hv]"));
    float* s = kv_scratch.get<float>(static_cast<size_t>(B * N * T * (H + Hv)), AlignedScratch::Growth::kByHalf);
    if (!kbuf) kbuf = s;
    if (!vbuf) vbuf = s + B * N * T * H;
  }
  if (kv4) {
    // Used as given (no bias); present = key / value.
    if (want_pk) std::memcpy(kbuf, k->data<float>(), sizeof(float) * static_cast<size_t>(k->size()));
    if (want_pv) std::memcpy(vbuf, v->data<float>(), sizeof(float) * static_cast<size_t>(v->size()));
    p.k = attention::View{k->data<float>(), N * L * H, L * H, H, 1};
    p.v = attention::View{v->data<float>(), N * L * Hv, L * Hv, Hv, 1};
  } else if (concat || want_pk || want_pv) {
    const float* bk = bias ? bias->data<float>() + D : nullptr;
    const float* bv = bias ? bias->data<float>() + 2 * D : nullptr;
    auto fill = [&](float* dst, const Tensor* past, const Tensor* cur, int64_t hd, const float* bb) {
      const int64_t width = N * hd;
      ctx.pool().parallel_for(B * N, 1, [&](int64_t lo, int64_t hi) {
        for (int64_t bh = lo; bh < hi; ++bh) {
          const int64_t b = bh / N, h = bh % N;
          float* o = dst + bh * T * hd;
          if (P) std::memcpy(o, past->data<float>() + bh * P * hd, sizeof(float) * static_cast<size_t>(P * hd));
          for (int64_t t = 0; t < L; ++t) {
            const float* src = cur->data<float>() + (b * L + t) * width + h * hd;
            float* d = o + (P + t) * hd;
            for (int64_t i = 0; i < hd; ++i) d[i] = src[i] + (bb ? bb[h * hd + i] : 0.0f);
          }
        }
      });
    };
    fill(kbuf, pk, k, H, bk);
    fill(vbuf, pv, v, Hv, bv);
    p.k = attention::View{kbuf, N * T * H, T * H, H, 1};
    p.v = attention::View{vbuf, N * T * Hv, T * Hv, Hv, 1};
  } else {
    p.k = attention::View{k->data<float>(), L * D, H, D, 1};
    p.v = attention::View{v->data<float>(), L * Dv, Hv, Dv, 1};
  }
  if (mask_needed || causal) {
    const int64_t mh = with_bias_heads ? N : 1;
    DLRT_RETURN_IF_ERROR(check_scratch(ctx, {B, mh, S, T}, sizeof(float), "the attention mask [B, 1 or N, S, T]"));
    float* m = mask_scratch.get<float>(static_cast<size_t>(B * mh * S * T), AlignedScratch::Growth::kByHalf);
    mha_mask(in, causal, filter, m);
    p.mask = m, p.mb = mh * S * T, p.mh = with_bias_heads ? S * T : 0, p.mq = T, p.mk = 1;
  }
  DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, DType::kFloat32, {B, S, Dv}));
  if (y->size() == 0) return Status::Ok();
  if (T == 0) return ctx.invalid("no keys to attend to (kv sequence length 0)");
  p.out = y->data<float>();
  p.ob = S * Dv, p.oh = Hv, p.os = Dv;
  run_attention(ctx.pool(), p, false);
  return Status::Ok();
}

}  // namespace

Status register_contrib_attention_kernels(KernelRegistry& r) {
  KernelDef fmm;
  fmm.op_type = "FusedMatMul";
  fmm.domain = kMsDomain;
  fmm.factory = [](const ir::Node&) -> Result<std::unique_ptr<OpKernel>> {
    return std::unique_ptr<OpKernel>(new PrepackedKernel<PackedOperand>(ms_fused_matmul, nullptr));
  };
  fmm.factory_with_constants = [](const ir::Node& node, const ConstantInputs& k) -> Result<std::unique_ptr<OpKernel>> {
    // Packed B only serves the plain (untransposed) case.
    if (node.attr_int("transB", 0) != 0 || node.attr_int("transBatchB", 0) != 0 || node.attr_int("transA", 0) != 0 ||
        node.attr_int("transBatchA", 0) != 0)
      return std::unique_ptr<OpKernel>(new PrepackedKernel<PackedOperand>(ms_fused_matmul, nullptr));
    DLRT_ASSIGN_OR_RETURN(auto pre, prepack_b(k(1), false));
    return std::unique_ptr<OpKernel>(new PrepackedKernel<PackedOperand>(ms_fused_matmul, std::move(pre)));
  };
  DLRT_RETURN_IF_ERROR(r.add(std::move(fmm)));
  DLRT_RETURN_IF_ERROR(r.add_fn("RotaryEmbedding", rotary_embedding, 1, 1000, kMsDomain));
  DLRT_RETURN_IF_ERROR(r.add_fn("MultiHeadAttention", multi_head_attention, 1, 1000, kMsDomain));
  return register_group_query_attention(r);
}

}  // namespace dlrt::cpu
