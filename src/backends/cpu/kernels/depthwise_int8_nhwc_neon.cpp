// depthwise_int8_nhwc on aarch64 (depthwise_int8.h): per output pixel, 16
// channels per pass over the taps inside x, (x - x_zp) widened to int16 and
// multiplied by the int16 weights into int32 (vmlal: exact products, sums
// wrapping as the portable loop's), then requantize_u8/s8's operations per
// lane. The whole file is aarch64 code; x86 compiles an empty unit.
#include "backends/cpu/kernels/depthwise_int8.h"

#if defined(__aarch64__)
#include <arm_neon.h>

#include <cstring>

#include "backends/cpu/kernels/simd/width.h"
#include "backends/cpu/scratch.h"
#endif

namespace dlrt::cpu {

#if defined(__aarch64__)
namespace {

constexpr int64_t kLanes = 16;  // channels per pass: one 16-byte load

// acc[0..4) += (x[0, 16) - x_zp) * wt[0, 16), channel by channel.
template <bool kSigned>
inline void nhwc_mac16(const uint8_t* px, int16x8_t vxz, const int16_t* wt, int32x4_t* acc) {
  const uint8x16_t b = vld1q_u8(px);
  int16x8_t lo, hi;
  if constexpr (kSigned) {
    const int8x16_t s = vreinterpretq_s8_u8(b);
    lo = vmovl_s8(vget_low_s8(s));
    hi = vmovl_high_s8(s);
  } else {
    lo = vreinterpretq_s16_u16(vmovl_u8(vget_low_u8(b)));
    hi = vreinterpretq_s16_u16(vmovl_high_u8(b));
  }
  lo = vsubq_s16(lo, vxz);
  hi = vsubq_s16(hi, vxz);
  const int16x8_t w0 = vld1q_s16(wt), w1 = vld1q_s16(wt + 8);
  acc[0] = vmlal_s16(acc[0], vget_low_s16(lo), vget_low_s16(w0));
  acc[1] = vmlal_high_s16(acc[1], lo, w0);
  acc[2] = vmlal_s16(acc[2], vget_low_s16(hi), vget_low_s16(w1));
  acc[3] = vmlal_high_s16(acc[3], hi, w1);
}

// The output stage of requantize_u8/s8 (quantize_rows.h) on 16 lanes: acc +
// bias wrapping, times mult, clamped to the range the zero point leaves,
// rounded half to even (vcvtnq; the clamp keeps the values exact), + zp.
struct NhwcRequant16 {
  float32x4_t lo, hi;
  int32x4_t zp;

