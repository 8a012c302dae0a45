// Kernel body (src/backends/cpu/kernels/simd/simd.h), compiled once per
// vector width by fma_peak.cpp: the GEMM tile's k loop with its operands in L1.

namespace dlrt::cpu::simd::DLRT_SIMD_NS {

// R rows x NV vectors of accumulators over sweeps of KC steps (`iters`
// sweeps): B a packed KC x kLanes*NV panel, A R rows LDA floats apart.
// Returns a value that depends on every accumulator.
template <int R, int NV, int KC, int LDA>
float fma_tile_l1(const float* a, const float* b, int64_t iters) {
  Vf acc[R][NV];
  for (auto& row : acc)
    for (auto& x : row) x = zero();
  for (int64_t it = 0; it < iters; ++it) {
    const float* bp = b;
#pragma GCC unroll 4
    for (int p = 0; p < KC; ++p, bp += kLanes * NV) {
      Vf bv[NV];
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) bv[v] = loadu(bp + kLanes * v);
#pragma GCC unroll 8
      for (int i = 0; i < R; ++i) {
        const Vf av = set1(a[i * LDA + p]);
#pragma GCC unroll 4
        for (int v = 0; v < NV; ++v) acc[i][v] = fmadd(av, bv[v], acc[i][v]);
      }
    }
  }
  Vf s = zero();
  for (auto& row : acc)
    for (auto& x : row) s = add(s, x);
  return hsum(s);
}

}  // namespace dlrt::cpu::simd::DLRT_SIMD_NS
