// Winograd F(2x2, 3x3) (see conv_winograd.h). One image runs in three
// parallel phases:
//  1. per input channel: the plane is copied zero-padded, then each run of
//     8 tiles along a tile row is transformed at once (one tile per lane:
//     the patch columns are the even and odd floats of two padded-row
//     loads) into V [16][C][T];
//  2. the 16 GEMMs M_ξν = U_ξν · V_ξν, one whole GEMM per task;
//  3. per output channel: 8 tiles per step back to 2x2 outputs each, their
//     two columns interleaved into 16 consecutive floats of a row, then the
//     epilogue over the plane while it is in cache.
#include "backends/cpu/kernels/conv_winograd.h"

#include <algorithm>
#include <atomic>
#include <cassert>
#include <cstdlib>
#include <cstring>

#include "backends/cpu/kernel_util.h"
#include "backends/cpu/kernels/isa_target.h"
#include "backends/cpu/scratch.h"
#include "core/env.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace dlrt::cpu {

namespace {

std::atomic<int> g_override{-1};  // -1: the environment; 0: off; 1: on
std::atomic<uint64_t> g_runs{0};
std::atomic<int> g_tile{0};  // ScopedWinogradTile: 0, 2 or 4

}  // namespace

std::shared_ptr<const WinogradFilters> winograd_filters(const float* w, int64_t M, int64_t C) {
  // U = G g Gᵀ with G = [[1, 0, 0], [1/2, 1/2, 1/2], [1/2, -1/2, 1/2], [0, 0, 1]].
  static constexpr float G[4][3] = {{1.0f, 0.0f, 0.0f}, {0.5f, 0.5f, 0.5f}, {0.5f, -0.5f, 0.5f}, {0.0f, 0.0f, 1.0f}};
  std::vector<float> u(static_cast<size_t>(16 * M * C));
  for (int64_t m = 0; m < M; ++m)
    for (int64_t c = 0; c < C; ++c) {
      const float* g = w + (m * C + c) * 9;
      float t[4][3];
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 3; ++j) t[i][j] = G[i][0] * g[j] + G[i][1] * g[3 + j] + G[i][2] * g[6 + j];
      for (int i = 0; i < 4; ++i)
        for (int l = 0; l < 4; ++l)
          u[static_cast<size_t>(((i * 4 + l) * M + m) * C + c)] = t[i][0] * G[l][0] + t[i][1] * G[l][1] + t[i][2] * G[l][2];
    }
  auto f = std::make_shared<WinogradFilters>();
  f->M = M;
  f->C = C;
  for (int e = 0; e < 16; ++e) f->u.push_back(PackedMatrix::pack_a(false, M, C, u.data() + e * M * C, C));
  return f;
}

bool winograd_ok(const WinogradGeometry& g) {
  return g.in_h > 0 && g.in_w > 0 && g.out_h > 0 && g.out_w > 0 && g.pad_top >= 0 && g.pad_top <= 2 &&
         g.pad_left >= 0 && g.pad_left <= 2;
}

bool winograd_enabled() {
  const int o = g_override.load(std::memory_order_relaxed);
  if (o >= 0) return o == 1;
  static const bool on = [] {
    const char* v = env::get("DLRT_CONV_WINOGRAD");
    return !(v && std::strcmp(v, "0") == 0);
  }();
  return on;
}

ScopedWinograd::ScopedWinograd(bool enabled) : previous_(g_override.load()) { g_override.store(enabled ? 1 : 0); }
ScopedWinograd::~ScopedWinograd() { g_override.store(previous_); }

ScopedWinogradTile::ScopedWinogradTile(int tile) : previous_(g_tile.load()) { g_tile.store(tile); }
ScopedWinogradTile::~ScopedWinogradTile() { g_tile.store(previous_); }
int winograd_forced_tile() { return g_tile.load(std::memory_order_relaxed); }

void winograd_pad_plane(const WinogradGeometry& g, const float* xc, int64_t hp, int64_t wp, float* pad) {
  for (int64_t r = 0; r < hp; ++r) {
    float* row = pad + r * wp;
    const int64_t ih = r - g.pad_top;
    if (ih < 0 || ih >= g.in_h) {
      std::memset(row, 0, static_cast<size_t>(wp) * sizeof(float));
      continue;
    }
    std::memset(row, 0, static_cast<size_t>(g.pad_left) * sizeof(float));
    const int64_t n = std::max<int64_t>(0, std::min(g.in_w, wp - g.pad_left));
    std::memcpy(row + g.pad_left, xc + ih * g.in_w, static_cast<size_t>(n) * sizeof(float));
    std::memset(row + g.pad_left + n, 0, static_cast<size_t>(wp - g.pad_left - n) * sizeof(float));
  }
}

