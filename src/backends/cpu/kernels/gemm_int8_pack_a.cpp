// Packing A's rows for the 8-bit GEMM's kernels (gemm_int8.h): the vector
// kernels' row blocks (groups of 4 values, row-minor) and the AMX kernel's tiles.
#include <cstring>

#include "backends/cpu/kernels/gemm_int8.h"
#include "backends/cpu/kernels/isa.h"
#include "backends/cpu/scratch.h"

namespace dlrt::cpu::int8_detail {
namespace {
constexpr int64_t kGroup = 4;  // k per dot product

// How many of the K bytes at p have the top bit set (int8 values below 0).
int64_t count_high(const uint8_t* p, int64_t K) {
  int64_t n = 0;
  for (int64_t k = 0; k < K; ++k) n += p[k] >> 7;
  return n;
}

// Stores the 4 values of one group of one row (v's bytes, low first) at
// group-row index idx of a block: 4 bytes, or 4 int16 for the wide kernel.
inline void store_group(uint8_t* block, int64_t idx, uint32_t v, bool wide) {
  if (!wide) {
    std::memcpy(block + idx * kGroup, &v, 4);
    return;
  }
  const uint16_t w[4] = {static_cast<uint16_t>(v & 0xFF), static_cast<uint16_t>((v >> 8) & 0xFF),
                         static_cast<uint16_t>((v >> 16) & 0xFF), static_cast<uint16_t>(v >> 24)};
  std::memcpy(block + idx * kGroup * 2, w, sizeof w);
}

// The vector packer of a whole block of A's rows, for the 8-row kernel's
// bytes or the wide kernel's int16 (null: none here).
PackA8Fn a_block_packer(int64_t mr, bool wide) {
  if (wide) return mr == 4 ? avx2_pack_a4_wide() : nullptr;
  return mr == 8 && cpu_isa() >= CpuIsa::kAvx512 ? avx512_pack_a8() : nullptr;
}

}  // namespace

int64_t a_block_bytes(int64_t kg, int64_t mr, bool wide, bool tiled) {
  if (tiled) kg = (kg + 15) / 16 * 16;
  return kg * mr * 4 * (wide ? 2 : 1);
}

void pack_a_blocks(const void* A, int64_t lda, int64_t M, int64_t K, int64_t mr, bool a_signed, int64_t b0, int64_t b1,
                   uint8_t* blocks, uint32_t* row_sums, bool want_sums, bool wide, bool tiled) {
  const int64_t kg = (K + kGroup - 1) / kGroup, a_block = a_block_bytes(kg, mr, wide, tiled);
  const uint8_t flip = a_signed ? 0x80 : 0;  // int8 + 128 as uint8
  const PackA8Fn pack8 = a_block_packer(mr, wide);
  for (int64_t mb = b0; mb < b1; ++mb) {
    uint8_t* dst = blocks + mb * a_block;
    if (tiled) {  // the AMX kernel's tiles; the row sums below
      const uint8_t* rows[32];
      for (int64_t r = 0; r < 32; ++r)
        rows[r] = mb * mr + r < M ? static_cast<const uint8_t*>(A) + (mb * mr + r) * lda : nullptr;
      amx_pack_a(rows, K, flip, dst);
    }
    // Full blocks of 8 rows: the first groups 16 at a time with AVX-512.
    int64_t first = 0;
    if (pack8 && mb * mr + mr <= M) {
      const uint8_t* rows[8];
      for (int r = 0; r < mr; ++r) rows[r] = static_cast<const uint8_t*>(A) + (mb * mr + r) * lda;
      first = pack8(rows, K / kGroup, flip, dst);
    }
    for (int64_t r = 0; r < mr; ++r) {
      const int64_t i = mb * mr + r;
      if (i >= M) {
        for (int64_t g = 0; g < kg && !tiled; ++g) store_group(dst, g * mr + r, 0, wide);
        continue;
      }
      const uint8_t* src = static_cast<const uint8_t*>(A) + i * lda;
      // sum (src ^ flip) = sum src, or sum src - 128 K for int8 read as uint8 (+128 each).
      if (want_sums) {
        uint32_t s = 0;
        for (int64_t k = 0; k < K; ++k) s += src[k];
        if (a_signed) s += static_cast<uint32_t>(128 * K) - 256u * static_cast<uint32_t>(count_high(src, K));
        row_sums[i] = s;
      } else {
        row_sums[i] = 0;
      }
      if (tiled) continue;
      const int64_t full = K / kGroup;
      for (int64_t g = first; g < full; ++g) {
        uint32_t v;
        std::memcpy(&v, src + g * kGroup, 4);
        store_group(dst, g * mr + r, v ^ flip * 0x01010101u, wide);
      }
      if (full < kg) {
        uint32_t v = 0;
        for (int64_t t = 0; t < kGroup; ++t) {
          const int64_t k = full * kGroup + t;
          if (k < K) v |= static_cast<uint32_t>(src[k] ^ flip) << (8 * t);
        }
        store_group(dst, full * mr + r, v, wide);
      }
    }
  }
}

void pack_a_rows(const Int8ARows& src, int64_t M, int64_t mr, bool a_signed, int64_t b0, int64_t b1, uint8_t* blocks,
                 uint32_t* row_sums, bool want_sums, bool wide, bool tiled) {
  const int64_t es = wide ? 2 : 1;
  const int64_t gs = src.seg_len / kGroup, kg = src.segments * gs, a_block = a_block_bytes(kg, mr, wide, tiled);
  const uint8_t flip = a_signed ? 0x80 : 0;
  const PackA8Fn pack8 = a_block_packer(mr, wide);
  // The runs behind a null pointer (pad bytes) and behind rows past M (stored as 0).
  thread_local AlignedScratch fill_scratch;
  uint8_t* pad_run = fill_scratch.get<uint8_t>(static_cast<size_t>(2 * src.seg_len), AlignedScratch::Growth::kByHalf);
  uint8_t* zero_run = pad_run + src.seg_len;
  std::memset(pad_run, src.pad, static_cast<size_t>(src.seg_len));
  std::memset(zero_run, flip, static_cast<size_t>(src.seg_len));
  // The AMX kernel's rows gathered whole first (amx_pack_a packs them).
  thread_local AlignedScratch row_scratch;
  uint8_t* whole =
      tiled ? row_scratch.get<uint8_t>(static_cast<size_t>(32 * kg * kGroup), AlignedScratch::Growth::kByHalf)
            : nullptr;
  for (int64_t mb = b0; mb < b1; ++mb) {
    uint8_t* dst = blocks + mb * a_block;
    uint32_t sums[32] = {};
    for (int64_t seg = 0; seg < src.segments; ++seg) {
      const uint8_t* rows[32];
      for (int64_t r = 0; r < mr; ++r) {
        const int64_t i = mb * mr + r;
        const uint8_t* p = i < M ? src.ptr(i, seg) : zero_run;
        rows[r] = p ? p : pad_run;
        if (want_sums && i < M)
          for (int64_t k = 0; k < src.seg_len; ++k) sums[r] += static_cast<uint8_t>(rows[r][k] ^ flip);
      }
      if (tiled) {
        for (int64_t r = 0; r < mr; ++r) std::memcpy(whole + (r * kg + seg * gs) * kGroup, rows[r], src.seg_len);
        continue;
      }
      uint8_t* d = dst + seg * gs * mr * kGroup * es;
      const int64_t first = pack8 ? pack8(rows, gs, flip, d) : 0;
      for (int64_t g = first; g < gs; ++g)
        for (int64_t r = 0; r < mr; ++r) {
          uint32_t v;
          std::memcpy(&v, rows[r] + g * kGroup, 4);
          store_group(d, g * mr + r, v ^ flip * 0x01010101u, wide);
        }
    }
    if (tiled) {
      const uint8_t* rows[32];
      for (int64_t r = 0; r < mr; ++r) rows[r] = mb * mr + r < M ? whole + r * kg * kGroup : nullptr;
      amx_pack_a(rows, kg * kGroup, flip, dst);
    }
    for (int64_t r = 0; r < mr && mb * mr + r < M; ++r) row_sums[mb * mr + r] = want_sums ? sums[r] : 0;
  }
}

}  // namespace dlrt::cpu::int8_detail
