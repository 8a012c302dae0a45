// com.microsoft transformer ops, as ONNX Runtime's transformer optimizer and
// model builders write them (semantics of ONNX Runtime's contrib op schemas):
//   SkipLayerNormalization, SkipSimplifiedLayerNormalization: s = input + skip
//     (+ bias), LayerNorm(s) * gamma + beta, or RMS norm s / sqrt(mean(s^2) +
//     eps) * gamma; outputs mean / inv_std_var ([..., 1]) and s when asked.
//   SimplifiedLayerNormalization (ai.onnx domain in ONNX Runtime): the RMS norm
//     of X over axes [axis, rank) times scale.
//   EmbedLayerNormalization: word + position (+ segment) embeddings, layer
//     norm; mask_index = the number of non-zero mask values per row (the
//     sequence length without right padding), zeros without a mask.
//   Gelu, BiasGelu (erf), FastGelu (tanh approximation, optional bias),
//   QuickGelu (x * sigmoid(alpha x)), BiasAdd (X + bias + skip).
//   Attention: input · weights + bias split into Q, K, V, multi-head attention
//     with mask_index (1-D lengths, 2-D/3-D 0/1 masks, [B,1,M,M] 4-D), an
//     optional attention_bias and unidirectional (causal) masking; masked
//     scores get mask_filter_value added (-10000 by default). past
//     [2, B, N, P, H] (K and V) is put in front of the new keys and values,
//     present [2, B, N, P + S, H] is the whole; masks then cover the P + S
//     keys and causal row i sees keys [0, P + i + 1).
// float32 only (float16 graphs are converted to float32 by the optimiser's
// half-precision pass before they reach these kernels, where it applies).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>

#include "backends/cpu/kernel_families.h"
#include "backends/cpu/kernel_util.h"
#include "backends/cpu/kernels/activation_epilogue.h"
#include "backends/cpu/kernels/onnxruntime_math.h"
#include "backends/cpu/kernels/gemm.h"
#include "backends/cpu/ops/attention_run.h"
#include "backends/cpu/ops/layer_norm_row.h"
#include "backends/cpu/ops/matmul_impl.h"
#include "backends/cpu/ops/ms_attention.h"
#include "backends/cpu/ops/onnxruntime_norm_rows.h"
#include "backends/cpu/scratch.h"
#include "backends/cpu/scratch_check.h"
#include "ir/onnxruntime_order.h"

namespace dlrt::cpu {
namespace {

Result<const Tensor*> float_input(KernelContext& ctx, size_t i, const char* what) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* t, required_input(ctx, i));
  if (t->dtype() != DType::kFloat32)
    return ctx.unsupported(std::string(what) + " of dtype " + dtype_name(t->dtype()) + ": only float32 is supported");
  return t;
}

// One row of a layer norm (layer_norm_row's vector paths) or RMS norm
// (`rms`: statistics in double) of n values.
void norm_row(const float* x, int64_t n, double eps, bool rms, const float* gamma, const float* beta, float* y,
              float* mean_out, float* inv_out) {
  if (!rms) {
    double m = 0, iv = 0;
    layer_norm_row(x, gamma, beta, n, eps, y, &m, &iv);
    if (mean_out) *mean_out = static_cast<float>(m);
    if (inv_out) *inv_out = static_cast<float>(iv);
    return;
  }
  double mean = 0;
  if (!rms) {
    for (int64_t i = 0; i < n; ++i) mean += x[i];
    mean /= static_cast<double>(n);
  }
  double var = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double d = x[i] - mean;
    var += d * d;
  }
  var /= static_cast<double>(n);
  const double inv = 1.0 / std::sqrt(var + eps);
  for (int64_t i = 0; i < n; ++i) {
    const double v = (x[i] - mean) * inv * gamma[i] + (beta ? beta[i] : 0.0f);
    y[i] = static_cast<float>(v);
  }
  if (mean_out) *mean_out = static_cast<float>(mean);
  if (inv_out) *inv_out = static_cast<float>(inv);
}

Shape stat_shape(const Shape& s) {
  Shape r = s;
  if (!r.empty()) r.back() = 1;
  return r;
}

