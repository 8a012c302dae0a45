// Kernel body (simd/simd.h), compiled once per vector width by
// resize_nearest.cpp: a row of 4-byte elements each repeated k times, k
// permuted stores per kLanes inputs (at 512 bits the former AVX-512 loop's).

namespace dlrt::cpu::simd::DLRT_SIMD_NS {

// out[i k + r] = in[i] for i < in_w, r < k, k <= 16; pattern[e] = e / k for
// e < 16 k (output vector m of every kLanes inputs reads pattern[m kLanes ..]).
// False where the permutes are not native (the caller's loop runs instead).
bool resize_replicate_row_32(const uint32_t* in, uint32_t* out, int64_t in_w, int64_t k, const int32_t* pattern) {
  if constexpr (!kNativePermute) {
    return false;
  } else {
    // The elements move as float bit patterns: loads, permutes and stores leave them as they are.
    const float* src = reinterpret_cast<const float*>(in);
    float* dst = reinterpret_cast<float*>(out);
    int64_t i = 0;
    for (; i + kLanes <= in_w; i += kLanes) {
      const Vf v = loadu(src + i);
      for (int64_t m = 0; m < k; ++m) storeu(dst + i * k + kLanes * m, permute(v, load_index(pattern + kLanes * m)));
    }
    if (i < in_w) {
      const int64_t rem = in_w - i;
      const Vf v = load_first(src + i, rem);
      for (int64_t m = 0; m * kLanes < rem * k; ++m)
        store_first(dst + i * k + kLanes * m, permute(v, load_index(pattern + kLanes * m)), rem * k - kLanes * m);
    }
    return true;
  }
}

}  // namespace dlrt::cpu::simd::DLRT_SIMD_NS
