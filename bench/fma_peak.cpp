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
//
// Then the same FMAs fed the way the GEMM tile feeds them: per k step, one
// packed B row (3 zmm loads on AVX-512, 2 ymm on AVX2) and a broadcast from
// each of the tile's A rows (8, or 6), over a K slice whose operands stay in
// L1 (B 36 KiB / 16 KiB, as the 8x48 and 6x16 tiles use). No stores and no
// loop overhead beyond the k loop: the most a GEMM kernel of that shape can
// do with its operands in L1. On a shared host it also shows the machine's
// state, which the register-only rate does not (docs/performance.md).
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

#include "fma_loops.h"

#if DLRT_X86
#define DLRT_SIMD_BODY "bench/fma_tile_simd.h"
#include "backends/cpu/kernels/simd/instantiate.h"
#endif

namespace {

using fma_loops::kChains;
using fma_loops::sum_lanes;
using fma_loops::fma_scalar;
#if DLRT_X86
using fma_loops::fma_avx2;
using fma_loops::fma_avx512;
#endif

// The operands of a tile loop: B, a packed panel of b_floats, and A, a_floats
// (the tile's rows), 64-byte aligned and filled with small values. Owned by
// the caller of the loop (with_operands): a destructor in the loop's own
// function kept its accumulators on the stack.
struct TileOperands {
  float* a;
  float* b;
  TileOperands(int a_floats, int b_floats)
      : a(static_cast<float*>(std::aligned_alloc(64, sizeof(float) * a_floats))),
        b(static_cast<float*>(std::aligned_alloc(64, sizeof(float) * b_floats))) {
    for (int i = 0; i < b_floats; ++i) b[i] = 1e-3f * static_cast<float>(i % 7);
    for (int i = 0; i < a_floats; ++i) a[i] = 1e-3f * static_cast<float>(i % 5);
  }
  ~TileOperands() {
    std::free(a);
    std::free(b);
  }
  TileOperands(const TileOperands&) = delete;
  TileOperands& operator=(const TileOperands&) = delete;
};

#if DLRT_X86
// The GEMM tile's k loop (fma_tile_simd.h over the vector layer) at 512 and 256 bits.
template <int R, int NV, int KC, int LDA>
float tile_avx512_l1(const float* a, const float* b, int64_t iters) {
  return dlrt::cpu::simd::w512::fma_tile_l1<R, NV, KC, LDA>(a, b, iters);
}
template <int R, int NV, int KC, int LDA>
float tile_avx2_l1(const float* a, const float* b, int64_t iters) {
  return dlrt::cpu::simd::w256::fma_tile_l1<R, NV, KC, LDA>(a, b, iters);
}
#endif

// A tile loop as a Loop function: its operands (A_FLOATS and B_FLOATS) set up here, then `iters` sweeps.
template <float (*kTile)(const float*, const float*, int64_t), int A_FLOATS, int B_FLOATS>
float with_operands(int64_t iters) {
  const TileOperands ops(A_FLOATS, B_FLOATS);
  return kTile(ops.a, ops.b, iters);
}

// A loop to time: fn(iters) runs iters iterations of fmas_per_iter FMAs on
// `lanes` lanes each.
struct Loop {
  float (*fn)(int64_t) = fma_scalar;
  double fmas_per_iter = kChains;
};

struct Isa {
  std::string name;
  int lanes = 1;
  Loop peak;
  Loop tile;         // the GEMM tile's loads from L1; fn null where there is none
  std::string tile_name;
};

Isa pick_isa(const std::string& want) {
#if DLRT_X86
  __builtin_cpu_init();
  bool avx512 = __builtin_cpu_supports("avx512f");
  bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if ((want.empty() || want == "avx512") && avx512)
    return {"avx512f", 16, {fma_avx512, kChains},
            {with_operands<tile_avx512_l1<8, 3, 192, 384>, 8 * 384, 192 * 48>, 8 * 3 * 192}, "8x48 tile, kc 192"};
  if ((want.empty() || want == "avx2" || (want == "avx512" && !avx512)) && avx2)
    return {"avx2+fma", 8, {fma_avx2, kChains},
            {with_operands<tile_avx2_l1<6, 2, 256, 384>, 6 * 384, 256 * 16>, 6 * 2 * 256}, "6x16 tile, kc 256"};
#endif
  (void)want;
  return {"scalar", 1, {fma_scalar, kChains}, {nullptr, 0}, ""};
}

volatile float g_sink = 0;

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Wall time of `threads` threads each running loop.fn(iters), started together.
double run_threads(const Loop& loop, int threads, int64_t iters) {
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t)
    pool.emplace_back([&] {
      ready.fetch_add(1);
      while (!go.load(std::memory_order_acquire)) {
      }
      g_sink = g_sink + loop.fn(iters);
    });
  while (ready.load() < threads - 1) {
  }
  auto t0 = std::chrono::steady_clock::now();
  go.store(true, std::memory_order_release);
  float r = loop.fn(iters);
  for (auto& th : pool) th.join();
  double s = seconds_since(t0);
  g_sink = g_sink + r;
  return s;
}

