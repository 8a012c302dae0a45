// Conv and ConvTranspose over 1-D, 2-D and 3-D inputs (NC + spatial).
//
// Conv lowers each (image, group) to one GEMM: W_g [M/g, C/g*k] times the
// im2col matrix [C/g*k, out]; 1x1 stride-1 unpadded convs use the input as
// that matrix directly, and depthwise convs (one input channel per group) run
// a direct loop instead. ConvTranspose is the adjoint: W_g^T times X_g, then
// col2im scatters the columns into the output. Spatial dims are handled as
// 3-D internally (missing leading dims have size 1).
//
// This file checks a Conv, chooses its path and prepacks its weights; the
// paths are conv_depthwise.cpp and conv_gemm.cpp, ConvTranspose is
// conv_transpose.cpp.
#include <algorithm>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "backends/cpu/kernel_families.h"
#include "backends/cpu/kernel_util.h"
#include "backends/cpu/kernels/conv_direct.h"
#include "backends/cpu/kernels/gemm.h"
#include "backends/cpu/kernels/gemm_amx.h"
#include "backends/cpu/kernels/gemm_kernels.h"
#include "backends/cpu/kernels/isa.h"
#include "backends/cpu/ops/conv_impl.h"
#include "backends/cpu/ops/conv_internal.h"
#include "backends/cpu/ops/nn_util.h"
#include "exec/kernel_build_options.h"

