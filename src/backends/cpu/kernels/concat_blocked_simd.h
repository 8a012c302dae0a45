// Kernel body (simd/simd.h), compiled once per vector width by
// concat_blocked.cpp: an assembled 16-lane output block, one masked lane
// permute per run and vector (a block is 1 vector at 512 bits: the former
// AVX-512 loop's vpermps with a mask; 2 at 256, permute2; 4 at 128, lookup4).

namespace dlrt::cpu::simd::DLRT_SIMD_NS {

// Positions [p0, p1) of one assembled output block of 16 lanes; src[k]: run
// k's input block at position 0. False where the permutes are not native
// (the caller's portable loop runs instead).
bool concat_assemble16(const BlockedConcatRun* runs, size_t nr, const float* const* src, int64_t p0, int64_t p1,
                       float* y) {
  if constexpr (!kNativePermute) {
    return false;
  } else {
    constexpr int kV = 16 / kLanes;  // vectors per block
    Index idx[16][kV];
    Mask mask[16][kV];
    for (size_t k = 0; k < nr; ++k)  // at most one run per lane
      for (int j = 0; j < kV; ++j) {
        // Output lane l reads input lane l - out_lane + in_lane (mod 16; the mask keeps the run's lanes).
        idx[k][j] = index_ramp(j * kLanes - runs[k].out_lane + runs[k].in_lane, 15);
        mask[k][j] = lanes_range(runs[k].out_lane - j * kLanes, runs[k].out_lane + runs[k].len - j * kLanes);
      }
    for (int64_t p = p0; p < p1; ++p) {
      Vf acc[kV];
#pragma GCC unroll 4
      for (int j = 0; j < kV; ++j) acc[j] = zero();
      for (size_t k = 0; k < nr; ++k) {
        Vf v[4];  // the first kV used
#pragma GCC unroll 4
        for (int j = 0; j < kV; ++j) v[j] = loadu(src[k] + p * 16 + j * kLanes);
#pragma GCC unroll 4
        for (int j = 0; j < kV; ++j) {
          Vf from;
          if constexpr (kV == 1) from = permute(v[0], idx[k][j]);
          else if constexpr (kV == 2) from = permute2(v[0], v[1], idx[k][j]);
          else from = lookup4(v, idx[k][j]);
          acc[j] = select(mask[k][j], from, acc[j]);
        }
      }
#pragma GCC unroll 4
      for (int j = 0; j < kV; ++j) storeu(y + p * 16 + j * kLanes, acc[j]);
    }
    return true;
  }
}

}  // namespace dlrt::cpu::simd::DLRT_SIMD_NS
