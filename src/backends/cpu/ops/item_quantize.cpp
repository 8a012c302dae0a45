#include "backends/cpu/ops/item_quantize.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "backends/cpu/kernels/quantize_rows.h"
#include "core/run_limits.h"

namespace dlrt::cpu {

bool dynamic_quant_params(const float* x, int64_t n, float& scale, uint8_t& zp) {
  float lo = 0, hi = 0;
  if (!min_max(x, n, lo, hi)) return false;
  lo = std::min(lo, 0.0f);  // the range always includes 0
  hi = std::max(hi, 0.0f);
  // An all-zero input has no range; its scale is 1, as ONNX Runtime's.
  scale = hi == lo ? 1.0f : (hi - lo) / 255.0f;
  // nearbyint rounds half to even in the default rounding mode.
  const float z = std::nearbyint(std::min(255.0f, std::max(0.0f, 0.0f - lo / scale)));
  zp = static_cast<uint8_t>(z);
  return true;
}

Result<std::optional<ItemRows>> current_item_rows(const KernelContext& ctx, const Tensor& x) {
  const RunLimits* run = current_run_limits();
  if (!run || !run->item_lengths || run->item_lengths->empty()) return std::optional<ItemRows>{};
  const std::vector<int64_t>& lengths = *run->item_lengths;
  const int64_t items = static_cast<int64_t>(lengths.size());
  ItemRows r;
  if (x.rank() == 2 && x.dim(0) == items) {
    r.rows_per_item = 1;
    for (int64_t n : lengths) r.valid.push_back(n > 0 ? 1 : 0);
    return std::optional<ItemRows>(std::move(r));
  }
  if (x.rank() == 3 && x.dim(0) == items) {
    r.rows_per_item = x.dim(1);
    for (int64_t n : lengths) {
      if (n > r.rows_per_item) break;
      r.valid.push_back(n);
    }
    if (static_cast<int64_t>(r.valid.size()) == items) return std::optional<ItemRows>(std::move(r));
  }
  return ctx.unsupported("per-item quantization (RunOptions::item_lengths, " + std::to_string(items) +
                         " items) of an input of shape " + shape_to_string(x.shape()) +
                         ": only [items, tokens, K] with each length <= tokens, or [items, K]");
}

bool dynamic_quantize_items(const float* x, int64_t k, const ItemRows& items, uint8_t* q, float* row_scale,
                            int32_t* row_zp) {
  const int64_t per = items.rows_per_item;
  for (size_t i = 0; i < items.valid.size(); ++i) {
    const int64_t row0 = static_cast<int64_t>(i) * per, valid = items.valid[i];
    float scale = 1;
    uint8_t zp = 0;
    if (!dynamic_quant_params(x + row0 * k, valid * k, scale, zp)) return false;
    quantize_u8(x + row0 * k, valid * k, scale, zp, q + row0 * k);
    std::memset(q + (row0 + valid) * k, zp, static_cast<size_t>((per - valid) * k));
    std::fill(row_scale + row0, row_scale + row0 + per, scale);
    std::fill(row_zp + row0, row_zp + row0 + per, static_cast<int32_t>(zp));
  }
  return true;
}

}  // namespace dlrt::cpu
