// dlrt_gemm_isa: the float GEMM (sgemm_ex) on its AVX2 and AVX-512 kernels
// (issue 5), one thread by default, on shapes of the zoo models: resnet18's im2col
// convolutions (weights pre-packed as A, as Conv does), minilm's projections
// and tiny_vit-sized MLP layers (weights pre-packed as B, as MatMul does),
// and resnet18's classifier (one row against transposed weights: a GEMV).
//
//   dlrt_gemm_isa [--peak GFLOPS] [--reps R] [--filter SUBSTRING] [--threads N] [--cold MIB]
//
// Each shape runs under ScopedCpuIsa(avx2) and ScopedCpuIsa(avx512)
// alternately (R rounds, each timing a batch of calls; weights packed under
// the same cap, as a kernel created under it would). Prints the median
// GFLOP/s per ISA, the ratio avx512/avx2 (> 1: AVX-512 faster) and, with
// --peak (the 1-thread figure of dlrt_fma_peak), each as % of that peak
// (with --threads N > 1 the GEMM runs on an N-thread pool: give the N-thread peak).
// --cold MIB (shapes with packed B, every column): MIB worth of packed copies
// of the weights, each call taking the next, so B arrives from beyond L2 as
// in a model whose layers each have their own weights (minilm_l6: 42 MiB).
//
// On a CPU with AMX-BF16 a third column times the bf16x3 precision
// (gemm_amx.h), the weights packed for it as A or B, with its ratio to AVX-512.
//
// First it times each microkernel alone on one tile whose operands stay in L1
// (A read in place, 8 or 6 rows x kc 192; one packed B panel; C rewritten
// every call): the ceiling the blocked GEMM, and so any model, works under.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "backends/cpu/kernels/gemm.h"
#include "backends/cpu/kernels/gemm_amx.h"
#include "backends/cpu/kernels/gemm_blocking.h"
#include "backends/cpu/kernels/gemm_kernels.h"
#include "backends/cpu/kernels/isa.h"

