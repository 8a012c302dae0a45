// Pooling: MaxPool (with Indices), AveragePool, LpPool, their Global forms,
// and MaxUnpool. Inputs are [N, C, spatial...] with 1 to 3 spatial dims,
// handled as 3-D (missing leading dims have size 1); each (n, c) plane is a
// task of the thread pool. Float32 MaxPool/AveragePool with dilation 1 and no
// Indices output, and the float32 global pools, take the fast kernels of
// kernels/pool_planes.h (the vector layer at simd_width() where it is
// selected); everything else walks each window.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#define DLRT_POOL_X86 1
#endif

#include "backends/cpu/kernel_families.h"
#include "backends/cpu/kernel_util.h"
#include "backends/cpu/kernels/isa.h"
#include "backends/cpu/kernels/isa_target.h"
#include "backends/cpu/kernels/pool_planes.h"
#include "backends/cpu/ops/nn_util.h"
#include "backends/cpu/scratch.h"

namespace dlrt::cpu {
namespace {

using nn::Geo3;
using nn::to_geo3;

// Calls visit(flat input index within the plane, d, h, w) for each window tap
// of output (od, oh, ow) inside the input; returns the number of taps inside
// the padded input (for count_include_pad).
template <typename F>
int64_t for_window(const Geo3& g, int64_t od, int64_t oh, int64_t ow, F&& visit) {
  int64_t padded = 0;
  for (int64_t kd = 0; kd < g.k[0]; ++kd) {
    const int64_t id = od * g.s[0] - g.pb[0] + kd * g.d[0];
    if (id >= g.in[0] + g.pe[0]) break;
    for (int64_t kh = 0; kh < g.k[1]; ++kh) {
      const int64_t ih = oh * g.s[1] - g.pb[1] + kh * g.d[1];
      if (ih >= g.in[1] + g.pe[1]) break;
      for (int64_t kw = 0; kw < g.k[2]; ++kw) {
        const int64_t iw = ow * g.s[2] - g.pb[2] + kw * g.d[2];
        if (iw >= g.in[2] + g.pe[2]) break;
        ++padded;
        if (id < 0 || id >= g.in[0] || ih < 0 || ih >= g.in[1] || iw < 0 || iw >= g.in[2]) continue;
        visit((id * g.in[1] + ih) * g.in[2] + iw, id, ih, iw);
      }
    }
  }
  return padded;
}

// The fast kernels' geometry, when they handle g (dilation 1, windows never
// wholly outside the input).
bool fast_window(const Geo3& g, pool_impl::Window3* w) {
  for (int i = 0; i < 3; ++i) {
    if (g.d[i] != 1) return false;
    w->in[i] = g.in[i], w->out[i] = g.out[i], w->k[i] = g.k[i], w->s[i] = g.s[i];
    w->pb[i] = g.pb[i], w->pe[i] = g.pe[i];
  }
  return pool_impl::fast_window_ok(*w);
}

void run_fast_pool(KernelContext& ctx, bool is_max, bool count_include_pad, const pool_impl::Window3& w,
                   const float* X, float* Y, int64_t planes) {
  const std::optional<SimdWidth> width = pool_impl::vector_width();
  const int64_t work = std::max<int64_t>(1, w.out[0] * w.out[1] * w.out[2] * w.k[0] * w.k[1] * w.k[2]);
  const int64_t grain = std::max<int64_t>(1, 16384 / work);
  ctx.pool().parallel_for(planes, grain, [&](int64_t b, int64_t e) {
    pool_impl::pool_planes_f32(is_max, count_include_pad, w, X, Y, b, e, width);
  });
}

void run_fast_global(KernelContext& ctx, bool is_max, const float* X, float* Y, int64_t planes, int64_t plane_size) {
  const std::optional<SimdWidth> width = pool_impl::vector_width();
  const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(1, plane_size));
  ctx.pool().parallel_for(planes, grain, [&](int64_t b, int64_t e) {
    pool_impl::global_pool_planes_f32(is_max, X, Y, plane_size, b, e, width);
  });
}

Result<nn::WindowGeometry> pool_geometry(const KernelContext& ctx, const Tensor& x, bool allow_ceil) {
  if (x.rank() < 3 || x.rank() > 5) return ctx.unsupported("pooling supports 1-D, 2-D and 3-D inputs only");
  const IntList kernel = ints_attr(ctx.node(), "kernel_shape", 0, 0);
  if (kernel.empty()) return ctx.invalid("kernel_shape is required");
  const bool ceil_mode = allow_ceil && ctx.node().attr_int("ceil_mode", 0) != 0;
  const IntList in(x.shape().begin() + 2, x.shape().end());
  return nn::resolve_window(ctx, in, kernel, ceil_mode);
}

Shape pooled_shape(const Tensor& x, const nn::WindowGeometry& g) {
  Shape s = {x.dim(0), x.dim(1)};
  s.insert(s.end(), g.out.begin(), g.out.end());
  return s;
}

// One plane of the 2-D MaxPool of 8-bit values (quantized models, where
// MaxPool commutes with quantization): each window offset's row maxed into
// the output rows, so that the compiler vectorises over the output columns
// (strided loads too, when compiled for AVX2 or AVX-512 below).
template <typename T>
__attribute__((always_inline)) inline void max_pool_8bit_plane(const nn::WindowGeometry& g, const T* x, T* y) {
  const int64_t H = g.in[0], W = g.in[1], OH = g.out[0], OW = g.out[1];
  const int64_t KH = g.kernel[0], KW = g.kernel[1], sh = g.stride[0], sw = g.stride[1];
  const int64_t ph = g.pad_begin[0], pw = g.pad_begin[1];
  std::fill(y, y + OH * OW, std::numeric_limits<T>::lowest());
  for (int64_t kw = 0; kw < KW; ++kw) {
    const int64_t off = kw - pw;
    const int64_t lo = off >= 0 ? 0 : (-off + sw - 1) / sw;
    const int64_t hi = W - 1 - off >= 0 ? std::min(OW, (W - 1 - off) / sw + 1) : 0;
    for (int64_t oh = 0; oh < OH; ++oh) {
      T* yr = y + oh * OW;
      for (int64_t kh = 0; kh < KH; ++kh) {
        const int64_t ih = oh * sh - ph + kh;
        if (ih < 0 || ih >= H) continue;
        const T* row = x + ih * W + off;
        if (sw == 1)
          for (int64_t ow = lo; ow < hi; ++ow) yr[ow] = std::max(yr[ow], row[ow]);
        else if (sw == 2)
          for (int64_t ow = lo; ow < hi; ++ow) yr[ow] = std::max(yr[ow], row[ow * 2]);
        else
          for (int64_t ow = lo; ow < hi; ++ow) yr[ow] = std::max(yr[ow], row[ow * sw]);
      }
    }
  }
}

template <typename T>
void max_pool_8bit_planes(const nn::WindowGeometry& g, const T* X, T* Y, int64_t p0, int64_t p1) {
  for (int64_t p = p0; p < p1; ++p) max_pool_8bit_plane(g, X + p * g.in[0] * g.in[1], Y + p * g.out[0] * g.out[1]);
}

#ifdef DLRT_POOL_X86
template <typename T>
DLRT_AVX512 void max_pool_8bit_planes_avx512(const nn::WindowGeometry& g, const T* X, T* Y, int64_t p0, int64_t p1) {
  for (int64_t p = p0; p < p1; ++p) max_pool_8bit_plane(g, X + p * g.in[0] * g.in[1], Y + p * g.out[0] * g.out[1]);
}

template <typename T>
DLRT_AVX2_INT void max_pool_8bit_planes_avx2(const nn::WindowGeometry& g, const T* X, T* Y,
                                                                 int64_t p0, int64_t p1) {
  for (int64_t p = p0; p < p1; ++p) max_pool_8bit_plane(g, X + p * g.in[0] * g.in[1], Y + p * g.out[0] * g.out[1]);
}
#endif

template <typename T>
void max_pool_8bit_2d(KernelContext& ctx, const nn::WindowGeometry& g, const T* X, T* Y, int64_t planes) {
  auto body = [&](int64_t p0, int64_t p1) {
#ifdef DLRT_POOL_X86
    if (cpu_isa() >= CpuIsa::kAvx512) return max_pool_8bit_planes_avx512(g, X, Y, p0, p1);
    if (cpu_isa() >= CpuIsa::kAvx2) return max_pool_8bit_planes_avx2(g, X, Y, p0, p1);
#endif
    max_pool_8bit_planes(g, X, Y, p0, p1);
  };
  const int64_t work = std::max<int64_t>(1, g.out[0] * g.out[1] * g.kernel[0] * g.kernel[1]);
  ctx.pool().parallel_for(planes, ctx.pool().balanced_grain(planes, std::max<int64_t>(1, 65536 / work)), body);
}

Status max_pool_compute(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
  if (nn::is_half(x->dtype())) return nn::run_as_float32(ctx, max_pool_compute);
  DLRT_ASSIGN_OR_RETURN(nn::WindowGeometry wg, pool_geometry(ctx, *x, true));
  const Geo3 g = to_geo3(wg);
  const int64_t storage_order = ctx.node().attr_int("storage_order", 0);
  const Shape out_shape = pooled_shape(*x, wg);
  const bool want_idx = ctx.num_outputs() > 1 && ctx.output_requested(1);
  pool_impl::Window3 fw;
  if (x->dtype() == DType::kFloat32 && !want_idx && fast_window(g, &fw)) {
    DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), out_shape));
    run_fast_pool(ctx, true, false, fw, x->data<float>(), y->data<float>(), x->dim(0) * x->dim(1));
    return Status::Ok();
  }
  const bool byte = x->dtype() == DType::kUInt8 || x->dtype() == DType::kInt8;
  if (byte && !want_idx && wg.nd == 2 && wg.dilation[0] == 1 && wg.dilation[1] == 1) {
    // (Every output window holds at least one input element: resolve_window drops a
    // last window that would start in the end padding.)
    DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, x->dtype(), out_shape));
    if (x->dtype() == DType::kUInt8) max_pool_8bit_2d(ctx, wg, x->data<uint8_t>(), y->data<uint8_t>(), x->dim(0) * x->dim(1));
    else max_pool_8bit_2d(ctx, wg, x->data<int8_t>(), y->data<int8_t>(), x->dim(0) * x->dim(1));
    return Status::Ok();
  }
  return dispatch_numeric(x->dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
      return Internal("unreachable");
    } else {
      DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), out_shape));
      Tensor* ind = nullptr;
      if (want_idx) {
        DLRT_ASSIGN_OR_RETURN(ind, ctx.allocate_output(1, DType::kInt64, out_shape));
      }
      const T* X = x->data<T>();
      T* Y = y->data<T>();
      int64_t* I = ind ? ind->data<int64_t>() : nullptr;
      const int64_t in_plane = g.in_size(), out_plane = g.out_size();
      const int64_t grain = std::max<int64_t>(1, 8192 / std::max<int64_t>(out_plane, 1));
      ctx.pool().parallel_for(x->dim(0) * x->dim(1), grain, [&](int64_t b, int64_t e) {
        for (int64_t plane = b; plane < e; ++plane) {
          const T* xp = X + plane * in_plane;
          int64_t o = plane * out_plane;
          for (int64_t od = 0; od < g.out[0]; ++od)
            for (int64_t oh = 0; oh < g.out[1]; ++oh)
              for (int64_t ow = 0; ow < g.out[2]; ++ow, ++o) {
                T best = std::numeric_limits<T>::lowest();
                int64_t best_i = -1, bd = 0, bh = 0, bw = 0;
                for_window(g, od, oh, ow, [&](int64_t i, int64_t d, int64_t h, int64_t w) {
                  if (best_i < 0 || xp[i] > best) {
                    best = xp[i];
                    best_i = i;
                    bd = d, bh = h, bw = w;
                  }
                });
                Y[o] = best;
                if (I) {
                  int64_t local = best_i;
                  if (storage_order == 1 && best_i >= 0) {
                    // Column-major over the real spatial dims.
                    local = g.nd == 1 ? bw : g.nd == 2 ? bh + bw * g.in[1] : bd + bh * g.in[0] + bw * g.in[0] * g.in[1];
                  }
                  I[o] = best_i < 0 ? -1 : plane * in_plane + local;
                }
              }
        }
      });
      return Status::Ok();
    }
  });
}

