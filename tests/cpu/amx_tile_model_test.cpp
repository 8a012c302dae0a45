// The scalar model of the AMX tile instructions (amx_tiles.h) against the
// instructions' definition written out here element by element, and the
// AMX int8 GEMM kernel on the model and on the real tiles (where the CPU and
// OS have them) against the portable kernel, bit for bit.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "backends/cpu/kernels/amx_tiles.h"
#include "backends/cpu/kernels/gemm_int8.h"
#include "backends/cpu/kernels/isa.h"
#include "core/env.h"
#include "core/thread_pool.h"

namespace dlrt::cpu {
namespace {

using amx::TileConfig;
using amx::TileModel;

// TDPBUSD / TDPBSSD by their definition: C (M x N int32) += per k group the
// four byte products of A's row and B's row k, in int64 reduced mod 2^32.
std::vector<int32_t> dot_reference(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b,
                                   const std::vector<int32_t>& c, int M, int N, int K, bool a_signed) {
  std::vector<int32_t> out(c);
  for (int m = 0; m < M; ++m)
    for (int n = 0; n < N; ++n) {
      int64_t s = c[m * N + n];
      for (int k = 0; k < K; ++k)
        for (int i = 0; i < 4; ++i) {
          const uint8_t x = a[m * 4 * K + 4 * k + i];
          s += (a_signed ? int64_t{static_cast<int8_t>(x)} : int64_t{x}) *
               int64_t{static_cast<int8_t>(b[k * 4 * N + 4 * n + i])};
        }
      out[m * N + n] = static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(s)));
    }
  return out;
}

// Partial shapes (M rows, K groups, N columns), the extreme bytes, C near the
// int32 limits (the sums wrap), both instructions; what lies outside the
// configured rows and bytes is neither read nor written.
TEST(AmxTileModel, DotProductsAsDefined) {
  std::mt19937 rng(7);
  const int shapes[][3] = {{16, 16, 16}, {3, 5, 7}, {16, 1, 16}, {1, 16, 1}, {9, 12, 16}};
  for (const auto& [M, K, N] : shapes)
    for (int a_signed = 0; a_signed < 2; ++a_signed) {
      SCOPED_TRACE("M " + std::to_string(M) + " K " + std::to_string(K) + " N " + std::to_string(N) +
                   (a_signed ? " tdpbssd" : " tdpbusd"));
      TileConfig cfg;
      cfg.rows[0] = static_cast<uint8_t>(M), cfg.colsb[0] = static_cast<uint16_t>(4 * N);  // C
      cfg.rows[3] = static_cast<uint8_t>(M), cfg.colsb[3] = static_cast<uint16_t>(4 * K);  // A
      cfg.rows[5] = static_cast<uint8_t>(K), cfg.colsb[5] = static_cast<uint16_t>(4 * N);  // B
      std::vector<uint8_t> a(static_cast<size_t>(M * 4 * K)), b(static_cast<size_t>(K * 4 * N));
      std::vector<int32_t> c(static_cast<size_t>(M * N));
      for (auto& v : a) v = (rng() & 1) ? static_cast<uint8_t>(rng()) : ((rng() & 1) ? 255 : 128);
      for (auto& v : b) v = (rng() & 1) ? static_cast<uint8_t>(rng()) : ((rng() & 1) ? 127 : 128);
      for (auto& v : c)
        v = (rng() & 1) ? INT32_MAX - static_cast<int32_t>(rng() % 1000)
                        : INT32_MIN + static_cast<int32_t>(rng() % 1000);
      // Operands in memory with a row stride wider than the row; the bytes
      // between rows must not be read.
      const int64_t lda = 4 * K + 9, ldb = 4 * N + 5, ldc = 4 * N + 12;
      std::vector<uint8_t> am(static_cast<size_t>(M * lda), 0x77), bm(static_cast<size_t>(K * ldb), 0x77),
          cm(static_cast<size_t>(M * ldc), 0x77);
      for (int m = 0; m < M; ++m) std::memcpy(am.data() + m * lda, a.data() + m * 4 * K, 4 * K);
      for (int k = 0; k < K; ++k) std::memcpy(bm.data() + k * ldb, b.data() + k * 4 * N, 4 * N);
      for (int m = 0; m < M; ++m) std::memcpy(cm.data() + m * ldc, c.data() + m * N, 4 * N);
      TileModel t;
      t.configure(cfg);
      t.load(0, cm.data(), ldc);
      t.load(3, am.data(), lda);
      t.load(5, bm.data(), ldb);
      if (a_signed)
        t.dpbssd(0, 3, 5);
      else
        t.dpbusd(0, 3, 5);
      std::vector<uint8_t> out(static_cast<size_t>(M * ldc), 0xEE);
      t.store(0, out.data(), ldc);
      const std::vector<int32_t> want = dot_reference(a, b, c, M, N, K, a_signed);
      for (int m = 0; m < M; ++m) {
        std::vector<int32_t> row(static_cast<size_t>(N));
        std::memcpy(row.data(), out.data() + m * ldc, 4 * N);
        ASSERT_EQ(row, std::vector<int32_t>(want.begin() + m * N, want.begin() + (m + 1) * N)) << "row " << m;
        for (int64_t j = 4 * N; j < ldc; ++j) ASSERT_EQ(out[m * ldc + j], 0xEE) << "stored past colsb";
      }
    }
}