template <bool kRms>
Status skip_layer_norm(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* x, float_input(ctx, 0, "input"));
  DLRT_ASSIGN_OR_RETURN(const Tensor* skip, float_input(ctx, 1, "skip"));
  DLRT_ASSIGN_OR_RETURN(const Tensor* gamma, float_input(ctx, 2, "gamma"));
  // SkipLayerNormalization: gamma, beta, bias; the simplified one has no beta.
  const Tensor* beta = kRms ? nullptr : ctx.input(3);
  const Tensor* bias = ctx.input(kRms ? 3 : 4);
  if (x->rank() != 2 && x->rank() != 3)
    return ctx.invalid("input must have rank 2 or 3, got " + shape_to_string(x->shape()));
  const int64_t h = x->shape().back();
  const int64_t rows = h > 0 ? x->size() / h : 0;
  if (gamma->size() != h || (beta && beta->size() != h) || (bias && bias->size() != h))
    return ctx.invalid("gamma, beta and bias must have hidden_size " + std::to_string(h) + " values");
  // skip: the input's shape, or for a [B, S, H] input [1, S, H] or [S, H],
  // repeated over the batch (ONNX Runtime's shapes).
  const Shape& xs = x->shape();
  const Shape& ks = skip->shape();
  const bool tail = ks.size() >= 2 && ks[ks.size() - 1] == h && ks[ks.size() - 2] == xs[xs.size() - 2];
  if (ks != xs && !(xs.size() == 3 && tail && (ks.size() == 2 || (ks.size() == 3 && ks[0] == 1))))
    return ctx.invalid("skip " + shape_to_string(ks) + " does not match input " + shape_to_string(xs) +
                       " (the input's shape, or [1, S, H] or [S, H] for a [B, S, H] input)");
  const int64_t skip_rows = h > 0 ? skip->size() / h : 0;
  DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, DType::kFloat32, x->shape()));
  float* mean = nullptr;
  float* inv = nullptr;
  float* sum = nullptr;
  if (ctx.num_outputs() > 1 && ctx.output_requested(1)) {
    DLRT_ASSIGN_OR_RETURN(Tensor * t, ctx.allocate_output(1, DType::kFloat32, stat_shape(x->shape())));
    mean = t->data<float>();
  }
  if (ctx.num_outputs() > 2 && ctx.output_requested(2)) {
    DLRT_ASSIGN_OR_RETURN(Tensor * t, ctx.allocate_output(2, DType::kFloat32, stat_shape(x->shape())));
    inv = t->data<float>();
  }
  if (ctx.num_outputs() > 3 && ctx.output_requested(3)) {
    DLRT_ASSIGN_OR_RETURN(Tensor * t, ctx.allocate_output_uninitialized(3, DType::kFloat32, x->shape()));
    sum = t->data<float>();
  }
  const float* X = x->data<float>();
  const float* K = skip->data<float>();
  const float* G = gamma->data<float>();
  const float* Bt = beta ? beta->data<float>() : nullptr;
  const float* Bs = bias ? bias->data<float>() : nullptr;
  float* Y = y->data<float>();
  const double eps = ctx.node().attr_float("epsilon", 1e-12f);
  // Tagged nodes (ir/onnxruntime_order.h) normalise in ONNX Runtime's order.
  const bool ort = !kRms && ir::in_onnxruntime_order(ctx.node());
  ctx.pool().parallel_for(rows, std::max<int64_t>(1, 4096 / std::max<int64_t>(h, 1)), [&](int64_t lo, int64_t hi) {
    thread_local AlignedScratch scratch;
    float* row = scratch.get<float>(static_cast<size_t>(h * (ort ? kOrtRowBlock : 1)));
    auto add_row = [&](int64_t r, float* sr) {
      const float* xr = X + r * h;
      const float* kr = K + (r % skip_rows) * h;
      for (int64_t i = 0; i < h; ++i) sr[i] = xr[i] + kr[i] + (Bs ? Bs[i] : 0.0f);
    };
    for (int64_t r0 = lo; ort && r0 < hi; r0 += kOrtRowBlock) {
      const int64_t n = std::min(kOrtRowBlock, hi - r0);
      float* block = sum ? sum + r0 * h : row;
      for (int64_t r = r0; r < r0 + n; ++r) add_row(r, block + (r - r0) * h);
      float fm[kOrtRowBlock], fi[kOrtRowBlock];
      skip_layer_norm_rows_ort(block, n, G, Bt, h, static_cast<float>(eps), Y + r0 * h, fm, fi);
      if (mean) std::copy(fm, fm + n, mean + r0);
      if (inv) std::copy(fi, fi + n, inv + r0);
    }
    for (int64_t r = lo; !ort && r < hi; ++r) {
      float* sr = sum ? sum + r * h : row;
      add_row(r, sr);
      norm_row(sr, h, eps, kRms, G, Bt, Y + r * h, mean ? mean + r : nullptr, inv ? inv + r : nullptr);
    }
  });
  return Status::Ok();
}

