// ConvInteger and QLinearConv on NCHW tensors: 1 x 1 and im2col convs on the
// 8-bit GEMM (gemm_int8.h, the weights packed once), depthwise ones directly
// (depthwise_int8.h); QLinearConv requantizes as the sums leave the kernels.
#include "backends/cpu/ops/quantize_conv.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backends/cpu/kernel_families.h"
#include "backends/cpu/kernel_util.h"
#include "backends/cpu/kernels/depthwise_int8.h"
#include "backends/cpu/kernels/gemm_int8.h"
#include "backends/cpu/kernels/quantize_rows.h"
#include "backends/cpu/ops/quantize_util.h"
#include "backends/cpu/scratch.h"
#include "core/checked_math.h"

namespace dlrt::cpu {

Result<ConvGeometry> conv_geometry(const KernelContext& ctx, const Shape& x, const Shape& w) {
  const ir::Node& n = ctx.node();
  if (x.size() < 3 || w.size() != x.size()) return ctx.invalid("x and w must have the same rank >= 3");
  ConvGeometry g;
  const size_t sd = x.size() - 2;
  g.N = x[0];
  g.C = x[1];
  g.M = w[0];
  g.group = n.attr_int("group", 1);
  if (g.group <= 0 || g.C % g.group != 0 || g.M % g.group != 0 || checked_mul(w[1], g.group) != g.C)
    return ctx.invalid("channels do not match: x " + shape_to_string(x) + ", w " + shape_to_string(w) + ", group " +
                       std::to_string(g.group));
  g.in.assign(x.begin() + 2, x.end());
  g.kernel.assign(w.begin() + 2, w.end());
  // (ints_attr: no heap copies on the run path.)
  const IntList ks = ints_attr(n, "kernel_shape", 0, 0);
  if (!ks.empty() && ks != g.kernel) return ctx.invalid("kernel_shape does not match w's shape");
  g.stride = ints_attr(n, "strides", sd, 1);
  g.dilation = ints_attr(n, "dilations", sd, 1);
  Shape pads = ints_attr(n, "pads", 2 * sd, 0);
  if (g.stride.size() != sd || g.dilation.size() != sd || pads.size() != 2 * sd)
    return ctx.invalid("strides, dilations or pads have the wrong length");
  const std::string auto_pad = n.attr_string("auto_pad", "NOTSET");
  g.out.resize(sd);
  g.pad_begin.resize(sd);
  auto overflow = [&](const char* what) {
    return ctx.invalid(std::string(what) + " overflows 64 bits (strides " + shape_to_string(g.stride) + ", dilations " +
                       shape_to_string(g.dilation) + ", pads " + shape_to_string(pads) + ")");
  };
  int64_t padded_plane = 1;
  for (size_t i = 0; i < sd; ++i) {
    if (g.stride[i] <= 0 || g.dilation[i] <= 0 || pads[i] < 0 || pads[i + sd] < 0)
      return ctx.invalid("strides and dilations must be positive and pads non-negative");
    // Attribute-chosen sizes in checked arithmetic: a wrapped extent could fit a smaller buffer.
    const std::optional<int64_t> dilated = checked_mul(g.kernel[i] - 1, g.dilation[i]);
    if (!dilated || *dilated == INT64_MAX) return overflow("the dilated kernel");
    const int64_t span = *dilated + 1;
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      const int64_t o = ceil_div_exact(g.in[i], g.stride[i]);
      const std::optional<int64_t> reach = checked_add(o == 0 ? 0 : (o - 1) * g.stride[i], span);
      if (!reach) return overflow("the padded extent");
      const int64_t total = std::max<int64_t>(0, *reach - g.in[i]);
      pads[i] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      pads[i + sd] = total - pads[i];
    } else if (auto_pad == "VALID") {
      pads[i] = pads[i + sd] = 0;
    } else if (auto_pad != "NOTSET") {
      return ctx.invalid("unknown auto_pad '" + auto_pad + "'");
    }
    std::optional<int64_t> padded = checked_add(g.in[i], pads[i]);
    if (padded) padded = checked_add(*padded, pads[i + sd]);
    if (!padded) return overflow("the padded input");
    if (*padded < span) return ctx.invalid("kernel is larger than the padded input");
    const std::optional<int64_t> room = checked_sub(*padded, span);  // span < 1 for an empty kernel
    if (!room) return overflow("the padded input");
    g.out[i] = *room / g.stride[i] + 1;
    // One window reads the same taps whatever the stride, and the kernels size
    // scratch by the stride (depthwise_int8 splits the padded plane into stride
    // phases): with one window along an axis its stride is taken as 1.
    if (g.out[i] == 1) g.stride[i] = 1;
    // That scratch spans the padded plane: its size must be countable (one too
    // large for memory is OutOfMemory when it is asked for, not a wrapped size).
    const std::optional<int64_t> phases = checked_add(*padded, g.stride[i]);
    const std::optional<int64_t> plane = phases ? checked_mul(padded_plane, *phases) : std::nullopt;
    if (!plane || *plane > INT64_MAX / 8) return overflow("the padded input");
    padded_plane = *plane;
    g.pad_begin[i] = pads[i];
    const std::optional<int64_t> in_size = checked_mul(g.in_size, g.in[i]);
    const std::optional<int64_t> kernel_size = checked_mul(g.kernel_size, g.kernel[i]);
    const std::optional<int64_t> out_size = checked_mul(g.out_size, g.out[i]);
    if (!in_size || !kernel_size || !out_size) return overflow("the input, kernel or output size");
    g.in_size = *in_size;
    g.kernel_size = *kernel_size;
    g.out_size = *out_size;
  }
  return g;
}

