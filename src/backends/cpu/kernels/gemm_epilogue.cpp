// The GEMM/Conv output stage: bias, residual and activation applied to a
// block of C in place, and apply_activation. One source at every vector
// width (gemm_epilogue_simd.h over simd/simd.h; vector exp/erf
// approximations within 3e-7 + 4e-7 |y| of the scalar reference for
// Sigmoid/Tanh/Gelu) picked by simd_width(); the portable version uses <cmath>.
#include <cmath>

#include "backends/cpu/kernels/activation_epilogue.h"
#include "backends/cpu/kernels/gelu_phi_table.h"
#include "backends/cpu/kernels/gemm.h"
#include "backends/cpu/kernels/gemm_kernels.h"
#include "backends/cpu/kernels/isa.h"

#define DLRT_SIMD_BODY "backends/cpu/kernels/gemm_epilogue_simd.h"
#include "backends/cpu/kernels/simd/instantiate.h"

namespace dlrt::cpu {
namespace {

void epilogue_generic(const GemmEpilogue& ep, float* c, int64_t ldc, int64_t i0, int64_t j0, int64_t rows,
                      int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    float* cr = c + r * ldc;
    // Without a row bias -0, the identity of every sum (+0 would turn -0 into +0).
    const float rb = ep.row_bias ? ep.row_bias[i0 + r] : -0.0f;
    const float* cb = ep.col_bias ? ep.col_bias + j0 : nullptr;
    const float* res = ep.residual ? ep.residual + (i0 + r) * ep.ldr + j0 : nullptr;
    for (int64_t j = 0; j < cols; ++j) {
      float v = cr[j] + rb;
      if (cb) v += cb[j];
      if (res) v += res[j];
      cr[j] = activate(ep.act, v);
    }
  }
}

void act_generic(const Activation& a, float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] = activate(a, x[i]);
}

}  // namespace

// No call counter here (DLRT_SIMD_CALL): these run once per GEMM tile from
// every thread, where a shared atomic would cost more than some epilogues;
// tests compare them bit for bit with the *_at entries instead.
void apply_epilogue_at(SimdWidth w, const GemmEpilogue& ep, float* c, int64_t ldc, int64_t i0, int64_t j0,
                       int64_t rows, int64_t cols) {
  if (ep.empty() || rows <= 0 || cols <= 0) return;
  DLRT_SIMD_PICK(w, epilogue_run, ep, c, ldc, i0, j0, rows, cols);
}

void apply_activation_at(SimdWidth w, const Activation& a, float* x, int64_t n) {
  if (a.none() || n <= 0) return;
  DLRT_SIMD_PICK(w, activation_run, a, x, n);
}

void apply_epilogue(const GemmEpilogue& ep, float* c, int64_t ldc, int64_t i0, int64_t j0, int64_t rows,
                    int64_t cols) {
  if (ep.empty() || rows <= 0 || cols <= 0) return;
  if (!cpu_has_simd_kernels()) return epilogue_generic(ep, c, ldc, i0, j0, rows, cols);
  // GEMM tiles (a few rows of <= 48 columns) stay on 8-lane vectors on AVX-512: the
  // micro-kernel has just stored them, and a 16-lane load spanning two 8-lane stores misses
  // store-to-load forwarding (a clear loss on AVX2 tiles, docs/performance-decisions.md).
  // Loads inside one wider store forward, so this also suits an
  // AVX-512 micro-kernel. Wide blocks (whole planes, rows >= 64) take 16 lanes.
  SimdWidth w = simd_width();
  if (w == SimdWidth::k512 && cols < 64) w = SimdWidth::k256;
  DLRT_SIMD_PICK(w, epilogue_run, ep, c, ldc, i0, j0, rows, cols);
}

void apply_epilogue_zmm_tile(const GemmEpilogue& ep, float* c, int64_t ldc, int64_t i0, int64_t j0, int64_t rows,
                             int64_t cols) {
  if (ep.empty() || rows <= 0 || cols <= 0) return;
  // The AVX-512 micro-kernel stored this tile in 16-lane vectors from its
  // first column: 16-lane loads at the same offsets forward from those stores.
  if (cpu_has_simd_kernels() && simd_width() == SimdWidth::k512)
    return DLRT_SIMD_PICK(SimdWidth::k512, epilogue_run, ep, c, ldc, i0, j0, rows, cols);
  apply_epilogue(ep, c, ldc, i0, j0, rows, cols);
}

void apply_activation(const Activation& a, float* x, int64_t n) {
  if (a.none() || n <= 0) return;
  if (!cpu_has_simd_kernels()) return act_generic(a, x, n);
  DLRT_SIMD_PICK(simd_width(), activation_run, a, x, n);
}

}  // namespace dlrt::cpu
