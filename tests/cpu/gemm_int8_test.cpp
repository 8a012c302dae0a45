// The 8-bit GEMM (gemm_int8.h): every kernel this CPU runs against an int64
// reference of sum_k (A - a_zp)(B - b_zp), reduced mod 2^32, on shapes that
// leave partial row blocks, column panels and k groups, with the extreme
// byte values (products that would saturate 16-bit pair sums) and every
// signedness and zero-point layout.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "backends/cpu/kernels/gemm_int8.h"
#include "backends/cpu/kernels/isa.h"
#include "backends/cpu/kernels/simd/width.h"
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
  const std::vector<Case> cases = {{1, 1, 1},   {3, 5, 7},     {8, 4, 48},   {9, 13, 50},    {17, 64, 33},
                                   {2, 3, 97},  {31, 130, 17}, {6, 384, 96}, {13, 1537, 20}, {4, 33, 16}};
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

// Everything one run of gemm_u8s8 can produce, for comparing kernels bit for bit.
struct Outputs {
  std::vector<int32_t> c, c_packed_a, c_rows;
  std::vector<float> f;
  std::vector<uint8_t> q_rows, q_cols;
  bool operator==(const Outputs&) const = default;
};

struct StageCase {
  int64_t M, K, N;
  int32_t a_zp, b_zp;  // in A's / B's own domain
  bool a_signed, b_signed;
};

// One case through every output stage and A source with the kernel in effect
// (B and the packed A are packed under it, as a session does).
Outputs run_stages(const StageCase& c, const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
  Outputs o;
  const auto packed = PackedInt8B::pack(false, c.K, c.N, b.data(), c.N, c.b_signed);
  const int32_t* az = &c.a_zp;
  const int32_t* bz = &c.b_zp;
  o.c.assign(static_cast<size_t>(c.M * c.N), -1);
  gemm_u8s8(c.M, c.N, c.K, a.data(), c.K, c.a_signed, az, 0, *packed, bz, 0, o.c.data(), c.N, nullptr);
  // A packed once (a conv's weights).
  const auto pa = PackedInt8A::pack(c.M, c.K, a.data(), c.K, c.a_signed);
  o.c_packed_a.assign(o.c.size(), -1);
  gemm_u8s8(c.M, c.N, c.K, a.data(), c.K, c.a_signed, az, 0, *packed, bz, 0, o.c_packed_a.data(), c.N, nullptr,
            pa.get());
  // The float stage (scale and bias per column).
  std::vector<float> scale(static_cast<size_t>(c.N)), fbias(static_cast<size_t>(c.N));
  for (int64_t j = 0; j < c.N; ++j) scale[j] = 0.001f * static_cast<float>(j + 1), fbias[j] = 0.25f * static_cast<float>(j % 5);
  Int8FloatOutput fo{scale.data(), 1, fbias.data()};
  std::vector<int32_t> fbuf(o.c.size());
  gemm_u8s8(c.M, c.N, c.K, a.data(), c.K, c.a_signed, az, 0, *packed, bz, 0, fbuf.data(), c.N, nullptr, nullptr, &fo);
  o.f.resize(fbuf.size());
  std::memcpy(o.f.data(), fbuf.data(), fbuf.size() * sizeof(float));
  // Requantized per row, and per column (a channels-last conv), with ldo > N.
  std::vector<float> mult(static_cast<size_t>(std::max(c.M, c.N)));
  std::vector<int32_t> rbias(mult.size());
  for (size_t i = 0; i < mult.size(); ++i) mult[i] = 0.0007f * static_cast<float>(i % 7 + 1), rbias[i] = static_cast<int32_t>(i * 37) - 500;
  for (int per_column = 0; per_column < 2; ++per_column) {
    std::vector<uint8_t>& q = per_column ? o.q_cols : o.q_rows;
    q.assign(static_cast<size_t>(c.M * (c.N + 3)), 0xEE);
    Int8RequantOutput ro;
    ro.mult = mult.data();
    ro.bias = rbias.data();
    ro.zero_point = per_column ? -5 : 131;
    ro.out = q.data();
    ro.ldo = c.N + 3;
    ro.out_signed = per_column;
    ro.per_column = per_column;
    gemm_u8s8(c.M, c.N, c.K, a.data(), c.K, c.a_signed, az, 0, *packed, bz, 0, nullptr, c.N, nullptr, nullptr, nullptr,
              &ro);
  }
  // A from row segments (a channels-last conv's im2col), when K allows: 4-byte runs, every third a pad run.
  if (c.K % 4 == 0) {
    auto ptr = [&](int64_t i, int64_t seg) -> const uint8_t* {
      return (i + seg) % 3 == 2 ? nullptr : a.data() + i * c.K + seg * 4;
    };
    const Int8ARows rows{c.K / 4, 4, ptr, static_cast<uint8_t>(c.a_signed ? 0x80 : 0x7F)};
    o.c_rows.assign(o.c.size(), -1);
    gemm_u8s8(c.M, c.N, c.K, nullptr, 0, c.a_signed, az, 0, *packed, bz, 0, o.c_rows.data(), c.N, nullptr, nullptr,
              nullptr, nullptr, &rows);
  }
  return o;
}

