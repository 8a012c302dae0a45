// Normalization ops: BatchNormalization (inference), InstanceNormalization,
// LayerNormalization, GroupNormalization, LpNormalization,
// MeanVarianceNormalization and LRN. Statistics accumulate in double;
// float16/bfloat16 inputs compute in float32.
#include <algorithm>
#include <cmath>

#include "backends/cpu/kernel_families.h"
#include "backends/cpu/kernel_util.h"
#include "backends/cpu/kernels/isa.h"
#include "backends/cpu/kernels/rows_vec.h"
#include "backends/cpu/ops/layer_norm_row.h"
#include "backends/cpu/ops/nn_util.h"
#include "backends/cpu/ops/onnxruntime_norm_rows.h"
#include "ir/onnxruntime_order.h"

namespace dlrt::cpu {
namespace {

// Runs body<T> for float32/float64 inputs, converting float16/bfloat16 via float32.
#define DLRT_FLOAT_KERNEL_EX(name, impl, float_outputs_from)                                  \
  Status name(KernelContext& ctx) {                                                            \
    DLRT_ASSIGN_OR_RETURN(const Tensor* x_, required_input(ctx, 0));                           \
    if (nn::is_half(x_->dtype())) return nn::run_as_float32(ctx, name, float_outputs_from);    \
    if (x_->dtype() == DType::kFloat32) return impl<float>(ctx);                               \
    if (x_->dtype() == DType::kFloat64) return impl<double>(ctx);                              \
    return ctx.unsupported(std::string(ctx.node().op_type) + " on " + dtype_name(x_->dtype()) + \
                           " is not supported");                                               \
  }
#define DLRT_FLOAT_KERNEL(name, impl) DLRT_FLOAT_KERNEL_EX(name, impl, SIZE_MAX)

// A per-channel parameter vector of length C (read as T), or an error.
template <typename T>
Result<const T*> channel_param(const KernelContext& ctx, size_t i, const char* name, int64_t count) {
  const Tensor* t = ctx.input(i);
  if (!t) return ctx.invalid(std::string("input ") + name + " is missing");
  if (t->dtype() != dtype_of<T>) return ctx.invalid(std::string(name) + " must have the same dtype as X");
  if (t->size() != count)
    return ctx.invalid(std::string(name) + " has " + std::to_string(t->size()) + " elements, expected " +
                       std::to_string(count));
  return t->data<T>();
}

template <typename T>
Status batch_norm_impl(KernelContext& ctx) {
  const Tensor* x = ctx.input(0);
  const ir::Node& n = ctx.node();
  if (n.attr_int("training_mode", 0) != 0)
    return ctx.unsupported("training_mode=1 is not supported (inference only)");
  for (size_t i = 1; i < ctx.num_outputs(); ++i)
    if (ctx.output_requested(i)) return ctx.unsupported("running statistics outputs (training) are not supported");
  if (x->rank() < 2) return ctx.invalid("X must have rank >= 2");
  const int64_t N = x->dim(0), C = x->dim(1);
  const int64_t inner = N * C > 0 ? x->size() / (N * C) : 0;
  // opset < 9 with spatial=0 normalises per (C, D1..Dn) element instead of per channel.
  const bool per_element = n.opset < 9 && n.attr_int("spatial", 1) == 0;
  const int64_t params = per_element ? C * inner : C;
  DLRT_ASSIGN_OR_RETURN(const T* scale, channel_param<T>(ctx, 1, "scale", params));
  DLRT_ASSIGN_OR_RETURN(const T* bias, channel_param<T>(ctx, 2, "B", params));
  DLRT_ASSIGN_OR_RETURN(const T* mean, channel_param<T>(ctx, 3, "input_mean", params));
  DLRT_ASSIGN_OR_RETURN(const T* var, channel_param<T>(ctx, 4, "input_var", params));
  const double eps = n.attr_float("epsilon", 1e-5f);
  DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), x->shape()));
  // y = x * a + b with a = scale / sqrt(var + eps), b = B - mean * a.
  std::vector<T> a(params), b(params);
  for (int64_t c = 0; c < params; ++c) {
    const double s = static_cast<double>(scale[c]) / std::sqrt(static_cast<double>(var[c]) + eps);
    a[c] = static_cast<T>(s);
    b[c] = static_cast<T>(static_cast<double>(bias[c]) - static_cast<double>(mean[c]) * s);
  }
  const T* X = x->data<T>();
  T* Y = y->data<T>();
  // Planes per chunk: at least ~16K elements (small planes would not pay for a dispatch).
  ctx.pool().parallel_for(N * C, ctx.pool().balanced_grain(N * C, std::max<int64_t>(1, 16384 / std::max<int64_t>(inner, 1))), [&](int64_t lo, int64_t hi) {
    for (int64_t p = lo; p < hi; ++p) {
      const T* xp = X + p * inner;
      T* yp = Y + p * inner;
      if (per_element) {
        const int64_t base = (p % C) * inner;
        for (int64_t i = 0; i < inner; ++i) yp[i] = xp[i] * a[base + i] + b[base + i];
      } else {
        const T av = a[p % C], bv = b[p % C];
        for (int64_t i = 0; i < inner; ++i) yp[i] = xp[i] * av + bv;
      }
    }
  });
  return Status::Ok();
}
DLRT_FLOAT_KERNEL(batch_norm_compute, batch_norm_impl)