// AveragePool and LpPool share the window walk; `lp` = 0 selects the average.
template <typename T>
void avg_lp_pool(const T* X, T* Y, int64_t planes, const Geo3& g, bool count_include_pad, double lp, ThreadPool& pool) {
  const int64_t in_plane = g.in_size(), out_plane = g.out_size();
  pool.parallel_for(planes, std::max<int64_t>(1, 8192 / std::max<int64_t>(out_plane, 1)), [&](int64_t b, int64_t e) {
    for (int64_t plane = b; plane < e; ++plane) {
      const T* xp = X + plane * in_plane;
      int64_t o = plane * out_plane;
      for (int64_t od = 0; od < g.out[0]; ++od)
        for (int64_t oh = 0; oh < g.out[1]; ++oh)
          for (int64_t ow = 0; ow < g.out[2]; ++ow, ++o) {
            double sum = 0;
            int64_t valid = 0;
            const int64_t padded = for_window(g, od, oh, ow, [&](int64_t i, int64_t, int64_t, int64_t) {
              const double v = static_cast<double>(xp[i]);
              if (lp == 0) sum += v;
              else if (lp == 1) sum += std::fabs(v);
              else if (lp == 2) sum += v * v;
              else sum += std::pow(std::fabs(v), lp);
              ++valid;
            });
            if (lp == 0) {
              const int64_t div = count_include_pad ? padded : valid;
              Y[o] = static_cast<T>(div > 0 ? sum / static_cast<double>(div) : 0.0);
            } else {
              Y[o] = static_cast<T>(lp == 1 ? sum : lp == 2 ? std::sqrt(sum) : std::pow(sum, 1.0 / lp));
            }
          }
    }
  });
}

