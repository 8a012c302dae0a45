// Body fragment (simd/simd.h): a row of n values a vector at a time, for
// kernels on the layer. Included by a kernel body inside its width namespace
// (in the body's own helper namespace), once per width and translation unit.

// step(i, k) for the whole vectors at i (k the constant kLanes, so that
// load_first / store_first compile to whole loads and stores), then for the
// partial last one (k = n - i < kLanes), if any.
template <typename Step>
__attribute__((always_inline)) inline void for_vectors(int64_t n, Step step) {
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) step(i, std::integral_constant<int64_t, kLanes>{});
  if (i < n) step(i, n - i);
}
