#include "embed/serve/batcher.h"

#include <algorithm>

namespace dlrt::embed {

using Clock = std::chrono::steady_clock;

RunSlots::RunSlots(int slots) : slots_(std::max(slots, 1)) {}

bool RunSlots::acquire(std::chrono::steady_clock::time_point deadline) {
  std::unique_lock<std::mutex> lk(mu_);
  const uint64_t ticket = next_ticket_++;
  queue_.push_back(ticket);
  auto mine = [&] { return queue_.front() == ticket && in_use_ < slots_; };
  bool got = true;
  if (deadline == std::chrono::steady_clock::time_point{}) cv_.wait(lk, mine);
  else got = cv_.wait_until(lk, deadline, mine);
  if (!got) {
    queue_.erase(std::find(queue_.begin(), queue_.end(), ticket));
    lk.unlock();
    cv_.notify_all();  // the next in line may be free to go now
    return false;
  }
  queue_.pop_front();
  ++in_use_;
  const bool more = !queue_.empty() && in_use_ < slots_;
  lk.unlock();
  if (more) cv_.notify_all();
  return true;
}

void RunSlots::release() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    --in_use_;
  }
  cv_.notify_all();
}

int RunSlots::in_use() const {
  std::lock_guard<std::mutex> lk(mu_);
  return in_use_;
}

size_t RunSlots::waiting() const {
  std::lock_guard<std::mutex> lk(mu_);
  return queue_.size();
}

struct Batcher::Request {
  Clock::time_point deadline{};  // epoch: none
  std::mutex mu;
  RequestResult result;
  Status error;
  size_t remaining = 0;
  std::promise<Result<RequestResult>> promise;
};

Batcher::Batcher(BatchFn fn, BatcherOptions options, BatchObserver observer)
    : Batcher(
          [fn = std::move(fn)](const std::vector<Encoding>& batch, const dlrt::RunOptions& bounds) -> Result<Output> {
            DLRT_ASSIGN_OR_RETURN(EmbedResult r, fn(batch, bounds));
            return Output{std::move(r.vectors), {}, std::move(r.report)};
          },
          false, options, std::move(observer)) {}

Batcher::Batcher(SparseBatchFn fn, BatcherOptions options, BatchObserver observer)
    : Batcher(
          [fn = std::move(fn)](const std::vector<Encoding>& batch, const dlrt::RunOptions& bounds) -> Result<Output> {
            DLRT_ASSIGN_OR_RETURN(SparseResult r, fn(batch, bounds));
            return Output{{}, std::move(r.vectors), std::move(r.report)};
          },
          true, options, std::move(observer)) {}

Batcher::Batcher(OutputFn fn, bool sparse, BatcherOptions options, BatchObserver observer)
    : fn_(std::move(fn)), sparse_(sparse), options_(options), observer_(std::move(observer)) {
  options_.max_batch_size = std::max<size_t>(options_.max_batch_size, 1);
  options_.max_batch_tokens = std::max<size_t>(options_.max_batch_tokens, 1);
  options_.max_queue = std::max<size_t>(options_.max_queue, 1);
  int n = std::max(options_.workers, 1);
  for (int i = 0; i < n; ++i) workers_.emplace_back([this] { worker(); });
}

Batcher::~Batcher() { stop(); }

void Batcher::stop() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  for (auto& t : workers_)
    if (t.joinable()) t.join();
  workers_.clear();
}

size_t Batcher::queue_depth() const {
  std::lock_guard<std::mutex> lk(mu_);
  return queue_.size();
}

size_t Batcher::batches_running() const {
  std::lock_guard<std::mutex> lk(mu_);
  return running_;
}

Result<std::shared_future<Result<RequestResult>>> Batcher::submit(std::vector<Encoding> inputs,
                                                                  Clock::time_point deadline) {
  if (inputs.empty()) return InvalidArgument("a request needs at least one input");
  auto req = std::make_shared<Request>();
  req->deadline = deadline;
  req->remaining = inputs.size();
  if (sparse_) req->result.sparse.resize(inputs.size());
  else req->result.vectors.resize(inputs.size());
  for (const auto& e : inputs) req->result.tokens += e.ids.size();
  std::shared_future<Result<RequestResult>> fut = req->promise.get_future().share();
  {
    std::lock_guard<std::mutex> lk(mu_);
    if (stopping_) return RuntimeError("the server is shutting down");
    if (queue_.size() + inputs.size() > options_.max_queue)
      return OutOfRange("the queue is full (" + std::to_string(queue_.size()) + " of " +
                        std::to_string(options_.max_queue) + " inputs waiting)");
    auto now = Clock::now();
    for (size_t i = 0; i < inputs.size(); ++i) queue_.push_back(Item{req, i, std::move(inputs[i]), now});
  }
  cv_.notify_all();
  return fut;
}

