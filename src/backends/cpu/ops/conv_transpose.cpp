// ConvTranspose over 1-D, 2-D and 3-D inputs: per (image, group) the
// columns W_g^T X_g on the GEMM, scattered into the output by col2im.
#include <algorithm>
#include <string>
#include <string_view>
#include <type_traits>

#include "backends/cpu/ops/conv_internal.h"
#include "backends/cpu/scratch.h"

namespace dlrt::cpu::conv_detail {
namespace {

// The adjoint of im2col: y[c, pos(o, kk)] += col[(c*K + kk), o]. Here `g.in`
// is ConvTranspose's output extent (the "image") and `g.out` its input extent.
template <typename T>
void col2im(const T* col, int64_t channels, const Geo3& g, T* y) {
  const int64_t img = g.in_size(), cols = g.out_size();
  int64_t row = 0;
  for (int64_t c = 0; c < channels; ++c) {
    T* yc = y + c * img;
    for (int64_t kd = 0; kd < g.k[0]; ++kd)
      for (int64_t kh = 0; kh < g.k[1]; ++kh)
        for (int64_t kw = 0; kw < g.k[2]; ++kw, ++row) {
          const T* src = col + row * cols;
          const int64_t off_w = kw * g.d[2] - g.pb[2];
          int64_t w0 = off_w >= 0 ? 0 : (-off_w + g.s[2] - 1) / g.s[2];
          int64_t w1 = g.in[2] - off_w > 0 ? (g.in[2] - off_w + g.s[2] - 1) / g.s[2] : 0;
          w1 = std::min(w1, g.out[2]);
          for (int64_t od = 0; od < g.out[0]; ++od) {
            const int64_t id = od * g.s[0] - g.pb[0] + kd * g.d[0];
            for (int64_t oh = 0; oh < g.out[1]; ++oh, src += g.out[2]) {
              const int64_t ih = oh * g.s[1] - g.pb[1] + kh * g.d[1];
              if (id < 0 || id >= g.in[0] || ih < 0 || ih >= g.in[1]) continue;
              T* dst = yc + (id * g.in[1] + ih) * g.in[2];
              for (int64_t ow = w0; ow < w1; ++ow) dst[ow * g.s[2] + off_w] += src[ow];
            }
          }
        }
  }
}

}  // namespace

Status conv_transpose_compute(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
  DLRT_ASSIGN_OR_RETURN(const Tensor* w, required_input(ctx, 1));
  const Tensor* bias = ctx.input(2);
  if (nn::is_half(x->dtype())) return nn::run_as_float32(ctx, conv_transpose_compute);
  if (x->dtype() != DType::kFloat32 && x->dtype() != DType::kFloat64)
    return ctx.unsupported(std::string("ConvTranspose on ") + dtype_name(x->dtype()) + " is not supported");
  if (w->dtype() != x->dtype() || (bias && bias->dtype() != x->dtype()))
    return ctx.invalid("X, W and B must have the same dtype");
  if (x->rank() < 3 || x->rank() > 5) return ctx.unsupported("ConvTranspose supports 1-D, 2-D and 3-D inputs only");
  if (w->rank() != x->rank()) return ctx.invalid("W must have the same rank as X");
  const ir::Node& node = ctx.node();
  const int nd = static_cast<int>(x->rank()) - 2;
  const int64_t N = x->dim(0), C = x->dim(1);
  const int64_t group = node.attr_int("group", 1);
  if (group <= 0 || C % group != 0) return ctx.invalid("group must divide the input channels");
  if (w->dim(0) != C) return ctx.invalid("W's first dim must equal X's channels");
  const int64_t Cg = C / group, Mg = w->dim(1), M = Mg * group;
  if (bias && (bias->rank() != 1 || bias->dim(0) != M)) return ctx.invalid("B must have shape [M]");
  DLRT_ASSIGN_OR_RETURN(IntList kshape, kernel_shape_of(ctx, *w, nd));

  IntList stride = ints_attr(node, "strides", nd, 1);
  IntList dil = ints_attr(node, "dilations", nd, 1);
  IntList outpad = ints_attr(node, "output_padding", nd, 0);
  IntList pads = ints_attr(node, "pads", 2 * nd, 0);
  IntList out_attr = ints_attr(node, "output_shape", 0, 0);
  const std::string_view auto_pad = [&]() -> std::string_view {
    const ir::Attribute* a = node.attr("auto_pad");
    return a ? std::string_view(a->s) : std::string_view("NOTSET");
  }();
  if (static_cast<int>(stride.size()) != nd || static_cast<int>(dil.size()) != nd ||
      static_cast<int>(outpad.size()) != nd || static_cast<int>(pads.size()) != 2 * nd)
    return ctx.invalid("strides, dilations, output_padding and pads must have one value (two for pads) per spatial dim");
  if (!out_attr.empty()) {
    if (static_cast<int>(out_attr.size()) == nd + 2) out_attr.erase(out_attr.begin(), out_attr.begin() + 2);
    if (static_cast<int>(out_attr.size()) != nd) return ctx.invalid("output_shape must have one value per spatial dim");
  }
  if (auto_pad != "NOTSET" && auto_pad != "VALID" && auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER")
    return ctx.invalid("unknown auto_pad '" + std::string(auto_pad) + "'");

  nn::WindowGeometry wg;  // in = ConvTranspose's output ("image"), out = its input (columns)
  wg.nd = nd;
  wg.in.resize(nd);
  wg.out.assign(x->shape().begin() + 2, x->shape().end());
  wg.kernel = kshape;
  wg.stride = stride;
  wg.dilation = dil;
  wg.pad_begin.resize(nd);
  wg.pad_end.resize(nd);
  auto floor_half = [](int64_t v) { return v >= 0 ? v / 2 : -((-v + 1) / 2); };
  for (int i = 0; i < nd; ++i) {
    if (stride[i] <= 0 || dil[i] <= 0 || kshape[i] <= 0) return ctx.invalid("strides, dilations and kernel dims must be positive");
    if (outpad[i] < 0) return ctx.invalid("output_padding must be non-negative");
    const int64_t in = wg.out[i];
    const int64_t full = stride[i] * (in - 1) + outpad[i] + (kshape[i] - 1) * dil[i] + 1;
    int64_t target = -1;
    if (!out_attr.empty()) target = out_attr[i];
    else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") target = in * stride[i];
    if (target >= 0) {
      const int64_t total = full - target;
      if (auto_pad == "SAME_UPPER") {
        wg.pad_begin[i] = floor_half(total);
        wg.pad_end[i] = total - floor_half(total);
      } else {
        wg.pad_begin[i] = total - floor_half(total);
        wg.pad_end[i] = floor_half(total);
      }
      wg.in[i] = target;
    } else {
      if (auto_pad == "VALID") pads[i] = pads[i + nd] = 0;
      if (pads[i] < 0 || pads[i + nd] < 0) return ctx.invalid("pads must be non-negative");
      wg.pad_begin[i] = pads[i];
      wg.pad_end[i] = pads[i + nd];
      wg.in[i] = full - pads[i] - pads[i + nd];
    }
    if (wg.in[i] < 0) return ctx.invalid("the computed output size is negative");
  }
  Shape out_shape = {N, M};
  out_shape.insert(out_shape.end(), wg.in.begin(), wg.in.end());
  // Every element is written below: each channel is first set to its bias (or 0).
  DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, x->dtype(), out_shape));
  if (y->size() == 0) return Status::Ok();
  const Geo3 g = to_geo3(wg);

