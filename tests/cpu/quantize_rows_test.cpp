// The vector loops of quantize_rows.h against their scalar definitions, on
// the portable path and on every vector ISA this CPU has.
#include "backends/cpu/kernels/quantize_rows.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <limits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "backends/cpu/kernels/isa.h"
#include "backends/cpu/kernels/simd/width.h"
#include "isa_test_util.h"
#include "simd_width_test_util.h"

namespace dlrt::cpu {
namespace {

TEST(QuantizeRows, LookupBytesEveryLengthAndIsa) {
  std::mt19937 rng(3);
  uint8_t table[256];
  for (auto& v : table) v = static_cast<uint8_t>(rng());
  std::vector<uint8_t> src(1000);
  for (auto& v : src) v = static_cast<uint8_t>(rng());
  for (int i = 0; i < 256; ++i) src[static_cast<size_t>(i)] = static_cast<uint8_t>(i);  // every index once
  for (CpuIsa isa : testing::runnable_isas()) {
    ScopedCpuIsa cap(isa);
    for (int64_t n : {0, 1, 63, 64, 65, 127, 256, 1000}) {
      SCOPED_TRACE(std::string(cpu_isa_name(isa)) + " n " + std::to_string(n));
      std::vector<uint8_t> got(static_cast<size_t>(n) + 1, 0xAB);
      lookup_bytes(table, src.data(), n, got.data());
      for (int64_t i = 0; i < n; ++i) ASSERT_EQ(got[static_cast<size_t>(i)], table[src[static_cast<size_t>(i)]]) << i;
      EXPECT_EQ(got[static_cast<size_t>(n)], 0xAB) << "wrote past n";
    }
  }
}

TEST(QuantizeRows, CopyStridedBytesReadsOnlyWhatItNeeds) {
  std::vector<uint8_t> src(300);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint8_t>(i * 7 + 3);
  for (CpuIsa isa : testing::runnable_isas()) {
    ScopedCpuIsa cap(isa);
    for (int64_t stride : {1, 2, 3}) {
      for (int64_t n : {0, 1, 31, 32, 33, 64, 100}) {
        SCOPED_TRACE(std::string(cpu_isa_name(isa)) + " stride " + std::to_string(stride) + " n " + std::to_string(n));
        // The source ends right after the last byte read (a sanitizer build
        // would flag a read past it).
        const int64_t used = n == 0 ? 0 : (n - 1) * stride + 1;
        std::vector<uint8_t> exact(src.begin(), src.begin() + used);
        std::vector<uint8_t> got(static_cast<size_t>(n) + 1, 0xEE);
        copy_strided_bytes(exact.data(), stride, n, got.data());
        for (int64_t i = 0; i < n; ++i) ASSERT_EQ(got[static_cast<size_t>(i)], src[static_cast<size_t>(i * stride)]) << i;
        EXPECT_EQ(got[static_cast<size_t>(n)], 0xEE);
      }
    }
  }
}

// quantize_linear_u8/s8 against the formula, with ties, saturation, infinities and NaN.
TEST(QuantizeRows, QuantizeLinearOnEveryIsa) {
  std::mt19937 rng(17);
  std::uniform_real_distribution<float> dist(-300.0f, 300.0f);
  std::vector<float> x(101);
  for (auto& v : x) v = dist(rng);
  x[0] = 0.5f, x[1] = 1.5f, x[2] = -2.5f, x[3] = 1e9f, x[4] = -1e9f;
  x[5] = std::numeric_limits<float>::infinity(), x[6] = -std::numeric_limits<float>::infinity();
  x[7] = std::numeric_limits<float>::quiet_NaN();
  auto want = [](float v, float scale, int32_t zp, int32_t lowest, int32_t highest) -> int32_t {
    const float q = v / scale;
    if (q != q) return 0;
    const float c = std::min(std::max(static_cast<float>(lowest - zp), q), static_cast<float>(highest - zp));
    return static_cast<int32_t>(std::nearbyint(c)) + zp;
  };
  for (CpuIsa isa : testing::runnable_isas()) {
    ScopedCpuIsa cap(isa);
    for (int64_t n : {int64_t{1}, int64_t{16}, int64_t{101}}) {
      SCOPED_TRACE(std::string(cpu_isa_name(isa)) + " n " + std::to_string(n));
      std::vector<uint8_t> u(static_cast<size_t>(n));
      std::vector<int8_t> s(static_cast<size_t>(n));
      quantize_linear_u8(x.data(), n, 1.0f, 128, u.data());
      quantize_linear_s8(x.data(), n, 2.0f, -3, s.data());
      for (int64_t i = 0; i < n; ++i) {
        const size_t k = static_cast<size_t>(i);
        ASSERT_EQ(int32_t{u[k]}, want(x[k], 1.0f, 128, 0, 255)) << i;
        ASSERT_EQ(int32_t{s[k]}, want(x[k], 2.0f, -3, -128, 127)) << i;
      }
    }
  }
}

// requantize_u8/s8: float(acc + bias) * mult, clamped to what the zero point
// leaves, rounded half to even, + zp; acc + bias wraps.
template <typename Q>
int32_t reference(int32_t acc, int32_t bias, float mult, int32_t zp) {
  const int32_t a = static_cast<int32_t>(static_cast<uint32_t>(acc) + static_cast<uint32_t>(bias));
  float v = static_cast<float>(a) * mult;
  v = std::min(std::max(v, static_cast<float>(std::numeric_limits<Q>::lowest() - zp)),
               static_cast<float>(std::numeric_limits<Q>::max() - zp));
  return static_cast<int32_t>(std::nearbyint(v)) + zp;
}

TEST(QuantizeRows, RequantizeTiesSaturationAndWrapOnEveryIsa) {
  std::mt19937 rng(11);
  std::vector<int32_t> acc(203);
  for (auto& v : acc) v = static_cast<int32_t>(rng() % 40001) - 20000;
  // Ties at mult 0.5 (odd sums), both saturations, and sums that wrap with the bias.
  acc[0] = 1, acc[1] = 3, acc[2] = -5, acc[3] = INT_MAX, acc[4] = INT_MIN, acc[5] = 1000000, acc[6] = -1000000;
  for (CpuIsa isa : testing::runnable_isas()) {
    ScopedCpuIsa cap(isa);
    for (float mult : {0.5f, 0.0123f, 3.0f}) {
      for (int64_t n : {int64_t{0}, int64_t{7}, int64_t{16}, int64_t{203}}) {
        SCOPED_TRACE(std::string(cpu_isa_name(isa)) + " mult " + std::to_string(mult) + " n " + std::to_string(n));
        std::vector<uint8_t> u(static_cast<size_t>(n) + 1, 0xCD);
        std::vector<int8_t> s(static_cast<size_t>(n) + 1, 0x55);
        requantize_u8(acc.data(), n, 7, mult, 128, u.data());
        requantize_s8(acc.data(), n, -3, mult, -10, s.data());
        for (int64_t i = 0; i < n; ++i) {
          const size_t k = static_cast<size_t>(i);
          ASSERT_EQ(int32_t{u[k]}, reference<uint8_t>(acc[k], 7, mult, 128)) << i;
          ASSERT_EQ(int32_t{s[k]}, reference<int8_t>(acc[k], -3, mult, -10)) << i;
        }
        EXPECT_EQ(u[static_cast<size_t>(n)], 0xCD);
        EXPECT_EQ(s[static_cast<size_t>(n)], 0x55);
      }
    }
  }
}

// requantize_cols_u8/s8 (a multiplier and bias per element), min_max and
// quantize_u8 (DynamicQuantizeLinear's row scan and rounding): every ISA
// against the scalar definitions, with tails past each vector width.
TEST(QuantizeRows, ColumnsMinMaxAndDynamicQuantizeOnEveryIsa) {
  std::mt19937 rng(23);
  std::vector<int32_t> acc(77), bias(77);
  std::vector<float> mult(77), x(77);
  for (size_t i = 0; i < acc.size(); ++i) {
    acc[i] = static_cast<int32_t>(rng() % 60001) - 30000;
    bias[i] = static_cast<int32_t>(rng() % 2001) - 1000;
    mult[i] = 0.001f + 0.01f * static_cast<float>(rng() % 100);
    x[i] = static_cast<float>(static_cast<int32_t>(rng() % 20001) - 10000) / 97.0f;
  }
  acc[0] = INT_MAX, acc[1] = INT_MIN, mult[2] = 0.5f, acc[2] = 3;  // saturation, wrap, a tie
  x[3] = 0.5f, x[4] = 2.5f, x[5] = -0.5f;                            // ties
  for (CpuIsa isa : testing::runnable_isas()) {
    ScopedCpuIsa cap(isa);
    for (int64_t n : {int64_t{1}, int64_t{8}, int64_t{17}, int64_t{77}}) {
      SCOPED_TRACE(std::string(cpu_isa_name(isa)) + " n " + std::to_string(n));
      std::vector<uint8_t> u(static_cast<size_t>(n) + 1, 0xCD), q(static_cast<size_t>(n) + 1, 0xCD);
      std::vector<int8_t> s(static_cast<size_t>(n) + 1, 0x55);
      requantize_cols_u8(acc.data(), n, bias.data(), mult.data(), 100, u.data());
      requantize_cols_s8(acc.data(), n, nullptr, mult.data(), -7, s.data());
      float lo = 0, hi = 0;
      ASSERT_TRUE(min_max(x.data(), n, lo, hi));
      const float want_lo = *std::min_element(x.begin(), x.begin() + n);
      const float want_hi = *std::max_element(x.begin(), x.begin() + n);
      EXPECT_EQ(lo, want_lo);
      EXPECT_EQ(hi, want_hi);
      quantize_u8(x.data(), n, 0.37f, 113, q.data());
      for (int64_t i = 0; i < n; ++i) {
        const size_t k = static_cast<size_t>(i);
        ASSERT_EQ(int32_t{u[k]}, reference<uint8_t>(acc[k], bias[k], mult[k], 100)) << i;
        ASSERT_EQ(int32_t{s[k]}, reference<int8_t>(acc[k], 0, mult[k], -7)) << i;
        const float r = std::nearbyint(x[k] / 0.37f) + 113.0f;
        ASSERT_EQ(int32_t{q[k]}, static_cast<int32_t>(std::min(std::max(r, 0.0f), 255.0f))) << i;
      }
      EXPECT_EQ(u[static_cast<size_t>(n)], 0xCD);
      EXPECT_EQ(s[static_cast<size_t>(n)], 0x55);
      EXPECT_EQ(q[static_cast<size_t>(n)], 0xCD);
    }
    std::vector<float> with_nan(x.begin(), x.begin() + 20);
    with_nan[13] = std::numeric_limits<float>::quiet_NaN();
    float lo = 0, hi = 0;
    EXPECT_FALSE(min_max(with_nan.data(), 20, lo, hi)) << cpu_isa_name(isa);
  }
}


// The float rows (quantize_rows_simd.h) at every vector width this CPU runs
// (128 bits on x86 too, which no ISA level picks), bit for bit against the
// portable loops (DLRT_CPU_ISA=generic's), on every length 0-70 (whole
// vectors and each partial one) and inputs with NaN, +-inf, -0, ties and
// values far outside the 8-bit range; nothing past n written.
TEST(QuantizeRows, FloatRowsAtEveryWidthMatchPortableBits) {
  std::mt19937 rng(81);
  std::normal_distribution<float> nd(0.0f, 60.0f);
  const int ran = testing::for_each_runnable_width([&](SimdWidth w) {
    for (int64_t n = 0; n <= 70; ++n) {
      SCOPED_TRACE(std::string(simd_width_name(w)) + " bits, n " + std::to_string(n));
      const size_t sz = static_cast<size_t>(n);
      std::vector<float> x(sz), mult(sz);
      std::vector<int32_t> acc(sz), bias(sz);
      for (size_t i = 0; i < sz; ++i) {
        const uint32_t k = rng() % 12;
        x[i] = k == 0   ? std::numeric_limits<float>::quiet_NaN()
               : k == 1 ? std::numeric_limits<float>::infinity()
               : k == 2 ? -std::numeric_limits<float>::infinity()
               : k == 3 ? 3e9f
               : k == 4 ? -0.0f
               : k == 5 ? 0.5f * static_cast<float>(static_cast<int>(rng() % 21) - 10)
                        : nd(rng);
        acc[i] = rng() % 4 ? static_cast<int32_t>(nd(rng) * 100.0f) : static_cast<int32_t>(rng());
        bias[i] = static_cast<int32_t>(nd(rng));
        mult[i] = 0.001f * static_cast<float>(1 + rng() % 60);
      }
      const float scale = 0.05f + 0.01f * static_cast<float>(rng() % 40);
      const int32_t zu = static_cast<int32_t>(rng() % 256), zs = static_cast<int32_t>(rng() % 256) - 128;
      auto check = [&](auto&& run) {
        std::vector<uint8_t> got(sz + 1, 0xAB), want(sz + 1, 0xAB);
        run(true, got.data());
        {
          ScopedCpuIsa portable(CpuIsa::kGeneric);
          run(false, want.data());
        }
        ASSERT_EQ(got, want);
      };
      check([&](bool vec, uint8_t* d) {
        vec ? quantize_linear_u8(w, x.data(), n, scale, zu, d) : quantize_linear_u8(x.data(), n, scale, zu, d);
      });
      check([&](bool vec, uint8_t* d) {
        auto* s = reinterpret_cast<int8_t*>(d);
        vec ? quantize_linear_s8(w, x.data(), n, scale, zs, s) : quantize_linear_s8(x.data(), n, scale, zs, s);
      });
      check([&](bool vec, uint8_t* d) {
        vec ? requantize_u8(w, acc.data(), n, 17, 0.0123f, zu, d) : requantize_u8(acc.data(), n, 17, 0.0123f, zu, d);
      });
      check([&](bool vec, uint8_t* d) {
        auto* s = reinterpret_cast<int8_t*>(d);
        vec ? requantize_s8(w, acc.data(), n, -5, 0.02f, zs, s) : requantize_s8(acc.data(), n, -5, 0.02f, zs, s);
      });
      check([&](bool vec, uint8_t* d) {
        vec ? requantize_cols_u8(w, acc.data(), n, bias.data(), mult.data(), zu, d)
            : requantize_cols_u8(acc.data(), n, bias.data(), mult.data(), zu, d);
      });
      check([&](bool vec, uint8_t* d) {
        auto* s = reinterpret_cast<int8_t*>(d);
        vec ? requantize_cols_s8(w, acc.data(), n, nullptr, mult.data(), zs, s)
            : requantize_cols_s8(acc.data(), n, nullptr, mult.data(), zs, s);
      });
      check([&](bool vec, uint8_t* d) {
        vec ? quantize_u8(w, x.data(), n, scale, static_cast<uint8_t>(zu), d)
            : quantize_u8(x.data(), n, scale, static_cast<uint8_t>(zu), d);
      });
      std::vector<float> finite(x);
      for (float& v : finite)
        if (std::isnan(v)) v = 1.0f;
      for (const std::vector<float>* v : {&x, &finite}) {
        float lo = 9, hi = 9, want_lo = 9, want_hi = 9;
        const bool ok = min_max(w, v->data(), n, lo, hi);
        bool want_ok;
        {
          ScopedCpuIsa portable(CpuIsa::kGeneric);
          want_ok = min_max(v->data(), n, want_lo, want_hi);
        }
        ASSERT_EQ(ok, want_ok);
        if (ok) {
          EXPECT_EQ(lo, want_lo);
          EXPECT_EQ(hi, want_hi);
        }
      }
    }
  });
  EXPECT_GE(ran, 1);
}

}  // namespace
}  // namespace dlrt::cpu