namespace dlrt::cpu {

namespace conv_detail {

// Shared attribute checks: kernel shape from the attribute or W.
Result<IntList> kernel_shape_of(const KernelContext& ctx, const Tensor& w, int nd) {
  IntList k(w.shape().begin() + 2, w.shape().end());
  if (ctx.node().has_attr("kernel_shape")) {
    const IntList attr = ints_attr(ctx.node(), "kernel_shape", 0, 0);
    if (attr != k)
      return ctx.invalid("kernel_shape " + shape_to_string(attr) + " does not match W's spatial dims " +
                         shape_to_string(k));
  }
  if (static_cast<int>(k.size()) != nd) return ctx.invalid("W's rank does not match X's");
  return k;
}

}  // namespace conv_detail

using namespace conv_detail;

namespace {

// Winograd (conv_winograd.h): output planes of at least this many
// positions (7x7 planes would compute 8x8), and transformed filters (16 x M
// x C floats for F(2x2, 3x3), 36 x M x C for F(4x4, 3x3)) of at most this
// many bytes.
constexpr int64_t kWinogradMinPlane = 100;
constexpr int64_t kWinogradMaxBytes = int64_t{5} << 20;
// ... and at most this much per-image scratch (see winograd_scratch_ok):
// larger images keep the direct path rather than grow a thread's scratch
// without bound.
constexpr int64_t kWinogradMaxScratchBytes = int64_t{32} << 20;
// Input channels of the AVX-512 variants (see winograd_tile), and the 4x4
// tiles F(4x4, 3x3) wants in a plane.
constexpr int64_t kWinograd4MinChannels = 64, kWinograd4MaxChannels = 128, kWinograd4MinTiles = 32;
constexpr int64_t kWinogradMinChannelsAvx512 = 128;

// Whether a conv takes Winograd as far as W and the conv's attributes
// decide: 2-D 3x3 (kh x kw), stride and dilation 1, group 1, at most
// kWinogradMaxBytes of transformed filters (16/9 of W for F(2x2, 3x3):
// resnet18's layer1-layer3, not layer4's 512 x 512), on an AVX2 CPU (NEON:
// where F(4x4, 3x3)'s 36/9 of W fit, the only variant there), with
// DLRT_CONV_WINOGRAD not 0. On AVX-512 CPUs only from kWinograd4MinChannels
// input channels (winograd_tile says which variant). conv_run also wants the
// output plane and the scratch within bounds; prepack_conv_weights
// transforms such a conv's filters at session create instead of packing W.
bool winograd_candidate(int64_t group, int64_t M, int64_t C, int64_t kh, int64_t kw, int64_t sh, int64_t sw,
                        int64_t dh, int64_t dw) {
  return group == 1 && kh == 3 && kw == 3 && sh == 1 && sw == 1 && dh == 1 && dw == 1 &&
         16 * M * C * int64_t{sizeof(float)} <= kWinogradMaxBytes &&
         (cpu_has_avx2() || (cpu_has_simd_kernels() && 36 * M * C * int64_t{sizeof(float)} <= kWinogradMaxBytes)) &&
         (!cpu_has_avx512() || C >= kWinograd4MinChannels) && winograd_enabled();
}

// Whether F(4x4, 3x3) takes an M x C conv on a large enough plane: its
// filters within kWinogradMaxBytes and, on AVX-512, the channel range. On
// AVX2 it takes every conv whose filters fit: at 256 bits it ran fewer
// instructions than F(2x2, 3x3) on every shape measured, 8 to 256 channels on
// 14x14 to 256x64 planes (bench/conv_winograd.cpp under callgrind; figures in
// docs/performance-decisions.md).
bool winograd4_channels(int64_t M, int64_t C) {
  const bool fits = 36 * M * C * int64_t{sizeof(float)} <= kWinogradMaxBytes;
  if (!cpu_has_avx512()) return cpu_has_simd_kernels() && fits;
  return C >= kWinograd4MinChannels && C <= kWinograd4MaxChannels && fits;
}

// Which Winograd a candidate conv runs on this CPU: 4 for F(4x4, 3x3), 2
// for F(2x2, 3x3), 0 for neither (the direct or GEMM path). AVX2 without
// AVX-512: F(4x4, 3x3) where winograd4_channels allows it, else F(2x2, 3x3).
// AVX-512: F(4x4, 3x3) for kWinograd4MinChannels to
// kWinograd4MaxChannels input channels on planes of kWinograd4MinTiles+ 4x4
// tiles; F(2x2, 3x3) from kWinogradMinChannelsAvx512 channels otherwise (on
// small planes such as resnet18's layer3 a quarter of the 4x4 tiles would be
// padding). Under 128 channels F(2x2, 3x3)'s memory-bound transforms cost
// more than its products save, so smaller planes of 64-127 channels keep the
// direct path. Per-conv figures: bench/results/2026-11-24_winograd_f4x4_resnet18.json.
// NEON: F(4x4, 3x3) (the simd/ kernel at 128 bits) where winograd4_channels
// allows it, else none (F(2x2, 3x3)'s 128-bit transforms are not chosen: unmeasured on NEON).
int winograd_tile(int64_t M, int64_t C, int64_t out_h, int64_t out_w) {
  if (!cpu_has_avx2()) return winograd4_channels(M, C) ? 4 : 0;
  if (!cpu_has_avx512()) return winograd4_channels(M, C) ? 4 : 2;
  if (winograd4_channels(M, C) && ((out_h + 3) / 4) * ((out_w + 3) / 4) >= kWinograd4MinTiles) return 4;
  return C >= kWinogradMinChannelsAvx512 ? 2 : 0;
}

// Whether the scratch the variant `wtile` (4 or 2) wants for one image of
// an M x C conv with an out_h x out_w output is at most
// kWinogradMaxScratchBytes. F(2x2, 3x3) holds V and M of the whole image:
// 16 x (C + M) floats per 2x2 tile (resnet18's layer1 takes 6.4 MiB).
// F(4x4, 3x3) works on blocks of tile rows whose V and M take about
// kWinograd4BlockBytes, at least one tile row: 36 x (C + M) floats per 4x4
// tile (see conv_winograd4; its padded input rows are a few rows of
// one channel per thread). A 96 -> 24 conv on 136 x 184 takes 48 MiB as
// F(2x2, 3x3) and about 4 MiB as F(4x4, 3x3).
bool winograd_scratch_ok(int wtile, int64_t M, int64_t C, int64_t out_h, int64_t out_w) {
  constexpr int64_t f = sizeof(float);
  if (wtile == 4) return 36 * (C + M) * ((out_w + 3) / 4) * f <= kWinogradMaxScratchBytes;
  return 16 * (M + C) * ((out_h + 1) / 2) * ((out_w + 1) / 2) * f <= kWinogradMaxScratchBytes;
}

// The filters prepack_conv_weights transforms at session create, before
// the plane is known: F(4x4, 3x3)'s where winograd_tile takes it on large
// planes, else F(2x2, 3x3)'s. A plane that picks the other variant
// transforms its filters on first use.
int winograd_prepack_tile(int64_t M, int64_t C) { return winograd4_channels(M, C) ? 4 : 2; }

#if defined(__x86_64__) || defined(__i386__)
// Output planes up to this many positions run as Yᵀ = im2colᵀ · Wᵀ on AVX2
// (see conv_run): a 7x7 plane is 49 positions.
constexpr int64_t kTransposedMaxPlane = 64;

// The share of an x-long dimension that tiles of t use (x / t rounded up).
double tile_use(int64_t x, int64_t t) { return static_cast<double>(x) / static_cast<double>(t * ceil_div(x, t)); }

// On the AVX-512 8 x 48 tile, whether a group-1 conv of M channels on a
// plane of `plane` positions wastes less of the tile as Yᵀ = im2colᵀ · Wᵀ
// (positions in rows of 8, channels in panels of 48) than as Y = W · im2col
// (channels in rows of 8, positions in panels of 48). Only planes within one
// panel: a 7x7 plane (49 positions, 51% of two panels) measured slower
// transposed than on the direct tile despite the better share.
bool avx512_transposed_wastes_less(int64_t M, int64_t plane) {
  if (plane >= kSgemmAvx512NR) return false;
  return tile_use(plane, kSgemmAvx512MR) * tile_use(M, kSgemmAvx512NR) >
         tile_use(M, kSgemmAvx512MR) * tile_use(plane, kSgemmAvx512NR);
}
#endif

}  // namespace

// Winograd F(2x2, 3x3) or F(4x4, 3x3), 2.25x or 4x fewer products
// (conv_winograd.h), for the convs winograd_candidate takes, on output
// planes of kWinogradMinPlane+ positions, in the variant winograd_tile
// picks, when that variant's scratch is within kWinogradMaxScratchBytes
// (winograd_scratch_ok). DLRT_CONV_WINOGRAD=0 turns it off, and
// DLRT_CONV_DIRECT=1 (direct for every shape) too.
int conv_winograd_tile(int64_t group, int64_t M, int64_t C, const int64_t k[2], const int64_t s[2], const int64_t d[2],
                       int64_t out_h, int64_t out_w) {
  if (!winograd_candidate(group, M, C, k[0], k[1], s[0], s[1], d[0], d[1]) || out_h * out_w < kWinogradMinPlane ||
      conv_direct_mode() == ConvDirectMode::kForce)
    return 0;
  const int forced = winograd_forced_tile();
  // F(2x2, 3x3) is chosen on AVX2 CPUs only: a forced 2 elsewhere picks as unforced.
  const int tile = forced == 4 || (forced == 2 && cpu_has_avx2()) ? forced : winograd_tile(M, C, out_h, out_w);
  return tile != 0 && winograd_scratch_ok(tile, M, C, out_h, out_w) ? tile : 0;
}

// Conv with an optional fused stage (see conv_impl.h).
Status conv_run(KernelContext& ctx, const ConvPrepacked* pre, const ConvFusion& fuse) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
  DLRT_ASSIGN_OR_RETURN(const Tensor* w, required_input(ctx, 1));
  const Tensor* bias = ctx.input(2);
  const Tensor* z = fuse.residual_input >= 0 ? ctx.input(static_cast<size_t>(fuse.residual_input)) : nullptr;
  // (A float32 W stays the same tensor there, so `pre` still applies to it.)
  if (nn::is_half(x->dtype())) return nn::run_as_float32(ctx, [&](KernelContext& c) { return conv_run(c, pre, fuse); });
  if (x->dtype() != DType::kFloat32 && x->dtype() != DType::kFloat64)
    return ctx.unsupported(std::string("Conv on ") + dtype_name(x->dtype()) + " is not supported");
  if (w->dtype() != x->dtype() || (bias && bias->dtype() != x->dtype()) || (z && z->dtype() != x->dtype()))
    return ctx.invalid("X, W, B (and Z) must have the same dtype");
  if (x->rank() < 3 || x->rank() > 5) return ctx.unsupported("Conv supports 1-D, 2-D and 3-D inputs only");
  if (w->rank() != x->rank()) return ctx.invalid("W must have the same rank as X");
  const int nd = static_cast<int>(x->rank()) - 2;
  const int64_t N = x->dim(0), C = x->dim(1), M = w->dim(0);
  const int64_t group = ctx.node().attr_int("group", 1);
  if (group <= 0 || C % group != 0 || M % group != 0)
    return ctx.invalid("group " + std::to_string(group) + " must divide the channel counts (" + std::to_string(C) +
                       " in, " + std::to_string(M) + " out)");
  const int64_t Cg = C / group, Mg = M / group;
  if (w->dim(1) != Cg)
    return ctx.invalid("W has " + std::to_string(w->dim(1)) + " input channels per group, expected " +
                       std::to_string(Cg));
  if (bias && (bias->rank() != 1 || bias->dim(0) != M)) return ctx.invalid("B must have shape [M]");
  DLRT_ASSIGN_OR_RETURN(IntList kshape, kernel_shape_of(ctx, *w, nd));
  IntList in_sp(x->shape().begin() + 2, x->shape().end());
  DLRT_ASSIGN_OR_RETURN(nn::WindowGeometry wg, nn::resolve_window(ctx, in_sp, kshape, false));
  Shape out_shape = {N, M};
  out_shape.insert(out_shape.end(), wg.out.begin(), wg.out.end());
  if (z && z->shape() != out_shape)
    return ctx.invalid("Z has shape " + shape_to_string(z->shape()) + ", expected the output shape " +
                       shape_to_string(out_shape));
  const bool depthwise = Cg == 1 && Mg == 1 && group > 1;
  // The float32 paths write every element except the slow depthwise fallback.
  const bool writes_all = x->dtype() == DType::kFloat32 && (!depthwise || depthwise_writes_all(to_geo3(wg)));
  DLRT_ASSIGN_OR_RETURN(Tensor * y, writes_all ? ctx.allocate_output_uninitialized(0, x->dtype(), out_shape)
                                               : ctx.allocate_output(0, x->dtype(), out_shape));
  if (y->size() == 0) return Status::Ok();
  // The packed weights apply only to the very tensor they were packed from.
  if (pre && (x->dtype() != DType::kFloat32 || !pre->packed_from(*w) || pre->group_count != group)) pre = nullptr;
  if (!pre && is_freed_constant(*w)) return Internal("W was freed for packed weights that do not apply to this run");

