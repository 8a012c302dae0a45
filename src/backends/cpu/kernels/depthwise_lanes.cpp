// Depthwise conv, one channel per vector lane (depthwise_lanes.h): the body
// depthwise_lanes_simd.h at every vector width; at 512 bits the instruction
// sequences of the former AVX-512-only 16-channel kernel, at 256 those of
// the former AVX2 8-channel one (which took no dilation, partial group or
// activation other than a clamp).
#include "backends/cpu/kernels/depthwise_lanes.h"

#include <algorithm>

#include "backends/cpu/kernels/activation_epilogue.h"
#include "backends/cpu/kernels/simd/simd.h"
#include "backends/cpu/kernels/gelu_phi_table.h"
#include "backends/cpu/scratch.h"

namespace dlrt::cpu::depthwise_lanes_detail {

// The calling thread's scratch (filters, band input, band output): grows, never shrinks.
float* scratch(int64_t floats) {
  thread_local AlignedScratch s;
  return s.get<float>(static_cast<size_t>(floats));
}

// The rows one output row's taps span.
int64_t tap_rows(const DepthwiseGeometry& g) { return (g.kh - 1) * g.dh + 1; }

// Output rows per band: the band's input rows in about 48 KiB of scratch.
int64_t band_rows(const DepthwiseGeometry& g, int64_t Wp, int64_t lanes) {
  const int64_t span = tap_rows(g);
  const int64_t max_in_rows = std::max<int64_t>(span, (48 * 1024 / (4 * lanes)) / Wp);
  return std::clamp<int64_t>((max_in_rows - span) / g.sh + 1, 1, g.out_h);
}

// Any activation over n vectors in place through apply_activation on the
// floats (the 512-bit body applies act::apply_array in registers instead).
template <class V>
void activate_vectors(const Activation& a, V* v, int n) {
  apply_activation(a, reinterpret_cast<float*>(v), int64_t{n} * static_cast<int64_t>(sizeof(V) / sizeof(float)));
}

}  // namespace dlrt::cpu::depthwise_lanes_detail

#define DLRT_SIMD_BODY "backends/cpu/kernels/depthwise_lanes_simd.h"
#include "backends/cpu/kernels/simd/instantiate.h"

namespace dlrt::cpu {

void depthwise_lanes(SimdWidth width, const float* x, int64_t in_plane, const float* w, const DepthwiseGeometry& g,
                     float* y, int64_t out_plane, const DepthwiseC8Output& o, int64_t row_begin, int64_t row_end,
                     int channels) {
  DLRT_SIMD_CALL(width, depthwise_lanes, x, in_plane, w, g, y, out_plane, o, row_begin, row_end, channels);
}

void depthwise_lanes_padded(SimdWidth width, const float* buf, int64_t Wp, const float* w, const DepthwiseGeometry& g,
                            float* y, int64_t out_plane, const DepthwiseC8Output& o) {
  DLRT_SIMD_CALL(width, depthwise_lanes_padded, buf, Wp, w, g, y, out_plane, o);
}

}  // namespace dlrt::cpu