namespace {

// col[(c*K + k) * out_size + o] = x[c, in(o, k)] as raw bytes, or x_zp in the padding.
void im2col(const ConvGeometry& g, const uint8_t* x, int64_t channels, uint8_t pad, uint8_t* col) {
  const size_t sd = g.in.size();
  int64_t kidx[8], oidx[8];
  for (int64_t c = 0; c < channels; ++c) {
    const uint8_t* xc = x + c * g.in_size;
    for (int64_t k = 0; k < g.kernel_size; ++k) {
      int64_t rem = k;
      for (size_t d = sd; d-- > 0;) {
        kidx[d] = rem % g.kernel[d];
        rem /= g.kernel[d];
      }
      uint8_t* dst = col + (c * g.kernel_size + k) * g.out_size;
      std::fill(oidx, oidx + sd, 0);
      for (int64_t o = 0; o < g.out_size; ++o) {
        int64_t off = 0;
        bool inside = true;
        for (size_t d = 0; d < sd; ++d) {
          const int64_t pos = oidx[d] * g.stride[d] - g.pad_begin[d] + kidx[d] * g.dilation[d];
          if (pos < 0 || pos >= g.in[d]) {
            inside = false;
            break;
          }
          off = off * g.in[d] + pos;
        }
        dst[o] = inside ? xc[off] : pad;
        for (size_t d = sd; d-- > 0;) {
          if (++oidx[d] < g.out[d]) break;
          oidx[d] = 0;
        }
      }
    }
  }
}

// Columns [j0, j1) of row k = (c, kh, kw) of a 2-D conv's im2col matrix
// (column j = output position oh * OW + ow): x[c, ih, iw] or `pad` outside.
void im2col_row_2d(const ConvGeometry& g, const uint8_t* x, int64_t k, int64_t j0, int64_t j1, uint8_t pad,
                   uint8_t* dst) {
  const int64_t KH = g.kernel[0], KW = g.kernel[1], H = g.in[0], W = g.in[1], OW = g.out[1];
  const int64_t c = k / (KH * KW), kh = (k / KW) % KH, kw = k % KW;
  const int64_t sh = g.stride[0], sw = g.stride[1];
  const uint8_t* xc = x + c * g.in_size;
  if (sh == 1 && sw == 1 && OW == W) {
    // Stride 1 and "same" width: column j reads x[c] at the flat position
    // j + dr * W + dc, so the row is one copy, then its padding.
    const int64_t dr = kh * g.dilation[0] - g.pad_begin[0], dc = kw * g.dilation[1] - g.pad_begin[1];
    const int64_t shift = dr * W + dc;
    const int64_t r0 = std::clamp<int64_t>(-dr, 0, g.out[0]), r1 = std::clamp<int64_t>(H - dr, r0, g.out[0]);
    const int64_t c0 = std::clamp<int64_t>(-dc, 0, OW), c1 = std::clamp<int64_t>(W - dc, c0, OW);
    // Inside rows [r0, r1) and inside x's plane.
    const int64_t a = std::max({j0, r0 * OW, -shift}), b = std::min({j1, r1 * OW, g.in_size - shift});
    if (a < b) std::memcpy(dst + (a - j0), xc + a + shift, static_cast<size_t>(b - a));
    if (a > j0) std::memset(dst, pad, static_cast<size_t>(std::min(a, j1) - j0));
    if (b < j1) {
      const int64_t from = std::max(b, j0);
      std::memset(dst + (from - j0), pad, static_cast<size_t>(j1 - from));
    }
    // Columns outside x in the copied rows: one strided pass per such column.
    auto patch = [&](int64_t col) {
      // Output rows oh in [r0, r1) with oh * OW + col in [j0, j1) (j0 - col > -OW).
      const int64_t first = std::max(r0, (j0 - col + OW - 1) / OW);
      const int64_t last = j1 - 1 - col < 0 ? 0 : std::min(r1, (j1 - 1 - col) / OW + 1);
      for (int64_t j = first * OW + col; j < last * OW + col; j += OW) dst[j - j0] = pad;
    };
    for (int64_t col = 0; col < c0; ++col) patch(col);
    for (int64_t col = c1; col < OW; ++col) patch(col);
    return;
  }
  const int64_t off = kw * g.dilation[1] - g.pad_begin[1];
  // Output columns whose input column is inside the row: [lo, hi).
  const int64_t lo = off >= 0 ? 0 : (-off + sw - 1) / sw;
  const int64_t hi = W - 1 - off >= 0 ? std::min(OW, (W - 1 - off) / sw + 1) : 0;
  int64_t j = j0;
  while (j < j1) {
    const int64_t oh = j / OW, ow0 = j % OW, ow1 = std::min(OW, ow0 + (j1 - j));
    uint8_t* d = dst + (j - j0);
    const int64_t ih = oh * sh - g.pad_begin[0] + kh * g.dilation[0];
    if (ih < 0 || ih >= H || lo >= hi) {
      std::memset(d, pad, static_cast<size_t>(ow1 - ow0));
    } else {
      const uint8_t* row = xc + ih * W + off;
      const int64_t a = std::max(ow0, lo), b = std::min(ow1, hi);
      if (a > ow0) std::memset(d, pad, static_cast<size_t>(std::min(a, ow1) - ow0));
      if (a < b) copy_strided_bytes(row + a * sw, sw, b - a, d + (a - ow0));
      if (b < ow1) {
        const int64_t from = std::max(b, ow0);
        std::memset(d + (from - ow0), pad, static_cast<size_t>(ow1 - from));
      }
    }
    j += ow1 - ow0;
  }
}

// True when the im2col matrix of a group is x itself: 1 x ... x 1 kernel, stride 1, no padding.
bool is_pointwise(const ConvGeometry& g) {
  for (size_t d = 0; d < g.in.size(); ++d)
    if (g.kernel[d] != 1 || g.stride[d] != 1 || g.pad_begin[d] != 0 || g.out[d] != g.in[d]) return false;
  return true;
}

// A constant 8-bit conv weight packed once as gemm_u8s8's A, one per group.
struct PrepackedW {
  const void* data = nullptr;  // the tensor it was packed from
  DType dtype = DType::kUndefined;
  Shape shape;
  int64_t group = 0;
  std::vector<std::shared_ptr<const PackedInt8A>> groups;

