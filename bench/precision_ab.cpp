// One model at two CPU precisions in one process: runs alternate between the
// two sessions (f32 first on even rounds, the other first on odd ones), so
// that load from other processes falls on both alike. Prints one JSON object:
// the report's precision of each session, per-run medians of wall time and
// of the calling thread's CPU time (at 1 thread the run's own time, without
// the time other processes took the core) and their ratios,
// and the error of the other precision's outputs against f32's (max relative
// error over elements with |f32| >= 1e-3 of the output's largest, max
// absolute error, the largest absolute error over the output's largest
// |f32| value, and the smallest cosine over the last axis' rows).
//   dlrt_precision_ab MODEL FEED_DIR [--precision P] [--threads N] [--runs N] [--warmup N]
// FEED_DIR holds NAME.npy for each model input (the zoo's feed folders).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "core/npy.h"
#include "dlrt/session.h"
#include "thread_clock.h"

namespace {

using Clock = std::chrono::steady_clock;

using bench::median;
using bench::thread_cpu_ms;

struct Error {
  double max_rel = 0, max_abs = 0, max_over_peak = 0, min_cos = 1;
};

void compare(const dlrt::Tensor& ref, const dlrt::Tensor& got, Error& e) {
  if (ref.dtype() != dlrt::DType::kFloat32 || got.dtype() != dlrt::DType::kFloat32 || ref.size() != got.size()) return;
  const float* r = ref.data<float>();
  const float* g = got.data<float>();
  const int64_t n = ref.size(), row = ref.rank() > 0 ? std::max<int64_t>(1, ref.dim(ref.rank() - 1)) : 1;
  double peak = 0;
  for (int64_t i = 0; i < n; ++i) peak = std::max(peak, std::fabs(double(r[i])));
  for (int64_t i = 0; i < n; ++i) {
    const double d = std::fabs(double(g[i]) - r[i]);
    e.max_abs = std::max(e.max_abs, d);
    if (std::fabs(r[i]) >= 1e-3 * peak) e.max_rel = std::max(e.max_rel, d / std::fabs(double(r[i])));
    if (peak > 0) e.max_over_peak = std::max(e.max_over_peak, d / peak);
  }
  for (int64_t b = 0; b + row <= n; b += row) {
    double dot = 0, rr = 0, gg = 0;
    for (int64_t i = b; i < b + row; ++i)
      dot += double(r[i]) * g[i], rr += double(r[i]) * r[i], gg += double(g[i]) * g[i];
    if (rr > 0 && gg > 0) e.min_cos = std::min(e.min_cos, dot / std::sqrt(rr * gg));
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s MODEL FEED_DIR [--precision P] [--threads N] [--runs N] [--warmup N]\n", argv[0]);
    return 2;
  }
  std::string precision = "bf16";
  int threads = 1, runs = 30, warmup = 3;
  for (int i = 3; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--precision"))
      precision = argv[i + 1];
    else if (!std::strcmp(argv[i], "--threads"))
      threads = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--runs"))
      runs = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--warmup"))
      warmup = std::atoi(argv[i + 1]);
    else {
      std::fprintf(stderr, "unknown option %s\n", argv[i]);
      return 2;
    }
  }
  std::map<std::string, dlrt::Tensor> feeds;
  for (const auto& entry : std::filesystem::directory_iterator(argv[2])) {
    if (entry.path().extension() != ".npy") continue;
    auto t = dlrt::read_npy_file(entry.path().string());
    if (!t.ok()) {
      std::fprintf(stderr, "%s\n", t.status().to_string().c_str());
      return 1;
    }
    feeds[entry.path().stem().string()] = std::move(*t);
  }
  std::unique_ptr<dlrt::Session> s[2];
  const std::string names[2] = {"f32", precision};
  for (int k = 0; k < 2; ++k) {
    dlrt::SessionOptions o;
    o.device = "cpu";
    o.threads = threads;
    o.cpu_precision = names[k];
    auto made = dlrt::Session::create(argv[1], o);
    if (!made.ok()) {
      std::fprintf(stderr, "%s\n", made.status().to_string().c_str());
      return 1;
    }
    s[k] = std::move(*made);
  }
  std::vector<dlrt::Tensor> out[2];
  std::string ran[2];
  std::vector<double> ms[2], cpu[2];
  for (int r = 0; r < warmup + runs; ++r) {
    for (int j = 0; j < 2; ++j) {
      const int k = (r + j) % 2;
      dlrt::RunReport report;
      const auto t0 = Clock::now();
      const double c0 = thread_cpu_ms();
      auto got = s[k]->run(feeds, &report);
      const double c = thread_cpu_ms() - c0;
      const double t = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
      if (!got.ok()) {
        std::fprintf(stderr, "%s\n", got.status().to_string().c_str());
        return 1;
      }
      if (r >= warmup) ms[k].push_back(t), cpu[k].push_back(c);
      if (r == 0) {
        out[k] = std::move(*got);
        ran[k] = report.partitions.empty() ? "" : report.partitions[0].precision;
      }
    }
  }
  Error e;
  for (size_t i = 0; i < out[0].size() && i < out[1].size(); ++i) compare(out[0][i], out[1][i], e);
  const double m0 = median(ms[0]), m1 = median(ms[1]), c0 = median(cpu[0]), c1 = median(cpu[1]);
  std::printf(
      "{\"model\": \"%s\", \"feeds\": \"%s\", \"threads\": %d, \"runs\": %d, \"f32\": {\"precision\": \"%s\", "
      "\"median_ms\": %.4f, \"median_thread_cpu_ms\": %.4f}, \"%s\": {\"precision\": \"%s\", \"median_ms\": %.4f, "
      "\"median_thread_cpu_ms\": %.4f}, \"ratio\": %.4f, \"cpu_ratio\": %.4f, \"max_rel_error\": %.3e, "
      "\"max_abs_error\": %.3e, \"max_error_over_peak\": %.3e, \"min_row_cosine\": %.7f}\n",
      argv[1], argv[2], threads, runs, ran[0].c_str(), m0, c0, precision.c_str(), ran[1].c_str(), m1, c1, m1 / m0,
      c1 / c0, e.max_rel, e.max_abs, e.max_over_peak, e.min_cos);
  return 0;
}
