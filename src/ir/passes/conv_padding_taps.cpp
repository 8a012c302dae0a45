// Conv kernel taps that only ever read padding are cropped out of the weights
// (passes.h: crop_padding_taps).
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "ir/conv_taps.h"
#include "ir/passes/rewriter.h"

namespace dlrt::ir::passes {
namespace {

// One spatial axis of a conv: input size, kernel, stride, dilation, pads.
struct Axis {
  bool known = true;  // the input size is known statically
  int64_t in = 0, kernel = 0, stride = 1, dilation = 1, pad_begin = 0, pad_end = 0;
  int64_t span() const { return in + pad_begin + pad_end - (kernel - 1) * dilation - 1; }  // (out - 1) * stride + rest
  int64_t out() const { return span() / stride + 1; }
};

// How many leading (lead) and trailing (trail) taps of `a` to crop, with the
// axis they leave: the same outputs from the same input positions. Removing
// `lead` taps moves the first tap's input position by lead * dilation, which
// pad_begin absorbs (it must stay >= 0); removing `trail` taps shortens the
// kernel's extent by trail * dilation, which pad_end absorbs (down to the
// least non-negative pad that keeps the output size).
struct Crop {
  int64_t lead = 0, trail = 0;
  Axis axis;
};

Crop crop_axis(const Axis& a) {
  Crop c;
  c.axis = a;
  if (!a.known) return c;
  const ConvTapCut cut = dead_conv_taps({a.in, a.out(), a.kernel, a.stride, a.dilation, a.pad_begin});
  c.lead = cut.lead;
  c.trail = cut.trail;
  for (;; --c.trail) {  // trail 0 keeps the span, so the output size, as it was
    Axis n = a;
    n.kernel = a.kernel - c.lead - c.trail;
    n.pad_begin = a.pad_begin - c.lead * a.dilation;
    n.pad_end = std::max<int64_t>(0, a.pad_end - c.trail * a.dilation);
    if (c.trail == 0 || (n.span() >= 0 && n.out() == a.out())) {
      c.axis = n;
      break;
    }
  }
  return c;
}

// The spatial axes of a 1-, 2- or 3-D Conv with constant float W and an input
// of known rank, pads resolved (auto_pad SAME_* too, which needs every size);
// an axis of unknown size is not `known`. nullopt when the node is not such a
// conv.
std::optional<std::vector<Axis>> conv_axes(Rewriter& rw, const Node& n) {
  if (!is_op(n, "Conv") || n.inputs.size() < 2 || n.outputs.size() != 1 || n.inputs[0] == kNoValue) return std::nullopt;
  const Tensor* w = rw.constant(n.inputs[1]);
  if (!w || w->rank() < 3 || w->rank() > 5 || w->size() == 0) return std::nullopt;
  const DType dt = w->dtype();
  if (dt != DType::kFloat32 && dt != DType::kFloat16 && dt != DType::kBFloat16 && dt != DType::kFloat64)
    return std::nullopt;
  const auto& xs = rw.graph().values[static_cast<size_t>(n.inputs[0])].type.shape;
  const int64_t nd = w->rank() - 2;
  if (!xs || static_cast<int64_t>(xs->size()) != w->rank()) return std::nullopt;
  const auto kernel = n.attr_ints("kernel_shape"), strides = n.attr_ints("strides"), dil = n.attr_ints("dilations"),
             pads = n.attr_ints("pads");
  if ((!kernel.empty() && static_cast<int64_t>(kernel.size()) != nd) ||
      (!strides.empty() && static_cast<int64_t>(strides.size()) != nd) ||
      (!dil.empty() && static_cast<int64_t>(dil.size()) != nd) ||
      (!pads.empty() && static_cast<int64_t>(pads.size()) != 2 * nd))
    return std::nullopt;
  const std::string auto_pad = n.attr_string("auto_pad", "NOTSET");
  if (auto_pad != "NOTSET" && auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER")
    return std::nullopt;  // VALID: no padding
  std::vector<Axis> axes(static_cast<size_t>(nd));
  for (int64_t i = 0; i < nd; ++i) {
    Axis& a = axes[i];
    a.known = (*xs)[2 + i].is_static();
    a.in = (*xs)[2 + i].size;
    a.kernel = w->dim(2 + i);
    if (!kernel.empty() && kernel[i] != a.kernel) return std::nullopt;
    a.stride = strides.empty() ? 1 : strides[i];
    a.dilation = dil.empty() ? 1 : dil[i];
    if ((a.known && a.in < 1) || a.kernel < 1 || a.stride < 1 || a.dilation < 1) return std::nullopt;
    // (Sizes and attributes past 2^31 are left to the kernel: the arithmetic below stays far from overflow.)
    constexpr int64_t kLimit = int64_t{1} << 31;
    if (a.in >= kLimit || a.kernel >= kLimit || a.stride >= kLimit || a.dilation >= kLimit) return std::nullopt;
    if (!a.known && auto_pad != "NOTSET") return std::nullopt;
    if (auto_pad == "NOTSET") {
      a.pad_begin = pads.empty() ? 0 : pads[i];
      a.pad_end = pads.empty() ? 0 : pads[i + nd];
    } else {  // SAME_*: output ceil(in / stride), the odd pad at the end (UPPER) or the beginning (LOWER)
      const int64_t out = (a.in + a.stride - 1) / a.stride;
      const int64_t total = std::max<int64_t>(0, (out - 1) * a.stride + (a.kernel - 1) * a.dilation + 1 - a.in);
      a.pad_begin = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      a.pad_end = total - a.pad_begin;
    }
    if (a.pad_begin < 0 || a.pad_end < 0 || a.pad_begin >= kLimit || a.pad_end >= kLimit) return std::nullopt;
    if (a.known && a.span() < 0) return std::nullopt;  // the kernel reports it
  }
  return axes;
}

}  // namespace

int crop_padding_taps(Graph& g, PassContext& ctx) {
  Rewriter rw(g, ctx);
  int fired = 0;
  for (int i = 0; i < rw.size(); ++i) {
    if (rw.dead(i)) continue;
    const Node& n = rw.node(i);
    auto axes = conv_axes(rw, n);
    if (!axes || ctx.keeps_rounding(n.outputs[0])) continue;  // the cropped conv may sum in another order
    std::vector<Crop> crops;
    bool any = false;
    for (const Axis& a : *axes) {
      crops.push_back(crop_axis(a));
      any = any || crops.back().lead > 0 || crops.back().trail > 0;
    }
    if (!any) continue;
    std::vector<ConvTapCut> cuts;
    for (const Crop& c : crops) cuts.push_back({c.lead, c.trail});
    auto w = crop_conv_taps(*rw.constant(n.inputs[1]), cuts);
    if (!w) continue;
    Node conv = n;
    const size_t nd = crops.size();
    std::vector<int64_t> pads(2 * nd), kernel(nd);
    for (size_t k = 0; k < nd; ++k) {
      pads[k] = crops[k].axis.pad_begin;
      pads[k + nd] = crops[k].axis.pad_end;
      kernel[k] = crops[k].axis.kernel;
    }
    conv.attributes["pads"] = make_attr_ints(pads);
    conv.attributes.erase("auto_pad");
    if (conv.has_attr("kernel_shape")) conv.attributes["kernel_shape"] = make_attr_ints(kernel);
    conv.inputs[1] = rw.new_constant(n.name + "_live_taps_W", std::move(*w));
    log_fired("conv-padding-taps", "cropped the padding-only taps of " + n.describe());
    rw.replace(i, std::move(conv));
    ++fired;
  }
  rw.commit();
  ctx.count("conv-padding-taps", fired);
  return fired;
}

}  // namespace dlrt::ir::passes
