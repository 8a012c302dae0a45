// Intel AMX tile instructions behind one small interface, so that a kernel
// written once over it runs either on the real tiles or on a scalar model of
// them. The model does what the instructions do (Intel SDM, palette 1) and
// faults where they would raise #UD, so a CPU without AMX still runs, and
// tests, a tile kernel's tiling, packing and edge logic.
//
// A kernel takes the operations as a template parameter Ops with:
//   Ops::configure(const TileConfig&)   LDTILECFG (all tiles zeroed)
//   Ops::release()                      TILERELEASE
//   Ops::template load<T>(p, stride)    TILELOADD tmmT, [p + r * stride]
//   Ops::template store<T>(p, stride)   TILESTORED [p + r * stride], tmmT
//   Ops::template zero<T>()             TILEZERO tmmT
//   Ops::template dpbusd<C, A, B>()     TDPBUSD tmmC, tmmA, tmmB
//   Ops::template dpbssd<C, A, B>()     TDPBSSD tmmC, tmmA, tmmB
// ModelTileOps (here) is the model; the real instructions are in the file
// that uses them (gemm_int8_amx.cpp), compiled only for x86-64.
#pragma once

#include <cstdint>

namespace dlrt::cpu::amx {

constexpr int kTiles = 8;  // palette 1
constexpr int kMaxRows = 16;
constexpr int kMaxColsBytes = 64;

// The 64-byte LDTILECFG operand.
struct alignas(64) TileConfig {
  uint8_t palette = 1;
  uint8_t start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t colsb[16] = {};  // bytes per row of tile t
  uint8_t rows[16] = {};    // rows of tile t
};
static_assert(sizeof(TileConfig) == 64);

// Palette 1 with all eight tiles 16 rows x 64 bytes.
TileConfig full_tiles();

// One thread's tile registers, modelled. Semantics (Intel SDM):
// - configure: palette 1 only; tiles 0-7 each rows <= 16 and colsb <= 64,
//   both 0 (unused) or both not; tiles 8-15 and the reserved bytes 0;
//   start_row 0. Every tile is zeroed. Palette 0 releases.
// - load: rows [0, rows) of the tile take colsb bytes from base + r * stride;
//   the bytes past colsb and the rows past `rows` are zeroed.
// - store: rows [0, rows), colsb bytes each, to base + r * stride.
// - dpbusd/dpbssd: C (M x N int32), A (M x K groups of 4 bytes), B (K rows
//   of N groups of 4 bytes, the "VNNI" layout): requires C.rows == A.rows,
//   C.colsb == B.colsb and A.colsb == 4 * B.rows (else #UD);
//   C[m][n] += sum over k < A.colsb / 4 of sum over i < 4 of
//   A[m][4k + i] * B[k][4n + i], A's bytes unsigned for dpbusd and signed for
//   dpbssd, B's signed; each 4-product sum and the addition wrap mod 2^32.
//   C's bytes past colsb and rows past `rows` are zeroed.
// Any use of a tile before configure, of a tile configured unused, or with
// shapes the instruction rejects aborts with a message (where the CPU would
// raise #UD).
class TileModel {
 public:
  void configure(const TileConfig& c);
  void release();
  void load(int t, const void* base, int64_t stride);
  void store(int t, void* base, int64_t stride) const;
  void zero(int t);
  void dpbusd(int c, int a, int b);
  void dpbssd(int c, int a, int b);
  bool configured() const { return configured_; }

 private:
  void check(int t) const;
  void dot(int c, int a, int b, bool a_signed);
  [[noreturn]] static void fault(const char* what, int t);

  alignas(64) uint8_t tile_[kTiles][kMaxRows][kMaxColsBytes] = {};
  TileConfig cfg_;
  bool configured_ = false;
};

// The calling thread's modelled tiles (each thread has its own, as on the CPU).
TileModel& thread_tiles();

struct ModelTileOps {
  static void configure(const TileConfig& c) { thread_tiles().configure(c); }
  static void release() { thread_tiles().release(); }
  template <int T>
  static void load(const void* p, int64_t stride) {
    thread_tiles().load(T, p, stride);
  }
  template <int T>
  static void store(void* p, int64_t stride) {
    thread_tiles().store(T, p, stride);
  }
  template <int T>
  static void zero() {
    thread_tiles().zero(T);
  }
  template <int C, int A, int B>
  static void dpbusd() {
    thread_tiles().dpbusd(C, A, B);
  }
  template <int C, int A, int B>
  static void dpbssd() {
    thread_tiles().dpbssd(C, A, B);
  }
};

}  // namespace dlrt::cpu::amx
