// Softmax, LogSoftmax, Hardmax and the losses built on them:
// NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss.
//
// All work on an [outer, n, inner] view: before opset 13 the input is coerced
// to 2-D at `axis` (inner = 1, n = product of the trailing dims); from opset 13
// on, n is the one axis and inner the dims after it.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "backends/cpu/kernel_families.h"
#include "backends/cpu/kernel_util.h"
#include "backends/cpu/kernels/isa.h"
#include "backends/cpu/kernels/onnxruntime_math.h"
#include "backends/cpu/kernels/rows_vec.h"
#include "ir/onnxruntime_order.h"

namespace dlrt::cpu {
namespace {

enum class SoftmaxKind { kSoftmax, kLogSoftmax, kHardmax };

// Element value as double (float16/bfloat16 go through float).
template <typename T>
inline double to_d(T v) {
  if constexpr (std::is_same_v<T, double>) return v;
  else return static_cast<float>(v);
}

template <typename T>
inline T from_d(double v) {
  if constexpr (std::is_same_v<T, double>) return v;
  else return T(static_cast<float>(v));
}

struct AxisView {
  int64_t outer = 1, n = 1, inner = 1;
};

Result<AxisView> softmax_view(KernelContext& ctx, const Tensor& x) {
  const int64_t rank = static_cast<int64_t>(x.rank());
  const bool legacy = ctx.opset() < 13;
  int64_t axis = ctx.node().attr_int("axis", legacy ? 1 : -1);
  AxisView v;
  if (rank == 0) {
    // A scalar is a softmax over one element.
    if (axis != 0 && axis != -1) return ctx.invalid("axis " + std::to_string(axis) + " is out of range for a scalar");
    return v;
  }
  if (legacy) {
    // Axis may equal rank here (everything in the outer part).
    int64_t a = axis < 0 ? axis + rank : axis;
    if (a < 0 || a > rank) return ctx.invalid("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
    v.outer = 1;
    v.n = 1;
    for (int64_t d = 0; d < rank; ++d) (d < a ? v.outer : v.n) *= x.dim(d);
    return v;
  }
  DLRT_ASSIGN_OR_RETURN(int64_t a, normalize_axis(axis, rank, ctx));
  for (int64_t d = 0; d < rank; ++d) {
    if (d < a) v.outer *= x.dim(d);
    else if (d == a) v.n = x.dim(d);
    else v.inner *= x.dim(d);
  }
  return v;
}

// Columns [i0, i1) of one [n, inner] slab; computes in double per column so
// float16 inputs keep accuracy. The per-column buffers are per thread.
template <typename T>
void softmax_slab(SoftmaxKind kind, const T* in, T* out, int64_t n, int64_t inner, int64_t i0, int64_t i1) {
  if (n == 0 || i1 <= i0) return;
  static thread_local std::vector<double> mx, sum;
  static thread_local std::vector<int64_t> arg;
  const size_t w = static_cast<size_t>(i1 - i0);
  mx.assign(w, -std::numeric_limits<double>::infinity());
  arg.assign(w, 0);
  in += i0;
  out += i0;
  const int64_t cols = i1 - i0;
  for (int64_t r = 0; r < n; ++r) {
    const T* row = in + r * inner;
    for (int64_t i = 0; i < cols; ++i) {
      double x = to_d(row[i]);
      if (r == 0 || x > mx[i]) { mx[i] = x; arg[i] = r; }
    }
  }
  if (kind == SoftmaxKind::kHardmax) {
    for (int64_t r = 0; r < n; ++r)
      for (int64_t i = 0; i < cols; ++i) out[r * inner + i] = T(arg[i] == r ? 1.0f : 0.0f);
    return;
  }
  sum.assign(w, 0.0);
  for (int64_t r = 0; r < n; ++r) {
    const T* row = in + r * inner;
    for (int64_t i = 0; i < cols; ++i) sum[i] += std::exp(to_d(row[i]) - mx[i]);
  }
  if (kind == SoftmaxKind::kSoftmax) {
    for (int64_t i = 0; i < cols; ++i) sum[i] = 1.0 / sum[i];
    for (int64_t r = 0; r < n; ++r) {
      const T* row = in + r * inner;
      T* o = out + r * inner;
      for (int64_t i = 0; i < cols; ++i)
        o[i] = from_d<T>(std::exp(to_d(row[i]) - mx[i]) * sum[i]);
    }
  } else {
    for (int64_t i = 0; i < cols; ++i) sum[i] = std::log(sum[i]);
    for (int64_t r = 0; r < n; ++r) {
      const T* row = in + r * inner;
      T* o = out + r * inner;
      for (int64_t i = 0; i < cols; ++i) o[i] = from_d<T>((to_d(row[i]) - mx[i]) - sum[i]);
    }
  }
}

// float32 fast path: contiguous rows (inner == 1) without double temporaries.
void softmax_rows_f32(SoftmaxKind kind, const float* in, float* out, int64_t n) {
  float mx = in[0];
  for (int64_t r = 1; r < n; ++r) mx = std::max(mx, in[r]);
  double sum = 0;
  if (kind == SoftmaxKind::kSoftmax) {
    for (int64_t r = 0; r < n; ++r) {
      float e = std::exp(in[r] - mx);
      out[r] = e;
      sum += e;
    }
    const float inv = static_cast<float>(1.0 / sum);
    for (int64_t r = 0; r < n; ++r) out[r] *= inv;
  } else {
    for (int64_t r = 0; r < n; ++r) sum += std::exp(static_cast<double>(in[r] - mx));
    // (x - max) - log(sum): folding max into the shift would lose precision for large inputs.
    const float lse = static_cast<float>(std::log(sum));
    for (int64_t r = 0; r < n; ++r) out[r] = (in[r] - mx) - lse;
  }
}

// Columns per task of an [n, inner] slab (inner > 1): about kTaskElems
// elements a task, a multiple of 64 (softmax_cols_vec's columns at 512 bits), the slab's
// columns split evenly.
constexpr int64_t kTaskElems = 16384;

int64_t column_chunk(int64_t n, int64_t inner) {
  const int64_t want = std::max<int64_t>(64, kTaskElems / std::max<int64_t>(1, n));
  const int64_t chunks = (inner + want - 1) / want;
  const int64_t per = (inner + chunks - 1) / chunks;
  return std::min(inner, (per + 63) / 64 * 64);
}

template <SoftmaxKind kKind>
Status softmax_kernel(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
  DLRT_ASSIGN_OR_RETURN(AxisView v, softmax_view(ctx, *x));
  // Every element is written (no zero fill): in a planned run y may be x's own buffer.
  DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, x->dtype(), x->shape()));
  if (x->size() == 0) return Status::Ok();
  Status s = dispatch_float(x->dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    const T* src = x->data<T>();
    T* dst = y->data<T>();
    const int64_t slab = v.n * v.inner;
    const bool vec = cpu_has_simd_kernels();  // rows_vec.h at simd_width()
    const SimdWidth width = simd_width();
    constexpr bool kLog = kKind == SoftmaxKind::kLogSoftmax;
    ThreadPool& pool = ctx.pool();
    if (v.inner > 1) {
      // Reduce along n with the contiguous inner dimension across lanes; the
      // tasks are (outer, column chunk) pairs.
      const int64_t chunk = column_chunk(v.n, v.inner);
      const int64_t per_slab = (v.inner + chunk - 1) / chunk;
      const int64_t tasks = v.outer * per_slab;
      const int64_t grain = std::max<int64_t>(1, kTaskElems / std::max<int64_t>(1, v.n * chunk));
      auto body = [&](int64_t b, int64_t e) {
        for (int64_t t = b; t < e; ++t) {
          const int64_t o = t / per_slab, i0 = (t % per_slab) * chunk, i1 = std::min(v.inner, i0 + chunk);
          const T* in = src + o * slab;
          T* out = dst + o * slab;
          if constexpr (std::is_same_v<T, float>) {
            if (kKind != SoftmaxKind::kHardmax && vec) {
              const int64_t step = softmax_cols_step(width);
              for (int64_t i = i0; i < i1; i += step)
                softmax_cols_vec(width, kLog, in + i, out + i, v.n, v.inner, std::min<int64_t>(step, i1 - i));
              continue;
            }
          }
          softmax_slab<T>(kKind, in, out, v.n, v.inner, i0, i1);
        }
      };
      if (tasks <= grain) body(0, tasks);
      else pool.parallel_for(tasks, pool.balanced_grain(tasks, grain), body);
      return Status::Ok();
    }
    const int64_t grain = std::max<int64_t>(1, kTaskElems / std::max<int64_t>(1, slab));
    // Tagged nodes (ir/onnxruntime_order.h) compute in ONNX Runtime's order.
    const bool ort = kKind == SoftmaxKind::kSoftmax && ir::in_onnxruntime_order(ctx.node());
    pool.parallel_for(v.outer, grain, [&](int64_t b, int64_t e) {
      for (int64_t o = b; o < e; ++o) {
        if constexpr (std::is_same_v<T, float>) {
          if (ort) {
            softmax_row_ort(src + o * slab, dst + o * slab, v.n);
            continue;
          }
          if (kKind != SoftmaxKind::kHardmax) {
            if (vec) {
              softmax_row_vec(width, kLog, src + o * slab, dst + o * slab, v.n);
              continue;
            }
            softmax_rows_f32(kKind, src + o * slab, dst + o * slab, v.n);
            continue;
          }
        }
        softmax_slab<T>(kKind, src + o * slab, dst + o * slab, v.n, 1, 0, 1);
      }
    });
    return Status::Ok();
  });
  if (!s.ok() && s.code() == StatusCode::kUnsupported) return ctx.unsupported(s.message());
  return s;
}

