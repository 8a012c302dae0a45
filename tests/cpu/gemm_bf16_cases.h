// Precision bf16's GEMM cases shared by gemm_bf16_test.cpp (VDPBF16PS) and
// gemm_bf16_mmla_test.cpp (BFMMLA): a shape with its transposes, alpha/beta,
// threads and epilogue, its name, random operands for it, and C through
// bf16_gemm on one engine with B packed for bf16.
#pragma once

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "backends/cpu/kernels/gemm.h"
#include "backends/cpu/kernels/gemm_bf16.h"
#include "core/thread_pool.h"
#include "kernel_test_util.h"

namespace dlrt::cpu::bf16_cases {

struct Case {
  int64_t M, N, K;
  bool ta, tb;
  float alpha, beta;
  int threads;
  bool epilogue;
};

struct Operands {
  std::vector<float> A, B, c0, bias, res;
  int64_t lda, ldb, ldc;
};

// A case in words, for failure messages.
inline std::string name_of(const Case& cs) {
  return std::to_string(cs.M) + "x" + std::to_string(cs.N) + "x" + std::to_string(cs.K) + (cs.ta ? " ta" : "") +
         (cs.tb ? " tb" : "") + " alpha " + std::to_string(cs.alpha) + " beta " + std::to_string(cs.beta) +
         " threads " + std::to_string(cs.threads) + (cs.epilogue ? " bias+residual+relu" : "");
}

// Leading dimensions past the shape's, so that strides are exercised; an
// empty operand (K = 0) still gets one element, so its pointer is valid.
inline Operands make_run(const Case& cs, std::mt19937& rng) {
  auto floats = [&rng](int64_t n) { return testing::random_floats(static_cast<size_t>(std::max<int64_t>(1, n)), rng); };
  Operands r;
  r.lda = (cs.ta ? cs.M : cs.K) + 3;
  r.ldb = (cs.tb ? cs.K : cs.N) + 1;
  r.ldc = cs.N + 5;
  r.A = floats((cs.ta ? cs.K : cs.M) * r.lda);
  r.B = floats((cs.tb ? cs.N : cs.K) * r.ldb);
  r.c0 = floats(cs.M * r.ldc);
  r.bias = floats(cs.N);
  r.res = floats(cs.M * cs.N);
  return r;
}

// C through bf16_gemm with B packed for bf16, on `engine`.
inline std::vector<float> run_gemm(const Case& cs, const Operands& r, Bf16Engine engine) {
  std::vector<uint8_t> storage(bf16_packed_b_bytes(cs.K, cs.N) + 64);
  void* packed = reinterpret_cast<void*>((reinterpret_cast<uintptr_t>(storage.data()) + 63) & ~uintptr_t{63});
  bf16_pack_b(cs.tb, cs.K, cs.N, r.B.data(), r.ldb, packed);
  GemmEpilogue ep;
  if (cs.epilogue) {
    ep.col_bias = r.bias.data();
    ep.residual = r.res.data();
    ep.ldr = cs.N;
    ep.act.kind = ActKind::kRelu;
  }
  std::vector<float> c = r.c0;
  ThreadPool pool(cs.threads);
  bf16_gemm(cs.M, cs.N, cs.K, cs.alpha, r.A.data(), r.lda, cs.ta, packed, cs.beta, c.data(), r.ldc,
            cs.epilogue ? &ep : nullptr, &pool, engine);
  return c;
}

}  // namespace dlrt::cpu::bf16_cases
