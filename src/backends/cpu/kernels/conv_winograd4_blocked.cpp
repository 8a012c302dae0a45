// Winograd F(4x4, 3x3) on the 16-channel blocked layout (conv_winograd.h,
// conv_winograd4_blocked), one source for every vector width
// (conv_winograd4_blocked_simd.h over simd/simd.h). Per block of tile rows,
// three parallel phases like the NCHW kernel's, with channels in the lanes:
//  1. per (tile row, input channel block): each tile's 6x6 patch, 36 loads
//     of 16 channels (zeros outside the input), transformed (Bᵀ d B) into
//     V_e [tile][channel] for the 36 e;
//  2. the 36 GEMMs M_e [tiles x M] = V_e [tiles x C] · U_eᵀ [C x M];
//  3. per (tile row, output channel block): Aᵀ M A for each tile, the bias,
//     residual and clamp added in registers and the 4x4 outputs of 16
//     channels stored in place; other activations run over the tile row's
//     stored outputs.
#include <algorithm>
#include <cassert>
#include <utility>

#include "backends/cpu/kernel_util.h"
#include "backends/cpu/kernels/conv_winograd.h"
#include "backends/cpu/kernels/simd/simd.h"
#include "backends/cpu/scratch.h"

#define DLRT_SIMD_BODY "backends/cpu/kernels/conv_winograd4_blocked_simd.h"
#include "backends/cpu/kernels/simd/instantiate.h"

namespace dlrt::cpu {

void conv_winograd4_blocked(SimdWidth w, const WinogradFilters& f, const WinogradGeometry& g, const float* x, float* y,
                            const float* bias, const float* z, const Activation& act, ThreadPool& pool) {
  DLRT_SIMD_CALL(w, conv_winograd4_blocked, f, g, x, y, bias, z, act, pool);
  count_conv_winograd4_run();
}

void conv_winograd4_blocked(const WinogradFilters& f, const WinogradGeometry& g, const float* x, float* y,
                            const float* bias, const float* z, const Activation& act, ThreadPool& pool) {
  conv_winograd4_blocked(simd_width(), f, g, x, y, bias, z, act, pool);
}

}  // namespace dlrt::cpu
