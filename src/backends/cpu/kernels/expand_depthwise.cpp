// Expand conv + depthwise conv in one pass (see expand_depthwise.h): the
// register tiles in expand_depthwise_simd.h at every vector width, the
// orchestration (bands, carried rows, the projection's split) here.
#include "backends/cpu/kernels/expand_depthwise.h"

#include <algorithm>
#include <cassert>
#include <optional>

#include "backends/cpu/kernel_util.h"
#include "backends/cpu/kernels/conv_direct.h"
#include "backends/cpu/kernels/depthwise_lanes.h"
#include "backends/cpu/kernels/isa.h"
#include "backends/cpu/scratch.h"

namespace dlrt::cpu::expand_depthwise_detail {

// A buffer of padded planes [rows][Wp][lanes], one per block of `lanes`
// channels, holding padded rows [row0, row0 + rows) of the Hp x Wp planes
// the depthwise taps read.
struct Padded {
  int64_t Hp = 0, Wp = 0;
  int64_t row0 = 0, rows = 0;
  int64_t lanes = 8;  // channels per block: the vector's lanes (8 on the portable path)
  int64_t plane() const { return rows * Wp * lanes; }
};

// Where the first conv reads: tap t of expanded position (h, c) is
// src[off[t] + h * row_step + c * col_step]. For a 1x1/1 conv off[t] is
// t * channel_step.
struct Taps {
  const float* src = nullptr;
  const int64_t* off = nullptr;
  int64_t count = 0, row_step = 0, col_step = 0, channel_step = 0;
  bool pointwise = false;  // a 1x1/1 conv on the input itself
};

}  // namespace dlrt::cpu::expand_depthwise_detail

#define DLRT_SIMD_BODY "backends/cpu/kernels/expand_depthwise_simd.h"
#include "backends/cpu/kernels/simd/instantiate.h"

