// The float GEMM on every microkernel this CPU can run (generic, the 128-bit
// 6x16 of the neon level, AVX2 6x16, AVX-512 8x48), forced in-process with ScopedCpuIsa, against a plain
// double-precision reference: sizes 1..70 around the tile edges, transposes,
// beta 0/1/other, fused epilogues, pre-packed operands (and the tile layout
// they record), BRowSource operands, and operands packed under one ISA
// consumed under another.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "backends/cpu/kernels/gemm.h"
#include "backends/cpu/kernels/gemm_internal.h"
#include "backends/cpu/kernels/isa.h"
#include "isa_test_util.h"

namespace dlrt::cpu {
namespace {

struct Mat {
  int64_t rows = 0, cols = 0, ld = 0;
  std::vector<float> v;
  float at(int64_t r, int64_t c) const { return v[static_cast<size_t>(r * ld + c)]; }
};

Mat random_mat(int64_t rows, int64_t cols, int64_t pad, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(-1, 1);
  Mat m{rows, cols, cols + pad, {}};
  m.v.resize(static_cast<size_t>(std::max<int64_t>(rows, 1) * m.ld));
  for (auto& x : m.v) x = u(rng);
  return m;
}

// op(A)(i, p) and op(B)(p, j) from the stored matrices.
double op_at(const Mat& m, bool trans, int64_t r, int64_t c) { return trans ? m.at(c, r) : m.at(r, c); }

// C = epilogue(alpha * op(A) op(B) + beta * C0) in double.
std::vector<double> reference(int64_t M, int64_t N, int64_t K, double alpha, const Mat& a, bool ta, const Mat& b,
                              bool tb, double beta, const std::vector<float>& c0, int64_t ldc,
                              const GemmEpilogue* ep) {
  std::vector<double> out(static_cast<size_t>(M * N));
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double s = 0;
      for (int64_t p = 0; p < K; ++p) s += op_at(a, ta, i, p) * op_at(b, tb, p, j);
      double v = alpha * s + (beta == 0 ? 0.0 : beta * c0[static_cast<size_t>(i * ldc + j)]);
      if (ep) {
        if (ep->row_bias) v += ep->row_bias[i];
        if (ep->col_bias) v += ep->col_bias[j];
        if (ep->residual) v += ep->residual[i * ep->ldr + j];
        v = activate(ep->act, static_cast<float>(v));
      }
      out[static_cast<size_t>(i * N + j)] = v;
    }
  return out;
}

// Checks C (M x N inside ldc) against `want`, and that the padding columns kept `c0`.
void expect_matches(const std::vector<float>& c, const std::vector<double>& want, const std::vector<float>& c0,
                    int64_t M, int64_t N, int64_t K, int64_t ldc, const std::string& what) {
  const double tol = 2e-5 * std::sqrt(static_cast<double>(K) + 1) * 4;
  for (int64_t i = 0; i < M; ++i) {
    for (int64_t j = 0; j < N; ++j) {
      const double w = want[static_cast<size_t>(i * N + j)];
      ASSERT_NEAR(c[static_cast<size_t>(i * ldc + j)], w, tol * (1 + std::fabs(w)))
          << what << " at (" << i << "," << j << ")";
    }
    for (int64_t j = N; j < ldc; ++j) {
      const float got = c[static_cast<size_t>(i * ldc + j)], was = c0[static_cast<size_t>(i * ldc + j)];
      if (std::isnan(was)) ASSERT_TRUE(std::isnan(got)) << what << " wrote padding column " << j;
      else ASSERT_EQ(got, was) << what << " wrote padding column " << j;
    }
  }
}

std::string describe(CpuIsa isa, int64_t M, int64_t N, int64_t K, bool ta, bool tb, float beta) {
  return std::string(cpu_isa_name(isa)) + " (" + sgemm_kernel_name() + ") M=" + std::to_string(M) +
         " N=" + std::to_string(N) + " K=" + std::to_string(K) + " ta=" + std::to_string(ta) +
         " tb=" + std::to_string(tb) + " beta=" + std::to_string(beta);
}

// Sizes around both tiles' edges (6, 8, 16, 48; 48 + 1..7 for the AVX-512 narrow last panel) plus random ones in 1..70.
std::vector<int64_t> edge_sizes(std::mt19937& rng) {
  std::vector<int64_t> s{1, 2, 3, 4, 5, 6, 7, 8, 9, 15, 16, 17, 31, 32, 33, 47, 48, 49, 50, 51, 52, 53, 54, 55, 64, 70};
  for (int i = 0; i < 4; ++i) s.push_back(1 + static_cast<int64_t>(rng() % 70));
  return s;
}

// runnable_isas() and the neon level (the 128-bit kernels: aarch64's, on
// x86 compiled to SSE) where this CPU reaches it.
std::vector<CpuIsa> gemm_isas() {
  std::vector<CpuIsa> r = testing::runnable_isas();
  ScopedCpuIsa neon(CpuIsa::kNeon);
  if (cpu_isa() == CpuIsa::kNeon) r.insert(r.begin() + 1, CpuIsa::kNeon);
  return r;
}

TEST(SgemmIsa, KernelNameFollowsTheIsaCap) {
  {
    ScopedCpuIsa cap(CpuIsa::kGeneric);
    EXPECT_STREQ(sgemm_kernel_name(), "generic");
  }
  {
    ScopedCpuIsa cap(CpuIsa::kNeon);
    if (cpu_isa() == CpuIsa::kNeon) {
      EXPECT_STREQ(sgemm_kernel_name(), "neon-6x16");
    }
  }
  if (detected_cpu_isa() < CpuIsa::kAvx2) GTEST_SKIP() << "CPU has no AVX2/FMA: only the generic kernel runs here";
  {
    ScopedCpuIsa cap(CpuIsa::kAvx2);
    EXPECT_STREQ(sgemm_kernel_name(), "avx2-fma");
  }
  if (detected_cpu_isa() < CpuIsa::kAvx512) GTEST_SKIP() << "CPU has no AVX-512: the 8x48 kernel cannot run here";
  ScopedCpuIsa cap(CpuIsa::kAvx512);
  EXPECT_STREQ(sgemm_kernel_name(), "avx512-8x48");
}

TEST(SgemmIsa, EveryKernelMatchesReferenceOnEdgeSizes) {
  std::mt19937 rng(11);
  ThreadPool pool(2);
  for (CpuIsa isa : gemm_isas()) {
    ScopedCpuIsa cap(isa);
    const std::vector<int64_t> sizes = edge_sizes(rng);
    int it = 0;
    for (int64_t M : sizes) {
      for (int64_t N : sizes) {
        ++it;
        const int64_t K = it % 9 == 0 ? 300 + static_cast<int64_t>(rng() % 400) : 1 + static_cast<int64_t>(rng() % 70);
        const bool ta = rng() % 2, tb = rng() % 2;
        const float beta = it % 3 == 0 ? 0.0f : (it % 3 == 1 ? 1.0f : -0.75f);
        const float alpha = it % 4 == 0 ? 1.0f : 0.5f;
        const Mat a = ta ? random_mat(K, M, rng() % 3, rng) : random_mat(M, K, rng() % 3, rng);
        const Mat b = tb ? random_mat(N, K, rng() % 3, rng) : random_mat(K, N, rng() % 3, rng);
        const int64_t ldc = N + static_cast<int64_t>(rng() % 3);
        std::vector<float> c0 = random_mat(M, ldc, 0, rng).v;
        if (beta == 0.0f)  // C must not be read when beta == 0
          for (auto& x : c0) x = std::numeric_limits<float>::quiet_NaN();
        std::vector<float> c = c0;
        sgemm(ta, tb, M, N, K, alpha, a.v.data(), a.ld, b.v.data(), b.ld, beta, c.data(), ldc,
              it % 2 ? &pool : nullptr);
        expect_matches(c, reference(M, N, K, alpha, a, ta, b, tb, beta, c0, ldc, nullptr), c0, M, N, K, ldc,
                       describe(isa, M, N, K, ta, tb, beta));
        if (HasFatalFailure()) return;
      }
    }
  }
}

TEST(SgemmIsa, EveryKernelWithPackedOperandsAndEpilogue) {
  std::mt19937 rng(12);
  ThreadPool pool(2);
  const ActKind acts[] = {ActKind::kNone, ActKind::kRelu, ActKind::kSigmoid, ActKind::kTanh};
  for (CpuIsa isa : gemm_isas()) {
    ScopedCpuIsa cap(isa);
    for (int it = 0; it < 60; ++it) {
      const int64_t M = 1 + rng() % 70, N = 2 + rng() % 69;  // N == 1 would be a matrix-vector product
      const int64_t K = it % 7 == 0 ? 257 + static_cast<int64_t>(rng() % 300) : 1 + static_cast<int64_t>(rng() % 70);
      const bool ta = rng() % 2, tb = rng() % 2;
      const Mat a = ta ? random_mat(K, M, 0, rng) : random_mat(M, K, 0, rng);
      const Mat b = tb ? random_mat(N, K, 0, rng) : random_mat(K, N, 0, rng);
      const Mat row_bias = random_mat(1, M, 0, rng), col_bias = random_mat(1, N, 0, rng);
      const Mat residual = random_mat(M, N, 3, rng);
      GemmEpilogue ep;
      if (it % 2 == 0) ep.row_bias = row_bias.v.data();
      if (it % 3 != 1) ep.col_bias = col_bias.v.data();
      if (it % 4 >= 2) {
        ep.residual = residual.v.data();
        ep.ldr = residual.ld;
      }
      ep.act.kind = acts[it % 4];
      const float beta = it % 5 == 0 ? 1.0f : 0.0f;
      const int64_t ldc = N + 1;
      std::vector<float> c0 = random_mat(M, ldc, 0, rng).v;
      if (beta == 0.0f)
        for (auto& x : c0) x = std::numeric_limits<float>::quiet_NaN();
      const auto want = reference(M, N, K, 1.0, a, ta, b, tb, beta, c0, ldc, &ep);

      auto pa = PackedMatrix::pack_a(ta, M, K, a.v.data(), a.ld);
      auto pb = PackedMatrix::pack_b(tb, K, N, b.v.data(), b.ld);
      const int want_mr = isa == CpuIsa::kAvx512 ? 8 : 6, want_nr = isa == CpuIsa::kAvx512 ? 48 : 16;
      ASSERT_EQ(pa->mr(), want_mr);
      ASSERT_EQ(pa->nr(), want_nr);
      ASSERT_EQ(pb->mr(), want_mr);
      ASSERT_EQ(pb->nr(), want_nr);
      const SgemmOperand plain_a{a.v.data(), a.ld, ta, nullptr, nullptr}, plain_b{b.v.data(), b.ld, tb, nullptr, nullptr};
      const SgemmOperand packed_a{nullptr, 0, false, pa.get(), nullptr}, packed_b{nullptr, 0, false, pb.get(), nullptr};
      const std::pair<SgemmOperand, SgemmOperand> combos[] = {
          {plain_a, plain_b}, {packed_a, plain_b}, {plain_a, packed_b}, {packed_a, packed_b}};
      int ci = 0;
      for (const auto& [oa, ob] : combos) {
        std::vector<float> c = c0;
        ASSERT_TRUE(sgemm_ex(M, N, K, 1.0f, oa, ob, beta, c.data(), ldc, &ep, ci % 2 ? &pool : nullptr).ok());
        expect_matches(c, want, c0, M, N, K, ldc,
                       describe(isa, M, N, K, ta, tb, beta) + " combo " + std::to_string(ci) + " act " +
                           std::to_string(static_cast<int>(ep.act.kind)));
        if (HasFatalFailure()) return;
        ++ci;
      }
    }
  }
}

TEST(SgemmIsa, EveryKernelWithRowSource) {
  std::mt19937 rng(13);
  for (CpuIsa isa : gemm_isas()) {
    ScopedCpuIsa cap(isa);
    for (int it = 0; it < 40; ++it) {
      const int64_t M = 1 + rng() % 70, N = 2 + rng() % 69;
      const int64_t K = it % 5 == 0 ? 260 + static_cast<int64_t>(rng() % 300) : 1 + static_cast<int64_t>(rng() % 70);
      const bool ta = rng() % 2;
      const Mat a = ta ? random_mat(K, M, 1, rng) : random_mat(M, K, 1, rng);
      const Mat b = random_mat(K, N, 0, rng);
      BRowSource rows = [&](int64_t p, int64_t j0, int64_t n, float* dst) {
        ASSERT_TRUE(p >= 0 && p < K && j0 >= 0 && j0 + n <= N) << "row source asked for p=" << p << " j0=" << j0;
        for (int64_t j = 0; j < n; ++j) dst[j] = b.at(p, j0 + j);
      };
      std::vector<float> c0(static_cast<size_t>(M * N), std::numeric_limits<float>::quiet_NaN());
      std::vector<float> c = c0;
      sgemm_rows(ta, M, N, K, 1.0f, a.v.data(), a.ld, rows, 0.0f, c.data(), N, nullptr);
      expect_matches(c, reference(M, N, K, 1.0, a, ta, b, false, 0.0, c0, N, nullptr), c0, M, N, K, N,
                     describe(isa, M, N, K, ta, false, 0.0f) + " row source");
      if (HasFatalFailure()) return;
    }
  }
}

// The in-place A cases of InPlaceAAgainstPackedBMatchesReference under the current ISA cap.
void check_in_place_a(CpuIsa isa) {
  std::mt19937 rng(15);
  ThreadPool pool2(2), pool3(3);
  struct Case {
    int64_t M, N, K;
  };
  std::vector<Case> cases{{16, 384, 384}, {16, 1536, 384}, {345, 1000, 450}, {700, 100, 200}, {9, 49, 1536},
                          {2, 800, 70},   {5, 48, 193},    {64, 96, 384},
                          // Column blocks that do not divide among the threads (22 and 42
                          // panels of 48 in blocks of at most 10 on a 1 MiB L2).
                          {32, 1024, 256}, {8, 2000, 64}};
  for (int i = 0; i < 24; ++i)
    cases.push_back({2 + static_cast<int64_t>(rng() % 70), 2 + static_cast<int64_t>(rng() % 120),
                     1 + static_cast<int64_t>(rng() % 420)});
  int it = 0;
  for (const Case& cs : cases) {
    ++it;
    const int64_t M = cs.M, N = cs.N, K = cs.K;
    Mat a = random_mat(M, K, it % 3, rng);
    a.v.resize(static_cast<size_t>((M - 1) * a.ld + K));  // nothing after the last row's K values
    const Mat b = random_mat(K, N, 0, rng);
    const Mat col_bias = random_mat(1, N, 0, rng), residual = random_mat(M, N, 1, rng);
    GemmEpilogue ep;
    if (it % 2) ep.col_bias = col_bias.v.data();
    if (it % 3 == 0) {
      ep.residual = residual.v.data();
      ep.ldr = residual.ld;
    }
    ep.act.kind = it % 4 == 1 ? ActKind::kRelu : it % 4 == 3 ? ActKind::kGelu : ActKind::kNone;
    const float beta = it % 5 == 0 ? 1.0f : it % 5 == 1 ? -0.5f : 0.0f;
    const float alpha = it % 4 == 2 ? 0.25f : 1.0f;
    const int64_t ldc = N + (it % 2);
    std::vector<float> c0 = random_mat(M, ldc, 0, rng).v;
    if (beta == 0.0f)
      for (auto& x : c0) x = std::numeric_limits<float>::quiet_NaN();
    const auto want = reference(M, N, K, alpha, a, false, b, false, beta, c0, ldc, &ep);
    auto pb = PackedMatrix::pack_b(false, K, N, b.v.data(), b.ld);
    ThreadPool* pools[] = {nullptr, &pool2, &pool3};
    for (ThreadPool* p : pools) {
      std::vector<float> c = c0;
      ASSERT_TRUE(sgemm_ex(M, N, K, alpha, SgemmOperand{a.v.data(), a.ld, false, nullptr, nullptr},
               SgemmOperand{nullptr, 0, false, pb.get(), nullptr}, beta, c.data(), ldc, &ep, p).ok());
      expect_matches(c, want, c0, M, N, K, ldc,
                     describe(isa, M, N, K, false, false, beta) + " in-place A, threads " +
                         std::to_string(p ? p->num_threads() : 1));
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

// A row-major op(A) against a pre-packed B reads A in place on the AVX2
// 6x16 tile and on the AVX-512 8x48 one (one parallel section per product,
// tasks over row blocks x runs of B panels): shapes with several row blocks
// (M > 144 and > 336), column blocks and K slices (K > 192 and > 256), M
// tails 1..7, 1-3 threads, alpha/beta and every epilogue part. The A rows
// end exactly at the end of their buffer.
TEST(SgemmIsa, InPlaceAAgainstPackedBMatchesReference) {
  std::vector<CpuIsa> isas;
  for (CpuIsa isa : gemm_isas())
    if (isa == CpuIsa::kNeon) isas.push_back(isa);
  if (detected_cpu_isa() >= CpuIsa::kAvx2) isas.push_back(CpuIsa::kAvx2);
  if (detected_cpu_isa() >= CpuIsa::kAvx512) isas.push_back(CpuIsa::kAvx512);
  if (isas.empty()) GTEST_SKIP() << "CPU runs no simd/ kernels: the in-place A path needs a vector tile";
  for (CpuIsa isa : isas) {
    ScopedCpuIsa cap(isa);
    check_in_place_a(isa);
    if (HasFatalFailure()) return;
  }
}

// Every tile shape of each width's kernels (gemm_simd.h), called directly:
// the packed-A edge kernel and the in-place-A rows kernel on every mr x nr
// up to the tile, k depths around the unrolled loops and the prefetch groups,
// alpha, beta 0 / 1 / other and the rows kernel's column bias and residual;
// nothing outside the mr x nr block of C written.
TEST(SgemmIsa, EveryWidthOnEveryEdgeTile) {
  std::mt19937 rng(16);
  std::uniform_real_distribution<float> u(-1, 1);
  int widths = 0;
  for (CpuIsa isa : gemm_isas()) {
    if (isa == CpuIsa::kGeneric) continue;
    ScopedCpuIsa cap(isa);
    const gemm_detail::SLayout layout = gemm_detail::pick_slayout();
    const gemm_detail::Kernels<float> k = gemm_detail::skernels_for(layout);
    const gemm_detail::RowsPath rows = gemm_detail::rows_path_for(layout);
    ASSERT_TRUE(k.edge && rows.kernel) << cpu_isa_name(isa) << ": no vector kernel";
    ++widths;
    const int MR = layout == gemm_detail::SLayout::kAvx512 ? 8 : 6, NR = layout == gemm_detail::SLayout::kAvx512 ? 48 : 16;
    const int64_t ldc = NR + 3;
    for (int64_t kc : {1, 3, 8, 37, 130}) {
      std::vector<float> a(static_cast<size_t>(MR * kc)), b(static_cast<size_t>(NR * kc) + 16), bias(NR);
      std::vector<float> res(static_cast<size_t>(MR * ldc)), c0(static_cast<size_t>((MR + 1) * ldc));
      for (auto* v : {&a, &b, &bias, &res, &c0})
        for (auto& x : *v) x = u(rng);
      float* bp = b.data() + (16 - reinterpret_cast<uintptr_t>(b.data()) / sizeof(float) % 16) % 16;  // 64-byte aligned
      for (int mr = 1; mr <= MR; ++mr) {
        for (int nr = 1; nr <= NR; ++nr) {
          // The panels' padding (rows past mr, columns past nr) is zero, as packing leaves it.
          std::vector<float> ap = a, bpad(bp, bp + NR * kc);
          for (int64_t p = 0; p < kc; ++p) {
            for (int i = mr; i < MR; ++i) ap[p * MR + i] = 0;
            for (int j = nr; j < NR; ++j) bp[p * NR + j] = 0;
          }
          const int it = mr * NR + nr;
          const float alpha = it % 4 == 0 ? 0.5f : 1.0f, beta = it % 3 == 0 ? 0.0f : it % 3 == 1 ? 1.0f : -0.75f;
          const bool with_add = it % 2 == 1;
          // A's rows in place: row i at a_rows + i * kc (the packed panel transposed).
          std::vector<float> a_rows(static_cast<size_t>(mr * kc));
          for (int i = 0; i < mr; ++i)
            for (int64_t p = 0; p < kc; ++p) a_rows[i * kc + p] = ap[p * MR + i];
          for (int kind = 0; kind < 2; ++kind) {
            std::vector<float> c = c0;
            TileAdd add{bias.data(), res.data(), ldc};
            if (kind == 0) k.edge(kc, ap.data(), bp, c.data(), ldc, alpha, beta, mr, nr);
            else
              rows.kernel(kc, a_rows.data(), kc, bp, c.data(), ldc, alpha, beta, mr, nr, bp, kc,
                          with_add ? &add : nullptr);
            for (int i = 0; i <= MR; ++i)
              for (int64_t j = 0; j < ldc; ++j) {
                const size_t at = static_cast<size_t>(i * ldc + j);
                if (i >= mr || j >= nr) {
                  ASSERT_EQ(c[at], c0[at]) << cpu_isa_name(isa) << " wrote outside the tile at " << i << "," << j
                                           << " (mr " << mr << " nr " << nr << " kind " << kind << ")";
                  continue;
                }
                double s = 0;
                for (int64_t p = 0; p < kc; ++p) s += double(ap[p * MR + i]) * bp[p * NR + j];
                double want = alpha * s + (beta == 0 ? 0.0 : beta * double(c0[at]));
                if (kind == 1 && with_add) want += double(bias[j]) + res[i * ldc + j];
                ASSERT_NEAR(c[at], want, 1e-5 * (kc + 4) * (1 + std::fabs(want)))
                    << cpu_isa_name(isa) << " kind " << kind << " mr " << mr << " nr " << nr << " kc " << kc
                    << " at " << i << "," << j;
              }
          }
          std::copy(bpad.begin(), bpad.end(), bp);
        }
      }
    }
  }
  if (widths == 0) GTEST_SKIP() << "CPU runs no simd/ kernels (detected " << cpu_isa_name(detected_cpu_isa()) << ")";
}

TEST(SgemmIsa, OperandsPackedForAvx512RunWhenTheIsaIsCappedLater) {
  if (detected_cpu_isa() < CpuIsa::kAvx512) GTEST_SKIP() << "CPU has no AVX-512: nothing is packed for the 8x48 tile";
  std::mt19937 rng(14);
  const int64_t M = 37, N = 45, K = 300;
  const Mat a = random_mat(M, K, 0, rng), b = random_mat(K, N, 0, rng);
  std::shared_ptr<const PackedMatrix> pa, pb;
  {
    ScopedCpuIsa cap(CpuIsa::kAvx512);
    pa = PackedMatrix::pack_a(false, M, K, a.v.data(), a.ld);
    pb = PackedMatrix::pack_b(false, K, N, b.v.data(), b.ld);
  }
  std::shared_ptr<const PackedMatrix> pb_narrow;
  {
    ScopedCpuIsa cap(CpuIsa::kAvx2);
    pb_narrow = PackedMatrix::pack_b(false, K, N, b.v.data(), b.ld);
  }
  ASSERT_EQ(pb_narrow->nr(), 16);
  std::vector<float> c0(static_cast<size_t>(M * N), 0.0f);
  const auto want = reference(M, N, K, 1.0, a, false, b, false, 0.0, c0, N, nullptr);
  const SgemmOperand plain_a{a.v.data(), a.ld, false, nullptr, nullptr};
  for (CpuIsa isa : {CpuIsa::kGeneric, CpuIsa::kNeon, CpuIsa::kAvx2}) {
    ScopedCpuIsa cap(isa);
    std::vector<float> c = c0;
    ASSERT_TRUE(sgemm_ex(M, N, K, 1.0f, SgemmOperand{nullptr, 0, false, pa.get(), nullptr},
             SgemmOperand{nullptr, 0, false, pb.get(), nullptr}, 0.0f, c.data(), N, nullptr, nullptr).ok());
    expect_matches(c, want, c0, M, N, K, N, std::string("8x48 operands under ") + cpu_isa_name(isa));
    c = c0;
    ASSERT_TRUE(sgemm_ex(M, N, K, 1.0f, plain_a, SgemmOperand{nullptr, 0, false, pb.get(), nullptr}, 0.0f, c.data(), N, nullptr,
             nullptr).ok());
    expect_matches(c, want, c0, M, N, K, N, std::string("8x48 B under ") + cpu_isa_name(isa));
  }
  {  // and a 6x16-packed B under AVX-512
    std::vector<float> c = c0;
    ASSERT_TRUE(sgemm_ex(M, N, K, 1.0f, plain_a, SgemmOperand{nullptr, 0, false, pb_narrow.get(), nullptr}, 0.0f, c.data(), N,
             nullptr, nullptr).ok());
    expect_matches(c, want, c0, M, N, K, N, "6x16 B under avx512");
  }
  std::vector<float> c = c0;
  EXPECT_EQ(sgemm_ex(M, N, K, 1.0f, SgemmOperand{nullptr, 0, false, pa.get(), nullptr},
                        SgemmOperand{nullptr, 0, false, pb_narrow.get(), nullptr}, 0.0f, c.data(), N, nullptr,
                        nullptr).code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace dlrt::cpu
