// dlrt bench MODEL: session-create time, run latency statistics, throughput,
// peak RSS and (with --profile) where the time goes, per op type and node.
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_args.h"
#include "commands.h"
#include "core/thread_pool.h"
#include "dlrt/profile.h"
#include "dlrt/session.h"
#include "json_out.h"
#include "run_inputs.h"
#include "tensor_format.h"

namespace dlrt::cli {
namespace {

constexpr const char* kBenchHelp =
    "usage: dlrt bench MODEL [options]\n"
    "\n"
    "Measures MODEL: the session-create time (cold, then warm: a second create in the\n"
    "same process), the latency of each run (min, median, p90, max, mean), throughput,\n"
    "and the process's peak resident memory. Runs --warmup untimed runs, then\n"
    "--iterations timed runs (a fixed count, not a time budget). Inputs not given with\n"
    "--input get random values as in 'dlrt run' (dynamic dims 1 unless --shape).\n"
    "\n"
    "options:\n"
    "  --device SPEC         auto, cpu, gpu, npu, a backend or backend:device; comma-separated\n"
    "                        priority list (default: $DLRT_DEVICE, else auto)\n"
    "  --strict              fail instead of falling back to another device (also DLRT_STRICT=1)\n"
    "  --threads N           intra-op threads (default 0: one per core)\n"
    "  --precision P         CPU float matmuls: f32 (default), bf16 (one bf16 product per term,\n"
    "                        AVX512-BF16 or Arm BF16; about 1e-3 relative error) or bf16x3 (AMX\n"
    "                        tiles, about 1e-5; each f32 where the CPU lacks the instructions), or\n"
    "                        auto (the fastest of these within a bound of f32, measured at create\n"
    "                        on the --input files when they give every input, else on generated\n"
    "                        inputs; the report says what it measured). Also DLRT_CPU_PRECISION\n"
    "  --warmup K            untimed runs before timing (default 3)\n"
    "  --iterations N        timed runs (default 20, at least 1)\n"
    "  --input NAME=FILE     feed input NAME from a .npy file (repeatable)\n"
    "  --shape NAME=DIMS     shape of a random input, e.g. --shape input_ids=1x128; the other inputs\n"
    "                        with the same named dims (attention_mask [batch, sequence]) follow it\n"
    "  --shape DIM=N         size of a named dynamic dim (as the model's dim_param spells it, e.g.\n"
    "                        --shape sequence=128 --shape batch=8) in every input (repeatable)\n"
    "  --seed N              seed of the random inputs (default 0)\n"
    "  --profile             also time every node the session runs (--iterations more runs,\n"
    "                        fused nodes as fused, an accelerator partition as one node):\n"
    "                        time per op type and the 20 slowest nodes\n"
    "  --json                print one JSON object: session_create_ms, session_create_warm_ms,\n"
    "                        latency_ms {min, median, p90, max, mean}, iterations,\n"
    "                        throughput_per_s (runs), batch, samples_per_s (batch x runs/s),\n"
    "                        peak_rss_mb, threads, report (as 'dlrt run --json'), inputs, and\n"
    "                        profile with --profile\n"
    "  -h, --help            this help\n"
    "\n"
    "A progress bar goes to stderr when stderr is a terminal.\n"
    "\n"
    "exit codes: 0 ok, 1 runtime error, 2 usage error, 3 invalid or unsupported model,\n"
    "            4 requested device unavailable in strict mode\n";

constexpr int64_t kMaxIterations = 10'000'000;
constexpr int kTopNodes = 20;

int bench_fail(const std::string& message, int code) { return command_error("bench", message, code); }

// Peak resident set of this process so far, in MiB (getrusage: KiB on Linux).
double peak_rss_mb() {
  struct rusage ru {};
  if (::getrusage(RUSAGE_SELF, &ru) != 0) return 0;
  return static_cast<double>(ru.ru_maxrss) / 1024.0;
}

// A one-line progress bar on stderr, drawn only when stderr is a terminal.
class BenchProgress {
 public:
  explicit BenchProgress(bool enabled) : enabled_(enabled) {}
  ~BenchProgress() { clear(); }
  void show(const char* phase, int64_t done, int64_t total) {
    if (!enabled_ || total <= 0) return;
    constexpr int kWidth = 30;
    int filled = static_cast<int>(kWidth * done / total);
    std::string bar(static_cast<size_t>(filled), '#');
    bar.append(static_cast<size_t>(kWidth - filled), '.');
    std::fprintf(stderr, "\r\033[Kdlrt bench: %-8s [%s] %lld/%lld", phase, bar.c_str(), static_cast<long long>(done),
                 static_cast<long long>(total));
    std::fflush(stderr);
    drawn_ = true;
  }
  void clear() {
    if (drawn_) {
      std::fputs("\r\033[K", stderr);
      std::fflush(stderr);
      drawn_ = false;
    }
  }

