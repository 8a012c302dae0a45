// ThreadPool: coverage of every index, chunk sizes, the workers taking part,
// nesting, exceptions, concurrent callers, and an idle pool using no CPU.
#include "core/thread_pool.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace dlrt {
namespace {

using namespace std::chrono_literals;

// Runs parallel_for(n, grain) and checks each index ran exactly once and
// every chunk but the last holds at least `grain` items.
void expect_exact_cover(ThreadPool& pool, int64_t n, int64_t grain) {
  std::vector<std::atomic<int>> hits(static_cast<size_t>(std::max<int64_t>(n, 0)));
  std::mutex mu;
  std::vector<std::pair<int64_t, int64_t>> chunks;
  pool.parallel_for(n, grain, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) hits[static_cast<size_t>(i)].fetch_add(1);
    std::lock_guard<std::mutex> lk(mu);
    chunks.emplace_back(b, e);
  });
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_EQ(hits[static_cast<size_t>(i)].load(), 1) << "n=" << n << " i=" << i;
  }
  for (auto [b, e] : chunks) {
    ASSERT_LT(b, e);
    if (e != n) {
      EXPECT_GE(e - b, grain) << "n=" << n << " chunk [" << b << ", " << e << ")";
    }
  }
  if (n <= 0) {
    EXPECT_TRUE(chunks.empty());
  }
}

// Polls `ready` under `mu` until it holds (true) or 10 s pass (false).
template <typename Ready>
bool wait_until(std::mutex& mu, const Ready& ready) {
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  for (;;) {
    {
      std::lock_guard<std::mutex> lk(mu);
      if (ready()) return true;
    }
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::yield();
  }
}

double process_cpu_seconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

TEST(ThreadPool, CoversEveryIndexOnceForManyShapes) {
  for (int threads : {1, 2, 3, 5}) {
    for (int spin : {0, 50}) {
      ThreadPool pool(threads, spin);
      EXPECT_EQ(pool.num_threads(), threads);
      EXPECT_EQ(pool.spin_us(), spin);
      for (int64_t n : {-3, 0, 1, 2, 7, 64, 1000, 100003})
        for (int64_t grain : {0, 1, 3, 64, 5000}) expect_exact_cover(pool, n, grain);
    }
  }
}

// A range of a few grains splits into equal parts, one per thread: 3 grains
// on 2 threads as 2 halves (not 2 grains against 1), 9 on 4 threads as 8.
TEST(ThreadPool, FewGrainsSplitEvenlyOverTheThreads) {
  struct Case {
    int threads;
    int64_t n, grain, chunks;
  };
  for (const Case& c : {Case{2, 49152, 16384, 2}, Case{2, 5 * 1000, 1000, 4}, Case{4, 9 * 100, 100, 8},
                        Case{2, 16384 * 40 + 7, 16384, 16}}) {
    ThreadPool pool(c.threads);
    std::mutex mu;
    std::vector<int64_t> sizes;
    pool.parallel_for(c.n, c.grain, [&](int64_t b, int64_t e) {
      std::lock_guard<std::mutex> lk(mu);
      sizes.push_back(e - b);
    });
    ASSERT_EQ(static_cast<int64_t>(sizes.size()), c.chunks) << c.n << " on " << c.threads;
    const auto [lo, hi] = std::minmax_element(sizes.begin(), sizes.end());
    EXPECT_GE(*lo, c.grain) << c.n << " on " << c.threads;
    EXPECT_LT(*hi - *lo, c.grain / 10) << c.n << " on " << c.threads;
  }
}

TEST(ThreadPool, OneChunkRunsInlineOnTheCaller) {
  ThreadPool pool(2);
  const auto me = std::this_thread::get_id();
  std::thread::id ran;
  int calls = 0;
  pool.parallel_for(100, 100, [&](int64_t b, int64_t e) {
    ran = std::this_thread::get_id();
    ++calls;
    EXPECT_EQ(b, 0);
    EXPECT_EQ(e, 100);
  });
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(ran, me);
}

