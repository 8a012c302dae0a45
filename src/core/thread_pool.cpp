#include "core/thread_pool.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <exception>
#include <string>

#include "core/env.h"
#include "core/fp_mode.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>  // _mm_pause
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

// Polls `done()` until it holds (true) or `us` microseconds pass (false):
// with the pause hint for the first few microseconds, then yielding the core
// between polls, so that on an oversubscribed machine a spinning thread lets
// the thread it waits for (or any other) run on its core. The clock is read
// every 64 pauses or 4 yields.
template <typename Done>
bool spin_until(int us, const Done& done) {
  if (us <= 0) return done();
  const auto start = Clock::now();
  const auto yield_after = start + std::chrono::microseconds(std::min(us / 4, 10));
  const auto deadline = start + std::chrono::microseconds(us);
  bool yielding = false;
  for (;;) {
    for (int i = 0, polls = yielding ? 4 : 64; i < polls; ++i) {
      if (done()) return true;
      if (yielding) std::this_thread::yield();
      else cpu_relax();
    }
    const auto now = Clock::now();
    if (now >= deadline) return done();
    yielding = now >= yield_after;
  }
}

}  // namespace

struct ThreadPool::Job {
  static constexpr int kMaxParts = 16;

  Job(FunctionRef<void(int64_t, int64_t)> f, int64_t n_, int64_t chunk_, int64_t chunks_, int parts_)
      : fn(f), n(n_), chunk(chunk_), chunks(chunks_), parts(std::clamp(parts_, 1, kMaxParts)),
        fp(fp_control()) {
    for (int t = 0; t < parts; ++t) {
      cursor[t].next.store(chunks * t / parts, std::memory_order_relaxed);
      cursor[t].end = chunks * (t + 1) / parts;
    }
  }

  FunctionRef<void(int64_t, int64_t)> fn;
  const int64_t n;
  const int64_t chunk;
  const int64_t chunks;
  const int parts;
  // The caller's floating-point mode (core/fp_mode.h): workers run its chunks
  // in it, so a range computes the same at any thread count.
  const uint32_t fp;
  // Chunks are dealt in `parts` contiguous runs, one per thread (the caller
  // is thread 0, worker i thread i + 1; threads past kMaxParts share runs):
  // thread t claims from its own run first, so a thread runs the same part
  // of every range, and only then takes what is left of the others' runs.
  // Each cursor has its own cache line: a claim writes it.
  struct alignas(64) Cursor {
    std::atomic<int64_t> next{0};
    int64_t end = 0;
  };
  Cursor cursor[kMaxParts];
  alignas(64) std::atomic<int64_t> done{0};  // chunks finished or skipped, added once per thread
  std::atomic<bool> failed{false};
  std::exception_ptr error;  // written once, by the thread that set `failed`

  bool unclaimed() const {
    for (int t = 0; t < parts; ++t)
      if (cursor[t].next.load(std::memory_order_relaxed) < cursor[t].end) return true;
    return false;
  }

  void run_chunks(int self) {
    int64_t ran = 0;
    for (int k = 0; k < parts; ++k) {
      Cursor& cur = cursor[(self + k) % parts];
      for (;;) {
        const int64_t c = cur.next.fetch_add(1, std::memory_order_relaxed);
        if (c >= cur.end) break;
        if (!failed.load(std::memory_order_relaxed)) {
          const int64_t b = c * chunk;
          try {
            fn(b, std::min(n, b + chunk));
          } catch (...) {
            bool expected = false;
            if (failed.compare_exchange_strong(expected, true)) error = std::current_exception();
          }
        }
        ++ran;
      }
    }
    if (ran) done.fetch_add(ran);  // seq_cst, like the hazards: see job_finished
  }
};