// A load zeroes what lies past the configured rows and bytes, a store writes
// only them, configure and release zero every tile.
TEST(AmxTileModel, LoadsZeroPastTheShapeAndConfigureZeroes) {
  TileModel t;
  TileConfig cfg = amx::full_tiles();
  t.configure(cfg);
  std::vector<uint8_t> ones(16 * 64, 0xFF);
  t.load(2, ones.data(), 64);
  std::vector<uint8_t> out(16 * 64, 0);
  t.store(2, out.data(), 64);
  EXPECT_EQ(out, ones);
  t.configure(cfg);  // zeroes
  t.store(2, out.data(), 64);
  EXPECT_EQ(out, std::vector<uint8_t>(16 * 64, 0));
  // Tile 1 as 2 rows x 8 bytes, then as 16 x 64: the rest reads 0.
  cfg.rows[1] = 2;
  cfg.colsb[1] = 8;
  t.configure(cfg);
  t.load(1, ones.data(), 64);
  std::vector<uint8_t> stored(16 * 64, 0xAA);
  t.store(1, stored.data(), 64);  // only 2 x 8 written
  for (int r = 0; r < 16; ++r)
    for (int j = 0; j < 64; ++j) ASSERT_EQ(stored[r * 64 + j], r < 2 && j < 8 ? 0xFF : 0xAA) << r << "," << j;
  t.release();
  EXPECT_FALSE(t.configured());
}

struct GemmShape {
  int64_t M, K, N;
};

