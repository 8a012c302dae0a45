// dlrt's own fused ops (domain com.dlrt, opset 1), emitted by the graph
// optimizer (src/ir/passes/):
//   FusedConv(X, W, [B], [Z]):  Y = act(Conv(X, W) + B + Z)   (Conv's attributes)
//   FusedMatMul(A, B, [C], [Z]): Y = act(alpha * (A @ B) + C + Z)  (C: bias along the last dim,
//                                Z: a residual of Y's shape)
//   FusedGemm(A, B, [C]):       Y = act(Gemm(A, B, C))        (Gemm's attributes)
// with attributes activation (string: "" none, Relu, Clip, Sigmoid, Tanh,
// LeakyRelu, HardSigmoid, HardSwish, Gelu, Gelu_tanh) and activation_params
// (floats: Clip [min, max], LeakyRelu [alpha], HardSigmoid [alpha, beta]).
// The bias/residual/activation run in the GEMM's epilogue, on each output
// tile while it is in cache; constant weights are packed at kernel creation.
#include "backends/cpu/activation_epilogue.h"
#include "backends/cpu/conv_impl.h"
#include "backends/cpu/kernel_families.h"
#include "backends/cpu/matmul_impl.h"

namespace dlrt::cpu {
namespace {

constexpr const char* kDomain = "com.dlrt";

class FusedConvKernel final : public OpKernel {
 public:
  FusedConvKernel(std::shared_ptr<const ConvPrepacked> pre, ConvFusion fuse) : pre_(std::move(pre)), fuse_(fuse) {}
  Status compute(KernelContext& ctx) const override { return conv_run(ctx, pre_.get(), fuse_); }

 private:
  std::shared_ptr<const ConvPrepacked> pre_;
  ConvFusion fuse_;
};

class FusedMatMulKernel final : public OpKernel {
 public:
  FusedMatMulKernel(std::shared_ptr<const PackedOperand> pre, MatMulFusion fuse) : pre_(std::move(pre)), fuse_(fuse) {}
  Status compute(KernelContext& ctx) const override { return matmul_run(ctx, pre_.get(), fuse_); }

 private:
  std::shared_ptr<const PackedOperand> pre_;
  MatMulFusion fuse_;
};

class FusedGemmKernel final : public OpKernel {
 public:
  FusedGemmKernel(std::shared_ptr<const PackedOperand> pre, Activation act) : pre_(std::move(pre)), act_(act) {}
  Status compute(KernelContext& ctx) const override { return gemm_run(ctx, pre_.get(), act_); }

 private:
  std::shared_ptr<const PackedOperand> pre_;
  Activation act_;
};

Result<ConvFusion> conv_fusion(const ir::Node& node) {
  ConvFusion f;
  DLRT_ASSIGN_OR_RETURN(f.act, activation_of(node));
  f.residual_input = 3;
  return f;
}

Result<MatMulFusion> matmul_fusion(const ir::Node& node) {
  MatMulFusion f;
  DLRT_ASSIGN_OR_RETURN(f.act, activation_of(node));
  f.alpha = node.attr_float("alpha", 1.0f);
  f.bias_input = 2;
  f.residual_input = 3;
  return f;
}

Result<std::unique_ptr<OpKernel>> make_fused_conv(const ir::Node& node, const Tensor* w) {
  DLRT_ASSIGN_OR_RETURN(ConvFusion f, conv_fusion(node));
  DLRT_ASSIGN_OR_RETURN(auto pre, prepack_conv_weights(node, w));
  return std::unique_ptr<OpKernel>(new FusedConvKernel(std::move(pre), f));
}

Result<std::unique_ptr<OpKernel>> make_fused_matmul(const ir::Node& node, const Tensor* b) {
  DLRT_ASSIGN_OR_RETURN(MatMulFusion f, matmul_fusion(node));
  DLRT_ASSIGN_OR_RETURN(auto pre, prepack_b(b, false));
  return std::unique_ptr<OpKernel>(new FusedMatMulKernel(std::move(pre), f));
}

Result<std::unique_ptr<OpKernel>> make_fused_gemm(const ir::Node& node, const Tensor* b) {
  DLRT_ASSIGN_OR_RETURN(Activation act, activation_of(node));
  DLRT_ASSIGN_OR_RETURN(auto pre, prepack_b(b, node.attr_int("transB", 0) != 0));
  return std::unique_ptr<OpKernel>(new FusedGemmKernel(std::move(pre), act));
}

using Maker = Result<std::unique_ptr<OpKernel>> (*)(const ir::Node&, const Tensor*);

KernelDef fused_def(const char* op, Maker make, size_t weight_input) {
  KernelDef d;
  d.op_type = op;
  d.domain = kDomain;
  d.min_opset = 1;
  d.max_opset = 1;
  d.factory = [make](const ir::Node& node) { return make(node, nullptr); };
  d.factory_with_constants = [make, weight_input](const ir::Node& node, const ConstantInputs& constants) {
    return make(node, constants(weight_input));
  };
  return d;
}

}  // namespace

Status register_fused_kernels(KernelRegistry& r) {
  DLRT_RETURN_IF_ERROR(r.add(fused_def("FusedConv", make_fused_conv, 1)));
  DLRT_RETURN_IF_ERROR(r.add(fused_def("FusedMatMul", make_fused_matmul, 1)));
  DLRT_RETURN_IF_ERROR(r.add(fused_def("FusedGemm", make_fused_gemm, 1)));
  return Status::Ok();
}

}  // namespace dlrt::cpu
