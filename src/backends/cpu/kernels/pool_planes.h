// Fast float32 MaxPool / AveragePool / global pools for the CPU backend
// (used by pool.cpp; declared here so unit tests can compare the vector
// layer's widths and the portable variants with each other and with the
// reference walk).
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
#include <optional>

#include "backends/cpu/kernels/simd/width.h"

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
// with count_include_pad. width: the vector layer's instantiation (one that
// simd_width_runs), or nullopt for the portable code.
void pool_planes_f32(bool is_max, bool count_include_pad, const Window3& g, const float* X, float* Y, int64_t p0,
                     int64_t p1, std::optional<SimdWidth> width);

// The 3x3 stride-2 MaxPool kernel pool_planes_f32 picks at 512 bits (k 1x3x3,
// s 2, begin pads <= 1, one depth), here at any width for the tests.
void maxpool3s2_f32(SimdWidth width, const Window3& g, const float* X, float* Y, int64_t p0, int64_t p1);

// Global max (is_max) or average of planes [p0, p1), each of plane_size > 0 floats.
void global_pool_planes_f32(bool is_max, const float* X, float* Y, int64_t plane_size, int64_t p0, int64_t p1,
                            std::optional<SimdWidth> width);

// The width the pools run at in this process: simd_width() where the vector
// layer is selected (cpu_has_simd_kernels; DLRT_CPU_ISA), else nullopt.
std::optional<SimdWidth> vector_width();

// The separable passes (pool_planes.cpp, pool_planes_simd.h).
using RowsFn = void (*)(const float* const*, int64_t, float*, int64_t);
using ColsFn = void (*)(const float*, float*, int64_t, int64_t, int64_t, const float*, float);

}  // namespace dlrt::cpu::pool_impl
