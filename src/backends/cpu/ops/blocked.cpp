// The com.dlrt ops of the channel-blocked float32 layout (opset 1), emitted
// by ir/passes/blocked_layout.cpp; a blocked tensor is [N, ceil(C/b), H, W, b]
// (kernels/conv_blocked.h), b the `block` attribute (8 or 16):
//   ToBlocked(X [N, C, H, W]) -> blocked, pad lanes zero    (block)
//   FromBlocked(X blocked) -> [N, C, H, W]                  (block, channels = C)
//   ConvBlocked(X, W, [B], [Z]) -> blocked Y = act(Conv(X, W) + B + Z):
//       FusedConv's inputs and attributes (activation_affine included; W a constant [M, C/group, kh, kw],
//       2-D, group 1 or one channel per group), Z blocked like Y; X blocked, or
//       NCHW when x_blocked = 0 (group 1 only: a stem reads its image directly). A 3x3 stride-1
//       conv of blocked input runs as Winograd F(4x4, 3x3) where the NCHW Conv would.
//   GlobalPoolBlocked(X) -> [N, cb, 1, 1, b]                (block, max: 0 average, 1 max)
//   MaxPoolBlocked(X) -> blocked                            (block and MaxPool's 2-D attributes)
//   ChannelScaleBlocked(X, S, [R]) -> X * S (+ R), S [N or 1, cb, 1, 1, b], R blocked like X (block):
//       squeeze-excite's scale, with R = X its residual form y + y * s (ir/passes/channel_scale_residual.cpp)
//   ConcatBlocked(X0, X1, ...) -> blocked Concat on channels  (block, channels = each input's C):
//       channel counts need not be whole blocks (kernels/concat_blocked.h)
#include <algorithm>
#include <memory>
#include <mutex>
#include <new>
#include <utility>
#include <vector>

#include "backends/cpu/kernel_families.h"
#include "backends/cpu/kernel_util.h"
#include "backends/cpu/kernels/channel_scale_residual.h"
#include "backends/cpu/kernels/concat_blocked.h"
#include "backends/cpu/kernels/conv_blocked.h"
#include "backends/cpu/ops/conv_impl.h"
#include "backends/cpu/ops/nn_util.h"

namespace dlrt::cpu {
namespace {

Result<int> block_of(const KernelContext& ctx) {
  const int64_t b = ctx.node().attr_int("block", 16);
  if (b != 8 && b != 16) return ctx.invalid("block must be 8 or 16, got " + std::to_string(b));
  return static_cast<int>(b);
}

Result<const Tensor*> float_input(const KernelContext& ctx, size_t i, int64_t rank) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* t, required_input(ctx, i));
  if (t->dtype() != DType::kFloat32)
    return ctx.unsupported(std::string("input ") + std::to_string(i) + " has dtype " + dtype_name(t->dtype()) +
                           " (float32 expected)");
  if (t->rank() != rank)
    return ctx.invalid("input " + std::to_string(i) + " has shape " + shape_to_string(t->shape()) + ", expected rank " +
                       std::to_string(rank));
  return t;
}

// A blocked input of `block` lanes.
Result<const Tensor*> blocked_input(const KernelContext& ctx, size_t i, int block) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* t, float_input(ctx, i, 5));
  if (t->dim(4) != block)
    return ctx.invalid("input " + std::to_string(i) + " has shape " + shape_to_string(t->shape()) + ", not " +
                       std::to_string(block) + "-channel blocks");
  return t;
}

Status to_blocked_compute(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(int b, block_of(ctx));
  DLRT_ASSIGN_OR_RETURN(const Tensor* x, float_input(ctx, 0, 4));
  const int64_t N = x->dim(0), C = x->dim(1), H = x->dim(2), W = x->dim(3);
  DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, DType::kFloat32, {N, ceil_div(C, b), H, W, b}));
  to_blocked(x->data<float>(), N, C, H * W, b, y->data<float>(), &ctx.pool());
  return Status::Ok();
}

Status from_blocked_compute(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(int b, block_of(ctx));
  DLRT_ASSIGN_OR_RETURN(const Tensor* x, blocked_input(ctx, 0, b));
  const int64_t C = ctx.node().attr_int("channels", -1);
  if (C < 0 || ceil_div(C, b) != x->dim(1))
    return ctx.invalid("channels " + std::to_string(C) + " does not fit the blocked shape " + shape_to_string(x->shape()));
  const int64_t N = x->dim(0), H = x->dim(2), W = x->dim(3);
  DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, DType::kFloat32, {N, C, H, W}));
  from_blocked(x->data<float>(), N, C, H * W, b, y->data<float>(), &ctx.pool());
  return Status::Ok();
}