namespace {

using namespace dlrt::cpu;

struct Shape {
  const char* name;
  int64_t M, N, K;
  bool packed_a;  // true: A is the packed weight (Conv); false: B is (MatMul)
  bool plain_bt = false;  // plain operands, B stored transposed (Gemm transB=1 on one row: a GEMV)
};

const Shape kShapes[] = {
    {"resnet18 conv1 7x7/2", 64, 12544, 147, true},
    {"resnet18 layer1 3x3", 64, 3136, 576, true},
    {"resnet18 layer2 3x3", 128, 784, 1152, true},
    {"resnet18 layer3 3x3", 256, 196, 2304, true},
    {"resnet18 layer4 3x3", 512, 49, 4608, true},
    {"minilm qkv/out proj", 128, 384, 384, false},
    {"minilm ffn up", 128, 1536, 384, false},
    {"minilm ffn down", 128, 384, 1536, false},
    {"minilm s16 qkv/out proj", 16, 384, 384, false},
    {"minilm s16 ffn up", 16, 1536, 384, false},
    {"minilm s16 ffn down", 16, 384, 1536, false},
    {"tiny_vit s1 mlp", 784, 512, 128, false},
    {"tiny_vit s2 mlp", 196, 640, 160, false},
    {"tiny_vit s3 mlp", 49, 1280, 320, false},
    {"resnet18 fc (M=1)", 1, 1000, 512, false, true},
};

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// GFLOP/s of one timed batch of sgemm_ex calls under `isa`.
double run_batch(const Shape& s, CpuIsa isa, const std::vector<float>& a, const std::vector<float>& b,
                 std::vector<float>& c, int calls, dlrt::ThreadPool* pool,
                 GemmPrecision precision = GemmPrecision::kF32, int64_t cold_bytes = 0) {
  ScopedCpuIsa cap(isa);
  std::shared_ptr<const PackedMatrix> pa, pb;
  std::vector<std::shared_ptr<const PackedMatrix>> copies;
  SgemmOperand oa{a.data(), s.K, false, nullptr, nullptr}, ob{b.data(), s.N, false, nullptr, nullptr};
  if (s.plain_bt) {
    ob = SgemmOperand{b.data(), s.K, true, nullptr, nullptr};  // B holds N x K
  } else if (s.packed_a) {
    pa = PackedMatrix::pack_a(false, s.M, s.K, a.data(), s.K, precision);
    oa = SgemmOperand{nullptr, 0, false, pa.get(), nullptr};
  } else {
    pb = PackedMatrix::pack_b(false, s.K, s.N, b.data(), s.N, precision);
    ob = SgemmOperand{nullptr, 0, false, pb.get(), nullptr};
    // Cold weights: as many packed copies as fill cold_bytes, used in turn,
    // so each call finds its B where a model's next layer finds it (not in L2).
    const int64_t n = cold_bytes / static_cast<int64_t>(s.K * s.N * sizeof(float));
    for (int64_t i = 0; i < n; ++i) copies.push_back(PackedMatrix::pack_b(false, s.K, s.N, b.data(), s.N, precision));
  }
  if (!sgemm_ex(s.M, s.N, s.K, 1.0f, oa, ob, 0.0f, c.data(), s.N, nullptr, pool).ok()) return 0.0;  // warm
  const double t0 = now_s();
  for (int i = 0; i < calls; ++i) {
    if (!copies.empty()) ob.packed = copies[static_cast<size_t>(i) % copies.size()].get();
    (void)sgemm_ex(s.M, s.N, s.K, 1.0f, oa, ob, 0.0f, c.data(), s.N, nullptr, pool);  // checked by the warm call
  }
  const double t = now_s() - t0;
  return 2.0 * s.M * s.N * s.K * calls / t * 1e-9;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

#if defined(__x86_64__)
// GFLOP/s of `kernel` (an MR x NR tile, A read in place) over kc = 192 with
// every operand L1-resident: median of `reps` batches of about 40 ms.
double kernel_in_l1(SgemmRowsKernel kernel, int mr, int nr, int reps) {
  constexpr int64_t kc = 192;
  std::vector<float> a(static_cast<size_t>(mr * kc), 0.5f), c(static_cast<size_t>(mr * nr));
  float* b = static_cast<float*>(std::aligned_alloc(64, static_cast<size_t>(kc * nr) * sizeof(float)));
  std::fill(b, b + kc * nr, 0.25f);
  const double flops = 2.0 * mr * nr * kc;
  const int calls = static_cast<int>(4e9 / flops);
  std::vector<double> g;
  for (int r = 0; r <= reps; ++r) {  // the first batch warms up
    const double t0 = now_s();
    for (int i = 0; i < calls; ++i) kernel(kc, a.data(), kc, b, c.data(), nr, 1.0f, 0.0f, mr, nr, nullptr, 0, nullptr);
    if (r > 0) g.push_back(flops * calls / (now_s() - t0) * 1e-9);
  }
  std::free(b);
  return median(g);
}
#endif

}  // namespace

int main(int argc, char** argv) {
  double peak = 0;
  int reps = 7;
  const char* filter = nullptr;
  int threads = 1;
  int64_t cold_bytes = 0;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--peak") && i + 1 < argc) peak = std::atof(argv[++i]);
    else if (!std::strcmp(argv[i], "--reps") && i + 1 < argc) reps = std::max(1, std::atoi(argv[++i]));
    else if (!std::strcmp(argv[i], "--filter") && i + 1 < argc) filter = argv[++i];
    else if (!std::strcmp(argv[i], "--threads") && i + 1 < argc) threads = std::max(1, std::atoi(argv[++i]));
    else if (!std::strcmp(argv[i], "--cold") && i + 1 < argc)
      cold_bytes = static_cast<int64_t>(std::max(0, std::atoi(argv[++i]))) << 20;
    else {
      std::fprintf(stderr,
                   "usage: dlrt_gemm_isa [--peak GFLOPS] [--reps R] [--filter SUBSTRING] [--threads N] [--cold MIB]\n");
      return 2;
    }
  }
  const bool has512 = detected_cpu_isa() >= CpuIsa::kAvx512;
  const bool amx = amx_bf16x3_available();
  std::unique_ptr<dlrt::ThreadPool> pool;
  if (threads > 1) pool = std::make_unique<dlrt::ThreadPool>(threads);
  {
    ScopedCpuIsa c2(CpuIsa::kAvx2);
    std::printf("# kernels: avx2 = %s", sgemm_kernel_name());
  }
  std::printf(", avx512 = %s%s; %d thread(s), %d alternating rounds, median\n", sgemm_kernel_name(),
              has512 ? "" : " (no AVX-512 on this CPU: both columns run AVX2)", threads, reps);
  // The caches the blocking follows (DLRT_CACHE_SIZES applied) and the blocks of each float tile.
  const GemmBlocking b5 = gemm_blocking(dlrt::device::cpu_caches(), kSgemmAvx512MR, kSgemmAvx512NR, 4);
  const GemmBlocking b2 = gemm_blocking(dlrt::device::cpu_caches(), kSgemmAvx2MR, kSgemmAvx2NR, 4);
  std::printf("# caches: %s\n", dlrt::device::describe_cpu_caches(dlrt::device::cpu_caches()).c_str());
  std::printf("# blocks: %dx%d kc %lld mc %lld nc %lld, %dx%d kc %lld mc %lld nc %lld\n", kSgemmAvx512MR,
              kSgemmAvx512NR, static_cast<long long>(b5.kc), static_cast<long long>(b5.mc),
              static_cast<long long>(b5.nc), kSgemmAvx2MR, kSgemmAvx2NR, static_cast<long long>(b2.kc),
              static_cast<long long>(b2.mc), static_cast<long long>(b2.nc));
#if defined(__x86_64__)
  if (detected_cpu_isa() >= CpuIsa::kAvx2) {
    const double m2 = kernel_in_l1(sgemm_rows_kernel_at(SimdWidth::k256), kSgemmAvx2MR, kSgemmAvx2NR, reps);
    const double m5 = has512 ? kernel_in_l1(sgemm_rows_kernel_at(SimdWidth::k512), kSgemmAvx512MR, kSgemmAvx512NR, reps) : m2;
    std::printf("# microkernel alone, operands in L1 (kc 192), 1 thread: avx2 %.1f GF/s, avx512 %.1f GF/s", m2, m5);
    if (peak > 0 && threads == 1) std::printf(" (%.1f%%, %.1f%% of --peak)", 100 * m2 / peak, 100 * m5 / peak);
    std::printf("\n");
  }
#endif
  std::printf("%-24s %5s %6s %5s %10s %10s %7s", "shape", "M", "N", "K", "avx2 GF/s", "a512 GF/s", "ratio");
  if (peak > 0) std::printf(" %7s %7s", "avx2 %", "a512 %");
  if (amx) std::printf(" %10s %9s", "amx GF/s", "amx/a512");
  if (amx && peak > 0) std::printf(" %7s", "amx %");
  std::printf("\n");
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-1, 1);
  for (const Shape& s : kShapes) {
    if (filter && !std::strstr(s.name, filter)) continue;
    std::vector<float> a(s.M * s.K), b(s.K * s.N), c(s.M * s.N);
    for (auto& x : a) x = u(rng);
    for (auto& x : b) x = u(rng);
    // About 40 ms per batch at 100 GFLOP/s (4 ms for the memory-bound GEMV).
    const int calls = std::max(1, static_cast<int>((s.M == 1 ? 4e8 : 4e9) / (2.0 * s.M * s.N * s.K)));
    const bool with_amx = amx && !s.plain_bt;
    std::vector<double> g2, g5, gx;
    for (int r = 0; r < reps; ++r) {
      g2.push_back(run_batch(s, CpuIsa::kAvx2, a, b, c, calls, pool.get(), GemmPrecision::kF32, cold_bytes));
      g5.push_back(run_batch(s, CpuIsa::kAvx512, a, b, c, calls, pool.get(), GemmPrecision::kF32, cold_bytes));
      if (with_amx)
        gx.push_back(run_batch(s, CpuIsa::kAvx512, a, b, c, calls, pool.get(), GemmPrecision::kBf16x3, cold_bytes));
    }
    const double m2 = median(g2), m5 = median(g5);
    std::printf("%-24s %5lld %6lld %5lld %10.1f %10.1f %7.2f", s.name, static_cast<long long>(s.M),
                static_cast<long long>(s.N), static_cast<long long>(s.K), m2, m5, m5 / m2);
    if (peak > 0) std::printf(" %6.1f%% %6.1f%%", 100 * m2 / peak, 100 * m5 / peak);
    if (with_amx) {
      const double mx = median(gx);
      std::printf(" %10.1f %9.2f", mx, mx / m5);
      if (peak > 0) std::printf(" %6.1f%%", 100 * mx / peak);
    }
    std::printf("\n");
    std::fflush(stdout);
  }
  return 0;
}