  ConvProblem prob;
  prob.x = x, prob.w = w, prob.bias = bias, prob.z = z, prob.y = y, prob.pre = pre;
  prob.N = N, prob.C = C, prob.M = M, prob.group = group, prob.Cg = Cg, prob.Mg = Mg;
  prob.g = to_geo3(wg);
  prob.in_plane = prob.g.in_size(), prob.out_plane = prob.g.out_size(), prob.ks = prob.g.k_size();
  prob.col_rows = Cg * prob.ks;
  const Geo3& pg = prob.g;
  prob.pointwise = prob.ks == 1 && pg.s[0] == 1 && pg.s[1] == 1 && pg.s[2] == 1 && pg.pb[0] == 0 && pg.pb[1] == 0 &&
                   pg.pb[2] == 0 && prob.out_plane == prob.in_plane;
  prob.depthwise = depthwise;
  prob.pool = &ctx.pool();
  if (x->dtype() != DType::kFloat32) return conv_f64(prob, fuse);
  if (depthwise) return conv_depthwise_f32(prob, fuse);
  // Taps that read padding only at these sizes (dynamic ones the graph
  // pass conv-padding-taps could not see): run the cropped conv.
  crop_dead_taps(prob);
  pre = prob.pre;
  [[maybe_unused]] const Geo3& g = prob.g;

