// 8-bit integer matrix multiply with zero points, exact in int32:
//
//   C[i][j] = sum_k (A[i][k] - a_zp[i]) * (B[k][j] - b_zp[j])        (mod 2^32)
//
// A and B may each be uint8 or int8. Both are moved to the one signedness
// pair the dot-product instructions take (A unsigned, B signed) by adding
// 128 to an int8 A and subtracting 128 from a uint8 B, together with their
// zero points, which leaves every difference (A - a_zp), (B - b_zp) and so C
// unchanged. The kernel sums the raw products and subtracts the zero-point
// terms afterwards from row sums of A and column sums of B.
//
// B is packed once (PackedInt8B, e.g. a constant weight when a kernel is
// created) into panels of 16 columns by groups of 4 k, the layout of one
// VPDPBUSD. A is packed per call. Kernels, chosen at run time (isa.h caps
// them like every other): AMX (32 x 32 int32 in four tiles, TDPBUSD; B's
// panels read as tiles in place), AVX512-VNNI (8 x 48 int32 tile in zmm registers),
// AVX-VNNI (6 x 16 in ymm), AVX2 without VNNI (4 x 16 in ymm, VPMADDWD on
// operands widened to 16 bits when packed: B's k pairs per column, A's 4
// bytes per row and group; no 16-bit sum can saturate); on aarch64 USMMLA
// (i8mm), SDOT (dotprod) or widening multiplies, 4 x 16 on the portable
// layouts (gemm_int8_neon.cpp); portable C++ elsewhere; all give the same bits.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "backends/cpu/kernels/simd/width.h"
#include "core/function_ref.h"
#include "core/thread_pool.h"

namespace dlrt::cpu {

// Which int8 dot-product kernel gemm_u8s8 runs now ("amx", "avx512-vnni",
// "avx-vnni", "avx2", "neon-i8mm", "neon-dotprod", "neon", "generic", or
// "amx-model" when a test forces it): for
// `dlrt inspect` and the tests.
const char* int8_gemm_kernel_name();

// The kernel with, unless it is "amx", why AMX is not used, e.g.
// "avx512-vnni (amx: not present)": for the run report and `dlrt devices`.
// Without ask_os it does not ask the OS for the AMX tile state.
std::string int8_gemm_engine(bool ask_os = true);

// The kernels by name, best first, that this CPU (capped by cpu_isa()) can
// run; last "amx-model", the AMX kernel on a scalar model of the tile
// instructions (amx_tiles.h), which runs everywhere but is never chosen
// unless a ScopedInt8Kernel names it.
std::vector<const char*> int8_gemm_kernels();

// Makes gemm_u8s8 use the kernel `name` (one of int8_gemm_kernels()) while
// alive; for tests and benchmarks that compare them. Not thread-safe against
// GEMMs running on other threads.
class ScopedInt8Kernel {
 public:
  explicit ScopedInt8Kernel(const char* name);
  ~ScopedInt8Kernel();
  ScopedInt8Kernel(const ScopedInt8Kernel&) = delete;
  ScopedInt8Kernel& operator=(const ScopedInt8Kernel&) = delete;

 private:
  int previous_;
};

class PackedInt8B {
 public:
  // Packs op(B): B (K x N, row stride ldb) or, when trans, B^T (B is N x K).
  // `is_signed`: B holds int8 (else uint8).
  static std::shared_ptr<const PackedInt8B> pack(bool trans, int64_t K, int64_t N, const void* B, int64_t ldb,
                                                 bool is_signed);
  // Packs into caller-provided storage (bytes(K, N) bytes, 64-byte aligned),
  // for a B that changes every call (e.g. Conv's im2col matrix).
  static size_t bytes(int64_t K, int64_t N);
  static PackedInt8B pack_into(void* storage, bool trans, int64_t K, int64_t N, const void* B, int64_t ldb,
                               bool is_signed);
  // Writes the raw bytes of row k of B, columns [j0, j1), to dst[0, j1 - j0).
  using RowSource = FunctionRef<void(int64_t k, int64_t j0, int64_t j1, uint8_t* dst)>;
  // Packs a B whose rows come from `rows` (e.g. Conv's im2col rows, made as
  // they are packed), on `pool` when given: columns split between threads.
  static PackedInt8B pack_rows_into(void* storage, int64_t K, int64_t N, RowSource rows, bool is_signed,
                                    ThreadPool* pool);