// SimplifiedLayerNormalization: RMS norm over [axis, rank).
Status simplified_layer_norm(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* x, float_input(ctx, 0, "X"));
  DLRT_ASSIGN_OR_RETURN(const Tensor* scale, float_input(ctx, 1, "scale"));
  const int64_t rank = static_cast<int64_t>(x->rank());
  if (rank == 0) return ctx.invalid("X must have rank >= 1");
  DLRT_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx.node().attr_int("axis", -1), rank, ctx));
  int64_t inner = 1;
  for (int64_t d = axis; d < rank; ++d) inner *= x->dim(d);
  if (scale->size() != inner) return ctx.invalid("scale must have " + std::to_string(inner) + " values");
  const int64_t rows = inner > 0 ? x->size() / inner : 0;
  DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, DType::kFloat32, x->shape()));
  float* inv = nullptr;
  if (ctx.num_outputs() > 1 && ctx.output_requested(1)) {
    Shape ss = x->shape();
    for (int64_t d = axis; d < rank; ++d) ss[d] = 1;
    DLRT_ASSIGN_OR_RETURN(Tensor * t, ctx.allocate_output(1, DType::kFloat32, ss));
    inv = t->data<float>();
  }
  const double eps = ctx.node().attr_float("epsilon", 1e-5f);
  const float* X = x->data<float>();
  ctx.pool().parallel_for(rows, std::max<int64_t>(1, 4096 / std::max<int64_t>(inner, 1)), [&](int64_t lo, int64_t hi) {
    for (int64_t r = lo; r < hi; ++r)
      norm_row(X + r * inner, inner, eps, true, scale->data<float>(), nullptr, y->data<float>() + r * inner, nullptr,
               inv ? inv + r : nullptr);
  });
  return Status::Ok();
}

// Element i of an int32 or int64 tensor (the run path reads them in place).
int64_t id_at(const Tensor& t, int64_t i) {
  return t.dtype() == DType::kInt32 ? t.data<int32_t>()[i] : t.data<int64_t>()[i];
}

Status check_ids(KernelContext& ctx, const Tensor* t, const char* what) {
  if (t && t->dtype() != DType::kInt32 && t->dtype() != DType::kInt64)
    return ctx.invalid(std::string(what) + " must be int32 or int64");
  return Status::Ok();
}

