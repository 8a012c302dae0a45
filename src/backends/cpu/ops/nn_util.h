// Helpers shared by the CPU's compute-heavy families (matmul, conv, pool,
// normalization): half-precision staging through float32, and the spatial
// geometry (kernel/stride/dilation/pads/auto_pad) that Conv and the pools share.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "backends/cpu/kernel_util.h"
#include "core/checked_math.h"

namespace dlrt::cpu::nn {

inline bool is_half(DType t) { return t == DType::kFloat16 || t == DType::kBFloat16; }

// A float32 copy of a float16/bfloat16 tensor (kernels for those types compute in float32).
inline Result<Tensor> half_to_float(const Tensor& t) {
  DLRT_ASSIGN_OR_RETURN(Tensor f, Tensor::allocate(DType::kFloat32, t.shape()));
  float* d = f.data<float>();
  if (t.dtype() == DType::kFloat16) {
    const Float16* s = t.data<Float16>();
    for (int64_t i = 0; i < t.size(); ++i) d[i] = static_cast<float>(s[i]);
  } else {
    const BFloat16* s = t.data<BFloat16>();
    for (int64_t i = 0; i < t.size(); ++i) d[i] = static_cast<float>(s[i]);
  }
  return f;
}

// Converts a float32 tensor to `dtype` (float16 or bfloat16).
inline Result<Tensor> float_to_half(const Tensor& f, DType dtype) {
  DLRT_ASSIGN_OR_RETURN(Tensor t, Tensor::allocate(dtype, f.shape()));
  const float* s = f.data<float>();
  if (dtype == DType::kFloat16) {
    Float16* d = t.data<Float16>();
    for (int64_t i = 0; i < f.size(); ++i) d[i] = Float16(s[i]);
  } else {
    BFloat16* d = t.data<BFloat16>();
    for (int64_t i = 0; i < f.size(); ++i) d[i] = BFloat16(s[i]);
  }
  return t;
}

// Runs `body` (a kernel computing in float32 on the context it is given) for a
// node whose float inputs are float16/bfloat16: converts those inputs to
// float32, runs the float32 kernel on a shadow context, converts its float
// outputs back. Integer inputs (e.g. indices, shapes) pass through unchanged.
// Outputs from index `float_outputs_from` on stay float32 (LayerNormalization's
// Mean/InvStdDev are float32 whatever X is).
template <typename Body>
Status run_as_float32(KernelContext& ctx, Body&& body, size_t float_outputs_from = SIZE_MAX) {
  DType half = DType::kUndefined;
  std::vector<RunValue> in_values(ctx.num_inputs());
  std::vector<const RunValue*> in_ptrs(ctx.num_inputs(), nullptr);
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    const Tensor* t = ctx.input(i);
    if (!t) {
      in_ptrs[i] = ctx.input_value(i);
      continue;
    }
    if (is_half(t->dtype())) {
      half = t->dtype();
      DLRT_ASSIGN_OR_RETURN(Tensor f, half_to_float(*t));
      in_values[i] = RunValue::of(std::move(f));
    } else {
      in_values[i] = RunValue::of(*t);
    }
    in_ptrs[i] = &in_values[i];
  }
  std::vector<RunValue> outs(ctx.num_outputs());
  KernelContext inner(ctx.node(), in_ptrs, outs, ctx.pool(), nullptr);
  DLRT_RETURN_IF_ERROR(body(inner));
  for (size_t i = 0; i < outs.size(); ++i) {
    if (outs[i].kind != RunValue::Kind::kTensor) continue;
    if (outs[i].tensor.dtype() == DType::kFloat32 && half != DType::kUndefined && i < float_outputs_from) {
      DLRT_ASSIGN_OR_RETURN(Tensor h, float_to_half(outs[i].tensor, half));
      ctx.set_output(i, std::move(h));
    } else {
      ctx.set_output(i, std::move(outs[i].tensor));
    }
  }
  return Status::Ok();
}

// Spatial geometry of a sliding-window op over the trailing `nd` dims of an
// [N, C, D1..Dnd] input, resolved from the node's attributes.
struct WindowGeometry {
  int nd = 0;
  IntList in, out, kernel, stride, dilation, pad_begin, pad_end;
  int64_t in_size() const { return element_count(in); }
  int64_t out_size() const { return element_count(out); }
  int64_t kernel_size() const { return element_count(kernel); }
};

// A WindowGeometry padded to exactly three spatial dims [D, H, W] (to_geo3): a
// 1-D or 2-D window gets leading dims of size 1 with kernel 1, stride 1,
// dilation 1 and no padding, so the conv and pool loops are written once.
struct Geo3 {
  int64_t in[3], out[3], k[3], s[3], d[3], pb[3], pe[3];
  int nd = 0;  // the window's real spatial dims
  int64_t in_size() const { return in[0] * in[1] * in[2]; }
  int64_t out_size() const { return out[0] * out[1] * out[2]; }
  int64_t k_size() const { return k[0] * k[1] * k[2]; }
};

inline Geo3 to_geo3(const WindowGeometry& g) {
  Geo3 r;
  r.nd = g.nd;
  const int off = 3 - g.nd;
  for (int i = 0; i < 3; ++i) {
    const bool real = i >= off;
    r.in[i] = real ? g.in[i - off] : 1;
    r.out[i] = real ? g.out[i - off] : 1;
    r.k[i] = real ? g.kernel[i - off] : 1;
    r.s[i] = real ? g.stride[i - off] : 1;
    r.d[i] = real ? g.dilation[i - off] : 1;
    r.pb[i] = real ? g.pad_begin[i - off] : 0;
    r.pe[i] = real ? g.pad_end[i - off] : 0;
  }
  return r;
}

