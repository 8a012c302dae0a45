// Kernel body (simd/simd.h), compiled once per vector width by
// rnn_step_gemm.cpp: C[M, N] += A[M, K] B[K, N] for a recurrence's few rows
// (rnn_step_gemm.h). At 512 bits it is the former AVX-512-only kernel's
// instruction sequence; the tiles shrink with the register file.

namespace dlrt::cpu::simd::DLRT_SIMD_NS {

namespace rnn_step_gemm_body {
namespace {

// Vectors of C kept per row when R rows go together: R * NV accumulators
// and a B vector or two (loaded once per k, used by the R rows) fit the
// register file: 24-24-24-16 of the 32 zmm at 512 bits, half that where
// there are 16 registers.
template <int R>
constexpr int tile_vectors() {
  constexpr int kAt32[5] = {0, 16, 12, 8, 6};
  return kAt32[R] * kRegisters / 32;
}

// R rows of C[:, 0, kLanes NV) kept in registers over the whole K (a loop
// that loads and stores C for every k is store-bound: 12K cycles per LSTM
// step of 512 x 128 on Zen 5); B's row k is loaded once for the R rows, as
// kLanes NV contiguous floats (rows of R^T are read front to back: runs that
// the prefetchers stream from L2). Full blocks load without masks: 16 masks
// do not fit AVX-512's 8 mask registers, and their spills and reloads made
// the step about 1.5x slower on a Sapphire Rapids VM (1 row x 512 x 128: 3.7
// against 5.4 us). kMasked: the last columns, `cols` of them (< kLanes NV).
template <int R, int NV, bool kMasked>
void rows_block(int64_t cols, int64_t K, const float* A, int64_t lda, const float* B, int64_t ldb, float* C,
                int64_t ldc) {
  Mask mk[NV];
#pragma GCC unroll 16
  for (int v = 0; v < NV; ++v) mk[v] = first_lanes(kMasked ? cols - int64_t{kLanes} * v : kLanes);
  Vf acc[R][NV];
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 16
    for (int v = 0; v < NV; ++v)
      acc[r][v] = kMasked ? load_where(mk[v], C + r * ldc + kLanes * v) : loadu(C + r * ldc + kLanes * v);
  for (int64_t k = 0; k < K; ++k) {
    const float* b = B + k * ldb;
    Vf bv[NV];
#pragma GCC unroll 16
    for (int v = 0; v < NV; ++v) bv[v] = kMasked ? load_where(mk[v], b + kLanes * v) : loadu(b + kLanes * v);
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      const Vf a = set1(A[r * lda + k]);
#pragma GCC unroll 16
      for (int v = 0; v < NV; ++v) acc[r][v] = fmadd(a, bv[v], acc[r][v]);
    }
  }
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 16
    for (int v = 0; v < NV; ++v) {
      if constexpr (kMasked) store_where(C + r * ldc + kLanes * v, mk[v], acc[r][v]);
      else storeu(C + r * ldc + kLanes * v, acc[r][v]);
    }
}

// Columns [0, N) for R rows: blocks of NV vectors, then the rest in unmasked
// blocks of 8, 4, 2 and 1 vectors, then one masked vector.
template <int R>
void rows_gemm_acc(int64_t N, int64_t K, const float* A, int64_t lda, const float* B, int64_t ldb, float* C,
                   int64_t ldc) {
  constexpr int NV = tile_vectors<R>();
  constexpr int64_t kL = kLanes;
  int64_t n0 = 0;
  for (; n0 + kL * NV <= N; n0 += kL * NV) rows_block<R, NV, false>(0, K, A, lda, B + n0, ldb, C + n0, ldc);
  auto rest = [&](auto nv) {
    constexpr int kNv = decltype(nv)::value;
    if (kNv < NV && n0 + kL * kNv <= N) {
      rows_block<R, kNv, false>(0, K, A, lda, B + n0, ldb, C + n0, ldc);
      n0 += kL * kNv;
    }
  };
  rest(std::integral_constant<int, 8>{});
  rest(std::integral_constant<int, 4>{});
  rest(std::integral_constant<int, 2>{});
  rest(std::integral_constant<int, 1>{});
  if (n0 < N) rows_block<R, 1, true>(N - n0, K, A, lda, B + n0, ldb, C + n0, ldc);
}

}  // namespace
}  // namespace rnn_step_gemm_body

// Up to 4 rows at a time.
void few_rows_gemm_acc(int64_t M, int64_t N, int64_t K, const float* A, int64_t lda, const float* B, int64_t ldb,
                       float* C, int64_t ldc) {
  using namespace rnn_step_gemm_body;
  for (int64_t i = 0; i < M;) {
    switch (std::min<int64_t>(4, M - i)) {
      case 4: rows_gemm_acc<4>(N, K, A + i * lda, lda, B, ldb, C + i * ldc, ldc); i += 4; break;
      case 3: rows_gemm_acc<3>(N, K, A + i * lda, lda, B, ldb, C + i * ldc, ldc); i += 3; break;
      case 2: rows_gemm_acc<2>(N, K, A + i * lda, lda, B, ldb, C + i * ldc, ldc); i += 2; break;
      default: rows_gemm_acc<1>(N, K, A + i * lda, lda, B, ldb, C + i * ldc, ldc); i += 1; break;
    }
  }
}

}  // namespace dlrt::cpu::simd::DLRT_SIMD_NS