// Mean and 1/sqrt(var + eps) of n contiguous values (two passes for accuracy).
template <typename T>
void moments(const T* x, int64_t n, double eps, double* mean_out, double* inv_std_out) {
  double s = 0;
  for (int64_t i = 0; i < n; ++i) s += static_cast<double>(x[i]);
  const double mean = n > 0 ? s / static_cast<double>(n) : 0;
  double v = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double d = static_cast<double>(x[i]) - mean;
    v += d * d;
  }
  const double var = n > 0 ? v / static_cast<double>(n) : 0;
  *mean_out = mean;
  *inv_std_out = 1.0 / std::sqrt(var + eps);
}

template <typename T>
Status instance_norm_impl(KernelContext& ctx) {
  const Tensor* x = ctx.input(0);
  if (x->rank() < 3) return ctx.invalid("X must have rank >= 3");
  const int64_t N = x->dim(0), C = x->dim(1);
  const int64_t inner = N * C > 0 ? x->size() / (N * C) : 0;
  DLRT_ASSIGN_OR_RETURN(const T* scale, channel_param<T>(ctx, 1, "scale", C));
  DLRT_ASSIGN_OR_RETURN(const T* bias, channel_param<T>(ctx, 2, "B", C));
  const double eps = ctx.node().attr_float("epsilon", 1e-5f);
  DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), x->shape()));
  const T* X = x->data<T>();
  T* Y = y->data<T>();
  ctx.pool().parallel_for(N * C, ctx.pool().balanced_grain(N * C, std::max<int64_t>(1, 8192 / std::max<int64_t>(inner, 1))), [&](int64_t lo, int64_t hi) {
    for (int64_t p = lo; p < hi; ++p) {
      double mean, inv;
      moments(X + p * inner, inner, eps, &mean, &inv);
      const double a = inv * static_cast<double>(scale[p % C]);
      const double b = static_cast<double>(bias[p % C]) - mean * a;
      for (int64_t i = 0; i < inner; ++i) Y[p * inner + i] = static_cast<T>(static_cast<double>(X[p * inner + i]) * a + b);
    }
  });
  return Status::Ok();
}
DLRT_FLOAT_KERNEL(instance_norm_compute, instance_norm_impl)