Status avg_or_lp_pool(KernelContext& ctx, bool lp_pool, bool global) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
  if (x->dtype() != DType::kFloat32 && x->dtype() != DType::kFloat64)
    return ctx.unsupported(std::string(ctx.node().op_type) + " on " + dtype_name(x->dtype()) + " is not supported");
  nn::WindowGeometry wg;
  if (global) {
    if (x->rank() < 3 || x->rank() > 5) return ctx.unsupported("pooling supports 1-D, 2-D and 3-D inputs only");
    wg.nd = static_cast<int>(x->rank()) - 2;
    wg.in.assign(x->shape().begin() + 2, x->shape().end());
    wg.kernel = wg.in;
    wg.out.assign(wg.nd, 1);
    wg.stride.assign(wg.nd, 1);
    wg.dilation.assign(wg.nd, 1);
    wg.pad_begin.assign(wg.nd, 0);
    wg.pad_end.assign(wg.nd, 0);
  } else {
    DLRT_ASSIGN_OR_RETURN(wg, pool_geometry(ctx, *x, true));
  }
  double p = 0;
  if (lp_pool) {
    const ir::Attribute* pa = ctx.node().attr("p");
    p = 2;
    if (pa) p = pa->kind == ir::Attribute::Kind::kFloat ? pa->f : static_cast<double>(pa->i);
    if (!(p > 0)) return ctx.invalid("p must be positive");
  }
  const bool include_pad = ctx.node().attr_int("count_include_pad", 0) != 0;
  const Geo3 g = to_geo3(wg);
  DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), pooled_shape(*x, wg)));
  const int64_t planes = x->dim(0) * x->dim(1);
  pool_impl::Window3 fw;
  if (x->dtype() == DType::kFloat32 && !lp_pool) {
    if (global && g.in_size() > 0) {
      run_fast_global(ctx, false, x->data<float>(), y->data<float>(), planes, g.in_size());
      return Status::Ok();
    }
    if (!global && fast_window(g, &fw)) {
      run_fast_pool(ctx, false, include_pad, fw, x->data<float>(), y->data<float>(), planes);
      return Status::Ok();
    }
  }
  if (x->dtype() == DType::kFloat32) avg_lp_pool<float>(x->data<float>(), y->data<float>(), planes, g, include_pad, p, ctx.pool());
  else avg_lp_pool<double>(x->data<double>(), y->data<double>(), planes, g, include_pad, p, ctx.pool());
  return Status::Ok();
}

