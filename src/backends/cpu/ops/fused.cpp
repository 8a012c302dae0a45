// dlrt's own fused ops (domain com.dlrt, opset 1), emitted by the graph
// optimizer (src/ir/passes/):
//   FusedConv(X, W, [B], [Z]):  Y = act(Conv(X, W) + B + Z)   (Conv's attributes)
//   FusedMatMul(A, B, [C], [Z]): Y = act(alpha * (A @ B) + C + Z)  (C: bias along the last dim,
//                                Z: a residual of Y's shape)
//   FusedGemm(A, B, [C]):       Y = act(Gemm(A, B, C))        (Gemm's attributes)
//   FusedExpandDepthwise(X, We, [Be], Wd, [Bd], [Wp], [Bp], [Z]):
//                               D = act(DwConv(expand_act(Conv(X, We) + Be), Wd) + Bd)
//                               (the depthwise Conv's attributes; expand_strides, expand_pads,
//                               expand_activation[_params] for the first, group-1 conv); Y = D,
//                               or with Wp [N, M, 1, 1] Y = project_act(Conv(D, Wp) + Bp + Z)
//                               (project_activation[_params]; see expand_depthwise.h)
// with attributes activation (string: "" none, Relu, Clip, Sigmoid, Tanh,
// LeakyRelu, HardSigmoid, HardSwish, Gelu, Gelu_tanh) and activation_params
// (floats: Clip [min, max], LeakyRelu [alpha], HardSigmoid [alpha, beta]),
// and an optional activation_affine (floats [scale, shift]: Y = act(...) *
// scale + shift, one rounding; project_activation_affine for the project conv)
// and an optional activation_clamp (floats [lo, hi]: Y = min(max(Y, lo), hi)
// after the affine; project_activation_clamp for the project conv).
// The bias/residual/activation run in the GEMM's epilogue, on each output
// tile while it is in cache; constant weights are packed at kernel creation.
#include <optional>

#include "backends/cpu/kernel_families.h"
#include "backends/cpu/kernels/activation_epilogue.h"
#include "backends/cpu/kernels/expand_depthwise.h"
#include "backends/cpu/ops/conv_impl.h"
#include "backends/cpu/ops/matmul_impl.h"
#include "core/checked_math.h"