size_t Batcher::batch_len_locked(bool* full) const {
  size_t n = 0, longest = 0;
  *full = false;
  for (const auto& item : queue_) {
    size_t len = std::max(longest, item.encoding.ids.size());
    if (n > 0 && (n + 1) * len > options_.max_batch_tokens) {
      *full = true;
      break;
    }
    longest = len;
    if (++n == options_.max_batch_size) {
      *full = true;
      break;
    }
  }
  return n;
}

std::vector<Batcher::Item> Batcher::take_expired_locked(Clock::time_point now) {
  std::vector<Item> expired;
  for (auto it = queue_.begin(); it != queue_.end();) {
    const Clock::time_point d = it->request->deadline;
    if (d != Clock::time_point{} && now >= d) {
      expired.push_back(std::move(*it));
      it = queue_.erase(it);
    } else {
      ++it;
    }
  }
  return expired;
}

void Batcher::worker() {
  std::unique_lock<std::mutex> lk(mu_);
  for (;;) {
    cv_.wait(lk, [&] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, nothing left
    // Inputs whose request gave up while queued are answered, not run.
    if (std::vector<Item> expired = take_expired_locked(Clock::now()); !expired.empty()) {
      lk.unlock();
      Result<Output> cancelled = Status(StatusCode::kCancelled, "the request's deadline passed while it was queued");
      complete(expired, cancelled);
      lk.lock();
      continue;
    }
    // Let the batch fill up until it is full or its oldest input has waited max_wait.
    auto deadline = queue_.front().enqueued + options_.max_wait;
    bool full = false;
    while (!queue_.empty() && (batch_len_locked(&full), !full) && !stopping_ && Clock::now() < deadline)
      cv_.wait_until(lk, deadline);
    if (queue_.empty()) continue;  // another worker took them
    size_t n = batch_len_locked(&full);
    std::vector<Item> items;
    items.reserve(n);
    for (size_t i = 0; i < n; ++i) {
      items.push_back(std::move(queue_.front()));
      queue_.pop_front();
    }
    ++running_;
    bool more = !queue_.empty();
    lk.unlock();
    if (more) cv_.notify_all();  // the rest is another worker's batch

    std::vector<Encoding> batch;
    batch.reserve(items.size());
    size_t longest = 0, tokens = 0;
    // The run may last until the latest deadline of its requests (none when
    // one of them has none): past it nobody waits for the answer.
    Clock::time_point latest{};
    bool bounded = true;
    for (auto& it : items) {
      longest = std::max(longest, it.encoding.ids.size());
      tokens += it.encoding.ids.size();
      batch.push_back(std::move(it.encoding));
      bounded = bounded && it.request->deadline != Clock::time_point{};
      latest = std::max(latest, it.request->deadline);
    }
    // The run waits for a slot shared with the other models' batchers (at most
    // until its deadline: past it nobody waits for the answer).
    RunSlot slot(options_.slots.get(), bounded ? latest : Clock::time_point{});
    if (!slot.held()) {
      Result<Output> cancelled =
          Status(StatusCode::kCancelled, "the request's deadline passed while its batch waited for a free worker");
      complete(items, cancelled);
      lk.lock();
      --running_;
      continue;
    }
    auto t0 = Clock::now();
    dlrt::RunOptions bounds;
    if (bounded) bounds.timeout_ms = std::max(std::chrono::duration<double, std::milli>(latest - t0).count(), 1.0);
    Result<Output> result = fn_(batch, bounds);
    slot.release();
    const size_t returned = !result.ok() ? 0 : sparse_ ? result->sparse.size() : result->dense.size();
    if (result.ok() && returned != batch.size())
      result = Internal("the model returned " + std::to_string(returned) + " vectors for " +
                        std::to_string(batch.size()) + " inputs");
    double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    if (observer_) {
      BatchInfo info{batch.size(), batch.size() * longest, tokens, seconds, result.status(),
                     result.ok() ? &result->report : nullptr};
      observer_(info);
    }
    complete(items, result);
    lk.lock();
    --running_;
  }
}

void Batcher::complete(std::vector<Item>& items, Result<Output>& result) {
  for (size_t i = 0; i < items.size(); ++i) {
    Request& r = *items[i].request;
    bool done;
    {
      std::lock_guard<std::mutex> lk(r.mu);
      if (result.ok()) {
        if (sparse_) r.result.sparse[items[i].index] = std::move(result->sparse[i]);
        else r.result.vectors[items[i].index] = std::move(result->dense[i]);
        r.result.report = result->report;
      } else if (r.error.ok()) {
        r.error = result.status();
      }
      done = --r.remaining == 0;
    }
    if (done) {
      if (r.error.ok()) r.promise.set_value(std::move(r.result));
      else r.promise.set_value(r.error);
    }
  }
}

}  // namespace dlrt::embed