  int64_t K = 0, N = 0;
  int64_t kg = 0;       // groups of 4 k: (K + 3) / 4
  int64_t panels = 0;   // panels of 16 columns: (N + 15) / 16
  int32_t shift = 0;    // stored value = B + shift (-128 for uint8, 0 for int8)
  // One of the two layouts, the one the kernel chosen when packing reads:
  const int8_t* data = nullptr;      // panel p, group g: 64 bytes at (p * kg + g) * 64
  // (the AVX2 kernel's) panel p, group g: 64 int16 at (p * kg + g) * 64, value
  // of k 4g + 2h + t, column 16p + c at h * 32 + c * 2 + t.
  const int16_t* wide = nullptr;
  const int32_t* col_sums = nullptr; // per column (panels * 16), sum over k of the stored values

 private:
  std::unique_ptr<uint8_t[], void (*)(uint8_t*)> owned_{nullptr, nullptr};
};

// A (M x K) packed once for gemm_u8s8, e.g. Conv's constant weights: in the
// row blocks of the kernel chosen when packing (a run under another kernel
// packs A again), with its row sums.
class PackedInt8A {
 public:
  static std::shared_ptr<const PackedInt8A> pack(int64_t M, int64_t K, const void* A, int64_t lda, bool is_signed);

  int64_t M = 0, K = 0;
  int mr = 0;             // rows per block
  bool is_signed = false;
  bool wide = false;      // values stored as int16 (the AVX2 kernel's), else bytes
  bool tiled = false;     // the AMX kernel's tile layout (int8_detail::amx_pack_a)
  const uint8_t* data = nullptr;       // blocks of mr rows: (K + 3) / 4 groups of mr x 4 values
  const uint32_t* row_sums = nullptr;  // per row, sum over k of the stored (shifted) values

