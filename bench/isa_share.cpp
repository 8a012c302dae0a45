// dlrt_isa_share: one model on the CPU's widest vector path and capped at
// AVX2 (ScopedCpuIsa, as DLRT_CPU_ISA=avx2 does) in one process, on 1 thread,
// each beside the register-only FMA peak of its own width (bench/fma_loops.h,
// dlrt_fma_peak's loop). Every round runs both sessions and both peak loops,
// the order alternating, and times each by the calling thread's CPU time (at 1
// thread a run executes on the calling thread): time other processes took from
// the core does not count, so the figures hold on a loaded machine. A model's
// share of the peak is then FLOP / (time x peak), the FLOP from bench/flops.py
// (bench/isa_share.sh does that).
//   dlrt_isa_share MODEL FEED_DIR [--runs N] [--warmup N] [--peak-ms MS]
// FEED_DIR holds NAME.npy for each model input (the zoo's case folders).
// Prints one JSON object: per ISA the run report's vector ISA, medians of
// thread CPU time and wall time per run, and the median and best peak GFLOP/s
// (1 FMA = 2 FLOP) by thread CPU time. Needs a CPU with AVX2 and FMA; without
// AVX-512 the "wide" entries run the AVX2 path too (the JSON says so).
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "backends/cpu/kernels/isa.h"
#include "core/npy.h"
#include "dlrt/session.h"
#include "fma_loops.h"

#if DLRT_X86
namespace {

using dlrt::cpu::CpuIsa;
using Clock = std::chrono::steady_clock;

double thread_cpu_ms() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) * 1e-6;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

volatile float g_sink = 0;

// One ISA's session, peak loop and samples.
struct Side {
  CpuIsa cap;
  const char* name;
  float (*fma)(int64_t);
  int lanes;
  std::unique_ptr<dlrt::Session> session;
  std::string reported;
  int64_t peak_iters = 0;
  std::vector<double> cpu_ms, wall_ms, peak_gflops;
};

// GFLOP/s of `iters` iterations of side.fma by thread CPU time.
double peak_once(const Side& side, int64_t iters) {
  const double c0 = thread_cpu_ms();
  g_sink = g_sink + side.fma(iters);
  const double ms = std::max(thread_cpu_ms() - c0, 1e-6);
  return static_cast<double>(iters) * fma_loops::kChains * side.lanes * 2.0 / (ms * 1e6);
}

// The iteration count that takes about `ms` of thread CPU time.
int64_t calibrate(const Side& side, double ms) {
  int64_t iters = 1 << 12;
  for (;;) {
    const double c0 = thread_cpu_ms();
    g_sink = g_sink + side.fma(iters);
    const double took = thread_cpu_ms() - c0;
    if (took > 2.0 || iters > (int64_t{1} << 40))
      return std::max<int64_t>(1, static_cast<int64_t>(static_cast<double>(iters) * ms / std::max(took, 1e-3)));
    iters *= 4;
  }
}

int usage(const char* argv0) {
  std::fprintf(stderr, "usage: %s MODEL FEED_DIR [--runs N] [--warmup N] [--peak-ms MS]\n", argv0);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) return usage(argv[0]);
  int runs = 15, warmup = 3;
  double peak_ms = 20;
  for (int i = 3; i < argc; i += 2) {
    if (i + 1 >= argc) return usage(argv[0]);
    const double v = std::atof(argv[i + 1]);
    if (!std::strcmp(argv[i], "--runs") && v >= 1 && v <= 10000)
      runs = static_cast<int>(v);
    else if (!std::strcmp(argv[i], "--warmup") && v >= 0 && v <= 1000)
      warmup = static_cast<int>(v);
    else if (!std::strcmp(argv[i], "--peak-ms") && v >= 1 && v <= 10000)
      peak_ms = v;
    else
      return usage(argv[0]);
  }
  const CpuIsa hw = dlrt::cpu::detected_cpu_isa();
  if (hw < CpuIsa::kAvx2) {
    std::fprintf(stderr, "dlrt_isa_share: this CPU has no AVX2+FMA\n");
    return 1;
  }
  const bool wide512 = hw >= CpuIsa::kAvx512;
  Side sides[2] = {{CpuIsa::kAvx512, "wide", wide512 ? fma_loops::fma_avx512 : fma_loops::fma_avx2,
                    wide512 ? 16 : 8, {}, {}, 0, {}, {}, {}},
                   {CpuIsa::kAvx2, "avx2", fma_loops::fma_avx2, 8, {}, {}, 0, {}, {}, {}}};
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
  for (Side& side : sides) {
    dlrt::cpu::ScopedCpuIsa cap(side.cap);
    dlrt::SessionOptions o;
    o.device = "cpu";
    o.threads = 1;
    auto made = dlrt::Session::create(argv[1], o);
    if (!made.ok()) {
      std::fprintf(stderr, "%s\n", made.status().to_string().c_str());
      return 1;
    }
    side.session = std::move(*made);
    side.peak_iters = calibrate(side, peak_ms);
  }
  for (int r = 0; r < warmup + runs; ++r) {
    for (int j = 0; j < 2; ++j) {
      Side& side = sides[(r + j) % 2];
      dlrt::cpu::ScopedCpuIsa cap(side.cap);
      dlrt::RunReport report;
      const auto t0 = Clock::now();
      const double c0 = thread_cpu_ms();
      auto got = side.session->run(feeds, &report);
      const double c = thread_cpu_ms() - c0;
      const double t = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
      if (!got.ok()) {
        std::fprintf(stderr, "%s\n", got.status().to_string().c_str());
        return 1;
      }
      if (r == 0) side.reported = report.partitions.empty() ? "" : report.partitions[0].vector_isa;
      if (r < warmup) continue;
      side.cpu_ms.push_back(c);
      side.wall_ms.push_back(t);
      side.peak_gflops.push_back(peak_once(side, side.peak_iters));
    }
  }
  std::printf("{\"model\": \"%s\", \"feeds\": \"%s\", \"threads\": 1, \"runs\": %d, \"warmup\": %d, \"peak_ms\": %.1f",
              argv[1], argv[2], runs, warmup, peak_ms);
  for (const Side& side : sides)
    std::printf(
        ", \"%s\": {\"vector_isa\": \"%s\", \"peak_lanes\": %d, \"median_thread_cpu_ms\": %.4f, \"median_ms\": %.4f, "
        "\"peak_gflops_median\": %.2f, \"peak_gflops_best\": %.2f}",
        side.name, side.reported.c_str(), side.lanes, median(side.cpu_ms), median(side.wall_ms),
        median(side.peak_gflops), *std::max_element(side.peak_gflops.begin(), side.peak_gflops.end()));
  std::printf("}\n");
  return 0;
}
#else
int main() {
  std::fprintf(stderr, "dlrt_isa_share: x86-64 only (it compares AVX2 with AVX-512)\n");
  return 1;
}
#endif
