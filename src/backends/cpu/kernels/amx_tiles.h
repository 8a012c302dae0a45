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
//   Ops::template dpbf16ps<C, A, B>()   TDPBF16PS tmmC, tmmA, tmmB
// ModelTileOps (here) is the model; the real instructions are in the files
// that use them (gemm_int8_amx.cpp, gemm_amx_tiles.cpp), compiled only for
// x86-64.
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
// - dpbf16ps: the same shapes, with pairs of bf16 in place of groups of 4
//   bytes and fp32 sums, in the order of the SDM's pseudo-code: per row m,
//   2N fp32 partial sums start at 0; for each pair k in turn,
//   t[2n + e] = fma(A[m][2k + e], B[k][2n + e], t[2n + e]) for e = 0, 1;
//   then C[m][n] = C[m][n] + (t[2n] + t[2n + 1]). Every step rounds to
//   nearest even, treats denormal inputs (the bf16 values and C) as zero
//   and flushes a denormal result to zero; MXCSR plays no part. The SDM does
//   not say whether the hardware sums in this order (the intrinsics guide
//   writes another: each product added to C in turn), so the real
//   instruction is compared with this model only within a tolerance
//   (tdpbf16ps_tolerance), never bit for bit.
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
  void dpbf16ps(int c, int a, int b);
  bool configured() const { return configured_; }

 private:
  void check(int t) const;
  void dot(int c, int a, int b, bool a_signed);
  void check_dot_shapes(int c, int a, int b) const;
  [[noreturn]] static void fault(const char* what, int t);

  alignas(64) uint8_t tile_[kTiles][kMaxRows][kMaxColsBytes] = {};
  TileConfig cfg_;
  bool configured_ = false;
};

// How far a TDPBF16PS result may lie from the model's for the same tiles:
// both sum the same exact bf16 products (each fits an fp32 significand) and
// C with some order of at most n = 2 * pairs + 1 fp32 additions, each
// rounding by at most 2^-24 of a partial sum, and no partial sum exceeds
// `magnitude` = |C| + sum |a b|; so each lies within n * 2^-24 * magnitude of
// the exact sum, and the two within twice that (about 2^-18 of the magnitude
// for a full 16-pair tile). Flushed denormals add at most 2^-126 per step.
double tdpbf16ps_tolerance(int pairs, double magnitude);

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
  template <int C, int A, int B>
  static void dpbf16ps() {
    thread_tiles().dpbf16ps(C, A, B);
  }
};

}  // namespace dlrt::cpu::amx
