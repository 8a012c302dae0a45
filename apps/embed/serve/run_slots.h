// The model runs a server may have going at once, shared by every model it
// serves (pool_size): a counting semaphore that hands free slots out first
// come, first served, so a busy model cannot starve another one: a worker
// that finishes a run and wants the next queues behind those already waiting.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>

namespace dlrt::embed {

class RunSlots {
 public:
  explicit RunSlots(int slots);
  RunSlots(const RunSlots&) = delete;
  RunSlots& operator=(const RunSlots&) = delete;

  // Waits for a free slot, in arrival order, until `deadline` (the epoch: no
  // deadline). False when the deadline passed first.
  bool acquire(std::chrono::steady_clock::time_point deadline = {});
  void release();

  int slots() const { return slots_; }
  int in_use() const;
  size_t waiting() const;

 private:
  const int slots_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  int in_use_ = 0;
  uint64_t next_ticket_ = 0;
  std::deque<uint64_t> queue_;  // tickets of the waiting callers, oldest first
};

// Holds one slot for a scope (none when `slots` is null).
class RunSlot {
 public:
  RunSlot(RunSlots* slots, std::chrono::steady_clock::time_point deadline)
      : slots_(slots), held_(slots == nullptr || slots->acquire(deadline)) {}
  ~RunSlot() { release(); }
  // Gives the slot back before the scope ends.
  void release() {
    if (slots_ && held_) slots_->release();
    held_ = false;
  }
  RunSlot(const RunSlot&) = delete;
  RunSlot& operator=(const RunSlot&) = delete;
  // False when the deadline passed before a slot was free.
  bool held() const { return held_; }

 private:
  RunSlots* slots_;
  bool held_;
};

}  // namespace dlrt::embed