  // Precision bf16x3 with the filters packed for AMX: a conv that does not
  // run Winograd is the GEMM of the filters (A) and the image or its
  // im2col rows (B, split into tiles as it is read), skipping the other
  // fp32 paths below. Winograd keeps its convs: F(4x4, 3x3) multiplies 4x
  // less, bf16x3 makes three tile products for each one, and the im2col
  // rows of large planes cost as much again (docs/performance-decisions.md). A patch embedding
  // runs transposed, with Wᵀ as AMX tiles: its im2col rows gather every
  // k-th float, its im2colᵀ rows copy whole kernel rows (docs/performance-decisions.md).
  const bool amx = pre && pre->amx_group(0) && amx_engine() != AmxEngine::kNone;
  // Precision bf16 on AMX takes Winograd's convs too: one tile product per
  // K step against F(4x4, 3x3)'s 4x fewer fp32 multiplies
  // (docs/performance-decisions.md).
  const bool tiles_take_winograd = amx && pre->amx_group(0)->precision() == GemmPrecision::kBf16;

  // Winograd where conv_winograd_tile takes the conv.
  const int wtile = pre && !tiles_take_winograd && g.k[0] == 1 && g.in[0] == 1 && g.out[0] == 1
                        ? conv_winograd_tile(group, M, C, g.k + 1, g.s + 1, g.d + 1, g.out[1], g.out[2])
                        : 0;
  if (wtile != 0 && conv_winograd_f32(prob, fuse, wtile)) return Status::Ok();

#if defined(__x86_64__) || defined(__i386__)
  const int64_t out_plane = prob.out_plane, ks = prob.ks;

