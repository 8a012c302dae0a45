// Nearest-neighbour Resize of two adjacent axes (resize_nearest.h).
#include "backends/cpu/ops/resize_nearest.h"

#include <algorithm>
#include <cstring>

#include "backends/cpu/kernels/isa.h"
#include "backends/cpu/kernels/simd/simd.h"

#define DLRT_SIMD_BODY "backends/cpu/ops/resize_nearest_simd.h"
#include "backends/cpu/kernels/simd/instantiate.h"

namespace dlrt::cpu {
namespace {

// Elements per parallel task, about: small resizes run on the caller alone.
constexpr int64_t kNearestTaskElems = 1 << 15;
// An element of N bytes (several of a dtype's: the unresized trailing axes),
// copied as one.
template <int N>
struct Bytes {
  uint32_t v[N / 4];
};

// The widest replication the vector path takes (its permutes per 16 inputs).
constexpr int64_t kMaxVectorFactor = 16;

template <typename E>
void gather_row(const E* in, E* out, const int64_t* col_index, int64_t out_w) {
  for (int64_t i = 0; i < out_w; ++i) out[i] = in[col_index[i]];
}

template <typename E>
void replicate_row(const E* in, E* out, int64_t in_w, int64_t k) {
  for (int64_t i = 0; i < in_w; ++i)
    for (int64_t r = 0; r < k; ++r) out[i * k + r] = in[i];
}

// replicate_row with the factor a constant, which the compiler vectorises
// (shuffles at x86-64's baseline, NEON on aarch64).
template <typename E, int K>
void replicate_row_k(const E* in, E* out, int64_t in_w) {
  for (int64_t i = 0; i < in_w; ++i)
    for (int r = 0; r < K; ++r) out[i * K + r] = in[i];
}

// replicate_row_k for the factors 2, 3, 4 and 8 (2-12x faster than the loop
// over k on 4-byte elements); false for the others.
template <typename E>
bool replicate_row_const(const E* in, E* out, int64_t in_w, int64_t k) {
  switch (k) {
    case 2: replicate_row_k<E, 2>(in, out, in_w); return true;
    case 3: replicate_row_k<E, 3>(in, out, in_w); return true;
    case 4: replicate_row_k<E, 4>(in, out, in_w); return true;
    case 8: replicate_row_k<E, 8>(in, out, in_w); return true;
    default: return false;
  }
}

// The lane indexes of resize_replicate_row_32 (resize_nearest_simd.h): output
// e of every group of inputs holds input e / k, whatever the vector width.
struct ReplicatePattern {
  alignas(64) int32_t idx[kMaxVectorFactor * 16];
  explicit ReplicatePattern(int64_t k) {
    for (int64_t e = 0; e < std::min(k, kMaxVectorFactor) * 16; ++e) idx[e] = static_cast<int32_t>(e / k);
  }
};

// Whether the permutes beat the loops for factor k at this width (per row,
// min times). Factor 2 (a 2x upsample) takes the constant loop at every
// width: 0.46-1.01x the permutes' time at 512 bits. Above 2 the loops took
// 0.66-2.4x the permutes' time at 512 bits; at 256 the permutes ran 0.52-0.89x
// the loops' instructions (callgrind) for 3, 5, 6 and 16, but 1.07x for 8
// (0.77-1.11x its time) and 1.2-1.3x the time for 4: the constant loops of 4
// and 8 stay there. At 128 bits (NEON) they replace the loop over k only; the
// constant loops of 3, 4 and 8 stay.
bool permutes_win(SimdWidth width, int64_t k) {
  if (k <= 2 || k > kMaxVectorFactor) return false;
  switch (width) {
    case SimdWidth::k512: return true;
    case SimdWidth::k256: return k != 4 && k != 8;
    case SimdWidth::k128: return k != 3 && k != 4 && k != 8;
  }
  return false;
}

// resize_replicate_row_32 at `width` (4-byte E only). Not inlined: in the
// row loop the dispatch cost the constant loops' code 5% more instructions.
template <typename E>
__attribute__((noinline)) bool replicate_row_vec(SimdWidth width, const E* irow, E* orow, int64_t in_w, int64_t k,
                                                 const ReplicatePattern& pat) {
  return DLRT_SIMD_PICK(width, resize_replicate_row_32, reinterpret_cast<const uint32_t*>(irow),
                        reinterpret_cast<uint32_t*>(orow), in_w, k, pat.idx);
}

// Rows [b, e) of the output; kVec: 4-byte rows replicated by the lane
// permutes (a constant, so the loops' code is as without them).
template <typename E, bool kVec>
void gather_rows_of(const E* x, E* y, int64_t in_h, int64_t in_w, const int64_t* row_index, int64_t out_h,
                    const int64_t* col_index, int64_t out_w, int64_t k, int64_t b, int64_t e, SimdWidth width) {
  const ReplicatePattern pat(kVec ? k : 0);
  for (int64_t u = b; u < e; ++u) {
    const int64_t o = u / out_h, j = u % out_h;
    E* orow = y + u * out_w;
    if (u > b && j > 0 && row_index[j] == row_index[j - 1]) {
      // The row this task wrote last: a copy.
      std::memcpy(orow, orow - out_w, static_cast<size_t>(out_w) * sizeof(E));
      continue;
    }
    const E* irow = x + (o * in_h + row_index[j]) * in_w;
    if (k == 1) {
      std::memcpy(orow, irow, static_cast<size_t>(out_w) * sizeof(E));
    } else if (k > 1) {
      if (kVec && replicate_row_vec(width, irow, orow, in_w, k, pat)) continue;
      if (!replicate_row_const<E>(irow, orow, in_w, k)) replicate_row<E>(irow, orow, in_w, k);
    } else {
      gather_row<E>(irow, orow, col_index, out_w);
    }
  }
}

template <typename E>
void gather_rows(const E* x, E* y, int64_t in_h, int64_t in_w, const int64_t* row_index, int64_t out_h,
                 const int64_t* col_index, int64_t out_w, int64_t k, int64_t b, int64_t e) {
  const SimdWidth width = simd_width();
  if (sizeof(E) == 4 && cpu_has_simd_kernels() && permutes_win(width, k))
    gather_rows_of<E, true>(x, y, in_h, in_w, row_index, out_h, col_index, out_w, k, b, e, width);
  else
    gather_rows_of<E, false>(x, y, in_h, in_w, row_index, out_h, col_index, out_w, k, b, e, width);
}

template <typename E>
void run(ThreadPool& pool, const void* x, void* y, int64_t outer, int64_t in_h, int64_t in_w, const int64_t* row_index,
         int64_t out_h, const int64_t* col_index, int64_t out_w) {
  const int64_t k = replication_factor(col_index, in_w, out_w);
  const E* src = static_cast<const E*>(x);
  E* dst = static_cast<E*>(y);
  const int64_t rows = outer * out_h;
  auto body = [&](int64_t b, int64_t e) {
    gather_rows<E>(src, dst, in_h, in_w, row_index, out_h, col_index, out_w, k, b, e);
  };
  const int64_t grain = std::max<int64_t>(1, kNearestTaskElems / std::max<int64_t>(1, out_w));
  if (rows <= grain) body(0, rows);
  else pool.parallel_for(rows, pool.balanced_grain(rows, grain), body);
}

}  // namespace

int64_t replication_factor(const int64_t* col_index, int64_t in_w, int64_t out_w) {
  if (in_w <= 0 || out_w % in_w != 0) return 0;
  const int64_t k = out_w / in_w;
  for (int64_t i = 0; i < out_w; ++i)
    if (col_index[i] != i / k) return 0;
  return k;
}

bool nearest_gather_2d(ThreadPool& pool, const void* x, void* y, size_t elem_size, int64_t outer, int64_t in_h,
                       int64_t in_w, const int64_t* row_index, int64_t out_h, const int64_t* col_index, int64_t out_w) {
  switch (elem_size) {
    case 1: run<uint8_t>(pool, x, y, outer, in_h, in_w, row_index, out_h, col_index, out_w); return true;
    case 2: run<uint16_t>(pool, x, y, outer, in_h, in_w, row_index, out_h, col_index, out_w); return true;
    case 4: run<uint32_t>(pool, x, y, outer, in_h, in_w, row_index, out_h, col_index, out_w); return true;
    case 8: run<uint64_t>(pool, x, y, outer, in_h, in_w, row_index, out_h, col_index, out_w); return true;
    case 16: run<Bytes<16>>(pool, x, y, outer, in_h, in_w, row_index, out_h, col_index, out_w); return true;
    case 32: run<Bytes<32>>(pool, x, y, outer, in_h, in_w, row_index, out_h, col_index, out_w); return true;
    case 64: run<Bytes<64>>(pool, x, y, outer, in_h, in_w, row_index, out_h, col_index, out_w); return true;
    default: return false;
  }
}

}  // namespace dlrt::cpu
