#include "core/thread_pool.h"

#include <algorithm>

namespace dlrt {

namespace {
thread_local bool t_in_pool = false;
}

struct ThreadPool::Job {
  const std::function<void(int64_t, int64_t)>* fn = nullptr;
  int64_t n = 0;
  int64_t chunk = 1;
  int64_t chunks = 0;
  std::atomic<int64_t> next{0};
  std::atomic<int64_t> done{0};
  std::mutex mu;
  std::condition_variable cv;

  // Runs chunks until none are left; returns true if this call finished the last one.
  void run_chunks() {
    for (;;) {
      int64_t c = next.fetch_add(1);
      if (c >= chunks) return;
      int64_t b = c * chunk;
      int64_t e = std::min(n, b + chunk);
      (*fn)(b, e);
      if (done.fetch_add(1) + 1 == chunks) {
        std::lock_guard<std::mutex> lk(mu);
        cv.notify_all();
      }
    }
  }
};

int ThreadPool::hardware_threads() {
  unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

ThreadPool::ThreadPool(int threads) {
  if (threads <= 0) threads = hardware_threads();
  for (int i = 1; i < threads; ++i) workers_.emplace_back([this] { worker_loop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::worker_loop() {
  t_in_pool = true;
  for (;;) {
    std::shared_ptr<Job> job;
    {
      std::unique_lock<std::mutex> lk(mu_);
      cv_.wait(lk, [&] { return stop_ || !queue_.empty(); });
      if (stop_ && queue_.empty()) return;
      job = queue_.front();
      // Leave the job queued while chunks remain so other workers join it.
      if (job->next.load() >= job->chunks) {
        queue_.pop_front();
        continue;
      }
    }
    job->run_chunks();
    std::lock_guard<std::mutex> lk(mu_);
    if (!queue_.empty() && queue_.front() == job) queue_.pop_front();
  }
}

void ThreadPool::parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  grain = std::max<int64_t>(grain, 1);
  int64_t max_chunks = (n + grain - 1) / grain;
  int64_t want = std::min<int64_t>(max_chunks, static_cast<int64_t>(num_threads()) * 4);
  if (workers_.empty() || want <= 1 || t_in_pool) {
    fn(0, n);
    return;
  }
  auto job = std::make_shared<Job>();
  job->fn = &fn;
  job->n = n;
  job->chunk = (n + want - 1) / want;
  job->chunks = (n + job->chunk - 1) / job->chunk;
  {
    std::lock_guard<std::mutex> lk(mu_);
    queue_.push_back(job);
  }
  cv_.notify_all();
  bool was_in_pool = t_in_pool;
  t_in_pool = true;  // nested calls from our own chunks run inline
  job->run_chunks();
  t_in_pool = was_in_pool;
  std::unique_lock<std::mutex> lk(job->mu);
  job->cv.wait(lk, [&] { return job->done.load() == job->chunks; });
}

}  // namespace dlrt