  // Group-1 2-D convs, kernels larger than 1x1, with output planes of at
  // most 64 positions (resnet18's 7x7 layer4) on AVX2 without AVX-512:
  // over M x positions, the 6 x 16 tile spends a whole 16-wide tile on the
  // 49th column, and the direct path computes the padding columns of each
  // 7-wide row (63 grid columns for 49 outputs). As Yᵀ = im2colᵀ · Wᵀ the
  // positions are the rows (the last tile runs just its rows) and the
  // channels fill 16-wide panels of Wᵀ, packed once
  // (ConvPrepacked::transposed); faster on Zen 1 for resnet18's layer4. 1x1
  // convs on 7x7 (mobilenet_v2's) stay on the direct path, which measured
  // faster there. Patch embeddings (kernel = stride, no padding:
  // tiny_vit's 16x16/16) go this way at any size: each row of im2colᵀ is
  // whole kernel rows copied from the image, where the GEMM path gathers
  // every 16th float. DLRT_CONV_DIRECT=1 (direct for every shape) turns
  // this off.
  //
  // On AVX-512 the patch embeddings go this way, and planes smaller than the
  // 8x48 tile's 48 columns where the transposed product wastes less of the
  // tile (avx512_transposed_wastes_less: a slim ResNet-50's 5x2 plane used
  // 21% of the tile as W · im2col, 58% transposed, and its 3x3 convs there
  // ran 0.92 -> 0.62 ms). resnet18's 7x7 layer4 convs measured slower
  // transposed (the im2colᵀ copy) and keep the direct tile or the GEMM path
  // (docs/performance-decisions.md, "Convolution").
  const bool patchify = g.k[1] == g.s[1] && g.k[2] == g.s[2] && g.k[2] >= 4 && g.pb[1] == 0 && g.pb[2] == 0 &&
                        g.d[1] == 1 && g.d[2] == 1;
  const bool small_plane = out_plane <= kTransposedMaxPlane && ks > 1 &&
                           (!cpu_has_avx512() || avx512_transposed_wastes_less(M, out_plane));
  if ((!amx || patchify) && pre && group == 1 && (small_plane || patchify) && cpu_has_avx2() && g.k[0] == 1 &&
      g.in[0] == 1 && g.out[0] == 1 && conv_direct_mode() != ConvDirectMode::kForce) {
    return conv_transposed_f32(prob, fuse);
  }
#endif
  return conv_gemm_f32(prob, fuse, amx);
}

