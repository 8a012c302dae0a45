// The direct convolution for weights packed in 8-row panels (conv_direct.h,
// conv_direct_whole_k): the body conv_direct_whole_k_simd.h at every vector
// width.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <vector>

#include "backends/cpu/kernel_util.h"
#include "backends/cpu/kernels/activation_epilogue.h"
#include "backends/cpu/kernels/conv_direct.h"
#include "backends/cpu/kernels/conv_direct_fill.h"
#include "backends/cpu/kernels/gelu_phi_table.h"
#include "backends/cpu/kernels/simd/simd.h"
#include "device/cpu_caches.h"

namespace dlrt::cpu::conv_direct_whole_k_detail {

// A token per call that takes private phase copies (each thread copies once per token).
uint64_t next_call() {
  static std::atomic<uint64_t> calls{0};
  return ++calls;
}

}  // namespace dlrt::cpu::conv_direct_whole_k_detail

#define DLRT_SIMD_BODY "backends/cpu/kernels/conv_direct_whole_k_simd.h"
#include "backends/cpu/kernels/simd/instantiate.h"

namespace dlrt::cpu {

void conv_direct_whole_k(SimdWidth width, const ConvDirectPlan& plan, const int64_t* off, const float* x,
                         const PackedMatrix& w, float* y, const GemmEpilogue& ep, ThreadPool* pool, int64_t y_plane,
                         int64_t k_begin, int64_t k_end) {
  DLRT_SIMD_CALL(width, conv_direct_whole_k, plan, off, x, w, y, ep, pool, y_plane, k_begin, k_end);
}

}  // namespace dlrt::cpu
