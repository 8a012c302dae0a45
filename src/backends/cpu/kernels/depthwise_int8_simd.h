// Kernel body (simd/simd.h), compiled once per vector width by
// depthwise_int8.cpp: the int32 sums of the 8-bit depthwise plane's taps
// (depthwise_int8.h). Integer products and wrapping adds, so every width
// gives the portable loop's bits.

namespace dlrt::cpu::simd::DLRT_SIMD_NS {

// out[i] = sum over t < taps of src[t][i] * w[t], i < n (wrapping as int32):
// two vectors of outputs per pass over the taps, then one vector at a time
// (the last partial).
inline void depthwise_int8_sum_taps(const int16_t* const* src, const int32_t* w, int64_t taps, int64_t n,
                                    int32_t* out) {
  int64_t i = 0;
  for (; i + 2 * kLanes <= n; i += 2 * kLanes) {
    Vi32 a0 = set1_i32(0), a1 = set1_i32(0);
    for (int64_t t = 0; t < taps; ++t) {
      const Vi32 wt = set1_i32(w[t]);
      a0 = add_i32(a0, mullo_i32(load_i16_i32(src[t] + i), wt));
      a1 = add_i32(a1, mullo_i32(load_i16_i32(src[t] + i + kLanes), wt));
    }
    storeu_i32(out + i, a0);
    storeu_i32(out + i + kLanes, a1);
  }
  for (; i < n; i += kLanes) {
    Vi32 a = set1_i32(0);
    for (int64_t t = 0; t < taps; ++t) a = add_i32(a, mullo_i32(load_first_i16_i32(src[t] + i, n - i), set1_i32(w[t])));
    store_first_i32(out + i, a, n - i);
  }
}

}  // namespace dlrt::cpu::simd::DLRT_SIMD_NS