Tensor ConvPrepacked::weights() const {
  if (source_.raw_data() || source_.size() == 0) return source_;
  // Dropped (can_drop_source): the fp32 GEMM packing holds every weight.
  auto w = Tensor::allocate_uninitialized(DType::kFloat32, source_.shape());
  if (!w.ok()) throw std::bad_alloc();  // kernels' allocation failures surface as kOutOfMemory
  const int64_t Mg = source_.dim(0) / group_count, K = source_.size() / source_.dim(0);
  for (int64_t gi = 0; gi < group_count; ++gi) {
    [[maybe_unused]] const bool fp32 = group(gi).unpack(w->data<float>() + gi * Mg * K);  // can_drop_source: fp32 tiles
  }
  return std::move(w).value();
}

bool ConvPrepacked::can_drop_source() const {
  if (!amx_groups_.empty() || groups_.size() != static_cast<size_t>(group_count)) return false;
  for (const auto& g : groups_)
    if (g->precision() != GemmPrecision::kF32) return false;
  return source_.raw_data() != nullptr;
}

void ConvPrepacked::drop_source() {
  if (can_drop_source()) source_ = freed_constant(source_);
}

const PackedMatrix& ConvPrepacked::transposed() const {
  std::call_once(transposed_once_, [&] {
    const Tensor w = weights();
    const int64_t M = w.dim(0), K = w.size() / M;
    transposed_ = PackedMatrix::pack_b(true, K, M, w.data<float>(), K,
                                       amx_groups_.empty() ? GemmPrecision::kF32 : amx_groups_[0]->precision());
  });
  return *transposed_;
}

void ConvPrepacked::pack_groups() const {
  // Made at create whenever W can be dropped, so W is here when it runs.
  std::call_once(groups_once_, [&] {
    const int64_t Mg = source_.dim(0) / group_count, K = source_.size() / source_.dim(0);
    for (int64_t gi = 0; gi < group_count; ++gi)
      groups_.push_back(PackedMatrix::pack_a(false, Mg, K, source_.data<float>() + gi * Mg * K, K));
  });
}

const PackedMatrix& ConvPrepacked::group(int64_t gi) const {
  pack_groups();
  return *groups_[static_cast<size_t>(gi)];
}

const WinogradFilters& ConvPrepacked::winograd4() const {
  std::call_once(winograd4_once_, [&] {
    const Tensor w = weights();
    winograd4_ = winograd4_filters(w.data<float>(), w.dim(0), w.dim(1));
  });
  return *winograd4_;
}

const WinogradFilters& ConvPrepacked::winograd() const {
  std::call_once(winograd_once_, [&] {
    const Tensor w = weights();
    winograd_ = winograd_filters(w.data<float>(), w.dim(0), w.dim(1));
  });
  return *winograd_;
}

