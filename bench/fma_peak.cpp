// dlrt_fma_peak: the machine's peak fp32 FMA rate, on 1 thread and on N.
//
// Each thread runs independent chains of fused multiply-adds on registers
// only (no memory traffic), enough chains to cover the FMA latency on two
// FMA ports. The ISA is picked at run time: AVX-512F when the CPU has it,
// else AVX2+FMA, else scalar fmaf (a floor, not a peak). Built with target
// attributes, never -march=native, so one binary runs on any x86-64.
//
//   dlrt_fma_peak [--threads N] [--seconds S] [--isa avx512|avx2|scalar] [--json]
//
// Prints GFLOP/s (1 FMA = 2 FLOP) for 1 thread and for N threads (default:
// every core), the best of several repeats. The figure is the ceiling a
// compute-bound kernel (GEMM, Conv) can approach on this machine.
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define DLRT_X86 1
#else
#define DLRT_X86 0
#endif

namespace {

constexpr int kChains = 12;  // independent accumulators per thread

#if DLRT_X86
__attribute__((target("avx512f"))) float fma_avx512(int64_t iters) {
  __m512 acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = _mm512_set1_ps(static_cast<float>(i) * 0.001f);
  const __m512 mul = _mm512_set1_ps(0.999999f);
  const __m512 add = _mm512_set1_ps(1e-6f);
  for (int64_t it = 0; it < iters; ++it) {
#pragma GCC unroll 12
    for (int i = 0; i < kChains; ++i) acc[i] = _mm512_fmadd_ps(acc[i], mul, add);
  }
  __m512 s = acc[0];
  for (int i = 1; i < kChains; ++i) s = _mm512_add_ps(s, acc[i]);
  float lanes[16];
  _mm512_storeu_ps(lanes, s);
  float total = 0;
  for (float x : lanes) total += x;
  return total;
}

__attribute__((target("avx2,fma"))) float fma_avx2(int64_t iters) {
  __m256 acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = _mm256_set1_ps(static_cast<float>(i) * 0.001f);
  const __m256 mul = _mm256_set1_ps(0.999999f);
  const __m256 add = _mm256_set1_ps(1e-6f);
  for (int64_t it = 0; it < iters; ++it) {
#pragma GCC unroll 12
    for (int i = 0; i < kChains; ++i) acc[i] = _mm256_fmadd_ps(acc[i], mul, add);
  }
  __m256 s = acc[0];
  for (int i = 1; i < kChains; ++i) s = _mm256_add_ps(s, acc[i]);
  float lanes[8];
  _mm256_storeu_ps(lanes, s);
  float total = 0;
  for (float x : lanes) total += x;
  return total;
}
#endif

float fma_scalar(int64_t iters) {
  float acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = static_cast<float>(i) * 0.001f;
  for (int64_t it = 0; it < iters; ++it)
    for (int i = 0; i < kChains; ++i) acc[i] = std::fma(acc[i], 0.999999f, 1e-6f);
  float total = 0;
  for (float x : acc) total += x;
  return total;
}

struct Isa {
  std::string name;
  int lanes = 1;
  float (*fn)(int64_t) = fma_scalar;
};

Isa pick_isa(const std::string& want) {
#if DLRT_X86
  __builtin_cpu_init();
  bool avx512 = __builtin_cpu_supports("avx512f");
  bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if ((want.empty() || want == "avx512") && avx512) return {"avx512f", 16, fma_avx512};
  if ((want.empty() || want == "avx2" || (want == "avx512" && !avx512)) && avx2) return {"avx2+fma", 8, fma_avx2};
#endif
  (void)want;
  return {"scalar", 1, fma_scalar};
}

volatile float g_sink = 0;

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Wall time of `threads` threads each running fn(iters), started together.
double run_threads(const Isa& isa, int threads, int64_t iters) {
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t)
    pool.emplace_back([&] {
      ready.fetch_add(1);
      while (!go.load(std::memory_order_acquire)) {
      }
      g_sink = g_sink + isa.fn(iters);
    });
  while (ready.load() < threads - 1) {
  }
  auto t0 = std::chrono::steady_clock::now();
  go.store(true, std::memory_order_release);
  float r = isa.fn(iters);
  for (auto& th : pool) th.join();
  double s = seconds_since(t0);
  g_sink = g_sink + r;
  return s;
}