class Int8Kernel : public ::testing::TestWithParam<const char*> {};

// Each kernel against the portable one with the ISA capped (the scalar model):
// the same bits from every output stage and A source, on shapes with K not a
// multiple of 4 or 32, partial row blocks and column panels, long K (the
// K-blocked loop), and zero points at both ends of each type.
TEST_P(Int8Kernel, BitIdenticalToScalarOnEdgeShapes) {
  const std::string name = GetParam();
  const std::vector<const char*> here = int8_gemm_kernels();
  if (std::find_if(here.begin(), here.end(), [&](const char* k) { return name == k; }) == here.end())
    GTEST_SKIP() << "kernel " << name << " does not run on this CPU (under DLRT_CPU_ISA / DLRT_CPU_FEATURES_OFF, if "
                 << "set); this CPU runs " << ::testing::PrintToString(std::vector<std::string>(here.begin(), here.end()))
                 << ", int8 engine " << int8_gemm_engine();
  std::mt19937 rng(81);
  // The last two span more than one 32-row block of the AMX kernel.
  const std::vector<std::array<int64_t, 3>> shapes = {{1, 1, 1},     {5, 3, 17},   {7, 33, 31},   {4, 36, 16},
                                                      {9, 35, 48},   {13, 130, 50}, {6, 64, 20},  {9, 777, 33},
                                                      {40, 200, 40}, {33, 68, 64}};
  int checked = 0;
  for (const auto& [M, K, N] : shapes)
    for (int variant = 0; variant < 4; ++variant) {
      StageCase c{M, K, N, 0, 0, (variant & 1) != 0, (variant & 2) != 0};
      // Zero points at the ends of each type, alternating.
      c.a_zp = c.a_signed ? (variant < 2 ? -128 : 127) : (K % 2 ? 255 : 0);
      c.b_zp = c.b_signed ? (K % 2 ? 127 : -128) : (variant < 2 ? 0 : 255);
      std::vector<uint8_t> a(static_cast<size_t>(M * K)), b(static_cast<size_t>(K * N));
      for (auto& v : a) v = (rng() & 3) == 0 ? 255 : static_cast<uint8_t>(rng());
      for (auto& v : b) v = (rng() & 3) == 0 ? ((rng() & 1) ? 127 : 128) : static_cast<uint8_t>(rng());
      SCOPED_TRACE(name + " M " + std::to_string(M) + " K " + std::to_string(K) + " N " + std::to_string(N) +
                   (c.a_signed ? " s8" : " u8") + (c.b_signed ? " x s8" : " x u8"));
      Outputs want, got;
      {
        ScopedCpuIsa cap(CpuIsa::kGeneric);
        ScopedInt8Kernel use("generic");
        want = run_stages(c, a, b);
      }
      {
        ScopedInt8Kernel use(name.c_str());
        ASSERT_STREQ(int8_gemm_kernel_name(), name.c_str());
        got = run_stages(c, a, b);
      }
      ASSERT_EQ(got.c, want.c);
      ASSERT_EQ(got.c_packed_a, want.c_packed_a);
      ASSERT_EQ(got.c_rows, want.c_rows);
      ASSERT_EQ(0, std::memcmp(got.f.data(), want.f.data(), got.f.size() * sizeof(float)));
      ASSERT_EQ(got.q_rows, want.q_rows);
      ASSERT_EQ(got.q_cols, want.q_cols);
      ++checked;
    }
  EXPECT_EQ(checked, static_cast<int>(4 * shapes.size()));
}

