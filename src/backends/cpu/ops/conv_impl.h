// Conv internals shared by conv.cpp (Conv) and fused.cpp (com.dlrt FusedConv).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "backends/cpu/kernel.h"
#include "backends/cpu/kernels/activation_epilogue.h"
#include "backends/cpu/kernels/conv_winograd.h"
#include "backends/cpu/kernels/gemm.h"

namespace dlrt::cpu {

namespace nn {
struct WindowGeometry;
}

// Kernel taps cropped from each of the three spatial axes (Geo3's: missing
// leading axes have one tap) because, at a run's input and output sizes,
// they read padding only (conv_dead_taps.cpp).
struct ConvTapCrop {
  int64_t lead[3] = {0, 0, 0}, trail[3] = {0, 0, 0};
  bool any() const {
    for (int i = 0; i < 3; ++i)
      if (lead[i] != 0 || trail[i] != 0) return true;
    return false;
  }
  bool operator==(const ConvTapCrop&) const = default;
};

// The taps of a conv with window geometry `g` (nn_util.h, 1- to 3-D) that
// read padding only: what crop_dead_taps crops (conv_internal.h).
ConvTapCrop dead_conv_taps(const nn::WindowGeometry& g);

// Float32 W [M, C/group, k...] (1- to 3-D) without `crop`'s taps (axes as
// ConvTapCrop's: the last of three are W's); an empty tensor when a removed
// weight is not finite or the allocation fails.
Tensor crop_conv_weights(const Tensor& w, const ConvTapCrop& crop);

// Weights packed once per group (op(A) = W_g, Mg x Cg*k) for the float32 GEMM.
struct ConvPrepacked {
  int64_t group_count = 0;

  // Whether `w`, a run's W, is the constant these were packed from (its
  // data, or its stand-in once an executor freed it) with that shape.
  bool packed_from(const Tensor& w) const { return is_built_constant(w, source_data_, source_.shape()); }
  // The constant W these were packed from, while they hold it (else a
  // tensor of its dtype and shape without data: drop_source).
  const Tensor& source() const { return source_; }
  // W itself: the constant while held, else unpacked from the GEMM packing
  // (a new tensor on each call: for making the forms below).
  Tensor weights() const;
  // Whether W's data can go: the fp32 GEMM packing (made at create) holds
  // all of it. Not for AMX tiles (not exact), nor for a conv that runs
  // Winograd (its GEMM packing waits for a first use; W costs no more).
  bool can_drop_source() const;
  // Lets go of W (can_drop_source()); the forms made on first use come
  // from the GEMM packing from then on. Before any run.
  void drop_source();

  // W_g packed as the GEMM's A operand. Packed at session create, except
  // for a conv that will run Winograd (prepack_conv_weights transforms its
  // filters instead): then on first use, if another path ever needs them.
  const PackedMatrix& group(int64_t gi) const;

  // W_g packed for AMX in precision bf16x3 or bf16 (gemm_amx.h): at session
  // create when the session asked for one of them and AMX was usable then;
  // else null. While AMX stays usable, conv_run prefers it to every path but
  // the transposed one of patch embeddings and, under bf16x3, Winograd.
  const PackedMatrix* amx_group(int64_t gi) const {
    return amx_groups_.empty() ? nullptr : amx_groups_[static_cast<size_t>(gi)].get();
  }

  // Wᵀ (K x M) packed as a GEMM's B operand, for group-1 convs with small
  // output planes and patch embeddings (conv.cpp: Yᵀ = im2colᵀ · Wᵀ);
  // packed on first use, or for a patch embedding under bf16x3 or bf16 on
  // AMX at session create, then in the AMX layout.
  const PackedMatrix& transposed() const;

  // The Winograd F(2x2, 3x3) filters of a 3x3 group-1 W (conv_winograd.h):
  // transformed at session create for a conv that will run Winograd
  // (prepack_conv_weights), else on first use.
  const WinogradFilters& winograd() const;
  // The F(4x4, 3x3) filters (conv_winograd4), likewise.
  const WinogradFilters& winograd4() const;

