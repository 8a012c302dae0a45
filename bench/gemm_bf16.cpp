// Precision bf16's GEMM against the f32 one on transformer shapes (issue 76),
// and the issue rate of VDPBF16PS against FMA on this CPU. Each shape runs
// f32 (B packed) and bf16 (B packed for bf16) alternately, 1 thread, timed by
// the thread's CPU time (other processes' load left out); medians. Then 24
// independent VDPBF16PS (and FMA) per loop step: ns per instruction.
//   dlrt_gemm_bf16
#include "backends/cpu/kernels/gemm_bf16.h"

#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "backends/cpu/kernels/gemm.h"

#if defined(__x86_64__)
#if !defined(__clang__)
// GCC 12's AVX-512 intrinsics start some results from _mm512_undefined_ps(),
// which the uninitialized-use warnings report once inlined: false positives.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include <immintrin.h>
#endif

namespace {

using namespace dlrt::cpu;

double cpu_us() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec * 1e6 + t.tv_nsec * 1e-3;
}

#if defined(__x86_64__)
__attribute__((target("avx512f,avx512bf16,avx512bw,avx512vl"))) float loop_dpbf16(long n) {
  __m512 a[24];
  for (int i = 0; i < 24; ++i) a[i] = _mm512_set1_ps(static_cast<float>(i));
  __m512bh x = (__m512bh)_mm512_set1_epi32(0x3f803f80), y = (__m512bh)_mm512_set1_epi32(0x3c003c00);
  for (long k = 0; k < n; ++k) {
#pragma GCC unroll 24
    for (int i = 0; i < 24; ++i) a[i] = _mm512_dpbf16_ps(a[i], x, y);
    __asm__ volatile("" : "+v"(x), "+v"(y));
  }
  __m512 s = a[0];
  for (int i = 1; i < 24; ++i) s = _mm512_add_ps(s, a[i]);
  return _mm512_reduce_add_ps(s);
}

__attribute__((target("avx512f,fma"))) float loop_fma(long n) {
  __m512 a[24];
  for (int i = 0; i < 24; ++i) a[i] = _mm512_set1_ps(static_cast<float>(i));
  __m512 x = _mm512_set1_ps(0.999f), y = _mm512_set1_ps(1e-3f);
  for (long k = 0; k < n; ++k) {
#pragma GCC unroll 24
    for (int i = 0; i < 24; ++i) a[i] = _mm512_fmadd_ps(a[i], x, y);
    __asm__ volatile("" : "+v"(x), "+v"(y));
  }
  __m512 s = a[0];
  for (int i = 1; i < 24; ++i) s = _mm512_add_ps(s, a[i]);
  return _mm512_reduce_add_ps(s);
}
#endif

}  // namespace

int main() {
  if (!bf16_dot_available()) {
    std::printf("{\"skipped\": \"%s\"}\n", bf16_dot_unavailable_reason());
    return 0;
  }
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-1, 1);
  struct Shape {
    int64_t M, N, K;
  };
  const Shape shapes[] = {{128, 384, 384}, {128, 1536, 384}, {128, 384, 1536}, {1024, 384, 384},
                          {32, 768, 768},  {128, 1152, 384}, {197, 192, 192}};
  std::printf("[\n");
  for (const Shape& s : shapes) {
    std::vector<float> A(s.M * s.K), B(s.K * s.N), C0(s.M * s.N), C1(s.M * s.N);
    for (auto& x : A) x = u(rng);
    for (auto& x : B) x = u(rng);
    auto f32 = PackedMatrix::pack_b(false, s.K, s.N, B.data(), s.N);
    auto bf16 = PackedMatrix::pack_b(false, s.K, s.N, B.data(), s.N, GemmPrecision::kBf16);
    std::vector<double> t0, t1;
    for (int r = 0; r < 41; ++r) {
      SgemmOperand oa{A.data(), s.K, false, nullptr, nullptr};
      SgemmOperand b0{B.data(), s.N, false, f32.get(), nullptr}, b1{B.data(), s.N, false, bf16.get(), nullptr};
      const double a = cpu_us();
      (void)sgemm_ex(s.M, s.N, s.K, 1.0f, oa, b0, 0.0f, C0.data(), s.N, nullptr, nullptr);
      const double b = cpu_us();
      (void)sgemm_ex(s.M, s.N, s.K, 1.0f, oa, b1, 0.0f, C1.data(), s.N, nullptr, nullptr);
      const double c = cpu_us();
      t0.push_back(b - a);
      t1.push_back(c - b);
    }
    std::sort(t0.begin(), t0.end());
    std::sort(t1.begin(), t1.end());
    const double m0 = t0[t0.size() / 2], m1 = t1[t1.size() / 2], flop = 2.0 * s.M * s.N * s.K;
    std::printf(
        "  {\"M\": %ld, \"N\": %ld, \"K\": %ld, \"f32_us\": %.1f, \"bf16_us\": %.1f, \"ratio\": %.3f, "
        "\"f32_gflops\": %.1f, \"bf16_gflops\": %.1f},\n",
        static_cast<long>(s.M), static_cast<long>(s.N), static_cast<long>(s.K), m0, m1, m1 / m0, flop / m0 * 1e-3,
        flop / m1 * 1e-3);
  }
#if defined(__x86_64__)
  const long n = 20000000;
  const double a = cpu_us();
  const float r0 = loop_fma(n);
  const double b = cpu_us();
  const float r1 = loop_dpbf16(n);
  const double c = cpu_us();
  std::printf("  {\"fma_zmm_ns\": %.3f, \"vdpbf16ps_zmm_ns\": %.3f, \"checksums\": [%g, %g]}\n",
              (b - a) * 1e3 / (24.0 * n), (c - b) * 1e3 / (24.0 * n), r0, r1);
#endif
  std::printf("]\n");
  return 0;
}