  const PackedInt8A* find(const Tensor& w, int64_t grp, int64_t groups_now) const {
    if (w.raw_data() != data || w.dtype() != dtype || w.shape() != shape || groups_now != group) return nullptr;
    return groups[static_cast<size_t>(grp)].get();
  }
};

// Packs W (M x C/group x kernel...) per group, unless it is depthwise (direct loops, nothing to pack).
std::shared_ptr<const PrepackedW> prepack_w(const ir::Node& node, const Tensor* w) {
  if (!w || !is_8bit(w->dtype()) || w->rank() < 3 || w->size() == 0) return nullptr;
  const int64_t group = node.attr_int("group", 1), M = w->dim(0);
  if (group <= 0 || M % group != 0 || M / group == 1) return nullptr;
  auto pre = std::make_shared<PrepackedW>();
  pre->data = w->raw_data();
  pre->dtype = w->dtype();
  pre->shape = w->shape();
  pre->group = group;
  const int64_t Mg = M / group, CK = w->size() / M;
  const auto* base = static_cast<const uint8_t*>(w->raw_data());
  for (int64_t grp = 0; grp < group; ++grp)
    pre->groups.push_back(PackedInt8A::pack(Mg, CK, base + grp * Mg * CK, CK, w->dtype() == DType::kInt8));
  return pre;
}

// The sums of integer_conv, per image n, output channel m and position:
// int32 to acc[N][M][out] (ConvInteger), or requantized straight to y
// (QLinearConv: requant->out is y, requant->mult and bias per channel).
struct ConvSums {
  int32_t* acc = nullptr;
  const Int8RequantOutput* requant = nullptr;
};

// Output planes up to this size run channels-last (depthwise_int8_channels).
constexpr int64_t kChannelsLastDepthwise = 16384;

// A 2-D depthwise conv (one input and one output channel per group), plane by
// plane, or channels-last in blocks of channels for small planes.
void depthwise_conv(const ConvGeometry& g, const uint8_t* x, bool x_signed, int32_t xz, const uint8_t* w, bool w_signed,
                    const int32_t* wz, const ConvSums& out, ThreadPool& pool) {
  DepthwiseInt8Geometry d;
  d.H = g.in[0];
  d.W = g.in[1];
  d.OH = g.out[0];
  d.OW = g.out[1];
  d.KH = g.kernel[0];
  d.KW = g.kernel[1];
  d.sh = g.stride[0];
  d.sw = g.stride[1];
  d.dh = g.dilation[0];
  d.dw = g.dilation[1];
  d.ph = g.pad_begin[0];
  d.pw = g.pad_begin[1];
  const int64_t taps = d.KH * d.KW;
  auto kernel_of = [&](int64_t c, int32_t* wc) {  // channel c's kernel minus its zero point
    for (int64_t t = 0; t < taps; ++t) {
      const uint8_t b = w[c * taps + t];
      wc[t] = (w_signed ? static_cast<int32_t>(static_cast<int8_t>(b)) : static_cast<int32_t>(b)) - wz[c];
    }
  };
  if (out.requant && g.out_size <= kChannelsLastDepthwise && depthwise_int8_channels_available()) {
    // Small planes: blocks of 64 channels at a time, channels in the vector lanes.
    thread_local AlignedScratch all_w;
    int32_t* wall = all_w.get<int32_t>(static_cast<size_t>(g.M * taps), AlignedScratch::Growth::kByHalf);
    for (int64_t c = 0; c < g.M; ++c) kernel_of(c, wall + c * taps);
    const Int8RequantOutput& q = *out.requant;
    for_each_depthwise_int8_task(d, g.N, g.M, pool, [&](const DepthwiseInt8Task& k) {
      DepthwiseInt8Requant r;
      r.mult = q.mult + k.c0;
      r.bias = q.bias ? q.bias + k.c0 : nullptr;
      r.zero_point = q.zero_point;
      r.out_signed = q.out_signed;
      depthwise_int8_channels(k.band, k.cb, x + (k.n * g.M + k.c0) * g.in_size + k.ih0 * d.W, g.in_size, x_signed,
                              xz, wall + k.c0 * taps, r,
                              static_cast<uint8_t*>(q.out) + (k.n * g.M + k.c0) * g.out_size + k.oh0 * d.OW,
                              g.out_size);
    });
    return;
  }
  auto planes = [&](int64_t p0, int64_t p1) {
    thread_local AlignedScratch w_scratch;
    int32_t* wc = w_scratch.get<int32_t>(static_cast<size_t>(taps), AlignedScratch::Growth::kByHalf);
    for (int64_t p = p0; p < p1; ++p) {
      const int64_t c = p % g.M;
      kernel_of(c, wc);
      const uint8_t* xc = x + p * g.in_size;
      if (const Int8RequantOutput* q = out.requant) {
        const int32_t bias = q->bias ? q->bias[c] : 0;
        const float mult = q->mult[c];
        auto* y = static_cast<uint8_t*>(q->out) + p * g.out_size;
        auto requant = [&](const int32_t* sums, int64_t n, uint8_t* dst) {
          if (q->out_signed)
            requantize_s8(sums, n, bias, mult, q->zero_point, reinterpret_cast<int8_t*>(dst));
          else
            requantize_u8(sums, n, bias, mult, q->zero_point, dst);
        };
        depthwise_int8_plane(
            d, xc, x_signed, xz, wc, [&](int64_t oh0, int64_t oh1, const int32_t* sums, int64_t pitch) {
              if (pitch == d.OW) return requant(sums, (oh1 - oh0) * d.OW, y + oh0 * d.OW);
              // All rows in one call (the unused columns too), then each row's OW bytes.
              const int64_t n = (oh1 - oh0 - 1) * pitch + d.OW;
              thread_local AlignedScratch row_scratch;
              uint8_t* rows = row_scratch.get<uint8_t>(static_cast<size_t>(n), AlignedScratch::Growth::kByHalf);
              requant(sums, n, rows);
              for (int64_t oh = oh0; oh < oh1; ++oh)
                std::memcpy(y + oh * d.OW, rows + (oh - oh0) * pitch, static_cast<size_t>(d.OW));
            });
      } else {
        int32_t* acc = out.acc + p * g.out_size;
        depthwise_int8_plane(
            d, xc, x_signed, xz, wc, [&](int64_t oh0, int64_t oh1, const int32_t* sums, int64_t pitch) {
              for (int64_t oh = oh0; oh < oh1; ++oh)
                std::memcpy(acc + oh * d.OW, sums + (oh - oh0) * pitch, sizeof(int32_t) * static_cast<size_t>(d.OW));
            });
      }
    }
  };
  const int64_t n = g.N * g.M;
  pool.parallel_for(n, pool.balanced_grain(n, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, g.out_size * taps))),
                    planes);
}