// gemm_u8s8 under `kernel` and under the portable kernel (ISA capped), on
// shapes across the AMX kernel's 32-row blocks, 32-column blocks and 64-deep
// K steps, zero points per row and column and the float output stage.
void expect_same_as_generic(const char* kernel) {
  const std::vector<GemmShape> shapes = {{1, 1, 1},     {16, 64, 16},   {17, 65, 33},  {32, 128, 32},
                                         {33, 100, 47}, {40, 1000, 70}, {70, 256, 64}, {5, 577, 100}};
  std::mt19937 rng(31);
  ThreadPool pool(2);
  for (const GemmShape& s : shapes)
    for (int signs = 0; signs < 4; ++signs) {
      const bool a_signed = signs & 1, b_signed = signs & 2;
      SCOPED_TRACE(std::string(kernel) + " M " + std::to_string(s.M) + " K " + std::to_string(s.K) + " N " +
                   std::to_string(s.N) + (a_signed ? " s8" : " u8") + (b_signed ? " x s8" : " x u8"));
      std::vector<uint8_t> a(static_cast<size_t>(s.M * s.K)), b(static_cast<size_t>(s.K * s.N));
      for (auto& v : a) v = (rng() & 3) == 0 ? 255 : static_cast<uint8_t>(rng());
      for (auto& v : b) v = (rng() & 3) == 0 ? ((rng() & 1) ? 127 : 128) : static_cast<uint8_t>(rng());
      std::vector<int32_t> a_zp(static_cast<size_t>(s.M)), b_zp(static_cast<size_t>(s.N));
      for (auto& z : a_zp) z = a_signed ? static_cast<int32_t>(rng() % 256) - 128 : static_cast<int32_t>(rng() % 256);
      for (auto& z : b_zp) z = b_signed ? static_cast<int32_t>(rng() % 256) - 128 : static_cast<int32_t>(rng() % 256);
      std::vector<float> scale(static_cast<size_t>(s.N)), row_scale(static_cast<size_t>(s.M));
      for (auto& v : scale) v = 1e-3f * static_cast<float>(rng() % 1000 + 1);
      for (auto& v : row_scale) v = 1e-2f * static_cast<float>(rng() % 100 + 1);
      const Int8FloatOutput fo{scale.data(), 1, nullptr, row_scale.data()};
      auto run = [&](bool floats, ThreadPool* p) {
        const auto packed = PackedInt8B::pack(false, s.K, s.N, b.data(), s.N, b_signed);
        std::vector<int32_t> c(static_cast<size_t>(s.M * s.N), -1);
        gemm_u8s8(s.M, s.N, s.K, a.data(), s.K, a_signed, a_zp.data(), 1, *packed, b_zp.data(), 1, c.data(), s.N, p,
                  nullptr, floats ? &fo : nullptr);
        return c;
      };
      for (int floats = 0; floats < 2; ++floats) {
        std::vector<int32_t> want, got;
        {
          ScopedCpuIsa cap(CpuIsa::kGeneric);
          ScopedInt8Kernel use("generic");
          want = run(floats, nullptr);
        }
        {
          ScopedInt8Kernel use(kernel);
          ASSERT_STREQ(int8_gemm_kernel_name(), kernel);
          got = run(floats, floats ? &pool : nullptr);
        }
        ASSERT_EQ(got, want) << (floats ? "float stage (bits)" : "int32");
      }
    }
}

TEST(AmxInt8, ModelBitIdenticalToGeneric) { expect_same_as_generic("amx-model"); }

TEST(AmxInt8, RealTilesBitIdenticalToGeneric) {
  if (const char* why = int8_detail::amx_unavailable())
    GTEST_SKIP() << "the real AMX tiles do not run here: amx " << why
                 << " (the model runs in ModelBitIdenticalToGeneric)";
  expect_same_as_generic("amx");
}

// Never chosen unless forced: the model is listed last, the real kernel
// first where it runs, and the report says why AMX does not run.
TEST(AmxInt8, SelectionAndReport) {
  const std::vector<const char*> ks = int8_gemm_kernels();
  ASSERT_FALSE(ks.empty());
  EXPECT_STREQ(ks.back(), "amx-model");
  EXPECT_STRNE(int8_gemm_kernel_name(), "amx-model");
  const char* why = int8_detail::amx_unavailable();
  const std::string engine = int8_gemm_engine();
  if (why) {
    EXPECT_STRNE(ks.front(), "amx");
    EXPECT_EQ(engine, std::string(ks.front()) + " (amx: " + why + ")");
  } else {
    EXPECT_STREQ(ks.front(), "amx");
    const char* on = env::get("DLRT_CPU_AMX_INT8");
    if (on && std::string(on) == "on")
      EXPECT_EQ(engine, "amx");
    else
      EXPECT_EQ(engine, std::string(ks[1]) + " (amx: present, off unless DLRT_CPU_AMX_INT8=on (not yet verified on "
                                             "AMX hardware))");
  }
  {
    ScopedCpuIsa cap(CpuIsa::kAvx2);
    if (detected_cpu_isa() >= CpuIsa::kAvx2) {
      ASSERT_NE(int8_detail::amx_unavailable(), nullptr);
      EXPECT_NE(int8_gemm_engine().find("amx: "), std::string::npos) << int8_gemm_engine();
    }
  }
}

}  // namespace
}  // namespace dlrt::cpu
