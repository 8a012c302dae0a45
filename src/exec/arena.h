// The executor's static memory plan: the first run for a set of input shapes
// records each intermediate's size, producer, last reader and aliasing (views
// such as Reshape share their input's buffer); from that record ir::plan_memory
// assigns arena offsets, and later runs with the same shapes place every
// planned intermediate in one arena instead of the heap.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

#include "ir/graph.h"
#include "ir/memory_plan.h"

namespace dlrt {

// What the recording run saw for each value of the main graph.
struct ValueRecord {
  size_t bytes = 0;
  bool allocated = false;           // came from allocate_output (not a view or constant)
  ir::ValueId alias_of = ir::kNoValue;  // the value whose buffer this one views
  int producer = -1;                // node index
};

class ArenaPlan {
 public:
  static constexpr size_t kUnplanned = static_cast<size_t>(-1);

  // `last_use[v]` is the index of the last node reading v, -1 for graph
  // outputs. `in_place[i]` (one per node of `graph`): the inputs whose buffer
  // node i's output 0 may take over (KernelDef::in_place_inputs). It does when
  // the input is a planned buffer of the output's size that node i reads for
  // the last time (itself and every view of it) and through no other input,
  // so the output is written over data still in cache.
  static std::shared_ptr<ArenaPlan> build(const std::vector<ValueRecord>& record, const std::vector<int>& last_use,
                                          const ir::Graph& graph, const std::vector<uint32_t>& in_place);

  size_t offset(ir::ValueId v) const { return offsets_[v]; }
  size_t bytes(ir::ValueId v) const { return bytes_[v]; }
  bool expects_alias(ir::ValueId v) const { return alias_[v]; }
  const ir::MemoryPlan& stats() const { return stats_; }

  // An arena of arena_bytes for one run; give it back with release().
  void* acquire();
  void release(void* arena);

  ~ArenaPlan();

 private:
  size_t arena_alloc_bytes() const;  // what acquire() allocates (arena_bytes rounded up to 64)

  std::vector<size_t> offsets_;
  std::vector<size_t> bytes_;
  std::vector<bool> alias_;
  ir::MemoryPlan stats_;
  std::mutex mu_;
  std::vector<void*> free_;
};

}  // namespace dlrt