 private:
  bool enabled_;
  bool drawn_ = false;
};

struct LatencyStats {
  double min = 0, median = 0, p90 = 0, max = 0, mean = 0, stddev = 0;
};

// Percentile `p` in [0, 1] of sorted values, interpolating between ranks.
double percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  double pos = p * static_cast<double>(sorted.size() - 1);
  size_t lo = static_cast<size_t>(pos);
  size_t hi = std::min(lo + 1, sorted.size() - 1);
  double frac = pos - static_cast<double>(lo);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

LatencyStats stats_of(std::vector<double> v) {
  LatencyStats s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  s.min = v.front();
  s.max = v.back();
  s.median = percentile(v, 0.5);
  s.p90 = percentile(v, 0.9);
  double sum = 0;
  for (double x : v) sum += x;
  s.mean = sum / static_cast<double>(v.size());
  double sq = 0;
  for (double x : v) sq += (x - s.mean) * (x - s.mean);
  s.stddev = v.size() > 1 ? std::sqrt(sq / static_cast<double>(v.size() - 1)) : 0;
  return s;
}

struct NodeTime {
  std::string name;
  std::string op_type;
  double ms = 0;  // mean per run
};

struct OpTypeTime {
  std::string op_type;
  int count = 0;
  double ms = 0;  // mean per run, all nodes of the type
};

struct Profile {
  int runs = 0;
  double total_ms = 0;  // mean per run, sum over nodes
  std::vector<OpTypeTime> op_types;  // slowest first
  std::vector<NodeTime> nodes;       // slowest first, at most kTopNodes
  int node_count = 0;
};

// Times every node of the graph the session runs (after optimisation and
// fusion; an accelerator partition is one com.dlrt.Partition node), through
// the session itself, so the profile shows what `run` does.
Result<Profile> profile_nodes(const Session& session, const std::map<std::string, Tensor>& feeds, int threads,
                              int64_t runs) {
  (void)threads;  // the session's own pool
  std::vector<double> sum;
  std::vector<NodeProfile> timed;
  // One untimed run first, so lazily prepared state does not count.
  for (int64_t r = -1; r < runs; ++r) {
    DLRT_ASSIGN_OR_RETURN(timed, run_profiled(session, feeds));
    if (r < 0) continue;
    sum.resize(timed.size(), 0.0);
    for (size_t i = 0; i < timed.size(); ++i) sum[i] += timed[i].ms;
  }
  const size_t n = timed.size();
  sum.resize(n, 0.0);
  Profile p;
  p.runs = static_cast<int>(runs);
  p.node_count = static_cast<int>(n);
  std::map<std::string, OpTypeTime> by_type;
  std::vector<NodeTime> nodes;
  for (size_t i = 0; i < n; ++i) {
    double ms = sum[i] / static_cast<double>(runs);
    const std::string& type = timed[i].op_type;
    auto& t = by_type[type];
    t.op_type = type;
    t.count += 1;
    t.ms += ms;
    p.total_ms += ms;
    nodes.push_back({timed[i].node, type, ms});
  }
  for (auto& [k, t] : by_type) p.op_types.push_back(t);
  std::stable_sort(p.op_types.begin(), p.op_types.end(), [](const OpTypeTime& a, const OpTypeTime& b) { return a.ms > b.ms; });
  std::stable_sort(nodes.begin(), nodes.end(), [](const NodeTime& a, const NodeTime& b) { return a.ms > b.ms; });
  if (nodes.size() > static_cast<size_t>(kTopNodes)) nodes.resize(kTopNodes);
  p.nodes = std::move(nodes);
  return p;
}

double percent(double part, double total) { return total > 0 ? 100.0 * part / total : 0.0; }

nlohmann::json profile_json(const Profile& p) {
  nlohmann::json j;
  j["runs"] = p.runs;
  j["node_count"] = p.node_count;
  j["total_ms"] = p.total_ms;
  j["op_types"] = nlohmann::json::array();
  for (const auto& t : p.op_types)
    j["op_types"].push_back({{"op_type", t.op_type}, {"count", t.count}, {"ms", t.ms}, {"percent", percent(t.ms, p.total_ms)}});
  j["nodes"] = nlohmann::json::array();
  for (const auto& n : p.nodes)
    j["nodes"].push_back({{"name", n.name}, {"op_type", n.op_type}, {"ms", n.ms}, {"percent", percent(n.ms, p.total_ms)}});
  return j;
}

void print_profile(const Profile& p) {
  std::printf("profile (mean of %d runs, %d nodes, %s ms in nodes):\n", p.runs, p.node_count,
              format_ms(p.total_ms).c_str());
  std::printf("  %-28s %6s %12s %7s\n", "op type", "nodes", "ms", "%");
  for (const auto& t : p.op_types)
    std::printf("  %-28s %6d %12s %6.1f%%\n", t.op_type.c_str(), t.count, format_ms(t.ms).c_str(), percent(t.ms, p.total_ms));
  std::printf("  slowest %zu nodes:\n", p.nodes.size());
  std::printf("  %-40s %-20s %12s %7s\n", "node", "op type", "ms", "%");
  for (const auto& n : p.nodes)
    std::printf("  %-40s %-20s %12s %6.1f%%\n", n.name.c_str(), n.op_type.c_str(), format_ms(n.ms).c_str(),
                percent(n.ms, p.total_ms));
}

// The options of a bench: the session's, the run counts and the random inputs' seed.
struct BenchSettings {
  SessionOptions options;
  int64_t warmup = 3;
  int64_t iterations = 20;
  uint64_t seed = 0;
};

// kExitOk, or the usage error's code.
int parse_bench_settings(const Args& args, BenchSettings& b) {
  SessionOptions& options = b.options;
  options.device = args.get("device");
  options.strict = args.has("strict");
  if (args.has("precision")) {
    auto precision = parse_precision(args.get("precision"));
    if (!precision.ok()) return usage_error("bench", precision.status().message());
    options.cpu_precision = *precision;
  }
  if (args.has("threads")) {
    auto n = parse_nonnegative_int(args.get("threads"), "--threads");
    if (!n.ok()) return usage_error("bench", n.status().message());
    if (*n > kMaxThreads) return usage_error("bench", "--threads must be at most " + std::to_string(kMaxThreads));
    options.threads = static_cast<int>(*n);
  }
  if (args.has("warmup")) {
    auto n = parse_nonnegative_int(args.get("warmup"), "--warmup");
    if (!n.ok()) return usage_error("bench", n.status().message());
    if (*n > kMaxIterations) return usage_error("bench", "--warmup must be at most " + std::to_string(kMaxIterations));
    b.warmup = *n;
  }
  if (args.has("iterations")) {
    auto n = parse_nonnegative_int(args.get("iterations"), "--iterations");
    if (!n.ok()) return usage_error("bench", n.status().message());
    if (*n < 1 || *n > kMaxIterations)
      return usage_error("bench", "--iterations must be between 1 and " + std::to_string(kMaxIterations) + ", got " +
                                      args.get("iterations"));
    b.iterations = *n;
  }
  if (args.has("seed")) {
    auto n = parse_nonnegative_int(args.get("seed"), "--seed");
    if (!n.ok()) return usage_error("bench", n.status().message());
    b.seed = static_cast<uint64_t>(*n);
  }
  return kExitOk;
}

// What a bench measured, for printing.
struct BenchResult {
  std::string model_path;
  int threads = 0;
  double create_ms = 0;
  double warm_create_ms = 0;
  double first_run_ms = 0;
  std::vector<double> latencies;
  double timed_total_ms = 0;
  double rss_mb = 0;
  int64_t batch = 1;  // samples per run
  std::vector<PreparedInput> inputs;
  RunReport report;
  std::optional<Profile> prof;
};

// The warm-up runs (the first one timed on its own: it includes lazy
// planning), then the timed ones. kExitOk, or the failed run's code.
int time_runs(const Session& session, const std::map<std::string, Tensor>& feeds, const BenchSettings& b,
              BenchProgress& progress, BenchResult& r) {
  auto run_once = [&]() -> Status {
    auto out = session.run(feeds);
    return out.ok() ? Status::Ok() : out.status();
  };
  for (int64_t i = 0; i < b.warmup; ++i) {
    progress.show("warmup", i, b.warmup);
    auto t = std::chrono::steady_clock::now();
    Status s = run_once();
    if (i == 0) r.first_run_ms = ms_since(t);
    if (!s.ok()) {
      progress.clear();
      return bench_fail("run failed: " + s.to_string(), exit_code_for_run_status(s));
    }
  }
  r.latencies.reserve(static_cast<size_t>(b.iterations));
  auto timed_start = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < b.iterations; ++i) {
    progress.show("timing", i, b.iterations);
    auto t = std::chrono::steady_clock::now();
    Status s = run_once();
    double ms = ms_since(t);
    if (!s.ok()) {
      progress.clear();
      return bench_fail("run failed: " + s.to_string(), exit_code_for_run_status(s));
    }
    if (b.warmup == 0 && i == 0) r.first_run_ms = ms;
    r.latencies.push_back(ms);
  }
  r.timed_total_ms = ms_since(timed_start);
  progress.clear();
  return kExitOk;
}

double throughput_of(const BenchResult& r, const BenchSettings& b) {
  return r.timed_total_ms > 0 ? 1000.0 * static_cast<double>(b.iterations) / r.timed_total_ms : 0;
}

void print_bench_json(const BenchResult& r, const BenchSettings& b) {
  const LatencyStats st = stats_of(r.latencies);
  const double throughput = throughput_of(r, b);
  nlohmann::json j;
  j["model"] = r.model_path;
  j["device"] = b.options.device.empty() ? "default" : b.options.device;
  j["threads"] = r.threads;
  j["warmup"] = b.warmup;
  j["iterations"] = b.iterations;
  j["session_create_ms"] = r.create_ms;
  j["session_create_warm_ms"] = r.warm_create_ms;
  j["first_run_ms"] = r.first_run_ms;
  j["latency_ms"] = {{"min", st.min},   {"median", st.median}, {"p90", st.p90},
                     {"max", st.max},   {"mean", st.mean},     {"stddev", st.stddev}};
  j["throughput_per_s"] = throughput;
  j["batch"] = r.batch;
  j["samples_per_s"] = throughput * static_cast<double>(r.batch);
  j["peak_rss_mb"] = r.rss_mb;
  j["inputs"] = inputs_json(r.inputs);
  j["report"] = report_json(r.report);
  if (r.prof) j["profile"] = profile_json(*r.prof);
  print_json(j);
}

void print_bench_text(const BenchResult& r, const BenchSettings& b) {
  const LatencyStats st = stats_of(r.latencies);
  const double throughput = throughput_of(r, b);
  std::printf("model: %s\n", r.model_path.c_str());
  std::printf("threads: %d\n", r.threads);
  std::printf("inputs:\n");
  for (const auto& in : r.inputs)
    std::printf("  %s: %s %s (%s)\n", in.name.c_str(), dtype_name(in.tensor.dtype()), shape_to_string(in.tensor.shape()).c_str(),
                in.source.c_str());
  std::printf("placement:\n");
  for (size_t i = 0; i < r.report.partitions.size(); ++i) {
    const auto& p = r.report.partitions[i];
    std::printf("  partition %zu: %d nodes on %s (%s)%s%s\n", i, p.node_count, p.backend.c_str(), device_label(p).c_str(),
                p.degraded ? ", DEGRADED: " : "", p.degraded ? p.reason.c_str() : "");
  }
  std::printf("session create: %s ms cold, %s ms warm (second create in this process)\n", format_ms(r.create_ms).c_str(),
              format_ms(r.warm_create_ms).c_str());
  std::printf("first run: %s ms\n", format_ms(r.first_run_ms).c_str());
  std::printf("latency over %lld runs (after %lld warm-up): min %s  median %s  p90 %s  max %s  mean %s ms (stddev %s)\n",
              static_cast<long long>(b.iterations), static_cast<long long>(b.warmup), format_ms(st.min).c_str(),
              format_ms(st.median).c_str(), format_ms(st.p90).c_str(), format_ms(st.max).c_str(), format_ms(st.mean).c_str(),
              format_ms(st.stddev).c_str());
  std::printf("throughput: %.2f runs/s, %.2f samples/s (batch %lld)\n", throughput, throughput * static_cast<double>(r.batch),
              static_cast<long long>(r.batch));
  std::printf("peak RSS: %.1f MiB\n", r.rss_mb);
  if (r.prof) print_profile(*r.prof);
}

}  // namespace

