// Packing, the portable microkernel and the driver of the 8-bit GEMM (gemm_int8.h).
#include "backends/cpu/kernels/gemm_int8.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <new>

#include "backends/cpu/kernels/isa.h"
#include "backends/cpu/kernels/quantize_rows.h"
#include "backends/cpu/kernels/simd/width.h"
#include "backends/cpu/scratch.h"
#include "core/env.h"
#include "device/cpu_features.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace dlrt::cpu {
namespace {

constexpr int64_t kPanel = 16;  // columns per packed B panel
constexpr int64_t kGroup = 4;   // k per dot product
// Long K runs in ranges of this many groups (a 48-column B block of 18 KiB),
// over runs of kMChunk row blocks.
constexpr int64_t kKcGroups = 96;
constexpr int64_t kMChunk = 8;
static_assert(kKcGroups % 16 == 0, "the AMX kernel steps through K 16 groups at a time");

constexpr int kMaxKernels = 8;
// The AMX kernel below this many rows of C runs on the best other kernel
// (most of a 32-row tile block would be zeros).
constexpr int64_t kAmxMinRows = 16;

struct Kernel {
  int mr = 4, nv = 1;                     // tile: mr rows x 16 * nv columns
  int8_detail::TileFn fn[4] = {};         // fn[v]: the tile of v panels, v in [1, nv]
  const char* name = "generic";
  bool wide = false;                      // reads the int16 layouts (PackedInt8B::wide)
  bool tiled = false;                     // AMX: A in tiles (amx_pack_a), K in steps of 16 groups
  void (*begin)() = nullptr;              // before a thread's first tile (tile configuration)
  void (*end)() = nullptr;                // after its last (tile release)
};

Kernel amx_kernel(bool model) {
  const int8_detail::AmxEngine e = int8_detail::amx_engine(model);
  Kernel k;
  k.mr = 32;
  k.nv = 2;
  k.fn[1] = e.fn[1];
  k.fn[2] = e.fn[2];
  k.name = model ? "amx-model" : "amx";
  k.tiled = true;
  k.begin = e.begin;
  k.end = e.end;
  return k;
}

// Every kernel this CPU can run under the current ISA cap, best first
// (without ask_os, AMX only where the OS was asked for it before).
int available(Kernel* out, bool ask_os = true) {
  const device::CpuFeatures& f = device::cpu_features();
  int n = 0;
  if (!int8_detail::amx_unavailable(ask_os)) out[n++] = amx_kernel(false);
  if (cpu_isa() >= CpuIsa::kAvx512 && f.avx512_vnni && int8_detail::avx512_vnni_tile(1)) {
    Kernel& k = out[n++];
    k.mr = 8;
    k.nv = 3;
    for (int v = 1; v <= 3; ++v) k.fn[v] = int8_detail::avx512_vnni_tile(v);
    k.name = "avx512-vnni";
  }
  if (cpu_isa() >= CpuIsa::kAvx2 && f.avx_vnni && int8_detail::avx_vnni_tile()) {
    Kernel& k = out[n++];
    k.mr = 6;
    k.fn[1] = int8_detail::avx_vnni_tile();
    k.name = "avx-vnni";
  }
  if (cpu_isa() >= CpuIsa::kAvx2 && int8_detail::avx2_wide_tile()) {
    Kernel& k = out[n++];
    k.mr = 4;
    k.fn[1] = int8_detail::avx2_wide_tile();
    k.name = "avx2";
    k.wide = true;
  }
#if defined(__aarch64__)
  // The neon level: the portable layouts, by HWCAP.
  if (cpu_isa() >= CpuIsa::kNeon && f.i8mm && int8_detail::neon_i8mm_tile()) {
    Kernel& k = out[n++];
    k.fn[1] = int8_detail::neon_i8mm_tile();
    k.name = "neon-i8mm";
  }
  if (cpu_isa() >= CpuIsa::kNeon && f.dotprod && int8_detail::neon_dotprod_tile()) {
    Kernel& k = out[n++];
    k.fn[1] = int8_detail::neon_dotprod_tile();
    k.name = "neon-dotprod";
  }
  if (cpu_isa() >= CpuIsa::kNeon && int8_detail::neon_tile()) {
    Kernel& k = out[n++];
    k.fn[1] = int8_detail::neon_tile();
    k.name = "neon";
  }
#endif
  Kernel& k = out[n++];
  k.fn[1] = int8_detail::generic_tile;
  out[n++] = amx_kernel(true);
  return n;
}

std::atomic<int> forced{-1};  // ScopedInt8Kernel's choice: an index into available()

// The float output stage on a rows x cols block of C at c (row i0, column j0
// first), in place. Compiled for the baseline target: separate multiplies and add.
void to_float(const Int8FloatOutput& f, int32_t* c, int64_t ldc, int64_t rows, int64_t cols, int64_t i0, int64_t j0) {
  const float* sc = f.scale + j0 * f.scale_stride;
  const float* b = f.bias ? f.bias + j0 : nullptr;
  for (int64_t r = 0; r < rows; ++r) {
    int32_t* cr = c + r * ldc;
    const float* rs = f.row_scale ? f.row_scale + i0 + r : nullptr;
    for (int64_t q = 0; q < cols; ++q) {
      int32_t v;
      std::memcpy(&v, cr + q, sizeof v);
      const float s = rs ? *rs * sc[q * f.scale_stride] : sc[q * f.scale_stride];
      float y = static_cast<float>(v) * s;
      if (b) y = y + b[q];
      std::memcpy(cr + q, &y, sizeof y);
    }
  }
}

// The real AMX kernel is chosen only when DLRT_CPU_AMX_INT8=on: it has run on
// its scalar model only, never on AMX hardware (tests force it where present).
bool amx_opted_in() {
  static const bool on = [] {
    const char* v = env::get("DLRT_CPU_AMX_INT8");
    return v && std::strcmp(v, "on") == 0;
  }();
  return on;
}
constexpr const char* kAmxOff = "present, off unless DLRT_CPU_AMX_INT8=on (not yet verified on AMX hardware)";

// The index into available()'s list of the kernel that runs unless a test forces one:
// the first, unless that is "amx" without the opt-in.
int default_kernel(const Kernel* ks) { return std::strcmp(ks[0].name, "amx") == 0 && !amx_opted_in() ? 1 : 0; }

Kernel pick_kernel() {
  Kernel ks[kMaxKernels];
  const int n = available(ks);
  const int f = forced.load(std::memory_order_relaxed);
  return ks[f >= 0 && f < n ? f : default_kernel(ks)];
}

// The kernel for a B in the layout it was packed in: pick_kernel()'s when it
// reads that layout (it does unless the choice changed since the packing),
// else the best that does.
Kernel kernel_for(const PackedInt8B& B) {
  Kernel k = pick_kernel();
  if (k.wide == (B.wide != nullptr)) return k;
  Kernel ks[kMaxKernels];
  const int n = available(ks);
  for (int i = 0; i < n; ++i)
    if (ks[i].wide == (B.wide != nullptr)) return ks[i];
  Kernel g;  // a wide B with the ISA now below AVX2
  g.fn[1] = int8_detail::generic_wide_tile;
  g.name = "generic";
  g.wide = true;
  return g;
}

// The best kernel that reads B's byte layout without tiles (the AMX kernel's
// stand-in on GEMMs with few rows).
Kernel kernel_for_bytes() {
  Kernel ks[kMaxKernels];
  const int n = available(ks);
  for (int i = 0; i < n; ++i)
    if (!ks[i].wide && !ks[i].tiled) return ks[i];
  return ks[n - 1];
}

void free_aligned(uint8_t* p) { ::operator delete(p, std::align_val_t(64)); }

}  // namespace

