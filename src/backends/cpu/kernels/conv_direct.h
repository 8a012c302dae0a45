// Direct float32 convolution for Conv (2-D and 1-D, any stride, dilation,
// padding and group; not depthwise) on the AVX-512 8x48 register tile or the
// 6x16 one (the tile the weights were packed for: AVX2's and aarch64's; at
// 256 bits on AVX2, at 128 on NEON), with no im2col matrix and no packed B
// operand.
//
// The input of one (image, group) is copied once into a zero-padded scratch,
// split by stride into phases: phase (a, b) of a channel holds
// xpad[a + sh*i][b + sw*j] for i < hq, j < wq (stride 1: one phase, the padded
// plane itself). Output (oh, ow) is grid column j = oh*wq + ow, and the
// im2col element of row p = (c, i, j) at grid column j is then the scratch at
// off[p] + j, so each row of the B operand is a contiguous run of the
// scratch. Grid columns with ow >= out_w are computed and dropped when the
// tile is stored. A 1x1 stride-1 unpadded conv uses the input itself (no copy).
//
// The weights are the PackedMatrix Conv already packs (8- or 6-row panels,
// K cut into slices of packed_kc columns); each 8 x 48 (6 x 16) tile keeps
// its accumulators in registers over the whole K and stores through the
// fused epilogue (row bias, residual, activation).
#pragma once

#include <cstddef>
#include <cstdint>

#include "backends/cpu/kernels/gemm.h"
#include "backends/cpu/kernels/isa.h"
#include "backends/cpu/kernels/simd/width.h"
#include "core/thread_pool.h"

