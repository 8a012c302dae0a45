// Kernel body (simd/simd.h), compiled once per vector width by
// gemm_micro.cpp: the float GEMM microkernels (contract in gemm_kernels.h).
// Each k step loads one NR-wide row of the packed B panel (NV vectors) and
// broadcasts one value of each A row into MR * NV FMAs; the MR x NR tile of
// C stays in registers for the whole kc loop. Edge tiles store through
// lane-limited loads and stores (load_first / store_first: masks at 512
// bits, masked moves at 256, lanes at 128), skip rows past mr and the FMAs
// of the vectors that hold only padding columns, so they need no scratch tile.
//
// The register tile follows the register file: MR * NV accumulators, NV B
// vectors and one broadcast within it (8 x 48 at 512 bits in 32 registers,
// 6 x 16 at 256 bits in 16; at 128 bits 6 x 16 in NEON's 32, the layout of
// the 256-bit tile, so operands packed under one run under the other).

namespace dlrt::cpu::simd::DLRT_SIMD_NS {

namespace sgemm {
namespace {  // internal linkage: per translation unit and width

#define DLRT_SGEMM_INLINE __attribute__((always_inline)) inline

constexpr int kMR = kWidth == SimdWidth::k512 ? kSgemmAvx512MR : kSgemmAvx2MR;
constexpr int kNR = kWidth == SimdWidth::k512 ? kSgemmAvx512NR : kSgemmAvx2NR;
constexpr int kNV = kNR / kLanes;
// The 128-bit tile is sized for aarch64 (32 NEON registers); x86 runs that
// width only as aarch64's stand-in (DLRT_CPU_ISA=neon) and spills there.
constexpr int kTileRegisters = kWidth == SimdWidth::k128 ? 32 : kRegisters;
static_assert(kNR % kLanes == 0 && kNV <= 4 && kMR * kNV + kNV + 1 <= kTileRegisters,
              "the register tile must fit the register file");
// Vectors of one packed A column (MR floats): the narrow edge's rows.
constexpr int kAV = (kMR + kLanes - 1) / kLanes;
// The 512-bit tile prefetches C's rows and the next A panel as it runs
// (measured there, docs/performance-decisions.md); the narrower tiles keep
// the plain loop of the former AVX2 kernel.
constexpr bool kPrefetchTile = kWidth == SimdWidth::k512;

DLRT_SGEMM_INLINE void prefetch_l1(const float* p) { __builtin_prefetch(p, 0, 3); }
DLRT_SGEMM_INLINE void prefetch_l2(const float* p) { __builtin_prefetch(p, 0, 2); }

// One k step of an R x (kLanes * NV) tile: NV loads of B (the packed row at
// bp), R broadcasts of A (column p of the rows r[i]), R * NV FMAs.
template <int R, int NV>
DLRT_SGEMM_INLINE void rows_step(Vf (&acc)[R][NV], const float* const* r, int64_t p, const float* bp) {
  Vf bv[NV];
#pragma GCC unroll 4
  for (int v = 0; v < NV; ++v) bv[v] = loadu(bp + kLanes * v);
#pragma GCC unroll 16
  for (int i = 0; i < R; ++i) {
    const Vf av = set1(r[i][p]);
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) acc[i][v] = fmadd(av, bv[v], acc[i][v]);
  }
}

// Rows [0, mr) x columns [0, nr) of c = alpha * acc + beta * c (+ extra's
// column bias and residual), the tile's columns kLanes * v + lane.
template <int R, int NV>
DLRT_SGEMM_INLINE void store_tile(const Vf (&acc)[R][NV], float* c, int64_t ldc, float alpha, float beta, int mr,
                                  int nr, const TileAdd* extra) {
  const Vf va = set1(alpha);
  const Vf vb = set1(beta);
  const float* cb = extra ? extra->col_bias : nullptr;
  const float* res = extra ? extra->residual : nullptr;
  Vf bias[NV];
#pragma GCC unroll 4
  for (int v = 0; v < NV; ++v) bias[v] = cb ? load_first(cb + kLanes * v, nr - kLanes * v) : zero();
#pragma GCC unroll 16
  for (int i = 0; i < R; ++i) {
    if (i >= mr) break;
    float* ci = c + i * ldc;
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) {
      const int n = nr - kLanes * v;
      Vf x = mul(va, acc[i][v]);
      if (beta == 1.0f)
        x = add(x, load_first(ci + kLanes * v, n));
      else if (beta != 0.0f)
        x = fmadd(vb, load_first(ci + kLanes * v, n), x);
      if (cb) x = add(x, bias[v]);
      if (res) x = add(x, load_first(res + i * extra->ldr + kLanes * v, n));
      store_first(ci + kLanes * v, x, n);
    }
  }
}

// R x (kLanes * NV) tile with A read in place: row i from ar[i] (k step 1),
// B a packed panel (rows kNR floats apart).
template <int R, int NV>
DLRT_SGEMM_INLINE void tile_rows(int64_t kc, const float* const* ar, const float* __restrict b, float* c, int64_t ldc,
                                 float alpha, float beta, int mr, int nr, const float* pf, int64_t pf_rows,
                                 const TileAdd* extra) {
  Vf acc[R][NV];
#pragma GCC unroll 16
  for (int i = 0; i < R; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) acc[i][v] = zero();
  if constexpr (kPrefetchTile) {
#pragma GCC unroll 16
    for (int i = 0; i < R; ++i) {
      if (i >= mr) break;
      prefetch_l1(c + i * ldc);
      prefetch_l1(c + i * ldc + kLanes * NV - 1);
    }
  }
  const float* r[R];
#pragma GCC unroll 16
  for (int i = 0; i < R; ++i) r[i] = ar[i];
  // The prefetch of the next panel: pf_rows packed B rows (kNR floats each),
  // one 64-byte line every kPfEvery k steps rather than a row per step, so
  // the misses to DRAM it starts are spread over the tile and leave line
  // fill buffers for the tile's own loads.
  constexpr int kPfEvery = 4;
  const int64_t lines = pf_rows * (kNR / 16), groups = kc / kPfEvery;
  int64_t p = 0;
  if (lines > 0 && groups > 0) {
    // Lines per group of kPfEvery steps: all of them within the tile's steps.
    // One or two lines per group (the common cases: 1 thread, and 2 threads
    // splitting the rows) get loops of their own with a fixed prefetch count.
    // With a counted inner prefetch loop GCC kept the prefetch pointer on the
    // stack, spilled a register and added register moves to the FMAs of each
    // step. A last group of two may touch one line past the share; a
    // prefetch never faults.
    const int64_t per = (lines + groups - 1) / groups, pf_steps = kPfEvery * ((lines + per - 1) / per);
    if (per == 1) {
      for (; p < pf_steps; p += kPfEvery, pf += 16) {
        prefetch_l2(pf);
#pragma GCC unroll 4
        for (int u = 0; u < kPfEvery; ++u, b += kNR) rows_step<R, NV>(acc, r, p + u, b);
      }
    } else if (per == 2) {
      for (; p < pf_steps; p += kPfEvery, pf += 32) {
        prefetch_l2(pf);
        prefetch_l2(pf + 16);
#pragma GCC unroll 4
        for (int u = 0; u < kPfEvery; ++u, b += kNR) rows_step<R, NV>(acc, r, p + u, b);
      }
    } else {
      for (int64_t left = lines; p < pf_steps; p += kPfEvery, left -= per) {
        for (int64_t l = 0; l < per && l < left; ++l, pf += 16) prefetch_l2(pf);
#pragma GCC unroll 4
        for (int u = 0; u < kPfEvery; ++u, b += kNR) rows_step<R, NV>(acc, r, p + u, b);
      }
    }
  }
  // Unrolled: the loop's scalar uops (counter, pointers, branch) otherwise
  // take an FMA port now and then.
#pragma GCC unroll 4
  for (; p < kc; ++p) {
    rows_step<R, NV>(acc, r, p, b);
    b += kNR;
  }
  store_tile<R, NV>(acc, c, ldc, alpha, beta, mr, nr, extra);
}

// R x (kLanes * NV) tile of a packed A panel (R <= kMR rows, columns kMR
// floats apart; rows past mr are its zero padding, computed, never stored).
template <int R, int NV>
DLRT_SGEMM_INLINE void tile_packed(int64_t kc, const float* __restrict a, const float* __restrict b, float* c,
                                   int64_t ldc, float alpha, float beta, int mr, int nr) {
  Vf acc[R][NV];
#pragma GCC unroll 16
  for (int i = 0; i < R; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) acc[i][v] = zero();
  // The C rows are read (beta != 0) or written after the loop: start their
  // lines moving now. The next A panel (contiguous after this one in the
  // packed A) is what the next tile reads: pull it in while this tile
  // computes (pre-packed weights that serve few columns, e.g. 512 x 49,
  // otherwise stream from DRAM at the kernel's pace).
  const float* a_next = a + kMR * kc;
  if constexpr (kPrefetchTile) {
#pragma GCC unroll 16
    for (int i = 0; i < R; ++i) {
      if (i >= mr) break;
      prefetch_l1(c + i * ldc);
      prefetch_l1(c + i * ldc + kLanes * NV - 1);
    }
  }
#pragma GCC unroll 4
  for (int64_t p = 0; p < kc; ++p) {
    if constexpr (kPrefetchTile) prefetch_l2(a_next + p * kMR);
    Vf bv[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) bv[v] = loadu(b + kLanes * v);
#pragma GCC unroll 16
    for (int i = 0; i < R; ++i) {
      const Vf av = set1(a[i]);
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) acc[i][v] = fmadd(av, bv[v], acc[i][v]);
    }
    a += kMR;
    b += kNR;
  }
  store_tile<R, NV>(acc, c, ldc, alpha, beta, mr, nr, nullptr);
}

