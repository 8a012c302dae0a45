// Depthwise convolution of one plane on a flattened grid (see
// depthwise_flat.h): the body depthwise_flat_simd.h at every vector width;
// at 512 bits the instruction sequences of the former AVX-512-only kernel.
#include "backends/cpu/kernels/depthwise_flat.h"

#include <algorithm>
#include <cstring>
#include <new>

#include "backends/cpu/kernels/isa.h"
#include "backends/cpu/kernels/simd/simd.h"
#include "backends/cpu/kernels/activation_epilogue.h"
#include "backends/cpu/kernels/gelu_phi_table.h"
#include "backends/cpu/scratch.h"

namespace dlrt::cpu {

namespace {

constexpr int64_t kMaxGrid = int64_t{1} << 16;  // floats of scratch input per plane

// One grown, 64-byte-aligned buffer per thread and slot (no allocation once warm).
float* flat_scratch(int slot, size_t n) {
  thread_local AlignedScratch bufs[2];
  return bufs[slot].get<float>(n);
}

}  // namespace

bool depthwise_flat_plan(const DepthwiseFlatGeometry& g, DepthwiseFlatPlan* plan) {
  return simd_width() == SimdWidth::k512 && depthwise_flat_fits(g, plan);
}

bool depthwise_flat_fits(const DepthwiseFlatGeometry& g, DepthwiseFlatPlan* plan) {
  if (g.kh < 1 || g.kw < 1 || g.kh * g.kw > DepthwiseFlatPlan::kMaxTaps || g.pad_top < 0 || g.pad_left < 0) return false;
  if (g.out_h < 1 || g.out_w < 1 || g.in_h < 1 || g.in_w < 1) return false;
  DepthwiseFlatPlan& p = *plan;
  p.g = g;
  p.hq = g.out_h + g.kh - 1;
  p.wq = g.out_w + g.kw - 1;
  p.src_floats = p.hq * p.wq;
  if (p.src_floats > kMaxGrid) return false;
  p.grid = (g.out_h * p.wq + 15) / 16 * 16;
  // Taps read up to kw - 1 columns past the last grid row, and the grid is
  // rounded up to whole vectors: keep that tail in bounds (and zero).
  p.slack = (p.grid - g.out_h * p.wq) + g.kw - 1 + 16;
  p.taps = g.kh * g.kw;
  for (int64_t i = 0; i < g.kh; ++i)
    for (int64_t j = 0; j < g.kw; ++j) p.off[i * g.kw + j] = i * p.wq + j;
  return true;
}

}  // namespace dlrt::cpu

#define DLRT_SIMD_BODY "backends/cpu/kernels/depthwise_flat_simd.h"
#include "backends/cpu/kernels/simd/instantiate.h"

namespace dlrt::cpu {

void depthwise_flat(SimdWidth width, const float* x, const float* w, const DepthwiseFlatPlan& p, float* y,
                    const DepthwiseFlatOutput& o) {
  float* src = flat_scratch(0, static_cast<size_t>(p.src_floats + p.slack));
  float* grid = flat_scratch(1, static_cast<size_t>(p.grid));
  DLRT_SIMD_CALL(width, depthwise_flat, x, w, p, y, o, src, grid);
}

}  // namespace dlrt::cpu
