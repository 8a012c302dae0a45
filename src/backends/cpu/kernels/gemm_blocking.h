// Block sizes of the blocked GEMM (gemm.cpp) from the cache sizes the CPU
// reports (device/cpu_caches.h), by the analytical rules of the BLIS/Goto
// loop nest for an MR x NR register tile:
//   KC: a KC x NR sliver of packed B stays in L1 beside the MR x KC panel of
//       A streamed past it (the sliver takes the L1 ways that the A panel and
//       one way for C and the stack leave).
//   MC: an MC x KC block of packed A fills about half of L2.
//   NC: a KC x NC block of packed B: for wide tiles (NR >= 32, AVX-512) in
//       half the L2 the A block leaves; for narrower ones in a core's share of L3
//       (at most kMaxL3PerCore: a VM may report its host's whole L3), never
//       below what the L2 holds.
#pragma once

#include <cstdint>

#include "device/cpu_caches.h"

namespace dlrt::cpu {

struct GemmBlocking {
  int64_t kc = 0;  // K slice depth (a multiple of 8)
  int64_t mc = 0;  // rows of A per block (a multiple of MR)
  int64_t nc = 0;  // columns of B per block (a multiple of NR)
};

// The most L3 a core's share is taken to be when sizing blocks.
constexpr int64_t kMaxL3PerCore = int64_t{4} << 20;

// The blocks for an MR x NR tile of `elem_bytes`-byte elements on caches `c`.
GemmBlocking gemm_blocking(const device::CpuCaches& c, int mr, int nr, int elem_bytes);

// The same for this machine's caches (device::cpu_caches()), computed once per tile.
template <int MR, int NR, int ElemBytes>
const GemmBlocking& machine_gemm_blocking() {
  static const GemmBlocking b = gemm_blocking(device::cpu_caches(), MR, NR, ElemBytes);
  return b;
}

}  // namespace dlrt::cpu
