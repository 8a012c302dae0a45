// com.dlrt QLinearConvNhwc: QLinearConv with x and y channels-last
// ([N, H, W, C] and [N, OH, OW, M]); same inputs, attributes and results
// otherwise. ir/passes/quant_layout.cpp emits it for 2-D convs with one
// group or one channel per group, so that a network of them keeps its
// activations channels-last:
//  - one group: output pixels x output channels on the 8-bit GEMM, the
//    activations (a 1 x 1 conv's input as it is, else its channels-last
//    im2col rows) times the weights packed once (k in (kh, kw, c) order),
//    requantized per output channel as the tiles leave the GEMM;
//  - depthwise: depthwise_int8_nhwc, in bands of output rows and blocks of
//    channels over the threads.
#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "backends/cpu/kernel_families.h"
#include "backends/cpu/kernel_util.h"
#include "backends/cpu/kernels/depthwise_int8.h"
#include "backends/cpu/kernels/gemm_int8.h"
#include "backends/cpu/ops/quantize_conv.h"
#include "backends/cpu/ops/quantize_util.h"
#include "backends/cpu/scratch.h"

namespace dlrt::cpu {
namespace {

// A constant one-group weight W [M, C, KH, KW] packed once as the GEMM's B
// (K = KH * KW * C in (kh, kw, c) order, N = M).
struct NhwcWeights {
  const void* data = nullptr;  // the tensor it was packed from
  DType dtype = DType::kUndefined;
  Shape shape;
  std::shared_ptr<const PackedInt8B> packed;