  // The weights with `crop`'s taps removed, packed like these (AMX tiles
  // where these have them, the rest on first use): made on the first run
  // that asks for this crop, then kept (thread-safe). Null when a removed
  // weight is not finite (0 * inf is NaN: those taps are not dead).
  const ConvPrepacked* cropped(const ConvTapCrop& crop) const;

 private:
  friend Result<std::shared_ptr<ConvPrepacked>> prepack_conv_weights(const ir::Node& node, const Tensor* w);
  void set_source(const Tensor& w) {
    source_ = w;
    source_data_ = w.raw_data();
  }
  void pack_groups() const;
  Tensor source_;
  const void* source_data_ = nullptr;  // source_'s data pointer, kept past drop_source for packed_from
  std::vector<std::shared_ptr<const PackedMatrix>> amx_groups_;
  mutable std::once_flag groups_once_;
  mutable std::vector<std::shared_ptr<const PackedMatrix>> groups_;
  mutable std::once_flag transposed_once_;
  mutable std::shared_ptr<const PackedMatrix> transposed_;
  mutable std::once_flag winograd_once_;
  mutable std::shared_ptr<const WinogradFilters> winograd_;
  mutable std::once_flag winograd4_once_;
  mutable std::shared_ptr<const WinogradFilters> winograd4_;
  mutable std::mutex crops_mutex_;
  mutable std::vector<std::pair<ConvTapCrop, std::shared_ptr<const ConvPrepacked>>> crops_;
};

// The fused stage: Y = act(conv(X, W) + B + Z), Z being input `residual_input` (-1: none).
struct ConvFusion {
  Activation act;
  int residual_input = -1;
};

// Packs a constant float32 W for a (non-depthwise) Conv; null when W is not worth or able to pack.
Result<std::shared_ptr<ConvPrepacked>> prepack_conv_weights(const ir::Node& node, const Tensor* w);

// How many float Conv runs took the AMX GEMM (filters packed for precision
// bf16x3 or bf16) since the process started; for tests.
uint64_t conv_amx_runs();

// How many (image) products ran as Yᵀ = im2colᵀ · Wᵀ (small output planes on
// AVX2, conv.cpp) since the process started; for tests.
uint64_t conv_transposed_runs();

// How many float Conv / FusedConv / ConvBlocked runs ran cropped (dead
// taps, conv_dead_taps.cpp) since the process started; for tests. The
// kernels count theirs with count_cropped_conv_run.
uint64_t conv_cropped_runs();
void count_cropped_conv_run();

// Which Winograd a float32 2-D conv of this shape runs on this CPU (conv.cpp
// decides, for Conv and FusedConv; ConvBlocked takes the same choice and runs
// the 4x4 variant): 4 for F(4x4, 3x3), 2 for F(2x2, 3x3), 0 for another path.
int conv_winograd_tile(int64_t group, int64_t M, int64_t C, const int64_t k[2], const int64_t s[2], const int64_t d[2],
                       int64_t out_h, int64_t out_w);

// Conv / FusedConv. `pre` may be null (or stale: it is then ignored).
Status conv_run(KernelContext& ctx, const ConvPrepacked* pre, const ConvFusion& fuse);

// The Conv / FusedConv kernel: conv_run with `pre` (may be null), which it
// lets go of W for (OpKernel::drop_constant) when pre can do without it.
class ConvKernel final : public OpKernel {
 public:
  ConvKernel(std::shared_ptr<ConvPrepacked> pre, ConvFusion fuse) : pre_(std::move(pre)), fuse_(fuse) {}
  Status compute(KernelContext& ctx) const override { return conv_run(ctx, pre_.get(), fuse_); }
  bool can_drop_constant(size_t input) const override { return input == 1 && pre_ && pre_->can_drop_source(); }
  void drop_constant(size_t input) override {
    if (can_drop_constant(input)) pre_->drop_source();
  }

 private:
  std::shared_ptr<ConvPrepacked> pre_;
  ConvFusion fuse_;
};

}  // namespace dlrt::cpu
