// dlrt's own fused ops (domain com.dlrt, opset 1), emitted by the graph
// optimizer (src/ir/passes/):
//   FusedConv(X, W, [B], [Z]):  Y = act(Conv(X, W) + B + Z)   (Conv's attributes)
//   FusedMatMul(A, B, [C], [Z]): Y = act(alpha * (A @ B) + C + Z)  (C: bias along the last dim,
//                                Z: a residual of Y's shape)
//   FusedGemm(A, B, [C]):       Y = act(Gemm(A, B, C))        (Gemm's attributes)
//   FusedExpandDepthwise(X, We, [Be], Wd, [Bd]): Y = act(DwConv(expand_act(Conv1x1(X, We) + Be), Wd) + Bd)
//                               (the depthwise Conv's attributes; expand_activation[_params]
//                               for the 1x1 conv; see expand_depthwise.h)
// with attributes activation (string: "" none, Relu, Clip, Sigmoid, Tanh,
// LeakyRelu, HardSigmoid, HardSwish, Gelu, Gelu_tanh) and activation_params
// (floats: Clip [min, max], LeakyRelu [alpha], HardSigmoid [alpha, beta]).
// The bias/residual/activation run in the GEMM's epilogue, on each output
// tile while it is in cache; constant weights are packed at kernel creation.
#include "backends/cpu/activation_epilogue.h"
#include "backends/cpu/conv_impl.h"
#include "backends/cpu/expand_depthwise.h"
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

class FusedExpandDepthwiseKernel final : public OpKernel {
 public:
  FusedExpandDepthwiseKernel(const Tensor* we, Activation act_e, Activation act_d)
      : act_e_(clamp_stage(act_e)), act_d_(clamp_stage(act_d)) {
    if (we && we->dtype() == DType::kFloat32 && we->rank() == 4) {
      source_ = *we;
      packed_ = pack_expand_weights(we->data<float>(), we->dim(0), we->dim(1));
    }
  }

  Status compute(KernelContext& ctx) const override {
    const ir::Node& node = ctx.node();
    const Tensor* x = ctx.input(0);
    const Tensor* we = ctx.input(1);
    const Tensor* be = ctx.input(2);
    const Tensor* wd = ctx.input(3);
    const Tensor* bd = ctx.input(4);
    if (!x || !we || !wd) return ctx.invalid("X, We and Wd are required");
    if (x->dtype() != DType::kFloat32 || we->dtype() != DType::kFloat32 || wd->dtype() != DType::kFloat32)
      return ctx.unsupported("only float32 is supported");
    if (x->rank() != 4 || we->rank() != 4 || wd->rank() != 4)
      return ctx.invalid("X, We and Wd must be 4-D, got " + shape_to_string(x->shape()) + ", " +
                         shape_to_string(we->shape()) + ", " + shape_to_string(wd->shape()));
    ExpandDepthwiseShape s;
    s.K = x->dim(1), s.M = we->dim(0), s.H = x->dim(2), s.W = x->dim(3);
    if (we->dim(1) != s.K || we->dim(2) != 1 || we->dim(3) != 1 || wd->dim(0) != s.M || wd->dim(1) != 1)
      return ctx.invalid("We " + shape_to_string(we->shape()) + " and Wd " + shape_to_string(wd->shape()) +
                         " do not fit X " + shape_to_string(x->shape()));
    for (const Tensor* b : {be, bd})
      if (b && (b->dtype() != DType::kFloat32 || b->size() != s.M))
        return ctx.invalid("biases must hold " + std::to_string(s.M) + " float32 values");
    const std::vector<int64_t> strides = node.attr_ints("strides"), pads = node.attr_ints("pads");
    if ((!strides.empty() && strides.size() != 2) || (!pads.empty() && pads.size() != 4))
      return ctx.invalid("strides must hold 2 values and pads 4");
    for (int64_t d : node.attr_ints("dilations"))
      if (d != 1) return ctx.unsupported("dilated depthwise convs are not supported");
    DepthwiseGeometry& g = s.g;
    g.in_h = s.H, g.in_w = s.W, g.kh = wd->dim(2), g.kw = wd->dim(3);
    g.sh = strides.size() == 2 ? strides[0] : 1, g.sw = strides.size() == 2 ? strides[1] : 1;
    const int64_t pt = pads.size() == 4 ? pads[0] : 0, pl = pads.size() == 4 ? pads[1] : 0;
    const int64_t pb = pads.size() == 4 ? pads[2] : 0, pr = pads.size() == 4 ? pads[3] : 0;
    g.pad_top = pt, g.pad_left = pl;
    if (g.sh < 1 || g.sw < 1 || s.H + pt + pb < g.kh || s.W + pl + pr < g.kw)
      return ctx.invalid("bad strides or pads for a " + std::to_string(g.kh) + "x" + std::to_string(g.kw) +
                         " kernel on " + shape_to_string(x->shape()));
    g.out_h = (s.H + pt + pb - g.kh) / g.sh + 1, g.out_w = (s.W + pl + pr - g.kw) / g.sw + 1;
    s.act_e = act_e_, s.act_d = act_d_;
    if (!expand_depthwise_ok(s)) return ctx.unsupported("geometry not supported: X " + shape_to_string(x->shape()));
    const int64_t N = x->dim(0);
    DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, DType::kFloat32, {N, s.M, g.out_h, g.out_w}));
    if (y->size() == 0) return Status::Ok();
    std::vector<float> local;
    const float* packed = packed_.data();
    if (packed_.empty() || source_.raw_data() != we->raw_data() || source_.shape() != we->shape()) {
      local = pack_expand_weights(we->data<float>(), s.M, s.K);
      packed = local.data();
    }
    for (int64_t n = 0; n < N; ++n)
      expand_depthwise(s, x->data<float>() + n * s.K * s.H * s.W, packed, be ? be->data<float>() : nullptr,
                       wd->data<float>(), bd ? bd->data<float>() : nullptr,
                       y->data<float>() + n * s.M * g.out_h * g.out_w, ctx.pool());
    return Status::Ok();
  }

 private:
  Tensor source_;
  std::vector<float> packed_;
  ClampStage act_e_, act_d_;
};

Result<std::unique_ptr<OpKernel>> make_fused_expand_depthwise(const ir::Node& node, const Tensor* we) {
  DLRT_ASSIGN_OR_RETURN(Activation act_d, activation_of(node));
  auto act_e = make_activation(node.attr_string("expand_activation", ""), node.attr_floats("expand_activation_params"));
  if (!act_e.ok()) return InvalidArgument(node.describe() + ": " + act_e.status().message());
  if (!clamp_or_none(*act_e) || !clamp_or_none(act_d))
    return InvalidArgument(node.describe() + ": only Relu, Clip or no activation are supported");
  return std::unique_ptr<OpKernel>(new FusedExpandDepthwiseKernel(we, *act_e, act_d));
}

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
  DLRT_RETURN_IF_ERROR(r.add(fused_def("FusedExpandDepthwise", make_fused_expand_depthwise, 1)));
  return Status::Ok();
}

}  // namespace dlrt::cpu
