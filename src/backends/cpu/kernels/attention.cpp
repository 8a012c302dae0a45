// The attention kernels (attention.h).
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "backends/cpu/kernels/attention.h"
#include "backends/cpu/kernels/gemm_amx.h"
#include "backends/cpu/kernels/gemm_bf16.h"
#include "backends/cpu/kernels/isa.h"
#include "backends/cpu/kernels/isa_target.h"
#include "backends/cpu/scratch.h"

namespace dlrt::cpu::attention {
namespace {

// Per-thread scratch: grows to the largest problem seen, then stays.
float* scratch(size_t n) {
  thread_local AlignedScratch buf;
  return buf.get<float>(n);
}

int64_t round8(int64_t n) { return (n + 7) / 8 * 8; }

// Kᵀ of head (b, h) into kt [D][ldk] (ldk = Skv rounded up to 8, zero-padded).
void pack_kt(const Problem& p, int64_t b, int64_t h, float* kt, int64_t ldk) {
  const float* k = p.k.base + b * p.k.sb + h * p.k.sh;
  for (int64_t c = 0; c < p.D; ++c) {
    float* dst = kt + c * ldk;
    const float* src = k + c * p.k.sd;
    if (p.k.ss == 1) std::memcpy(dst, src, sizeof(float) * p.Skv);
    else
      for (int64_t j = 0; j < p.Skv; ++j) dst[j] = src[j * p.k.ss];
    for (int64_t j = p.Skv; j < ldk; ++j) dst[j] = 0;
  }
}

// Adds scale/mask to rows of scores and turns them into softmax numerators;
// returns 1/sum per row in inv. Generic version.
void softmax_rows_generic(const Problem& p, int64_t b, int64_t h, int64_t i0, int rows, float* s, int64_t lds,
                          float* inv) {
  for (int r = 0; r < rows; ++r) {
    float* row = s + r * lds;
    const float* m = p.mask_row(b, h, i0 + r);
    float mx = -std::numeric_limits<float>::infinity();
    for (int64_t j = 0; j < p.Skv; ++j) {
      float x = row[j] * p.scale + (m ? m[j * p.mk] : 0.0f);
      row[j] = x;
      mx = std::max(mx, x);
    }
    if (mx == -std::numeric_limits<float>::infinity()) mx = 0;  // fully masked row: NaN-free, as unfused
    float sum = 0;
    for (int64_t j = 0; j < p.Skv; ++j) {
      float e = std::exp(row[j] - mx);
      row[j] = e;
      sum += e;
    }
    inv[r] = 1.0f / sum;
  }
}

// Problem::zero_undefined_rows on rows [i0, i0 + rows) of head (b, h), once
// their outputs are written: inv[r] = 1/sum is not finite where the sum was 0 or NaN.
void clear_undefined_rows(const Problem& p, int64_t b, int64_t h, int64_t i0, int rows, const float* inv) {
  if (!p.zero_undefined_rows) return;
  for (int r = 0; r < rows; ++r)
    if (!std::isfinite(inv[r])) {
      float* o = p.out + b * p.ob + h * p.oh + (i0 + r) * p.os;
      for (int64_t c = 0; c < p.Dv; ++c) o[c] = 0.0f;
    }
}

}  // namespace
}  // namespace dlrt::cpu::attention

#define DLRT_SIMD_BODY "backends/cpu/kernels/attention_simd.h"
#include "backends/cpu/kernels/simd/instantiate.h"

