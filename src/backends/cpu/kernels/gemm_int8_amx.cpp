// The 8-bit GEMM's AMX kernel (gemm_int8.h), written once over the tile
// operations of amx_tiles.h: on the real tiles (TDPBUSD) where the CPU and OS
// allow them, and on the scalar model everywhere (kernel "amx-model", for
// tests).
//
// Tiles (palette 1, all 16 rows x 64 bytes): tmm0-3 hold a 32 x 32 int32
// block of C (tmm0/tmm1: rows 0-15 / 16-31 of panel 0, tmm2/tmm3 of panel 1),
// tmm4/tmm5 the two 16-row halves of A for one 64-deep K step, tmm6/tmm7 the
// step's 16 groups of B for panel 0 / 1. B is gemm_u8s8's packing as it is:
// a panel's groups of 4 k are 64-byte rows (16 columns x 4 bytes), one after
// the other, so 16 consecutive groups are one B tile (stride 64). A is
// packed per block of 32 rows as tiles: per K step, the upper and the lower
// half's 16 rows of 64 bytes (16 groups), zero past K and past M.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <random>

#include "backends/cpu/kernels/amx_tile_moves.h"
#include "backends/cpu/kernels/amx_tiles.h"
#include "backends/cpu/kernels/gemm_int8.h"
#include "backends/cpu/kernels/isa.h"
#include "backends/cpu/kernels/isa_target.h"
#include "device/cpu_features.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define DLRT_AMX_INT8_BUILT 1
// The kernel template carries the tile target for both instantiations: Clang
// accepts the tile builtins only there, and no compiler emits tile
// instructions of its own, so the model's instantiation runs on any x86-64.
#define DLRT_TILE_TARGET DLRT_AMX_INT8
#else
#define DLRT_TILE_TARGET
#endif