int cmd_bench(int argc, char** argv) {
  const std::vector<FlagSpec> specs = {
      {"device", true, false},     {"strict", false, false}, {"threads", true, false}, {"precision", true, false}, {"warmup", true, false},
      {"iterations", true, false}, {"input", true, true},    {"shape", true, true},    {"seed", true, false},
      {"profile", false, false},   {"json", false, false},
  };
  auto parsed = parse_args(argc, argv, 2, specs);
  if (!parsed.ok()) return usage_error("bench", parsed.status().message());
  const Args& args = *parsed;
  if (args.has("help")) {
    std::fputs(kBenchHelp, stdout);
    return kExitOk;
  }
  if (args.positional.size() != 1)
    return usage_error("bench", args.positional.empty() ? "missing MODEL"
                                                        : "expected one MODEL, got " + std::to_string(args.positional.size()) +
                                                              " positional arguments");
  BenchResult r;
  r.model_path = args.positional[0];
  BenchSettings b;
  if (int rc = parse_bench_settings(args, b); rc != kExitOk) return rc;
  InputFlags input_flags;
  if (int rc = parse_input_flags(args, "bench", input_flags); rc != kExitOk) return rc;
  r.threads = b.options.threads > 0 ? b.options.threads : ThreadPool::hardware_threads();
  if (b.options.cpu_precision == "auto") b.options.canary_inputs = canary_from_input_files(r.model_path, input_flags);

  // Cold create: the first in this process (device discovery, registries,
  // file reads and kernel preparation all count).
  auto t0 = std::chrono::steady_clock::now();
  auto session_r = Session::create(r.model_path, b.options);
  r.create_ms = ms_since(t0);
  if (!session_r.ok()) {
    const Status& s = session_r.status();
    return bench_fail("cannot load model " + r.model_path + ": " + s.to_string(), exit_code_for_model_status(s));
  }
  std::unique_ptr<Session> session = std::move(session_r).value();

  std::mt19937_64 rng(b.seed);
  if (int rc = prepare_inputs(*session, input_flags, rng, "bench", r.inputs); rc != kExitOk) return rc;
  const std::map<std::string, Tensor> feeds = feeds_of(r.inputs);
  r.batch = batch_size_of(*session, r.inputs);

  BenchProgress progress(::isatty(STDERR_FILENO) == 1);
  if (int rc = time_runs(*session, feeds, b, progress, r); rc != kExitOk) return rc;
  // Peak RSS of one session and its runs (read before anything else is created).
  r.rss_mb = peak_rss_mb();

  // One more run for the placement report (per-partition times).
  if (auto out = session->run(feeds, &r.report); !out.ok())
    return bench_fail("run failed: " + out.status().to_string(), exit_code_for_run_status(out.status()));

  if (args.has("profile")) {
    progress.show("profile", 0, 1);
    auto p = profile_nodes(*session, feeds, r.threads, b.iterations);
    progress.clear();
    if (!p.ok()) return bench_fail("profile failed: " + p.status().to_string(), kExitRuntimeError);
    r.prof = std::move(p).value();
  }

  // Warm create: the same model again in this process (file cache, blob
  // cache and one-time initialisation now warm).
  session.reset();
  t0 = std::chrono::steady_clock::now();
  auto warm_r = Session::create(r.model_path, b.options);
  r.warm_create_ms = ms_since(t0);
  if (!warm_r.ok()) {
    const Status& s = warm_r.status();
    return bench_fail("second create of " + r.model_path + " failed: " + s.to_string(), exit_code_for_model_status(s));
  }
  warm_r->reset();

  if (args.has("json")) {
    print_bench_json(r, b);
  } else {
    print_bench_text(r, b);
  }
  return kExitOk;
}

}  // namespace dlrt::cli
