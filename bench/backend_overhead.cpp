// What the backend layer costs on a CPU-only machine: session create and run
// through dlrt::Session (config file, device spec, discovery, placement,
// partition bookkeeping, report) versus importing the model and running the
// CPU executor directly. Prints medians of alternating measurements.
//   dlrt_backend_overhead MODEL [--runs N] [--creates N] [--threads N]
// Inputs are zeros of the declared shapes (dynamic dims = 1).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "backends/cpu/kernel.h"
#include "core/run_value.h"
#include "core/thread_pool.h"
#include "dlrt/session.h"
#include "exec/executor.h"
#include "ir/onnx_import.h"

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s MODEL [--runs N] [--creates N] [--threads N]\n", argv[0]);
    return 2;
  }
  const std::string path = argv[1];
  int runs = 200, creates = 10, threads = 1;
  for (int i = 2; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--runs")) runs = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--creates")) creates = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--threads")) threads = std::atoi(argv[i + 1]);
  }
  dlrt::SessionOptions opts;
  opts.device = "cpu";
  opts.threads = threads;
  opts.optimize = false;  // the same graph on both sides

  std::vector<double> create_session, create_direct;
  std::unique_ptr<dlrt::Session> session;
  std::unique_ptr<dlrt::Executor> executor;
  std::shared_ptr<const dlrt::ir::Graph> graph;
  dlrt::ThreadPool pool(threads);
  for (int i = 0; i < creates; ++i) {
    auto t0 = Clock::now();
    auto s = dlrt::Session::create(path, opts);
    create_session.push_back(ms_since(t0));
    if (!s.ok()) {
      std::fprintf(stderr, "session create: %s\n", s.status().to_string().c_str());
      return 1;
    }
    session = std::move(s).value();
    t0 = Clock::now();
    auto m = dlrt::ir::import_onnx_file(path);
    if (!m.ok()) {
      std::fprintf(stderr, "import: %s\n", m.status().to_string().c_str());
      return 1;
    }
    graph = m->graph;
    auto e = dlrt::Executor::create(graph, pool, dlrt::cpu::builtin_kernels());
    create_direct.push_back(ms_since(t0));
    if (!e.ok()) {
      std::fprintf(stderr, "executor: %s\n", e.status().to_string().c_str());
      return 1;
    }
    executor = std::move(e).value();
  }

  std::map<std::string, dlrt::Tensor> inputs;
  std::vector<dlrt::RunValue> direct_inputs;
  for (const auto& info : session->inputs()) {
    std::vector<int64_t> shape;
    for (int64_t d : info.shape) shape.push_back(d < 0 ? 1 : d);
    auto t = dlrt::Tensor::allocate(info.dtype, shape);  // zeros
    if (!t.ok()) {
      std::fprintf(stderr, "input %s: %s\n", info.name.c_str(), t.status().to_string().c_str());
      return 1;
    }
    inputs[info.name] = *t;
    direct_inputs.push_back(dlrt::RunValue::of(*t));
  }
  std::vector<double> run_session, run_direct;
  for (int i = 0; i < runs + 5; ++i) {  // alternate, first 5 of each are warm-up
    auto t0 = Clock::now();
    dlrt::RunReport report;
    auto a = session->run(inputs, &report);
    double ta = ms_since(t0);
    t0 = Clock::now();
    auto b = executor->run(direct_inputs);
    double tb = ms_since(t0);
    if (!a.ok() || !b.ok()) {
      std::fprintf(stderr, "run failed: %s\n", (!a.ok() ? a.status() : b.status()).to_string().c_str());
      return 1;
    }
    if (i >= 5) {
      run_session.push_back(ta);
      run_direct.push_back(tb);
    }
  }
  const double cs = median(create_session), cd = median(create_direct);
  const double rs = median(run_session), rd = median(run_direct);
  std::printf("model %s, %d thread(s), medians of %d creates and %d runs\n", path.c_str(), threads, creates, runs);
  std::printf("  first session create in the process (device discovery, registry): Session %.3f ms, direct %.3f ms\n",
              create_session.front(), create_direct.front());
  std::printf("  session create: Session %.3f ms, direct %.3f ms, overhead %+.3f ms (%+.1f%%)\n", cs, cd, cs - cd,
              cd > 0 ? 100 * (cs - cd) / cd : 0);
  std::printf("  run:            Session %.4f ms, direct %.4f ms, overhead %+.4f ms (%+.1f%%)\n", rs, rd, rs - rd,
              rd > 0 ? 100 * (rs - rd) / rd : 0);
  return 0;
}