// integer_conv's sums for x, w with a per-tensor x zero point and a per-tensor
// or per-channel w zero point: depthwise directly, else per image and group W
// (M/group x C/group*kernel) times the im2col matrix on the 8-bit GEMM.
Status integer_conv(KernelContext& ctx, const Tensor& x, const Tensor* x_zp, const Tensor& w, const Tensor* w_zp,
                    const ConvGeometry& g, const PrepackedW* pre, const ConvSums& out) {
  if (x_zp && (x_zp->size() != 1 || x_zp->dtype() != x.dtype()))
    return ctx.invalid("x_zero_point must be a scalar of x's dtype");
  if (w_zp && ((w_zp->size() != 1 && w_zp->size() != g.M) || w_zp->dtype() != w.dtype()))
    return ctx.invalid("w_zero_point must be a scalar or have one value per output channel, in w's dtype");
  if (g.in.size() > 8) return ctx.unsupported("more than 8 spatial dimensions");
  // An empty output needs no scratch (whose size, from the pads, y's allocation did not check).
  if (g.N == 0 || g.M == 0) return Status::Ok();
  const int32_t xz = x_zp ? int_at(*x_zp, 0) : 0;
  const int64_t Cg = g.C / g.group, Mg = g.M / g.group, CK = Cg * g.kernel_size;
  if (!checked_mul(CK, g.out_size)) return ctx.invalid("the im2col matrix's size overflows 64 bits");
  thread_local AlignedScratch zp_scratch, col_scratch, pack_scratch;
  int32_t* wz = zp_scratch.get<int32_t>(static_cast<size_t>(g.M), AlignedScratch::Growth::kByHalf);
  for (int64_t m = 0; m < g.M; ++m) wz[m] = w_zp ? int_at(*w_zp, w_zp->size() == 1 ? 0 : m) : 0;
  const auto* xb = static_cast<const uint8_t*>(x.raw_data());
  const auto* wb = static_cast<const uint8_t*>(w.raw_data());
  const bool x_signed = x.dtype() == DType::kInt8, w_signed = w.dtype() == DType::kInt8;
  if (g.in.size() == 2 && Cg == 1 && Mg == 1) {
    depthwise_conv(g, xb, x_signed, xz, wb, w_signed, wz, out, ctx.pool());
    return Status::Ok();
  }
  const bool pointwise = is_pointwise(g), planar = g.in.size() == 2;
  uint8_t* col = pointwise || planar
                     ? nullptr
                     : col_scratch.get<uint8_t>(static_cast<size_t>(CK * g.out_size), AlignedScratch::Growth::kByHalf);
  void* packed = pack_scratch.bytes(PackedInt8B::bytes(CK, g.out_size), AlignedScratch::Growth::kByHalf);
  const uint8_t pad = static_cast<uint8_t>(xz);  // x's zero point as a raw byte
  for (int64_t n = 0; n < g.N; ++n)
    for (int64_t grp = 0; grp < g.group; ++grp) {
      const uint8_t* xg = xb + (n * g.C + grp * Cg) * g.in_size;
      const uint8_t* dense = pointwise ? xg : col;  // B as a K x out_size matrix, when it exists
      if (!pointwise && !planar) im2col(g, xg, Cg, pad, col);
      auto rows = [&](int64_t k, int64_t j0, int64_t j1, uint8_t* dst) {
        if (dense)
          std::memcpy(dst, dense + k * g.out_size + j0, static_cast<size_t>(j1 - j0));
        else
          im2col_row_2d(g, xg, k, j0, j1, pad, dst);
      };
      const PackedInt8B pb = PackedInt8B::pack_rows_into(packed, CK, g.out_size, rows, x_signed, &ctx.pool());
      const int64_t plane0 = n * g.M + grp * Mg;  // the group's first output plane
      Int8RequantOutput rq;
      if (out.requant) {
        rq = *out.requant;
        rq.mult += grp * Mg;
        if (rq.bias) rq.bias += grp * Mg;
        rq.out = static_cast<uint8_t*>(rq.out) + plane0 * g.out_size;
        rq.ldo = g.out_size;
      }
      gemm_u8s8(Mg, g.out_size, CK, wb + grp * Mg * CK, CK, w_signed, wz + grp * Mg, 1, pb, &xz, 0,
                out.acc ? out.acc + plane0 * g.out_size : nullptr, g.out_size, &ctx.pool(),
                pre ? pre->find(w, grp, g.group) : nullptr, nullptr, out.requant ? &rq : nullptr);
    }
  return Status::Ok();
}