// ---- losses ----

enum class LossReduction { kNone, kSum, kMean };

Result<LossReduction> parse_loss_reduction(const KernelContext& ctx) {
  std::string r = ctx.node().attr_string("reduction", "mean");
  if (r == "none") return LossReduction::kNone;
  if (r == "sum") return LossReduction::kSum;
  if (r == "mean") return LossReduction::kMean;
  return ctx.invalid("reduction must be 'none', 'sum' or 'mean', got '" + r + "'");
}

// Checks scores [N, C, d...] against targets [N, d...] and returns (N, C, D).
Status check_loss_shapes(const KernelContext& ctx, const Tensor& scores, const Tensor& target, const Tensor* weight,
                         int64_t& N, int64_t& C, int64_t& D) {
  if (scores.rank() < 2) return ctx.invalid("input must have shape [N, C, d1, ...], got " + shape_to_string(scores.shape()));
  if (target.rank() != scores.rank() - 1) return ctx.invalid("target shape " + shape_to_string(target.shape()) + " does not match input shape " + shape_to_string(scores.shape()));
  N = scores.dim(0);
  C = scores.dim(1);
  D = 1;
  if (target.dim(0) != N) return ctx.invalid("target shape " + shape_to_string(target.shape()) + " does not match input shape " + shape_to_string(scores.shape()));
  for (size_t d = 2; d < scores.rank(); ++d) {
    if (target.dim(d - 1) != scores.dim(d)) return ctx.invalid("target shape " + shape_to_string(target.shape()) + " does not match input shape " + shape_to_string(scores.shape()));
    D *= scores.dim(d);
  }
  if (target.dtype() != DType::kInt32 && target.dtype() != DType::kInt64) return ctx.invalid("target must be int32 or int64");
  if (weight) {
    if (weight->rank() != 1 || weight->dim(0) != C) return ctx.invalid("weight must have shape [C] = [" + std::to_string(C) + "]");
    if (weight->dtype() != scores.dtype()) return ctx.invalid("weight dtype must match the input dtype");
  }
  return Status::Ok();
}