const char* int8_gemm_kernel_name() { return pick_kernel().name; }

std::string int8_gemm_engine(bool ask_os) {
  Kernel ks[kMaxKernels];
  const int f = forced.load(std::memory_order_relaxed);  // an index into the full list
  const int n = available(ks, ask_os || f >= 0);
  const bool forced_here = f >= 0 && f < n;
  const Kernel& k = ks[forced_here ? f : default_kernel(ks)];
  if (std::strcmp(k.name, "amx") == 0) return k.name;
  const char* why = int8_detail::amx_unavailable(ask_os);
  if (!why && !forced_here) why = kAmxOff;  // AMX runs here but is not opted in
  return std::string(k.name) + " (amx: " + (why ? why : "not chosen") + ")";
}

std::vector<const char*> int8_gemm_kernels() {
  Kernel ks[kMaxKernels];
  const int n = available(ks);
  std::vector<const char*> names;
  for (int i = 0; i < n; ++i) names.push_back(ks[i].name);
  return names;
}

ScopedInt8Kernel::ScopedInt8Kernel(const char* name) : previous_(forced.load()) {
  Kernel ks[kMaxKernels];
  const int n = available(ks);
  for (int i = 0; i < n; ++i)
    if (std::strcmp(ks[i].name, name) == 0) forced.store(i);
}

ScopedInt8Kernel::~ScopedInt8Kernel() { forced.store(previous_); }