Shape conv_out_shape(const ConvGeometry& g) {
  Shape s{g.N, g.M};
  s.insert(s.end(), g.out.begin(), g.out.end());
  return s;
}

Status conv_integer(KernelContext& ctx, const PrepackedW* pre) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
  DLRT_ASSIGN_OR_RETURN(const Tensor* w, required_input(ctx, 1));
  if (!is_8bit(x->dtype()) || !is_8bit(w->dtype())) return ctx.unsupported("x and w must be uint8 or int8");
  DLRT_ASSIGN_OR_RETURN(ConvGeometry g, conv_geometry(ctx, x->shape(), w->shape()));
  DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, DType::kInt32, conv_out_shape(g)));
  ConvSums sums;
  sums.acc = y->data<int32_t>();
  return integer_conv(ctx, *x, ctx.input(2), *w, ctx.input(3), g, pre, sums);
}

Status qlinear_conv(KernelContext& ctx, const PrepackedW* pre) {
  DLRT_ASSIGN_OR_RETURN(QLinearConvArgs q, qlinear_conv_args(ctx, false));
  const ConvGeometry& g = q.g;
  DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, q.out, conv_out_shape(g)));
  Int8RequantOutput rq;
  rq.mult = q.mult;
  rq.bias = q.bias ? q.bias->data<int32_t>() : nullptr;
  rq.zero_point = q.y_zero_point;
  rq.out = y->raw_data();
  rq.ldo = g.out_size;
  rq.out_signed = q.out == DType::kInt8;
  ConvSums sums;
  sums.requant = &rq;
  return integer_conv(ctx, *q.x, ctx.input(2), *q.w, ctx.input(5), g, pre, sums);
}

}  // namespace

