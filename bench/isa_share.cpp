// dlrt_isa_share: one model on the CPU's widest vector path and capped at
// AVX2 (ScopedCpuIsa, as DLRT_CPU_ISA=avx2 does) in one process, on 1 thread,
// each beside the register-only FMA peak of its own width (bench/fma_loops.h,
// dlrt_fma_peak's loop). Every round runs both sessions and both peak loops,
// the order alternating, and times each by the calling thread's CPU time (at 1
// thread a run executes on the calling thread): time other processes took from
// the core does not count, so the figures hold on a loaded machine. A model's
// share of the peak is then FLOP / (time x peak), the FLOP from bench/flops.py
// (bench/isa_share.sh does that).
//   dlrt_isa_share MODEL FEED_DIR [--runs N] [--warmup N] [--peak-ms MS] [--nodes N]
// FEED_DIR holds NAME.npy for each model input (the zoo's case folders).
// Prints one JSON object: per ISA the run report's vector ISA, medians of
// thread CPU time and wall time per run, and the median and best peak GFLOP/s
// (1 FMA = 2 FLOP) by thread CPU time. Needs a CPU with AVX2 and FMA; without
// AVX-512 the "wide" entries run the AVX2 path too (the JSON says so).
// --nodes N: then N more rounds of profiled runs (dlrt/profile.h) and "nodes":
// per node its op type and the median over rounds of its wall time on each
// side (wall time: where a loaded machine preempts a node, the median drops it).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

#include "backends/cpu/kernels/isa.h"
#include "core/npy.h"
#include "dlrt/profile.h"
#include "dlrt/session.h"
#include "fma_loops.h"
#include "thread_clock.h"

#if DLRT_X86
namespace {

using dlrt::cpu::CpuIsa;
using Clock = std::chrono::steady_clock;

using bench::median;
using bench::thread_cpu_ms;

// s as the body of a JSON string.
std::string json_escape(const std::string& s) {
  std::string out;
  for (const char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  return out;
}

volatile float g_sink = 0;

// One ISA's session, peak loop and samples.
struct Side {
  Side(CpuIsa c, const char* n, float (*f)(int64_t), int l) : cap(c), name(n), fma(f), lanes(l) {}
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

// --nodes: `rounds` profiled runs of each side, alternating; prints ", \"nodes\": [...]".
bool print_nodes(Side (&sides)[2], const std::map<std::string, dlrt::Tensor>& feeds, int rounds) {
  std::vector<dlrt::NodeProfile> first[2];
  std::vector<std::vector<double>> ms[2];
  for (int r = 0; r < rounds; ++r) {
    for (int j = 0; j < 2; ++j) {
      const int k = (r + j) % 2;
      dlrt::cpu::ScopedCpuIsa cap(sides[k].cap);
      auto got = dlrt::run_profiled(*sides[k].session, feeds);
      if (!got.ok()) {
        std::fprintf(stderr, "%s\n", got.status().to_string().c_str());
        return false;
      }
      if (r == 0) first[k] = *got, ms[k].resize(got->size());
      for (size_t i = 0; i < got->size() && i < ms[k].size(); ++i) ms[k][i].push_back((*got)[i].ms);
    }
  }
  // The two plans can differ (kernel choices per ISA): nodes are matched by name.
  std::map<std::string, double> narrow;
  for (size_t i = 0; i < first[1].size(); ++i) narrow[first[1][i].node] = median(ms[1][i]);
  std::printf(", \"nodes\": [");
  for (size_t i = 0; i < first[0].size(); ++i) {
    const auto it = narrow.find(first[0][i].node);
    std::printf("%s{\"node\": \"%s\", \"op_type\": \"%s\", \"wide_ms\": %.4f, \"avx2_ms\": %.4f}", i ? ", " : "",
                json_escape(first[0][i].node).c_str(), json_escape(first[0][i].op_type).c_str(), median(ms[0][i]),
                it == narrow.end() ? -1.0 : it->second);
  }
  std::printf("]");
  return true;
}

int usage(const char* argv0) {
  std::fprintf(stderr, "usage: %s MODEL FEED_DIR [--runs N] [--warmup N] [--peak-ms MS] [--nodes N]\n", argv0);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) return usage(argv[0]);
  int runs = 15, warmup = 3, node_runs = 0;
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
    else if (!std::strcmp(argv[i], "--nodes") && v >= 1 && v <= 10000)
      node_runs = static_cast<int>(v);
    else
      return usage(argv[0]);
  }
  const CpuIsa hw = dlrt::cpu::detected_cpu_isa();
  if (hw < CpuIsa::kAvx2) {
    std::fprintf(stderr, "dlrt_isa_share: this CPU has no AVX2+FMA\n");
    return 1;
  }
  const bool wide512 = hw >= CpuIsa::kAvx512;
  Side sides[2] = {
      Side(CpuIsa::kAvx512, "wide", wide512 ? fma_loops::fma_avx512 : fma_loops::fma_avx2, wide512 ? 16 : 8),
      Side(CpuIsa::kAvx2, "avx2", fma_loops::fma_avx2, 8)};
  std::map<std::string, dlrt::Tensor> feeds;
  std::error_code ec;
  std::filesystem::directory_iterator dir(argv[2], ec);
  if (ec) {
    std::fprintf(stderr, "dlrt_isa_share: cannot read the feed folder %s: %s\n", argv[2], ec.message().c_str());
    return 1;
  }
  for (const auto& entry : dir) {
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
              json_escape(argv[1]).c_str(), json_escape(argv[2]).c_str(), runs, warmup, peak_ms);
  for (const Side& side : sides)
    std::printf(
        ", \"%s\": {\"vector_isa\": \"%s\", \"peak_lanes\": %d, \"median_thread_cpu_ms\": %.4f, \"median_ms\": %.4f, "
        "\"peak_gflops_median\": %.2f, \"peak_gflops_best\": %.2f}",
        side.name, side.reported.c_str(), side.lanes, median(side.cpu_ms), median(side.wall_ms),
        median(side.peak_gflops), *std::max_element(side.peak_gflops.begin(), side.peak_gflops.end()));
  if (node_runs > 0 && !print_nodes(sides, feeds, node_runs)) return 1;
  std::printf("}\n");
  return 0;
}
#else
int main() {
  std::fprintf(stderr, "dlrt_isa_share: x86-64 only (it compares AVX2 with AVX-512)\n");
  return 1;
}
#endif