Status average_pool_compute(KernelContext& ctx) {
  if (ctx.input(0) && nn::is_half(ctx.input(0)->dtype())) return nn::run_as_float32(ctx, average_pool_compute);
  return avg_or_lp_pool(ctx, false, false);
}
Status lp_pool_compute(KernelContext& ctx) {
  if (ctx.input(0) && nn::is_half(ctx.input(0)->dtype())) return nn::run_as_float32(ctx, lp_pool_compute);
  return avg_or_lp_pool(ctx, true, false);
}
Status global_average_pool_compute(KernelContext& ctx) {
  if (ctx.input(0) && nn::is_half(ctx.input(0)->dtype())) return nn::run_as_float32(ctx, global_average_pool_compute);
  return avg_or_lp_pool(ctx, false, true);
}
Status global_lp_pool_compute(KernelContext& ctx) {
  if (ctx.input(0) && nn::is_half(ctx.input(0)->dtype())) return nn::run_as_float32(ctx, global_lp_pool_compute);
  return avg_or_lp_pool(ctx, true, true);
}

Status global_max_pool_compute(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
  if (nn::is_half(x->dtype())) return nn::run_as_float32(ctx, global_max_pool_compute);
  if (x->rank() < 3) return ctx.invalid("GlobalMaxPool needs an [N, C, spatial...] input");
  Shape out_shape(x->rank(), 1);
  out_shape[0] = x->dim(0);
  out_shape[1] = x->dim(1);
  const int64_t planes = x->dim(0) * x->dim(1);
  const int64_t plane = planes > 0 ? x->size() / planes : 0;
  if (plane == 0 && planes > 0) return ctx.invalid("GlobalMaxPool over an empty spatial extent");
  auto run = [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), out_shape));
    const T* X = x->data<T>();
    T* Y = y->data<T>();
    if constexpr (std::is_same_v<T, float>) {
      run_fast_global(ctx, true, X, Y, planes, plane);
      return Status::Ok();
    }
    for (int64_t p = 0; p < planes; ++p) {
      const T* xp = X + p * plane;
      T m = xp[0];
      for (int64_t i = 1; i < plane; ++i) m = xp[i] > m ? xp[i] : m;
      Y[p] = m;
    }
    return Status::Ok();
  };
  if (x->dtype() == DType::kFloat32) return run(std::type_identity<float>{});
  if (x->dtype() == DType::kFloat64) return run(std::type_identity<double>{});
  return ctx.unsupported(std::string("GlobalMaxPool on ") + dtype_name(x->dtype()) + " is not supported");
}