void winograd_products(const WinogradFilters& f, int64_t n, int64_t ld, const float* V, float* Mo,
                       ThreadPool& pool) {
  // The filters are packed fp32 (never for AMX) against a plain B: sgemm_ex
  // cannot fail on these operands, so only debug builds check.
  pool.parallel_for(static_cast<int64_t>(f.u.size()), 1, [&](int64_t b, int64_t e) {
    for (int64_t k = b; k < e; ++k) {
      [[maybe_unused]] const Status s =
          sgemm_ex(f.M, n, f.C, 1.0f, SgemmOperand{nullptr, 0, false, f.u[static_cast<size_t>(k)].get(), nullptr},
                   SgemmOperand{V + k * f.C * ld, ld, false, nullptr, nullptr}, 0.0f, Mo + k * f.M * ld, ld, nullptr,
                   nullptr);
      assert(s.ok());
    }
  });
}

uint64_t conv_winograd_runs() { return g_runs.load(std::memory_order_relaxed) + conv_winograd4_runs(); }

#if defined(__x86_64__) || defined(__i386__)

namespace {

// Lanes j of the result: p[2j] (even) or p[2j + 1] (odd), j < 8; reads p[0, 16).
DLRT_AVX2 inline __m256 evens(const float* p) {
  const __m256 t = _mm256_shuffle_ps(_mm256_loadu_ps(p), _mm256_loadu_ps(p + 8), _MM_SHUFFLE(2, 0, 2, 0));
  return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(t), _MM_SHUFFLE(3, 1, 2, 0)));
}
DLRT_AVX2 inline __m256 odds(const float* p) {
  const __m256 t = _mm256_shuffle_ps(_mm256_loadu_ps(p), _mm256_loadu_ps(p + 8), _MM_SHUFFLE(3, 1, 3, 1));
  return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(t), _MM_SHUFFLE(3, 1, 2, 0)));
}

// Stores the first n (<= 8) lanes of v at dst.
DLRT_AVX2 inline void store_first(float* dst, __m256 v, int64_t n) {
  if (n >= 8) {
    _mm256_storeu_ps(dst, v);
    return;
  }
  alignas(32) float t[8];
  _mm256_store_ps(t, v);
  std::memcpy(dst, t, static_cast<size_t>(n) * sizeof(float));
}

struct Dims {
  int64_t C, M, TH, TW, T, Hp, Wp;
};

// Phase 1 for channel c: x plane -> padded copy -> V[e][c][t] for the 16 e.
DLRT_AVX2 void input_transform(const WinogradGeometry& g, const Dims& d, const float* xc, float* pad, float* V,
                                    int64_t c) {
  winograd_pad_plane(g, xc, d.Hp, d.Wp, pad);
  const int64_t CT = d.C * d.T;
  for (int64_t th = 0; th < d.TH; ++th)
    for (int64_t tw0 = 0; tw0 < d.TW; tw0 += 8) {
      // d[r][k] for 8 tiles (lane j: tile tw0 + j, patch column k).
      __m256 t[4][4];  // Bᵀ d: rows t0 = d0 - d2, t1 = d1 + d2, t2 = d2 - d1, t3 = d1 - d3
      __m256 dr[4][4];
      for (int r = 0; r < 4; ++r) {
        const float* p = pad + (2 * th + r) * d.Wp + 2 * tw0;
        dr[r][0] = evens(p);
        dr[r][1] = odds(p);
        dr[r][2] = evens(p + 2);
        dr[r][3] = odds(p + 2);
      }
      for (int k = 0; k < 4; ++k) {
        t[0][k] = _mm256_sub_ps(dr[0][k], dr[2][k]);
        t[1][k] = _mm256_add_ps(dr[1][k], dr[2][k]);
        t[2][k] = _mm256_sub_ps(dr[2][k], dr[1][k]);
        t[3][k] = _mm256_sub_ps(dr[1][k], dr[3][k]);
      }
      // A short last run stores all 8 lanes too where the extra ones land on
      // later tiles of this channel (the next tile rows', written after
      // this one), not past them into the next channel, which another
      // thread may be writing. (The partial store cost layer3's 7-tile rows
      // half of their transform time.)
      const int64_t t0 = th * d.TW + tw0;
      const int64_t n = t0 + 8 <= d.T ? 8 : std::min<int64_t>(8, d.TW - tw0);
      float* v = V + c * d.T + t0;
      for (int i = 0; i < 4; ++i) {
        store_first(v + (i * 4 + 0) * CT, _mm256_sub_ps(t[i][0], t[i][2]), n);
        store_first(v + (i * 4 + 1) * CT, _mm256_add_ps(t[i][1], t[i][2]), n);
        store_first(v + (i * 4 + 2) * CT, _mm256_sub_ps(t[i][2], t[i][1]), n);
        store_first(v + (i * 4 + 3) * CT, _mm256_sub_ps(t[i][1], t[i][3]), n);
      }
    }
}

