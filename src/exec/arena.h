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

  // The bytes a run's arena needs (arena_bytes rounded up to 64, at least 64).
  size_t arena_alloc_bytes() const;

 private:
  std::vector<size_t> offsets_;
  std::vector<size_t> bytes_;
  std::vector<bool> alias_;
  ir::MemoryPlan stats_;
};

// The run arenas of one executor, shared by all its plans: a run takes the
// smallest free arena that holds what its plan needs, else a new one, and the
// free arenas too small for it are then unmapped. So the pool holds about one
// arena per concurrent run, sized for the largest plan that ran, and a run
// with other input shapes (another plan) reuses memory that is already
// mapped instead of faulting in a fresh arena.
//
// Thread-safety: acquire and release may be called from many threads at once.
class ArenaPool {
 public:
  struct Arena {
    void* data = nullptr;  // null when the system had no memory
    size_t capacity = 0;
  };
  Arena acquire(size_t bytes);
  void release(Arena arena);
  ArenaPool() = default;
  ArenaPool(const ArenaPool&) = delete;
  ArenaPool& operator=(const ArenaPool&) = delete;
  ~ArenaPool();

 private:
  std::mutex mu_;
  std::vector<Arena> free_;
};

}  // namespace dlrt