namespace dlrt::cpu {

namespace {

using expand_depthwise_detail::Padded;
using expand_depthwise_detail::Taps;

// The calling thread's buffer for the expanded planes of a task's blocks,
// at least n floats: one per thread, whichever split of expand_depthwise
// runs. (A thread_local of expand_depthwise itself would not be set up on
// the pool's threads, which run only its tasks.)
float* block_scratch(size_t n) {
  thread_local AlignedScratch s;
  return s.get<float>(n);
}

Padded padded_of(const DepthwiseGeometry& g, int64_t lanes) {
  const int64_t Hp = (g.out_h - 1) * g.sh + g.kh;
  return {Hp, (g.out_w - 1) * g.sw + g.kw, 0, Hp, lanes};
}

// The vector width whose instantiation runs blocks of `lanes` channels under
// cpu_isa(), or none: the portable blocks of 8.
std::optional<SimdWidth> block_width(int64_t lanes) {
  if (lanes == 16 && cpu_has_avx512()) return SimdWidth::k512;
  if (lanes == 8 && cpu_has_avx2()) return SimdWidth::k256;
  if (lanes == 4 && cpu_has_simd_kernels()) return SimdWidth::k128;
  return std::nullopt;
}

// As the vector clamp: NaN stays NaN.
float clamp(const ClampStage& c, float v) { return c.clamp ? (v < c.lo ? c.lo : (v > c.hi ? c.hi : v)) : v; }

// Zeros the padded positions of NB planes of `pd` that no input lands on.
void zero_border(const ExpandDepthwiseShape& s, const Padded& pd, int64_t NB, float* buf) {
  const int64_t c0 = s.g.pad_left, c1 = std::min(pd.Wp, s.g.pad_left + s.W);
  for (int64_t b = 0; b < NB; ++b)
    for (int64_t r = pd.row0; r < pd.row0 + pd.rows; ++r) {
      const int64_t L = pd.lanes;
      float* row = buf + b * pd.plane() + (r - pd.row0) * pd.Wp * L;
      const int64_t ih = r - s.g.pad_top;
      if (ih < 0 || ih >= s.H) {
        std::fill(row, row + pd.Wp * L, 0.0f);
        continue;
      }
      std::fill(row, row + std::min(c0, pd.Wp) * L, 0.0f);
      if (c1 < pd.Wp) std::fill(row + c1 * L, row + pd.Wp * L, 0.0f);
    }
}

// Expanded rows [0, rows): those the depthwise taps read.
int64_t needed_rows(const ExpandDepthwiseShape& s, const Padded& pd) { return std::min(s.H, pd.Hp - s.g.pad_top); }

// Channels [8 blk, 8 blk + 8) in portable C++: the first conv into buf, then the depthwise taps.
void block_generic(const ExpandDepthwiseShape& s, const Padded& pd, const Taps& tp, const float* wp, const float* be,
                   const float* wd, const float* bd, float* y, int64_t blk, float* buf) {
  const int64_t out_plane = s.g.out_h * s.g.out_w, kk = s.g.kh * s.g.kw;
  zero_border(s, pd, 1, buf);
  const float* w = wp + blk * tp.count * 8;
  for (int64_t h = 0; h < needed_rows(s, pd); ++h)
    for (int64_t c = 0; c < s.W && c + s.g.pad_left < pd.Wp; ++c) {
      float acc[8] = {};
      const float* xp = tp.src + h * tp.row_step + c * tp.col_step;
      for (int64_t t = 0; t < tp.count; ++t)
        for (int j = 0; j < 8; ++j) acc[j] += xp[tp.off[t]] * w[t * 8 + j];
      float* dst = buf + ((h + s.g.pad_top) * pd.Wp + c + s.g.pad_left) * 8;
      for (int j = 0; j < 8; ++j) dst[j] = clamp(s.act_e, acc[j] + (be ? be[blk * 8 + j] : 0.0f));
    }
  for (int j = 0; j < 8; ++j) {
    const int64_t m = blk * 8 + j;
    for (int64_t oh = 0; oh < s.g.out_h; ++oh)
      for (int64_t ow = 0; ow < s.g.out_w; ++ow) {
        float acc = bd ? bd[m] : 0.0f;
        for (int64_t i = 0; i < s.g.kh; ++i)
          for (int64_t t = 0; t < s.g.kw; ++t)
            acc += wd[m * kk + i * s.g.kw + t] * buf[((oh * s.g.sh + i) * pd.Wp + ow * s.g.sw + t) * 8 + j];
        y[m * out_plane + oh * s.g.out_w + ow] = clamp(s.act_d, acc);
      }
  }
}

// The depthwise conv's output rows [oh0, oh1) of blocks [blk, blk + nb) from
// their planes of `pd` (buf: block blk's) into y (channel m at y + m * y_plane,
// output row oh0 first).
void depthwise_rows(SimdWidth w, const ExpandDepthwiseShape& s, const Padded& pd, const float* wd, const float* bd,
                    int64_t blk, int64_t nb, int64_t oh0, int64_t oh1, const float* buf, float* y, int64_t y_plane) {
  const int64_t kk = s.g.kh * s.g.kw, L = pd.lanes;
  DepthwiseC8Output o;
  o.clamp = s.act_d.clamp;
  o.lo = s.act_d.lo;
  o.hi = s.act_d.hi;
  DepthwiseGeometry band = s.g;
  band.out_h = oh1 - oh0;
  for (int64_t b = 0; b < nb; ++b) {
    const int64_t m = (blk + b) * L;
    o.bias = bd ? bd + m : nullptr;
    depthwise_lanes_padded(w, buf + b * pd.plane() + (oh0 * s.g.sh - pd.row0) * pd.Wp * L, pd.Wp, wd + m * kk, band,
                           y + m * y_plane, y_plane, o);
  }
}

// The expanded rows that output rows [oh0, oh1) read.
int64_t first_row(const ExpandDepthwiseShape& s, int64_t oh0) { return std::max<int64_t>(0, oh0 * s.g.sh - s.g.pad_top); }
int64_t end_row(const ExpandDepthwiseShape& s, const Padded& pd, int64_t oh1) {
  return std::min(needed_rows(s, pd), (oh1 - 1) * s.g.sh - s.g.pad_top + s.g.kh);
}

// Blocks [blk, blk + 2) (one when blk is the last).
int64_t pair_blocks(const ExpandDepthwiseShape& s, const Padded& pd, int64_t blk) {
  return std::min<int64_t>(2, s.M / pd.lanes - blk);
}

// Output rows [oh0, oh1) of blocks [blk, blk + 2) at width w: expand, then
// depthwise into y (channel m at y + m * y_plane).
void pair_rows(SimdWidth w, const ExpandDepthwiseShape& s, const Padded& pd, const Taps& tp, const float* wp,
               const float* be, const float* wd, const float* bd, float* y, int64_t y_plane, int64_t blk, int64_t oh0,
               int64_t oh1, float* buf) {
  const int64_t nb = pair_blocks(s, pd, blk);
  zero_border(s, pd, nb, buf);
  DLRT_SIMD_CALL(w, expand_block_rows, s, pd, tp, wp, be, blk, nb, first_row(s, oh0), end_row(s, pd, oh1), buf);
  depthwise_rows(w, s, pd, wd, bd, blk, nb, oh0, oh1, buf, y + oh0 * s.g.out_w, y_plane);
}

// Rows of the depthwise output a projection band holds: about kBandBytes of
// it (all M channels), so it is read back from L2 by the 1x1 conv, but at
// least kMinBandPositions positions, as a 1x1 conv over fewer runs its
// tiles inefficiently (mobilenet_v2's 14x14 and 7x7 layers then take the
// whole plane); rounded down to whole 16-position tiles where that keeps
// both bounds.
constexpr int64_t kBandBytes = 128 * 1024, kMinBandPositions = 192;
int64_t band_rows(const ExpandDepthwiseShape& s, int64_t rows) {
  const int64_t w = s.g.out_w, lo = std::min(rows, (kMinBandPositions + w - 1) / w);
  const int64_t r = std::clamp<int64_t>(kBandBytes / (s.M * w * int64_t{sizeof(float)}), lo, rows);
  for (int64_t t = r; t >= lo; --t)
    if (t * w % 16 == 0) return t;
  return r;
}

// Output rows [OH0, OH1) on one thread with the projection (weights packed
// for the 6 x 16 tile, pointwise_direct), band by band and, within a band,
// pair by pair of blocks: the pair's padded rows of the band in a window
// (the rows it shares with the previous band come from a carry store, the
// rest are expanded), the depthwise band into d [M][positions], the shared
// rows saved to the carry; then the 1x1 conv of the band into y. Window,
// carry and band stay in L2.
void project_range(SimdWidth w, const ExpandDepthwiseShape& s, const Taps& tp, const float* wp, const float* be,
                   const float* wd, const float* bd, const ProjectStage& proj, float* y, int64_t OH0, int64_t OH1) {
  const int64_t out_plane = s.g.out_h * s.g.out_w, sh = s.g.sh, kh = s.g.kh;
  const int64_t br = band_rows(s, OH1 - OH0);
  Padded pd = padded_of(s.g, depthwise_lanes_width(w));
  const int64_t blocks = s.M / pd.lanes, Hp = pd.Hp, row_floats = pd.Wp * pd.lanes;
  pd.rows = std::min(Hp, (br - 1) * sh + kh);
  const int64_t carry_rows = std::max<int64_t>(0, kh - sh);
  thread_local AlignedScratch wbuf, cbuf, dbuf;
  float* buf = wbuf.get<float>(static_cast<size_t>(2 * pd.plane()));
  float* carry = cbuf.get<float>(static_cast<size_t>(blocks * std::max<int64_t>(1, carry_rows) * row_floats));
  // d's channel rows start on cache lines: the 1x1 conv's 16-float loads then never straddle two.
  const int64_t ld = ceil_div(br * s.g.out_w, 16) * 16;
  float* d = dbuf.get<float>(static_cast<size_t>(s.M * ld));
  int64_t prev_end = OH0 * sh;  // padded rows [.., prev_end) were in the last band's window
  for (int64_t oh0 = OH0, oh1; oh0 < OH1; oh0 = oh1) {
    oh1 = std::min(OH1, oh0 + br);
    const int64_t start = oh0 * sh, end = std::min(Hp, (oh1 - 1) * sh + kh), bn = (oh1 - oh0) * s.g.out_w;
    const int64_t carried = std::max<int64_t>(0, prev_end - start), next = oh1 * sh;
    const int64_t saved = oh1 < OH1 ? std::clamp<int64_t>(end - next, 0, carry_rows) : 0;
    const int64_t r0 = std::max<int64_t>(first_row(s, oh0), prev_end - s.g.pad_top), r1 = end_row(s, pd, oh1);
    pd.row0 = start;
    for (int64_t blk = 0; blk < blocks; blk += 2) {
      const int64_t nb = pair_blocks(s, pd, blk);
      zero_border(s, pd, nb, buf);
      for (int64_t b = 0; b < nb; ++b)
        std::copy_n(carry + (blk + b) * carry_rows * row_floats, carried * row_floats, buf + b * pd.plane());
      if (r1 > r0) DLRT_SIMD_CALL(w, expand_block_rows, s, pd, tp, wp, be, blk, nb, r0, r1, buf);
      depthwise_rows(w, s, pd, wd, bd, blk, nb, oh0, oh1, buf, d, ld);
      for (int64_t b = 0; b < nb; ++b)
        std::copy_n(buf + b * pd.plane() + (next - start) * row_floats, saved * row_floats,
                    carry + (blk + b) * carry_rows * row_floats);
    }
    prev_end = saved > 0 ? next + saved : next;
    GemmEpilogue ep = proj.ep;
    if (ep.residual) ep.residual += oh0 * s.g.out_w;
    pointwise_direct(conv_direct_sliced_width(), d, ld, bn, *proj.w, y + oh0 * s.g.out_w, out_plane, ep, nullptr);
  }
}

// The expand conv's taps; a conv other than 1x1/1 reads a zero-padded copy of
// the input (the rows and columns its taps reach), shared by the threads.
Taps expand_taps(const ExpandDepthwiseShape& s, const float* x, ThreadPool& pool, int64_t* off, AlignedScratch& pad) {
  const ExpandConvGeometry& e = s.e;
  const int64_t T = s.K * e.kh * e.kw;
  Taps tp;
  tp.off = off;
  tp.count = T;
  if (e.pointwise()) {
    tp.src = x, tp.row_step = s.W, tp.col_step = 1, tp.channel_step = s.in_h * s.in_w, tp.pointwise = true;
    for (int64_t t = 0; t < T; ++t) off[t] = t * tp.channel_step;
  } else {
    const int64_t Hq = (s.H - 1) * e.sh + e.kh, Wq = (s.W - 1) * e.sw + e.kw;
    float* xq = pad.get<float>(static_cast<size_t>(s.K * Hq * Wq));
    // Input columns [0, body) land at pad_left; the rest of a row is zero.
    const int64_t lead = std::min(e.pad_left, Wq), body = std::clamp<int64_t>(Wq - e.pad_left, 0, s.in_w);
    pool.parallel_for(s.K * Hq, 32, [&](int64_t b, int64_t e2) {
      for (int64_t kr = b; kr < e2; ++kr) {
        const int64_t k = kr / Hq, ih = kr % Hq - e.pad_top;
        float* dst = xq + kr * Wq;
        if (ih < 0 || ih >= s.in_h) {
          std::fill(dst, dst + Wq, 0.0f);
          continue;
        }
        std::fill(dst, dst + lead, 0.0f);
        std::copy_n(x + (k * s.in_h + ih) * s.in_w, body, dst + lead);
        std::fill(dst + lead + body, dst + Wq, 0.0f);
      }
    });
    for (int64_t k = 0, t = 0; k < s.K; ++k)
      for (int64_t i = 0; i < e.kh; ++i)
        for (int64_t j = 0; j < e.kw; ++j) off[t++] = (k * Hq + i) * Wq + j;
    tp.src = xq, tp.row_step = e.sh * Wq, tp.col_step = e.sw;
  }
  return tp;
}

// Blocks projected on the 8 x 48 tile (weights packed for the 512-bit GEMM)
// in `pbands` row bands, each band's depthwise output in a region of its own
// (expand_depthwise says why).
void expand_bands(SimdWidth w, const ExpandDepthwiseShape& s, const Padded& pd, const Taps& tp,
                  const float* we_packed, const float* be, const float* wd, const float* bd, const ProjectStage* proj,
                  float* y, int64_t pbands, AlignedScratch& mid_buf, ThreadPool& pool) {
  const int64_t pairs = (s.M / pd.lanes + 1) / 2, out_plane = s.g.out_h * s.g.out_w;
  const int64_t band_ld = ceil_div(ceil_div(s.g.out_h, pbands) * s.g.out_w, 16) * 16;
  float* bmid = mid_buf.get<float>(static_cast<size_t>(pbands * s.M * band_ld));
  pool.parallel_for(pbands, 1, [&](int64_t b, int64_t e2) {
    float* buf = block_scratch(static_cast<size_t>(2 * pd.plane()));
    for (int64_t band = b; band < e2; ++band) {
      const int64_t oh0 = s.g.out_h * band / pbands, oh1 = s.g.out_h * (band + 1) / pbands;
      const int64_t p0 = oh0 * s.g.out_w;
      float* own = bmid + band * s.M * band_ld;
      // pair_rows writes row oh of channel m at base + m * band_ld + oh * out_w
      // (base + p0 is `own`; p0 <= band * band_ld, so base is inside bmid).
      for (int64_t pr = 0; pr < pairs; ++pr)
        pair_rows(w, s, pd, tp, we_packed, be, wd, bd, own - p0, band_ld, 2 * pr, oh0, oh1, buf);
      ConvDirectPlan plan;
      const int64_t* off = conv_direct_pointwise_plan(s.M, (oh1 - oh0) * s.g.out_w, band_ld, &plan);
      GemmEpilogue e = proj->ep;
      if (e.residual) e.residual += p0;
      conv_direct_whole_k(w, plan, off, own, *proj->w, y + p0, e, nullptr, out_plane);
    }
  });
}

// Blocks projected on the 8 x 48 tile, split over the block pairs into
// per-thread partial products, then summed (expand_depthwise says why).
void expand_split_k(SimdWidth w, const ExpandDepthwiseShape& s, const Padded& pd, const Taps& tp,
                    const float* we_packed, const float* be, const float* wd, const float* bd,
                    const ProjectStage* proj, float* mid, int64_t mid_plane, float* y, AlignedScratch& part_buf,
                    ThreadPool& pool) {
  const int64_t pairs = (s.M / pd.lanes + 1) / 2, out_plane = s.g.out_h * s.g.out_w, threads = pool.num_threads();
  const int64_t P = proj->w->rows(), ld = ceil_div(out_plane, 16) * 16, part = P * ld, pair_ch = 2 * pd.lanes;
  float* partial = part_buf.get<float>(static_cast<size_t>(threads * part));
  pool.parallel_for(threads, 1, [&](int64_t b, int64_t e2) {
    float* buf = block_scratch(static_cast<size_t>(2 * pd.plane()));
    for (int64_t t = b; t < e2; ++t) {
      const int64_t pr0 = pairs * t / threads, pr1 = pairs * (t + 1) / threads;
      for (int64_t pr = pr0; pr < pr1; ++pr)
        pair_rows(w, s, pd, tp, we_packed, be, wd, bd, mid, mid_plane, 2 * pr, 0, s.g.out_h, buf);
      ConvDirectPlan plan;
      const int64_t* off = conv_direct_pointwise_plan(s.M, out_plane, mid_plane, &plan);
      conv_direct_whole_k(w, plan, off, mid, *proj->w, partial + t * part, GemmEpilogue{}, nullptr, ld,
                          pair_ch * pr0, std::min(s.M, pair_ch * pr1));
    }
  });
  pool.parallel_for(P, 8, [&](int64_t m0, int64_t m1) {
    DLRT_SIMD_CALL(w, expand_sum_partials, partial, threads, part, ld, out_plane, m0, m1, y, out_plane);
    if (!proj->ep.empty()) apply_epilogue(proj->ep, y + m0 * out_plane, out_plane, m0, 0, m1 - m0, out_plane);
  });
}

// Weights packed for the 512-bit GEMM's 8 x 48 tile (conv_direct_whole_k), or
// for the 6 x 16 tile of AVX2's and aarch64's (pointwise_direct).
bool packed_8x48(const ProjectStage* proj) { return proj->w->mr() == 8 && proj->w->nr() == 48; }
bool packed_6x16(const ProjectStage* proj) { return proj->w->mr() == 6 && proj->w->nr() == 16; }

// The 1x1 projection of `mid` into y: the 512-bit direct tile where Conv's
// policy would take it, the 6 x 16 pointwise kernel, else the GEMM.
void project_mid(const ExpandDepthwiseShape& s, std::optional<SimdWidth> w, float* mid, int64_t mid_plane,
                 const ProjectStage* proj, float* y, ThreadPool& pool) {
  const int64_t out_plane = s.g.out_h * s.g.out_w;
  if (w == SimdWidth::k512 && packed_8x48(proj)) {
    ConvDirectPlan plan;
    const int64_t* off = conv_direct_pointwise_plan(s.M, out_plane, mid_plane, &plan);
    if (conv_direct_worth(plan, CpuIsa::kAvx512, pool.num_threads(), proj->w->rows())) {
      conv_direct_whole_k(SimdWidth::k512, plan, off, mid, *proj->w, y, proj->ep, &pool);
      return;
    }
  }
  if (w && packed_6x16(proj)) {
    pointwise_direct(conv_direct_sliced_width(), mid, mid_plane, out_plane, *proj->w, y, out_plane, proj->ep, &pool);
    return;
  }
  SgemmOperand a, b;
  a.packed = proj->w;
  b.data = mid;
  b.ld = mid_plane;
  // The projection is packed fp32 (never for AMX) against a plain B: sgemm_ex
  // cannot fail on these operands, so only debug builds check.
  [[maybe_unused]] const Status st = sgemm_ex(proj->w->rows(), out_plane, s.M, 1.0f, a, b, 0.0f, y, out_plane,
                                              &proj->ep, &pool);
  assert(st.ok());
}

}  // namespace

bool expand_depthwise_ok(const ExpandDepthwiseShape& s) {
  const DepthwiseGeometry& g = s.g;
  const ExpandConvGeometry& e = s.e;
  return s.K >= 1 && s.M >= 8 && (s.lanes == 8 || block_width(s.lanes)) && s.M % s.lanes == 0 &&
         s.H >= 1 && s.W >= 1 && g.in_h == s.H && g.in_w == s.W &&
         depthwise_c8_avx2_ok(g) && g.pad_top < g.kh && g.pad_left < g.kw && e.kh >= 1 && e.kw >= 1 && e.sh >= 1 &&
         e.sw >= 1 && e.pad_top >= 0 && e.pad_left >= 0 && s.in_h >= 1 && s.in_w >= 1 &&
         (!e.pointwise() || (s.in_h == s.H && s.in_w == s.W));
}

int64_t expand_depthwise_lanes(int64_t M) {
  if (cpu_has_avx512() && M % 16 == 0) return 16;
  if (cpu_has_avx2() || !cpu_has_simd_kernels()) return 8;
  return 4;  // NEON (the 128-bit instantiation)
}

std::vector<float> pack_expand_weights(const float* We, int64_t M, int64_t T, int64_t lanes) {
  std::vector<float> p(static_cast<size_t>(M * T));
  for (int64_t m = 0; m < M; ++m)
    for (int64_t t = 0; t < T; ++t)
      p[static_cast<size_t>(((m / lanes) * T + t) * lanes + m % lanes)] = We[m * T + t];
  return p;
}

void expand_depthwise(const ExpandDepthwiseShape& s, const float* x, const float* we_packed, const float* be,
                      const float* wd, const float* bd, float* y, ThreadPool& pool, const ProjectStage* proj) {
  // Blocks of one vector's lanes at width w (16 at 512 bits, 8 at 256, 4 at
  // 128), or the portable blocks of 8.
  const std::optional<SimdWidth> w = block_width(s.lanes);
  const Padded pd = padded_of(s.g, s.lanes);
  const int64_t blocks = s.M / pd.lanes, out_plane = s.g.out_h * s.g.out_w;
  const int64_t pairs = (blocks + 1) / 2;  // the vector paths' work units: two blocks
  const int64_t T = s.K * s.e.kh * s.e.kw;
  // Per-thread scratch: tap offsets, padded input, depthwise output, partials.
  thread_local AlignedScratch off_buf, pad_buf, mid_buf, part_buf;
  int64_t* off = off_buf.get<int64_t>(static_cast<size_t>(T));
  const Taps tp = expand_taps(s, x, pool, off, pad_buf);
  const int64_t threads = pool.num_threads(), bands = depthwise_c8_row_bands(s.g.out_h, threads);
  // With the projection on the 6 x 16 tile, each thread takes a range of
  // output rows (one thread: the whole plane) and runs it band by band, so
  // the depthwise output goes to the 1x1 conv through L2, never through
  // memory (below 512 bits: 16-channel blocks take the paths below).
  if (w && w != SimdWidth::k512 && proj && packed_6x16(proj) && bands == pool.num_threads()) {
    pool.parallel_for(bands, 1, [&](int64_t b, int64_t e2) {
      for (int64_t band = b; band < e2; ++band)
        project_range(*w, s, tp, we_packed, be, wd, bd, *proj, y, s.g.out_h * band / bands,
                      s.g.out_h * (band + 1) / bands);
    });
    return;
  }
  // 16-channel blocks with the projection on the 8 x 48 tile, the plane in
  // one row band per thread: a thread expands and filters its band's rows
  // for every pair of blocks, then projects the band's positions itself, so
  // the layer is one parallel section and no tensor crosses between cores
  // but the input rows at band edges. Reading data the other core wrote, or
  // writing lines it has read, runs at a fraction of the local rate (on the
  // AVX-512 VM: 450 KiB the other core wrote read at about 8 GB/s).
  // - Each band's depthwise output goes to a region of its own (channel
  //   rows band_ld floats apart, on cache lines), not to its rows of one
  //   shared plane, whose band boundary fell inside a cache line of every
  //   channel row (28x28, 192 channels: projection 48-50 us per band at 2
  //   threads against 31 for half the 1-thread plane; mobilenet_v2 4% faster).
  // - From 14 output rows per thread; smaller planes split over K (below).
  //   Bands of 7 rows for 14x14 planes on 2 threads (8 rows expanded for 7
  //   output rows) were 0.7% slower on mobilenet_v2 than the split over K,
  //   and 28x28 planes split over K 0.6% slower than in bands.
  // - Planes of 56 rows and more in bands of at most 28 rows, also on one
  //   thread (a thread then runs a contiguous run of bands): a band's
  //   expanded rows and depthwise output then stay in L2 (mobilenet_v2's
  //   112x112 and 56x56 blocks: 1 thread 1.4% faster, 2 threads the same;
  //   28x28 planes in 2 bands on 1 thread were slower than whole); on 2+
  //   threads a multiple of their count (expand_row_bands).
  const int64_t pbands = expand_row_bands(s.g.out_h, threads);
  if (w == SimdWidth::k512 && proj && packed_8x48(proj) && pbands > 1)
    return expand_bands(*w, s, pd, tp, we_packed, be, wd, bd, proj, y, pbands, mid_buf, pool);
  // Otherwise the depthwise output goes to y, or with the projection to a
  // scratch the 1x1 conv then reads (split over the pool by positions).
  // (The scratch's channel rows start on cache lines, as in project_range.)
  const int64_t mid_plane = proj && w ? ceil_div(out_plane, 16) * 16 : out_plane;
  float* mid = proj ? mid_buf.get<float>(static_cast<size_t>(s.M * mid_plane)) : y;
  // Planes too small for bands (14x14 and 7x7 on 2 threads): each thread
  // takes a contiguous run of the block pairs, expands and filters them into
  // its channels of mid, and projects those channels alone (the terms of the
  // 1x1 conv's sum over them) into a partial product of its own; a second
  // section adds the partials and applies the epilogue, split by output
  // channels. Only the partials cross between cores, where a projection split
  // by output channels or by positions had each core read half of the
  // other's depthwise output (mobilenet_v2 on 2 threads, its 7x7 blocks
  // fused: 1.2% faster than with that split; its 14x14 blocks split over K
  // rather than in bands of 7 rows: 0.7% faster).
  if (w == SimdWidth::k512 && proj && packed_8x48(proj) && threads > 1 && pairs >= threads)
    return expand_split_k(*w, s, pd, tp, we_packed, be, wd, bd, proj, mid, mid_plane, y, part_buf, pool);
  if (w) {
    // Pairs of blocks: the expand tile then has 12 accumulators (32
    // registers: 24). Row bands as the depthwise layers take them (a band
    // expands the few rows its taps share with the next band again).
    pool.parallel_for(bands * pairs, 1, [&](int64_t b, int64_t e2) {
      float* buf = block_scratch(static_cast<size_t>(2 * pd.plane()));
      for (int64_t u = b; u < e2; ++u) {
        const int64_t band = u / pairs, blk = 2 * (u % pairs);
        const int64_t oh0 = s.g.out_h * band / bands, oh1 = s.g.out_h * (band + 1) / bands;
        pair_rows(*w, s, pd, tp, we_packed, be, wd, bd, mid, mid_plane, blk, oh0, oh1, buf);
      }
    });
  } else {
    pool.parallel_for(blocks, 1, [&](int64_t b, int64_t e2) {
      float* buf = block_scratch(static_cast<size_t>(pd.plane()));
      for (int64_t blk = b; blk < e2; ++blk) block_generic(s, pd, tp, we_packed, be, wd, bd, mid, blk, buf);
    });
  }
  if (!proj) return;
  project_mid(s, w, mid, mid_plane, proj, y, pool);
}

}  // namespace dlrt::cpu