// Loss from log-probabilities `logp` ([N, C, D], as double): per element
// -logp[n, t, d] * w[t], with ignored targets contributing 0 to both the sum
// and the weight total.
template <typename T>
Status nll_from_logp(KernelContext& ctx, const std::vector<double>& logp, const Tensor& target, const Tensor* weight,
                     int64_t N, int64_t C, int64_t D, LossReduction red, DType out_dtype, const Shape& target_shape) {
  const bool has_ii = ctx.node().has_attr("ignore_index");
  const int64_t ii = ctx.node().attr_int("ignore_index", 0);
  const int64_t total = N * D;
  std::vector<double> loss(static_cast<size_t>(total), 0.0);
  double wsum = 0, lsum = 0;
  for (int64_t n = 0; n < N; ++n) {
    for (int64_t d = 0; d < D; ++d) {
      const int64_t k = n * D + d;
      int64_t t = target.dtype() == DType::kInt64 ? target.data<int64_t>()[k] : target.data<int32_t>()[k];
      if (has_ii && t == ii) continue;
      if (t < 0 || t >= C)
        return ctx.invalid("target value " + std::to_string(t) + " is out of range [0, " + std::to_string(C) + ")");
      double w = weight ? to_d(weight->data<T>()[t]) : 1.0;
      double l = -logp[(n * C + t) * D + d] * w;
      loss[k] = l;
      lsum += l;
      wsum += w;
    }
  }
  Tensor* out;
  if (red == LossReduction::kNone) {
    DLRT_ASSIGN_OR_RETURN(out, ctx.allocate_output(0, out_dtype, target_shape));
    for (int64_t k = 0; k < total; ++k) out->data<T>()[k] = from_d<T>(loss[k]);
  } else {
    DLRT_ASSIGN_OR_RETURN(out, ctx.allocate_output(0, out_dtype, {}));
    double v = red == LossReduction::kSum ? lsum : lsum / wsum;  // 0/0 gives NaN, as the reference does
    out->data<T>()[0] = from_d<T>(v);
  }
  return Status::Ok();
}