size_t PackedInt8B::bytes(int64_t K, int64_t N) {
  const int64_t kg = (K + kGroup - 1) / kGroup, panels = (N + kPanel - 1) / kPanel;
  const int64_t value_bytes = pick_kernel().wide ? 2 : 1;
  // The panels, then the column sums (int32, 64-byte aligned as the panels are a multiple of 64 bytes).
  return static_cast<size_t>(panels * kg * kPanel * kGroup * value_bytes + panels * kPanel * 4);
}

PackedInt8B PackedInt8B::pack_into(void* storage, bool trans, int64_t K, int64_t N, const void* B, int64_t ldb,
                                   bool is_signed) {
  const auto* b = static_cast<const uint8_t*>(B);
  auto rows = [&](int64_t k, int64_t j0, int64_t j1, uint8_t* dst) {
    if (!trans) {
      std::memcpy(dst, b + k * ldb + j0, static_cast<size_t>(j1 - j0));
    } else {
      for (int64_t j = j0; j < j1; ++j) dst[j - j0] = b[j * ldb + k];
    }
  };
  return pack_rows_into(storage, K, N, rows, is_signed, nullptr);
}

PackedInt8B PackedInt8B::pack_rows_into(void* storage, int64_t K, int64_t N, RowSource rows, bool is_signed,
                                        ThreadPool* pool) {
  PackedInt8B p;
  p.K = K;
  p.N = N;
  p.kg = (K + kGroup - 1) / kGroup;
  p.panels = (N + kPanel - 1) / kPanel;
  p.shift = is_signed ? 0 : -128;
  // The AVX2 kernel's B: int16 (PackedInt8B::wide) instead of bytes (that kernel exists only where this does).
  const int8_detail::PackWideFn pack_wide = pick_kernel().wide ? int8_detail::avx2_pack_wide() : nullptr;
  const bool wide = pack_wide != nullptr;
  int8_t* data = static_cast<int8_t*>(storage);
  int16_t* wdata = static_cast<int16_t*>(storage);
  int32_t* sums = reinterpret_cast<int32_t*>(data + p.panels * p.kg * kPanel * kGroup * (wide ? 2 : 1));
  const uint8_t flip = is_signed ? 0 : 0x80;  // uint8 - 128 as int8
  const int64_t kg = p.kg;
  const int8_detail::PackQuadFn quad =
      !wide && cpu_isa() >= CpuIsa::kAvx512 ? int8_detail::avx512_pack_quad() : nullptr;
  // Each task: a range of panels, all groups; 4 rows of its columns at a time.
  auto pack_panels = [&](int64_t p0, int64_t p1) {
    const int64_t j0 = p0 * kPanel, j1 = std::min(N, p1 * kPanel), width = (p1 - p0) * kPanel;
    thread_local AlignedScratch row_scratch;
    uint8_t* buf = row_scratch.get<uint8_t>(static_cast<size_t>(4 * width + 4 * width), AlignedScratch::Growth::kByHalf);
    int32_t* colsum = reinterpret_cast<int32_t*>(buf + 4 * width);
    std::fill(colsum, colsum + width, 0);
    for (int64_t g = 0; g < kg; ++g) {
      uint8_t* r[4];
      for (int t = 0; t < 4; ++t) {
        r[t] = buf + t * width;
        const int64_t k = g * kGroup + t;
        if (k < K) {
          rows(k, j0, j1, r[t]);
          std::fill(r[t] + (j1 - j0), r[t] + width, flip);  // stored as 0 after the flip below
        } else {
          std::fill(r[t], r[t] + width, flip);
        }
      }
      // Per panel: the raw bytes flipped to the stored int8 values, their
      // column sums, and 4 rows x 16 columns transposed to 16 columns x 4 bytes;
      // four panels at a time with AVX-512.
      int64_t pn = p0;
      if (wide) {
        for (; pn < p1; ++pn) {
          const int64_t c0 = (pn - p0) * kPanel;
          const uint8_t* rq[4] = {r[0] + c0, r[1] + c0, r[2] + c0, r[3] + c0};
          pack_wide(rq, flip, wdata + (pn * kg + g) * kPanel * kGroup, colsum + c0);
        }
      }
      if (quad)
        for (; pn + 4 <= p1; pn += 4) {
          const int64_t c0 = (pn - p0) * kPanel;
          const uint8_t* rq[4] = {r[0] + c0, r[1] + c0, r[2] + c0, r[3] + c0};
          quad(rq, flip, data + (pn * kg + g) * kPanel * kGroup, kg * kPanel * kGroup, colsum + c0);
        }
      for (; pn < p1; ++pn) {
        int8_t* dst = data + (pn * kg + g) * kPanel * kGroup;
        const int64_t c0 = (pn - p0) * kPanel;
        int32_t* cs = colsum + c0;
#if defined(__SSE2__)
        const __m128i f = _mm_set1_epi8(static_cast<char>(flip));
        const __m128i a = _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(r[0] + c0)), f);
        const __m128i b = _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(r[1] + c0)), f);
        const __m128i c = _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(r[2] + c0)), f);
        const __m128i d = _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(r[3] + c0)), f);
        // Column sums: bytes sign-extended to 16 bits (4 rows fit), then to 32.
        auto lo16 = [](__m128i v) { return _mm_srai_epi16(_mm_unpacklo_epi8(v, v), 8); };
        auto hi16 = [](__m128i v) { return _mm_srai_epi16(_mm_unpackhi_epi8(v, v), 8); };
        const __m128i s_lo = _mm_add_epi16(_mm_add_epi16(lo16(a), lo16(b)), _mm_add_epi16(lo16(c), lo16(d)));
        const __m128i s_hi = _mm_add_epi16(_mm_add_epi16(hi16(a), hi16(b)), _mm_add_epi16(hi16(c), hi16(d)));
        __m128i* csv = reinterpret_cast<__m128i*>(cs);
        _mm_storeu_si128(csv + 0, _mm_add_epi32(_mm_loadu_si128(csv + 0), _mm_srai_epi32(_mm_unpacklo_epi16(s_lo, s_lo), 16)));
        _mm_storeu_si128(csv + 1, _mm_add_epi32(_mm_loadu_si128(csv + 1), _mm_srai_epi32(_mm_unpackhi_epi16(s_lo, s_lo), 16)));
        _mm_storeu_si128(csv + 2, _mm_add_epi32(_mm_loadu_si128(csv + 2), _mm_srai_epi32(_mm_unpacklo_epi16(s_hi, s_hi), 16)));
        _mm_storeu_si128(csv + 3, _mm_add_epi32(_mm_loadu_si128(csv + 3), _mm_srai_epi32(_mm_unpackhi_epi16(s_hi, s_hi), 16)));
        const __m128i ab_lo = _mm_unpacklo_epi8(a, b), ab_hi = _mm_unpackhi_epi8(a, b);
        const __m128i cd_lo = _mm_unpacklo_epi8(c, d), cd_hi = _mm_unpackhi_epi8(c, d);
        __m128i* out = reinterpret_cast<__m128i*>(dst);
        _mm_store_si128(out + 0, _mm_unpacklo_epi16(ab_lo, cd_lo));
        _mm_store_si128(out + 1, _mm_unpackhi_epi16(ab_lo, cd_lo));
        _mm_store_si128(out + 2, _mm_unpacklo_epi16(ab_hi, cd_hi));
        _mm_store_si128(out + 3, _mm_unpackhi_epi16(ab_hi, cd_hi));
