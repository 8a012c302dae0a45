// com.dlrt MaxPoolNhwc: MaxPool of 8-bit values on channels-last tensors
// ([N, H, W, C] -> [N, OH, OW, C]), for quantized networks that run
// channels-last (ir/passes/quant_layout.cpp). Attributes as MaxPool's
// (kernel_shape, strides, pads, auto_pad, ceil_mode); dilations 1, 2-D, no
// Indices output. Each output pixel is the elementwise max of its window's
// input pixels, C bytes at a time, so the loops vectorise over channels.
#include <algorithm>
#include <limits>

#include "backends/cpu/kernel_families.h"
#include "backends/cpu/kernel_util.h"
#include "backends/cpu/kernels/isa.h"
#include "backends/cpu/kernels/isa_target.h"
#include "backends/cpu/ops/nn_util.h"

#if defined(__x86_64__) || defined(__i386__)
#define DLRT_POOL_NHWC_X86 1
#endif

namespace dlrt::cpu {
namespace {

// Output rows [r0, r1) (row r = image r / OH, output row r % OH).
template <typename T>
__attribute__((always_inline)) inline void max_pool_rows(const nn::WindowGeometry& g, int64_t C, const T* x, T* y,
                                                         int64_t r0, int64_t r1) {
  const int64_t H = g.in[0], W = g.in[1], OH = g.out[0], OW = g.out[1];
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t n = r / OH, oh = r % OH;
    for (int64_t ow = 0; ow < OW; ++ow) {
      T* out = y + (r * OW + ow) * C;
      std::fill(out, out + C, std::numeric_limits<T>::lowest());
      for (int64_t kh = 0; kh < g.kernel[0]; ++kh) {
        const int64_t ih = oh * g.stride[0] - g.pad_begin[0] + kh;
        if (ih < 0 || ih >= H) continue;
        for (int64_t kw = 0; kw < g.kernel[1]; ++kw) {
          const int64_t iw = ow * g.stride[1] - g.pad_begin[1] + kw;
          if (iw < 0 || iw >= W) continue;
          const T* in = x + ((n * H + ih) * W + iw) * C;
          for (int64_t c = 0; c < C; ++c) out[c] = std::max(out[c], in[c]);
        }
      }
    }
  }
}

template <typename T>
void max_pool_rows_generic(const nn::WindowGeometry& g, int64_t C, const T* x, T* y, int64_t r0, int64_t r1) {
  max_pool_rows(g, C, x, y, r0, r1);
}

#ifdef DLRT_POOL_NHWC_X86
template <typename T>
DLRT_AVX512 void max_pool_rows_avx512(const nn::WindowGeometry& g, int64_t C, const T* x, T* y, int64_t r0,
                                      int64_t r1) {
  max_pool_rows(g, C, x, y, r0, r1);
}

template <typename T>
DLRT_AVX2_INT void max_pool_rows_avx2(const nn::WindowGeometry& g, int64_t C, const T* x, T* y,
                                                         int64_t r0, int64_t r1) {
  max_pool_rows(g, C, x, y, r0, r1);
}
#endif

template <typename T>
void max_pool_nhwc(KernelContext& ctx, const nn::WindowGeometry& g, int64_t N, int64_t C, const T* x, T* y) {
  const int64_t rows = N * g.out[0];
  auto body = [&](int64_t r0, int64_t r1) {
#ifdef DLRT_POOL_NHWC_X86
    if (cpu_isa() >= CpuIsa::kAvx512) return max_pool_rows_avx512(g, C, x, y, r0, r1);
    if (cpu_isa() >= CpuIsa::kAvx2) return max_pool_rows_avx2(g, C, x, y, r0, r1);
#endif
    max_pool_rows_generic(g, C, x, y, r0, r1);
  };
  const int64_t work = std::max<int64_t>(1, g.out[1] * C * g.kernel[0] * g.kernel[1]);
  ctx.pool().parallel_for(rows, ctx.pool().balanced_grain(rows, std::max<int64_t>(1, 65536 / work)), body);
}

Status max_pool_nhwc_compute(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
  if (x->dtype() != DType::kUInt8 && x->dtype() != DType::kInt8)
    return ctx.unsupported(std::string("X has dtype ") + dtype_name(x->dtype()) + " (uint8 or int8 expected)");
  if (x->rank() != 4) return ctx.unsupported("only 2-D pooling runs channels-last");
  if (ctx.num_outputs() > 1 && ctx.output_requested(1)) return ctx.unsupported("no Indices output channels-last");
  for (int64_t d : ints_attr(ctx.node(), "dilations", 2, 1))
    if (d != 1) return ctx.unsupported("dilated pooling does not run channels-last");
  const IntList kernel = ints_attr(ctx.node(), "kernel_shape", 0, 0);
  if (kernel.empty()) return ctx.invalid("kernel_shape is required");
  DLRT_ASSIGN_OR_RETURN(nn::WindowGeometry g, nn::resolve_window(ctx, IntList{x->dim(1), x->dim(2)}, kernel,
                                                                  ctx.node().attr_int("ceil_mode", 0) != 0));
  const int64_t N = x->dim(0), C = x->dim(3);
  DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, x->dtype(), {N, g.out[0], g.out[1], C}));
  if (y->size() == 0) return Status::Ok();
  if (x->dtype() == DType::kUInt8) max_pool_nhwc(ctx, g, N, C, x->data<uint8_t>(), y->data<uint8_t>());
  else max_pool_nhwc(ctx, g, N, C, x->data<int8_t>(), y->data<int8_t>());
  return Status::Ok();
}

}  // namespace

Status register_pool_nhwc_kernels(KernelRegistry& r) {
  return r.add_fn("MaxPoolNhwc", max_pool_nhwc_compute, 1, 1000, "com.dlrt");
}

}  // namespace dlrt::cpu