// One packed A column (kMR floats) for the narrow edge, in kN vectors of V:
// half vectors where kMR is half a vector (8 rows at 512 bits: the former
// AVX-512 kernel's ymm; a zmm with masked loads ran those edges at 0.72-0.98x
// in a same-process benchmark), else kAV full vectors, the last partial.
struct FullColumn {
  using V = Vf;
  static constexpr int kN = kAV;
  static DLRT_SGEMM_INLINE V zero_v() { return zero(); }
  static DLRT_SGEMM_INLINE V set1_v(float x) { return set1(x); }
  static DLRT_SGEMM_INLINE V load_v(const float* a, int g) { return load_first(a + g * kLanes, kMR - g * kLanes); }
  static DLRT_SGEMM_INLINE V add_v(V a, V b) { return add(a, b); }
  static DLRT_SGEMM_INLINE V mul_v(V a, V b) { return mul(a, b); }
  static DLRT_SGEMM_INLINE V fmadd_v(V a, V b, V c) { return fmadd(a, b, c); }
  static DLRT_SGEMM_INLINE void store_v(float* p, V v) { storeu(p, v); }
};
struct HalfColumn {
  using V = Vh;
  static constexpr int kN = (kMR + kHalfLanes - 1) / kHalfLanes;
  static DLRT_SGEMM_INLINE V zero_v() { return zero_h(); }
  static DLRT_SGEMM_INLINE V set1_v(float x) { return set1_h(x); }
  static DLRT_SGEMM_INLINE V load_v(const float* a, int g) { return loadu_h(a + g * kHalfLanes); }
  static DLRT_SGEMM_INLINE V add_v(V a, V b) { return add_h(a, b); }
  static DLRT_SGEMM_INLINE V mul_v(V a, V b) { return mul_h(a, b); }
  static DLRT_SGEMM_INLINE V fmadd_v(V a, V b, V c) { return fmadd_h(a, b, c); }
  static DLRT_SGEMM_INLINE void store_v(float* p, V v) { storeu_h(p, v); }
};
using Column = std::conditional_t<kMR == kHalfLanes, HalfColumn, FullColumn>;