// Offsets of a parameter tensor broadcast (numpy rules) over a trailing shape.
Result<std::vector<int64_t>> broadcast_index(const KernelContext& ctx, const Tensor& p, const Shape& tail,
                                             const char* name) {
  if (p.rank() > tail.size())
    return ctx.invalid(std::string(name) + " of shape " + shape_to_string(p.shape()) +
                       " does not broadcast to the normalized shape " + shape_to_string(tail));
  const size_t off = tail.size() - p.rank();
  std::vector<int64_t> strides(tail.size(), 0);
  int64_t st = 1;
  for (size_t d = tail.size(); d-- > off;) {
    const int64_t pd = p.dim(d - off);
    if (pd != 1 && pd != tail[d])
      return ctx.invalid(std::string(name) + " of shape " + shape_to_string(p.shape()) +
                         " does not broadcast to the normalized shape " + shape_to_string(tail));
    strides[d] = pd == 1 ? 0 : st;
    st *= pd;
  }
  const int64_t n = element_count(tail);
  std::vector<int64_t> idx(static_cast<size_t>(n));
  std::vector<int64_t> pos(tail.size(), 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t o = 0;
    for (size_t d = 0; d < tail.size(); ++d) o += pos[d] * strides[d];
    idx[i] = o;
    for (size_t d = tail.size(); d-- > 0;) {
      if (++pos[d] < tail[d]) break;
      pos[d] = 0;
    }
  }
  return idx;
}

template <typename T>
Status layer_norm_impl(KernelContext& ctx) {
  const Tensor* x = ctx.input(0);
  const ir::Node& n = ctx.node();
  const int64_t rank = static_cast<int64_t>(x->rank());
  if (rank == 0) return ctx.invalid("X must have rank >= 1");
  DLRT_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(n.attr_int("axis", -1), rank, ctx));
  const double eps = n.attr_float("epsilon", 1e-5f);
  const Shape tail(x->shape().begin() + axis, x->shape().end());
  const int64_t inner = element_count(tail);
  const int64_t outer = inner > 0 ? x->size() / inner : element_count(std::span(x->shape().data(), axis));
  DLRT_ASSIGN_OR_RETURN(const Tensor* scale_t, required_input(ctx, 1));
  const Tensor* bias_t = ctx.input(2);
  if (scale_t->dtype() != x->dtype() || (bias_t && bias_t->dtype() != x->dtype()))
    return ctx.invalid("Scale and B must have the same dtype as X");
  // Fast path when Scale/B cover the normalized shape exactly; otherwise broadcast.
  std::vector<int64_t> s_idx, b_idx;
  const bool s_full = scale_t->size() == inner;
  const bool b_full = !bias_t || bias_t->size() == inner;
  if (!s_full) {
    DLRT_ASSIGN_OR_RETURN(s_idx, broadcast_index(ctx, *scale_t, tail, "Scale"));
  }
  if (!b_full) {
    DLRT_ASSIGN_OR_RETURN(b_idx, broadcast_index(ctx, *bias_t, tail, "B"));
  }
  DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, x->dtype(), x->shape()));
  Shape stat_shape = x->shape();
  for (int64_t d = axis; d < rank; ++d) stat_shape[d] = 1;
  // Mean and InvStdDev: float32 for float32/half X (computed here in float32), float64 for float64 X.
  T* mean_out = nullptr;
  T* inv_out = nullptr;
  if (ctx.num_outputs() > 1 && ctx.output_requested(1)) {
    DLRT_ASSIGN_OR_RETURN(Tensor * m, ctx.allocate_output(1, x->dtype(), stat_shape));
    mean_out = m->data<T>();
  }
  if (ctx.num_outputs() > 2 && ctx.output_requested(2)) {
    DLRT_ASSIGN_OR_RETURN(Tensor * v, ctx.allocate_output(2, x->dtype(), stat_shape));
    inv_out = v->data<T>();
  }
  const T* X = x->data<T>();
  const T* S = scale_t->data<T>();
  const T* B = bias_t ? bias_t->data<T>() : nullptr;
  T* Y = y->data<T>();
  // Float rows with Scale and B covering them: rows_vec.h at simd_width().
  const bool vec = std::is_same_v<T, float> && s_full && b_full && cpu_has_simd_kernels();
  // Tagged nodes (ir/onnxruntime_order.h) compute in ONNX Runtime's order.
  const bool ort = std::is_same_v<T, float> && s_full && b_full && ir::in_onnxruntime_order(n);
  const SimdWidth width = simd_width();
  ctx.pool().parallel_for(outer, ctx.pool().balanced_grain(outer, std::max<int64_t>(1, 4096 / std::max<int64_t>(inner, 1))), [&](int64_t lo, int64_t hi) {
    for (int64_t r = lo; r < hi; ++r) {
      const T* xr = X + r * inner;
      T* yr = Y + r * inner;
      double mean, inv;
      if constexpr (std::is_same_v<T, float>) {
        if (ort) {
          float fm, fi;
          layer_norm_row_ort(xr, S, B, inner, static_cast<float>(eps), yr, &fm, &fi);
          if (mean_out) mean_out[r] = fm;
          if (inv_out) inv_out[r] = fi;
          continue;
        }
        if (vec) {
          layer_norm_row_vec(width, xr, S, B, inner, eps, yr, &mean, &inv);
          if (mean_out) mean_out[r] = static_cast<T>(mean);
          if (inv_out) inv_out[r] = static_cast<T>(inv);
          continue;
        }
      }
      moments(xr, inner, eps, &mean, &inv);
      if (mean_out) mean_out[r] = static_cast<T>(mean);
      if (inv_out) inv_out[r] = static_cast<T>(inv);
      const T m = static_cast<T>(mean), iv = static_cast<T>(inv);
      for (int64_t i = 0; i < inner; ++i) {
        const T s = S[s_full ? i : s_idx[i]];
        const T b = B ? B[b_full ? i : b_idx[i]] : T(0);
        yr[i] = (xr[i] - m) * iv * s + b;
      }
    }
  });
  return Status::Ok();
}
DLRT_FLOAT_KERNEL_EX(layer_norm_compute, layer_norm_impl, 1)

