// Winograd F(2x2, 3x3) (see conv_winograd.h). One image runs in three
// parallel phases:
//  1. per input channel: the plane is copied zero-padded, then each run of
//     a vector of tiles along a tile row is transformed at once (one tile
//     per lane: the patch columns are the even and odd floats of two
//     padded-row loads) into V [16][C][T];
//  2. the 16 GEMMs M_ξν = U_ξν · V_ξν, one whole GEMM per task;
//  3. per output channel: a vector of tiles per step back to 2x2 outputs
//     each, their two columns interleaved into consecutive floats of a row,
//     then the epilogue over the plane while it is in cache.
// The transforms are the body conv_winograd2_simd.h, run at 256 bits on x86
// (AVX2 and AVX-512 CPUs alike, as the former AVX2 code) and 128 on NEON.
#include "backends/cpu/kernels/conv_winograd.h"

#include <algorithm>
#include <atomic>
#include <cassert>
#include <cstdlib>
#include <cstring>

#include "backends/cpu/kernel_util.h"
#include "backends/cpu/kernels/isa.h"
#include "backends/cpu/kernels/simd/simd.h"
#include "backends/cpu/scratch.h"
#include "core/env.h"

namespace dlrt::cpu {

// The transforms' sizes: tiles per row (TW) and column (TH), T of them, the
// padded plane Hp x Wp.
struct Winograd2Dims {
  int64_t C, M, TH, TW, T, Hp, Wp;
};

}  // namespace dlrt::cpu

#define DLRT_SIMD_BODY "backends/cpu/kernels/conv_winograd2_simd.h"
#include "backends/cpu/kernels/simd/instantiate.h"

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

void conv_winograd(const WinogradFilters& f, const WinogradGeometry& g, const float* x, float* y,
                   const GemmEpilogue& ep, ThreadPool& pool) {
  // 256 bits where the CPU has AVX2 (the former AVX2 code's runs of 8 tiles), else the layer's width.
  const SimdWidth width = cpu_has_avx2() ? SimdWidth::k256 : simd_width();
  const int64_t lanes = width == SimdWidth::k512 ? 16 : width == SimdWidth::k256 ? 8 : 4;
  Winograd2Dims d;
  d.C = f.C;
  d.M = f.M;
  d.TH = ceil_div(g.out_h, 2);
  d.TW = ceil_div(g.out_w, 2);
  d.T = d.TH * d.TW;
  d.Hp = 2 * d.TH + 2;
  d.Wp = 2 * ceil_div(d.TW, lanes) * lanes + 8;  // a run of `lanes` tiles reads 2 lanes + 2 floats from its first column
  const int64_t in_plane = g.in_h * g.in_w, out_plane = g.out_h * g.out_w;
  thread_local AlignedScratch scratch;  // V, then Mo (+ slack)
  float* V = scratch.get<float>(static_cast<size_t>(16 * d.C * d.T + 16 * d.M * d.T + lanes));
  float* Mo = V + 16 * d.C * d.T;

  pool.parallel_for(d.C, 1, [&](int64_t b, int64_t e) {
    thread_local AlignedScratch pad_scratch;
    float* pad = pad_scratch.get<float>(static_cast<size_t>(d.Hp * d.Wp));
    for (int64_t c = b; c < e; ++c) {
      // Counted once per image (simd_calls), not per channel.
      if (c == 0) DLRT_SIMD_CALL(width, winograd2_input_transform, g, d, x + c * in_plane, pad, V, c);
      else DLRT_SIMD_PICK(width, winograd2_input_transform, g, d, x + c * in_plane, pad, V, c);
    }
  });
  winograd_products(f, d.T, d.T, V, Mo, pool);
  pool.parallel_for(d.M, 1, [&](int64_t b, int64_t e) {
    for (int64_t m = b; m < e; ++m) {
      float* ym = y + m * out_plane;
      DLRT_SIMD_PICK(width, winograd2_output_transform, g, d, Mo, ym, m);
      if (!ep.empty()) apply_epilogue(ep, ym, out_plane, m, 0, 1, out_plane);
    }
  });
  g_runs.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace dlrt::cpu
