// The direct convolution's phase copy (conv_direct.h) as templates over an
// ISA's row primitives, so that each ISA's copy inlines them: `Rows`
// provides static zero(dst, n), which zeroes n floats (n may be 0), and
// gather(src, s, n, dst), which sets dst[j] = src[j * s] for j < n (n >= 1)
// reading nothing past src[(n - 1) * s]. Include it only from the file that
// defines an ISA's copy; instantiate it there, inside a function compiled
// for that ISA. Through function pointers, one or three calls per copied
// row cost more than the row itself on small planes: resnet18's layer4
// (rows of 7 floats, 13.8K of them per conv) spent about 90 us per copy.
#pragma once

#include <algorithm>
#include <cstdint>

#include "backends/cpu/kernel_util.h"
#include "backends/cpu/kernels/conv_direct.h"

namespace dlrt::cpu {

// Rows [r0, r1) of one plane of hq x wq: row i, column j holds the padded
// input at (a + sh*i, b + sw*j) (phase (a, b) for b < sw; tap column j' of
// row phase a for b = j'*dw), zeros outside the input.
template <class Rows>
__attribute__((always_inline)) inline void conv_direct_fill_plane(const ConvDirectPlan& P, const float* xc,
                                                                  float* plane, int64_t a, int64_t b, int64_t r0,
                                                                  int64_t r1) {
  const ConvDirectGeometry& g = P.g;
  // Plane column j is padded column b + sw*j, input column b + sw*j - pad_left: inside for j in [j0, j1).
  const int64_t lead = g.pad_left - b;
  int64_t j0 = lead > 0 ? ceil_div(lead, g.sw) : 0;
  int64_t j1 = g.in_w + lead > 0 ? ceil_div(g.in_w + lead, g.sw) : 0;
  j1 = std::min(j1, P.wq);
  j0 = std::min(j0, j1);
  for (int64_t i = r0; i < r1; ++i) {
    float* row = plane + i * P.wq;
    const int64_t ih = a + g.sh * i - g.pad_top;
    if (ih < 0 || ih >= g.in_h || j1 == j0) {
      Rows::zero(row, P.wq);
      continue;
    }
    Rows::zero(row, j0);
    Rows::gather(xc + ih * g.in_w + (b + g.sw * j0 - g.pad_left), g.sw, j1 - j0, row + j0);
    Rows::zero(row + j1, P.wq - j1);
  }
}

// Rows [r0, r1) of the copied planes of one input channel xc [in_h, in_w]
// into dst (the plan's nphase planes of hq x wq: its phases, or with
// tap_columns one plane per row phase and tap column).
template <class Rows>
__attribute__((always_inline)) inline void conv_direct_fill_phases(const ConvDirectPlan& P, const float* xc,
                                                                   float* dst, int64_t r0, int64_t r1) {
  const ConvDirectGeometry& g = P.g;
  if (P.tap_columns) {
    // Plane (a, j) row r, column ow: the padded input at (a + sh*r, sw*ow + j*dw).
    for (int64_t a = 0; a < g.sh; ++a)
      for (int64_t j = 0; j < g.kw; ++j)
        conv_direct_fill_plane<Rows>(P, xc, dst + (a * g.kw + j) * P.hq * P.wq, a, j * g.dw, r0, r1);
    return;
  }
  for (int64_t a = 0; a < g.sh; ++a)
    for (int64_t b = 0; b < g.sw; ++b) {
      const int slot = P.phase_slot[a * g.sw + b];
      if (slot >= 0) conv_direct_fill_plane<Rows>(P, xc, dst + slot * P.hq * P.wq, a, b, r0, r1);
    }
}

}  // namespace dlrt::cpu
