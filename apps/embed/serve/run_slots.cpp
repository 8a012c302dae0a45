#include "embed/serve/run_slots.h"

#include <algorithm>

namespace dlrt::embed {

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

}  // namespace dlrt::embed
