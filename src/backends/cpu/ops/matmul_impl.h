// MatMul/Gemm internals shared by matmul.cpp and fused.cpp (com.dlrt FusedMatMul, FusedGemm).
#pragma once

#include <memory>

#include "backends/cpu/kernel.h"
#include "backends/cpu/kernels/activation_epilogue.h"
#include "backends/cpu/kernels/gemm.h"

namespace dlrt::cpu {

// A constant B packed once (float32, 2-D), with the tensor it came from.
struct PackedOperand {
  Tensor source;
  std::shared_ptr<const PackedMatrix> packed;
};

// Packs a constant 2-D float32 B (op(B) = B^T when trans); null when not applicable.
Result<std::shared_ptr<const PackedOperand>> prepack_b(const Tensor* b, bool trans);

// Y = act(alpha * (A @ B) + bias + Z); bias is input `bias_input` (-1: none),
// N elements along the last dim; Z is input `residual_input` (-1: none), of Y's shape.
struct MatMulFusion {
  float alpha = 1.0f;
  int bias_input = -1;
  int residual_input = -1;
  Activation act;
  bool fused() const { return alpha != 1.0f || bias_input >= 0 || residual_input >= 0 || !act.none(); }
};

// MatMul / FusedMatMul. `pre_b` may be null or stale (then ignored).
Status matmul_run(KernelContext& ctx, const PackedOperand* pre_b, const MatMulFusion& fuse);
// Gemm / FusedGemm: Y = act(alpha * op(A) op(B) + beta * C).
Status gemm_run(KernelContext& ctx, const PackedOperand* pre_b, const Activation& act);

}  // namespace dlrt::cpu