namespace dlrt::cpu {
namespace {

class FusedExpandDepthwiseKernel final : public OpKernel {
 public:
  FusedExpandDepthwiseKernel(const Tensor* we, const Tensor* wp, Activation act_e, Activation act_d,
                             Activation act_p)
      : act_e_(clamp_stage(act_e)), act_d_(clamp_stage(act_d)), act_p_(act_p) {
    if (we && we->dtype() == DType::kFloat32 && we->rank() == 4) {
      source_ = *we;
      packed_lanes_ = expand_depthwise_lanes(we->dim(0));
      packed_ = pack_expand_weights(we->data<float>(), we->dim(0), we->dim(0) ? we->size() / we->dim(0) : 0,
                                    packed_lanes_);
    }
    if (wp && wp->dtype() == DType::kFloat32 && wp->rank() == 4 && wp->dim(0) > 0) {
      project_source_ = *wp;
      project_packed_ = PackedMatrix::pack_a(false, wp->dim(0), wp->size() / wp->dim(0), wp->data<float>(),
                                             wp->size() / wp->dim(0));
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
    s.K = x->dim(1), s.M = we->dim(0), s.in_h = x->dim(2), s.in_w = x->dim(3);
    if (we->dim(1) != s.K || wd->dim(0) != s.M || wd->dim(1) != 1)
      return ctx.invalid("We " + shape_to_string(we->shape()) + " and Wd " + shape_to_string(wd->shape()) +
                         " do not fit X " + shape_to_string(x->shape()));
    for (const Tensor* b : {be, bd})
      if (b && (b->dtype() != DType::kFloat32 || b->size() != s.M))
        return ctx.invalid("biases must hold " + std::to_string(s.M) + " float32 values");
    for (const char* attr : {"strides", "expand_strides"})
      if (!node.ints_of(attr).empty() && node.ints_of(attr).size() != 2)
        return ctx.invalid(std::string(attr) + " must hold 2 values");
    for (const char* attr : {"pads", "expand_pads"})
      if (!node.ints_of(attr).empty() && node.ints_of(attr).size() != 4)
        return ctx.invalid(std::string(attr) + " must hold 4 values");
    for (int64_t d : node.ints_of("dilations"))
      if (d != 1) return ctx.unsupported("dilated depthwise convs are not supported");
    // A 2-D window: kernel kh x kw, strides and [top, left, bottom, right] pads from the attributes.
    struct Window {
      int64_t kh, kw, sh, sw, pt, pl, out_h, out_w;
    };
    auto window = [&](int64_t in_h, int64_t in_w, int64_t kh, int64_t kw, const char* strides_attr,
                      const char* pads_attr) -> Result<Window> {
      const std::span<const int64_t> st = node.ints_of(strides_attr), pd = node.ints_of(pads_attr);
      Window w{kh, kw, st.size() == 2 ? st[0] : 1, st.size() == 2 ? st[1] : 1, pd.size() == 4 ? pd[0] : 0,
               pd.size() == 4 ? pd[1] : 0, 0, 0};
      const int64_t pb = pd.size() == 4 ? pd[2] : 0, pr = pd.size() == 4 ? pd[3] : 0;
      // Padded extents in checked arithmetic (hostile pads must not wrap into a small plane).
      std::optional<int64_t> ph = checked_add(in_h, w.pt), pw = checked_add(in_w, w.pl);
      if (ph) ph = checked_add(*ph, pb);
      if (pw) pw = checked_add(*pw, pr);
      if (w.sh < 1 || w.sw < 1 || w.pt < 0 || w.pl < 0 || pb < 0 || pr < 0 || !ph || !pw || *ph < kh || *pw < kw)
        return InvalidArgument(node.describe() + ": bad " + strides_attr + " or " + pads_attr + " for a " +
                               std::to_string(kh) + "x" + std::to_string(kw) + " kernel on a " + std::to_string(in_h) +
                               "x" + std::to_string(in_w) + " plane");
      w.out_h = (*ph - kh) / w.sh + 1, w.out_w = (*pw - kw) / w.sw + 1;
      // One window per axis reads the same taps whatever the stride.
      if (w.out_h == 1) w.sh = 1;
      if (w.out_w == 1) w.sw = 1;
      return w;
    };
    DLRT_ASSIGN_OR_RETURN(Window ew, window(s.in_h, s.in_w, we->dim(2), we->dim(3), "expand_strides", "expand_pads"));
    s.e = {ew.kh, ew.kw, ew.sh, ew.sw, ew.pt, ew.pl};
    s.H = ew.out_h, s.W = ew.out_w;
    DLRT_ASSIGN_OR_RETURN(Window dw, window(s.H, s.W, wd->dim(2), wd->dim(3), "strides", "pads"));
    DepthwiseGeometry& g = s.g;
    g.in_h = s.H, g.in_w = s.W, g.kh = dw.kh, g.kw = dw.kw, g.sh = dw.sh, g.sw = dw.sw;
    g.pad_top = dw.pt, g.pad_left = dw.pl, g.out_h = dw.out_h, g.out_w = dw.out_w;
    s.act_e = act_e_, s.act_d = act_d_;
    s.lanes = expand_depthwise_lanes(s.M);
    if (!expand_depthwise_ok(s)) return ctx.unsupported("geometry not supported: X " + shape_to_string(x->shape()));
    const int64_t N = x->dim(0), out_plane = g.out_h * g.out_w;
    // The projection: Wp [P, M, 1, 1], Bp [P], Z of Y's shape.
    const Tensor* wp = ctx.input(5);
    const Tensor* bp = ctx.input(6);
    const Tensor* z = ctx.input(7);
    int64_t P = s.M;
    if ((bp || z) && !wp) return ctx.invalid("Bp and Z need Wp");
    if (wp) {
      if (wp->dtype() != DType::kFloat32 || wp->rank() != 4 || wp->dim(1) != s.M || wp->dim(2) != 1 ||
          wp->dim(3) != 1)
        return ctx.invalid("Wp must be float32 [P, " + std::to_string(s.M) + ", 1, 1], got " +
                           shape_to_string(wp->shape()));
      P = wp->dim(0);
      if (bp && (bp->dtype() != DType::kFloat32 || bp->size() != P))
        return ctx.invalid("Bp must hold " + std::to_string(P) + " float32 values");
    }
    const Shape y_shape{N, P, g.out_h, g.out_w};
    if (z && (z->dtype() != DType::kFloat32 || z->shape() != y_shape))
      return ctx.invalid("Z must be float32 " + shape_to_string(y_shape) + ", got " + shape_to_string(z->shape()));
    DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, DType::kFloat32, y_shape));
    if (y->size() == 0) return Status::Ok();
    std::vector<float> local;
    const float* packed = packed_.data();
    if (packed_.empty() || packed_lanes_ != s.lanes || source_.raw_data() != we->raw_data() ||
        source_.shape() != we->shape()) {
      local = pack_expand_weights(we->data<float>(), s.M, we->size() / s.M, s.lanes);
      packed = local.data();
    }
    ProjectStage proj;
    std::shared_ptr<const PackedMatrix> local_p;
    if (wp) {
      proj.w = project_packed_.get();
      if (!proj.w || project_source_.raw_data() != wp->raw_data() || project_source_.shape() != wp->shape()) {
        local_p = PackedMatrix::pack_a(false, P, s.M, wp->data<float>(), s.M);
        proj.w = local_p.get();
      }
      proj.ep.row_bias = bp ? bp->data<float>() : nullptr;
      proj.ep.ldr = out_plane;
      proj.ep.act = act_p_;
    }
    for (int64_t n = 0; n < N; ++n) {
      if (z) proj.ep.residual = z->data<float>() + n * P * out_plane;
      expand_depthwise(s, x->data<float>() + n * s.K * s.in_h * s.in_w, packed, be ? be->data<float>() : nullptr,
                       wd->data<float>(), bd ? bd->data<float>() : nullptr, y->data<float>() + n * P * out_plane,
                       ctx.pool(), wp ? &proj : nullptr);
    }
    return Status::Ok();
  }

