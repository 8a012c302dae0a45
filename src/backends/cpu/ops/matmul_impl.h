// MatMul/Gemm internals shared by matmul.cpp and fused.cpp (com.dlrt FusedMatMul, FusedGemm).
#pragma once

#include <memory>
#include <type_traits>

#include "backends/cpu/kernel.h"
#include "backends/cpu/kernels/activation_epilogue.h"
#include "backends/cpu/kernels/gemm.h"

namespace dlrt::cpu {

// A constant B packed once (float32, 2-D), with the tensor it came from:
// `source` holds it (shares its storage) unless made by without_source.
struct PackedOperand {
  Tensor source;
  const void* source_data = nullptr;  // source's data pointer when packed
  std::shared_ptr<const PackedMatrix> packed;

  // Whether `b`, a run's B, is the constant this was packed from (its data,
  // or its stand-in once an executor freed it).
  bool packed_from(const Tensor& b) const { return is_built_constant(b, source_data, source.shape()); }
};

// The same packing without the hold on B's data (source becomes its
// stand-in, freed_constant): for a kernel that lets go of B. Null when the
// packing cannot run without B: AMX tiles (sgemm_ex falls back to B where
// AMX becomes unusable).
std::shared_ptr<const PackedOperand> without_source(const PackedOperand& pre);

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

// The MatMul / FusedMatMul (Fusion = MatMulFusion) and Gemm / FusedGemm
// (Fusion = Activation) kernels, B packed at create when constant
// (`pre`, may be null); they let go of B (OpKernel::drop_constant) where
// the packing runs without it.
template <typename Fusion>
class PackedBKernel final : public OpKernel {
 public:
  PackedBKernel(std::shared_ptr<const PackedOperand> pre, Fusion fuse) : pre_(std::move(pre)), fuse_(fuse) {}
  Status compute(KernelContext& ctx) const override {
    if constexpr (std::is_same_v<Fusion, MatMulFusion>)
      return matmul_run(ctx, pre_.get(), fuse_);
    else
      return gemm_run(ctx, pre_.get(), fuse_);
  }
  bool can_drop_constant(size_t input) const override {
    return input == 1 && pre_ && pre_->source.raw_data() && pre_->packed->precision() == GemmPrecision::kF32;
  }
  void drop_constant(size_t input) override {
    if (!can_drop_constant(input)) return;
    if (auto p = without_source(*pre_)) pre_ = std::move(p);
  }

 private:
  std::shared_ptr<const PackedOperand> pre_;
  Fusion fuse_;
};
using MatMulKernel = PackedBKernel<MatMulFusion>;
using GemmKernel = PackedBKernel<Activation>;

}  // namespace dlrt::cpu
