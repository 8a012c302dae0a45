// What the files of the Conv family share: conv.cpp (checks, the choice of
// path, prepacking, registration), conv_depthwise.cpp and conv_gemm.cpp (the
// paths), conv_transpose.cpp (ConvTranspose). Other families use conv_impl.h.
#pragma once

#include <cstdint>
#include <type_traits>

#include "backends/cpu/kernels/gemm.h"
#include "backends/cpu/ops/conv_impl.h"
#include "backends/cpu/ops/nn_util.h"

namespace dlrt::cpu::conv_detail {

template <typename T>
void gemm_t(bool ta, bool tb, int64_t M, int64_t N, int64_t K, const T* A, int64_t lda, const T* B, int64_t ldb,
            T beta, T* C, int64_t ldc, ThreadPool* pool) {
  if constexpr (std::is_same_v<T, float>) sgemm(ta, tb, M, N, K, 1.0f, A, lda, B, ldb, beta, C, ldc, pool);
  else dgemm(ta, tb, M, N, K, 1.0, A, lda, B, ldb, beta, C, ldc, pool);
}

using nn::Geo3;
using nn::to_geo3;

// One Conv run after conv_run's checks: the operands (y allocated) and the
// geometry every path reads. `pre` is null when absent or stale.
struct ConvProblem {
  const Tensor* x = nullptr;
  const Tensor* w = nullptr;
  const Tensor* bias = nullptr;
  const Tensor* z = nullptr;  // the fused residual
  Tensor* y = nullptr;
  const ConvPrepacked* pre = nullptr;
  int64_t N = 0, C = 0, M = 0, group = 1, Cg = 0, Mg = 0;
  Geo3 g{};
  int64_t in_plane = 0, out_plane = 0, ks = 0, col_rows = 0;
  bool pointwise = false;  // 1x1, stride 1, unpadded: the image is the im2col matrix
  bool depthwise = false;  // one input and one output channel per group
  ThreadPool* pool = nullptr;
};

// conv_dead_taps.cpp. The leading and trailing taps of each axis that read
// padding only for every output position of `g` (as ir/passes/
// conv_padding_taps.cpp decides for static sizes: at least one tap stays,
// leading taps only while the leading pad absorbs them, trailing ones while
// the last window still reaches the input's end).
ConvTapCrop dead_taps(const Geo3& g);
// A float32, non-depthwise problem with prepacked weights whose input and
// output sizes leave dead taps runs as the cropped conv: W, the packing, the
// kernel, the leading pads, ks, col_rows and pointwise replaced. Unchanged
// when nothing is dead or the cropped weights are not usable.
void crop_dead_taps(ConvProblem& prob);

// Shared attribute checks: kernel shape from the attribute or W.
Result<IntList> kernel_shape_of(const KernelContext& ctx, const Tensor& w, int nd);

// conv_depthwise.cpp. Whether the float32 depthwise path writes every
// element of y (else y must be zero-filled first).
bool depthwise_writes_all(const Geo3& g);
// The float32 depthwise conv (one input channel per group).
Status conv_depthwise_f32(const ConvProblem& prob, const ConvFusion& fuse);
// One float64 depthwise plane, accumulated into y.
void depthwise_plane_f64(const double* x, const double* w, const Geo3& g, double* y);

// conv_gemm.cpp: the float32 paths over the GEMM-like kernels, and float64.
// Winograd F(2x2, 3x3) (wtile 2, x86 only) or F(4x4, 3x3) (wtile 4); false
// when the geometry does not fit it (then another path runs).
bool conv_winograd_f32(const ConvProblem& prob, const ConvFusion& fuse, int wtile);
#if defined(__x86_64__) || defined(__i386__)
// Yᵀ = im2colᵀ · Wᵀ, image by image (small output planes, patch embeddings).
Status conv_transposed_f32(const ConvProblem& prob, const ConvFusion& fuse);
#endif
// The direct tile (conv_direct.h) where it is faster, else W_g times the
// im2col rows on the GEMM (on AMX when `amx`).
Status conv_gemm_f32(const ConvProblem& prob, const ConvFusion& fuse, bool amx);
// float64: bias first, the GEMM accumulates, then the fused stage element-wise.
Status conv_f64(const ConvProblem& prob, const ConvFusion& fuse);

// conv_transpose.cpp.
Status conv_transpose_compute(KernelContext& ctx);

// conv_transpose_disjoint.cpp: ConvTranspose where stride == kernel (dilation
// 1 or kernel 1), no padding and output == input * stride, so that each output
// element is one GEMM product plus the bias. `g` as conv_transpose.cpp builds
// it (in = ConvTranspose's output, out = its input); X [N, Cg*group, out...],
// W [Cg*group, Mg, k...], B [Mg*group] or null, Y [N, Mg*group, in...].
bool conv_transpose_is_disjoint(const Geo3& g);
template <typename T>
void conv_transpose_disjoint(ThreadPool& pool, const T* X, const T* W, const T* B, T* Y, int64_t N, int64_t group,
                             int64_t Cg, int64_t Mg, const Geo3& g);

}  // namespace dlrt::cpu::conv_detail
