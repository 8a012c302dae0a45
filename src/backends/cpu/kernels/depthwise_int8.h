// The 8-bit 2-D depthwise convolution of ConvInteger and QLinearConv (one
// input and one output channel per group), one plane at a time:
//
//   sums[oh][ow] = sum over (kh, kw) of (x[ih][iw] - x_zp) * w[kh][kw]
//   with ih = oh * sh - ph + kh * dh, iw = ow * sw - pw + kw * dw,
//
// where a position outside x contributes nothing (it holds x_zp) and w is
// the kernel with its zero point already subtracted. The plane is first
// copied as int16 (x - x_zp) with its padding, its rows and columns split by
// their phase modulo the strides, so that for every tap the output rows,
// taken with a few extra columns as one flat run, read consecutive values;
// the taps are then summed in int32 over the vector layer at simd_width()
// (depthwise_int8_simd.h: 512 or 256 bits on x86, NEON's 128 on aarch64)
// where cpu_has_simd_kernels(), portable loops elsewhere, the same bits.
#pragma once

#include <cstdint>

#include "core/function_ref.h"
#include "core/thread_pool.h"

namespace dlrt::cpu {

struct DepthwiseInt8Geometry {
  int64_t H = 0, W = 0, OH = 0, OW = 0;  // input and output plane
  int64_t KH = 0, KW = 0;
  int64_t sh = 1, sw = 1, dh = 1, dw = 1;  // strides, dilations
  int64_t ph = 0, pw = 0;                  // padding before
};

// One task of a depthwise conv's channel-block kernels: image n, channels
// [c0, c0 + cb) and output rows [oh0, oh0 + band.OH), where `band` is the
// conv restricted to those rows: its input starts at input row ih0 (rows
// above it count as padding).
struct DepthwiseInt8Task {
  int64_t n = 0, c0 = 0, cb = 0, oh0 = 0, ih0 = 0;
  DepthwiseInt8Geometry band;
};

// Runs `task` for every image x block of 64 channels x band of output rows
// of g over `pool`, the rows split into bands when there are fewer blocks
// than twice the threads (each band re-reads the input rows its windows
// share with the next).
void for_each_depthwise_int8_task(const DepthwiseInt8Geometry& g, int64_t N, int64_t C, ThreadPool& pool,
                                  FunctionRef<void(const DepthwiseInt8Task&)> task);

// Receives the sums of output rows [oh0, oh1): row oh's OW values at
// sums + (oh - oh0) * pitch (pitch >= OW; valid only during the call).
using DepthwiseRowSink = FunctionRef<void(int64_t oh0, int64_t oh1, const int32_t* sums, int64_t pitch)>;

// One plane: x (H x W bytes, int8 when x_signed, else uint8), x_zp in x's
// domain, w (KH x KW, zero point subtracted). Uses thread-local scratch.
void depthwise_int8_plane(const DepthwiseInt8Geometry& g, const uint8_t* x, bool x_signed, int32_t x_zp,
                          const int32_t* w, DepthwiseRowSink sink);

// Requantized output of depthwise_int8_channels: per channel c,
// out[c][oh][ow] = requantize(sums + bias[c], mult[c]) as requantize_u8/s8
// (quantize_rows.h) would give.
struct DepthwiseInt8Requant {
  const float* mult = nullptr;   // one per channel
  const int32_t* bias = nullptr; // one per channel, or null
  int32_t zero_point = 0;
  bool out_signed = false;
};

// True when depthwise_int8_channels can run on this CPU now (AVX-512).
bool depthwise_int8_channels_available();

// Channels [0, C) of one image at once, channels innermost: x holds C planes
// (H x W each, x_stride bytes apart), w C kernels (KH x KW, zero point
// subtracted), y C output planes (OH x OW, y_stride apart). The planes are
// transposed in blocks of 64 channels, summed with the channels in vector
// lanes, requantized per channel and transposed back: for planes too small
// to amortise depthwise_int8_plane's per-row work. (A band of output rows
// is the same call on the band's input rows, with the strides of the whole
// planes.)
void depthwise_int8_channels(const DepthwiseInt8Geometry& g, int64_t C, const uint8_t* x, int64_t x_stride,
                             bool x_signed, int32_t x_zp, const int32_t* w, const DepthwiseInt8Requant& rq, uint8_t* y,
                             int64_t y_stride);

// The same on channels-last tensors: x [H][W] pixels of x_ld bytes (its
// first C bytes the channels of this call), y [OH][OW] pixels of y_ld bytes.
// With AVX-512 in blocks of 64 channels without transposes, NEON on aarch64
// (16 channels per vector); portable loops elsewhere (the same bits).
void depthwise_int8_nhwc(const DepthwiseInt8Geometry& g, int64_t C, const uint8_t* x, int64_t x_ld, bool x_signed,
                         int32_t x_zp, const int32_t* w, const DepthwiseInt8Requant& rq, uint8_t* y, int64_t y_ld);

#if defined(__aarch64__)
// depthwise_int8_nhwc's NEON kernel (depthwise_int8_nhwc_neon.cpp); false
// (nothing done) when a weight or x - x_zp would not fit int16.
bool depthwise_int8_nhwc_neon(const DepthwiseInt8Geometry& g, int64_t C, const uint8_t* x, int64_t x_ld,
                              bool x_signed, int32_t x_zp, const int32_t* w, const DepthwiseInt8Requant& rq,
                              uint8_t* y, int64_t y_ld);
#endif

}  // namespace dlrt::cpu