Status embed_layer_norm(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* ids_t, required_input(ctx, 0));
  const Tensor* seg_t = ctx.input(1);
  DLRT_ASSIGN_OR_RETURN(const Tensor* word, float_input(ctx, 2, "word_embedding"));
  DLRT_ASSIGN_OR_RETURN(const Tensor* pos, float_input(ctx, 3, "position_embedding"));
  const Tensor* seg_emb = ctx.input(4);
  DLRT_ASSIGN_OR_RETURN(const Tensor* gamma, float_input(ctx, 5, "gamma"));
  DLRT_ASSIGN_OR_RETURN(const Tensor* beta, float_input(ctx, 6, "beta"));
  const Tensor* mask_t = ctx.input(7);
  const Tensor* pos_ids_t = ctx.input(8);
  if (ids_t->rank() != 2) return ctx.invalid("input_ids must be [batch, sequence], got " + shape_to_string(ids_t->shape()));
  if (word->rank() != 2 || pos->rank() != 2) return ctx.invalid("embeddings must be 2-D [rows, hidden]");
  const int64_t B = ids_t->dim(0), S = ids_t->dim(1), h = word->dim(1);
  if (pos->dim(1) != h || gamma->size() != h || beta->size() != h || (seg_emb && (seg_emb->rank() != 2 || seg_emb->dim(1) != h)))
    return ctx.invalid("embeddings, gamma and beta must share the hidden size " + std::to_string(h));
  if ((seg_t == nullptr) != (seg_emb == nullptr)) return ctx.invalid("segment_ids and segment_embedding go together");
  DLRT_RETURN_IF_ERROR(check_ids(ctx, ids_t, "input_ids"));
  DLRT_RETURN_IF_ERROR(check_ids(ctx, seg_t, "segment_ids"));
  DLRT_RETURN_IF_ERROR(check_ids(ctx, mask_t, "mask"));
  DLRT_RETURN_IF_ERROR(check_ids(ctx, pos_ids_t, "position_ids"));
  if (seg_t && seg_t->shape() != ids_t->shape()) return ctx.invalid("segment_ids must have input_ids' shape");
  if (mask_t && mask_t->shape() != ids_t->shape()) return ctx.invalid("mask must have input_ids' shape");
  if (pos_ids_t && (pos_ids_t->rank() != 2 || (pos_ids_t->dim(0) != B && pos_ids_t->dim(0) != 1) || pos_ids_t->dim(1) != S))
    return ctx.invalid("position_ids must be [batch, sequence] or [1, sequence]");
  DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, DType::kFloat32, {B, S, h}));
  float* esum = nullptr;
  if (ctx.num_outputs() > 2 && ctx.output_requested(2)) {
    DLRT_ASSIGN_OR_RETURN(Tensor * t, ctx.allocate_output_uninitialized(2, DType::kFloat32, {B, S, h}));
    esum = t->data<float>();
  }
  auto row_of = [&](const Tensor& table, int64_t id, const char* what) -> Result<const float*> {
    if (id < 0 || id >= table.dim(0))
      return ctx.invalid(std::string(what) + " index " + std::to_string(id) + " is outside [0, " + std::to_string(table.dim(0)) + ")");
    return table.data<float>() + id * h;
  };
  const double eps = ctx.node().attr_float("epsilon", 1e-12f);
  thread_local AlignedScratch scratch;
  float* s = scratch.get<float>(static_cast<size_t>(h));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < S; ++t) {
      const int64_t e = b * S + t;
      const int64_t p = pos_ids_t ? id_at(*pos_ids_t, pos_ids_t->dim(0) == 1 ? t : e) : t;
      DLRT_ASSIGN_OR_RETURN(const float* w, row_of(*word, id_at(*ids_t, e), "input_ids"));
      DLRT_ASSIGN_OR_RETURN(const float* pr, row_of(*pos, p, "position"));
      const float* sr = nullptr;
      if (seg_emb) {
        DLRT_ASSIGN_OR_RETURN(sr, row_of(*seg_emb, id_at(*seg_t, e), "segment_ids"));
      }
      for (int64_t i = 0; i < h; ++i) s[i] = w[i] + pr[i] + (sr ? sr[i] : 0.0f);
      if (esum) std::memcpy(esum + e * h, s, static_cast<size_t>(h) * sizeof(float));
      norm_row(s, h, eps, false, gamma->data<float>(), beta->data<float>(), y->data<float>() + e * h, nullptr, nullptr);
    }
  if (ctx.num_outputs() > 1 && ctx.output_requested(1)) {
    DLRT_ASSIGN_OR_RETURN(Tensor * mi, ctx.allocate_output(1, DType::kInt32, {B}));
    for (int64_t b = 0; b < B; ++b) {
      int64_t n = 0;  // without a mask ONNX Runtime writes zeros
      for (int64_t t = 0; t < S && mask_t; ++t) n += id_at(*mask_t, b * S + t) != 0;
      mi->data<int32_t>()[b] = static_cast<int32_t>(n);
    }
  }
  return Status::Ok();
}

// Elementwise: y = f(x (+ bias along the last dim) (+ skip)).
template <typename F>
Status biased_unary(KernelContext& ctx, const Tensor* bias, const Tensor* skip, F&& f) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* x, float_input(ctx, 0, "input"));
  const int64_t h = x->rank() ? x->shape().back() : 1;
  if (bias && (bias->dtype() != DType::kFloat32 || bias->size() != h))
    return ctx.invalid("bias must be float32 with the input's last dim (" + std::to_string(h) + ") values");
  if (skip && (skip->dtype() != DType::kFloat32 || skip->shape() != x->shape()))
    return ctx.invalid("skip must be float32 of the input's shape");
  DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, DType::kFloat32, x->shape()));
  const float* X = x->data<float>();
  const float* B = bias ? bias->data<float>() : nullptr;
  const float* S = skip ? skip->data<float>() : nullptr;
  float* Y = y->data<float>();
  const int64_t n = x->size();
  const int64_t rows = h > 0 ? n / h : 0;
  ctx.pool().parallel_for(rows, std::max<int64_t>(1, 8192 / std::max<int64_t>(h, 1)), [&](int64_t lo, int64_t hi) {
    for (int64_t r = lo; r < hi; ++r) {
      const float* xr = X + r * h;
      float* __restrict yr = Y + r * h;
      // One branch-free loop per combination, so each vectorises.
      if (B && S) {
        const float* sr = S + r * h;
        for (int64_t i = 0; i < h; ++i) yr[i] = xr[i] + B[i] + sr[i];
      } else if (B) {
        for (int64_t i = 0; i < h; ++i) yr[i] = xr[i] + B[i];
      } else if (S) {
        const float* sr = S + r * h;
        for (int64_t i = 0; i < h; ++i) yr[i] = xr[i] + sr[i];
      } else if (yr != xr) {
        std::copy(xr, xr + h, yr);
      }
      f(yr, h);
    }
  });
  return Status::Ok();
}

