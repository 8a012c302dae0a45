#include "ir/memory_plan.h"

#include <algorithm>
#include <numeric>

namespace dlrt::ir {

namespace {
size_t align_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

size_t find_root(std::vector<size_t>& parent, size_t i) {
  while (parent[i] != i) i = parent[i] = parent[parent[i]];
  return i;
}
}  // namespace

MemoryPlan plan_memory(const std::vector<BufferUse>& uses, size_t alignment) {
  MemoryPlan plan;
  plan.offsets.assign(uses.size(), 0);
  if (uses.empty()) return plan;

  // Join each buffer with the one it takes over (same size, handed over at
  // one step); each buffer is taken at most once. A group is then placed as
  // one buffer live from its first member's write to its last member's read.
  std::vector<size_t> parent(uses.size());
  std::iota(parent.begin(), parent.end(), 0);
  std::vector<bool> taken(uses.size(), false);
  for (size_t i = 0; i < uses.size(); ++i) {
    const int t = uses[i].takes;
    if (t < 0 || static_cast<size_t>(t) >= uses.size() || static_cast<size_t>(t) == i || taken[t]) continue;
    const BufferUse& from = uses[t];
    if (from.bytes != uses[i].bytes || from.last != uses[i].first) continue;
    const size_t a = find_root(parent, i), b = find_root(parent, static_cast<size_t>(t));
    if (a == b) continue;
    parent[a] = b;
    taken[t] = true;
    ++plan.in_place;
  }
  struct Group { size_t bytes; int first, last; };
  std::vector<size_t> group_of(uses.size());
  std::vector<Group> groups;
  std::vector<size_t> group_index(uses.size(), SIZE_MAX);
  for (size_t i = 0; i < uses.size(); ++i) {
    const size_t r = find_root(parent, i);
    if (group_index[r] == SIZE_MAX) {
      group_index[r] = groups.size();
      groups.push_back({0, uses[i].first, uses[i].last});
    }
    Group& g = groups[group_index[r]];
    g.bytes = std::max(g.bytes, uses[i].bytes);
    g.first = std::min(g.first, uses[i].first);
    g.last = std::max(g.last, uses[i].last);
    group_of[i] = group_index[r];
  }

  int steps = 0;
  for (const auto& g : groups) steps = std::max(steps, g.last + 1);
  std::vector<size_t> live(static_cast<size_t>(steps) + 1, 0);
  for (const auto& u : uses) plan.total_bytes += align_up(u.bytes, alignment);
  for (const auto& g : groups)
    for (int s = std::max(0, g.first); s <= g.last; ++s) live[s] += align_up(g.bytes, alignment);
  plan.peak_live_bytes = *std::max_element(live.begin(), live.end());

  std::vector<size_t> order(groups.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return groups[a].bytes > groups[b].bytes; });

  struct Placed { size_t offset, size; int first, last; };
  std::vector<Placed> placed;
  placed.reserve(groups.size());
  std::vector<size_t> group_offset(groups.size(), 0);
  for (size_t idx : order) {
    const Group& u = groups[idx];
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
    group_offset[idx] = best;
    placed.push_back({best, size, u.first, u.last});
    plan.arena_bytes = std::max(plan.arena_bytes, best + size);
  }
  for (size_t i = 0; i < uses.size(); ++i) plan.offsets[i] = group_offset[group_of[i]];
  return plan;
}

}  // namespace dlrt::ir
