// The 8-bit GEMM (gemm_int8.h): every kernel this CPU runs against an int64
// reference of sum_k (A - a_zp)(B - b_zp), reduced mod 2^32, on shapes that
// leave partial row blocks, column panels and k groups, with the extreme
// byte values (products that would saturate 16-bit pair sums) and every
// signedness and zero-point layout.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "backends/cpu/kernels/gemm_int8.h"
#include "backends/cpu/kernels/isa.h"
#include "core/thread_pool.h"

namespace dlrt::cpu {
namespace {

struct Case {
  int64_t M, K, N;
};

std::vector<int32_t> reference(const Case& c, const std::vector<uint8_t>& a, bool a_signed,
                               const std::vector<int32_t>& a_zp, const std::vector<uint8_t>& b, bool b_signed,
                               const std::vector<int32_t>& b_zp) {
  auto val = [](uint8_t raw, bool is_signed) { return is_signed ? int64_t{static_cast<int8_t>(raw)} : int64_t{raw}; };
  std::vector<int32_t> out(static_cast<size_t>(c.M * c.N));
  for (int64_t i = 0; i < c.M; ++i)
    for (int64_t j = 0; j < c.N; ++j) {
      int64_t s = 0;
      for (int64_t k = 0; k < c.K; ++k)
        s += (val(a[i * c.K + k], a_signed) - a_zp[a_zp.size() == 1 ? 0 : i]) *
             (val(b[k * c.N + j], b_signed) - b_zp[b_zp.size() == 1 ? 0 : j]);
      out[i * c.N + j] = static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(s)));
    }
  return out;
}

TEST(GemmInt8, EveryKernelMatchesReference) {
  const std::vector<Case> cases = {{1, 1, 1},   {3, 5, 7},    {8, 4, 48},  {9, 13, 50},   {17, 64, 33},
                                   {2, 3, 97},  {31, 130, 17}, {6, 384, 96}, {13, 1537, 20}};
  std::mt19937 rng(11);
  ThreadPool pool(2);
  // Every kernel; the generic one also with the ISA capped (its portable zero-point correction).
  std::vector<std::pair<const char*, CpuIsa>> runs;
  for (const char* kernel : int8_gemm_kernels()) runs.push_back({kernel, detected_cpu_isa()});
  runs.push_back({"generic", CpuIsa::kGeneric});
  for (const auto& [kernel, isa] : runs) {
    ScopedCpuIsa cap(isa);
    ScopedInt8Kernel use(kernel);
    for (const Case& c : cases)
      for (int signs = 0; signs < 4; ++signs) {
        const bool a_signed = signs & 1, b_signed = signs & 2;
        SCOPED_TRACE(std::string(kernel) + " (" + cpu_isa_name(isa) + ") M " + std::to_string(c.M) + " K " + std::to_string(c.K) + " N " +
                     std::to_string(c.N) + (a_signed ? " s8" : " u8") + (b_signed ? " x s8" : " x u8"));
        std::vector<uint8_t> a(static_cast<size_t>(c.M * c.K)), b(static_cast<size_t>(c.K * c.N));
        // Half the cases with only the extreme bytes (0, 127, 128, 255), the others random.
        const bool extreme = (c.K + signs) % 2 == 0;
        for (auto& v : a) v = extreme ? static_cast<uint8_t>((rng() & 1) ? 255 : 128 - (rng() & 1)) : rng();
        for (auto& v : b) v = extreme ? static_cast<uint8_t>((rng() & 1) ? 128 : 127 - 127 * (rng() & 1)) : rng();
        auto zp_of = [&](bool is_signed) { return is_signed ? static_cast<int32_t>(rng() % 256) - 128 : int32_t(rng() % 256); };
        for (int layout = 0; layout < 3; ++layout) {  // none, one for all, per row/column
          std::vector<int32_t> a_zp(layout == 2 ? c.M : 1, 0), b_zp(layout == 2 ? c.N : 1, 0);
          if (layout > 0) {
            for (auto& z : a_zp) z = zp_of(a_signed);
            for (auto& z : b_zp) z = zp_of(b_signed);
          }
          const auto packed = PackedInt8B::pack(false, c.K, c.N, b.data(), c.N, b_signed);
          std::vector<int32_t> got(static_cast<size_t>(c.M * c.N), -1);
          gemm_u8s8(c.M, c.N, c.K, a.data(), c.K, a_signed, layout ? a_zp.data() : nullptr, layout == 2 ? 1 : 0,
                    *packed, layout ? b_zp.data() : nullptr, layout == 2 ? 1 : 0, got.data(), c.N,
                    layout == 1 ? &pool : nullptr);
          ASSERT_EQ(got, reference(c, a, a_signed, a_zp, b, b_signed, b_zp)) << "zero-point layout " << layout;
        }
      }
  }
}

TEST(GemmInt8, TransposedPackingAndRowStrides) {
  const Case c{5, 21, 19};
  std::mt19937 rng(5);
  std::vector<uint8_t> a(static_cast<size_t>(c.M * 30)), bt(static_cast<size_t>(c.N * 25));
  for (auto& v : a) v = rng();
  for (auto& v : bt) v = rng();
  std::vector<uint8_t> a_dense(static_cast<size_t>(c.M * c.K)), b(static_cast<size_t>(c.K * c.N));
  for (int64_t i = 0; i < c.M; ++i)
    for (int64_t k = 0; k < c.K; ++k) a_dense[i * c.K + k] = a[i * 30 + k];
  for (int64_t k = 0; k < c.K; ++k)
    for (int64_t j = 0; j < c.N; ++j) b[k * c.N + j] = bt[j * 25 + k];
  const int32_t a_zp = 3, b_zp = -7;
  const auto packed = PackedInt8B::pack(true, c.K, c.N, bt.data(), 25, true);
  std::vector<int32_t> got(static_cast<size_t>(c.M * 40), 0);
  gemm_u8s8(c.M, c.N, c.K, a.data(), 30, false, &a_zp, 0, *packed, &b_zp, 0, got.data(), 40, nullptr);
  const auto want = reference(c, a_dense, false, {a_zp}, b, true, {b_zp});
  for (int64_t i = 0; i < c.M; ++i)
    for (int64_t j = 0; j < c.N; ++j) ASSERT_EQ(got[i * 40 + j], want[i * c.N + j]) << i << "," << j;
}

}  // namespace
}  // namespace dlrt::cpu