Status gelu_erf(KernelContext& ctx) {
  return biased_unary(ctx, nullptr, nullptr, [](float* v, int64_t n) { apply_activation(Activation{ActKind::kGelu}, v, n); });
}
// BiasGelu as ONNX Runtime computes it (nodes ir/onnxruntime_order.h tags):
// v = x + b, 0.5 v * (erf(v * float(1 / sqrt 2)) + 1), erf by MLAS's algorithm.
void bias_gelu_row_ort(float* v, int64_t n) {
  thread_local AlignedScratch scratch;
  float* half = scratch.get<float>(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    half[i] = v[i] * 0.5f;
    v[i] *= 0.70710677f;
  }
  erf_ort_f32(v, v, n);
  for (int64_t i = 0; i < n; ++i) v[i] = half[i] * (v[i] + 1.0f);
}

Status bias_gelu(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* b, required_input(ctx, 1));
  // (The bias runs along the last dim, which a scalar lacks: ONNX Runtime refuses it.)
  if (ctx.input(0) && ctx.input(0)->rank() == 0) return ctx.invalid("input must have rank 1 or more, got a scalar");
  if (ir::in_onnxruntime_order(ctx.node())) return biased_unary(ctx, b, nullptr, bias_gelu_row_ort);
  return biased_unary(ctx, b, nullptr, [](float* v, int64_t n) { apply_activation(Activation{ActKind::kGelu}, v, n); });
}
Status fast_gelu(KernelContext& ctx) {
  return biased_unary(ctx, ctx.input(1), nullptr,
                      [](float* v, int64_t n) { apply_activation(Activation{ActKind::kGeluTanh}, v, n); });
}
Status quick_gelu(KernelContext& ctx) {
  const float alpha = ctx.node().attr_float("alpha", 1.702f);
  return biased_unary(ctx, nullptr, nullptr, [alpha](float* v, int64_t n) {
    for (int64_t i = 0; i < n; ++i) v[i] = v[i] / (1.0f + std::exp(-alpha * v[i]));
  });
}
Status bias_add(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* b, required_input(ctx, 1));
  DLRT_ASSIGN_OR_RETURN(const Tensor* skip, required_input(ctx, 2));
  return biased_unary(ctx, b, skip, [](float*, int64_t) {});
}

// Writes the additive mask [B, Sq, T] of com.microsoft Attention's mask_index
// and unidirectional attribute into m (B * Sq * T floats).
Status attention_mask(KernelContext& ctx, const Tensor* mi, int64_t B, int64_t Sq, int64_t T, bool causal, float filter,
                      float* m) {
  std::fill(m, m + B * Sq * T, 0.0f);
  auto at = [&](int64_t b, int64_t i, int64_t j) -> float& { return m[(b * Sq + i) * T + j]; };
  if (mi) {
    DLRT_RETURN_IF_ERROR(check_ids(ctx, mi, "mask_index"));
    const auto& s = mi->shape();
    auto v = [&](int64_t e) { return id_at(*mi, e); };
    if (s.size() == 1 && (s[0] == B || s[0] == 2 * B)) {
      // Right padding: keys [end, T) masked; with 2B values, keys [0, start) too.
      // A negative end is refused as ONNX Runtime does (ends past T, and
      // starts out of range, are clamped as there).
      for (int64_t b = 0; b < B; ++b)
        if (v(b) < 0)
          return ctx.invalid("mask_index[" + std::to_string(b) + "] = " + std::to_string(v(b)) +
                             ": the end positions must not be negative");
      for (int64_t b = 0; b < B; ++b) {
        const int64_t end = std::clamp<int64_t>(v(b), 0, T);
        const int64_t start = s[0] == 2 * B ? std::clamp<int64_t>(v(B + b), 0, T) : 0;
        for (int64_t i = 0; i < Sq; ++i)
          for (int64_t j = 0; j < T; ++j)
            if (j >= end || j < start) at(b, i, j) = filter;
      }
    } else if (s.size() == 2 && s[0] == B && s[1] == T) {
      for (int64_t b = 0; b < B; ++b)
        for (int64_t i = 0; i < Sq; ++i)
          for (int64_t j = 0; j < T; ++j)
            if (v(b * T + j) == 0) at(b, i, j) = filter;
    } else if (s.size() == 3 && s[0] == B && s[1] == Sq && s[2] == T) {
      for (int64_t e = 0; e < B * Sq * T; ++e)
        if (v(e) == 0) m[e] = filter;
    } else if (s.size() == 4 && s[0] == B && s[1] == 1 && s[2] >= Sq && s[3] >= T) {
      // [B, 1, max, max]: the top-left Sq x T block.
      for (int64_t b = 0; b < B; ++b)
        for (int64_t i = 0; i < Sq; ++i)
          for (int64_t j = 0; j < T; ++j)
            if (v((b * s[2] + i) * s[3] + j) == 0) at(b, i, j) = filter;
    } else {
      return ctx.unsupported("mask_index of shape " + shape_to_string(s) + " is not supported (batch " +
                             std::to_string(B) + ", sequence " + std::to_string(Sq) + ")");
    }
  }
  if (causal)
    for (int64_t b = 0; b < B; ++b)
      for (int64_t i = 0; i < Sq; ++i)
        for (int64_t j = i + 1 + (T - Sq); j < T; ++j) at(b, i, j) += filter;
  return Status::Ok();
}