int ThreadPool::hardware_threads() {
  unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

int ThreadPool::default_spin_us() {
  constexpr int kDefault = 100;
  const char* env = env::get("DLRT_SPIN_US");
  if (!env || !*env) return kDefault;
  char* end = nullptr;
  const long v = std::strtol(env, &end, 10);
  if (*end != '\0' || v < 0 || v > 100000) return kDefault;
  return static_cast<int>(v);
}

ThreadPool::ThreadPool(int threads, int spin_us)
    : hazards_(static_cast<size_t>(std::max(threads <= 0 ? hardware_threads() : threads, 1) - 1)),
      spin_us_(spin_us < 0 ? default_spin_us() : spin_us) {
  workers_.reserve(hazards_.size());
  for (size_t i = 0; i < hazards_.size(); ++i) workers_.emplace_back([this, i] { worker_loop(static_cast<int>(i)); });
}

ThreadPool::~ThreadPool() {
  stop_.store(true);
  epoch_.fetch_add(1);
  { std::lock_guard<std::mutex> lk(mu_); }
  work_cv_.notify_all();
  for (auto& t : workers_) t.join();
}

bool ThreadPool::spin_for_work(uint64_t seen) const {
  return spin_until(spin_us_, [&] {
    return epoch_.load(std::memory_order_relaxed) != seen || stop_.load(std::memory_order_relaxed);
  });
}

bool ThreadPool::help(Hazard& hazard, int self) {
  bool ran = false;
  for (bool found = true; found;) {
    found = false;
    for (auto& slot : slots_) {
      Job* job = slot.load();
      if (!job) continue;
      // Announce, then check the job is still published: a caller empties its
      // slot before it scans the hazards, so either it sees ours or we see
      // the slot changed. (If the same address was published again, that is
      // a live job and ours to help.)
      hazard.job.store(job);
      const bool joined = slot.load() == job && job->unclaimed();
      if (joined) {
        const uint32_t own = fp_control();
        if (own != job->fp) set_fp_control(job->fp);
        job->run_chunks(self);
        if (own != job->fp) set_fp_control(own);
      }
      hazard.job.store(nullptr);  // last touch of *job
      // Even a look without joining may have held up a caller's hazard scan.
      if (waiters_.load() > 0) {
        { std::lock_guard<std::mutex> lk(mu_); }
        done_cv_.notify_all();
      }
      if (joined) found = ran = true;
    }
  }
  return ran;
}

void ThreadPool::worker_loop(int index) {
  t_in_pool = true;
  Hazard& hazard = hazards_[static_cast<size_t>(index)];
  for (;;) {
    // Read the epoch before looking: a job published after the look bumps it.
    const uint64_t seen = epoch_.load();
    if (help(hazard, index + 1)) continue;
    if (stop_.load()) return;
    if (spin_for_work(seen)) continue;
    std::unique_lock<std::mutex> lk(mu_);
    sleepers_.fetch_add(1);
    work_cv_.wait(lk, [&] { return stop_.load() || epoch_.load() != seen; });
    sleepers_.fetch_sub(1);
  }
}

// seq_cst loads: paired with a worker's done.fetch_add, hazard clear and
// waiters_ check, a caller that registered in waiters_ and then reads a
// stale `done` is always notified.
bool ThreadPool::job_finished(const Job& job) const {
  if (job.done.load() != job.chunks) return false;
  for (const Hazard& h : hazards_)
    if (h.job.load() == &job) return false;
  return true;
}

void ThreadPool::parallel_for(int64_t n, int64_t grain, FunctionRef<void(int64_t, int64_t)> fn) {
  if (n <= 0) return;
  grain = std::max<int64_t>(grain, 1);
  const int64_t max_chunks = std::max<int64_t>(1, n / grain);  // floor: chunks of at least `grain`
  // About 8 chunks per thread: a worker that starts late (woken, or
  // preempted) leaves little behind.
  const int64_t threads = num_threads();
  int64_t want = std::min<int64_t>(max_chunks, 8 * threads);
  // Few chunks: a multiple of the thread count, so a range of 3 grains runs
  // as 2 halves rather than 2 grains against 1.
  if (want > threads && want < 4 * threads) want -= want % threads;
  if (workers_.empty() || want <= 1 || t_in_pool) {
    fn(0, n);
    return;
  }
  // `want` chunks of n / want rounded up; where that leaves fewer chunks
  // (18 tasks, want 16: 9 chunks of 2, 5 against 4), rounded down (18 of 1).
  // Either is >= grain.
  int64_t chunk = (n + want - 1) / want;
  if ((n + chunk - 1) / chunk < want) chunk = n / want;
  const int64_t chunks = (n + chunk - 1) / chunk;
  Job job(fn, n, chunk, chunks, static_cast<int>(std::min(threads, chunks)));

  std::atomic<Job*>* slot = nullptr;
  for (auto& s : slots_) {
    Job* expected = nullptr;
    if (s.compare_exchange_strong(expected, &job)) {
      slot = &s;
      break;
    }
  }
  if (!slot) {  // kSlots callers already share the workers: this one runs alone
    fn(0, n);
    return;
  }
  epoch_.fetch_add(1);
  // Spinning workers see the epoch; sleeping ones need a notify, one per
  // chunk beyond the caller's first. Taking mu_ orders the notify after a
  // worker's check of the epoch in work_cv_.wait.
  const int64_t wake = std::min<int64_t>(sleepers_.load(), job.chunks - 1);
  if (wake > 0) {
    { std::lock_guard<std::mutex> lk(mu_); }
    for (int64_t i = 0; i < wake; ++i) work_cv_.notify_one();
  }

  t_in_pool = true;  // nested calls from our own chunks run inline
  job.run_chunks(0);
  t_in_pool = false;

  slot->store(nullptr);  // every chunk is claimed: no worker may join now
  if (!spin_until(spin_us_, [&] { return job_finished(job); })) {
    waiters_.fetch_add(1);
    {
      std::unique_lock<std::mutex> lk(mu_);
      done_cv_.wait(lk, [&] { return job_finished(job); });
    }
    waiters_.fetch_sub(1);
  }
  if (job.error) std::rethrow_exception(job.error);
}

}  // namespace dlrt