// Reads strides/dilations/pads/auto_pad for a window op with the given kernel
// and computes the output extent. ceil_mode rounds the output size up (pools),
// dropping a last window that would start inside the end padding.
inline Result<WindowGeometry> resolve_window(const KernelContext& ctx, const IntList& in_spatial,
                                             const IntList& kernel, bool ceil_mode) {
  const ir::Node& n = ctx.node();
  WindowGeometry g;
  g.nd = static_cast<int>(in_spatial.size());
  g.in = in_spatial;
  g.kernel = kernel;
  if (static_cast<int>(kernel.size()) != g.nd)
    return ctx.invalid("kernel_shape has " + std::to_string(kernel.size()) + " dims, expected " + std::to_string(g.nd));
  g.stride = ints_attr(n, "strides", g.nd, 1);
  g.dilation = ints_attr(n, "dilations", g.nd, 1);
  const IntList pads = ints_attr(n, "pads", 2 * g.nd, 0);
  if (static_cast<int>(g.stride.size()) != g.nd) return ctx.invalid("strides must have one value per spatial dim");
  if (static_cast<int>(g.dilation.size()) != g.nd) return ctx.invalid("dilations must have one value per spatial dim");
  if (static_cast<int>(pads.size()) != 2 * g.nd) return ctx.invalid("pads must have two values per spatial dim");
  std::string auto_pad = n.attr_string("auto_pad", "NOTSET");
  g.out.resize(g.nd);
  g.pad_begin.resize(g.nd);
  g.pad_end.resize(g.nd);
  // Sizes chosen by attributes in checked arithmetic: a wrapped extent could
  // pass the checks and address outside the input.
  auto overflow = [&](const char* what) {
    return ctx.invalid(std::string(what) + " overflows 64 bits (kernel " + shape_to_string(g.kernel) + ", strides " +
                       shape_to_string(g.stride) + ", dilations " + shape_to_string(g.dilation) + ", pads " +
                       shape_to_string(pads) + ")");
  };
  for (int i = 0; i < g.nd; ++i) {
    if (g.kernel[i] <= 0) return ctx.invalid("kernel dims must be positive");
    if (g.stride[i] <= 0) return ctx.invalid("strides must be positive");
    if (g.dilation[i] <= 0) return ctx.invalid("dilations must be positive");
    if (g.in[i] < 0) return ctx.invalid("negative input dim");
    const std::optional<int64_t> dilated = checked_mul(g.kernel[i] - 1, g.dilation[i]);
    if (!dilated || *dilated == INT64_MAX) return overflow("the dilated kernel");
    const int64_t ek = *dilated + 1;  // effective kernel extent
    if (auto_pad == "NOTSET") {
      g.pad_begin[i] = pads[i];
      g.pad_end[i] = pads[i + g.nd];
      if (g.pad_begin[i] < 0 || g.pad_end[i] < 0) return ctx.invalid("pads must be non-negative");
      std::optional<int64_t> padded = checked_add(g.in[i], g.pad_begin[i]);
      if (padded) padded = checked_add(*padded, g.pad_end[i]);
      if (!padded) return overflow("the padded input");
      const int64_t span = *padded - ek;  // both non-negative: no overflow
      if (span < 0) return ctx.invalid("the kernel is larger than the padded input");
      if (ceil_mode) {
        g.out[i] = ceil_div_exact(span, g.stride[i]) + 1;
        // A window must start inside the input or the begin padding.
        const std::optional<int64_t> last_start = checked_mul(g.out[i] - 1, g.stride[i]);
        if (!last_start || *last_start >= g.in[i] + g.pad_begin[i]) --g.out[i];
      } else {
        g.out[i] = span / g.stride[i] + 1;
      }
    } else if (auto_pad == "VALID") {
      g.pad_begin[i] = g.pad_end[i] = 0;
      if (g.in[i] < ek) return ctx.invalid("the kernel is larger than the input");
      g.out[i] = ceil_mode ? ceil_div_exact(g.in[i] - ek, g.stride[i]) + 1 : (g.in[i] - ek) / g.stride[i] + 1;
    } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      g.out[i] = ceil_div_exact(g.in[i], g.stride[i]);
      std::optional<int64_t> reach = checked_mul(g.out[i] == 0 ? 0 : g.out[i] - 1, g.stride[i]);
      if (reach) reach = checked_add(*reach, ek);
      if (!reach) return overflow("the padded extent");
      const int64_t total = std::max<int64_t>(0, *reach - g.in[i]);
      if (auto_pad == "SAME_UPPER") {
        g.pad_begin[i] = total / 2;
        g.pad_end[i] = total - total / 2;
      } else {
        g.pad_begin[i] = total - total / 2;
        g.pad_end[i] = total / 2;
      }
    } else {
      return ctx.invalid("unknown auto_pad '" + auto_pad + "'");
    }
    // One window reads the same taps whatever the stride; kernels that step by
    // the stride (window starts, im2col offsets) then never multiply by it.
    if (g.out[i] == 1) g.stride[i] = 1;
  }
  return g;
}

}  // namespace dlrt::cpu::nn
