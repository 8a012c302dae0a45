// Splitting a padded batch by token count: a batch of texts runs padded to
// its longest text, so texts of very different lengths waste work on padding.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include "dlrt/status.h"
#include "embed/tokenizer/encoding.h"

namespace dlrt::embed {

// The cost of one more model run, in padded tokens, that length_groups weighs
// against padding: about what a few dozen tokens cost on a CPU (the run's
// fixed work and its smaller, less efficient matrix products).
inline constexpr size_t kRunCostTokens = 32;

// Splits texts of `lengths` (token counts) into groups that each run as one
// padded batch, minimising sum over groups of (run_cost + longest x count):
// the padded tokens computed plus run_cost per run. Each group is a list of
// indices into `lengths`, longest first; the groups come longest first and
// cover every index once. Texts of equal length always share a group, and one
// group (no split) is kept when splitting saves nothing.
std::vector<std::vector<size_t>> length_groups(const std::vector<size_t>& lengths, size_t run_cost = kRunCostTokens);

// Runs `run(batch, indices)` on `encodings` `batch_size` (>= 1) at a time, in
// order of decreasing token count (less padding per batch); indices[k] is
// batch[k]'s place in `encodings`. Stops at the first run that fails.
Status by_length(std::vector<Encoding> encodings, size_t batch_size,
                 const std::function<Status(const std::vector<Encoding>&, const std::vector<size_t>&)>& run);

}  // namespace dlrt::embed
