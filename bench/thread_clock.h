// The clock of the bench programs that time a run by the calling thread's CPU
// time (isa_share, precision_ab: at 1 thread a run executes on the calling
// thread), so that time other processes take from the core does not count and
// the figures hold on a loaded machine; and the median of such samples.
#pragma once

#include <time.h>

#include <algorithm>
#include <vector>

// Internal linkage, as each program's own copies had: the compiler inlines and
// specialises them as before. Maybe unused: isa_share's aarch64 build only
// says it measures x86 widths.
namespace bench {
namespace {

// The calling thread's CPU time, in milliseconds.
[[maybe_unused]] double thread_cpu_ms() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) * 1e-6;
}

// The middle sample (the upper middle of an even count); 0 without samples.
[[maybe_unused]] double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace
}  // namespace bench
