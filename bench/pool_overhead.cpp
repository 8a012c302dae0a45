// The cost of one ThreadPool::parallel_for dispatch (issue 5), on 2 threads
// with the workers spinning (spin_us default, $DLRT_SPIN_US) and sleeping
// between sections (spin_us 0), next to the same work on 1 thread. Configurations alternate round by round; prints the
// median per call over the rounds and the ratios.
//
// usage: dlrt_pool_overhead [rounds (default 15)] [calls per round (default 2000;
// a tenth of that for the large bodies)]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/thread_pool.h"

namespace {

using Clock = std::chrono::steady_clock;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

struct Config {
  const char* name;
  int threads;
  int spin_us;
};

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::max(1, std::atoi(argv[1])) : 15;
  const int calls = argc > 2 ? std::max(1, std::atoi(argv[2])) : 2000;
  const int spin = dlrt::ThreadPool::default_spin_us();
  const std::string spin_name = "2 threads, spin " + std::to_string(spin) + " us";
  const Config configs[] = {{"1 thread (inline)", 1, 0}, {"2 threads, spin 0 (sleep)", 2, 0}, {spin_name.c_str(), 2, spin}};
  constexpr int kConfigs = 3;

  // Bodies: empty; y = x * 1.5 + 0.5 over 6144 floats (16 x 384, chunks >=
  // 1024) and over 32768 (the element-wise kernels' parallel threshold, chunks
  // >= 16384); tanh over 16384 floats (chunks >= 1024: tens of us, should take
  // about half the time on 2 threads); and that after 30 us of serial work (a
  // chain of small ops between two parallel sections: sleeping workers must
  // be woken, spinning ones not).
  constexpr int64_t kSmall = 6144, kMid = 32768, kLarge = 16384;
  std::vector<float> x(kMid, 0.25f), y(kMid);
  auto small = [&](int64_t b, int64_t e) {
    for (int64_t j = b; j < e; ++j) y[static_cast<size_t>(j)] = x[static_cast<size_t>(j)] * 1.5f + 0.5f;
  };
  auto large = [&](int64_t b, int64_t e) {
    for (int64_t j = b; j < e; ++j) y[static_cast<size_t>(j)] = std::tanh(x[static_cast<size_t>(j)] + y[static_cast<size_t>(j)] * 1e-3f);
  };
  auto serial = [&](double us) {
    const auto end = Clock::now() + std::chrono::duration<double, std::micro>(us);
    while (Clock::now() < end) {
    }
  };
  constexpr int kCases = 5;
  const char* case_names[kCases] = {"empty", "axpb 6144", "axpb 32768", "tanh 16384", "30us+tanh"};
  std::vector<double> us[kConfigs][kCases];
  std::vector<dlrt::ThreadPool*> pools;
  for (const Config& c : configs) pools.push_back(new dlrt::ThreadPool(c.threads, c.spin_us));
  for (int r = 0; r < rounds; ++r) {
    for (int c = 0; c < kConfigs; ++c) {
      dlrt::ThreadPool& pool = *pools[static_cast<size_t>(c)];
      for (int k = 0; k < kCases; ++k) {
        const int n = k >= 3 ? std::max(1, calls / 10) : calls;
        pool.parallel_for(1024, 1, [](int64_t, int64_t) {});  // wake the workers
        const auto t0 = Clock::now();
        for (int i = 0; i < n; ++i) {
          if (k == 0) pool.parallel_for(1024, 1, [](int64_t, int64_t) {});
          if (k == 1) pool.parallel_for(kSmall, 1024, small);
          if (k == 2) pool.parallel_for(kMid, 16384, small);
          if (k == 3) pool.parallel_for(kLarge, 1024, large);
          if (k == 4) {
            serial(30);
            pool.parallel_for(kLarge, 1024, large);
          }
        }
        us[c][k].push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / n);
      }
    }
  }
  for (auto* p : pools) delete p;

  std::printf("parallel_for, median over %d rounds (us per call; configs alternate):\n", rounds);
  std::printf("  %-28s", "config");
  for (int k = 0; k < kCases; ++k) std::printf(" %13s", case_names[k]);
  std::printf("\n");
  double med[kConfigs][kCases];
  for (int c = 0; c < kConfigs; ++c) {
    std::printf("  %-28s", configs[c].name);
    for (int k = 0; k < kCases; ++k) std::printf(" %13.3f", med[c][k] = median(us[c][k]));
    std::printf("\n");
  }
  std::printf("2 threads / 1 thread (< 1 is faster):\n");
  for (int c = 1; c < kConfigs; ++c) {
    std::printf("  %-28s %13s", configs[c].name, "-");
    for (int k = 1; k < kCases; ++k) std::printf(" %13.2f", med[c][k] / med[0][k]);
    std::printf("\n");
  }
  std::printf("dispatch cost over inline (empty body): spin 0 %.2f us, spin %d us %.2f us\n", med[1][0] - med[0][0],
              spin, med[2][0] - med[0][0]);
  return 0;
}