// Best GFLOP/s over `repeats` runs of about `seconds` each.
double measure(const Isa& isa, const Loop& loop, int threads, double seconds, int repeats) {
  // Calibrate the iteration count on one thread.
  int64_t iters = loop.fmas_per_iter > 1000 ? 16 : 1 << 16;
  for (;;) {
    double s = run_threads(loop, 1, iters);
    if (s > 0.02 || iters > (int64_t{1} << 40)) {
      iters = static_cast<int64_t>(static_cast<double>(iters) * seconds / std::max(s, 1e-6));
      break;
    }
    iters *= 4;
  }
  if (iters < 1) iters = 1;
  const double flop_per_thread = static_cast<double>(iters) * loop.fmas_per_iter * isa.lanes * 2.0;
  double best = 0;
  for (int r = 0; r < repeats; ++r) {
    double s = run_threads(loop, threads, iters);
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
  double one = measure(isa, isa.peak, 1, seconds, repeats);
  double many = threads > 1 ? measure(isa, isa.peak, threads, seconds, repeats) : one;
  double tile_one = 0, tile_many = 0;
  if (isa.tile.fn) {
    tile_one = measure(isa, isa.tile, 1, seconds, repeats);
    tile_many = threads > 1 ? measure(isa, isa.tile, threads, seconds, repeats) : tile_one;
  }
  if (json) {
    std::printf("{\"isa\": \"%s\", \"lanes\": %d, \"threads\": %d, \"gflops_1_thread\": %.2f, \"gflops_n_threads\": %.2f",
                isa.name.c_str(), isa.lanes, threads, one, many);
    if (isa.tile.fn)
      std::printf(", \"tile_loads\": \"%s\", \"tile_gflops_1_thread\": %.2f, \"tile_gflops_n_threads\": %.2f",
                  isa.tile_name.c_str(), tile_one, tile_many);
    std::printf("}\n");
  } else {
    std::printf("isa: %s (%d fp32 lanes, %d independent FMA chains per thread)\n", isa.name.c_str(), isa.lanes, kChains);
    std::printf("peak fp32 FMA, 1 thread:  %8.1f GFLOP/s\n", one);
    std::printf("peak fp32 FMA, %d threads: %8.1f GFLOP/s\n", threads, many);
    if (isa.tile.fn) {
      std::printf("with the GEMM tile's loads from L1 (%s), 1 thread:  %8.1f GFLOP/s (%.1f%% of peak)\n",
                  isa.tile_name.c_str(), tile_one, 100.0 * tile_one / one);
      std::printf("with the GEMM tile's loads from L1 (%s), %d threads: %8.1f GFLOP/s (%.1f%% of peak)\n",
                  isa.tile_name.c_str(), threads, tile_many, 100.0 * tile_many / many);
    }
  }
  return 0;
}
