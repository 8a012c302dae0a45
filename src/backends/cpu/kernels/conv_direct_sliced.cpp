// The direct convolution for weights packed in 6-row panels (conv_direct.h,
// conv_direct_sliced): the body conv_direct_sliced_simd.h at every vector
// width.
#include <algorithm>
#include <cstring>
#include <vector>

#include "backends/cpu/kernel_util.h"
#include "backends/cpu/kernels/activation_epilogue.h"
#include "backends/cpu/kernels/conv_direct.h"
#include "backends/cpu/kernels/conv_direct_fill.h"
#include "backends/cpu/kernels/simd/simd.h"

#define DLRT_SIMD_BODY "backends/cpu/kernels/conv_direct_sliced_simd.h"
#include "backends/cpu/kernels/simd/instantiate.h"

namespace dlrt::cpu {

void conv_direct_sliced(SimdWidth width, const ConvDirectPlan& plan, const int64_t* off, const float* x,
                        const PackedMatrix& w, float* y, const GemmEpilogue& ep, ThreadPool* pool, int64_t y_plane) {
  DLRT_SIMD_CALL(width, conv_direct_sliced, plan, off, x, w, y, ep, pool, y_plane);
}

void pointwise_direct(SimdWidth width, const float* x, int64_t x_plane, int64_t n, const PackedMatrix& w, float* y,
                      int64_t y_plane, const GemmEpilogue& ep, ThreadPool* pool) {
  ConvDirectPlan plan;
  const int64_t* off = conv_direct_pointwise_plan(w.cols(), n, x_plane, &plan);
  conv_direct_sliced(width, plan, off, x, w, y, ep, pool, y_plane);
}

}  // namespace dlrt::cpu