Status global_pool_compute(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(int b, block_of(ctx));
  DLRT_ASSIGN_OR_RETURN(const Tensor* x, blocked_input(ctx, 0, b));
  const int64_t N = x->dim(0), cb = x->dim(1), hw = x->dim(2) * x->dim(3);
  if (hw == 0 && N * cb > 0) return ctx.invalid("global pooling of an empty plane");
  DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, DType::kFloat32, {N, cb, 1, 1, b}));
  global_pool_blocked(x->data<float>(), N, cb, hw, b, ctx.node().attr_int("max", 0) != 0, y->data<float>(),
                      &ctx.pool());
  return Status::Ok();
}

Status channel_scale_compute(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(int b, block_of(ctx));
  DLRT_ASSIGN_OR_RETURN(const Tensor* x, blocked_input(ctx, 0, b));
  DLRT_ASSIGN_OR_RETURN(const Tensor* s, blocked_input(ctx, 1, b));
  const int64_t N = x->dim(0), cb = x->dim(1), hw = x->dim(2) * x->dim(3);
  if (s->dim(1) != cb || s->dim(2) != 1 || s->dim(3) != 1 || (s->dim(0) != N && s->dim(0) != 1))
    return ctx.invalid("S has shape " + shape_to_string(s->shape()) + ", not one value per channel of X " +
                       shape_to_string(x->shape()));
  const Tensor* r = nullptr;
  if (ctx.input(2)) {
    DLRT_ASSIGN_OR_RETURN(r, blocked_input(ctx, 2, b));
    if (r->shape() != x->shape())
      return ctx.invalid("R has shape " + shape_to_string(r->shape()) + ", not X's " + shape_to_string(x->shape()));
  }
  DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, DType::kFloat32, x->shape()));
  if (r)
    channel_scale_residual_blocked(x->data<float>(), s->data<float>(), r->data<float>(), N, cb, hw, b,
                                   s->dim(0) == N, y->data<float>(), &ctx.pool());
  else
    channel_scale_blocked(x->data<float>(), s->data<float>(), N, cb, hw, b, s->dim(0) == N, y->data<float>(),
                          &ctx.pool());
  return Status::Ok();
}

BlockedConvGeometry geometry_of(const nn::WindowGeometry& wg, int64_t N, int64_t C, int64_t M) {
  BlockedConvGeometry g;
  g.N = N;
  g.C = C;
  g.M = M;
  g.H = wg.in[0];
  g.W = wg.in[1];
  g.OH = wg.out[0];
  g.OW = wg.out[1];
  g.kh = wg.kernel[0];
  g.kw = wg.kernel[1];
  g.sh = wg.stride[0];
  g.sw = wg.stride[1];
  g.dh = wg.dilation[0];
  g.dw = wg.dilation[1];
  g.pad_top = wg.pad_begin[0];
  g.pad_left = wg.pad_begin[1];
  return g;
}

Status max_pool_blocked_compute(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(int b, block_of(ctx));
  DLRT_ASSIGN_OR_RETURN(const Tensor* x, blocked_input(ctx, 0, b));
  const IntList kernel = ints_attr(ctx.node(), "kernel_shape", 0, 0);
  if (kernel.size() != 2) return ctx.invalid("kernel_shape must have 2 values");
  DLRT_ASSIGN_OR_RETURN(nn::WindowGeometry wg, nn::resolve_window(ctx, IntList{x->dim(2), x->dim(3)}, kernel,
                                                                   ctx.node().attr_int("ceil_mode", 0) != 0));
  const BlockedConvGeometry g = geometry_of(wg, x->dim(0), x->dim(1), x->dim(1));
  DLRT_ASSIGN_OR_RETURN(Tensor * y,
                        ctx.allocate_output_uninitialized(0, DType::kFloat32, {g.N, x->dim(1), g.OH, g.OW, b}));
  max_pool_blocked(x->data<float>(), g, x->dim(1), b, y->data<float>(), &ctx.pool());
  return Status::Ok();
}

class ConvBlockedKernel final : public OpKernel {
 public:
  ConvBlockedKernel(BlockedConvWeights w, const Tensor& source, Activation act, bool x_blocked)
      : w_(std::move(w)), source_(source), source_data_(source.raw_data()), act_(act), x_blocked_(x_blocked) {}

