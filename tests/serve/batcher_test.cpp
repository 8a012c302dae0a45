// Dynamic batching (apps/embed/serve/batcher.h) over the fake model: batch limits,
// waiting for a batch to fill, parallel workers, back-pressure, errors, stop.
#include "embed/serve/batcher.h"

#include <gtest/gtest.h>

#include <numeric>

#include "fake_model.h"

namespace dlrt::embed {
namespace {

using testing::FakeModel;

Encoding enc(size_t len) {
  Encoding e;
  e.ids.assign(len, 7);
  e.type_ids.assign(len, 0);
  e.attention_mask.assign(len, 1);
  return e;
}

std::vector<Encoding> encs(size_t n, size_t len) {
  std::vector<Encoding> v;
  for (size_t i = 0; i < n; ++i) v.push_back(enc(len));
  return v;
}

BatchFn fn_of(const FakeModel& m) {
  return [&m](const std::vector<Encoding>& b, const dlrt::RunOptions& bounds) { return m.embed_encoded(b, bounds); };
}

// The batches a Batcher reports to its observer.
struct SeenBatches {
  std::mutex mu;
  std::vector<BatchInfo> seen;
  BatchObserver observer() {
    return [this](const BatchInfo& i) {
      std::lock_guard<std::mutex> lk(mu);
      seen.push_back(i);
    };
  }
};

TEST(Batcher, SplitsByMaxBatchSizeAndKeepsInputOrder) {
  FakeModel m;
  m.close_gate();  // queue everything before the first batch is taken
  BatcherOptions o;
  o.max_batch_size = 4;
  o.workers = 1;
  o.max_wait = std::chrono::milliseconds(0);
  Batcher b(fn_of(m), o);
  std::vector<Encoding> in;
  for (size_t i = 0; i < 10; ++i) in.push_back(enc(2 + i % 3));
  auto fut = b.submit(in);
  ASSERT_TRUE(fut.ok()) << fut.status().to_string();
  m.open_gate();
  const auto& r = fut->get();
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  ASSERT_EQ(r->vectors.size(), 10u);
  for (size_t i = 0; i < 10; ++i) EXPECT_EQ(r->vectors[i][0], static_cast<float>(2 + i % 3)) << i;
  EXPECT_EQ(r->tokens, 2u + 3 + 4 + 2 + 3 + 4 + 2 + 3 + 4 + 2);
  EXPECT_EQ(m.batch_sizes(), (std::vector<size_t>{4, 4, 2}));
}

// A sparse model's batcher carries its vectors sparse, each to its input's place.
TEST(Batcher, SparseVectorsStaySparse) {
  BatcherOptions o;
  o.max_batch_size = 2;
  o.workers = 1;
  SparseBatchFn fn = [](const std::vector<Encoding>& batch, const dlrt::RunOptions&) -> Result<SparseResult> {
    SparseResult r;
    for (const Encoding& e : batch) r.vectors.push_back({{static_cast<int64_t>(e.ids.size()), 30000}, {1.f, 2.f}});
    return r;
  };
  Batcher b(fn, o);
  auto fut = b.submit({enc(3), enc(5), enc(4)});
  ASSERT_TRUE(fut.ok()) << fut.status().to_string();
  const auto& r = fut->get();
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_TRUE(r->vectors.empty());
  ASSERT_EQ(r->sparse.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(r->sparse[i].indices, (std::vector<int64_t>{static_cast<int64_t>(i == 0 ? 3 : i == 1 ? 5 : 4), 30000}));
    EXPECT_EQ(r->sparse[i].values, (std::vector<float>{1.f, 2.f}));
  }
  EXPECT_EQ(r->tokens, 12u);
}

TEST(Batcher, SplitsByPaddedTokens) {
  FakeModel m;
  BatcherOptions o;
  o.max_batch_size = 100;
  o.max_batch_tokens = 20;  // 2 inputs of 8 tokens (16), not 3 (24)
  o.workers = 1;
  Batcher b(fn_of(m), o);
  auto fut = b.submit(encs(5, 8));
  ASSERT_TRUE(fut.ok());
  ASSERT_TRUE(fut->get().ok());
  EXPECT_EQ(m.batch_sizes(), (std::vector<size_t>{2, 2, 1}));
}

TEST(Batcher, OversizedInputRunsAlone) {
  FakeModel m;
  BatcherOptions o;
  o.max_batch_tokens = 10;
  o.workers = 1;
  Batcher b(fn_of(m), o);
  auto fut = b.submit(encs(2, 30));
  ASSERT_TRUE(fut.ok());
  ASSERT_TRUE(fut->get().ok());
  EXPECT_EQ(m.batch_sizes(), (std::vector<size_t>{1, 1}));
}

TEST(Batcher, WaitsUpToMaxWaitForTheBatchToFill) {
  FakeModel m;
  BatcherOptions o;
  o.max_batch_size = 8;
  o.max_wait = std::chrono::milliseconds(400);
  o.workers = 1;
  Batcher b(fn_of(m), o);
  auto t0 = std::chrono::steady_clock::now();
  auto f1 = b.submit(encs(1, 3));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  auto f2 = b.submit(encs(2, 3));
  ASSERT_TRUE(f1.ok() && f2.ok());
  ASSERT_TRUE(f1->get().ok());
  ASSERT_TRUE(f2->get().ok());
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(m.batch_sizes(), (std::vector<size_t>{3}));  // one batch of both requests
  EXPECT_GE(ms, 350);  // it waited for more
  EXPECT_EQ(f1->get()->vectors[0][2], 3.f);  // the fake records the batch size
}

TEST(Batcher, FullBatchDoesNotWait) {
  FakeModel m;
  BatcherOptions o;
  o.max_batch_size = 4;
  o.max_wait = std::chrono::seconds(30);
  o.workers = 1;
  Batcher b(fn_of(m), o);
  auto t0 = std::chrono::steady_clock::now();
  auto f = b.submit(encs(4, 3));
  ASSERT_TRUE(f.ok());
  ASSERT_TRUE(f->get().ok());
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
}

TEST(Batcher, WorkersRunBatchesInParallel) {
  FakeModel m;
  m.close_gate();
  BatcherOptions o;
  o.max_batch_size = 1;
  o.max_wait = std::chrono::milliseconds(0);
  o.workers = 3;
  Batcher b(fn_of(m), o);
  auto f = b.submit(encs(3, 3));
  ASSERT_TRUE(f.ok());
  EXPECT_TRUE(m.wait_batches(3)) << "three batches should be running at once";
  EXPECT_EQ(b.batches_running(), 3u);
  m.open_gate();
  ASSERT_TRUE(f->get().ok());
  EXPECT_EQ(m.max_running(), 3);
}

TEST(Batcher, FullQueueRejectsWithOutOfRange) {
  FakeModel m;
  m.close_gate();
  BatcherOptions o;
  o.max_batch_size = 1;
  o.max_queue = 3;
  o.workers = 1;
  o.max_wait = std::chrono::milliseconds(0);
  Batcher b(fn_of(m), o);
  auto running = b.submit(encs(1, 3));
  ASSERT_TRUE(running.ok());
  ASSERT_TRUE(m.wait_batches(1));  // taken off the queue, blocked in the model
  auto queued = b.submit(encs(3, 3));
  ASSERT_TRUE(queued.ok());
  EXPECT_EQ(b.queue_depth(), 3u);
  auto rejected = b.submit(encs(1, 3));
  ASSERT_FALSE(rejected.ok());
  EXPECT_EQ(rejected.status().code(), StatusCode::kOutOfRange);
  EXPECT_NE(rejected.status().message().find("queue is full"), std::string::npos);
  m.open_gate();
  EXPECT_TRUE(running->get().ok());
  EXPECT_TRUE(queued->get().ok());
  auto later = b.submit(encs(1, 3));  // room again
  ASSERT_TRUE(later.ok());
  EXPECT_TRUE(later->get().ok());
}

TEST(Batcher, ModelErrorReachesEveryRequestOfTheBatch) {
  FakeModel m;
  m.fail_code = StatusCode::kBackendError;
  m.close_gate();
  BatcherOptions o;
  o.workers = 1;
  o.max_wait = std::chrono::milliseconds(100);
  SeenBatches batches;
  Batcher b(fn_of(m), o, batches.observer());
  auto f1 = b.submit(encs(1, 3));
  auto f2 = b.submit(encs(2, 3));
  ASSERT_TRUE(f1.ok() && f2.ok());
  m.open_gate();
  EXPECT_EQ(f1->get().status().code(), StatusCode::kBackendError);
  EXPECT_EQ(f2->get().status().code(), StatusCode::kBackendError);
  std::lock_guard<std::mutex> lk(batches.mu);
  ASSERT_FALSE(batches.seen.empty());
  EXPECT_FALSE(batches.seen[0].status.ok());
  EXPECT_EQ(batches.seen[0].report, nullptr);
}

TEST(Batcher, StopRunsWhatIsQueuedThenRefuses) {
  FakeModel m;
  m.delay_ms = 20;
  BatcherOptions o;
  o.max_batch_size = 1;
  o.workers = 1;
  Batcher b(fn_of(m), o);
  auto f = b.submit(encs(5, 3));
  ASSERT_TRUE(f.ok());
  b.stop();
  ASSERT_TRUE(f->get().ok());
  EXPECT_EQ(m.batch_sizes().size(), 5u);
  auto after = b.submit(encs(1, 3));
  ASSERT_FALSE(after.ok());
  EXPECT_NE(after.status().message().find("shutting down"), std::string::npos);
}

// Issue 41: a request's deadline bounds its model run (RunOptions), so a
// run nobody waits for stops and its worker serves the next batch.
TEST(Batcher, DeadlineStopsTheRunAndTheWorkerIsFreeAgain) {
  FakeModel m;
  m.delay_ms = 60000;  // would hold the only worker for a minute
  BatcherOptions o;
  o.workers = 1;
  o.max_wait = std::chrono::milliseconds(0);
  SeenBatches batches;
  Batcher b(fn_of(m), o, batches.observer());
  const auto t0 = std::chrono::steady_clock::now();
  auto slow = b.submit(encs(2, 3), t0 + std::chrono::milliseconds(200));
  ASSERT_TRUE(slow.ok());
  const auto& r = slow->get();
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kCancelled) << r.status().to_string();
  EXPECT_LT(ms, 5000) << "the run was not stopped at the deadline";
  ASSERT_EQ(m.timeouts_ms().size(), 1u);
  EXPECT_GT(m.timeouts_ms()[0], 0);
  EXPECT_LE(m.timeouts_ms()[0], 200);
  m.delay_ms = 0;
  auto next = b.submit(encs(1, 3));  // no deadline: runs without a timeout
  ASSERT_TRUE(next.ok());
  ASSERT_TRUE(next->get().ok());
  EXPECT_EQ(m.timeouts_ms().back(), 0);
  std::lock_guard<std::mutex> lk(batches.mu);
  ASSERT_EQ(batches.seen.size(), 2u);
  EXPECT_EQ(batches.seen[0].status.code(), StatusCode::kCancelled);
  EXPECT_TRUE(batches.seen[1].status.ok());
}

TEST(Batcher, InputsQueuedPastTheirDeadlineAreAnsweredNotRun) {
  FakeModel m;
  m.close_gate();
  BatcherOptions o;
  o.workers = 1;
  o.max_wait = std::chrono::milliseconds(0);
  Batcher b(fn_of(m), o);
  auto running = b.submit(encs(1, 3));  // holds the worker at the gate
  ASSERT_TRUE(running.ok());
  ASSERT_TRUE(m.wait_batches(1));
  auto expired = b.submit(encs(3, 3), std::chrono::steady_clock::now() + std::chrono::milliseconds(20));
  auto waiting = b.submit(encs(1, 4), std::chrono::steady_clock::now() + std::chrono::seconds(60));
  ASSERT_TRUE(expired.ok() && waiting.ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  m.open_gate();
  EXPECT_TRUE(running->get().ok());
  EXPECT_EQ(expired->get().status().code(), StatusCode::kCancelled);
  EXPECT_NE(expired->get().status().message().find("queued"), std::string::npos);
  ASSERT_TRUE(waiting->get().ok()) << waiting->get().status().to_string();
  EXPECT_EQ(m.batch_sizes(), (std::vector<size_t>{1, 1}));  // the expired inputs never ran
  EXPECT_EQ(b.queue_depth(), 0u);
}

TEST(Batcher, EmptyRequestIsInvalid) {
  FakeModel m;
  Batcher b(fn_of(m), {});
  auto f = b.submit({});
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().code(), StatusCode::kInvalidArgument);
}

TEST(Batcher, ManyConcurrentRequestsAllComplete) {
  FakeModel m;
  BatcherOptions o;
  o.max_batch_size = 16;
  o.workers = 2;
  o.max_wait = std::chrono::milliseconds(1);
  Batcher b(fn_of(m), o);
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int t = 0; t < 16; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        auto f = b.submit(encs(1 + (t + i) % 3, 2 + i % 5));
        if (f.ok() && f->get().ok() && f->get()->vectors.size() == static_cast<size_t>(1 + (t + i) % 3)) ++ok;
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), 16 * 50);
  auto sizes = m.batch_sizes();
  size_t total = std::accumulate(sizes.begin(), sizes.end(), size_t{0});
  size_t expect = 0;
  for (int t = 0; t < 16; ++t)
    for (int i = 0; i < 50; ++i) expect += 1 + (t + i) % 3;
  EXPECT_EQ(total, expect);
  for (size_t s : sizes) EXPECT_LE(s, 16u);
}

}  // namespace
}  // namespace dlrt::embed