  const PackedInt8B* find(const Tensor& w) const {
    return w.raw_data() == data && w.dtype() == dtype && w.shape() == shape ? packed.get() : nullptr;
  }
};

// W [M, C, KH, KW] as M rows of K bytes in (kh, kw, c) order.
void reorder_weights(const Tensor& w, uint8_t* dst) {
  const int64_t M = w.dim(0), C = w.dim(1), KH = w.dim(2), KW = w.dim(3);
  const auto* src = static_cast<const uint8_t*>(w.raw_data());
  for (int64_t m = 0; m < M; ++m)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t kh = 0; kh < KH; ++kh)
        for (int64_t kw = 0; kw < KW; ++kw)
          dst[((m * KH + kh) * KW + kw) * C + c] = src[((m * C + c) * KH + kh) * KW + kw];
}

std::shared_ptr<const NhwcWeights> prepack_nhwc(const ir::Node& node, const Tensor* w) {
  if (!w || !is_8bit(w->dtype()) || w->rank() != 4 || w->size() == 0 || node.attr_int("group", 1) != 1) return nullptr;
  auto pre = std::make_shared<NhwcWeights>();
  pre->data = w->raw_data();
  pre->dtype = w->dtype();
  pre->shape = w->shape();
  std::vector<uint8_t> rows(static_cast<size_t>(w->size()));
  reorder_weights(*w, rows.data());
  const int64_t M = w->dim(0), K = w->size() / M;
  pre->packed = PackedInt8B::pack(true, K, M, rows.data(), K, w->dtype() == DType::kInt8);
  return pre;
}

// Rows [p0, p1) of image x's channels-last im2col matrix: row p = (oh, ow)
// holds, per tap (kh, kw), the C bytes of pixel (ih, iw), or x_zp's byte
// outside x.
void im2col_nhwc(const ConvGeometry& g, const uint8_t* x, uint8_t pad, int64_t p0, int64_t p1, uint8_t* a) {
  const int64_t H = g.in[0], W = g.in[1], OW = g.out[1], KH = g.kernel[0], KW = g.kernel[1], C = g.C;
  const int64_t K = KH * KW * C;
  for (int64_t p = p0; p < p1; ++p) {
    const int64_t oh = p / OW, ow = p % OW;
    uint8_t* row = a + p * K;
    for (int64_t kh = 0; kh < KH; ++kh) {
      const int64_t ih = oh * g.stride[0] - g.pad_begin[0] + kh * g.dilation[0];
      for (int64_t kw = 0; kw < KW; ++kw) {
        const int64_t iw = ow * g.stride[1] - g.pad_begin[1] + kw * g.dilation[1];
        uint8_t* dst = row + (kh * KW + kw) * C;
        if (ih < 0 || ih >= H || iw < 0 || iw >= W) std::memset(dst, pad, static_cast<size_t>(C));
        else std::memcpy(dst, x + (ih * W + iw) * C, static_cast<size_t>(C));
      }
    }
  }
}

Status qlinear_conv_nhwc(KernelContext& ctx, const NhwcWeights* pre) {
  DLRT_ASSIGN_OR_RETURN(QLinearConvArgs args, qlinear_conv_args(ctx, true));
  const Tensor* x = args.x;
  const Tensor* w = args.w;
  const Tensor* bias = args.bias;
  const Tensor* x_zp = ctx.input(2);
  const Tensor* w_zp = ctx.input(5);
  const ConvGeometry& g = args.g;
  if (x_zp && (x_zp->size() != 1 || x_zp->dtype() != x->dtype()))
    return ctx.invalid("x_zero_point must be a scalar of x's dtype");
  const bool depthwise = g.group == g.C && g.M == g.C;
  if (g.group != 1 && !depthwise) return ctx.unsupported("channels-last convs have one group or one channel per group");
  if (w_zp && ((w_zp->size() != 1 && w_zp->size() != g.M) || w_zp->dtype() != w->dtype()))
    return ctx.invalid("w_zero_point must be a scalar or have one value per output channel, in w's dtype");
  const DType out = args.out;
  const int64_t OH = g.out[0], OW = g.out[1], P = OH * OW, M = g.M, C = g.C;
  DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, out, {g.N, OH, OW, M}));
  if (y->size() == 0) return Status::Ok();
  // Per output channel: w's zero point.
  thread_local AlignedScratch wz_scratch;
  auto* wz = wz_scratch.get<int32_t>(static_cast<size_t>(M), AlignedScratch::Growth::kByHalf);
  bool wz_zero = true;
  for (int64_t m = 0; m < M; ++m) {
    wz[m] = w_zp ? int_at(*w_zp, w_zp->size() == 1 ? 0 : m) : 0;
    wz_zero = wz_zero && wz[m] == 0;
  }
  const float* mult = args.mult;
  const int32_t xz = x_zp ? int_at(*x_zp, 0) : 0;
  const int32_t yz = args.y_zero_point;
  const bool x_signed = x->dtype() == DType::kInt8, w_signed = w->dtype() == DType::kInt8;
  const auto* xb = static_cast<const uint8_t*>(x->raw_data());
  auto* yb = static_cast<uint8_t*>(y->raw_data());
  ThreadPool& pool = ctx.pool();

  if (depthwise) {
    const int64_t taps = g.kernel_size;
    thread_local AlignedScratch w_scratch;
    int32_t* wall = w_scratch.get<int32_t>(static_cast<size_t>(M * taps), AlignedScratch::Growth::kByHalf);
    const auto* wr = static_cast<const uint8_t*>(w->raw_data());
    for (int64_t m = 0; m < M; ++m)
      for (int64_t t = 0; t < taps; ++t) {
        const uint8_t b = wr[m * taps + t];
        wall[m * taps + t] = (w_signed ? static_cast<int32_t>(static_cast<int8_t>(b)) : static_cast<int32_t>(b)) - wz[m];
      }
    DepthwiseInt8Geometry d;
    d.H = g.in[0], d.W = g.in[1], d.OH = OH, d.OW = OW, d.KH = g.kernel[0], d.KW = g.kernel[1];
    d.sh = g.stride[0], d.sw = g.stride[1], d.dh = g.dilation[0], d.dw = g.dilation[1];
    d.ph = g.pad_begin[0], d.pw = g.pad_begin[1];
    DepthwiseInt8Requant rq;
    rq.mult = mult;
    rq.bias = bias ? bias->data<int32_t>() : nullptr;
    rq.zero_point = yz;
    rq.out_signed = out == DType::kInt8;
    for_each_depthwise_int8_task(d, g.N, C, pool, [&](const DepthwiseInt8Task& k) {
      DepthwiseInt8Requant r = rq;
      r.mult = rq.mult + k.c0;
      r.bias = rq.bias ? rq.bias + k.c0 : nullptr;
      depthwise_int8_nhwc(k.band, k.cb, xb + (k.n * g.in_size + k.ih0 * d.W) * C + k.c0, C, x_signed, xz,
                          wall + k.c0 * taps, r, yb + (k.n * P + k.oh0 * OW) * M + k.c0, M);
    });
    return Status::Ok();
  }

  // One group: Y[p][m] = sum_k A[p][k] W'[k][m] on the GEMM.
  const int64_t K = g.kernel_size * C;
  PackedInt8B scratch_b;
  const PackedInt8B* pb = pre ? pre->find(*w) : nullptr;
  if (!pb) {
    thread_local AlignedScratch rows_scratch, b_scratch;
    uint8_t* rows = rows_scratch.get<uint8_t>(static_cast<size_t>(w->size()), AlignedScratch::Growth::kByHalf);
    reorder_weights(*w, rows);
    void* storage = b_scratch.bytes(PackedInt8B::bytes(K, M), AlignedScratch::Growth::kByHalf);
    scratch_b = PackedInt8B::pack_into(storage, true, K, M, rows, K, w_signed);
    pb = &scratch_b;
  }
  const bool pointwise = g.kernel_size == 1 && g.stride[0] == 1 && g.stride[1] == 1 && g.pad_begin[0] == 0 &&
                         g.pad_begin[1] == 0 && OH == g.in[0] && OW == g.in[1];
  // With whole groups of 4 channels, A's rows are read from x tap by tap as
  // the GEMM packs them; else the im2col matrix is made first.
  const bool direct = !pointwise && C % 4 == 0;
  thread_local AlignedScratch col_scratch;
  uint8_t* col = pointwise || direct
                     ? nullptr
                     : col_scratch.get<uint8_t>(static_cast<size_t>(P * K), AlignedScratch::Growth::kByHalf);
  int32_t* origin = nullptr;  // per pixel: oh * sh - ph, ow * sw - pw
  int32_t* offsets = nullptr; // per tap: kh * dh, kw * dw
  if (direct) {
    thread_local AlignedScratch window_scratch;
    origin = window_scratch.get<int32_t>(static_cast<size_t>(2 * (P + g.kernel_size)), AlignedScratch::Growth::kByHalf);
    offsets = origin + 2 * P;
    for (int64_t p = 0; p < P; ++p) {
      origin[2 * p] = static_cast<int32_t>((p / OW) * g.stride[0] - g.pad_begin[0]);
      origin[2 * p + 1] = static_cast<int32_t>((p % OW) * g.stride[1] - g.pad_begin[1]);
    }
    for (int64_t t = 0; t < g.kernel_size; ++t) {
      offsets[2 * t] = static_cast<int32_t>((t / g.kernel[1]) * g.dilation[0]);
      offsets[2 * t + 1] = static_cast<int32_t>((t % g.kernel[1]) * g.dilation[1]);
    }
  }
  Int8RequantOutput rq;
  rq.mult = mult;
  rq.bias = bias ? bias->data<int32_t>() : nullptr;
  rq.zero_point = yz;
  rq.out_signed = out == DType::kInt8;
  rq.per_column = true;
  rq.ldo = M;
  for (int64_t n = 0; n < g.N; ++n) {
    const uint8_t* xn = xb + n * g.in_size * C;
    const uint8_t* a = xn;
    const int64_t H = g.in[0], W = g.in[1];
    // Pixel p's window origin and tap t's offset from it, looked up (no
    // divisions per call: the GEMM asks for every pixel and tap).
    auto tap = [&](int64_t p, int64_t t) -> const uint8_t* {  // pixel p's window, tap t
      const int64_t ih = origin[2 * p] + offsets[2 * t], iw = origin[2 * p + 1] + offsets[2 * t + 1];
      return ih < 0 || ih >= H || iw < 0 || iw >= W ? nullptr : xn + (ih * W + iw) * C;
    };
    const Int8ARows rows_of{g.kernel_size, C, tap, static_cast<uint8_t>(xz)};
    if (!pointwise && !direct) {
      auto rows = [&](int64_t p0, int64_t p1) { im2col_nhwc(g, xn, static_cast<uint8_t>(xz), p0, p1, col); };
      pool.parallel_for(P, pool.balanced_grain(P, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, K))), rows);
      a = col;
    }
    rq.out = yb + n * P * M;
    gemm_u8s8(P, M, K, a, K, x_signed, &xz, 0, *pb, wz_zero ? nullptr : wz, 1, nullptr, M, &pool, nullptr, nullptr,
              &rq, direct ? &rows_of : nullptr);
  }
  return Status::Ok();
}

}  // namespace

Status register_quantize_conv_nhwc_kernels(KernelRegistry& r) {
  return r.add(prepacked_def<NhwcWeights>("QLinearConvNhwc", qlinear_conv_nhwc, 3, prepack_nhwc, "com.dlrt", 1));
}

}  // namespace dlrt::cpu