namespace dlrt::cpu {

struct ConvDirectGeometry {
  int64_t channels = 0;  // input channels of one group
  int64_t in_h = 1, in_w = 0, out_h = 1, out_w = 0;
  int64_t kh = 1, kw = 1, sh = 1, sw = 1, dh = 1, dw = 1;
  int64_t pad_top = 0, pad_left = 0;  // >= 0 (bottom/right padding is implied by the output size)
};

struct ConvDirectPlan {
  static constexpr int kMaxStride = 4;
  ConvDirectGeometry g;
  bool copy = true;        // false: the input is the scratch (1x1, stride 1, no padding)
  int64_t hq = 0, wq = 0;  // rows and columns of one phase plane; wq is the grid's row length
  bool shared_pad = false;  // rows share their zero columns (see conv_direct_plan)
  bool tap_columns = false;  // one copy per tap column, rows of out_w (see conv_direct_plan)
  int nphase = 0;          // phases copied per channel
  int8_t phase_slot[kMaxStride * kMaxStride] = {};  // phase (a, b) -> its index among the copied ones, or -1
  int64_t grid = 0;        // out_h * wq columns computed
  int64_t k = 0;           // channels * kh * kw (rows of the B operand)
  int64_t src_floats = 0;  // scratch floats, slack included (0 when !copy)
};

// Fills `plan` and returns true when the direct path can run this geometry
// (strides up to kMaxStride; non-negative leading pads). Does not check the
// CPU or the switch (see conv_direct_enabled).
//
// shared_pad: phase rows are laid out with the shortest pitch wq at which a
// row's trailing zero columns double as the next row's leading ones (a 3x3
// pad-1 stride-1 conv: wq = in_w + 1 instead of in_w + 2), so the grid has
// fewer dropped columns (resnet18's 7x7 layer4 grid: 56 instead of 63). A
// tap's read past its row's last column then lands in the next row's (or
// the next plane's) leading zeros. The phase copy is the same code, row i at
// i * wq. Used by the 6x16 kernel (AVX2, NEON); the AVX-512 one keeps the full pitch.
//
// tap_columns (kw > 1 or strided; takes precedence over shared_pad): each
// channel is copied once per row phase a < sh and tap column j, plane
// (a, j) holding xpad[a + sh*i][sw*ow + j*dw] for ow < out_w (nphase =
// sh*kw planes of hq x out_w), so wq = out_w: no grid column is dropped
// (14x14 outputs: 196 columns instead of 210) and grid column c is output
// position c, for sh*kw/(sh*sw) times the copy and more cache lines per
// tile. The 6x16 kernel copies this layout, and the AVX-512 one for the
// geometries conv_direct_tap_columns(g, kAvx512) picks.
bool conv_direct_plan(const ConvDirectGeometry& g, ConvDirectPlan* plan, bool shared_pad = false,
                      bool tap_columns = false);

// Whether the 6x16 kernel asks for tap_columns for this geometry: stride-1
// outputs 12-20 wide, and strided convs with kernels taller than 1 whose
// K = channels*kh*kw fits one K slice of the AVX2 packing (the stems:
// mobilenet_v2's 3x3/2 of K 27, resnet18's 7x7/2 of K 147), which then run
// conv_direct_sliced's slice_tile with its plain stores (the phase layout's
// grid rows are wider than the output's, and tiles that straddle two of
// them are stored piece by piece; measured faster on Zen 1, see
// docs/performance-decisions.md). A 1x1/2 downsample would copy a row phase it never reads.
constexpr int64_t kConvDirectTapColumnsMinW = 12, kConvDirectTapColumnsMaxW = 20;
constexpr int64_t kConvDirectTapColumnsMaxStridedK = 256;  // the AVX2 packing's K slice cap (gemm_blocking.cpp)
bool conv_direct_tap_columns(const ConvDirectGeometry& g);

// Whether the kernel of `isa` takes tap_columns: kAvx2 as above, and kNeon
// the same (the same 6x16 tile at 128 bits; not measured on ARM); kAvx512
// for convs (strided too) with kernels wider than 1 on outputs at most
// kConvDirectTapColumnsAvx512MaxW wide, where the padded pitch wastes the
// most grid columns (resnet18's layer4 3x3 on 7x7 outputs: 49 columns
// instead of 63, and its layer4.0 3x3/2: 49 instead of 56). The AVX-512
// tile computes a 49-column grid as one 48-column tile with the last column
// riding along (conv_direct_whole_k_simd.h, direct_tile's kExtra).
constexpr int64_t kConvDirectTapColumnsAvx512MaxW = 8;
bool conv_direct_tap_columns(const ConvDirectGeometry& g, CpuIsa isa);

// off[p] for p < plan.k: row p of the B operand starts at scratch + off[p].
void conv_direct_offsets(const ConvDirectPlan& plan, int64_t* off);

// The plan of a 1x1 conv over n positions of `channels` input rows x_plane
// floats apart (pointwise_direct, FusedExpandDepthwise's AVX-512 projection)
// into *plan, and its offsets (p * x_plane, in the calling thread's buffer,
// valid until its next call).
const int64_t* conv_direct_pointwise_plan(int64_t channels, int64_t n, int64_t x_plane, ConvDirectPlan* plan);

// Which convs take the direct path: none (DLRT_CONV_DIRECT=0, or no simd/
// kernels under cpu_isa(): generic), those conv_direct_worth picks (the default), or every one
// it can run (DLRT_CONV_DIRECT=1). The variable is read once; a
// ScopedConvDirect overrides it.
enum class ConvDirectMode : uint8_t { kOff, kAuto, kForce };
ConvDirectMode conv_direct_mode();
inline bool conv_direct_enabled() { return conv_direct_mode() != ConvDirectMode::kOff; }

// Whether the direct path is the faster one for this plan (bench/conv_direct.cpp,
// 1 and 2 threads): grids of at least kMinGrid columns. Smaller grids (7x7
// outputs: one full tile and a sliver) re-read the whole B operand from L2
// for each 8-row panel, where the GEMM keeps a K slice of packed B in L1.
constexpr int64_t kConvDirectMinGrid = 128;
constexpr int64_t kConvDirectAvx512Cols = 48;  // grid columns of the AVX-512 tile
inline bool conv_direct_worth(const ConvDirectPlan& plan) { return plan.grid >= kConvDirectMinGrid; }
// Whether the grid is whole AVX-512 tiles and one column more (7x7 outputs
// with tap columns: 49), which the kernel's last tile takes along where it
// stores from the registers (conv_direct_whole_k_simd.h, direct_tile's kExtra).
inline bool conv_direct_avx512_extra_column(const ConvDirectPlan& plan) {
  return plan.grid > kConvDirectAvx512Cols && plan.grid % kConvDirectAvx512Cols == 1;
}
// The same choice for the tile of `isa` (measured with bench/conv_direct.cpp;
// figures in docs/performance-decisions.md, "Convolution"). kAvx2: the GEMM path packs B
// on the fly, which 6-row A panels amortise badly, so the direct path takes
// every conv but stride-2 ones of 64+ channels on grids of kConvDirectMinGrid+
// columns (four phase planes per channel push a K slice's B rows out of L1);
// kNeon the same (the same tile and loop order at 128 bits; not measured on
// ARM hardware, and emulation gives no speed to measure).
// kAvx512 on 1 thread: grids of kConvDirectMinGrid+ columns, and 7x7
// outputs (one full tile and the 49th column riding along). On 2+ threads
// also every conv but strided 1x1 ones (the direct (tile x panel) units
// spread well), except where the 1-thread rule takes the GEMM and either the
// conv is 1x1 or its weights (`out_channels` x plan.k floats) are larger than
// half of the L2 (`l2_bytes`; -1: the CPU's, device::cpu_caches()): those the GEMM runs over whole B
// (gemm_whole_b.h) in one parallel section, 1.8x on 2 threads where the
// direct tile rereads B for each 8-row panel of weights streamed from
// memory (243 channels, 3x3, on 10x4: 0.36 -> 0.23 ms). Such convs then run
// the same path, with the same result, on any number of threads.
bool conv_direct_worth(const ConvDirectPlan& plan, CpuIsa isa, int threads, int64_t out_channels,
                       int64_t l2_bytes = -1);

// Whether conv_direct_whole_k gives each of its `threads` a private phase
// copy of the whole input (conv_direct_whole_k_simd.h, Source) instead of one
// shared copy: on 2+ threads where the units are not banded by output rows
// (each thread then reads the whole copy) and the copy takes at most a
// quarter of a core's L2 (`l2_bytes`), so it stays there beside the weights
// the thread streams. The products are the same either way.
inline bool conv_direct_private_copy(const ConvDirectPlan& plan, int threads, bool banded, int64_t l2_bytes) {
  return threads > 1 && plan.copy && !banded && plan.src_floats * int64_t{sizeof(float)} <= l2_bytes / 4;
}

// Forces the direct path on (every shape it can run; a vector ISA still required)
// or off while alive; for tests and benchmarks. Not thread-safe against
// running convs.
class ScopedConvDirect {
 public:
  explicit ScopedConvDirect(bool enabled);
  ~ScopedConvDirect();
  ScopedConvDirect(const ScopedConvDirect&) = delete;
  ScopedConvDirect& operator=(const ScopedConvDirect&) = delete;