#else
        for (int64_t cc = 0; cc < kPanel; ++cc)
          for (int t = 0; t < 4; ++t) {
            const int8_t v = static_cast<int8_t>(r[t][c0 + cc] ^ flip);
            dst[cc * kGroup + t] = v;
            cs[cc] += v;
          }
#endif
      }
    }
    std::memcpy(sums + p0 * kPanel, colsum, sizeof(int32_t) * static_cast<size_t>(width));
  };
  // One contiguous range of panels per thread: every call of `rows` has a
  // fixed cost (an im2col row's set-up), so fewer, wider ranges pack faster.
  if (pool && p.panels > 1)
    pool->parallel_for(p.panels, (p.panels + pool->num_threads() - 1) / pool->num_threads(), pack_panels);
  else pack_panels(0, p.panels);
  if (wide) p.wide = wdata;
  else p.data = data;
  p.col_sums = sums;
  return p;
}

std::shared_ptr<const PackedInt8B> PackedInt8B::pack(bool trans, int64_t K, int64_t N, const void* B, int64_t ldb,
                                                     bool is_signed) {
  auto* storage = static_cast<uint8_t*>(::operator new(bytes(K, N), std::align_val_t(64)));
  auto p = std::make_shared<PackedInt8B>(pack_into(storage, trans, K, N, B, ldb, is_signed));
  p->owned_ = std::unique_ptr<uint8_t[], void (*)(uint8_t*)>(storage, free_aligned);
  return p;
}