// The output stages written over simd/ (gemm_int8_epilogue_simd.h) at each
// vector width this CPU runs, against the portable loops (ISA capped to
// generic), on the portable tile kernel: every stage of run_stages plus the
// float stage with one scale for all columns and a scale per row (A's scale
// per row times B's). Widths the CPU cannot run are reported and left out.
TEST(GemmInt8, EpiloguesAtEveryWidthMatchThePortableLoops) {
  const std::array<std::pair<CpuIsa, SimdWidth>, 3> widths = {
      {{CpuIsa::kNeon, SimdWidth::k128}, {CpuIsa::kAvx2, SimdWidth::k256}, {CpuIsa::kAvx512, SimdWidth::k512}}};
  std::mt19937 rng(7);
  const std::vector<StageCase> cases = {{5, 36, 17, 3, -7, false, true}, {9, 20, 40, -128, 255, true, false},
                                        {13, 64, 33, 0, 0, false, true}, {1, 4, 1, 255, 127, false, true}};
  struct Run {
    Outputs o;
    std::vector<float> f_scalar, f_rows;
  };
  auto run_all = [&](const StageCase& c, const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
    Run r;
    r.o = run_stages(c, a, b);
    const auto packed = PackedInt8B::pack(false, c.K, c.N, b.data(), c.N, c.b_signed);
    std::vector<float> row_scale(static_cast<size_t>(c.M)), col_scale(static_cast<size_t>(c.N));
    for (int64_t i = 0; i < c.M; ++i) row_scale[i] = 0.013f * static_cast<float>(i + 3);
    for (int64_t j = 0; j < c.N; ++j) col_scale[j] = 0.0071f * static_cast<float>(j % 11 + 1);
    const float one = 0.0037f;
    for (int variant = 0; variant < 2; ++variant) {
      Int8FloatOutput fo;
      if (variant == 0) fo.scale = &one;
      else fo.scale = col_scale.data(), fo.scale_stride = 1, fo.row_scale = row_scale.data();
      std::vector<int32_t> buf(static_cast<size_t>(c.M * c.N));
      gemm_u8s8(c.M, c.N, c.K, a.data(), c.K, c.a_signed, &c.a_zp, 0, *packed, &c.b_zp, 0, buf.data(), c.N, nullptr,
                nullptr, &fo);
      std::vector<float>& f = variant == 0 ? r.f_scalar : r.f_rows;
      f.resize(buf.size());
      std::memcpy(f.data(), buf.data(), buf.size() * sizeof(float));
    }
    return r;
  };
  int ran = 0;
  for (const auto& [isa, width] : widths) {
    if (!simd_width_runs(width)) {
      std::printf("  (%s-bit epilogues not run: this CPU or build lacks them)\n", simd_width_name(width));
      continue;
    }
    for (const StageCase& c : cases) {
      std::vector<uint8_t> a(static_cast<size_t>(c.M * c.K)), b(static_cast<size_t>(c.K * c.N));
      for (auto& v : a) v = static_cast<uint8_t>(rng());
      for (auto& v : b) v = static_cast<uint8_t>(rng());
      SCOPED_TRACE(std::string(simd_width_name(width)) + " M " + std::to_string(c.M) + " K " + std::to_string(c.K) +
                   " N " + std::to_string(c.N));
      Run want, got;
      {
        ScopedCpuIsa cap(CpuIsa::kGeneric);
        ScopedInt8Kernel use("generic");
        want = run_all(c, a, b);
      }
      {
        ScopedCpuIsa cap(isa);
        ScopedInt8Kernel use("generic");
        ASSERT_EQ(simd_width(), width);
        got = run_all(c, a, b);
      }
      ASSERT_EQ(got.o.c, want.o.c);
      ASSERT_EQ(got.o.c_packed_a, want.o.c_packed_a);
      ASSERT_EQ(0, std::memcmp(got.o.f.data(), want.o.f.data(), got.o.f.size() * sizeof(float)));
      ASSERT_EQ(0, std::memcmp(got.f_scalar.data(), want.f_scalar.data(), got.f_scalar.size() * sizeof(float)));
      ASSERT_EQ(0, std::memcmp(got.f_rows.data(), want.f_rows.data(), got.f_rows.size() * sizeof(float)));
      ASSERT_EQ(got.o.q_rows, want.o.q_rows);
      ASSERT_EQ(got.o.q_cols, want.o.q_cols);
    }
    ++ran;
  }
  EXPECT_GE(ran, 1);  // 128 bits runs on every CPU the build targets
}

INSTANTIATE_TEST_SUITE_P(Kernels, Int8Kernel,
                         ::testing::Values("amx", "avx512-vnni", "avx-vnni", "avx2", "neon-i8mm", "neon-dotprod",
                                           "neon", "generic", "amx-model"),
                         [](const ::testing::TestParamInfo<const char*>& i) {
                           std::string n = i.param;
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });

// A B packed for one kernel and multiplied under another (the kernel choice
// changed in between) still gives the exact product: the GEMM runs a kernel
// that reads B's layout.
TEST(GemmInt8, BPackedUnderAnotherKernel) {
  const Case c{5, 37, 21};
  std::mt19937 rng(6);
  std::vector<uint8_t> a(static_cast<size_t>(c.M * c.K)), b(static_cast<size_t>(c.K * c.N));
  for (auto& v : a) v = rng();
  for (auto& v : b) v = rng();
  const auto want = reference(c, a, false, {3}, b, true, {-2});
  for (const char* packer : int8_gemm_kernels())
    for (const char* runner : int8_gemm_kernels()) {
      SCOPED_TRACE(std::string("packed under ") + packer + ", run under " + runner);
      std::shared_ptr<const PackedInt8B> packed;
      {
        ScopedInt8Kernel use(packer);
        packed = PackedInt8B::pack(false, c.K, c.N, b.data(), c.N, true);
      }
      ScopedInt8Kernel use(runner);
      const int32_t az = 3, bz = -2;
      std::vector<int32_t> got(static_cast<size_t>(c.M * c.N));
      gemm_u8s8(c.M, c.N, c.K, a.data(), c.K, false, &az, 0, *packed, &bz, 0, got.data(), c.N, nullptr);
      ASSERT_EQ(got, want);
    }
}

}  // namespace
}  // namespace dlrt::cpu
