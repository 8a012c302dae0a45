// Dynamic batching for the embedding server: requests queue their tokenized
// inputs; a pool of workers takes batches off the queue (up to
// max_batch_size inputs and max_batch_tokens padded tokens, waiting at most
// max_wait for a batch to fill) and runs them in parallel through one
// thread-safe model call, typed by the model's capability: dense vectors
// (BatchFn, DenseOut) or sparse ones (SparseBatchFn, SparseOut; they stay
// sparse from the run to the answer). Each request's future completes when
// all its inputs have run.
//
// Deadlines: a request may carry one (submit()). An input still queued when
// its request's deadline passes is not run (the request fails with
// kCancelled); a batch runs with RunOptions::timeout_ms up to the latest
// deadline among its requests, so a model run nobody waits for any more
// stops (kCancelled, passed to every request of the batch) and frees its
// worker.
//
// Run slots (RunSlots): the model runs a server may have going at once,
// shared by every model it serves (pool_size), its batches and its
// HTTP-thread runs (call.h's in_run_slot): a counting semaphore that hands
// free slots out first come, first served, so a busy model cannot starve
// another one: a worker that finishes a run and wants the next queues behind
// those already waiting.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "dlrt/session.h"
#include "dlrt/status.h"
#include "embed/models/embedder.h"
#include "embed/models/sparse.h"

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


struct BatcherOptions {
  size_t max_batch_size = 32;
  size_t max_batch_tokens = 8192;  // inputs x longest input in the batch
  std::chrono::microseconds max_wait{2000};
  size_t max_queue = 1024;  // inputs waiting
  int workers = 2;
  // Shared by the batchers of every served model: a batch runs once it holds
  // one of these slots (null: no bound beyond `workers`).
  std::shared_ptr<RunSlots> slots;
};

// What one batch did (for metrics and health).
struct BatchInfo {
  size_t inputs = 0;
  size_t padded_tokens = 0;
  size_t tokens = 0;
  double seconds = 0;
  Status status;
  const dlrt::RunReport* report = nullptr;  // null when the run failed
};

// The model call: thread-safe, called by several workers at once; `bounds`
// carries the batch's timeout (pass it to Session::run).
using BatchFn = std::function<Result<EmbedResult>(const std::vector<Encoding>&, const dlrt::RunOptions& bounds)>;
using SparseBatchFn = std::function<Result<SparseResult>(const std::vector<Encoding>&, const dlrt::RunOptions& bounds)>;
using BatchObserver = std::function<void(const BatchInfo&)>;

// One request's answer: vectors in input order (`vectors` from a BatchFn,
// `sparse` from a SparseBatchFn), its own token count, and the report of (one
// of) the batch runs it was part of.
struct RequestResult {
  std::vector<std::vector<float>> vectors;
  std::vector<SparseVector> sparse;
  size_t tokens = 0;
  dlrt::RunReport report;
};

class Batcher {
 public:
  Batcher(BatchFn fn, BatcherOptions options, BatchObserver observer = {});
  Batcher(SparseBatchFn fn, BatcherOptions options, BatchObserver observer = {});
  ~Batcher();  // stop()
  Batcher(const Batcher&) = delete;
  Batcher& operator=(const Batcher&) = delete;

  // Queues one request's inputs. Errors: kOutOfRange when they do not fit in
  // the queue now (answer 429), kRuntimeError once stopped (answer 503),
  // kInvalidArgument for an empty request. `deadline` (default: none): past
  // it the request's inputs are no longer run and its future holds kCancelled.
  Result<std::shared_future<Result<RequestResult>>> submit(
      std::vector<Encoding> inputs, std::chrono::steady_clock::time_point deadline = {});

  // Stops taking requests, runs everything queued, joins the workers.
  void stop();

  size_t queue_depth() const;
  size_t batches_running() const;
  const BatcherOptions& options() const { return options_; }

 private:
  struct Request;
  struct Item {
    std::shared_ptr<Request> request;
    size_t index = 0;
    Encoding encoding;
    std::chrono::steady_clock::time_point enqueued;
  };

  void worker();
  // How many queued items the next batch would take (front first).
  size_t batch_len_locked(bool* full) const;
  // A batch's vectors, dense or sparse (one of them filled).
  struct Output {
    std::vector<std::vector<float>> dense;
    std::vector<SparseVector> sparse;
    dlrt::RunReport report;
  };
  using OutputFn = std::function<Result<Output>(const std::vector<Encoding>&, const dlrt::RunOptions&)>;
  Batcher(OutputFn fn, bool sparse, BatcherOptions options, BatchObserver observer);
  void complete(std::vector<Item>& items, Result<Output>& result);
  // Takes the queued inputs whose request's deadline has passed out of the queue.
  std::vector<Item> take_expired_locked(std::chrono::steady_clock::time_point now);

  OutputFn fn_;
  bool sparse_ = false;
  BatcherOptions options_;
  BatchObserver observer_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Item> queue_;
  bool stopping_ = false;
  size_t running_ = 0;
  std::vector<std::thread> workers_;
};

}  // namespace dlrt::embed