// The NC < kMR real columns of a last panel (N = 49 leaves 1, N = 196
// leaves 4 at 48 columns a panel): vectorised over the rows of the packed A
// panel (Column::kN vectors) instead of over columns, so each k step costs NC * kN
// FMAs instead of MR * NV. Column j's accumulators are U partial sums over k
// (enough independent chains to hide FMA latency).
template <int NC>
DLRT_SGEMM_INLINE void narrow_edge(int64_t kc, const float* __restrict a, const float* __restrict b, float* c,
                                   int64_t ldc, float alpha, float beta, int mr) {
  using C = Column;
  using V = C::V;
  constexpr int U = NC == 1 ? 4 : NC <= 3 ? 3 : 2;
  V acc[NC][U][C::kN];
#pragma GCC unroll 8
  for (int j = 0; j < NC; ++j)
#pragma GCC unroll 4
    for (int u = 0; u < U; ++u)
#pragma GCC unroll 2
      for (int g = 0; g < C::kN; ++g) acc[j][u][g] = C::zero_v();
  // K step p into partial sum u.
  auto step = [&](int64_t p, int u) __attribute__((always_inline)) {
    V av[C::kN];
#pragma GCC unroll 2
    for (int g = 0; g < C::kN; ++g) av[g] = C::load_v(a + p * kMR, g);
#pragma GCC unroll 8
    for (int j = 0; j < NC; ++j) {
      const V bj = C::set1_v(b[p * kNR + j]);
#pragma GCC unroll 2
      for (int g = 0; g < C::kN; ++g) acc[j][u][g] = C::fmadd_v(av[g], bj, acc[j][u][g]);
    }
  };
  int64_t p = 0;
  for (; p + U <= kc; p += U) {
#pragma GCC unroll 4
    for (int u = 0; u < U; ++u) step(p + u, u);
  }
  for (; p < kc; ++p) step(p, 0);
  constexpr int kColFloats = C::kN * static_cast<int>(sizeof(V) / sizeof(float));
  alignas(64) float col[NC][kColFloats];
#pragma GCC unroll 8
  for (int j = 0; j < NC; ++j)
#pragma GCC unroll 2
    for (int g = 0; g < C::kN; ++g) {
      V s = acc[j][0][g];
#pragma GCC unroll 4
      for (int u = 1; u < U; ++u) s = C::add_v(s, acc[j][u][g]);
      C::store_v(col[j] + g * (kColFloats / C::kN), C::mul_v(C::set1_v(alpha), s));
    }
  for (int i = 0; i < mr; ++i) {
    float* ci = c + i * ldc;
    for (int j = 0; j < NC; ++j) ci[j] = beta == 0.0f ? col[j][i] : col[j][i] + beta * ci[j];
  }
}

