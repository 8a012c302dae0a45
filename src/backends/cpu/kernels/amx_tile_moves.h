// The real tile moves (TILELOADD, TILESTORED, TILEZERO) on tmm0-7, shared by
// the AMX kernels' RealTileOps (gemm_amx.cpp, gemm_int8_amx.cpp), each of
// which adds its product instruction. x86-64 with GCC or Clang only.
//
// The intrinsics are inline assembly that names the tile in its text, so
// each tile number is spelled out; their assembly does not tell the compiler
// it reads or writes memory, hence the barrier before each load and after
// each store.
#pragma once

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#include <cstdint>

namespace dlrt::cpu::amx {

#define DLRT_TILE_MOVES_TARGET __attribute__((target("amx-tile")))

struct RealTileMoves {
  template <int T>
  DLRT_TILE_MOVES_TARGET static void load(const void* p, int64_t stride) {
    asm volatile("" ::: "memory");
    if constexpr (T == 0)
      _tile_loadd(0, p, stride);
    else if constexpr (T == 1)
      _tile_loadd(1, p, stride);
    else if constexpr (T == 2)
      _tile_loadd(2, p, stride);
    else if constexpr (T == 3)
      _tile_loadd(3, p, stride);
    else if constexpr (T == 4)
      _tile_loadd(4, p, stride);
    else if constexpr (T == 5)
      _tile_loadd(5, p, stride);
    else if constexpr (T == 6)
      _tile_loadd(6, p, stride);
    else if constexpr (T == 7)
      _tile_loadd(7, p, stride);
  }
  template <int T>
  DLRT_TILE_MOVES_TARGET static void store(void* p, int64_t stride) {
    if constexpr (T == 0)
      _tile_stored(0, p, stride);
    else if constexpr (T == 1)
      _tile_stored(1, p, stride);
    else if constexpr (T == 2)
      _tile_stored(2, p, stride);
    else if constexpr (T == 3)
      _tile_stored(3, p, stride);
    asm volatile("" ::: "memory");
  }
  template <int T>
  DLRT_TILE_MOVES_TARGET static void zero() {
    if constexpr (T == 0)
      _tile_zero(0);
    else if constexpr (T == 1)
      _tile_zero(1);
    else if constexpr (T == 2)
      _tile_zero(2);
    else if constexpr (T == 3)
      _tile_zero(3);
  }
};

#undef DLRT_TILE_MOVES_TARGET

}  // namespace dlrt::cpu::amx
#endif
