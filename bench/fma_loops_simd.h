// Kernel body (src/backends/cpu/kernels/simd/simd.h), compiled once per
// vector width by fma_loops.h: kChains independent FMA chains on registers.

namespace dlrt::cpu::simd::DLRT_SIMD_NS {

// iters * kChains FMAs of kLanes lanes; the sum of every accumulator's lanes.
inline float fma_chains(int64_t iters) {
  constexpr int kChains = fma_loops::kChains;
  Vf acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = set1(static_cast<float>(i) * 0.001f);
  const Vf mul = set1(0.999999f), inc = set1(1e-6f);
  for (int64_t it = 0; it < iters; ++it) {
#pragma GCC unroll 12
    for (int i = 0; i < kChains; ++i) acc[i] = fmadd(acc[i], mul, inc);
  }
  Vf s = acc[0];
  for (int i = 1; i < kChains; ++i) s = add(s, acc[i]);
  return hsum(s);
}

}  // namespace dlrt::cpu::simd::DLRT_SIMD_NS