std::shared_ptr<const PackedInt8A> PackedInt8A::pack(int64_t M, int64_t K, const void* A, int64_t lda,
                                                     bool is_signed) {
  const Kernel kern = pick_kernel();
  const int64_t mr = kern.mr, kg = (K + kGroup - 1) / kGroup;
  const int64_t mblocks = (M + mr - 1) / mr;
  const int64_t block_bytes = (mblocks * int8_detail::a_block_bytes(kg, mr, kern.wide, kern.tiled) + 63) / 64 * 64;
  const size_t bytes = static_cast<size_t>(block_bytes + M * 4);
  auto* storage = static_cast<uint8_t*>(::operator new(bytes, std::align_val_t(64)));
  auto p = std::make_shared<PackedInt8A>();
  p->M = M;
  p->K = K;
  p->mr = static_cast<int>(mr);
  p->is_signed = is_signed;
  p->wide = kern.wide;
  p->tiled = kern.tiled;
  auto* sums = reinterpret_cast<uint32_t*>(storage + block_bytes);
  int8_detail::pack_a_blocks(A, lda, M, K, mr, is_signed, 0, mblocks, storage, sums, true, kern.wide, kern.tiled);
  p->data = storage;
  p->row_sums = sums;
  p->owned_ = std::unique_ptr<uint8_t[], void (*)(uint8_t*)>(storage, free_aligned);
  return p;
}

namespace {

constexpr int64_t kMaxTile = 32 * 32;  // int32 sums of the largest tile (amx; avx512-vnni's is 8 x 48)

// A kernel's per-thread set-up (the AMX tile configuration) for one range of tiles.
struct ThreadTiles {
  const Kernel& k;
  explicit ThreadTiles(const Kernel& kern) : k(kern) {
    if (k.begin) k.begin();
  }
  ~ThreadTiles() {
    if (k.end) k.end();
  }
  ThreadTiles(const ThreadTiles&) = delete;
  ThreadTiles& operator=(const ThreadTiles&) = delete;
};

// One 8-bit GEMM once A is packed (or the caller's packing is taken) and B's
// column terms are made: what its tiles read, and how a tile's raw sums
// become C (corrected, then stored, converted to float or requantized).
struct Int8Gemm {
  Kernel kern;
  int64_t M = 0, N = 0, K = 0, MR = 0, NR = 0, kg = 0, mblocks = 0, nblocks = 0, a_block = 0, panel_stride = 0;
  int32_t a_shift = 0;
  const int32_t* a_zp = nullptr;
  int64_t a_zp_stride = 0;
  const PackedInt8B* b = nullptr;
  const int8_t* b_data = nullptr;  // B's panels in the kernel's layout
  int64_t es = 1;                  // bytes per packed value (2 for the wide kernel)
  const uint8_t* a_blocks = nullptr;
  const uint32_t* a_sums = nullptr;
  uint32_t* col_zp = nullptr;
  uint32_t* col_term = nullptr;
  uint32_t* col_total = nullptr;
  int8_detail::CorrectFn correct = nullptr;
  int8_detail::CorrectFloatFn correct_to_float = nullptr;  // null: correct, then to_float
  int8_detail::CorrectRequantFn correct_requant = nullptr;
  int8_detail::CorrectRequantUniformFn correct_requant_uniform = nullptr;
  bool per_column = false, uniform = false;
  const Int8FloatOutput* float_output = nullptr;
  const Int8RequantOutput* requant_output = nullptr;
  int32_t* C = nullptr;
  int64_t ldc = 0;

