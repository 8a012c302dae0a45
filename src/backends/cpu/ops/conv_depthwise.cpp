// Conv's depthwise paths (one input and one output channel per group): the
// float32 plane kernels (direct loops, the vector plane kernel, the dilated
// split), the one-channel-per-lane vector kernels, and float64's plane.
#include <algorithm>

#include "backends/cpu/kernel_util.h"
#include "backends/cpu/kernels/depthwise_plane.h"
#include "backends/cpu/kernels/depthwise_lanes.h"
#include "backends/cpu/kernels/depthwise_flat.h"
#include "backends/cpu/kernels/gemm.h"
#include "backends/cpu/kernels/isa.h"
#include "backends/cpu/kernels/isa_target.h"
#include "backends/cpu/ops/conv_internal.h"
#include "backends/cpu/scratch.h"

namespace dlrt::cpu::conv_detail {
namespace {

// Depthwise: one input plane, one filter, one output plane.
template <typename T>
void depthwise_plane(const T* x, const T* w, const Geo3& g, T* y) {
  const int64_t out_w = g.out[2];
  for (int64_t kd = 0; kd < g.k[0]; ++kd)
    for (int64_t kh = 0; kh < g.k[1]; ++kh)
      for (int64_t kw = 0; kw < g.k[2]; ++kw) {
        const T wv = w[(kd * g.k[1] + kh) * g.k[2] + kw];
        const int64_t off_w = kw * g.d[2] - g.pb[2];
        int64_t w0 = off_w >= 0 ? 0 : (-off_w + g.s[2] - 1) / g.s[2];
        int64_t w1 = g.in[2] - off_w > 0 ? (g.in[2] - off_w + g.s[2] - 1) / g.s[2] : 0;
        w1 = std::min(w1, out_w);
        for (int64_t od = 0; od < g.out[0]; ++od) {
          const int64_t id = od * g.s[0] - g.pb[0] + kd * g.d[0];
          if (id < 0 || id >= g.in[0]) continue;
          for (int64_t oh = 0; oh < g.out[1]; ++oh) {
            const int64_t ih = oh * g.s[1] - g.pb[1] + kh * g.d[1];
            if (ih < 0 || ih >= g.in[1]) continue;
            const T* src = x + (id * g.in[1] + ih) * g.in[2];
            T* dst = y + (od * g.out[1] + oh) * out_w;
            if (g.s[2] == 1) {
              for (int64_t ow = w0; ow < w1; ++ow) dst[ow] += wv * src[ow + off_w];
            } else {
              for (int64_t ow = w0; ow < w1; ++ow) dst[ow] += wv * src[ow * g.s[2] + off_w];
            }
          }
        }
      }
}

// Depthwise, row by row: each output row stays in L1 while every tap adds
// its shifted input row. Compiled for AVX2 where the CPU has it.
template <typename T>
__attribute__((always_inline)) inline void depthwise_rows(const T* __restrict x, const T* __restrict w, const Geo3& g,
                                                          T* __restrict y) {
  const int64_t out_w = g.out[2];
  for (int64_t od = 0; od < g.out[0]; ++od)
    for (int64_t oh = 0; oh < g.out[1]; ++oh) {
      T* dst = y + (od * g.out[1] + oh) * out_w;
      for (int64_t kd = 0; kd < g.k[0]; ++kd) {
        const int64_t id = od * g.s[0] - g.pb[0] + kd * g.d[0];
        if (id < 0 || id >= g.in[0]) continue;
        for (int64_t kh = 0; kh < g.k[1]; ++kh) {
          const int64_t ih = oh * g.s[1] - g.pb[1] + kh * g.d[1];
          if (ih < 0 || ih >= g.in[1]) continue;
          const T* src = x + (id * g.in[1] + ih) * g.in[2];
          const T* wk = w + (kd * g.k[1] + kh) * g.k[2];
          for (int64_t kw = 0; kw < g.k[2]; ++kw) {
            const T wv = wk[kw];
            const int64_t off_w = kw * g.d[2] - g.pb[2];
            int64_t w0 = off_w >= 0 ? 0 : (-off_w + g.s[2] - 1) / g.s[2];
            int64_t w1 = g.in[2] - off_w > 0 ? (g.in[2] - off_w + g.s[2] - 1) / g.s[2] : 0;
            w1 = std::min(w1, out_w);
            if (g.s[2] == 1) {
              const T* sp = src + off_w;
              for (int64_t ow = w0; ow < w1; ++ow) dst[ow] += wv * sp[ow];
            } else if (g.s[2] == 2) {
              const T* sp = src + off_w;
              for (int64_t ow = w0; ow < w1; ++ow) dst[ow] += wv * sp[2 * ow];
            } else {
              for (int64_t ow = w0; ow < w1; ++ow) dst[ow] += wv * src[ow * g.s[2] + off_w];
            }
          }
        }
      }
    }
}

// Fast 2-D depthwise (no dilation, width stride 1 or 2): the plane kernel
// (depthwise_plane.h) first copies the plane into a zero-padded scratch (for
// stride 2, each row split into its even and odd columns), so every tap is
// a contiguous vector load with no bounds checks. It writes every output
// element (y need not be zeroed).
bool depthwise_fast_ok(const Geo3& g) {
  return g.k[0] == 1 && g.in[0] == 1 && g.out[0] == 1 && g.d[1] == 1 && g.d[2] == 1 && (g.s[2] == 1 || g.s[2] == 2) &&
         g.k[1] <= 16 && g.k[2] <= 16 && g.pb[1] >= 0 && g.pb[2] >= 0;
}

DepthwiseGeometry dw_geometry(const Geo3& g) {
  DepthwiseGeometry d;
  d.in_h = g.in[1], d.in_w = g.in[2], d.out_h = g.out[1], d.out_w = g.out[2];
  d.kh = g.k[1], d.kw = g.k[2], d.sh = g.s[1], d.sw = g.s[2];
  d.pad_top = g.pb[1], d.pad_left = g.pb[2];
  d.dh = g.d[1], d.dw = g.d[2];
  return d;
}


void depthwise_generic_f32(const float* x, const float* w, const Geo3& g, float* y) { depthwise_rows<float>(x, w, g, y); }
#if defined(__x86_64__) || defined(__i386__)
DLRT_AVX2 void depthwise_avx2_f32(const float* x, const float* w, const Geo3& g, float* y) {
  depthwise_rows<float>(x, w, g, y);
}
#endif

// The width the plane kernel (depthwise_plane.h) runs at: the CPU's, but
// 256 bits on AVX-512 for stride-1 rows of at most 8 outputs (they fill a
// ymm but not half a zmm), and for the planes depthwise_plane_f32 computes
// (no epilogue: the dilated split's phases and Conv without FusedConv),
// which have always run the 256-bit kernel there.
SimdWidth plane_width(const Geo3& g, bool with_epilogue) {
  const SimdWidth w = simd_width();
  const bool narrow = g.s[2] == 1 && g.out[2] <= 8;
  return w == SimdWidth::k512 && (narrow || !with_epilogue) ? SimdWidth::k256 : w;
}

// y must be zero-filled unless depthwise_writes_all(g).
void depthwise_plane_f32(const float* x, const float* w, const Geo3& g, float* y) {
  if (cpu_has_simd_kernels() && depthwise_fast_ok(g))
    return depthwise_plane(plane_width(g, false), x, w, dw_geometry(g), y, DepthwiseOutput{});
#if defined(__x86_64__) || defined(__i386__)
  if (cpu_isa() >= CpuIsa::kAvx2) return depthwise_avx2_f32(x, w, g, y);
#endif
  depthwise_generic_f32(x, w, g, y);
}

// The in-register output stage of plane m for the epilogue `ep` (no
// col_bias; Relu, Clip or no activation: clamp_or_none).
DepthwiseOutput depthwise_output(const GemmEpilogue& ep, int64_t m) {
  const ClampStage c = clamp_stage(ep.act);
  DepthwiseOutput o;
  o.bias = ep.row_bias ? ep.row_bias[m] : 0.0f;
  o.residual = ep.residual ? ep.residual + m * ep.ldr : nullptr;
  o.clamp = c.clamp;
  o.lo = c.lo;
  o.hi = c.hi;
  return o;
}

// A 2-D depthwise conv at stride 1 dilated by (dh, dw) is dh x dw undilated
// ones, interleaved: the outputs of rows a, a + dh, ... and columns b, b + dw,
// ... read only the inputs of one row phase and one column phase. Each is
// gathered into scratch, convolved by the fast undilated kernels and
// scattered back (the epilogue is the caller's).
bool dilated_depthwise_split_ok(const Geo3& g) {
  return g.k[0] == 1 && g.in[0] == 1 && g.out[0] == 1 && g.s[1] == 1 && g.s[2] == 1 && (g.d[1] > 1 || g.d[2] > 1) &&
         g.pb[1] >= 0 && g.pb[2] >= 0 && g.k[1] <= 16 && g.k[2] <= 16;
}

void depthwise_dilated_plane_f32(const float* x, const float* w, const Geo3& g, float* y) {
  const int64_t dh = g.d[1], dw = g.d[2], out_w = g.out[2];
  thread_local AlignedScratch in_buf, out_buf;
  auto floor_mod = [](int64_t v, int64_t d) { return ((v % d) + d) % d; };
  for (int64_t a = 0; a < dh; ++a)
    for (int64_t b = 0; b < dw; ++b) {
      const int64_t oh_n = (g.out[1] - a + dh - 1) / dh, ow_n = (out_w - b + dw - 1) / dw;
      if (oh_n <= 0 || ow_n <= 0) continue;
      // Output (a + dh i, b + dw j) reads input row a - pad_top + dh (i + ky): the rows of
      // phase rem_h, offset by q_h whole steps (likewise for columns).
      const int64_t rem_h = floor_mod(a - g.pb[1], dh), q_h = (a - g.pb[1] - rem_h) / dh;
      const int64_t rem_w = floor_mod(b - g.pb[2], dw), q_w = (b - g.pb[2] - rem_w) / dw;
      const int64_t ih_n = g.in[1] > rem_h ? (g.in[1] - rem_h + dh - 1) / dh : 0;
      const int64_t iw_n = g.in[2] > rem_w ? (g.in[2] - rem_w + dw - 1) / dw : 0;
      float* sub_out = out_buf.get<float>(static_cast<size_t>(oh_n * ow_n));
      Geo3 sg = g;
      sg.in[1] = ih_n;
      sg.in[2] = iw_n;
      sg.out[1] = oh_n;
      sg.out[2] = ow_n;
      sg.d[1] = sg.d[2] = 1;
      sg.pb[1] = -q_h;
      sg.pb[2] = -q_w;
      if (ih_n == 0 || iw_n == 0) {
        std::fill(sub_out, sub_out + oh_n * ow_n, 0.0f);
      } else {
        float* sub_in = in_buf.get<float>(static_cast<size_t>(ih_n * iw_n));
        for (int64_t i = 0; i < ih_n; ++i) {
          const float* row = x + (rem_h + dh * i) * g.in[2] + rem_w;
          for (int64_t j = 0; j < iw_n; ++j) sub_in[i * iw_n + j] = row[dw * j];
        }
        if (!depthwise_writes_all(sg)) std::fill(sub_out, sub_out + oh_n * ow_n, 0.0f);
        depthwise_plane_f32(sub_in, w, sg, sub_out);
      }
      for (int64_t i = 0; i < oh_n; ++i) {
        float* dst = y + (a + dh * i) * out_w + b;
        for (int64_t j = 0; j < ow_n; ++j) dst[dw * j] = sub_out[i * ow_n + j];
      }
    }
}

// Output plane m of image n: the depthwise conv followed by the epilogue `ep`
// (row_bias indexed by m; residual already offset to image n, ldr = plane size).
void depthwise_plane_with_epilogue_f32(const float* x, const float* w, const Geo3& g, float* y, const GemmEpilogue& ep,
                                       int64_t m) {
  const int64_t out_plane = g.out_size();
  if (cpu_has_simd_kernels() && dilated_depthwise_split_ok(g)) {
    depthwise_dilated_plane_f32(x, w, g, y);
    return apply_epilogue(ep, y, out_plane, m, 0, 1, out_plane);
  }
  if (cpu_has_simd_kernels() && depthwise_fast_ok(g)) {
    const SimdWidth width = plane_width(g, true);
    if (!ep.col_bias && clamp_or_none(ep.act))
      return depthwise_plane(width, x, w, dw_geometry(g), y, depthwise_output(ep, m));
    depthwise_plane(width, x, w, dw_geometry(g), y, DepthwiseOutput{});
    return apply_epilogue(ep, y, out_plane, m, 0, 1, out_plane);
  }
  depthwise_plane_f32(x, w, g, y);
  apply_epilogue(ep, y, out_plane, m, 0, 1, out_plane);
}

}  // namespace

bool depthwise_writes_all(const Geo3& g) { return cpu_has_simd_kernels() && depthwise_fast_ok(g); }

void depthwise_plane_f64(const double* x, const double* w, const Geo3& g, double* y) {
  depthwise_plane<double>(x, w, g, y);
}

Status conv_depthwise_f32(const ConvProblem& prob, const ConvFusion& fuse) {
  const float* X = prob.x->data<float>();
  const float* W = prob.w->data<float>();
  const float* Bv = prob.bias ? prob.bias->data<float>() : nullptr;
  const float* Z = prob.z ? prob.z->data<float>() : nullptr;
  float* Y = prob.y->data<float>();
  const int64_t N = prob.N, C = prob.C, M = prob.M, in_plane = prob.in_plane, out_plane = prob.out_plane, ks = prob.ks;
  const Geo3 g = prob.g;
  ThreadPool& pool = *prob.pool;
  GemmEpilogue ep;
  ep.act = fuse.act;
  ep.row_bias = Bv;
  ep.ldr = out_plane;
  // Stride 1 with output rows of at most 16 (mobilenet's 14x14 and 7x7
  // planes): the flat-grid kernel (depthwise_flat.h).
  DepthwiseFlatPlan flat;
  const bool use_flat = g.k[0] == 1 && g.in[0] == 1 && g.out[0] == 1 && g.d[1] == 1 && g.d[2] == 1 &&
                        g.s[1] == 1 && g.s[2] == 1 && g.out[2] <= 16 &&
                        depthwise_flat_plan({g.in[1], g.in[2], g.out[1], g.out[2], g.k[1], g.k[2], g.pb[1], g.pb[2]},
                                            &flat);
  auto body = [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t) {
      const int64_t n = t / M, m = t % M;
      if (use_flat) {
        DepthwiseFlatOutput o;
        o.bias = Bv ? Bv[m] : 0.0f;
        o.residual = Z ? Z + t * out_plane : nullptr;
        o.act = fuse.act;
        depthwise_flat(SimdWidth::k512, X + (n * C + m) * in_plane, W + m * ks, flat, Y + t * out_plane, o);
        continue;
      }
      GemmEpilogue pe = ep;
      pe.residual = Z ? Z + n * M * out_plane : nullptr;
      depthwise_plane_with_epilogue_f32(X + (n * C + m) * in_plane, W + m * ks, g, Y + t * out_plane, pe, m);
    }
  };
  // One channel per vector lane (depthwise_lanes.h): 4 per NEON vector,
  // 8 per ymm on AVX2, 16 per zmm on AVX-512, instead of one plane at a time.
  //
  // NEON, 2-D, 4 channels or more: every plane size, as AVX2 (the plane
  // loops are the portable ones there).
  //
  // AVX2, 2-D, 8 channels or more: every plane size (faster on every plane
  // size inside mobilenet_v2, where outputs are cold in cache, though not
  // alone on large planes; docs/performance-decisions.md).
  //
  // AVX-512, 16 channels or more, strided or with output rows narrower
  // than a vector. There the plane kernels split even and odd columns or
  // waste lanes; at stride 1 on wider rows they run without the two
  // 16 x 16 transposes, which cost more than the taps (64 shuffles per 256
  // floats each, on a port the FMAs use too), so wide stride-1 rows keep
  // the plane kernels (docs/performance-decisions.md).
  const DepthwiseGeometry dg = dw_geometry(g);
  // The kernel applies any activation in its store, and takes dilated
  // convs at any width (their taps read the scratch dh rows and dw columns
  // apart, where the plane kernels split a dilated conv into dh x dw
  // gathered phases: lraspp's d=2 5x5 on 20x20), and a channel count off
  // the group (the last group partial: mobilenet_v3's 72 and 88).
  const bool dilated = g.d[1] != 1 || g.d[2] != 1;
  const bool plain2d = g.k[0] == 1 && g.in[0] == 1 && g.out[0] == 1 && depthwise_c8_avx2_ok(dg);
  const SimdWidth width = simd_width();
  const bool c16 = width == SimdWidth::k512 && M >= 16 &&
                   (dg.sw >= 2 || dg.out_w < 16 || dilated || !clamp_or_none(fuse.act));
  const bool c8 = width == SimdWidth::k256 && M >= 8;
  const bool c4 = width == SimdWidth::k128 && cpu_isa() == CpuIsa::kNeon && M >= 4;
  const int64_t lanes = !plain2d ? 0 : c16 ? 16 : c8 ? 8 : c4 ? 4 : 0;
  if (lanes > 0) {
    const ClampStage c = clamp_stage(fuse.act);
    DepthwiseC8Output o;
    o.clamp = c.clamp;
    o.lo = c.lo;
    o.hi = c.hi;
    o.act = clamp_or_none(fuse.act) ? nullptr : &fuse.act;
    const int64_t blocks = ceil_div(M, lanes), bands = depthwise_c8_row_bands(dg.out_h, pool.num_threads());
    pool.parallel_for(N * bands * blocks, 1, [&](int64_t b, int64_t e) {
      for (int64_t t = b; t < e; ++t) {
        const int64_t n = t / (bands * blocks), band = t / blocks % bands, m = (t % blocks) * lanes;
        DepthwiseC8Output oc = o;
        oc.bias = Bv ? Bv + m : nullptr;
        oc.residual = Z ? Z + (n * M + m) * out_plane : nullptr;
        const int64_t r0 = dg.out_h * band / bands, r1 = dg.out_h * (band + 1) / bands;
        depthwise_lanes(width, X + (n * C + m) * in_plane, in_plane, W + m * ks, dg, Y + (n * M + m) * out_plane,
                        out_plane, oc, r0, r1, static_cast<int>(std::min<int64_t>(lanes, M - m)));
      }
    });
    return Status::Ok();
  }
  // Planes per chunk: at least ~16K multiply-adds (late 7x7 planes are tiny).
  pool.parallel_for(N * M, std::max<int64_t>(1, 16384 / std::max<int64_t>(out_plane * ks, 1)), body);
  return Status::Ok();
}

}  // namespace dlrt::cpu::conv_detail