  // w_ holds every weight exactly: the constant W can go (weights() unpacks it where needed).
  bool can_drop_constant(size_t input) const override { return input == 1 && source_.raw_data() != nullptr; }
  void drop_constant(size_t input) override {
    if (can_drop_constant(input)) source_ = freed_constant(source_);
  }

  Status compute(KernelContext& ctx) const override {
    const int b = w_.block;
    DLRT_ASSIGN_OR_RETURN(const Tensor* wt, required_input(ctx, 1));
    if (wt->dtype() != DType::kFloat32 || wt->shape() != source_.shape())
      return ctx.invalid("W has shape " + shape_to_string(wt->shape()) + ", not the constant's " +
                         shape_to_string(source_.shape()));
    // W is the constant packed at creation (or its stand-in once freed),
    // unless a run passes another tensor.
    BlockedConvWeights repacked;
    const BlockedConvWeights& wp =
        is_built_constant(*wt, source_data_, source_.shape())
            ? w_
            : (repacked = pack_blocked_conv(wt->data<float>(), w_.M, w_.C, w_.kh, w_.kw, w_.depthwise, b));
    DLRT_ASSIGN_OR_RETURN(const Tensor* x, x_blocked_ ? blocked_input(ctx, 0, b) : float_input(ctx, 0, 4));
    const int64_t C = w_.C, M = w_.M, N = x->dim(0);
    if (x_blocked_ ? x->dim(1) != ceil_div(C, b) : x->dim(1) != C)
      return ctx.invalid("X has shape " + shape_to_string(x->shape()) + ", which does not hold the " +
                         std::to_string(C) + " channels W expects");
    DLRT_ASSIGN_OR_RETURN(nn::WindowGeometry wg,
                          nn::resolve_window(ctx, IntList{x->dim(2), x->dim(3)}, IntList{w_.kh, w_.kw}, false));
    BlockedConvGeometry g = geometry_of(wg, N, C, M);
    const Shape out{N, ceil_div(M, b), g.OH, g.OW, b};
    const bool winograd = &wp == &w_ && winograd4(wg);
    // Taps that read padding only at these sizes (dynamic ones the graph
    // pass conv-padding-taps could not see): run the cropped conv.
    const BlockedConvWeights* use = &wp;
    if (&wp == &w_ && !winograd) {
      const ConvTapCrop crop = dead_conv_taps(wg);
      if (crop.any())
        if (const BlockedConvWeights* c = cropped(crop)) {
          use = c;
          count_cropped_conv_run();
          g.kh = c->kh, g.kw = c->kw;
          g.pad_top -= crop.lead[1] * g.dh, g.pad_left -= crop.lead[2] * g.dw;
        }
    }
    const Tensor* bias = ctx.input(2);
    if (bias && (bias->dtype() != DType::kFloat32 || bias->size() != M))
      return ctx.invalid("B must be float32 with " + std::to_string(M) + " values");
    const Tensor* z = ctx.input(3);
    if (z && (z->dtype() != DType::kFloat32 || z->shape() != out))
      return ctx.invalid("Z has shape " + shape_to_string(z->shape()) + ", expected " + shape_to_string(out));
    DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, DType::kFloat32, out));
    if (y->size() == 0) return Status::Ok();
    if (winograd) {
      run_winograd4(winograd_geometry(wg), N, x->data<float>(), bias ? bias->data<float>() : nullptr,
                    z ? z->data<float>() : nullptr, y->data<float>(), ctx.pool());
      return Status::Ok();
    }
    conv_blocked(*use, g, x->data<float>(), x_blocked_, bias ? bias->data<float>() : nullptr,
                 z ? z->data<float>() : nullptr, act_, y->data<float>(), &ctx.pool());
    return Status::Ok();
  }

  // Whether this run takes Winograd F(4x4, 3x3) (conv_winograd4_blocked):
  // where the NCHW Conv would (conv_winograd_tile), for blocked input in
  // 16-channel blocks, the constant W and 48+ output channels (the columns
  // of its GEMMs: fewer leave most of each 48-wide tile empty).
  bool winograd4(const nn::WindowGeometry& wg) const {
    if (w_.block != 16 || !x_blocked_ || w_.depthwise || wg.nd != 2 || w_.M < 48) return false;
    const int64_t k[2] = {w_.kh, w_.kw}, s[2] = {wg.stride[0], wg.stride[1]}, d[2] = {wg.dilation[0], wg.dilation[1]};
    if (conv_winograd_tile(1, w_.M, w_.C, k, s, d, wg.out[0], wg.out[1]) != 4) return false;
    return winograd_ok(winograd_geometry(wg));
  }

  static WinogradGeometry winograd_geometry(const nn::WindowGeometry& wg) {
    WinogradGeometry geo;
    geo.in_h = wg.in[0], geo.in_w = wg.in[1], geo.out_h = wg.out[0], geo.out_w = wg.out[1];
    geo.pad_top = wg.pad_begin[0], geo.pad_left = wg.pad_begin[1];
    return geo;
  }

  // Image by image, the F(4x4, 3x3) filters of W transformed on the first run.
  void run_winograd4(const WinogradGeometry& geo, int64_t N, const float* x, const float* bias, const float* z,
                     float* y, ThreadPool& pool) const {
    std::call_once(winograd4_once_, [&] { winograd4_ = winograd4_filters(weights().data<float>(), w_.M, w_.C, true); });
    const int64_t x_image = ceil_div(w_.C, 16) * geo.in_h * geo.in_w * 16;
    const int64_t y_image = ceil_div(w_.M, 16) * geo.out_h * geo.out_w * 16;
    for (int64_t n = 0; n < N; ++n)
      conv_winograd4_blocked(*winograd4_, geo, x + n * x_image, y + n * y_image, bias,
                             z ? z + n * y_image : nullptr, act_, pool);
  }

  // The weights without `crop`'s taps, packed on the first run that asks
  // for this crop and kept (thread-safe); null when a removed weight is not
  // finite (0 * inf is NaN: those taps are not dead).
  const BlockedConvWeights* cropped(const ConvTapCrop& crop) const {
    std::lock_guard<std::mutex> lock(crops_mutex_);
    for (const auto& [key, made] : crops_)
      if (key == crop) return made.get();
    std::unique_ptr<BlockedConvWeights> made;
    const Tensor w = crop_conv_weights(weights(), crop);
    if (w.size() > 0)
      made = std::make_unique<BlockedConvWeights>(
          pack_blocked_conv(w.data<float>(), w_.M, w_.C, w.dim(2), w.dim(3), w_.depthwise, w_.block));
    crops_.emplace_back(crop, std::move(made));
    return crops_.back().second.get();
  }

 private:
  // W: the constant while held, else unpacked from w_ (a new tensor on each call).
  Tensor weights() const {
    if (source_.raw_data() || source_.size() == 0) return source_;
    auto w = Tensor::allocate_uninitialized(DType::kFloat32, source_.shape());
    if (!w.ok()) throw std::bad_alloc();  // kernels' allocation failures surface as kOutOfMemory
    unpack_blocked_conv(w_, w->data<float>());
    return std::move(w).value();
  }

  BlockedConvWeights w_;
  Tensor source_;  // the constant W, until dropped (then its stand-in)
  const void* source_data_;
  Activation act_;
  bool x_blocked_;
  mutable std::mutex crops_mutex_;
  mutable std::vector<std::pair<ConvTapCrop, std::unique_ptr<BlockedConvWeights>>> crops_;
  mutable std::once_flag winograd4_once_;
  mutable std::shared_ptr<const WinogradFilters> winograd4_;
};