// R rows of a packed A panel on the nv vectors that hold output.
template <int R>
inline void packed_rows(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, float alpha, float beta,
                        int mr, int nr, int nv) {
  if constexpr (kNV >= 2) {
    if (nv == 1) return tile_packed<R, 1>(kc, a, b, c, ldc, alpha, beta, mr, nr);
  }
  if constexpr (kNV >= 3) {
    if (nv == 2) return tile_packed<R, 2>(kc, a, b, c, ldc, alpha, beta, mr, nr);
  }
  if constexpr (kNV >= 4) {
    if (nv == 3) return tile_packed<R, 3>(kc, a, b, c, ldc, alpha, beta, mr, nr);
  }
  tile_packed<R, kNV>(kc, a, b, c, ldc, alpha, beta, mr, nr);
}

// The narrow edge for NC columns where it takes fewer FMAs than a column vector per row.
template <int NC>
constexpr bool narrow_pays() {
  return NC * Column::kN <= kMR - 2;
}

// The narrow edge on nr columns (NC or more) where it pays; false where not.
template <int NC = 1>
inline bool narrow_edge_for(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, float alpha, float beta,
                            int mr, int nr) {
  if constexpr (narrow_pays<NC>()) {
    if (nr == NC) {
      narrow_edge<NC>(kc, a, b, c, ldc, alpha, beta, mr);
      return true;
    }
    return narrow_edge_for<NC + 1>(kc, a, b, c, ldc, alpha, beta, mr, nr);
  }
  return false;
}

// R rows (A in place, rows at or past mr reading row mr - 1: computed,
// never stored, nothing past A's last row touched) on the nv vectors that
// hold output.
template <int R>
inline void rows_tile(int64_t kc, const float* a, int64_t lda, const float* b, float* c, int64_t ldc, float alpha,
                      float beta, int mr, int nr, int nv, const float* pf, int64_t pr, const TileAdd* extra) {
  const float* ar[R];
#pragma GCC unroll 16
  for (int i = 0; i < R; ++i) ar[i] = a + static_cast<int64_t>(i < mr ? i : mr - 1) * lda;
  if constexpr (kNV >= 2) {
    if (nv == 1) return tile_rows<R, 1>(kc, ar, b, c, ldc, alpha, beta, mr, nr, pf, pr, extra);
  }
  if constexpr (kNV >= 3) {
    if (nv == 2) return tile_rows<R, 2>(kc, ar, b, c, ldc, alpha, beta, mr, nr, pf, pr, extra);
  }
  if constexpr (kNV >= 4) {
    if (nv == 3) return tile_rows<R, 3>(kc, ar, b, c, ldc, alpha, beta, mr, nr, pf, pr, extra);
  }
  tile_rows<R, kNV>(kc, ar, b, c, ldc, alpha, beta, mr, nr, pf, pr, extra);
}

