// Fast float32 MaxPool / AveragePool / global pools for the CPU backend
// (used by pool.cpp; declared here so unit tests can compare the AVX2 and
// portable variants with each other and with the reference walk).
//
// The windowed kernels are separable: for each output row, the valid input
// rows of the window are reduced element-wise into a row buffer padded with
// the reduction's identity (-inf for max, 0 for sum), then each output of the
// row reduces kw contiguous-or-strided entries of that buffer. Neither pass
// has a bounds check in its inner loop; the padding lives in the buffer.
//
// Thread-safety: the functions only touch the memory they are given.
#pragma once

#include <cstdint>

namespace dlrt::cpu::pool_impl {

// Geometry of a dilation-1 window over [D, H, W] planes (1-D and 2-D pools use
// size-1 leading dims with kernel 1, stride 1, no padding).
struct Window3 {
  int64_t in[3], out[3], k[3], s[3], pb[3], pe[3];
};

// True when the fast kernels compute exactly what the reference walk does for
// this geometry: every window must hold at least one input element in each
// dim (pads smaller than the kernel, no window starting past the input).
bool fast_window_ok(const Window3& g);

// Pools planes [p0, p1) of X (planes of in[0]*in[1]*in[2] floats) into Y
// (planes of out[0]*out[1]*out[2]). is_max selects MaxPool, else AveragePool
// with count_include_pad. avx2 must only be true when the CPU has AVX2+FMA.
void pool_planes_f32(bool is_max, bool count_include_pad, const Window3& g, const float* X, float* Y, int64_t p0,
                     int64_t p1, bool avx2);

// Global max (is_max) or average of planes [p0, p1), each of plane_size > 0 floats.
void global_pool_planes_f32(bool is_max, const float* X, float* Y, int64_t plane_size, int64_t p0, int64_t p1,
                            bool avx2);

// Whether this process may use the AVX2 variants.
bool have_avx2();

}  // namespace dlrt::cpu::pool_impl