Status nll_loss_kernel(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
  DLRT_ASSIGN_OR_RETURN(const Tensor* target, required_input(ctx, 1));
  const Tensor* weight = ctx.input(2);
  DLRT_ASSIGN_OR_RETURN(LossReduction red, parse_loss_reduction(ctx));
  int64_t N, C, D;
  DLRT_RETURN_IF_ERROR(check_loss_shapes(ctx, *x, *target, weight, N, C, D));
  Status s = dispatch_float(x->dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    std::vector<double> logp(static_cast<size_t>(x->size()));
    for (int64_t i = 0; i < x->size(); ++i) logp[i] = to_d(x->data<T>()[i]);
    return nll_from_logp<T>(ctx, logp, *target, weight, N, C, D, red, x->dtype(), target->shape());
  });
  if (!s.ok() && s.code() == StatusCode::kUnsupported) return ctx.unsupported(s.message());
  return s;
}

Status sce_loss_kernel(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
  DLRT_ASSIGN_OR_RETURN(const Tensor* target, required_input(ctx, 1));
  const Tensor* weight = ctx.input(2);
  DLRT_ASSIGN_OR_RETURN(LossReduction red, parse_loss_reduction(ctx));
  int64_t N, C, D;
  DLRT_RETURN_IF_ERROR(check_loss_shapes(ctx, *x, *target, weight, N, C, D));
  Status s = dispatch_float(x->dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    const T* src = x->data<T>();
    std::vector<double> logp(static_cast<size_t>(x->size()));
    // log-softmax over C for every (n, d).
    for (int64_t n = 0; n < N; ++n) {
      for (int64_t d = 0; d < D; ++d) {
        double mx = -std::numeric_limits<double>::infinity();
        for (int64_t c = 0; c < C; ++c) mx = std::max(mx, to_d(src[(n * C + c) * D + d]));
        double s = 0;
        for (int64_t c = 0; c < C; ++c) s += std::exp(to_d(src[(n * C + c) * D + d]) - mx);
        const double shift = mx + std::log(s);
        for (int64_t c = 0; c < C; ++c) {
          const int64_t k = (n * C + c) * D + d;
          logp[k] = to_d(src[k]) - shift;
        }
      }
    }
    DLRT_RETURN_IF_ERROR(nll_from_logp<T>(ctx, logp, *target, weight, N, C, D, red, x->dtype(), target->shape()));
    if (ctx.num_outputs() > 1 && ctx.output_requested(1)) {
      DLRT_ASSIGN_OR_RETURN(Tensor * lp, ctx.allocate_output(1, x->dtype(), x->shape()));
      for (int64_t k = 0; k < x->size(); ++k) lp->data<T>()[k] = from_d<T>(logp[k]);
    }
    return Status::Ok();
  });
  if (!s.ok() && s.code() == StatusCode::kUnsupported) return ctx.unsupported(s.message());
  return s;
}

}  // namespace

Status register_softmax_kernels(KernelRegistry& r) {
  DLRT_RETURN_IF_ERROR(r.add_fn("Softmax", softmax_kernel<SoftmaxKind::kSoftmax>, 1));
  DLRT_RETURN_IF_ERROR(r.add_fn("LogSoftmax", softmax_kernel<SoftmaxKind::kLogSoftmax>, 1));
  DLRT_RETURN_IF_ERROR(r.add_fn("Hardmax", softmax_kernel<SoftmaxKind::kHardmax>, 1));
  // Every path reads a row's (or column block's) inputs before it writes those
  // outputs and reads no input after writing, so the output may take X's buffer.
  for (const char* op : {"Softmax", "LogSoftmax", "Hardmax"}) DLRT_RETURN_IF_ERROR(r.set_in_place_inputs(op, 1));
  DLRT_RETURN_IF_ERROR(r.add_fn("NegativeLogLikelihoodLoss", nll_loss_kernel, 12));
  DLRT_RETURN_IF_ERROR(r.add_fn("SoftmaxCrossEntropyLoss", sce_loss_kernel, 12));
  return Status::Ok();
}

}  // namespace dlrt::cpu