// `pre`: the weights packed when the kernel was made (constant weights), or null.
Status ms_attention(KernelContext& ctx, const PackedOperand* pre) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* x, float_input(ctx, 0, "input"));
  DLRT_ASSIGN_OR_RETURN(const Tensor* w, float_input(ctx, 1, "weights"));
  const Tensor* bias = ctx.input(2);
  const Tensor* mi = ctx.input(3);
  const Tensor* past = ctx.input(4);
  const Tensor* ab = ctx.input(5);
  const ir::Node& n = ctx.node();
  if (ctx.input(6)) return ctx.unsupported("past_sequence_length (a shared past/present buffer) is not supported");
  if (n.attr_int("do_rotary", 0) != 0) return ctx.unsupported("do_rotary is not supported");
  if (x->rank() != 3 || w->rank() != 2 || w->dim(0) != x->dim(2))
    return ctx.invalid("input must be [B, S, in_hidden] and weights [in_hidden, q + k + v hidden], got " +
                       shape_to_string(x->shape()) + " and " + shape_to_string(w->shape()));
  const int64_t H = n.attr_int("num_heads", 0);
  if (H <= 0) return ctx.invalid("attribute num_heads must be positive");
  const int64_t B = x->dim(0), S = x->dim(1), in_h = x->dim(2), N = w->dim(1);
  int64_t sizes[3] = {N / 3, N / 3, N / 3};
  const auto given = n.ints_of("qkv_hidden_sizes");
  if (!given.empty() && given.size() != 3) return ctx.invalid("qkv_hidden_sizes must have 3 values");
  if (given.size() == 3) std::copy(given.begin(), given.end(), sizes);
  // (Each size is compared with N before the sum, which could wrap to N.)
  if (sizes[0] <= 0 || sizes[2] <= 0 || sizes[0] > N || sizes[1] > N || sizes[2] > N ||
      sizes[0] + sizes[1] + sizes[2] != N || sizes[0] != sizes[1] || sizes[0] % H || sizes[2] % H)
    return ctx.invalid("weights' " + std::to_string(N) + " columns do not split into Q, K, V of num_heads " +
                       std::to_string(H) + " (qkv_hidden_sizes)");
  if (bias && (bias->dtype() != DType::kFloat32 || bias->size() != N)) return ctx.invalid("bias must have " + std::to_string(N) + " values");
  // QKV = input · weights + bias, [B * S, N]; the packed weights when they
  // are the ones this run got.
  thread_local AlignedScratch qkv_scratch;
  DLRT_RETURN_IF_ERROR(check_scratch(ctx, {B, S, N}, sizeof(float), "Q, K and V [B, S, q + k + v hidden]"));
  float* qkv = qkv_scratch.get<float>(static_cast<size_t>(B * S * N), AlignedScratch::Growth::kByHalf);
  const bool packed = pre && pre->packed && pre->source.data<float>() == w->data<float>();
  const SgemmOperand oa{x->data<float>(), in_h, false, nullptr, nullptr};
  const SgemmOperand ob{w->data<float>(), N, false, packed ? pre->packed.get() : nullptr, nullptr};
  GemmEpilogue ep;
  if (bias) ep.col_bias = bias->data<float>();  // one value per column
  DLRT_RETURN_IF_ERROR(sgemm_ex(B * S, N, in_h, 1.0f, oa, ob, 0.0f, qkv, N, &ep, &ctx.pool()));
  return ms_attention_from_qkv(ctx, qkv, B, S, H, sizes[0], sizes[2], mi, ab, past);
}

}  // namespace

