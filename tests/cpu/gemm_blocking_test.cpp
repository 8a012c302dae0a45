// GEMM block sizes from cache sizes (gemm_blocking.h): the L1/L2/L3 rules on
// the caches of a few machine kinds, and the constraints they promise.
#include "backends/cpu/kernels/gemm_blocking.h"

#include <gtest/gtest.h>

namespace dlrt::cpu {
namespace {

device::CpuCaches caches(int64_t l1d, int l1d_ways, int64_t l2, int64_t l3) {
  device::CpuCaches c;
  c.l1d = l1d, c.l1d_ways = l1d_ways, c.l2 = l2, c.l3 = l3, c.source = "test";
  return c;
}

constexpr int64_t K = 1024, M = 1024 * 1024;

TEST(GemmBlocking, Avx512TileOnSapphireRapidsAndZen5Caches) {
  // 48 KiB 12-way L1d, 2 MiB L2 (Sapphire Rapids; Zen 5 has 48 KiB / 1 MiB).
  const GemmBlocking b = gemm_blocking(caches(48 * K, 12, 2 * M, 2 * M), 8, 48, 4);
  EXPECT_EQ(b.kc, 192);                      // 36 KiB of B in 9 of the 12 ways, A's panel in 2
  EXPECT_EQ(b.mc, 1360);                     // 1360 x 192 floats: 1020 KiB, half of L2
  EXPECT_EQ(b.nc, 672);                      // 14 panels: 504 KiB, half of the rest
}

TEST(GemmBlocking, Avx512TileOnCascadeLakeCaches) {
  // 32 KiB 8-way L1d, 1 MiB L2, 1.375 MiB L3 per core.
  const GemmBlocking b = gemm_blocking(caches(32 * K, 8, 1 * M, 1408 * K), 8, 48, 4);
  EXPECT_EQ(b.kc, 128);  // 24 KiB of B in 6 ways, A's 4 KiB panel in 1
  EXPECT_EQ(b.mc, 1024);
  EXPECT_EQ(b.nc, 480);
  // Unknown ways: a 4 KiB way is assumed (32 KiB: 8 ways), same answer.
  EXPECT_EQ(gemm_blocking(caches(32 * K, 0, 1 * M, 1408 * K), 8, 48, 4).kc, 128);
}

TEST(GemmBlocking, Avx2TileTakesNcFromL3Share) {
  // Zen 2: 32 KiB 8-way L1d, 512 KiB L2, 16 MiB L3 per 4 cores.
  const GemmBlocking b = gemm_blocking(caches(32 * K, 8, 512 * K, 4 * M), 6, 16, 4);
  EXPECT_EQ(b.kc, 256);  // the model's 320 capped at the measured 256
  EXPECT_EQ(b.mc, 252);  // 256 KiB / (256 x 4 B) = 256 rows, down to a multiple of 6
  EXPECT_EQ(b.nc, 4096);  // 4 MiB of B (the L3 share)
  // A VM that reports its host's whole L3 as one core's: capped at kMaxL3PerCore.
  EXPECT_EQ(gemm_blocking(caches(32 * K, 8, 512 * K, 240 * M), 6, 16, 4).nc, 4096);
  // No L3: the L2 left by A, halved.
  EXPECT_EQ(gemm_blocking(caches(32 * K, 8, 512 * K, 0), 6, 16, 4).nc, 128);
}

TEST(GemmBlocking, PromisesHoldOverManyCaches) {
  for (int64_t l1 : {16 * K, 32 * K, 48 * K, 64 * K, 128 * K})
    for (int64_t l2 : {256 * K, 512 * K, 1 * M, 2 * M, 4 * M})
      for (int tile = 0; tile < 3; ++tile) {
        const int mr = tile == 0 ? 8 : tile == 1 ? 6 : 4, nr = tile == 0 ? 48 : tile == 1 ? 16 : 8;
        const int s = tile == 2 ? 8 : 4;
        const GemmBlocking b = gemm_blocking(caches(l1, 0, l2, l2), mr, nr, s);
        SCOPED_TRACE(::testing::Message() << "l1 " << l1 << " l2 " << l2 << " tile " << mr << "x" << nr);
        EXPECT_EQ(b.kc % 8, 0);
        EXPECT_GE(b.kc, 32);
        EXPECT_EQ(b.mc % mr, 0);
        EXPECT_GE(b.mc, mr);
        EXPECT_EQ(b.nc % nr, 0);
        EXPECT_GE(b.nc, nr);
        if (b.kc > 32) {
          EXPECT_LE(b.kc * nr * s, l1);  // the B sliver fits L1 unless at the floor
        }
        if (b.mc > 4 * mr) {
          EXPECT_LE(b.mc * b.kc * s, l2 / 2);  // the A block in half of L2 unless at the floor
        }
      }
}

TEST(GemmBlocking, SmallerCachesNeverGiveLargerBlocks) {
  const GemmBlocking big = gemm_blocking(caches(48 * K, 12, 2 * M, 2 * M), 8, 48, 4);
  const GemmBlocking small = gemm_blocking(caches(32 * K, 8, 1 * M, 1 * M), 8, 48, 4);
  EXPECT_LT(small.kc, big.kc);
  EXPECT_LT(small.mc, big.mc);
  EXPECT_LT(small.nc, big.nc);
}

}  // namespace
}  // namespace dlrt::cpu