  // The tile (mb, nb) from its raw sums in acc.
  void finish(int64_t mb, int64_t nb, int32_t* acc) const {
    const int64_t i0 = mb * MR, j0 = nb * NR;
    const int64_t rows = std::min(MR, M - i0), cols = std::min(NR, N - j0);
    const int64_t nv = (cols + kPanel - 1) / kPanel;
    // C = sums - a_zp * (sum_k B - K * b_zp) - b_zp * sum_k A, all shifted, mod 2^32.
    if (uniform) {
      const Int8RequantOutput& q = *requant_output;
      // Rows [0, rows) only: zeroing the whole array costs more than a
      // small-K tile's sums. 0 when B's zero point is (the row sums were not made).
      uint32_t row_total[32];
      row_total[0] = 0;  // rows >= 1; tells GCC the array is written
      for (int64_t r = 0; r < rows; ++r) row_total[r] = col_zp[0] != 0 ? a_sums[i0 + r] * col_zp[0] : 0;
      const int64_t p0 = per_column ? j0 : i0;  // the first row's or column's parameters
      correct_requant_uniform(acc, kPanel * nv, rows, cols, col_total + j0, row_total, q.mult + p0,
                              q.bias ? q.bias + p0 : nullptr, q.zero_point, q.out_signed,
                              static_cast<uint8_t*>(q.out) + i0 * q.ldo + j0, q.ldo);
      return;
    }
    uint32_t az[32], rs[32];  // rows [0, rows), as row_total above
    az[0] = rs[0] = 0;
    for (int64_t r = 0; r < rows; ++r) {
      az[r] = static_cast<uint32_t>((a_zp ? a_zp[(i0 + r) * a_zp_stride] : 0) + a_shift);
      rs[r] = a_sums[i0 + r];
    }
    if (per_column) {
      // Corrected in place, then each element with its column's parameters.
      const Int8RequantOutput& q = *requant_output;
      correct(acc, kPanel * nv, rows, cols, az, rs, col_term + j0, col_zp + j0, acc, kPanel * nv);
      for (int64_t r = 0; r < rows; ++r) {
        const int32_t* src = acc + r * kPanel * nv;
        const int32_t* bias = q.bias ? q.bias + j0 : nullptr;
        if (q.out_signed)
          requantize_cols_s8(src, cols, bias, q.mult + j0, q.zero_point,
                             static_cast<int8_t*>(q.out) + (i0 + r) * q.ldo + j0);
        else
          requantize_cols_u8(src, cols, bias, q.mult + j0, q.zero_point,
                             static_cast<uint8_t*>(q.out) + (i0 + r) * q.ldo + j0);
      }
      return;
    }
    if (requant_output && correct_requant) {
      const Int8RequantOutput& q = *requant_output;
      correct_requant(acc, kPanel * nv, rows, cols, az, rs, col_term + j0, col_zp + j0, q.mult + i0,
                      q.bias ? q.bias + i0 : nullptr, q.zero_point, q.out_signed,
                      static_cast<uint8_t*>(q.out) + i0 * q.ldo + j0, q.ldo);
      return;
    }
    if (requant_output) {
      // Corrected in place (acc holds C's tile), then straight to 8 bits.
      const Int8RequantOutput& q = *requant_output;
      correct(acc, kPanel * nv, rows, cols, az, rs, col_term + j0, col_zp + j0, acc, kPanel * nv);
      for (int64_t r = 0; r < rows; ++r) {
        const int64_t i = i0 + r;
        const int32_t* src = acc + r * kPanel * nv;
        const int32_t bias = q.bias ? q.bias[i] : 0;
        if (q.out_signed)
          requantize_s8(src, cols, bias, q.mult[i], q.zero_point, static_cast<int8_t*>(q.out) + i * q.ldo + j0);
        else
          requantize_u8(src, cols, bias, q.mult[i], q.zero_point, static_cast<uint8_t*>(q.out) + i * q.ldo + j0);
      }
      return;
    }
    if (float_output && correct_to_float) {
      correct_to_float(acc, kPanel * nv, rows, cols, az, rs, col_term + j0, col_zp + j0, *float_output, i0, j0,
                       reinterpret_cast<float*>(C + i0 * ldc + j0), ldc);
      return;
    }
    correct(acc, kPanel * nv, rows, cols, az, rs, col_term + j0, col_zp + j0, C + i0 * ldc + j0, ldc);
    if (float_output) to_float(*float_output, C + i0 * ldc + j0, ldc, rows, cols, i0, j0);
  }