// Best GFLOP/s over `repeats` runs of about `seconds` each.
double measure(const Isa& isa, int threads, double seconds, int repeats) {
  // Calibrate the iteration count on one thread.
  int64_t iters = 1 << 16;
  for (;;) {
    double s = run_threads(isa, 1, iters);
    if (s > 0.02 || iters > (int64_t{1} << 40)) {
      iters = static_cast<int64_t>(static_cast<double>(iters) * seconds / std::max(s, 1e-6));
      break;
    }
    iters *= 4;
  }
  if (iters < 1) iters = 1;
  const double flop_per_thread = static_cast<double>(iters) * kChains * isa.lanes * 2.0;
  double best = 0;
  for (int r = 0; r < repeats; ++r) {
    double s = run_threads(isa, threads, iters);
    best = std::max(best, flop_per_thread * threads / s / 1e9);
  }
  return best;
}

int usage(const char* msg) {
  std::fprintf(stderr,
               "dlrt_fma_peak: error: %s\nusage: dlrt_fma_peak [--threads N] [--seconds S] [--isa avx512|avx2|scalar] "
               "[--json]\n",
               msg);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  int threads = static_cast<int>(std::thread::hardware_concurrency());
  if (threads < 1) threads = 1;
  double seconds = 0.3;
  bool json = false;
  std::string want;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const char* what) -> const char* {
      if (i + 1 >= argc) return nullptr;
      (void)what;
      return argv[++i];
    };
    if (a == "--json") {
      json = true;
    } else if (a == "--threads") {
      const char* v = value("--threads");
      if (!v) return usage("--threads needs a value");
      char* end = nullptr;
      long n = std::strtol(v, &end, 10);
      if (*end || n < 1 || n > 1024) return usage("--threads must be 1..1024");
      threads = static_cast<int>(n);
    } else if (a == "--seconds") {
      const char* v = value("--seconds");
      if (!v) return usage("--seconds needs a value");
      char* end = nullptr;
      double s = std::strtod(v, &end);
      if (*end || !(s >= 0.01 && s <= 60)) return usage("--seconds must be 0.01..60");
      seconds = s;
    } else if (a == "--isa") {
      const char* v = value("--isa");
      if (!v) return usage("--isa needs a value");
      want = v;
      if (want != "avx512" && want != "avx2" && want != "scalar") return usage("--isa must be avx512, avx2 or scalar");
    } else if (a == "-h" || a == "--help") {
      std::printf("usage: dlrt_fma_peak [--threads N] [--seconds S] [--isa avx512|avx2|scalar] [--json]\n"
                  "Peak fp32 FMA GFLOP/s on 1 thread and on N threads (default: every core).\n");
      return 0;
    } else {
      return usage(("unknown argument '" + a + "'").c_str());
    }
  }
  Isa isa = pick_isa(want);
  const int repeats = 5;
  double one = measure(isa, 1, seconds, repeats);
  double many = threads > 1 ? measure(isa, threads, seconds, repeats) : one;
  if (json) {
    std::printf("{\"isa\": \"%s\", \"lanes\": %d, \"threads\": %d, \"gflops_1_thread\": %.2f, \"gflops_n_threads\": %.2f}\n",
                isa.name.c_str(), isa.lanes, threads, one, many);
  } else {
    std::printf("isa: %s (%d fp32 lanes, %d independent FMA chains per thread)\n", isa.name.c_str(), isa.lanes, kChains);
    std::printf("peak fp32 FMA, 1 thread:  %8.1f GFLOP/s\n", one);
    std::printf("peak fp32 FMA, %d threads: %8.1f GFLOP/s\n", threads, many);
  }
  return 0;
}