template <typename T>
Status group_norm_impl(KernelContext& ctx) {
  const Tensor* x = ctx.input(0);
  const ir::Node& n = ctx.node();
  if (x->rank() < 2) return ctx.invalid("X must have rank >= 2");
  if (!n.has_attr("num_groups")) return ctx.invalid("num_groups is required");
  const int64_t groups = n.attr_int("num_groups", 1);
  const int64_t N = x->dim(0), C = x->dim(1);
  if (groups <= 0 || C % groups != 0)
    return ctx.invalid("num_groups " + std::to_string(groups) + " must divide the channel count " + std::to_string(C));
  const int64_t spatial = N * C > 0 ? x->size() / (N * C) : 0;
  const int64_t cpg = C / groups;
  // opset 18: one Scale/B value per group; opset 21: per channel.
  const bool per_channel = ctx.opset() >= 21;
  const int64_t pcount = per_channel ? C : groups;
  DLRT_ASSIGN_OR_RETURN(const T* scale, channel_param<T>(ctx, 1, "scale", pcount));
  DLRT_ASSIGN_OR_RETURN(const T* bias, channel_param<T>(ctx, 2, "bias", pcount));
  const double eps = n.attr_float("epsilon", 1e-5f);
  DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), x->shape()));
  const T* X = x->data<T>();
  T* Y = y->data<T>();
  const int64_t block = cpg * spatial;
  ctx.pool().parallel_for(N * groups, ctx.pool().balanced_grain(N * groups, std::max<int64_t>(1, 8192 / std::max<int64_t>(block, 1))), [&](int64_t lo, int64_t hi) {
    for (int64_t t = lo; t < hi; ++t) {
      const int64_t g = t % groups;
      double mean, inv;
      moments(X + t * block, block, eps, &mean, &inv);
      for (int64_t c = 0; c < cpg; ++c) {
        const int64_t pi = per_channel ? g * cpg + c : g;
        const double a = inv * static_cast<double>(scale[pi]);
        const double b = static_cast<double>(bias[pi]) - mean * a;
        const T* xp = X + t * block + c * spatial;
        T* yp = Y + t * block + c * spatial;
        for (int64_t i = 0; i < spatial; ++i) yp[i] = static_cast<T>(static_cast<double>(xp[i]) * a + b);
      }
    }
  });
  return Status::Ok();
}
DLRT_FLOAT_KERNEL(group_norm_compute, group_norm_impl)