// Phase 3 for output channel m: Mo[e][m][t] -> y plane (raw sums; the
// caller applies the epilogue). Mo has 8 floats of slack past its end.
DLRT_AVX2 void output_transform(const WinogradGeometry& g, const Dims& d, const float* Mo, float* ym, int64_t m) {
  const int64_t MT = d.M * d.T;
  for (int64_t th = 0; th < d.TH; ++th)
    for (int64_t tw0 = 0; tw0 < d.TW; tw0 += 8) {
      const float* src = Mo + m * d.T + th * d.TW + tw0;
      __m256 s0[4], s1[4];  // Aᵀ m: s0 = m0 + m1 + m2, s1 = m1 - m2 - m3 (per column ν)
      for (int v = 0; v < 4; ++v) {
        const __m256 m0 = _mm256_loadu_ps(src + (0 * 4 + v) * MT), m1 = _mm256_loadu_ps(src + (1 * 4 + v) * MT);
        const __m256 m2 = _mm256_loadu_ps(src + (2 * 4 + v) * MT), m3 = _mm256_loadu_ps(src + (3 * 4 + v) * MT);
        s0[v] = _mm256_add_ps(_mm256_add_ps(m0, m1), m2);
        s1[v] = _mm256_sub_ps(_mm256_sub_ps(m1, m2), m3);
      }
      const __m256 s[2][4] = {{s0[0], s0[1], s0[2], s0[3]}, {s1[0], s1[1], s1[2], s1[3]}};
      const int64_t cols = std::min<int64_t>(16, g.out_w - 2 * tw0);
      for (int i = 0; i < 2; ++i) {
        const int64_t oh = 2 * th + i;
        if (oh >= g.out_h) break;
        const __m256 y0 = _mm256_add_ps(_mm256_add_ps(s[i][0], s[i][1]), s[i][2]);  // column 2j
        const __m256 y1 = _mm256_sub_ps(_mm256_sub_ps(s[i][1], s[i][2]), s[i][3]);  // column 2j + 1
        const __m256 lo = _mm256_unpacklo_ps(y0, y1), hi = _mm256_unpackhi_ps(y0, y1);
        float* row = ym + oh * g.out_w + 2 * tw0;
        store_first(row, _mm256_permute2f128_ps(lo, hi, 0x20), cols);
        if (cols > 8) store_first(row + 8, _mm256_permute2f128_ps(lo, hi, 0x31), cols - 8);
      }
    }
}

}  // namespace

void conv_winograd(const WinogradFilters& f, const WinogradGeometry& g, const float* x, float* y,
                   const GemmEpilogue& ep, ThreadPool& pool) {
  Dims d;
  d.C = f.C;
  d.M = f.M;
  d.TH = ceil_div(g.out_h, 2);
  d.TW = ceil_div(g.out_w, 2);
  d.T = d.TH * d.TW;
  d.Hp = 2 * d.TH + 2;
  d.Wp = 2 * ceil_div(d.TW, 8) * 8 + 8;  // a run of 8 tiles reads 18 floats from its first column
  const int64_t in_plane = g.in_h * g.in_w, out_plane = g.out_h * g.out_w;
  thread_local AlignedScratch scratch;  // V, then Mo (+ slack)
  float* V = scratch.get<float>(static_cast<size_t>(16 * d.C * d.T + 16 * d.M * d.T + 8));
  float* Mo = V + 16 * d.C * d.T;

  pool.parallel_for(d.C, 1, [&](int64_t b, int64_t e) {
    thread_local AlignedScratch pad_scratch;
    float* pad = pad_scratch.get<float>(static_cast<size_t>(d.Hp * d.Wp));
    for (int64_t c = b; c < e; ++c) input_transform(g, d, x + c * in_plane, pad, V, c);
  });
  winograd_products(f, d.T, d.T, V, Mo, pool);
  pool.parallel_for(d.M, 1, [&](int64_t b, int64_t e) {
    for (int64_t m = b; m < e; ++m) {
      float* ym = y + m * out_plane;
      output_transform(g, d, Mo, ym, m);
      if (!ep.empty()) apply_epilogue(ep, ym, out_plane, m, 0, 1, out_plane);
    }
  });
  g_runs.fetch_add(1, std::memory_order_relaxed);
}

#else

void conv_winograd(const WinogradFilters&, const WinogradGeometry&, const float*, float*, const GemmEpilogue&,
                   ThreadPool&) {}

#endif

}  // namespace dlrt::cpu
