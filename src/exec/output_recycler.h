// Buffers for the main graph's large outputs, reused from run to run.
//
// A graph output of kLargeAllocBytes or more gets a fresh mapping
// (core/large_alloc), and the first write to each of its pages faults it in:
// about 2 us a page, 0.3 ms for a 1 MiB output, paid on every run because
// the caller takes the output and frees it. The recycler keeps one buffer per
// graph output index, sharing its ownership with the tensor the caller gets;
// once the caller has dropped every copy of that tensor (the recycler's
// reference is the only one left), the next run of the same byte size writes
// its output there. A caller that keeps its outputs only makes the next run
// map a new buffer, as before. What stays resident between runs is at most one
// buffer per output, the size of the last run's output.
//
// Thread-safety: safe for concurrent runs (a buffer in use by one run is not
// handed to another: its reference count is above one).
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

namespace dlrt {

class OutputRecycler {
 public:
  // A 64-byte-aligned buffer of `bytes` (>= kLargeAllocBytes) for graph
  // output `index`, its owner shared with the recycler; `reused` is set when
  // it held an earlier output (otherwise it is a new zero-filled mapping).
  // Null when the system has no memory.
  std::shared_ptr<void> take(size_t index, size_t bytes, bool* reused);

 private:
  struct Slot {
    std::shared_ptr<void> owner;
    size_t bytes = 0;
  };
  std::mutex mu_;
  std::vector<Slot> slots_;
};

}  // namespace dlrt
