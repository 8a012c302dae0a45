// ThreadKeptValues: a per-thread list of run values reused across runs (session.cpp).
#pragma once

#include <vector>

#include "runtime/session_values.h"

namespace dlrt {

// A list of values kept per thread from run to run, for its capacity (so a
// steady-state run does not allocate it), or a fresh one when this thread is
// already inside a run. Emptied when released: it holds no tensor between
// runs. One slot per use.
template <int Slot>
class ThreadKeptValues {
 public:
  ThreadKeptValues() : took_(!busy()) {
    if (took_) busy() = true;
  }
  ~ThreadKeptValues() {
    get().clear();
    if (took_) busy() = false;
  }
  ThreadKeptValues(const ThreadKeptValues&) = delete;
  ThreadKeptValues& operator=(const ThreadKeptValues&) = delete;
  std::vector<RunValue>& get() { return took_ ? kept() : local_; }

 private:
  static std::vector<RunValue>& kept() {
    thread_local std::vector<RunValue> v;
    return v;
  }
  static bool& busy() {
    thread_local bool b = false;
    return b;
  }
  bool took_;
  std::vector<RunValue> local_;
};

}  // namespace dlrt
