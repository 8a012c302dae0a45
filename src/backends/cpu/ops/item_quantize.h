// Dynamic quantization per batch item (RunOptions::item_lengths): each item's
// rows get the scale and zero point DynamicQuantizeLinear would give that
// item alone, over its valid rows (its padding left out), so that an item's
// integer product does not depend on its batch-mates.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "dlrt/status.h"
#include "dlrt/tensor.h"
#include "backends/cpu/kernel.h"

namespace dlrt::cpu {

// DynamicQuantizeLinear's uint8 scale and zero point for the n values at x
// (scale 1 and zero point 0 when n is 0); false when x holds a NaN.
bool dynamic_quant_params(const float* x, int64_t n, float& scale, uint8_t& zp);

// How the rows of a quantized input split into batch items: item i owns rows
// [i * rows_per_item, (i + 1) * rows_per_item), the first valid[i] of them
// real and the rest padding.
struct ItemRows {
  int64_t rows_per_item = 0;
  std::vector<int64_t> valid;  // one per item
};

// The current run's items for x, read as rows of its last dimension: nullopt
// when the run quantizes per tensor (no RunOptions::item_lengths). Else x
// must be [items, tokens, K] (an item's valid rows: its length) or
// [items, K] (one row per item); anything else is kUnsupported, naming the
// node: its rows are not laid out by item.
Result<std::optional<ItemRows>> current_item_rows(const KernelContext& ctx, const Tensor& x);

// Quantizes x (rows of k values, split as `items` says) to uint8 per item:
// each item's valid rows with dynamic_quant_params over those rows alone,
// its padding rows set to its zero point (the value 0). row_scale and row_zp
// get one value per row. False when a valid row holds a NaN.
bool dynamic_quantize_items(const float* x, int64_t k, const ItemRows& items, uint8_t* q, float* row_scale,
                            int32_t* row_zp);

}  // namespace dlrt::cpu
