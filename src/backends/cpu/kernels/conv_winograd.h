// Winograd F(2x2, 3x3) for float32 2-D 3x3 convs of stride 1 and dilation
// 1, group 1 (resnet18's layer1-layer3 convs): each 2x2 block of outputs
// ("tile") is computed from its 4x4 input patch with 16 multiplies per
// channel pair instead of 36, so the products shrink 2.25x for some
// additions in the input and output transforms.
//
//   V = Bᵀ d B   (the patch d, per input channel: 4x4)
//   U = G g Gᵀ   (the filter g, per channel pair: 4x4, once per session)
//   Y = Aᵀ [U ⊙ V] A, summed over input channels: one GEMM per element
//   (ξ, ν) of the 4x4, M_ξν [M x T] = U_ξν [M x C] · V_ξν [C x T] over
//   the T tiles of the image.
//
// The transforms' coefficients are 0, ±1 and ±1/2, so the result differs
// from the direct sum by a few float roundings (measured against a double
// reference in the tests).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "backends/cpu/kernels/gemm.h"
#include "backends/cpu/kernels/simd/width.h"
#include "core/thread_pool.h"

namespace dlrt::cpu {

// The transformed filters U_ξν (M x C each), packed as GEMM A operands
// (transposed: U_ξνᵀ, C x M, as B operands, for the blocked F(4x4, 3x3)):
// 16 for F(2x2, 3x3), 36 for F(4x4, 3x3).
struct WinogradFilters {
  int64_t M = 0, C = 0;
  int tile = 2;                                        // outputs per tile side: 2 or 4
  bool transposed = false;                             // u holds the U_ξνᵀ (B operands)
  std::vector<std::shared_ptr<const PackedMatrix>> u;  // (tile + 2)^2, index ξ*(tile + 2) + ν
};

// Transforms W [M, C, 3, 3] (row-major float32) for F(2x2, 3x3).
std::shared_ptr<const WinogradFilters> winograd_filters(const float* w, int64_t M, int64_t C);
// The same for F(4x4, 3x3) (conv_winograd4.cpp); `transposed` for
// conv_winograd4_blocked.
std::shared_ptr<const WinogradFilters> winograd4_filters(const float* w, int64_t M, int64_t C,
                                                         bool transposed = false);

struct WinogradGeometry {
  int64_t in_h = 0, in_w = 0, out_h = 0, out_w = 0;
  int64_t pad_top = 0, pad_left = 0;  // 0 <= pad <= 2 (bottom/right padding is implied by the output size)
};

// The zero-padded copy of one input plane xc [in_h, in_w] that both
// variants transform: pad [hp][wp], row r and column q holding
// xc[r - pad_top][q - pad_left], zero outside the input.
void winograd_pad_plane(const WinogradGeometry& g, const float* xc, int64_t hp, int64_t wp, float* pad);

// Whether conv_winograd runs this geometry (does not check the CPU or the switch).
bool winograd_ok(const WinogradGeometry& g);

// Whether the F(2x2, 3x3) path runs convs by default: true unless
// DLRT_CONV_WINOGRAD=0 (read once); ScopedWinograd overrides it.
bool winograd_enabled();

// Forces the path on or off while alive; for tests and benchmarks.
class ScopedWinograd {
 public:
  explicit ScopedWinograd(bool enabled);
  ~ScopedWinograd();
  ScopedWinograd(const ScopedWinograd&) = delete;
  ScopedWinograd& operator=(const ScopedWinograd&) = delete;

 private:
  int previous_;
};

// Forces the variant the convs that take Winograd run (2: F(2x2, 3x3), 4:
// F(4x4, 3x3); 0: the choice per ISA and shape) while alive; for tests and
// benchmarks. winograd_forced_tile() reads it.
class ScopedWinogradTile {
 public:
  explicit ScopedWinogradTile(int tile);
  ~ScopedWinogradTile();
  ScopedWinogradTile(const ScopedWinogradTile&) = delete;
  ScopedWinogradTile& operator=(const ScopedWinogradTile&) = delete;

 private:
  int previous_;
};
int winograd_forced_tile();

// y [M, out_h, out_w] = epilogue(conv3x3(x [C, in_h, in_w], W)) for one
// image; ep.row_bias indexed by output channel, ep.residual like y
// (ep.ldr = out_h*out_w). The transforms run at 256 bits where the CPU has
// AVX2, else at simd_width() (128: chosen by no caller but tests).
void conv_winograd(const WinogradFilters& f, const WinogradGeometry& g, const float* x, float* y,
                   const GemmEpilogue& ep, ThreadPool& pool);

// The same with F(4x4, 3x3) filters (f.tile == 4): 4x4 outputs per 6x6
// patch, 4x fewer products than the direct sum where F(2x2, 3x3) has 2.25x,
// for transforms with coefficients up to 8 and 1/24 (a few more float
// roundings; measured against a double reference in the tests). Works on
// blocks of tile rows whose V and M take about kWinograd4BlockBytes:
// resnet18's layer1 (3.6 MiB) and layer2 run as one block. Larger blocks run
// faster: fewer parallel sections, wider GEMMs
// (bench/results/2026-11-24_winograd_f4x4_resnet18.json). The bound keeps
// large images' scratch in check. Written once over simd/ (conv_winograd4.cpp):
// runs at simd_width(), or at `w` (which simd_width_runs must allow).
constexpr int64_t kWinograd4BlockBytes = int64_t{4} << 20;
void conv_winograd4(const WinogradFilters& f, const WinogradGeometry& g, const float* x, float* y,
                    const GemmEpilogue& ep, ThreadPool& pool);
void conv_winograd4(SimdWidth w, const WinogradFilters& f, const WinogradGeometry& g, const float* x, float* y,
                    const GemmEpilogue& ep, ThreadPool& pool);

// F(4x4, 3x3) on the 16-channel blocked layout (conv_blocked.h), one image:
// x [ceil(C/16)][in_h][in_w][16], y [ceil(M/16)][out_h][out_w][16] =
// act(conv + bias + z); bias M values or null, z null or laid out like y;
// f from winograd4_filters(..., transposed = true). Lanes are channels: each
// tile's 6x6 patch is 36 loads of 16 channels, V and M are tiles x channels
// (M_e = V_e · U_eᵀ), and the outputs are stored as they come, so no
// transposes. Pad lanes of x are not read; those of y are unspecified.
// Runs at simd_width() or `w` like conv_winograd4 (conv_winograd4_blocked.cpp).
void conv_winograd4_blocked(const WinogradFilters& f, const WinogradGeometry& g, const float* x, float* y,
                            const float* bias, const float* z, const Activation& act, ThreadPool& pool);
void conv_winograd4_blocked(SimdWidth w, const WinogradFilters& f, const WinogradGeometry& g, const float* x,
                            float* y, const float* bias, const float* z, const Activation& act, ThreadPool& pool);

// Both variants' products: M_e = U_e · V_e for every transformed filter e
// of f, one GEMM per pool task; V_e [C][ld] at V + e * C * ld and M_e
// [M][ld] at Mo + e * M * ld, n columns (tiles) of each.
void winograd_products(const WinogradFilters& f, int64_t n, int64_t ld, const float* V, float* Mo,
                       ThreadPool& pool);

// How many images the Winograd kernels have run in this process, and the
// F(4x4, 3x3) ones (NCHW and blocked) alone; for tests.
uint64_t conv_winograd_runs();
uint64_t conv_winograd4_runs();
// Counts one image of either F(4x4, 3x3) kernel (conv_winograd4_runs).
void count_conv_winograd4_run();

}  // namespace dlrt::cpu
