// GEMM block sizes from cache sizes (gemm_blocking.h).
#include "backends/cpu/kernels/gemm_blocking.h"

#include <algorithm>

namespace dlrt::cpu {
namespace {

int64_t ceil_div64(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Depth of a K slice: the deepest KC (a multiple of 8) for which the KC x NR
// sliver of B fits the L1 ways left by the MR x KC panel of A and one way
// for C and the stack. Without a reported associativity an L1 way is taken
// to be 4 KiB (a virtually indexed L1 has size / ways = page size).
int64_t l1_kc(const device::CpuCaches& c, int mr, int nr, int s) {
  const int64_t ways = c.l1d_ways > 0 ? c.l1d_ways : std::max<int64_t>(2, c.l1d / 4096);
  const int64_t way = c.l1d / ways;
  int64_t best = 0;
  for (int64_t a_ways = 1; a_ways + 1 < ways; ++a_ways) {
    const int64_t kc = (ways - 1 - a_ways) * way / (int64_t{nr} * s) / 8 * 8;
    if (kc > best && ceil_div64(kc * mr * s, way) <= a_ways) best = kc;
  }
  return best;
}

}  // namespace

GemmBlocking gemm_blocking(const device::CpuCaches& c, int mr, int nr, int elem_bytes) {
  const int64_t s = elem_bytes;
  GemmBlocking b;
  // The AVX-512 float tile (8 x 48) takes up to 384; narrower tiles up to
  // 256, the deepest slice they were measured with (Zen 1/2's AVX2 tile;
  // conv_direct's stems of K <= 256 then stay one slice).
  const int64_t kc_cap = nr >= 32 ? 384 : 256;
  b.kc = std::clamp<int64_t>(l1_kc(c, mr, nr, static_cast<int>(s)), 32, kc_cap);
  const int64_t a_block = c.l2 / 2;
  b.mc = std::clamp<int64_t>(a_block / (b.kc * s) / mr * mr, int64_t{mr} * 4, int64_t{mr} * 256);
  int64_t b_bytes = (c.l2 - b.mc * b.kc * s) / 2;          // half the L2 beside the A block
  if (nr < 32) b_bytes = std::max(b_bytes, std::min(c.l3, kMaxL3PerCore));  // or the core's share of L3
  b.nc = std::clamp<int64_t>(b_bytes / (b.kc * s) / nr * nr, int64_t{nr}, int64_t{nr} * 256);
  return b;
}

}  // namespace dlrt::cpu