namespace dlrt::cpu::int8_detail {
namespace {

constexpr int64_t kStepGroups = 16;              // groups of 4 k per tile step (64 k)
constexpr int64_t kTileBytes = 1024;             // 16 rows x 64 bytes
constexpr int64_t kAStepBytes = 2 * kTileBytes;  // one step of a 32-row block (two halves)

// One K step: A's halves and B's tiles loaded, C += A x B per (half, panel).
template <class Ops, int NV>
DLRT_TILE_TARGET inline void step(const uint8_t* a, const int8_t* b0, const int8_t* b1) {
  Ops::template load<4>(a, 64);
  Ops::template load<5>(a + kTileBytes, 64);
  Ops::template load<6>(b0, 64);
  Ops::template dpbusd<0, 4, 6>();
  Ops::template dpbusd<1, 5, 6>();
  if constexpr (NV == 2) {
    Ops::template load<7>(b1, 64);
    Ops::template dpbusd<2, 4, 7>();
    Ops::template dpbusd<3, 5, 7>();
  }
}

// TileFn for MR 32 and NV panels (1 or 2), tiles configured (tile_begin):
// acc (32 rows, row stride 16 * NV int32) = (or +=) the raw sums over kg groups.
template <class Ops, int NV>
DLRT_TILE_TARGET void tile_kernel(int64_t kg, const uint8_t* a, const int8_t* b, int64_t panel_stride, int32_t* acc,
                                  bool accumulate) {
  constexpr int64_t ld = 16 * NV * 4;   // acc row, bytes
  int32_t* lower = acc + 16 * 16 * NV;  // rows 16-31
  if (accumulate) {
    Ops::template load<0>(acc, ld);
    Ops::template load<1>(lower, ld);
    if constexpr (NV == 2) {
      Ops::template load<2>(acc + 16, ld);
      Ops::template load<3>(lower + 16, ld);
    }
  } else {
    Ops::template zero<0>();
    Ops::template zero<1>();
    if constexpr (NV == 2) {
      Ops::template zero<2>();
      Ops::template zero<3>();
    }
  }
  const int64_t steps = kg / kStepGroups, tail = kg % kStepGroups;
  for (int64_t s = 0; s < steps; ++s)
    step<Ops, NV>(a + s * kAStepBytes, b + s * kTileBytes, b + panel_stride + s * kTileBytes);
  if (tail > 0) {
    // B's last groups end the panel: copied into zeroed tiles, so that no
    // load reads past them (A is zero there, so any value would do).
    alignas(64) int8_t bt[NV][kTileBytes] = {};
    for (int v = 0; v < NV; ++v) std::memcpy(bt[v], b + v * panel_stride + steps * kTileBytes, tail * 64);
    step<Ops, NV>(a + steps * kAStepBytes, bt[0], bt[NV - 1]);
  }
  Ops::template store<0>(acc, ld);
  Ops::template store<1>(lower, ld);
  if constexpr (NV == 2) {
    Ops::template store<2>(acc + 16, ld);
    Ops::template store<3>(lower + 16, ld);
  }
}

void model_begin() { amx::ModelTileOps::configure(amx::full_tiles()); }
void model_end() { amx::ModelTileOps::release(); }

#ifdef DLRT_AMX_INT8_BUILT
// The real instructions: amx_tile_moves.h's loads, stores and zeroing, and
// TDPBUSD, its tile numbers spelled out as there.
struct RealTileOps : amx::RealTileMoves {
  template <int C, int A, int B>
  DLRT_TILE_TARGET static void dpbusd() {
    if constexpr (C == 0 && A == 4 && B == 6)
      _tile_dpbusd(0, 4, 6);
    else if constexpr (C == 1 && A == 5 && B == 6)
      _tile_dpbusd(1, 5, 6);
    else if constexpr (C == 2 && A == 4 && B == 7)
      _tile_dpbusd(2, 4, 7);
    else if constexpr (C == 3 && A == 5 && B == 7)
      _tile_dpbusd(3, 5, 7);
    else
      static_assert(C < 0, "a tile triple this kernel does not use");
  }
};

DLRT_AMX_INT8 void real_begin() {
  static const amx::TileConfig config = amx::full_tiles();
  asm volatile("" ::: "memory");
  _tile_loadconfig(&config);
}
DLRT_AMX_INT8 void real_end() { _tile_release(); }

// The real tiles against the model on random tiles (two full steps and a
// tail, both panel counts, fresh and accumulated): true when every sum agrees.
bool real_matches_model() {
  constexpr int64_t kg = 2 * kStepGroups + 5, panels = 2;
  std::mt19937 rng(76);
  alignas(64) uint8_t a[3 * kAStepBytes];
  alignas(64) int8_t b[panels * kg * 64];
  for (auto& v : a) v = static_cast<uint8_t>(rng());
  for (auto& v : b) v = static_cast<int8_t>(rng());
  std::memset(a + 2 * kAStepBytes, 0, kAStepBytes);  // past K: zero, as packed
  for (int64_t r = 0; r < 32; ++r)
    std::memset(a + 2 * kAStepBytes + (r / 16) * kTileBytes + (r % 16) * 64, 0x5A, 5 * 4);
  alignas(64) int32_t got[32 * 32], want[32 * 32];
  for (int nv = 1; nv <= 2; ++nv)
    for (int accumulate = 0; accumulate < 2; ++accumulate) {
      for (int64_t i = 0; i < 32 * 32; ++i) got[i] = want[i] = static_cast<int32_t>(rng());
      real_begin();
      (nv == 1 ? tile_kernel<RealTileOps, 1> : tile_kernel<RealTileOps, 2>)(kg, a, b, kg * 64, got, accumulate);
      real_end();
      model_begin();
      (nv == 1 ? tile_kernel<amx::ModelTileOps, 1> : tile_kernel<amx::ModelTileOps, 2>)(kg, a, b, kg * 64, want,
                                                                                        accumulate);
      model_end();
      if (std::memcmp(got, want, sizeof got) != 0) return false;
    }
  return true;
}
#endif

}  // namespace

const char* amx_unavailable(bool ask_os) {
#ifdef DLRT_AMX_INT8_BUILT
  const device::CpuFeatures& f = device::cpu_features();
  if (!f.amx_tile || !f.amx_int8) return "not present";
  if (cpu_isa() < CpuIsa::kAvx512) return "off (DLRT_CPU_ISA below avx512)";
  static std::atomic<bool> asked{false};
  if (!ask_os && !asked.load()) return "present, the OS not yet asked for the tile state (the first int8 GEMM asks)";
  asked.store(true);
  if (!device::request_amx_permission()) return "the OS refused the tile state (arch_prctl)";
  static const bool agrees = real_matches_model();
  if (!agrees) return "off (its self-check against the tile model failed)";
  return nullptr;
#else
  (void)ask_os;
  return "not built for this architecture";
#endif
}

AmxEngine amx_engine(bool model) {
  AmxEngine e;
  if (model) {
    e.fn[1] = tile_kernel<amx::ModelTileOps, 1>;
    e.fn[2] = tile_kernel<amx::ModelTileOps, 2>;
    e.begin = model_begin;
    e.end = model_end;
    return e;
  }
#ifdef DLRT_AMX_INT8_BUILT
  e.fn[1] = tile_kernel<RealTileOps, 1>;
  e.fn[2] = tile_kernel<RealTileOps, 2>;
  e.begin = real_begin;
  e.end = real_end;
#endif
  return e;
}

void amx_pack_a(const uint8_t* const* rows, int64_t K, uint8_t flip, uint8_t* dst) {
  const int64_t steps = ((K + 3) / 4 + kStepGroups - 1) / kStepGroups;
  for (int64_t s = 0; s < steps; ++s) {
    const int64_t k0 = s * kStepGroups * 4, n = std::clamp<int64_t>(K - k0, 0, 64);
    for (int64_t r = 0; r < 32; ++r) {
      uint8_t* d = dst + s * kAStepBytes + (r / 16) * kTileBytes + (r % 16) * 64;
      const uint8_t* src = rows[r] ? rows[r] + k0 : nullptr;
      int64_t j = 0;
      if (src)
        for (; j < n; ++j) d[j] = src[j] ^ flip;
      std::memset(d + j, 0, static_cast<size_t>(64 - j));
    }
  }
}

}  // namespace dlrt::cpu::int8_detail
