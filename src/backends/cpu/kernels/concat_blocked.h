// Concat on channels of tensors in the channel-blocked layout
// (conv_blocked.h) whose channel counts need not be whole blocks: channel c
// of input j lands at output channel offset_j + c, lanes packed across block
// boundaries, so an output block may take lanes from two or more inputs.
#pragma once

#include <cstdint>
#include <vector>

#include "core/thread_pool.h"

namespace dlrt::cpu {

// Lanes [out_lane, out_lane + len) of an output block = lanes [in_lane,
// in_lane + len) of block `in_block` of input `input`.
struct BlockedConcatRun {
  size_t input = 0;
  int64_t in_block = 0;
  int in_lane = 0, out_lane = 0, len = 0;
};

// Where each output block's lanes come from, for the inputs' channel counts.
struct BlockedConcatPlan {
  int block = 16;
  std::vector<int64_t> channels, blocks;            // per input: C and ceil(C / b)
  std::vector<std::vector<BlockedConcatRun>> runs;  // per output block, in lane order
};

// channels: each input's channel count (>= 0); block: 8 or 16.
BlockedConcatPlan plan_blocked_concat(const std::vector<int64_t>& channels, int block);

// x[j]: blocked [N, plan.blocks[j], hw, b]; y: blocked [N, plan.runs.size(),
// hw, b]. Pad lanes of y (past the channel sum) are zero, except where an
// output block is one input block unchanged (the last input's, whose pad
// lanes are copied).
void concat_blocked(const BlockedConcatPlan& plan, const float* const* x, int64_t N, int64_t hw, float* y,
                    ThreadPool* pool);

}  // namespace dlrt::cpu