// rows_tile on exactly mr rows (only the FMAs of the real rows).
template <int R = 1>
inline void rows_exact(int64_t kc, const float* a, int64_t lda, const float* b, float* c, int64_t ldc, float alpha,
                       float beta, int mr, int nr, int nv, const float* pf, int64_t pr, const TileAdd* extra) {
  if constexpr (R < kMR) {
    if (mr > R) return rows_exact<R + 1>(kc, a, lda, b, c, ldc, alpha, beta, mr, nr, nv, pf, pr, extra);
  }
  rows_tile<R>(kc, a, lda, b, c, ldc, alpha, beta, mr, nr, nv, pf, pr, extra);
}

// The sum of v's lanes; at 512 bits in the order of the former AVX-512
// kernel (halves added through memory, then pairs), so its results stay bit
// for bit.
DLRT_SGEMM_INLINE float row_sum(Vf v) {
  if constexpr (kWidth == SimdWidth::k512) {
    alignas(64) float t[16];
    storeu(t, v);
    float s8[8];
    for (int i = 0; i < 8; ++i) s8[i] = t[i] + t[i + 8];
    return ((s8[0] + s8[4]) + (s8[1] + s8[5])) + ((s8[2] + s8[6]) + (s8[3] + s8[7]));
  } else {
    return hsum(v);
  }
}

// y[r] for R rows: 2R independent accumulator chains over 2 * kLanes
// columns per step, x loaded once for all R rows (one chain per row is
// FMA-latency bound).
template <int R>
inline void dot_rows(int64_t cols, float alpha, const float* A, int64_t lda, const float* x, float beta, float* y,
                     int64_t incy) {
  Vf acc0[R], acc1[R];
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) acc0[r] = acc1[r] = zero();
  int64_t c = 0;
  for (; c + 2 * kLanes <= cols; c += 2 * kLanes) {
    const Vf x0 = loadu(x + c), x1 = loadu(x + c + kLanes);
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      acc0[r] = fmadd(loadu(A + r * lda + c), x0, acc0[r]);
      acc1[r] = fmadd(loadu(A + r * lda + c + kLanes), x1, acc1[r]);
    }
  }
  for (; c < cols; c += kLanes) {
    const int64_t left = cols - c;
    const Vf xv = load_first(x + c, left);
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) acc0[r] = fmadd(load_first(A + r * lda + c, left), xv, acc0[r]);
  }
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
    const float s = row_sum(add(acc0[r], acc1[r]));
    float& out = y[r * incy];
    out = beta == 0.0f ? alpha * s : alpha * s + beta * out;
  }
}

// MR rows of a row-major A (row stride lda), columns [0, kc), into one packed
// panel (column p at dst + MR * p): kLanes x kLanes transposes in registers,
// kLanes rows at a time (missing rows zero, their lanes not stored).
template <int MR>
void pack_a_panel(const float* A, int64_t lda, int64_t kc, float* dst) {
  constexpr int G = (MR + kLanes - 1) / kLanes;
  int64_t p = 0;
  if constexpr (MR == kHalfLanes) {
    // Half vectors (8 x 8 ymm transposes at 512 bits, the former AVX-512
    // packer's: the 16 x 16 one on half-zero rows ran 0.79-0.87x as fast).
    for (; p + kHalfLanes <= kc; p += kHalfLanes) {
      Vh r[kHalfLanes];
#pragma GCC unroll 16
      for (int i = 0; i < kHalfLanes; ++i) r[i] = loadu_h(A + i * lda + p);
      transpose_half(r);  // r[j] lane i: row i, column p + j
#pragma GCC unroll 16
      for (int j = 0; j < kHalfLanes; ++j) storeu_h(dst + (p + j) * MR, r[j]);
    }
  }
  for (; p + kLanes <= kc; p += kLanes) {
#pragma GCC unroll 2
    for (int g = 0; g < G; ++g) {
      const int rows = MR - g * kLanes < kLanes ? MR - g * kLanes : kLanes;
      Vf r[kLanes];
#pragma GCC unroll 16
      for (int i = 0; i < kLanes; ++i) r[i] = i < rows ? loadu(A + (g * kLanes + i) * lda + p) : zero();
      transpose_square(r);  // r[j] lane i: row g * kLanes + i, column p + j
#pragma GCC unroll 16
      for (int j = 0; j < kLanes; ++j) store_first(dst + (p + j) * MR + g * kLanes, r[j], rows);
    }
  }
  for (; p < kc; ++p)
    for (int i = 0; i < MR; ++i) dst[p * MR + i] = A[i * lda + p];
}

