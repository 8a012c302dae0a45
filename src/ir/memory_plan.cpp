#include "ir/memory_plan.h"

#include <algorithm>
#include <numeric>

namespace dlrt::ir {

namespace {
size_t align_up(size_t v, size_t a) { return (v + a - 1) / a * a; }
}  // namespace

MemoryPlan plan_memory(const std::vector<BufferUse>& uses, size_t alignment) {
  MemoryPlan plan;
  plan.offsets.assign(uses.size(), 0);
  if (uses.empty()) return plan;

  int steps = 0;
  for (const auto& u : uses) steps = std::max(steps, u.last + 1);
  std::vector<size_t> live(static_cast<size_t>(steps) + 1, 0);
  for (const auto& u : uses) {
    plan.total_bytes += align_up(u.bytes, alignment);
    for (int s = std::max(0, u.first); s <= u.last; ++s) live[s] += align_up(u.bytes, alignment);
  }
  plan.peak_live_bytes = *std::max_element(live.begin(), live.end());

  std::vector<size_t> order(uses.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return uses[a].bytes > uses[b].bytes; });

  struct Placed { size_t offset, size; int first, last; };
  std::vector<Placed> placed;
  placed.reserve(uses.size());
  for (size_t idx : order) {
    const BufferUse& u = uses[idx];
    size_t size = align_up(std::max<size_t>(u.bytes, 1), alignment);
    // Blocks overlapping in time, sorted by offset: take the smallest gap that fits.
    std::vector<const Placed*> busy;
    for (const auto& p : placed)
      if (p.first <= u.last && u.first <= p.last) busy.push_back(&p);
    std::sort(busy.begin(), busy.end(), [](const Placed* a, const Placed* b) { return a->offset < b->offset; });
    size_t best = SIZE_MAX, best_gap = SIZE_MAX, cursor = 0;
    for (const Placed* p : busy) {
      if (p->offset >= cursor + size) {
        size_t gap = p->offset - cursor;
        if (gap < best_gap) { best_gap = gap; best = cursor; }
      }
      cursor = std::max(cursor, p->offset + p->size);
    }
    if (best == SIZE_MAX) best = cursor;
    plan.offsets[idx] = best;
    placed.push_back({best, size, u.first, u.last});
    plan.arena_bytes = std::max(plan.arena_bytes, best + size);
  }
  return plan;
}

}  // namespace dlrt::ir
