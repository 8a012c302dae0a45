#include "exec/arena.h"

#include <cstdlib>

#include "core/large_alloc.h"

namespace dlrt {

std::shared_ptr<ArenaPlan> ArenaPlan::build(const std::vector<ValueRecord>& record, const std::vector<int>& last_use,
                                            const ir::Graph& graph, const std::vector<uint32_t>& in_place) {
  const size_t n = record.size();
  auto plan = std::make_shared<ArenaPlan>();
  plan->offsets_.assign(n, kUnplanned);
  plan->bytes_.assign(n, 0);
  plan->alias_.assign(n, false);

  auto root_of = [&](ir::ValueId v) {
    for (int guard = 0; record[v].alias_of != ir::kNoValue && guard < 1000; ++guard) v = record[v].alias_of;
    return v;
  };
  // A root lives until the last reader of any view of it; a root viewed by a
  // graph output stays on the heap (the caller keeps it).
  std::vector<int> end(n, -2);
  std::vector<bool> keep_on_heap(n, false);
  for (size_t v = 0; v < n; ++v) {
    if (record[v].producer < 0) continue;
    ir::ValueId r = root_of(static_cast<ir::ValueId>(v));
    if (r != static_cast<ir::ValueId>(v)) plan->alias_[v] = true;
    if (last_use[v] < 0) keep_on_heap[r] = true;
    end[r] = std::max(end[r], last_use[v]);
  }
  std::vector<ir::BufferUse> uses;
  std::vector<ir::ValueId> ids;
  std::vector<int> use_of(n, -1);
  for (size_t v = 0; v < n; ++v) {
    const ValueRecord& rec = record[v];
    if (!rec.allocated || rec.alias_of != ir::kNoValue || rec.bytes == 0 || keep_on_heap[v] || rec.producer < 0) continue;
    use_of[v] = static_cast<int>(uses.size());
    uses.push_back({rec.bytes, rec.producer, std::max(end[v], rec.producer)});
    ids.push_back(static_cast<ir::ValueId>(v));
  }
  // Outputs written in place over an input (see the header).
  if (in_place.size() == graph.nodes.size()) {
    for (size_t i = 0; i < graph.nodes.size(); ++i) {
      const ir::Node& node = graph.nodes[i];
      if (!in_place[i] || node.outputs.empty() || node.outputs[0] == ir::kNoValue) continue;
      const int out = use_of[node.outputs[0]];
      if (out < 0 || uses[out].first != static_cast<int>(i)) continue;
      for (size_t k = 0; k < node.inputs.size() && k < 32; ++k) {
        const ir::ValueId in = node.inputs[k];
        if (!((in_place[i] >> k) & 1) || in == ir::kNoValue || use_of[in] < 0) continue;
        const ir::BufferUse& from = uses[use_of[in]];
        if (from.bytes != uses[out].bytes || from.last != static_cast<int>(i)) continue;
        // Another input reading the same buffer through a view (a Reshape of
        // it, say) could read elements the output has already overwritten.
        bool other_view = false;
        for (ir::ValueId w : node.inputs)
          if (w != ir::kNoValue && w != in && root_of(w) == in) other_view = true;
        if (other_view) continue;
        uses[out].takes = use_of[in];
        break;
      }
    }
  }
  plan->stats_ = ir::plan_memory(uses);
  for (size_t i = 0; i < ids.size(); ++i) {
    plan->offsets_[ids[i]] = plan->stats_.offsets[i];
    plan->bytes_[ids[i]] = uses[i].bytes;
  }
  return plan;
}

size_t ArenaPlan::arena_alloc_bytes() const {
  const size_t size = stats_.arena_bytes ? stats_.arena_bytes : 64;
  return (size + 63) / 64 * 64;
}

ArenaPool::Arena ArenaPool::acquire(size_t bytes) {
  std::vector<Arena> too_small;
  {
    std::lock_guard<std::mutex> lk(mu_);
    size_t best = free_.size();
    for (size_t i = 0; i < free_.size(); ++i)
      if (free_[i].capacity >= bytes && (best == free_.size() || free_[i].capacity < free_[best].capacity)) best = i;
    if (best < free_.size()) {
      Arena a = free_[best];
      free_.erase(free_.begin() + static_cast<std::ptrdiff_t>(best));
      return a;
    }
    too_small.swap(free_);  // every free arena is smaller than this run needs
  }
  for (const Arena& a : too_small) buffer_free(a.data, a.capacity);
  return Arena{buffer_alloc(bytes, false), bytes};
}

void ArenaPool::release(Arena arena) {
  if (!arena.data) return;
  std::lock_guard<std::mutex> lk(mu_);
  free_.push_back(arena);
}

ArenaPool::~ArenaPool() {
  for (const Arena& a : free_) buffer_free(a.data, a.capacity);
}

}  // namespace dlrt
