// A fixed pool of worker threads for intra-op parallelism.
//
// Thread-safety: parallel_for may be called from any thread, including from
// inside a parallel_for body (the nested call then runs inline on the caller,
// so nesting never deadlocks).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace dlrt {

class ThreadPool {
 public:
  // `threads` counts the caller: 1 means no workers, 0 means one per core.
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return static_cast<int>(workers_.size()) + 1; }

  // Calls fn(begin, end) on disjoint chunks covering [0, n). Chunks hold at
  // least `grain` items. Returns when every chunk is done.
  void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);

  // Cores of this machine (at least 1).
  static int hardware_threads();

 private:
  struct Job;
  void worker_loop();

  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<Job>> queue_;
  bool stop_ = false;
};

}  // namespace dlrt