 private:
  int previous_;
};

// How many (image, group) products the direct path has run in this process
// (each kernel counts its calls through conv_direct_note_run).
uint64_t conv_direct_runs();
void conv_direct_note_run();

// The input x [channels, in_h, in_w] of one (image, group) copied for the
// plan (plan.copy) into the calling thread's conv_direct_scratch:
// fill(plan, xc, dst, r0, r1) copies rows [r0, r1) of every plane of a
// channel (an ISA's conv_direct_fill_phases, conv_direct_fill.h, or a copy
// that holds state of its own and copies whole channels), split over `pool`
// (the callable is called from its threads) from `split_floats` copied
// floats on, in chunks of about `chunk_floats`; the scratch's slack past the
// channels is zeroed. Returns the copy. With `split_rows` the threads take
// bands of plane rows of every channel (unit_order.h), the rows their part
// of the conv reads (its column blocks run in order of the output rows);
// else runs of whole channels.
using ChannelFill = FunctionRef<void(const ConvDirectPlan& plan, const float* xc, float* dst, int64_t r0, int64_t r1)>;
using PhaseRowZero = void (*)(float* dst, int64_t n);
const float* conv_direct_copy_input(const ConvDirectPlan& plan, const float* x, ThreadPool* pool, ChannelFill fill,
                                    PhaseRowZero zero, int64_t split_floats, int64_t chunk_floats, bool split_rows);

// The calling thread's scratch for the phase copy, at least n floats,
// 64-byte aligned: grows, never shrinks, so steady-state calls allocate
// nothing. Pool tasks of the same call only read it (the pool runs one job's
// chunks at a time on a thread, nested work inline), except a private copy
// (conv_direct_private_copy), which each thread writes to its own.
float* conv_direct_scratch(size_t n);

// y[m, oh*out_w + ow] = epilogue(sum_p W[m, p] * B[p, (oh, ow)]) for m < rows
// of `w` (packed with mr 8, the 512-bit GEMM's layout; ep.row_bias and
// ep.residual already point at this group's first row, ep.ldr =
// out_h*out_w, no col_bias) on the input x [channels, in_h, in_w] of one
// (image, group), on the 8-row tile at vector width `width`
// (conv_direct_whole_k_simd.h: 8 x 48 at 512 bits, the tile the callers
// run; 8 x 8 at 256, 8 x 4 or 8 x 12 at 128; simd_width_runs(width) must
// hold), the whole K in registers. `off` from conv_direct_offsets. Splits
// over `pool` (null: single-threaded). y_plane: floats between output rows
// m and m + 1 of y and of ep.residual (0: the plan's out_h * out_w; larger
// when y is a band of a bigger plane, with ep.ldr the same). [k_begin,
// k_end): only those terms of the sum over p (k_end < 0: to the end), a
// partial product for a caller that adds the partials itself (give it an
// empty epilogue).
void conv_direct_whole_k(SimdWidth width, const ConvDirectPlan& plan, const int64_t* off, const float* x,
                         const PackedMatrix& w, float* y, const GemmEpilogue& ep, ThreadPool* pool, int64_t y_plane = 0,
                         int64_t k_begin = 0, int64_t k_end = -1);

// The same for weights packed with mr 6, nr 16 (the layout of the GEMM on
// AVX2 and aarch64), on the 6 x 16 tile at vector width `width`
// (conv_direct_sliced_simd.h: two ymm of grid columns at 256 bits, four NEON
// vectors at 128; simd_width_runs(width) must hold), K slice by K slice.
// y_plane: floats between output rows m and m + 1 of y and of ep.residual
// (0: the plan's out_h * out_w; larger when y is a band of a bigger plane).
void conv_direct_sliced(SimdWidth width, const ConvDirectPlan& plan, const int64_t* off, const float* x,
                        const PackedMatrix& w, float* y, const GemmEpilogue& ep, ThreadPool* pool, int64_t y_plane = 0);

// The width conv_direct_sliced runs at under cpu_isa(): 256 bits on x86
// (AVX2 or AVX-512: the 6 x 16 tile's two ymm), 128 at the neon level.
inline SimdWidth conv_direct_sliced_width() {
  return simd_width() == SimdWidth::k128 ? SimdWidth::k128 : SimdWidth::k256;
}

// y (rows(w) x n, rows y_plane floats apart; ep.residual likewise) =
// epilogue(w * x) for x (w.cols() rows of n floats, x_plane >= n floats
// apart): a 1x1 conv over n positions, on conv_direct_sliced's tile
// (weights packed with mr 6, nr 16) at `width`.
void pointwise_direct(SimdWidth width, const float* x, int64_t x_plane, int64_t n, const PackedMatrix& w, float* y,
                      int64_t y_plane, const GemmEpilogue& ep, ThreadPool* pool);

}  // namespace dlrt::cpu
