// dlrt_gemm_int8: the 8-bit GEMM (gemm_int8.h) on each of its kernels,
// one thread, on minilm_l6-sized projections (M = 128 rows of activations
// against packed uint8/int8 weights) and a few others. Prints the median
// GMAC/s (multiply-accumulates per second) per kernel.
//
//   dlrt_gemm_int8 [--reps R]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "backends/cpu/kernels/gemm_int8.h"
#include "device/cpu_features.h"

namespace {

using namespace dlrt::cpu;

struct ShapeCase {
  const char* name;
  int64_t M, K, N;
};

double time_gemm(const ShapeCase& s, int reps) {
  std::mt19937 rng(7);
  std::vector<uint8_t> a(static_cast<size_t>(s.M * s.K));
  std::vector<int8_t> b(static_cast<size_t>(s.K * s.N));
  for (auto& v : a) v = static_cast<uint8_t>(rng());
  for (auto& v : b) v = static_cast<int8_t>(rng());
  std::vector<int32_t> c(static_cast<size_t>(s.M * s.N));
  auto packed = PackedInt8B::pack(false, s.K, s.N, b.data(), s.N, true);
  const int32_t a_zp = 117;
  std::vector<double> gmacs;
  for (int r = 0; r < reps; ++r) {
    const int calls = std::max<int>(1, static_cast<int>(2e8 / static_cast<double>(s.M * s.K * s.N)));
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < calls; ++i)
      gemm_u8s8(s.M, s.N, s.K, a.data(), s.K, false, &a_zp, 0, *packed, nullptr, 0, c.data(), s.N, nullptr);
    const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    gmacs.push_back(static_cast<double>(s.M * s.K * s.N) * calls / sec / 1e9);
  }
  std::sort(gmacs.begin(), gmacs.end());
  return gmacs[gmacs.size() / 2];
}

// The microkernel alone on one L1-resident tile (kg groups of 4 k): its ceiling.
double time_tile(int64_t kg, int mr, int nv, int8_detail::TileFn fn) {
  std::vector<uint8_t, std::allocator<uint8_t>> a(static_cast<size_t>(kg * mr * 4 + 64), 3);
  alignas(64) static int8_t b[3 * 96 * 64];
  alignas(64) static int32_t acc[32 * 32];  // the largest tile (amx)
  std::memset(b, 1, sizeof b);
  const int calls = 200000;
  std::vector<double> gmacs;
  for (int r = 0; r < 5; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < calls; ++i) fn(kg, a.data(), b, kg * 64, acc, false);
    const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    gmacs.push_back(static_cast<double>(kg * 4 * mr * 16 * nv) * calls / sec / 1e9);
  }
  std::sort(gmacs.begin(), gmacs.end());
  return gmacs[2];
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 7;
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "--reps") == 0) reps = std::max(1, std::atoi(argv[++i]));
  const ShapeCase cases[] = {
      {"minilm qkv/out 128x384x384", 128, 384, 384},
      {"minilm ffn up 128x384x1536", 128, 384, 1536},
      {"minilm ffn down 128x1536x384", 128, 1536, 384},
      {"one row 1x384x1536", 1, 384, 1536},
      {"conv-like 64x576x3136", 64, 576, 3136},
  };
  // The tiles exist wherever the compiler could build them; the CPU must have the instructions.
  const dlrt::device::CpuFeatures& cpu = dlrt::device::cpu_features();
  if (!int8_detail::amx_unavailable()) {
    const int8_detail::AmxEngine amx = int8_detail::amx_engine(false);
    amx.begin();  // the tile configuration, on this thread
    std::printf("tile alone, kg 96: amx 32x32 %.1f GMAC/s\n", time_tile(96, 32, 2, amx.fn[2]));
    amx.end();
  }
  if (cpu.avx512_vnni && int8_detail::avx512_vnni_tile(3))
    std::printf("tile alone, kg 96: avx512-vnni 8x48 %.1f GMAC/s\n", time_tile(96, 8, 3, int8_detail::avx512_vnni_tile(3)));
  if (cpu.avx_vnni && int8_detail::avx_vnni_tile())
    std::printf("tile alone, kg 96: avx-vnni 6x16 %.1f GMAC/s\n", time_tile(96, 6, 1, int8_detail::avx_vnni_tile()));
  std::vector<const char*> kernels = int8_gemm_kernels();
  // The scalar model of the AMX tiles is for tests, not worth timing.
  std::erase_if(kernels, [](const char* k) { return std::strcmp(k, "amx-model") == 0; });
  std::printf("%-32s", "shape (M x K x N)");
  for (const char* k : kernels) std::printf(" %12s", k);
  std::printf("   (median GMAC/s, 1 thread)\n");
  for (const auto& s : cases) {
    std::printf("%-32s", s.name);
    for (const char* k : kernels) {
      ScopedInt8Kernel use(k);
      std::printf(" %12.1f", time_gemm(s, std::strcmp(k, "generic") == 0 ? 1 : reps));
      std::fflush(stdout);
    }
    std::printf("\n");
  }
  return 0;
}