template <typename T>
Status lp_norm_impl(KernelContext& ctx) {
  const Tensor* x = ctx.input(0);
  const int64_t rank = static_cast<int64_t>(x->rank());
  if (rank == 0) return ctx.invalid("X must have rank >= 1");
  DLRT_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx.node().attr_int("axis", -1), rank, ctx));
  const int64_t p = ctx.node().attr_int("p", 2);
  if (p != 1 && p != 2) return ctx.invalid("p must be 1 or 2");
  DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), x->shape()));
  const int64_t len = x->dim(axis);
  int64_t inner = 1;
  for (int64_t d = axis + 1; d < rank; ++d) inner *= x->dim(d);
  const int64_t outer = len * inner > 0 ? x->size() / (len * inner) : 0;
  const T* X = x->data<T>();
  T* Y = y->data<T>();
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      const int64_t base = o * len * inner + i;
      double s = 0;
      for (int64_t k = 0; k < len; ++k) {
        const double v = static_cast<double>(X[base + k * inner]);
        s += p == 1 ? std::fabs(v) : v * v;
      }
      const double norm = p == 1 ? s : std::sqrt(s);
      for (int64_t k = 0; k < len; ++k)
        Y[base + k * inner] = norm == 0 ? T(0) : static_cast<T>(static_cast<double>(X[base + k * inner]) / norm);
    }
  return Status::Ok();
}
DLRT_FLOAT_KERNEL(lp_norm_compute, lp_norm_impl)

template <typename T>
Status mvn_impl(KernelContext& ctx) {
  const Tensor* x = ctx.input(0);
  const int64_t rank = static_cast<int64_t>(x->rank());
  std::vector<int64_t> axes = ctx.node().attr_ints("axes", {0, 2, 3});
  std::vector<bool> reduce(rank, false);
  for (int64_t a : axes) {
    DLRT_ASSIGN_OR_RETURN(int64_t ax, normalize_axis(a, rank, ctx));
    reduce[ax] = true;
  }
  DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), x->shape()));
  if (x->size() == 0) return Status::Ok();
  // Map every element to its statistics slot (the index over kept axes).
  const Shape& s = x->shape();
  int64_t slots = 1;
  for (int64_t d = 0; d < rank; ++d)
    if (!reduce[d]) slots *= s[d];
  std::vector<int64_t> slot(static_cast<size_t>(x->size()));
  std::vector<int64_t> pos(rank, 0);
  for (int64_t i = 0; i < x->size(); ++i) {
    int64_t sl = 0;
    for (int64_t d = 0; d < rank; ++d)
      if (!reduce[d]) sl = sl * s[d] + pos[d];
    slot[i] = sl;
    for (int64_t d = rank; d-- > 0;) {
      if (++pos[d] < s[d]) break;
      pos[d] = 0;
    }
  }
  const T* X = x->data<T>();
  T* Y = y->data<T>();
  std::vector<double> sum(slots, 0.0), sq(slots, 0.0);
  std::vector<int64_t> cnt(slots, 0);
  for (int64_t i = 0; i < x->size(); ++i) {
    sum[slot[i]] += static_cast<double>(X[i]);
    ++cnt[slot[i]];
  }
  for (int64_t k = 0; k < slots; ++k) sum[k] /= static_cast<double>(cnt[k]);
  for (int64_t i = 0; i < x->size(); ++i) {
    const double d = static_cast<double>(X[i]) - sum[slot[i]];
    sq[slot[i]] += d * d;
  }
  // ONNX's function body: (X - E[X]) / (sqrt(E[(X - E[X])^2]) + 1e-9).
  for (int64_t k = 0; k < slots; ++k) sq[k] = std::sqrt(sq[k] / static_cast<double>(cnt[k])) + 1e-9;
  for (int64_t i = 0; i < x->size(); ++i)
    Y[i] = static_cast<T>((static_cast<double>(X[i]) - sum[slot[i]]) / sq[slot[i]]);
  return Status::Ok();
}
DLRT_FLOAT_KERNEL(mvn_compute, mvn_impl)