Result<QLinearConvArgs> qlinear_conv_args(const KernelContext& ctx, bool channels_last) {
  QLinearConvArgs q;
  DLRT_ASSIGN_OR_RETURN(q.x, required_input(ctx, 0));
  DLRT_ASSIGN_OR_RETURN(const Tensor* x_scale, required_input(ctx, 1));
  DLRT_ASSIGN_OR_RETURN(q.w, required_input(ctx, 3));
  DLRT_ASSIGN_OR_RETURN(const Tensor* w_scale, required_input(ctx, 4));
  DLRT_ASSIGN_OR_RETURN(const Tensor* y_scale, required_input(ctx, 6));
  const Tensor* y_zp = ctx.input(7);
  q.bias = ctx.input(8);
  const Tensor& x = *q.x;
  if (!is_8bit(x.dtype()) || !is_8bit(q.w->dtype())) return ctx.unsupported("x and w must be uint8 or int8");
  if (channels_last && (x.rank() != 4 || q.w->rank() != 4))
    return ctx.unsupported("only 2-D convolution runs channels-last");
  for (const Tensor* s : {x_scale, w_scale, y_scale})
    if (!dtype_is_float(s->dtype())) return ctx.invalid("scales must be float tensors");
  if (x_scale->size() != 1 || y_scale->size() != 1) return ctx.invalid("x_scale and y_scale must be scalars");
  DLRT_ASSIGN_OR_RETURN(q.out, qlinear_out_type(ctx, y_zp, x.dtype()));
  q.y_zero_point = y_zp ? int_at(*y_zp, 0) : 0;
  const Shape nchw = channels_last ? Shape{x.dim(0), x.dim(3), x.dim(1), x.dim(2)} : x.shape();
  DLRT_ASSIGN_OR_RETURN(q.g, conv_geometry(ctx, nchw, q.w->shape()));
  const int64_t M = q.g.M;
  if (w_scale->size() != 1 && w_scale->size() != M)
    return ctx.invalid("w_scale must be a scalar or have one value per output channel");
  if (q.bias && (q.bias->dtype() != DType::kInt32 || q.bias->size() != M))
    return ctx.invalid("B must be an int32 vector with one value per output channel");
  thread_local AlignedScratch mult_scratch;
  float* mult = mult_scratch.get<float>(static_cast<size_t>(M), AlignedScratch::Growth::kByHalf);
  const float xs = float_at(*x_scale, 0), ys = float_at(*y_scale, 0);
  for (int64_t m = 0; m < M; ++m) mult[m] = xs * float_at(*w_scale, w_scale->size() == 1 ? 0 : m) / ys;
  q.mult = mult;
  return q;
}

Status register_quantize_conv_kernels(KernelRegistry& r) {
  DLRT_RETURN_IF_ERROR(r.add(prepacked_def<PrepackedW>("ConvInteger", conv_integer, 1, prepack_w)));
  DLRT_RETURN_IF_ERROR(r.add(prepacked_def<PrepackedW>("QLinearConv", qlinear_conv, 3, prepack_w)));
  return Status::Ok();
}

}  // namespace dlrt::cpu