  // One pass over K per tile.
  void run_short_k(ThreadPool* pool) const {
    const int64_t panel_stride_bytes = panel_stride;
    // Threads split the longer side, so that each writes its own rows (or
    // columns) of C: a channels-last conv's pixels x few channels, split by
    // columns, would have two threads writing the same cache lines.
    const bool by_rows = mblocks >= nblocks;
    // A channels-last conv's tiles (uniform zero points, parameters per
    // column) finish in the kernel's registers on AVX512-VNNI.
    const bool fused = uniform && per_column && MR == 8 && kern.nv == 3 &&
                       int8_detail::avx512_vnni_requant_cols_tile(1) != nullptr;
    auto tiles = [&](int64_t t0, int64_t t1) {
      const ThreadTiles tt(kern);
      alignas(64) int32_t acc[kMaxTile];
      for (int64_t t = t0; t < t1; ++t) {
        const int64_t nb = by_rows ? t % nblocks : t / mblocks, mb = by_rows ? t / nblocks : t % mblocks;
        const int64_t j0 = nb * NR, nv = (std::min(NR, N - j0) + kPanel - 1) / kPanel;
        if (fused) {
          const Int8RequantOutput& q = *requant_output;
          const int64_t i0 = mb * MR;
          uint32_t row_total[8] = {};
          if (col_zp[0] != 0)
            for (int64_t r = 0; r < std::min(MR, M - i0); ++r) row_total[r] = a_sums[i0 + r] * col_zp[0];
          int8_detail::RequantColsTile rt;
          rt.rows = std::min(MR, M - i0);
          rt.cols = std::min(NR, N - j0);
          rt.col_total = col_total + j0;
          rt.row_total = row_total;
          rt.mult = q.mult + j0;
          rt.bias = q.bias ? q.bias + j0 : nullptr;
          rt.zero_point = q.zero_point;
          rt.out_signed = q.out_signed;
          rt.out = static_cast<uint8_t*>(q.out) + i0 * q.ldo + j0;
          rt.ldo = q.ldo;
          int8_detail::avx512_vnni_requant_cols_tile(static_cast<int>(nv))(
              kg, a_blocks + mb * a_block, b_data + (j0 / kPanel) * panel_stride_bytes, panel_stride_bytes, rt);
          continue;
        }
        // A narrow last column block runs the kernel's narrower variant.
        kern.fn[nv](kg, a_blocks + mb * a_block, b_data + (j0 / kPanel) * panel_stride_bytes, panel_stride_bytes, acc,
                    false);
        finish(mb, nb, acc);
      }
    };
    const int64_t ntiles = mblocks * nblocks;
    const int64_t tile_macs = std::max<int64_t>(1, MR * NR * K);
    const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 21) / tile_macs);
    if (pool)
      pool->parallel_for(ntiles, pool->balanced_grain(ntiles, grain), tiles);
    else
      tiles(0, ntiles);
  }

  // Long K: per column block and run of kMChunk row blocks, K in ranges of
  // kKcGroups groups, each range's B block (NR x 4 kKcGroups bytes) staying in
  // L1 while the row blocks of the run go over it; their sums accumulate in
  // a buffer until the last range.
  void run_long_k(ThreadPool* pool) const {
    const int64_t panel_stride_bytes = panel_stride;
    const int64_t mchunks = (mblocks + kMChunk - 1) / kMChunk;
    auto blocked = [&](int64_t t0, int64_t t1) {
      const ThreadTiles tt(kern);
      alignas(64) int32_t accs[kMChunk][kMaxTile];
      for (int64_t t = t0; t < t1; ++t) {
        const int64_t nb = t / mchunks, mb0 = (t % mchunks) * kMChunk, mb1 = std::min(mblocks, mb0 + kMChunk);
        const int64_t j0 = nb * NR, nv = (std::min(NR, N - j0) + kPanel - 1) / kPanel;
        const int8_t* bp = b_data + (j0 / kPanel) * panel_stride_bytes;
        for (int64_t g0 = 0; g0 < kg; g0 += kKcGroups) {
          const int64_t gn = std::min(kKcGroups, kg - g0);
          for (int64_t mb = mb0; mb < mb1; ++mb)
            kern.fn[nv](gn, a_blocks + mb * a_block + g0 * MR * kGroup * es, bp + g0 * kPanel * kGroup * es,
                        panel_stride_bytes, accs[mb - mb0], g0 > 0);
        }
        for (int64_t mb = mb0; mb < mb1; ++mb) finish(mb, nb, accs[mb - mb0]);
      }
    };
    const int64_t tasks = nblocks * mchunks;
    if (pool)
      pool->parallel_for(tasks, 1, blocked);
    else
      blocked(0, tasks);
  }
};

}  // namespace