 private:
  std::unique_ptr<uint8_t[], void (*)(uint8_t*)> owned_{nullptr, nullptr};
};

// Optional float output stage: each element of C, once final, becomes the
// float float(C) * scale[column] (+ bias[column]), written over it in place
// (C then holds floats): the Cast, Mul and Add of a quantize_dynamic MatMul,
// each rounding as those ops do (no fused multiply-add). With row_scale the
// multiplier is the float product row_scale[row] * scale[column] (A's scale
// per row times B's, as the Mul of the two scales rounds).
struct Int8FloatOutput {
  const float* scale = nullptr;  // one value (scale_stride 0) or one per column (1)
  int64_t scale_stride = 0;
  const float* bias = nullptr;   // one per column, or null
  const float* row_scale = nullptr;  // one per row of C, or null
};

// Optional 8-bit output stage: element (i, j) of C, once final, is
// requantized (requantize_u8/s8 of quantize_rows.h) with the bias and
// multiplier of row i, or of column j when per_column, to out + i * ldo + j
// instead of being stored; C is then not written (may be null). An NCHW
// conv's output channels are its rows, a channels-last conv's its columns.
struct Int8RequantOutput {
  const float* mult = nullptr;   // one per row (per column when per_column)
  const int32_t* bias = nullptr; // one per row (column), or null
  int32_t zero_point = 0;
  void* out = nullptr;           // uint8, or int8 when out_signed
  int64_t ldo = 0;
  bool out_signed = false;
  bool per_column = false;
};

// A given row by row as `segments` runs of seg_len bytes each (seg_len a
// multiple of 4; K = segments * seg_len), e.g. a channels-last conv's im2col
// rows read straight from its input: run s of row i is at ptr(i, s), or is
// seg_len copies of `pad` when ptr returns null.
struct Int8ARows {
  int64_t segments = 1, seg_len = 0;
  FunctionRef<const uint8_t*(int64_t row, int64_t seg)> ptr;
  uint8_t pad = 0;
};

// C (M x N, row stride ldc, int32) per the formula above. A is M x K (row
// stride lda), int8 when a_signed. a_zp: one per row (a_zp_stride 1) or one
// for all (stride 0), in A's own domain; b_zp: one per column or one for all
// (stride 0), in B's own domain; null means zero. Uses `pool` when given.
void gemm_u8s8(int64_t M, int64_t N, int64_t K, const void* A, int64_t lda, bool a_signed, const int32_t* a_zp,
               int64_t a_zp_stride, const PackedInt8B& B, const int32_t* b_zp, int64_t b_zp_stride, int32_t* C,
               int64_t ldc, ThreadPool* pool, const PackedInt8A* packed_a = nullptr,
               const Int8FloatOutput* float_output = nullptr, const Int8RequantOutput* requant_output = nullptr,
               const Int8ARows* a_rows = nullptr);
// (packed_a: A already packed, used when it was packed for this A's shape and
// the kernel running now; A, lda and a_signed must still describe it.
// a_rows: A's rows from there instead of A and lda, which are then unused.)

namespace int8_detail {

// Microkernel contract: an MR x (16 * NV) tile of raw sums
// acc[i][j] = sum over g < kg of the 4-byte dot products of the packed A
// row i (a + (g * MR + i) * 4, uint8) and the packed B columns, with B's NV
// panels at b + v * panel_stride. Results go to acc (row stride 16 * NV),
// 64-byte aligned, or are added to what it holds when `accumulate` (a K range
// after the first).
using TileFn = void (*)(int64_t kg, const uint8_t* a, const int8_t* b, int64_t panel_stride, int32_t* acc,
                        bool accumulate);

// The zero-point correction of one tile (gemm_u8s8's formula, mod 2^32):
// c[r][q] = acc[r][q] - az[r] * ct[q] - rs[r] * cz[q] for r < rows, q < cols.
using CorrectFn = void (*)(const int32_t* acc, int64_t acc_ld, int64_t rows, int64_t cols, const uint32_t* az,
                           const uint32_t* rs, const uint32_t* ct, const uint32_t* cz, int32_t* c, int64_t ldc);

// Packs four panels (64 columns) of one group of 4 k: r[t] holds row t's 64
// raw bytes; each is XORed with flip, the panels go to dst + p * panel_bytes
// (64-byte aligned) and the 64 column sums of the stored values are added to
// colsum. Null off x86.
using PackQuadFn = void (*)(const uint8_t* const* r, uint8_t flip, int8_t* dst, int64_t panel_bytes, int32_t* colsum);
PackQuadFn avx512_pack_quad();

// Packs `groups` groups of 4 k of 8 rows of A (rows[r], bytes XORed with
// flip; no byte past the groups is read) in the 8-row kernel's layout at dst
// (group g at dst + 32 g); returns how many groups it packed. Null off x86.
using PackA8Fn = int64_t (*)(const uint8_t* const* rows, int64_t groups, uint8_t flip, uint8_t* dst);
PackA8Fn avx512_pack_a8();

// A tile of the 8-row AVX512-VNNI kernel finished in registers: the uniform
// per-column requantization (Epilogues::requant_uniform_cols's) of its
// `rows` x `cols` sums, written to out (row stride ldo).
struct RequantColsTile {
  int64_t rows = 0, cols = 0;
  const uint32_t* col_total = nullptr;  // the tile's first column
  const uint32_t* row_total = nullptr;  // the tile's rows
  const float* mult = nullptr;          // the tile's first column
  const int32_t* bias = nullptr;        // the tile's first column, or null
  int32_t zero_point = 0;
  bool out_signed = false;
  uint8_t* out = nullptr;
  int64_t ldo = 0;
};
using RequantColsTileFn = void (*)(int64_t kg, const uint8_t* a, const int8_t* b, int64_t panel_stride,
                                   const RequantColsTile& q);
RequantColsTileFn avx512_vnni_requant_cols_tile(int nv);  // nv in [1, 3]; null off x86

// The correction, then row r of the tile requantized as Int8RequantOutput
// says (mult[r], bias[r] or 0, zp) to out + r * ldo.
using CorrectRequantFn = void (*)(const int32_t* acc, int64_t acc_ld, int64_t rows, int64_t cols, const uint32_t* az,
                                  const uint32_t* rs, const uint32_t* ct, const uint32_t* cz, const float* mult,
                                  const int32_t* bias, int32_t zp, bool out_signed, uint8_t* out, int64_t ldo);

// The same when az and cz are each one value for the whole tile: the
// correction is col_total[q] (az * ct[q]) + row_total[r] (rs[r] * cz).
using CorrectRequantUniformFn = void (*)(const int32_t* acc, int64_t acc_ld, int64_t rows, int64_t cols,
                                         const uint32_t* col_total, const uint32_t* row_total, const float* mult,
                                         const int32_t* bias, int32_t zp, bool out_signed, uint8_t* out, int64_t ldo);

// The correction, then the float stage (Int8FloatOutput; the tile's first row
// of C is i0, its first column j0), written as floats to c (row stride ldc).
using CorrectFloatFn = void (*)(const int32_t* acc, int64_t acc_ld, int64_t rows, int64_t cols, const uint32_t* az,
                                const uint32_t* rs, const uint32_t* ct, const uint32_t* cz, const Int8FloatOutput& f,
                                int64_t i0, int64_t j0, float* c, int64_t ldc);

// The output stages of a tile, written once over simd/ (gemm_int8_epilogue_simd.h),
// at vector width w; requant_uniform takes mult and bias per row,
// requant_uniform_cols per column (mult[q], bias[q] or 0).
struct Epilogues {
  CorrectFn correct;
  CorrectFloatFn correct_to_float;
  CorrectRequantFn correct_requant;
  CorrectRequantUniformFn requant_uniform;
  CorrectRequantUniformFn requant_uniform_cols;
};
Epilogues simd_epilogues(SimdWidth w);

// The portable kernels (MR 4, NV 1): on the byte layouts, on the wide ones,
// and the correction.
void generic_tile(int64_t kg, const uint8_t* a, const int8_t* b, int64_t panel_stride, int32_t* acc, bool accumulate);
void generic_wide_tile(int64_t kg, const uint8_t* a, const int8_t* b, int64_t panel_stride, int32_t* acc,
                       bool accumulate);
void generic_correct(const int32_t* acc, int64_t acc_ld, int64_t rows, int64_t cols, const uint32_t* az,
                     const uint32_t* rs, const uint32_t* ct, const uint32_t* cz, int32_t* c, int64_t ldc);

// Where the vector kernels exist (null off x86).
TileFn avx512_vnni_tile(int nv);  // MR 8, NV = nv in [1, 3]
TileFn avx_vnni_tile();           // MR 6, NV 1
// aarch64 (gemm_int8_neon.cpp), MR 4, NV 1 on the portable byte layouts:
// USMMLA (i8mm), SDOT (dotprod), widening multiplies (baseline). Null elsewhere.
TileFn neon_i8mm_tile();
TileFn neon_dotprod_tile();
TileFn neon_tile();
// MR 4, NV 1 on the wide layouts (no VNNI): a is PackedInt8A's int16 blocks
// (group g, row i: 4 values at (g * 4 + i) * 4), b PackedInt8B::wide (as int8_t*).
TileFn avx2_wide_tile();

// Packs one panel of one group of 4 k in the wide layout: r[t] holds row t's
// 16 raw bytes (XORed with flip); the 64 int16 go to dst, the 16 column sums
// of the stored values are added to colsum. Null off x86.
using PackWideFn = void (*)(const uint8_t* const* r, uint8_t flip, int16_t* dst, int32_t* colsum);
PackWideFn avx2_pack_wide();

// The wide kernel's A packing (PackA8Fn's contract for 4 rows, int16 values:
// group g at dst + 32 g): whole runs of 4 groups; returns how many it packed.
PackA8Fn avx2_pack_a4_wide();  // null off x86

// Bytes of one packed block of mr rows of A over kg groups (gemm_int8_pack_a.cpp).
int64_t a_block_bytes(int64_t kg, int64_t mr, bool wide, bool tiled);

// Row blocks [b0, b1) of A (M x K, row stride lda) as gemm_u8s8's kernels
// read them: block mb holds rows mb*mr .. mb*mr+mr-1 (zero past M) as groups
// of 4 values (A + 128 for int8; bytes, or int16 when wide), group-major, or
// as the AMX kernel's tiles when tiled (amx_pack_a); row_sums[i] sums row i's
// stored values (0 unless want_sums).
void pack_a_blocks(const void* A, int64_t lda, int64_t M, int64_t K, int64_t mr, bool a_signed, int64_t b0, int64_t b1,
                   uint8_t* blocks, uint32_t* row_sums, bool want_sums, bool wide, bool tiled);
// pack_a_blocks for A given as row segments (Int8ARows).
void pack_a_rows(const Int8ARows& src, int64_t M, int64_t mr, bool a_signed, int64_t b0, int64_t b1, uint8_t* blocks,
                 uint32_t* row_sums, bool want_sums, bool wide, bool tiled);

// The AMX kernel (gemm_int8_amx.cpp): MR 32, NV 1 or 2 (fn[nv]), A packed by
// amx_pack_a, K in steps of 16 groups (the packed A's groups padded to a
// multiple of 16). Between begin() and end() on a thread (tile configuration
// and release) the tile functions may run on it. `model`: the scalar model of
// the tile instructions (amx_tiles.h), on any CPU; else the real tiles (fn
// null where not built).
struct AmxEngine {
  TileFn fn[3] = {};
  void (*begin)() = nullptr;
  void (*end)() = nullptr;
};
AmxEngine amx_engine(bool model);

// Why the real AMX kernel cannot run here ("not present", ...), or null when
// it can: AMX-TILE and AMX-INT8 (cpuid, less DLRT_CPU_FEATURES_OFF), cpu_isa()
// AVX-512, the OS's tile permission (device::request_amx_permission), and a
// one-time check of the real tiles against the model. Without ask_os it does
// not ask the OS (a reason says so when nothing asked before).
const char* amx_unavailable(bool ask_os = true);

// One block of 32 rows of A (rows[r], K bytes, XORed with flip; null: a row
// past M, stored as 0) in the AMX kernel's layout at dst: per step of 64 k,
// two tiles (rows 0-15, 16-31) of 16 rows x 64 bytes; k past K stored as 0.
void amx_pack_a(const uint8_t* const* rows, int64_t K, uint8_t flip, uint8_t* dst);

}  // namespace int8_detail
}  // namespace dlrt::cpu
