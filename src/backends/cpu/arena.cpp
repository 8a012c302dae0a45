#include "backends/cpu/arena.h"

#include <cstdlib>

#include "core/large_alloc.h"

namespace dlrt {

std::shared_ptr<ArenaPlan> ArenaPlan::build(const std::vector<ValueRecord>& record, const std::vector<int>& last_use) {
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
  for (size_t v = 0; v < n; ++v) {
    const ValueRecord& rec = record[v];
    if (!rec.allocated || rec.alias_of != ir::kNoValue || rec.bytes == 0 || keep_on_heap[v] || rec.producer < 0) continue;
    uses.push_back({rec.bytes, rec.producer, std::max(end[v], rec.producer)});
    ids.push_back(static_cast<ir::ValueId>(v));
  }
  plan->stats_ = ir::plan_memory(uses);
  for (size_t i = 0; i < ids.size(); ++i) {
    plan->offsets_[ids[i]] = plan->stats_.offsets[i];
    plan->bytes_[ids[i]] = uses[i].bytes;
  }
  return plan;
}

void* ArenaPlan::acquire() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    if (!free_.empty()) {
      void* p = free_.back();
      free_.pop_back();
      return p;
    }
  }
  return buffer_alloc(arena_alloc_bytes(), false);
}

size_t ArenaPlan::arena_alloc_bytes() const {
  const size_t size = stats_.arena_bytes ? stats_.arena_bytes : 64;
  return (size + 63) / 64 * 64;
}

void ArenaPlan::release(void* arena) {
  if (!arena) return;
  std::lock_guard<std::mutex> lk(mu_);
  free_.push_back(arena);
}

ArenaPlan::~ArenaPlan() {
  for (void* p : free_) buffer_free(p, arena_alloc_bytes());
}

}  // namespace dlrt
