// Static memory planning: given each intermediate buffer's size and live
// interval (first and last step that touches it), assign offsets in one arena
// so that buffers live at the same time never overlap and others share space.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace dlrt::ir {

struct BufferUse {
  size_t bytes = 0;
  int first = 0;  // step that writes it
  int last = 0;   // last step that reads it (inclusive)
  // Index of another buffer of the same size whose last step is this one's
  // first, whose space this one takes over (an output written in place over
  // an input read for the last time by the step that writes it); -1: none.
  // A hint that does not fit (sizes or steps) is ignored.
  int takes = -1;
};

struct MemoryPlan {
  std::vector<size_t> offsets;  // one per BufferUse, aligned
  size_t arena_bytes = 0;       // size of the arena the offsets fit in
  size_t peak_live_bytes = 0;   // largest sum of buffers live at one step: the lower bound
  size_t total_bytes = 0;       // sum of all buffers: what no reuse would need
  size_t in_place = 0;          // buffers placed over the one they take (BufferUse::takes)
};

// Greedy best-fit by decreasing size: near the lower bound on real graphs.
// Buffers joined by `takes` share one offset (placed as one buffer live over
// their joint steps).
MemoryPlan plan_memory(const std::vector<BufferUse>& uses, size_t alignment = 64);

}  // namespace dlrt::ir
