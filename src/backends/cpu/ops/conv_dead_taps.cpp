// Kernel taps that read padding only at a run's sizes (conv_internal.h:
// dead_taps, crop_dead_taps; conv_impl.h: ConvPrepacked::cropped).
//
// ir/passes/conv_padding_taps.cpp crops such taps when the input's spatial
// sizes are known statically. With dynamic sizes only the run knows them:
// a 3x3 pad-1 conv on an input of height 1 (a text recogniser's neck after
// its backbone has reduced the height to 1) reads only padding with its top
// and bottom kernel rows, so it runs as the 1x3 conv on the same input, with
// the same outputs up to summation order. The cropped weights are made and
// packed once per crop and kept with the conv's packed weights.
#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "backends/cpu/kernels/gemm.h"
#include "backends/cpu/ops/conv_impl.h"
#include "backends/cpu/ops/conv_internal.h"
#include "ir/conv_taps.h"

namespace dlrt::cpu {
namespace {
std::atomic<uint64_t> g_cropped_runs{0};
}  // namespace

uint64_t conv_cropped_runs() { return g_cropped_runs.load(std::memory_order_relaxed); }
void count_cropped_conv_run() { g_cropped_runs.fetch_add(1, std::memory_order_relaxed); }

namespace conv_detail {

ConvTapCrop dead_taps(const Geo3& g) {
  ConvTapCrop c;
  for (int i = 0; i < 3; ++i) {
    const int64_t k = g.k[i], d = g.d[i];
    const ir::ConvTapCut cut = ir::dead_conv_taps({g.in[i], g.out[i], k, g.s[i], d, g.pb[i]});
    const int64_t lead = cut.lead;
    int64_t& trail = c.trail[i];
    c.lead[i] = lead;
    trail = cut.trail;
    // Keep the last window reaching the input's end (a trailing pad >= 0), as the pass does.
    while (trail > 0 && (g.out[i] - 1) * g.s[i] + (k - lead - trail - 1) * d + 1 - g.in[i] - (g.pb[i] - lead * d) < 0)
      --trail;
  }
  return c;
}

void crop_dead_taps(ConvProblem& prob) {
  if (!prob.pre || prob.depthwise || prob.x->dtype() != DType::kFloat32) return;
  const ConvTapCrop crop = dead_taps(prob.g);
  if (!crop.any()) return;
  const ConvPrepacked* cropped = prob.pre->cropped(crop);
  if (!cropped) return;
  g_cropped_runs.fetch_add(1, std::memory_order_relaxed);
  prob.pre = cropped;
  prob.w = &cropped->source();
  Geo3& g = prob.g;
  for (int i = 0; i < 3; ++i) {
    g.k[i] -= crop.lead[i] + crop.trail[i];
    g.pb[i] -= crop.lead[i] * g.d[i];
    g.pe[i] -= crop.trail[i] * g.d[i];
  }
  prob.ks = g.k_size();
  prob.col_rows = prob.Cg * prob.ks;
  prob.pointwise = prob.ks == 1 && g.s[0] == 1 && g.s[1] == 1 && g.s[2] == 1 && g.pb[0] == 0 && g.pb[1] == 0 &&
                   g.pb[2] == 0 && prob.out_plane == prob.in_plane;
}

}  // namespace conv_detail

ConvTapCrop dead_conv_taps(const nn::WindowGeometry& g) { return conv_detail::dead_taps(conv_detail::to_geo3(g)); }

Tensor crop_conv_weights(const Tensor& w, const ConvTapCrop& crop) {
  const int nd = static_cast<int>(w.rank()) - 2;
  std::vector<ir::ConvTapCut> cuts;
  for (int j = 0; j < nd; ++j) cuts.push_back({crop.lead[3 - nd + j], crop.trail[3 - nd + j]});
  std::optional<Tensor> out = ir::crop_conv_taps(w, cuts);
  return out ? std::move(*out) : Tensor();
}

const ConvPrepacked* ConvPrepacked::cropped(const ConvTapCrop& crop) const {
  std::lock_guard<std::mutex> lock(crops_mutex_);
  for (const auto& [key, made] : crops_)
    if (key == crop) return made.get();
  std::shared_ptr<ConvPrepacked> made;
  Tensor w = crop_conv_weights(weights(), crop);
  if (w.size() > 0) {
    made = std::make_shared<ConvPrepacked>();
    made->set_source(w);
    made->group_count = group_count;
    if (!amx_groups_.empty()) {  // the precision these were packed for (bf16x3 or bf16 on AMX)
      const int64_t Mg = w.dim(0) / group_count, K = w.size() / w.dim(0);
      const GemmPrecision precision = amx_groups_[0]->precision();
      for (int64_t gi = 0; gi < group_count; ++gi)
        made->amx_groups_.push_back(
            PackedMatrix::pack_a(false, Mg, K, w.data<float>() + gi * Mg * K, K, precision));
    }
  }
  crops_.emplace_back(crop, made);
  return made.get();
}

}  // namespace dlrt::cpu