Result<std::unique_ptr<OpKernel>> make_conv_blocked(const ir::Node& node, const Tensor* w) {
  const std::string where = node.describe() + ": ";
  if (!w) return InvalidArgument(where + "W must be a constant");
  if (w->dtype() != DType::kFloat32 || w->rank() != 4)
    return InvalidArgument(where + "W must be a float32 [M, C/group, kh, kw] constant");
  const int64_t b = node.attr_int("block", 16), group = node.attr_int("group", 1);
  if (b != 8 && b != 16) return InvalidArgument(where + "block must be 8 or 16");
  const int64_t M = w->dim(0);
  const bool depthwise = group > 1;
  if (depthwise && (w->dim(1) != 1 || group != M))
    return Unsupported(where + "only one group, or one channel per group, runs blocked");
  const bool x_blocked = node.attr_int("x_blocked", 1) != 0;
  if (depthwise && !x_blocked) return Unsupported(where + "a depthwise conv reads blocked input only");
  const IntList ks = ints_attr(node, "kernel_shape", 0, 0);
  if (!ks.empty() && (ks.size() != 2 || ks[0] != w->dim(2) || ks[1] != w->dim(3)))
    return InvalidArgument(where + "kernel_shape does not match W");
  DLRT_ASSIGN_OR_RETURN(Activation act, activation_of(node));
  const int64_t C = depthwise ? group : w->dim(1);
  BlockedConvWeights packed =
      pack_blocked_conv(w->data<float>(), M, C, w->dim(2), w->dim(3), depthwise, static_cast<int>(b));
  return std::unique_ptr<OpKernel>(new ConvBlockedKernel(std::move(packed), *w, act, x_blocked));
}