namespace dlrt::cpu::attention {

void attend_generic(const Problem& p, int64_t b, int64_t h, int64_t r0, int64_t r1) {
  const int64_t ldk = round8(p.Skv);
  float* kt = scratch(static_cast<size_t>(p.D * ldk + kRows * ldk + kRows * p.Dv));
  float* s = kt + p.D * ldk;
  float* acc = s + kRows * ldk;
  pack_kt(p, b, h, kt, ldk);
  const float* q = p.q.base + b * p.q.sb + h * p.q.sh;
  const float* v = p.v.base + b * p.v.sb + h * p.v.sh;
  for (int64_t i0 = r0; i0 < r1; i0 += kRows) {
    int rows = static_cast<int>(std::min<int64_t>(kRows, r1 - i0));
    for (int r = 0; r < rows; ++r) {
      float* srow = s + r * ldk;
      std::fill(srow, srow + p.Skv, 0.0f);
      const float* qr = q + (i0 + r) * p.q.ss;
      for (int64_t c = 0; c < p.D; ++c) {
        float qc = qr[c * p.q.sd];
        const float* kr = kt + c * ldk;
        for (int64_t j = 0; j < p.Skv; ++j) srow[j] += qc * kr[j];
      }
    }
    float inv[kRows];
    // On NEON (the simd/ level without x86 paths) the 128-bit softmax rows.
    if (cpu_has_simd_kernels())
      DLRT_SIMD_CALL(simd_width(), attention_softmax_rows, p, b, h, i0, rows, s, ldk, inv);
    else
      softmax_rows_generic(p, b, h, i0, rows, s, ldk, inv);
    for (int r = 0; r < rows; ++r) {
      float* a = acc + r * p.Dv;
      std::fill(a, a + p.Dv, 0.0f);
      const float* srow = s + r * ldk;
      for (int64_t j = 0; j < p.Skv; ++j) {
        const float* vr = v + j * p.v.ss;
        float pj = srow[j];
        for (int64_t c = 0; c < p.Dv; ++c) a[c] += pj * vr[c * p.v.sd];
      }
      float* o = p.out + b * p.ob + h * p.oh + (i0 + r) * p.os;
      for (int64_t c = 0; c < p.Dv; ++c) o[c] = a[c] * inv[r];
    }
    clear_undefined_rows(p, b, h, i0, rows, inv);
  }
}

void attend_vec(SimdWidth w, const Problem& p, int64_t b, int64_t h, int64_t r0, int64_t r1) {
  DLRT_SIMD_CALL(w, attention_attend, p, b, h, r0, r1);
}

#if defined(__x86_64__) || defined(__i386__)
namespace {

// Precision bf16x3 (gemm_amx.h): Q·Kᵀ and P·V as AMX tile products, the
// softmax between them as in attention_attend (attention_simd.h). Per task: Kᵀ (as
// attention_pack_kt lays it out) and V split into tiles once, then blocks of
// up to kAmxRows query rows: scores, softmax, P·V, each row scaled by its
// 1/sum on the way out. Needs Q's and V's head dims contiguous.
constexpr int64_t kAmxRows = 64;
std::atomic<uint64_t> g_amx_runs{0};
std::atomic<uint64_t> g_bf16_runs{0};
}  // namespace

namespace {

// Q·Kᵀ and P·V through a GEMM against a B packed per task: bf16x3 on AMX
// tiles (attend_amx) or bf16 (attend_bf16); both take the same arguments.
using PackedBytes = size_t (*)(int64_t, int64_t);
using PackB = void (*)(bool, int64_t, int64_t, const float*, int64_t, void*);
template <PackedBytes packed_bytes, PackB pack_b, typename Gemm>
DLRT_AVX512 void attend_packed(const Problem& p, int64_t b, int64_t h, int64_t r0, int64_t r1, Gemm gemm) {
  const int64_t ldk = (p.Skv + 31) / 32 * 32;
  const size_t kt_floats = static_cast<size_t>(p.D * ldk), s_floats = static_cast<size_t>(kAmxRows * ldk);
  const size_t o_floats = static_cast<size_t>(kAmxRows * p.Dv);
  // Packed operands in float units (rounded up to 16: the offsets stay 64-byte aligned).
  const size_t bk_floats = (packed_bytes(p.D, p.Skv) / 4 + 15) / 16 * 16;
  const size_t bv_floats = (packed_bytes(p.Skv, p.Dv) / 4 + 15) / 16 * 16;
  float* kt = scratch(kt_floats + s_floats + o_floats + bk_floats + bv_floats + kAmxRows);
  float* s = kt + kt_floats;
  float* o = s + s_floats;
  float* bk = o + o_floats;
  float* bv = bk + bk_floats;
  float* inv = bv + bv_floats;
  simd::w512::attention_pack_kt(p, b, h, kt, ldk);
  pack_b(false, p.D, p.Skv, kt, ldk, bk);
  const float* v = p.v.base + b * p.v.sb + h * p.v.sh;
  pack_b(false, p.Skv, p.Dv, v, p.v.ss, bv);
  const float* q = p.q.base + b * p.q.sb + h * p.q.sh;
  for (int64_t i0 = r0; i0 < r1; i0 += kAmxRows) {
    const int rows = static_cast<int>(std::min<int64_t>(kAmxRows, r1 - i0));
    gemm(rows, p.Skv, p.D, 1.0f, q + i0 * p.q.ss, p.q.ss, false, bk, 0.0f, s, ldk, nullptr, nullptr);
    simd::w512::attention_softmax_rows(p, b, h, i0, rows, s, ldk, inv);
    gemm(rows, p.Dv, p.Skv, 1.0f, s, ldk, false, bv, 0.0f, o, p.Dv, nullptr, nullptr);
    simd::w512::attention_scale_rows(p, b, h, i0, rows, o, p.Dv, inv);
    clear_undefined_rows(p, b, h, i0, rows, inv);
  }
}

}  // namespace

DLRT_AVX512 void attend_amx(const Problem& p, int64_t b, int64_t h, int64_t r0, int64_t r1) {
  g_amx_runs.fetch_add(1, std::memory_order_relaxed);
  attend_packed<amx_bf16x3_packed_bytes, amx_bf16x3_pack_b>(p, b, h, r0, r1, amx_bf16x3_gemm);
}

DLRT_AVX512 void attend_bf16(const Problem& p, int64_t b, int64_t h, int64_t r0, int64_t r1) {
  g_bf16_runs.fetch_add(1, std::memory_order_relaxed);
  auto gemm = [](int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t lda, bool ta, const void* pb,
                 float beta, float* C, int64_t ldc, const GemmEpilogue* ep, ThreadPool* pool) {
    bf16_gemm(M, N, K, alpha, A, lda, ta, pb, beta, C, ldc, ep, pool);
  };
  attend_packed<bf16_packed_b_bytes, bf16_pack_b>(p, b, h, r0, r1, gemm);
}
#endif

uint64_t amx_runs() {
#if defined(__x86_64__) || defined(__i386__)
  return g_amx_runs.load(std::memory_order_relaxed);
#else
  return 0;
#endif
}

uint64_t bf16_runs() {
#if defined(__x86_64__) || defined(__i386__)
  return g_bf16_runs.load(std::memory_order_relaxed);
#else
  return 0;
#endif
}

}  // namespace dlrt::cpu::attention