Status max_unpool_compute(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
  DLRT_ASSIGN_OR_RETURN(const Tensor* ind, required_input(ctx, 1));
  if (nn::is_half(x->dtype())) return nn::run_as_float32(ctx, max_unpool_compute);
  if (ind->dtype() != DType::kInt64) return ctx.invalid("I must be int64");
  if (ind->shape() != x->shape()) return ctx.invalid("I must have the same shape as X");
  if (x->rank() < 3) return ctx.invalid("MaxUnpool needs an [N, C, spatial...] input");
  const ir::Node& node = ctx.node();
  const int nd = static_cast<int>(x->rank()) - 2;
  std::vector<int64_t> kernel = node.attr_ints("kernel_shape");
  std::vector<int64_t> stride = node.attr_ints("strides", std::vector<int64_t>(nd, 1));
  std::vector<int64_t> pads = node.attr_ints("pads", std::vector<int64_t>(2 * nd, 0));
  if (static_cast<int>(kernel.size()) != nd || static_cast<int>(stride.size()) != nd ||
      static_cast<int>(pads.size()) != 2 * nd)
    return ctx.invalid("kernel_shape, strides and pads must have one value (two for pads) per spatial dim");
  // Indices are flat positions in the shape MaxPool's input had (the default
  // output); an explicit output_shape re-places each position by coordinates.
  Shape pooled_from = {x->dim(0), x->dim(1)};
  for (int i = 0; i < nd; ++i) pooled_from.push_back((x->dim(2 + i) - 1) * stride[i] + kernel[i] - pads[i] - pads[i + nd]);
  Shape out_shape = pooled_from;
  if (const Tensor* os = ctx.input(2)) {
    DLRT_ASSIGN_OR_RETURN(std::vector<int64_t> v, read_int_tensor(*os, ctx));
    if (v.size() != x->rank()) return ctx.invalid("output_shape must have one value per dim of X");
    out_shape = v;
  }
  for (size_t d = 0; d < out_shape.size(); ++d)
    if (out_shape[d] < 0 || pooled_from[d] < 0)
      return ctx.invalid("the output shape " + shape_to_string(out_shape) + " has a negative dim");
  const bool remap = out_shape != pooled_from;
  const int64_t from_size = element_count(pooled_from);
  return dispatch_numeric(x->dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), out_shape));
    const T* X = x->data<T>();
    const int64_t* I = ind->data<int64_t>();
    T* Y = y->data<T>();
    for (int64_t i = 0; i < x->size(); ++i) {
      int64_t dst = I[i];
      bool ok = dst >= 0 && dst < from_size;
      if (ok && remap) {
        int64_t rest = dst, stride_out = 1;
        dst = 0;
        for (size_t d = pooled_from.size(); d-- > 0 && ok;) {
          const int64_t coord = rest % pooled_from[d];
          rest /= pooled_from[d];
          ok = coord < out_shape[d];
          dst += coord * stride_out;
          stride_out *= out_shape[d];
        }
      }
      if (!ok)
        return ctx.invalid("index " + std::to_string(I[i]) + " is out of range for output " + shape_to_string(out_shape));
      Y[dst] = X[i];
    }
    return Status::Ok();
  });
}

}  // namespace

Status register_pool_kernels(KernelRegistry& r) {
  DLRT_RETURN_IF_ERROR(r.add_fn("MaxPool", max_pool_compute, 1));
  DLRT_RETURN_IF_ERROR(r.add_fn("AveragePool", average_pool_compute, 1));
  DLRT_RETURN_IF_ERROR(r.add_fn("LpPool", lp_pool_compute, 1));
  DLRT_RETURN_IF_ERROR(r.add_fn("GlobalAveragePool", global_average_pool_compute, 1));
  DLRT_RETURN_IF_ERROR(r.add_fn("GlobalMaxPool", global_max_pool_compute, 1));
  DLRT_RETURN_IF_ERROR(r.add_fn("GlobalLpPool", global_lp_pool_compute, 1));
  DLRT_RETURN_IF_ERROR(r.add_fn("MaxUnpool", max_unpool_compute, 9));
  return Status::Ok();
}

}  // namespace dlrt::cpu