Result<std::shared_ptr<ConvPrepacked>> prepack_conv_weights(const ir::Node& node, const Tensor* w) {
  if (!w || w->dtype() != DType::kFloat32 || w->rank() < 3 || w->rank() > 5) return std::shared_ptr<ConvPrepacked>();
  const int64_t group = node.attr_int("group", 1);
  const int64_t M = w->dim(0);
  if (group <= 0 || M % group != 0) return std::shared_ptr<ConvPrepacked>();
  const int64_t Mg = M / group;
  int64_t K = 1;
  for (size_t i = 1; i < w->rank(); ++i) K *= w->dim(i);
  if (Mg == 1 && w->dim(1) == 1 && group > 1) return std::shared_ptr<ConvPrepacked>();  // depthwise: direct loop
  auto pre = std::make_shared<ConvPrepacked>();
  pre->set_source(*w);
  pre->group_count = group;
  // A conv that will run Winograd gets its transformed filters now (the
  // variant winograd_prepack_tile expects) and the GEMM packing only if
  // another path ever asks (an output plane under kWinogradMinPlane, the
  // switch turned off): resnet18 keeps 9 MiB less.
  const std::vector<int64_t> ones = {1, 1};
  const std::vector<int64_t> st = node.attr_ints("strides", ones), di = node.attr_ints("dilations", ones);
  const GemmPrecision precision = kernel_build_options().precision;
  const bool amx = is_amx_precision(precision) && amx_engine() != AmxEngine::kNone;
  const bool winograd = !(amx && precision == GemmPrecision::kBf16) && w->rank() == 4 && st.size() == 2 &&
                        di.size() == 2 &&
                        winograd_candidate(group, M, w->dim(1), w->dim(2), w->dim(3), st[0], st[1], di[0], di[1]);
  if (winograd && winograd_prepack_tile(M, w->dim(1)) == 4) pre->winograd4();
  else if (winograd) pre->winograd();
  // Precision bf16x3 or bf16 on AMX: the filters as AMX tiles too, which
  // conv_run takes over every fp32 path but (bf16x3) Winograd and patch
  // embeddings (conv_run says why); the fp32 GEMM packing then waits for a
  // first use, should AMX become unusable.
  if (amx) {
    for (int64_t gi = 0; gi < group; ++gi)
      pre->amx_groups_.push_back(PackedMatrix::pack_a(false, Mg, K, w->data<float>() + gi * Mg * K, K, precision));
    // A patch embedding (kernel = stride >= 4, no padding) runs as Yᵀ =
    // im2colᵀ · Wᵀ: its Wᵀ, as AMX tiles, now rather than on the first run.
    const std::vector<int64_t> pads = node.attr_ints("pads", {0, 0, 0, 0});
    const std::string auto_pad = node.attr_string("auto_pad", "NOTSET");
    const bool no_pads = std::all_of(pads.begin(), pads.end(), [](int64_t v) { return v == 0; }) &&
                         (auto_pad == "NOTSET" || auto_pad == "VALID");
    if (w->rank() == 4 && group == 1 && st.size() == 2 && di.size() == 2 && st[0] == w->dim(2) && st[1] == w->dim(3) &&
        w->dim(3) >= 4 && di[0] == 1 && di[1] == 1 && no_pads)
      pre->transposed();
  } else if (!winograd) {
    pre->pack_groups();
  }
  return pre;
}

namespace {

Status conv_compute(KernelContext& ctx) { return conv_run(ctx, nullptr, ConvFusion{}); }

}  // namespace

Status register_conv_kernels(KernelRegistry& r) {
  KernelDef conv;
  conv.op_type = "Conv";
  conv.min_opset = 1;
  conv.factory = [](const ir::Node&) -> Result<std::unique_ptr<OpKernel>> {
    return std::unique_ptr<OpKernel>(new FnKernel(conv_compute));
  };
  conv.factory_with_constants = [](const ir::Node& node,
                                   const ConstantInputs& constants) -> Result<std::unique_ptr<OpKernel>> {
    DLRT_ASSIGN_OR_RETURN(auto pre, prepack_conv_weights(node, constants(1)));
    return std::unique_ptr<OpKernel>(new ConvKernel(std::move(pre), ConvFusion{}));
  };
  DLRT_RETURN_IF_ERROR(r.add(std::move(conv)));
  DLRT_RETURN_IF_ERROR(r.add_fn("ConvTranspose", conv_transpose_compute, 1));
  return Status::Ok();
}

}  // namespace dlrt::cpu