Status ms_attention_from_qkv(KernelContext& ctx, const float* qkv, int64_t B, int64_t S, int64_t H, int64_t qk_hidden,
                             int64_t v_hidden, const Tensor* mi, const Tensor* ab, const Tensor* past) {
  const ir::Node& n = ctx.node();
  const int64_t N = 2 * qk_hidden + v_hidden;
  const int64_t D = qk_hidden / H, Dv = v_hidden / H;
  const bool want_present = ctx.num_outputs() > 1 && ctx.output_requested(1);
  int64_t P = 0;
  if (past || want_present) {
    if (qk_hidden != v_hidden) return ctx.invalid("past/present need Q, K and V of one hidden size (qkv_hidden_sizes)");
    if (past) {
      if (past->dtype() != DType::kFloat32 || past->rank() != 5 || past->dim(0) != 2 || past->dim(1) != B ||
          past->dim(2) != H || past->dim(4) != D)
        return ctx.invalid("past must be float32 [2, B, num_heads, P, head_size] = [2, " + std::to_string(B) + ", " +
                           std::to_string(H) + ", P, " + std::to_string(D) + "], got " +
                           shape_to_string(past->shape()));
      P = past->dim(3);
    }
    if (mi && mi->rank() == 4 && P > 0) return ctx.unsupported("a 4-D mask_index with past is not supported");
    if (ab && past) return ctx.unsupported("past with attention_bias is not supported (nor by ONNX Runtime)");
  }
  const int64_t T = P + S;  // keys: the past's, then this run's
  thread_local AlignedScratch mask_scratch;
  attention::Problem p;
  p.B = B, p.H = H, p.Sq = S, p.Skv = T, p.D = D, p.Dv = Dv;
  p.scale = n.has_attr("scale") ? n.attr_float("scale", 1.0f) : static_cast<float>(1.0 / std::sqrt(static_cast<double>(D)));
  attention::View base;
  base.sb = S * N, base.ss = N, base.sh = D, base.sd = 1;
  p.q = p.k = base;
  p.q.base = qkv;
  p.k.base = qkv + qk_hidden;
  p.v = base;
  p.v.sh = Dv;
  p.v.base = qkv + 2 * qk_hidden;
  if (past || want_present) {
    // K and V of the past and this run, [2, B, H, T, D]: the present output,
    // or scratch when it is not asked for.
    thread_local AlignedScratch kv_scratch;
    float* kv;
    if (want_present) {
      DLRT_ASSIGN_OR_RETURN(Tensor * pres, ctx.allocate_output_uninitialized(1, DType::kFloat32, {2, B, H, T, D}));
      kv = pres->data<float>();
    } else {
      DLRT_RETURN_IF_ERROR(check_scratch(ctx, {2, B, H, T, D}, sizeof(float), "the keys and values [2, B, N, T, H]"));
      kv = kv_scratch.get<float>(static_cast<size_t>(2 * B * H * T * D), AlignedScratch::Growth::kByHalf);
    }
    for (int64_t w = 0; w < 2; ++w)
      for (int64_t b = 0; b < B; ++b)
        for (int64_t hh = 0; hh < H; ++hh) {
          float* dst = kv + ((w * B + b) * H + hh) * T * D;
          if (P)
            std::memcpy(dst, past->data<float>() + ((w * B + b) * H + hh) * P * D,
                        sizeof(float) * static_cast<size_t>(P * D));
          for (int64_t t = 0; t < S; ++t)
            std::memcpy(dst + (P + t) * D, qkv + (b * S + t) * N + (w + 1) * qk_hidden + hh * D,
                        sizeof(float) * static_cast<size_t>(D));
        }
    p.k = attention::View{kv, H * T * D, T * D, D, 1};
    p.v = attention::View{kv + B * H * T * D, H * T * D, T * D, D, 1};
  }
  const float filter = n.attr_float("mask_filter_value", -10000.0f);
  const bool causal = n.attr_int("unidirectional", 0) != 0;
  // The additive mask: [B, S, S], or [B, H, S, S] with a per-head attention_bias.
  if (ab && (ab->dtype() != DType::kFloat32 || ab->rank() != 4 || (ab->dim(0) != B && ab->dim(0) != 1) ||
             (ab->dim(1) != H && ab->dim(1) != 1) || ab->dim(2) != S || ab->dim(3) != T))
    return ctx.invalid("attention_bias must be float32 [B or 1, num_heads or 1, S, " + std::to_string(T) + "], got " +
                       shape_to_string(ab->shape()));
  if (mi || causal || ab) {
    const int64_t heads = ab ? H : 1;
    DLRT_RETURN_IF_ERROR(check_scratch(ctx, {B, heads, S, T}, sizeof(float), "the attention mask"));
    float* m = mask_scratch.get<float>(static_cast<size_t>(B * heads * S * T), AlignedScratch::Growth::kByHalf);
    // The mask of mask_index first ([B, S, T] at the front), then spread
    // over the heads with the bias added.
    DLRT_RETURN_IF_ERROR(attention_mask(ctx, mi, B, S, T, causal, filter, m));
    if (ab) {
      // Spread [B, S, T] to [B, H, S, T] from the end so nothing is overwritten before it is read.
      for (int64_t b = B - 1; b >= 0; --b)
        for (int64_t hh = H - 1; hh >= 0; --hh)
          for (int64_t e = S * T - 1; e >= 0; --e) {
            const int64_t src = ((ab->dim(0) == 1 ? 0 : b) * ab->dim(1) + (ab->dim(1) == 1 ? 0 : hh)) * S * T + e;
            m[(b * H + hh) * S * T + e] = m[b * S * T + e] + ab->data<float>()[src];
          }
      p.mask = m, p.mb = H * S * T, p.mh = S * T, p.mq = T, p.mk = 1;
    } else {
      p.mask = m, p.mb = S * T, p.mh = 0, p.mq = T, p.mk = 1;
    }
  }
  DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, DType::kFloat32, {B, S, H * Dv}));
  if (y->size() == 0) return Status::Ok();
  p.out = y->data<float>();
  p.ob = S * H * Dv, p.oh = Dv, p.os = H * Dv;
  run_attention(ctx.pool(), p, false);
  return Status::Ok();
}