class ConcatBlockedKernel final : public OpKernel {
 public:
  explicit ConcatBlockedKernel(BlockedConcatPlan plan) : plan_(std::move(plan)) {}

  Status compute(KernelContext& ctx) const override {
    const int b = plan_.block;
    if (ctx.num_inputs() != plan_.channels.size())
      return ctx.invalid(std::to_string(ctx.num_inputs()) + " inputs for " + std::to_string(plan_.channels.size()) +
                         " channel counts");
    thread_local std::vector<const float*> xs;  // no heap allocation once the input count was seen
    xs.resize(plan_.channels.size());
    const Tensor* first = nullptr;
    for (size_t j = 0; j < plan_.channels.size(); ++j) {
      DLRT_ASSIGN_OR_RETURN(const Tensor* x, blocked_input(ctx, j, b));
      if (!first) first = x;
      if (x->dim(1) != plan_.blocks[j] || x->dim(0) != first->dim(0) || x->dim(2) != first->dim(2) ||
          x->dim(3) != first->dim(3))
        return ctx.invalid("input " + std::to_string(j) + " has shape " + shape_to_string(x->shape()) + ", not [" +
                           std::to_string(first->dim(0)) + ", " + std::to_string(plan_.blocks[j]) + ", " +
                           std::to_string(first->dim(2)) + ", " + std::to_string(first->dim(3)) + ", " +
                           std::to_string(b) + "] (" + std::to_string(plan_.channels[j]) + " channels)");
      xs[j] = x->data<float>();
    }
    const int64_t N = first->dim(0), H = first->dim(2), W = first->dim(3);
    const int64_t obs = static_cast<int64_t>(plan_.runs.size());
    DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, DType::kFloat32, {N, obs, H, W, b}));
    concat_blocked(plan_, xs.data(), N, H * W, y->data<float>(), &ctx.pool());
    return Status::Ok();
  }

 private:
  BlockedConcatPlan plan_;
};

Result<std::unique_ptr<OpKernel>> make_concat_blocked(const ir::Node& node) {
  const std::string where = node.describe() + ": ";
  const int64_t b = node.attr_int("block", 16);
  if (b != 8 && b != 16) return InvalidArgument(where + "block must be 8 or 16");
  const ir::Attribute* a = node.attr("channels");
  if (!a || a->ints.empty()) return InvalidArgument(where + "attribute 'channels' (one count per input) is required");
  for (int64_t c : a->ints)
    if (c < 0) return InvalidArgument(where + "channel counts must not be negative");
  return std::unique_ptr<OpKernel>(new ConcatBlockedKernel(plan_blocked_concat(a->ints, static_cast<int>(b))));
}

}  // namespace

Status register_blocked_kernels(KernelRegistry& r) {
  DLRT_RETURN_IF_ERROR(r.add_fn("ToBlocked", to_blocked_compute, 1, 1, kDlrtDomain));
  DLRT_RETURN_IF_ERROR(r.add_fn("FromBlocked", from_blocked_compute, 1, 1, kDlrtDomain));
  DLRT_RETURN_IF_ERROR(r.add_fn("GlobalPoolBlocked", global_pool_compute, 1, 1, kDlrtDomain));
  DLRT_RETURN_IF_ERROR(r.add_fn("MaxPoolBlocked", max_pool_blocked_compute, 1, 1, kDlrtDomain));
  DLRT_RETURN_IF_ERROR(r.add_fn("ChannelScaleBlocked", channel_scale_compute, 1, 1, kDlrtDomain));
  KernelDef cat;
  cat.op_type = "ConcatBlocked";
  cat.domain = kDlrtDomain;
  cat.min_opset = 1;
  cat.max_opset = 1;
  cat.factory = [](const ir::Node& node) { return make_concat_blocked(node); };
  DLRT_RETURN_IF_ERROR(r.add(std::move(cat)));
  KernelDef d;
  d.op_type = "ConvBlocked";
  d.domain = kDlrtDomain;
  d.min_opset = 1;
  d.max_opset = 1;
  d.factory = [](const ir::Node& node) { return make_conv_blocked(node, nullptr); };
  d.factory_with_constants = [](const ir::Node& node, const ConstantInputs& constants) {
    return make_conv_blocked(node, constants(1));
  };
  return r.add(std::move(d));
}

}  // namespace dlrt::cpu
