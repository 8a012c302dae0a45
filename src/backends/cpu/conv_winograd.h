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

#include "backends/cpu/gemm.h"
#include "core/thread_pool.h"

namespace dlrt::cpu {

// The 16 transformed filters U_ξν (M x C each), packed as GEMM A operands.
struct WinogradFilters {
  int64_t M = 0, C = 0;
  std::vector<std::shared_ptr<const PackedMatrix>> u;  // 16, index ξ*4 + ν
};

// Transforms W [M, C, 3, 3] (row-major float32).
std::shared_ptr<const WinogradFilters> winograd_filters(const float* w, int64_t M, int64_t C);

struct WinogradGeometry {
  int64_t in_h = 0, in_w = 0, out_h = 0, out_w = 0;
  int64_t pad_top = 0, pad_left = 0;  // 0 <= pad <= 2 (bottom/right padding is implied by the output size)
};

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

// y [M, out_h, out_w] = epilogue(conv3x3(x [C, in_h, in_w], W)) for one
// image; ep.row_bias indexed by output channel, ep.residual like y
// (ep.ldr = out_h*out_w). Call only when cpu_isa() >= kAvx2.
void conv_winograd(const WinogradFilters& f, const WinogradGeometry& g, const float* x, float* y,
                   const GemmEpilogue& ep, ThreadPool& pool);

// How many images conv_winograd has run in this process; for tests.
uint64_t conv_winograd_runs();

}  // namespace dlrt::cpu