 private:
  Tensor source_, project_source_;
  std::vector<float> packed_;
  int64_t packed_lanes_ = 8;
  std::shared_ptr<const PackedMatrix> project_packed_;
  ClampStage act_e_, act_d_;
  Activation act_p_;
};

Result<std::unique_ptr<OpKernel>> make_fused_expand_depthwise(const ir::Node& node, const Tensor* we,
                                                               const Tensor* wp) {
  DLRT_ASSIGN_OR_RETURN(Activation act_d, activation_of(node));
  auto act_e = make_activation(node.attr_string("expand_activation", ""), node.attr_floats("expand_activation_params"));
  if (!act_e.ok()) return InvalidArgument(node.describe() + ": " + act_e.status().message());
  DLRT_RETURN_IF_ERROR(read_activation_affine(node, "expand_activation_affine", *act_e));
  if (!clamp_or_none(*act_e) || !clamp_or_none(act_d))
    return InvalidArgument(node.describe() +
                           ": only Relu, Clip or no activation (no post-affine or post-clamp) are supported");
  auto act_p = make_activation(node.attr_string("project_activation", ""), node.attr_floats("project_activation_params"));
  if (!act_p.ok()) return InvalidArgument(node.describe() + ": " + act_p.status().message());
  DLRT_RETURN_IF_ERROR(read_activation_affine(node, "project_activation_affine", *act_p));
  DLRT_RETURN_IF_ERROR(read_activation_clamp(node, "project_activation_clamp", *act_p));
  return std::unique_ptr<OpKernel>(new FusedExpandDepthwiseKernel(we, wp, *act_e, act_d, *act_p));
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
  return std::unique_ptr<OpKernel>(new ConvKernel(std::move(pre), f));
}

Result<std::unique_ptr<OpKernel>> make_fused_matmul(const ir::Node& node, const Tensor* b) {
  DLRT_ASSIGN_OR_RETURN(MatMulFusion f, matmul_fusion(node));
  DLRT_ASSIGN_OR_RETURN(auto pre, prepack_b(b, false));
  return std::unique_ptr<OpKernel>(new MatMulKernel(std::move(pre), f));
}

Result<std::unique_ptr<OpKernel>> make_fused_gemm(const ir::Node& node, const Tensor* b) {
  DLRT_ASSIGN_OR_RETURN(Activation act, activation_of(node));
  DLRT_ASSIGN_OR_RETURN(auto pre, prepack_b(b, node.attr_int("transB", 0) != 0));
  return std::unique_ptr<OpKernel>(new GemmKernel(std::move(pre), act));
}

using Maker = Result<std::unique_ptr<OpKernel>> (*)(const ir::Node&, const Tensor*);

KernelDef fused_def(const char* op, Maker make, size_t weight_input) {
  KernelDef d;
  d.op_type = op;
  d.domain = kDlrtDomain;
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
  // Two constant weights: We (input 1) and the projection's Wp (input 5).
  KernelDef ed;
  ed.op_type = "FusedExpandDepthwise";
  ed.domain = kDlrtDomain;
  ed.min_opset = 1;
  ed.max_opset = 1;
  ed.factory = [](const ir::Node& node) { return make_fused_expand_depthwise(node, nullptr, nullptr); };
  ed.factory_with_constants = [](const ir::Node& node, const ConstantInputs& constants) {
    return make_fused_expand_depthwise(node, constants(1), constants(5));
  };
  DLRT_RETURN_IF_ERROR(r.add(std::move(ed)));
  return Status::Ok();
}

}  // namespace dlrt::cpu
