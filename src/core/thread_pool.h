// A fixed pool of worker threads for intra-op parallelism.
//
// Waiting: after each parallel section a worker spins (polls, with the CPU's
// pause hint) for up to `spin_us` microseconds for the next one, then sleeps
// on a condition variable. A model run is a chain of parallel sections with
// short single-threaded ops between them; the spin saves the wake-up (a
// futex syscall plus the scheduler's latency, tens of microseconds) that a
// small op could not earn back. An idle pool spins at most spin_us after its
// last work and then uses no CPU.
//
// Dispatch takes no lock while workers are awake: the caller publishes its
// job (on its stack; the callable passed by reference as a FunctionRef, so
// nothing is allocated) in a free slot, workers announce the job they join in
// a per-worker hazard pointer, and the caller, once every chunk is claimed,
// empties its slot and waits until no hazard points at its job.
//
// Placement: the chunks of a range are dealt in contiguous runs, one per
// thread (the caller first), and each thread claims from its own run before
// it takes what is left of the others'. So with the same range a thread
// computes the same part of every op, writes the part of an activation the
// next op's same thread reads, and two threads meet only at the run
// boundaries: little data crosses between cores. (Claiming the next free
// chunk instead let both cores write every few chunks of every tensor;
// where the VM placed the two vCPUs on different core complexes, with a
// ~500 ns round trip, mobilenet_v2 at 2 threads ran slower:
// bench/results/2026-11-23_thread_pool_runs_slow_state.json.)
//
// Thread-safety: parallel_for may be called from any thread, from several at
// once (up to kSlots jobs run on the workers together; further callers run
// their range inline), and from inside a parallel_for body (the nested call
// then runs inline on the caller, so nesting never deadlocks).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "core/function_ref.h"

namespace dlrt {

class ThreadPool {
 public:
  // `threads` counts the caller: 1 means no workers, 0 means one per core.
  // `spin_us` < 0 means default_spin_us().
  explicit ThreadPool(int threads, int spin_us = -1);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const { return static_cast<int>(workers_.size()) + 1; }
  int spin_us() const { return spin_us_; }

  // Calls fn(begin, end) on disjoint chunks covering [0, n), on the workers
  // and the calling thread. Every chunk but the last holds at least `grain`
  // items; a range of one chunk runs inline with no dispatch. Returns when every chunk is done. If a
  // chunk throws, chunks not yet started are skipped and the first exception
  // is rethrown on the caller once the others have finished.
  void parallel_for(int64_t n, int64_t grain, FunctionRef<void(int64_t, int64_t)> fn);

  // A grain for parallel_for(n, ...) at most `grain` that gives every thread
  // the same number of equal chunks where it can: an op of a few chunks
  // otherwise leaves one thread twice the work of another (3 chunks of 16384
  // on 2 threads), and 128 rows in chunks of 10 split 70/58. It divides each
  // thread's share (n / threads) into the fewest equal chunks of at most
  // `grain` (up to twice as many as the share needs), else rounds.
  int64_t balanced_grain(int64_t n, int64_t grain) const {
    const int64_t t = num_threads();
    if (t <= 1 || n <= 0 || grain <= 0) return grain;
    const int64_t share = (n + t - 1) / t;
    const int64_t k0 = (share + grain - 1) / grain;  // chunks per thread
    for (int64_t k = k0; k <= 2 * k0 && k <= share; ++k)
      if (share % k == 0) return share / k;
    return (share + k0 - 1) / k0;
  }

  // Cores of this machine (at least 1).
  static int hardware_threads();

  // $DLRT_SPIN_US when it is a number in [0, 100000], else 100.
  static int default_spin_us();

 private:
  struct Job;
  static constexpr int kSlots = 8;
  struct alignas(64) Hazard {
    std::atomic<Job*> job{nullptr};
  };

  void worker_loop(int index);
  // Joins jobs in the slots until none has unclaimed chunks; true if it ran any.
  bool help(Hazard& hazard, int self);
  // Polls until `epoch_` differs from `seen` or stop_ is set (true), or
  // spin_us_ passes (false).
  bool spin_for_work(uint64_t seen) const;
  bool job_finished(const Job& job) const;

  std::vector<std::thread> workers_;
  std::vector<Hazard> hazards_;  // one per worker
  int spin_us_ = 0;
  alignas(64) std::atomic<Job*> slots_[kSlots] = {};
  alignas(64) std::atomic<uint64_t> epoch_{0};  // bumped after a job is published
  std::atomic<bool> stop_{false};
  std::atomic<int> sleepers_{0};  // workers in (or entering) work_cv_.wait
  std::atomic<int> waiters_{0};   // callers in (or entering) done_cv_.wait
  std::mutex mu_;                 // only for the two condition variables
  std::condition_variable work_cv_;
  std::condition_variable done_cv_;
};

}  // namespace dlrt