void gemm_u8s8(int64_t M, int64_t N, int64_t K, const void* A, int64_t lda, bool a_signed, const int32_t* a_zp,
               int64_t a_zp_stride, const PackedInt8B& B, const int32_t* b_zp, int64_t b_zp_stride, int32_t* C,
               int64_t ldc, ThreadPool* pool, const PackedInt8A* packed_a, const Int8FloatOutput* float_output,
               const Int8RequantOutput* requant_output, const Int8ARows* a_rows) {
  if (M <= 0 || N <= 0) return;
  Kernel kern = kernel_for(B);
  if (kern.tiled && M < kAmxMinRows && forced.load(std::memory_order_relaxed) < 0) kern = kernel_for_bytes();
#if defined(__aarch64__)
  // One count per GEMM, so that a test can tell a NEON kernel ran (not the portable one).
  static SimdCallCounter neon_calls("gemm_int8_neon");
  const int8_detail::TileFn f1 = kern.fn[1];
  if (f1 == int8_detail::neon_i8mm_tile() || f1 == int8_detail::neon_dotprod_tile() || f1 == int8_detail::neon_tile())
    neon_calls.add(SimdWidth::k128);
#endif
  const int64_t es = kern.wide ? 2 : 1;  // bytes per packed value
  const int64_t MR = kern.mr, NR = kPanel * kern.nv;
  const int64_t kg = B.kg;
  const int64_t mblocks = (M + MR - 1) / MR, nblocks = (N + NR - 1) / NR;
  const int32_t a_shift = a_signed ? 128 : 0;

  // A packed as uint8 (A + a_shift) by blocks of MR rows, then its row sums;
  // per column, the shifted zero point of B and sum_k B - K * zero point.
  thread_local AlignedScratch a_scratch;
  const int64_t a_block = int8_detail::a_block_bytes(kg, MR, kern.wide, kern.tiled);
  const int64_t a_bytes = (mblocks * a_block + 63) / 64 * 64;
  uint8_t* ap = a_scratch.get<uint8_t>(static_cast<size_t>(a_bytes + (M + 3 * N) * 4), AlignedScratch::Growth::kByHalf);
  uint32_t* row_sums = reinterpret_cast<uint32_t*>(ap + a_bytes);
  uint32_t* col_zp = row_sums + M;
  uint32_t* col_term = col_zp + N;
  uint32_t* col_total = col_term + N;  // az * col_term, when az is one value
  for (int64_t j = 0; j < N; ++j) {
    col_zp[j] = static_cast<uint32_t>((b_zp ? b_zp[j * b_zp_stride] : 0) + B.shift);
    col_term[j] = static_cast<uint32_t>(B.col_sums[j]) - static_cast<uint32_t>(K) * col_zp[j];
  }
  const uint8_t* a_blocks = ap;
  const uint32_t* a_sums = row_sums;
  if (!a_rows && packed_a && packed_a->mr == MR && packed_a->wide == kern.wide && packed_a->tiled == kern.tiled &&
      packed_a->M == M && packed_a->K == K && packed_a->is_signed == a_signed) {
    a_blocks = packed_a->data;
    a_sums = packed_a->row_sums;
  } else {
    // The row sums only matter when B's (shifted) zero point is not 0 somewhere.
    bool want_sums = false;
    for (int64_t j = 0; j < N && !want_sums; ++j) want_sums = col_zp[j] != 0;
    auto pack_a = [&](int64_t b0, int64_t b1) {
      using int8_detail::pack_a_blocks, int8_detail::pack_a_rows;
      if (a_rows) pack_a_rows(*a_rows, M, MR, a_signed, b0, b1, ap, row_sums, want_sums, kern.wide, kern.tiled);
      else pack_a_blocks(A, lda, M, K, MR, a_signed, b0, b1, ap, row_sums, want_sums, kern.wide, kern.tiled);
    };
    const int64_t pack_grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(1, K * MR));
    if (pool)
      pool->parallel_for(mblocks, pool->balanced_grain(mblocks, pack_grain), pack_a);
    else
      pack_a(0, mblocks);
  }

  // The output stages at the vector width (gemm_int8_epilogue_simd.h), or the
  // portable loops with the ISA capped to generic (the tests' scalar reference).
  int8_detail::Epilogues ep{int8_detail::generic_correct, nullptr, nullptr, nullptr, nullptr};
  if (cpu_has_simd_kernels()) ep = int8_detail::simd_epilogues(simd_width());
  // One zero point for all rows of A and one for all columns of B (a conv's
  // symmetric weights and its activations): the correction splits into a
  // per-column and a per-row term.
  const bool per_column = requant_output && requant_output->per_column;
  const int8_detail::CorrectRequantUniformFn correct_requant_uniform =
      per_column ? ep.requant_uniform_cols : ep.requant_uniform;
  bool uniform = requant_output && correct_requant_uniform && (!b_zp || b_zp_stride == 0);
  const uint32_t az0 = static_cast<uint32_t>((a_zp ? a_zp[0] : 0) + a_shift);
  for (int64_t i = 1; uniform && a_zp && a_zp_stride != 0 && i < M; ++i) uniform = a_zp[i * a_zp_stride] == a_zp[0];
  if (uniform)
    for (int64_t j = 0; j < N; ++j) col_total[j] = az0 * col_term[j];
  const int64_t panel_stride = kg * kPanel * kGroup * es;

  Int8Gemm g;
  g.kern = kern;
  g.M = M, g.N = N, g.K = K, g.MR = MR, g.NR = NR, g.kg = kg, g.mblocks = mblocks, g.nblocks = nblocks;
  g.a_block = a_block, g.panel_stride = panel_stride;
  g.a_shift = a_shift, g.a_zp = a_zp, g.a_zp_stride = a_zp_stride;
  g.b = &B, g.a_blocks = a_blocks, g.a_sums = a_sums, g.es = es;
  g.b_data = kern.wide ? reinterpret_cast<const int8_t*>(B.wide) : B.data;
  g.col_zp = col_zp, g.col_term = col_term, g.col_total = col_total;
  g.correct = ep.correct, g.correct_to_float = ep.correct_to_float, g.correct_requant = ep.correct_requant;
  g.correct_requant_uniform = correct_requant_uniform;
  g.per_column = per_column, g.uniform = uniform;
  g.float_output = float_output, g.requant_output = requant_output;
  g.C = C, g.ldc = ldc;
  if (kg <= kKcGroups + kKcGroups / 2) return g.run_short_k(pool);
  g.run_long_k(pool);
}

}  // namespace dlrt::cpu