// Each chunk blocks until a second thread has entered a chunk too: passes only
// if a worker really takes part (a pool that ran everything on the caller
// would time out here).
TEST(ThreadPool, WorkersAndCallerRunChunksTogether) {
  for (int spin : {0, 100}) {
    ThreadPool pool(2, spin);
    std::this_thread::sleep_for(std::chrono::microseconds(spin) + 5ms);  // the worker is asleep, not spinning
    std::mutex mu;
    std::set<std::thread::id> ids;
    std::atomic<bool> timed_out{false};
    pool.parallel_for(2, 1, [&](int64_t, int64_t) {
      {
        std::lock_guard<std::mutex> lk(mu);
        ids.insert(std::this_thread::get_id());
      }
      if (!wait_until(mu, [&] { return ids.size() >= 2; })) timed_out = true;
    });
    EXPECT_FALSE(timed_out) << "spin " << spin;
    EXPECT_EQ(ids.size(), 2u);
    EXPECT_TRUE(ids.count(std::this_thread::get_id())) << "the caller runs chunks too";
  }
}

// Chunks are dealt in contiguous runs, one per thread: each thread's first
// chunk is the start of its own run. Every chunk waits until all three
// threads have entered one, so no thread can finish its first chunk and
// take chunks from another's run before that thread has started.
TEST(ThreadPool, EachThreadStartsOnItsOwnRunOfChunks) {
  ThreadPool pool(3, 100);
  std::mutex mu;
  std::vector<std::pair<std::thread::id, int64_t>> first;  // per thread: its first chunk's start
  std::atomic<bool> timed_out{false};
  pool.parallel_for(12, 1, [&](int64_t b, int64_t) {
    {
      std::lock_guard<std::mutex> lk(mu);
      const auto me = std::this_thread::get_id();
      if (std::none_of(first.begin(), first.end(), [&](const auto& f) { return f.first == me; }))
        first.emplace_back(me, b);
    }
    if (!wait_until(mu, [&] { return first.size() >= 3; })) timed_out = true;
  });
  ASSERT_FALSE(timed_out);
  ASSERT_EQ(first.size(), 3u);
  std::set<int64_t> worker_starts;
  for (const auto& [id, b] : first) {
    if (id == std::this_thread::get_id()) EXPECT_EQ(b, 0) << "the caller starts on the first run";
    else worker_starts.insert(b);
  }
  EXPECT_EQ(worker_starts, (std::set<int64_t>{4, 8}));
}

TEST(ThreadPool, NestedCallsRunInlineAndComplete) {
  ThreadPool pool(3);
  std::atomic<int64_t> sum{0};
  pool.parallel_for(16, 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      pool.parallel_for(100, 1, [&](int64_t ib, int64_t ie) {
        for (int64_t j = ib; j < ie; ++j) sum.fetch_add(i * 100 + j);
      });
    }
  });
  // sum over i<16, j<100 of (100 i + j)
  EXPECT_EQ(sum.load(), 100 * 100 * (15 * 16 / 2) + 16 * (99 * 100 / 2));
}

TEST(ThreadPool, FirstExceptionReachesTheCallerAndThePoolStaysUsable) {
  ThreadPool pool(2, 20);
  for (int round = 0; round < 50; ++round) {
    const int64_t bad = round % 8;
    std::atomic<int> ran{0};
    try {
      pool.parallel_for(8, 1, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) {
          ran.fetch_add(1);
          if (i == bad) throw std::runtime_error("chunk " + std::to_string(i) + " failed");
        }
      });
      FAIL() << "no exception in round " << round;
    } catch (const std::runtime_error& e) {
      EXPECT_EQ(std::string(e.what()), "chunk " + std::to_string(bad) + " failed");
    }
    EXPECT_GE(ran.load(), 1);
    EXPECT_LE(ran.load(), 8);
    expect_exact_cover(pool, 1000, 1);
  }
}

