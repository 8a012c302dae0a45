#include "core/thread_pool.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <exception>
#include <string>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace dlrt {

namespace {

thread_local bool t_in_pool = false;

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

using Clock = std::chrono::steady_clock;

// Polls `done()` with the pause hint until it holds (true) or `us`
// microseconds pass (false). The clock is read every 64 polls.
template <typename Done>
bool spin_until(int us, const Done& done) {
  if (us <= 0) return done();
  const auto deadline = Clock::now() + std::chrono::microseconds(us);
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      if (done()) return true;
      cpu_relax();
    }
    if (Clock::now() >= deadline) return done();
  }
}

}  // namespace

struct ThreadPool::Job {
  Job(FunctionRef<void(int64_t, int64_t)> f, int64_t n_, int64_t chunk_, int64_t chunks_)
      : fn(f), n(n_), chunk(chunk_), chunks(chunks_) {}

  FunctionRef<void(int64_t, int64_t)> fn;
  const int64_t n;
  const int64_t chunk;
  const int64_t chunks;
  std::atomic<int64_t> next{0};  // next chunk to claim
  std::atomic<int64_t> done{0};  // chunks finished or skipped
  std::atomic<int> active{0};    // workers that joined and have not left (changed under mu_)
  std::atomic<bool> failed{false};
  std::exception_ptr error;     // written once, by the thread that set `failed`
  bool caller_waiting = false;  // the caller sleeps on done_cv_ (under mu_)
  Job* prev = nullptr;          // queue links (under mu_)
  Job* next_job = nullptr;

  bool finished() const {
    return active.load(std::memory_order_acquire) == 0 && done.load(std::memory_order_acquire) == chunks;
  }

  void run_chunks() {
    for (;;) {
      const int64_t c = next.fetch_add(1, std::memory_order_relaxed);
      if (c >= chunks) return;
      if (!failed.load(std::memory_order_relaxed)) {
        const int64_t b = c * chunk;
        try {
          fn(b, std::min(n, b + chunk));
        } catch (...) {
          bool expected = false;
          if (failed.compare_exchange_strong(expected, true)) error = std::current_exception();
        }
      }
      done.fetch_add(1, std::memory_order_release);
    }
  }
};

int ThreadPool::hardware_threads() {
  unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

int ThreadPool::default_spin_us() {
  constexpr int kDefault = 100;
  const char* env = std::getenv("DLRT_SPIN_US");
  if (!env || !*env) return kDefault;
  char* end = nullptr;
  const long v = std::strtol(env, &end, 10);
  if (*end != '\0' || v < 0 || v > 100000) return kDefault;
  return static_cast<int>(v);
}

ThreadPool::ThreadPool(int threads, int spin_us) : spin_us_(spin_us < 0 ? default_spin_us() : spin_us) {
  if (threads <= 0) threads = hardware_threads();
  workers_.reserve(static_cast<size_t>(threads - 1));
  for (int i = 1; i < threads; ++i) workers_.emplace_back([this] { worker_loop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    stop_.store(true);
  }
  work_cv_.notify_all();
  for (auto& t : workers_) t.join();
}

ThreadPool::Job* ThreadPool::claimable_locked() const {
  for (Job* j = head_; j; j = j->next_job)
    if (j->next.load(std::memory_order_relaxed) < j->chunks) return j;
  return nullptr;
}

void ThreadPool::unlink_locked(Job* job) {
  (job->prev ? job->prev->next_job : head_) = job->next_job;
  (job->next_job ? job->next_job->prev : tail_) = job->prev;
  job->prev = job->next_job = nullptr;
}

bool ThreadPool::spin_for_work(uint64_t seen) const {
  return spin_until(spin_us_, [&] {
    return epoch_.load(std::memory_order_relaxed) != seen || stop_.load(std::memory_order_relaxed);
  });
}

void ThreadPool::worker_loop() {
  t_in_pool = true;
  std::unique_lock<std::mutex> lk(mu_);
  for (;;) {
    if (Job* job = claimable_locked()) {
      // Joining under mu_: the caller unlinks its job under mu_ and then waits
      // for `active` to drop, so the job outlives our use of it.
      job->active.fetch_add(1, std::memory_order_relaxed);
      lk.unlock();
      job->run_chunks();
      lk.lock();
      const bool wake = job->caller_waiting;
      job->active.fetch_sub(1, std::memory_order_release);  // last touch of *job
      if (wake) done_cv_.notify_all();
      continue;
    }
    if (stop_.load()) return;
    const uint64_t seen = epoch_.load(std::memory_order_relaxed);
    lk.unlock();
    const bool posted = spin_for_work(seen);
    lk.lock();
    if (posted) continue;
    ++sleepers_;
    work_cv_.wait(lk, [&] { return stop_.load() || epoch_.load(std::memory_order_relaxed) != seen; });
    --sleepers_;
  }
}

void ThreadPool::parallel_for(int64_t n, int64_t grain, FunctionRef<void(int64_t, int64_t)> fn) {
  if (n <= 0) return;
  grain = std::max<int64_t>(grain, 1);
  const int64_t max_chunks = std::max<int64_t>(1, n / grain);  // floor: chunks of at least `grain`
  const int64_t want = std::min<int64_t>(max_chunks, static_cast<int64_t>(num_threads()) * 4);
  if (workers_.empty() || want <= 1 || t_in_pool) {
    fn(0, n);
    return;
  }
  const int64_t chunk = (n + want - 1) / want;
  Job job(fn, n, chunk, (n + chunk - 1) / chunk);

  int wake = 0;
  {
    std::lock_guard<std::mutex> lk(mu_);
    job.prev = tail_;
    (tail_ ? tail_->next_job : head_) = &job;
    tail_ = &job;
    epoch_.fetch_add(1, std::memory_order_relaxed);
    // Spinning workers see the epoch; sleeping ones need a notify, one per
    // chunk beyond the caller's first.
    wake = static_cast<int>(std::min<int64_t>(sleepers_, job.chunks - 1));
  }
  for (int i = 0; i < wake; ++i) work_cv_.notify_one();

  t_in_pool = true;  // nested calls from our own chunks run inline
  job.run_chunks();
  t_in_pool = false;

  {
    std::lock_guard<std::mutex> lk(mu_);
    unlink_locked(&job);  // every chunk is claimed: no worker may join now
  }
  if (!spin_until(spin_us_, [&] { return job.finished(); })) {
    std::unique_lock<std::mutex> lk(mu_);
    job.caller_waiting = true;
    done_cv_.wait(lk, [&] { return job.finished(); });
  }
  if (job.error) std::rethrow_exception(job.error);
}

}  // namespace dlrt