  void operator()(const int32x4_t* acc, const int32_t* bias, const float* mult, uint8_t* dst) const {
    int16x4_t q[4];
    for (int m = 0; m < 4; ++m) {
      const int32x4_t a = vaddq_s32(acc[m], vld1q_s32(bias + 4 * m));
      float32x4_t f = vmulq_f32(vcvtq_f32_s32(a), vld1q_f32(mult + 4 * m));
      f = vminq_f32(vmaxq_f32(f, lo), hi);
      q[m] = vmovn_s32(vaddq_s32(vcvtnq_s32_f32(f), zp));  // in [-128, 255]: exact in int16
    }
    // The low byte of each value is its uint8 or int8 encoding.
    const int8x16_t bytes = vcombine_s8(vmovn_s16(vcombine_s16(q[0], q[1])), vmovn_s16(vcombine_s16(q[2], q[3])));
    vst1q_u8(dst, vreinterpretq_u8_s8(bytes));
  }
};

// wt: [taps][cpad] int16 weights (lanes past C zero); bias, mult: cpad each.
template <bool kSigned>
void nhwc_pixels_neon(const DepthwiseInt8Geometry& g, int64_t C, int64_t cpad, const uint8_t* x, int64_t x_ld,
                      int32_t x_zp, const int16_t* wt, const int32_t* bias, const float* mult,
                      const NhwcRequant16& rq, uint8_t* y, int64_t y_ld, int64_t* off, const int16_t** wtap) {
  const int16x8_t vxz = vdupq_n_s16(static_cast<int16_t>(x_zp));
  for (int64_t oh = 0; oh < g.OH; ++oh)
    for (int64_t ow = 0; ow < g.OW; ++ow) {
      // The taps inside x (outside, x - x_zp is 0): their pixels and weights.
      int64_t n = 0;
      for (int64_t kh = 0; kh < g.KH; ++kh) {
        const int64_t ih = oh * g.sh - g.ph + kh * g.dh;
        if (ih < 0 || ih >= g.H) continue;
        for (int64_t kw = 0; kw < g.KW; ++kw) {
          const int64_t iw = ow * g.sw - g.pw + kw * g.dw;
          if (iw < 0 || iw >= g.W) continue;
          off[n] = (ih * g.W + iw) * x_ld;
          wtap[n++] = wt + (kh * g.KW + kw) * cpad;
        }
      }
      uint8_t* out = y + (oh * g.OW + ow) * y_ld;
      for (int64_t c = 0; c < C; c += kLanes) {
        int32x4_t acc[4] = {vdupq_n_s32(0), vdupq_n_s32(0), vdupq_n_s32(0), vdupq_n_s32(0)};
        if (c + kLanes <= C) {
          for (int64_t t = 0; t < n; ++t) nhwc_mac16<kSigned>(x + off[t] + c, vxz, wtap[t] + c, acc);
          rq(acc, bias + c, mult + c, out + c);
          continue;
        }
        // The last channels: through 16-byte copies (the loads must not pass
        // x's last pixel; the extra lanes have zero weights).
        const size_t rest = static_cast<size_t>(C - c);
        uint8_t in[kLanes] = {}, res[kLanes];
        for (int64_t t = 0; t < n; ++t) {
          std::memcpy(in, x + off[t] + c, rest);
          nhwc_mac16<kSigned>(in, vxz, wtap[t] + c, acc);
        }
        rq(acc, bias + c, mult + c, res);
        std::memcpy(out + c, res, rest);
      }
    }
}

}  // namespace

bool depthwise_int8_nhwc_neon(const DepthwiseInt8Geometry& g, int64_t C, const uint8_t* x, int64_t x_ld,
                              bool x_signed, int32_t x_zp, const int32_t* w, const DepthwiseInt8Requant& rq,
                              uint8_t* y, int64_t y_ld) {
  const int64_t taps = g.KH * g.KW;
  // x - x_zp and the weights must fit int16 (8-bit operands and zero points always do).
  if (x_zp < -255 || x_zp > 255) return false;
  for (int64_t i = 0; i < C * taps; ++i)
    if (w[i] < -32768 || w[i] > 32767) return false;
  static SimdCallCounter calls("depthwise_int8_nhwc_neon");  // calls that ran this kernel, for the tests
  calls.add(SimdWidth::k128);
  if (C <= 0 || g.OH <= 0 || g.OW <= 0) return true;
  const int64_t cpad = (C + kLanes - 1) / kLanes * kLanes;
  thread_local AlignedScratch w_scratch, p_scratch, tap_scratch;
  int16_t* wt = w_scratch.get<int16_t>(static_cast<size_t>(taps * cpad), AlignedScratch::Growth::kByHalf);
  float* mult = p_scratch.get<float>(static_cast<size_t>(2 * cpad), AlignedScratch::Growth::kByHalf);
  auto* bias = reinterpret_cast<int32_t*>(mult + cpad);
  auto* off = tap_scratch.get<int64_t>(static_cast<size_t>(2 * taps), AlignedScratch::Growth::kByHalf);
  auto** wtap = reinterpret_cast<const int16_t**>(off + taps);
  for (int64_t c = 0; c < cpad; ++c) {
    const bool real = c < C;
    for (int64_t t = 0; t < taps; ++t) wt[t * cpad + c] = static_cast<int16_t>(real ? w[c * taps + t] : 0);
    mult[c] = real ? rq.mult[c] : 0.0f;
    bias[c] = real && rq.bias ? rq.bias[c] : 0;
  }
  const int32_t lowest = rq.out_signed ? -128 : 0, highest = rq.out_signed ? 127 : 255;
  const NhwcRequant16 out{vdupq_n_f32(static_cast<float>(lowest - rq.zero_point)),
                          vdupq_n_f32(static_cast<float>(highest - rq.zero_point)), vdupq_n_s32(rq.zero_point)};
  if (x_signed) nhwc_pixels_neon<true>(g, C, cpad, x, x_ld, x_zp, wt, bias, mult, out, y, y_ld, off, wtap);
  else nhwc_pixels_neon<false>(g, C, cpad, x, x_ld, x_zp, wt, bias, mult, out, y, y_ld, off, wtap);
  return true;
}
#endif

}  // namespace dlrt::cpu