  auto run = [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    const T* X = x->data<T>();
    const T* W = w->data<T>();
    T* Y = y->data<T>();
    const int64_t img = g.in_size(), cols = g.out_size(), ks = g.k_size();
    const int64_t col_rows = Mg * ks;
    ThreadPool& pool = ctx.pool();
    const T* Bv = bias ? bias->data<T>() : nullptr;
    if (conv_transpose_is_disjoint(g)) {
      conv_transpose_disjoint<T>(pool, X, W, Bv, Y, N, group, Cg, Mg, g);
      return Status::Ok();
    }
    // Channels [c0, c1) of (image n, group gi): set to the bias, then the
    // columns' rows of those channels scattered in.
    auto scatter = [&](int64_t n, int64_t gi, const T* col, int64_t c0, int64_t c1) {
      T* Yg = Y + (n * M + gi * Mg) * img;
      for (int64_t c = c0; c < c1; ++c) std::fill(Yg + c * img, Yg + (c + 1) * img, Bv ? Bv[gi * Mg + c] : T(0));
      col2im<T>(col + c0 * ks * cols, c1 - c0, g, Yg + c0 * img);
    };
    // Per (image, group): col = W_g^T X_g, then scattered into Y; with the
    // pool, the GEMM and the scatter (by channel) both run in parallel.
    auto one = [&](int64_t n, int64_t gi, T* col, ThreadPool* p) {
      gemm_t<T>(true, false, col_rows, cols, Cg, W + gi * Cg * col_rows, col_rows, X + (n * C + gi * Cg) * cols, cols,
                T(0), col, cols, p);
      if (!p) return scatter(n, gi, col, 0, Mg);
      p->parallel_for(Mg, 1, [&](int64_t c0, int64_t c1) { scatter(n, gi, col, c0, c1); });
    };
    // The columns live in a per-thread buffer that is kept from run to run.
    auto col_buffer = [&]() {
      static thread_local AlignedScratch col;
      return col.get<T>(static_cast<size_t>(col_rows * cols));
    };
    const int64_t tasks = N * group;
    if (tasks >= 2 * pool.num_threads()) {
      pool.parallel_for(tasks, 1, [&](int64_t b, int64_t e) {
        T* col = col_buffer();
        for (int64_t t = b; t < e; ++t) one(t / group, t % group, col, nullptr);
      });
    } else {
      T* col = col_buffer();
      for (int64_t t = 0; t < tasks; ++t) one(t / group, t % group, col, &pool);
    }
    return Status::Ok();
  };
  if (x->dtype() == DType::kFloat32) return run(std::type_identity<float>{});
  return run(std::type_identity<double>{});
}

}  // namespace dlrt::cpu::conv_detail