Status register_contrib_transformer_kernels(KernelRegistry& r) {
  DLRT_RETURN_IF_ERROR(r.add_fn("SkipLayerNormalization", skip_layer_norm<false>, 1, 1000, kMsDomain));
  DLRT_RETURN_IF_ERROR(r.add_fn("SkipSimplifiedLayerNormalization", skip_layer_norm<true>, 1, 1000, kMsDomain));
  // ONNX Runtime registers SimplifiedLayerNormalization in the ONNX domain
  // (opset 1 up); ONNX itself defines no op of that name.
  DLRT_RETURN_IF_ERROR(r.add_fn("SimplifiedLayerNormalization", simplified_layer_norm, 1, 1000, ""));
  DLRT_RETURN_IF_ERROR(r.add_fn("EmbedLayerNormalization", embed_layer_norm, 1, 1000, kMsDomain));
  DLRT_RETURN_IF_ERROR(r.add_fn("Gelu", gelu_erf, 1, 1000, kMsDomain));
  DLRT_RETURN_IF_ERROR(r.add_fn("BiasGelu", bias_gelu, 1, 1000, kMsDomain));
  DLRT_RETURN_IF_ERROR(r.add_fn("FastGelu", fast_gelu, 1, 1000, kMsDomain));
  DLRT_RETURN_IF_ERROR(r.add_fn("QuickGelu", quick_gelu, 1, 1000, kMsDomain));
  DLRT_RETURN_IF_ERROR(r.add_fn("BiasAdd", bias_add, 1, 1000, kMsDomain));
  KernelDef att;
  att.op_type = "Attention";
  att.domain = kMsDomain;
  att.factory = [](const ir::Node&) -> Result<std::unique_ptr<OpKernel>> {
    return std::unique_ptr<OpKernel>(new PrepackedKernel<PackedOperand>(ms_attention, nullptr));
  };
  att.factory_with_constants = [](const ir::Node&, const ConstantInputs& k) -> Result<std::unique_ptr<OpKernel>> {
    DLRT_ASSIGN_OR_RETURN(auto pre, prepack_b(k(1), false));
    return std::unique_ptr<OpKernel>(new PrepackedKernel<PackedOperand>(ms_attention, std::move(pre)));
  };
  return r.add(std::move(att));
}

}  // namespace dlrt::cpu