#undef DLRT_SGEMM_INLINE

}  // namespace
}  // namespace sgemm

// The tile of this width: full or partial (mr <= MR, nr <= NR). kNarrow:
// the narrow edge may take a last panel of few columns (its sums over k run
// in several chains, so an element's bits depend on N).
template <bool kNarrow>
void sgemm_kernel(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, float alpha, float beta, int mr,
                  int nr) {
  using namespace sgemm;
  if (mr == kMR && nr == kNR) return tile_packed<kMR, kNV>(kc, a, b, c, ldc, alpha, beta, kMR, kNR);
  if constexpr (kNarrow) {
    if (narrow_edge_for(kc, a, b, c, ldc, alpha, beta, mr, nr)) return;
  }
  const int nv = (nr + kLanes - 1) / kLanes;  // vectors holding real output
  if constexpr (kMR > 4) {
    if (mr == 1) return packed_rows<1>(kc, a, b, c, ldc, alpha, beta, mr, nr, nv);
    if (mr == 2) return packed_rows<2>(kc, a, b, c, ldc, alpha, beta, mr, nr, nv);
    if (mr <= 4) return packed_rows<4>(kc, a, b, c, ldc, alpha, beta, mr, nr, nv);
  }
  packed_rows<kMR>(kc, a, b, c, ldc, alpha, beta, mr, nr, nv);
}

void sgemm_kernel_full(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, float alpha, float beta) {
  sgemm::tile_packed<sgemm::kMR, sgemm::kNV>(kc, a, b, c, ldc, alpha, beta, sgemm::kMR, sgemm::kNR);
}

// The tile of this width with A read in place (gemm_kernels.h: SgemmRowsKernel).
void sgemm_kernel_rows(int64_t kc, const float* a, int64_t lda, const float* b, float* c, int64_t ldc, float alpha,
                       float beta, int mr, int nr, const float* prefetch, int64_t pf_rows, const TileAdd* extra) {
  using namespace sgemm;
  const int nv = (nr + kLanes - 1) / kLanes;
  const int64_t pr = prefetch ? pf_rows : 0;
  if (mr == kMR && nv == kNV) {
    const float* ar[kMR];
#pragma GCC unroll 16
    for (int i = 0; i < kMR; ++i) ar[i] = a + i * lda;
    return tile_rows<kMR, kNV>(kc, ar, b, c, ldc, alpha, beta, mr, nr, prefetch, pr, extra);
  }
  rows_exact(kc, a, lda, b, c, ldc, alpha, beta, mr, nr, nv, prefetch, pr, extra);
}

// y[r * incy] = alpha * dot(A[r, :cols], x[:cols]) + beta * y[r * incy], x contiguous.
void sgemv_rows(int64_t rows, int64_t cols, float alpha, const float* A, int64_t lda, const float* x, float beta,
                float* y, int64_t incy) {
  int64_t r = 0;
  for (; r + 4 <= rows; r += 4) sgemm::dot_rows<4>(cols, alpha, A + r * lda, lda, x, beta, y + r * incy, incy);
  for (; r < rows; ++r) sgemm::dot_rows<1>(cols, alpha, A + r * lda, lda, x, beta, y + r * incy, incy);
}

// This width's kernels for its tile: the full and edge kernels and the
// epilogue for the tiles they store. uniform_edges: every element summed in
// one chain over k whatever N (no narrow edge; gemm.h SgemmOperand).
gemm_detail::Kernels<float> sgemm_kernels(bool uniform_edges) {
  gemm_detail::Kernels<float> k;
  k.full = sgemm_kernel_full;
  k.edge = uniform_edges ? sgemm_kernel<false> : sgemm_kernel<true>;
  if constexpr (kWidth == SimdWidth::k512) k.epilogue = apply_epilogue_zmm_tile;
  return k;
}

SgemmRowsKernel sgemm_rows_kernel() { return sgemm_kernel_rows; }

// The panel packer for MR-row panels (6 or 8; null for another MR).
SgemmPackPanel sgemm_pack_panel(int mr) {
  if (mr == 8) return sgemm::pack_a_panel<8>;
  if (mr == 6) return sgemm::pack_a_panel<6>;
  return nullptr;
}

}  // namespace dlrt::cpu::simd::DLRT_SIMD_NS