template <typename T>
Status lrn_impl(KernelContext& ctx) {
  const Tensor* x = ctx.input(0);
  const ir::Node& n = ctx.node();
  if (x->rank() < 3) return ctx.invalid("X must have rank >= 3");
  if (!n.has_attr("size")) return ctx.invalid("size is required");
  const int64_t size = n.attr_int("size", 1);
  if (size <= 0) return ctx.invalid("size must be positive");
  const double alpha = n.attr_float("alpha", 1e-4f), beta = n.attr_float("beta", 0.75f), bias = n.attr_float("bias", 1.0f);
  const int64_t N = x->dim(0), C = x->dim(1);
  const int64_t inner = N * C > 0 ? x->size() / (N * C) : 0;
  const int64_t before = (size - 1) / 2, after = size - 1 - before;  // floor and ceil of (size-1)/2
  DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), x->shape()));
  const T* X = x->data<T>();
  T* Y = y->data<T>();
  ctx.pool().parallel_for(N * C, ctx.pool().balanced_grain(N * C, std::max<int64_t>(1, 8192 / std::max<int64_t>(inner * size, 1))), [&](int64_t lo, int64_t hi) {
    std::vector<double> sq(static_cast<size_t>(inner));
    for (int64_t p = lo; p < hi; ++p) {
      const int64_t nn = p / C, c = p % C;
      std::fill(sq.begin(), sq.end(), 0.0);
      for (int64_t cc = std::max<int64_t>(0, c - before); cc <= std::min(C - 1, c + after); ++cc) {
        const T* xc = X + (nn * C + cc) * inner;
        for (int64_t i = 0; i < inner; ++i) sq[i] += static_cast<double>(xc[i]) * static_cast<double>(xc[i]);
      }
      for (int64_t i = 0; i < inner; ++i)
        Y[p * inner + i] = static_cast<T>(static_cast<double>(X[p * inner + i]) /
                                          std::pow(bias + alpha / static_cast<double>(size) * sq[i], beta));
    }
  });
  return Status::Ok();
}
DLRT_FLOAT_KERNEL(lrn_compute, lrn_impl)

#undef DLRT_FLOAT_KERNEL
#undef DLRT_FLOAT_KERNEL_EX

}  // namespace

void layer_norm_row(const float* x, const float* s, const float* b, int64_t n, double eps, float* y, double* mean,
                    double* inv) {
  if (cpu_has_simd_kernels()) return layer_norm_row_vec(simd_width(), x, s, b, n, eps, y, mean, inv);
  moments(x, n, eps, mean, inv);
  const float m = static_cast<float>(*mean), iv = static_cast<float>(*inv);
  for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - m) * iv * s[i] + (b ? b[i] : 0.0f);
}

Status register_normalization_kernels(KernelRegistry& r) {
  DLRT_RETURN_IF_ERROR(r.add_fn("BatchNormalization", batch_norm_compute, 1));
  DLRT_RETURN_IF_ERROR(r.add_fn("InstanceNormalization", instance_norm_compute, 1));
  DLRT_RETURN_IF_ERROR(r.add_fn("LayerNormalization", layer_norm_compute, 17));
  // Each row's moments are read before the row is written, and the row is
  // written from the same indices of X: Y may take X's buffer.
  DLRT_RETURN_IF_ERROR(r.set_in_place_inputs("LayerNormalization", 1));
  DLRT_RETURN_IF_ERROR(r.add_fn("GroupNormalization", group_norm_compute, 18));
  DLRT_RETURN_IF_ERROR(r.add_fn("LpNormalization", lp_norm_compute, 1));
  DLRT_RETURN_IF_ERROR(r.add_fn("MeanVarianceNormalization", mvn_compute, 1));
  DLRT_RETURN_IF_ERROR(r.add_fn("LRN", lrn_compute, 1));
  return Status::Ok();
}

}  // namespace dlrt::cpu