TEST(ThreadPool, ManyConcurrentCallersLoseNoWork) {
  for (int spin : {0, 100}) {
    ThreadPool pool(3, spin);
    constexpr int kCallers = 12, kRounds = 300;  // more callers than the pool has job slots (8)
    std::vector<int64_t> totals(kCallers, 0);
    std::vector<std::thread> callers;
    for (int c = 0; c < kCallers; ++c) {
      callers.emplace_back([&, c] {
        for (int r = 0; r < kRounds; ++r) {
          const int64_t n = 1 + (r * 37 + c * 11) % 500;
          std::atomic<int64_t> sum{0};
          pool.parallel_for(n, 1 + r % 4, [&](int64_t b, int64_t e) {
            int64_t s = 0;
            for (int64_t i = b; i < e; ++i) s += i + 1;
            sum.fetch_add(s);
          });
          if (sum.load() == n * (n + 1) / 2) totals[static_cast<size_t>(c)] += 1;
        }
      });
    }
    for (auto& t : callers) t.join();
    for (int c = 0; c < kCallers; ++c) EXPECT_EQ(totals[static_cast<size_t>(c)], kRounds) << "caller " << c;
  }
}

// Workers spin at most spin_us after work, then sleep: over a 200 ms idle
// stretch the process uses far less CPU than one busy-looping worker would
// (about 200 ms per worker).
TEST(ThreadPool, IdlePoolUsesNoCpu) {
  ThreadPool pool(3, 2000);  // a long spin, still bounded
  std::atomic<int64_t> sum{0};
  for (int r = 0; r < 20; ++r) pool.parallel_for(1000, 1, [&](int64_t b, int64_t e) { sum.fetch_add(e - b); });
  ASSERT_EQ(sum.load(), 20 * 1000);
  std::this_thread::sleep_for(20ms);  // past the spin
  const double before = process_cpu_seconds();
  std::this_thread::sleep_for(200ms);
  const double used = process_cpu_seconds() - before;
  EXPECT_LT(used, 0.02) << "CPU seconds used by an idle pool over 200 ms";
  expect_exact_cover(pool, 1000, 1);  // and it still wakes up
}

TEST(ThreadPool, SpinDefaultComesFromTheEnvironment) {
  const char* old = std::getenv("DLRT_SPIN_US");
  const std::string saved = old ? old : "";
  setenv("DLRT_SPIN_US", "250", 1);
  EXPECT_EQ(ThreadPool::default_spin_us(), 250);
  EXPECT_EQ(ThreadPool(2).spin_us(), 250);
  EXPECT_EQ(ThreadPool(2, 7).spin_us(), 7);
  setenv("DLRT_SPIN_US", "0", 1);
  EXPECT_EQ(ThreadPool::default_spin_us(), 0);
  for (const char* bad : {"abc", "-5", "12x", "100001"}) {
    setenv("DLRT_SPIN_US", bad, 1);
    EXPECT_EQ(ThreadPool::default_spin_us(), 100) << bad;
  }
  unsetenv("DLRT_SPIN_US");
  EXPECT_EQ(ThreadPool::default_spin_us(), 100);
  if (old) setenv("DLRT_SPIN_US", saved.c_str(), 1);
}

}  // namespace
}  // namespace dlrt

namespace dlrt {
namespace {

TEST(ThreadPool, BalancedGrainGivesEachThreadEqualChunks) {
  ThreadPool one(1), two(2);
  EXPECT_EQ(one.balanced_grain(49152, 16384), 16384) << "one thread: the grain as asked";
  struct Case {
    int64_t n, grain, want;
  } cases[] = {
      {49152, 16384, 12288},  // 3 chunks -> 4 of 12288, 2 per thread
      {128, 10, 8},           // 13 chunks (70/58 rows) -> 16 of 8
      {128, 85, 64},          // 2 uneven chunks -> 2 of 64
      {100, 1000, 50},        // under one grain: halves
      {7, 1, 1},
  };
  for (const auto& c : cases) {
    const int64_t g = two.balanced_grain(c.n, c.grain);
    EXPECT_EQ(g, c.want) << "n " << c.n << ", grain " << c.grain;
    EXPECT_LE(g, c.grain);
    EXPECT_GE(g, 1);
  }
  // A share with no divisor near the grain (67 rows per thread): rounded, never above the grain.
  const int64_t g = two.balanced_grain(134, 10);
  EXPECT_LE(g, 10);
  EXPECT_GE(g, 9);
}

}  // namespace
}  // namespace dlrt
