// The bf16 GEMM's packing, blocking and scalar model (see gemm_bf16.h); the
// VDPBF16PS tile is in gemm_bf16_avx512.cpp, the BFMMLA tile and its model in
// gemm_bf16_neon.cpp.
//
// Blocking: op(A) is packed whole per call (rows in kBf16MR panels, K in
// pairs), then tasks of (a block of row panels, a run of column panels) run
// the full K per register tile, so each tile's sum is one accumulator from the
// first pair to the last, in the same order as the scalar model. A row block
// of packed A stays in L2 while the task walks its column panels.
#include "backends/cpu/kernels/gemm_bf16.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

#include "backends/cpu/kernel_util.h"
#include "backends/cpu/kernels/gemm_kernels.h"
#include "backends/cpu/kernels/isa.h"
#include "backends/cpu/scratch.h"
#include "device/cpu_features.h"

#if defined(__aarch64__)
#include "backends/cpu/kernels/simd/width.h"
#if defined(__linux__)
#include <asm/hwcap.h>
#include <sys/auxv.h>
#endif
#endif

namespace dlrt::cpu {
namespace {

constexpr int64_t kAL2Bytes = 512 << 10;  // packed A rows a task keeps in L2 while it walks B's panels

inline int64_t round_up(int64_t x, int64_t m) { return ceil_div(x, m) * m; }

// Denormals count as zero, keeping the sign (VDPBF16PS's inputs and result).
inline float flush(float x) { return std::fpclassify(x) == FP_SUBNORMAL ? std::copysign(0.0f, x) : x; }

inline uint32_t pair_of(float lo, float hi) {
  return static_cast<uint32_t>(bf16_round(lo)) | (static_cast<uint32_t>(bf16_round(hi)) << 16);
}

// One packed A panel (rows [i0, i0 + mr) of op(A)) without the instruction.
void pack_a_panel(bool trans, const float* A, int64_t lda, int64_t i0, int mr, int64_t K, uint32_t* dst) {
  const int64_t kp = ceil_div(K, 2);
  auto at = [&](int64_t i, int64_t k) { return trans ? A[k * lda + i] : A[i * lda + k]; };
  for (int64_t p = 0; p < kp; ++p) {
    const int64_t k = 2 * p;
    for (int r = 0; r < kBf16MR; ++r) {
      const int64_t i = i0 + r;
      dst[p * kBf16MR + r] = r < mr ? pair_of(at(i, k), k + 1 < K ? at(i, k + 1) : 0.0f) : 0u;
    }
  }
}

// The register tile on the scalar model: the same contract as bf16_kernel_avx512.
void kernel_model(int64_t kp, const uint32_t* a, const uint32_t* b, float* c, int64_t ldc, float alpha, float beta,
                  int mr, int nr) {
  for (int r = 0; r < mr; ++r)
    for (int j = 0; j < nr; ++j) {
      float acc = 0.0f;
      for (int64_t p = 0; p < kp; ++p) acc = bf16_dot_model(acc, a[p * kBf16MR + r], b[p * kBf16NR + j]);
      float x = alpha * acc;
      if (beta != 0.0f) x = std::fma(beta, c[r * ldc + j], x);
      c[r * ldc + j] = x;
    }
}

using TileKernel = void (*)(int64_t, const uint32_t*, const uint32_t*, float*, int64_t, float, float, int, int);
using TileEpilogue = void (*)(const GemmEpilogue&, float*, int64_t, int64_t, int64_t, int64_t, int64_t);

}  // namespace

#if defined(__aarch64__)
bool bf16_dot_available() { return device::cpu_features().bf16 && cpu_isa() >= CpuIsa::kNeon; }

const char* bf16_dot_unavailable_reason() {
#if defined(__linux__)
  const bool hwcap = (getauxval(AT_HWCAP2) & HWCAP2_BF16) != 0;
#else
  const bool hwcap = false;
#endif
  if (!device::cpu_features().bf16)
    return hwcap ? "DLRT_CPU_FEATURES_OFF turns bf16 off" : "this CPU has no BF16 extension (bfmmla)";
  if (cpu_isa() < CpuIsa::kNeon) return "DLRT_CPU_ISA is below neon";
  return "";
}

const char* bf16_engine_name() { return bf16_dot_available() ? "neon-bfmmla" : "scalar model"; }
#else
bool bf16_dot_available() { return device::cpu_features().avx512_bf16 && cpu_isa() >= CpuIsa::kAvx512; }

const char* bf16_dot_unavailable_reason() {
  if (!device::cpu_features().avx512_bf16) return "this CPU has no AVX512-BF16";
  if (cpu_isa() < CpuIsa::kAvx512) return "DLRT_CPU_ISA is below avx512";
  return "";
}

const char* bf16_engine_name() { return bf16_dot_available() ? "avx512_bf16" : "scalar model"; }
#endif

uint16_t bf16_round(float x) {
  const uint32_t u = std::bit_cast<uint32_t>(x);
  const uint32_t exp = u & 0x7f800000u, man = u & 0x007fffffu;
  if (exp == 0) return static_cast<uint16_t>((u >> 16) & 0x8000u);                       // zero, denormal
  if (exp == 0x7f800000u) return static_cast<uint16_t>((u >> 16) | (man ? 0x40u : 0u));  // inf, NaN
  return static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

float bf16_dot_model(float acc, uint32_t a, uint32_t b) {
  const float a0 = flush(bf16_widen(static_cast<uint16_t>(a))), a1 = flush(bf16_widen(static_cast<uint16_t>(a >> 16)));
  const float b0 = flush(bf16_widen(static_cast<uint16_t>(b))), b1 = flush(bf16_widen(static_cast<uint16_t>(b >> 16)));
  acc = flush(std::fma(a1, b1, flush(acc)));
  return flush(std::fma(a0, b0, acc));
}

size_t bf16_packed_b_bytes(int64_t K, int64_t N) {
  return static_cast<size_t>(ceil_div(std::max<int64_t>(K, 1), 2) * round_up(std::max<int64_t>(N, 1), kBf16NR)) * 4;
}

void bf16_pack_b(bool trans, int64_t K, int64_t N, const float* B, int64_t ldb, void* dst) {
  const int64_t kp = ceil_div(std::max<int64_t>(K, 1), 2), panels = ceil_div(std::max<int64_t>(N, 1), kBf16NR);
  auto* out = static_cast<uint32_t*>(dst);
#if defined(__x86_64__)
  if (!trans && K > 0 && bf16_dot_available()) {
    for (int64_t jp = 0; jp < panels; ++jp)
      bf16_pack_b_panel_avx512(B + jp * kBf16NR, ldb, K, static_cast<int>(std::min<int64_t>(kBf16NR, N - jp * kBf16NR)),
                               out + jp * kp * kBf16NR);
    return;
  }
#endif
  std::memset(dst, 0, bf16_packed_b_bytes(K, N));
  auto at = [&](int64_t k, int64_t j) { return k >= K ? 0.0f : trans ? B[j * ldb + k] : B[k * ldb + j]; };
  for (int64_t jp = 0; jp < panels; ++jp)
    for (int64_t p = 0; p < kp && 2 * p < K; ++p)
      for (int64_t jj = 0; jj < kBf16NR && jp * kBf16NR + jj < N; ++jj) {
        const int64_t j = jp * kBf16NR + jj;
        out[(jp * kp + p) * kBf16NR + jj] = pair_of(at(2 * p, j), at(2 * p + 1, j));
      }
}

size_t bf16_packed_a_bytes(int64_t M, int64_t K) {
  return static_cast<size_t>(round_up(std::max<int64_t>(M, 1), kBf16MR) * ceil_div(std::max<int64_t>(K, 1), 2)) * 4;
}

void bf16_pack_a(bool trans, int64_t M, int64_t K, const float* A, int64_t lda, void* dst, bool instruction) {
  const int64_t kp = ceil_div(std::max<int64_t>(K, 1), 2), panels = ceil_div(std::max<int64_t>(M, 1), kBf16MR);
  auto* out = static_cast<uint32_t*>(dst);
  for (int64_t ip = 0; ip < panels; ++ip) {
    const int mr = static_cast<int>(std::clamp<int64_t>(M - ip * kBf16MR, 0, kBf16MR));
    uint32_t* panel = out + ip * kp * kBf16MR;
    if (K <= 0 || mr == 0) {
      std::memset(panel, 0, static_cast<size_t>(kp * kBf16MR) * 4);
      continue;
    }
#if defined(__x86_64__)
    if (instruction && !trans) {
      bf16_pack_a_panel_avx512(A + ip * kBf16MR * lda, lda, mr, K, panel);
      continue;
    }
#else
    (void)instruction;
#endif
    pack_a_panel(trans, A, lda, ip * kBf16MR, mr, K, panel);
  }
}

void bf16_gemm(int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t lda, bool trans_a,
               const void* packed_b, float beta, float* C, int64_t ldc, const GemmEpilogue* ep, ThreadPool* pool,
               Bf16Engine engine) {
  if (M <= 0 || N <= 0) return;
  bool instruction = engine == Bf16Engine::kInstruction || (engine == Bf16Engine::kAuto && bf16_dot_available());
#if !defined(__x86_64__) && !defined(__aarch64__)
  instruction = false;
#endif
  if (ep && ep->empty()) ep = nullptr;
  const int64_t kp = ceil_div(std::max<int64_t>(K, 1), 2);
  const int64_t rpanels = ceil_div(M, kBf16MR), cpanels = ceil_div(N, kBf16NR);
  const double flops = 2.0 * static_cast<double>(M) * N * K;
  ThreadPool* tp = pool && pool->num_threads() > 1 && flops > 2.0e5 ? pool : nullptr;
  const int64_t threads = tp ? tp->num_threads() : 1;

  // op(A) converted once for the call, on the calling thread's scratch (the
  // tasks below only read it while this call waits for them).
  thread_local AlignedScratch a_scratch;
  auto* ap = a_scratch.get<uint32_t>(static_cast<size_t>(rpanels * kp * kBf16MR), AlignedScratch::Growth::kByHalf);
  auto pack = [&](int64_t b, int64_t e) {
    for (int64_t ip = b; ip < e; ++ip) {
      const int64_t i0 = ip * kBf16MR;
      const int mr = static_cast<int>(std::min<int64_t>(kBf16MR, M - i0));
      const float* src = trans_a ? A + i0 : A + i0 * lda;
      bf16_pack_a(trans_a, mr, K, src, lda, ap + ip * kp * kBf16MR, instruction);
    }
  };
  if (tp && rpanels >= 2 * threads)
    tp->parallel_for(rpanels, 1, pack);
  else
    pack(0, rpanels);

  // Row blocks whose packed A fits kAL2Bytes; column runs so that every thread has a task.
  const int64_t block_panels = std::max<int64_t>(1, kAL2Bytes / (kp * kBf16MR * 4));
  int64_t mblocks = ceil_div(rpanels, block_panels), nblocks = 1;
  if (mblocks < threads) nblocks = std::min(cpanels, ceil_div(threads, mblocks));
  const int64_t mpanels = ceil_div(rpanels, mblocks);
  mblocks = ceil_div(rpanels, mpanels);
  TileKernel kernel = kernel_model;
  TileEpilogue tile_ep = apply_epilogue;
#if defined(__x86_64__)
  if (instruction) kernel = bf16_kernel_avx512, tile_ep = apply_epilogue_zmm_tile;
#elif defined(__aarch64__)
  // One count per GEMM on the BFMMLA tile, so that a test can tell it ran (not a model).
  static SimdCallCounter neon_calls("gemm_bf16_neon");
  if (instruction) {
    kernel = bf16_kernel_neon;
    neon_calls.add(SimdWidth::k128);
  } else if (engine != Bf16Engine::kModel) {
    kernel = bf16_kernel_mmla_model;
  }
#endif
  const auto* bp = static_cast<const uint32_t*>(packed_b);
  auto task = [&](int64_t tb, int64_t te) {
    for (int64_t t = tb; t < te; ++t) {
      const int64_t mb = t / nblocks, nb = t % nblocks;
      const int64_t ipb = mb * mpanels, ipe = std::min(rpanels, ipb + mpanels);
      const int64_t jpb = nb * cpanels / nblocks, jpe = (nb + 1) * cpanels / nblocks;
      for (int64_t jp = jpb; jp < jpe; ++jp) {
        const int64_t j0 = jp * kBf16NR;
        const int nr = static_cast<int>(std::min<int64_t>(kBf16NR, N - j0));
        for (int64_t ip = ipb; ip < ipe; ++ip) {
          const int64_t i0 = ip * kBf16MR;
          const int mr = static_cast<int>(std::min<int64_t>(kBf16MR, M - i0));
          float* c = C + i0 * ldc + j0;
          kernel(K > 0 ? kp : 0, ap + ip * kp * kBf16MR, bp + jp * kp * kBf16NR, c, ldc, alpha, beta, mr, nr);
          if (ep) tile_ep(*ep, c, ldc, i0, j0, mr, nr);
        }
      }
    }
  };
  const int64_t ntasks = mblocks * nblocks;
  if (tp && ntasks > 1)
    tp->parallel_for(ntasks, 1, task);
  else
    task(0, ntasks);
}

}  // namespace dlrt::cpu
