// cpu_precision "auto" (precision_auto.h): the comparison with f32, generated canary inputs, the choice.
#include "runtime/precision_auto.h"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>

#include "backends/cpu/cpu_backend.h"
#include "core/tensor_values.h"

namespace dlrt {
namespace {

std::string fixed(double v, int digits) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string sci(double v) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.1e", v);
  return buf;
}

// Same non-finite value (NaN, +inf, -inf) at a position, or both finite.
bool same_non_finite(double r, double c) {
  if (std::isfinite(r) && std::isfinite(c)) return true;
  return (std::isnan(r) && std::isnan(c)) || r == c;
}

// The rows (last dim) of one float output.
void compare_rows(const Tensor& r, const Tensor& c, const std::string& name, CanaryError& err) {
  const int64_t len = r.rank() == 0 ? 1 : r.shape().back();
  if (len <= 0 || r.size() == 0) return;
  for (int64_t row = 0; row < r.size() / len; ++row) {
    double dot = 0, nr = 0, nc = 0, ref_max = 0, diff_max = 0;
    for (int64_t k = row * len; k < (row + 1) * len; ++k) {
      const double a = element_as_double(r, k), b = element_as_double(c, k);
      if (!same_non_finite(a, b)) {
        err.mismatch = "output '" + name + "' is " + std::to_string(b) + " where f32 gives " + std::to_string(a);
        return;
      }
      if (!std::isfinite(a)) continue;
      dot += a * b, nr += a * a, nc += b * b;
      ref_max = std::max(ref_max, std::fabs(a));
      diff_max = std::max(diff_max, std::fabs(a - b));
    }
    const double cosine = nr == 0 && nc == 0 ? 1 : (nr == 0 || nc == 0 ? 0 : dot / std::sqrt(nr * nc));
    const double rel = ref_max == 0 ? (diff_max == 0 ? 0 : std::numeric_limits<double>::infinity()) : diff_max / ref_max;
    err.min_cosine = std::min(err.min_cosine, std::min(cosine, 1.0));
    err.max_rel_error = std::max(err.max_rel_error, rel);
  }
}

// "cosine 0.999990, rel. error 4.1e-03, 1.21x f32's time"
std::string figures(const PrecisionTrial& t, const PrecisionTrial& f32) {
  return "cosine " + fixed(t.min_cosine, 6) + ", rel. error " + sci(t.max_rel_error) + ", " +
         (f32.median_ms > 0 ? fixed(t.median_ms / f32.median_ms, 2) + "x f32's time" : "no time measured");
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

using Feeds = std::vector<std::map<std::string, Tensor>>;

// One run over every canary input set; the outputs of each when `outputs` is given.
Status run_all(const Session& s, const Feeds& feeds, std::vector<std::vector<Tensor>>* outputs) {
  for (const auto& f : feeds) {
    auto out = s.run(f);
    if (!out.ok()) return out.status();
    if (outputs) outputs->push_back(std::move(out).value());
  }
  return Status::Ok();
}

// The process's CPU time over one run of every set, not the wall time: the
// time other processes hold the cores would otherwise decide the choice (on a
// loaded 2-core machine wall-time medians of the same pair ranged 0.6x-15x).
double timed_run_ms(const Session& s, const Feeds& feeds, Status& status) {
  const std::clock_t c0 = std::clock();
  status = run_all(s, feeds, nullptr);
  return 1000.0 * static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC;
}

// The candidates in order of accuracy (the first of equal times wins):
// bf16x3 where AMX runs, bf16 where AVX512-BF16 (aarch64: BF16) does; a skipped one says why.
std::vector<PrecisionTrial> candidate_trials() {
  std::vector<PrecisionTrial> out(2);
  out[0].precision = "bf16x3";
  if (!cpu::cpu_kernels_have_amx_bf16x3())
    out[0].verdict = "not available: needs AMX-BF16 tiles (and the kernel's permission) and AVX512-BF16";
  out[1].precision = "bf16";
  if (const std::string why = cpu::cpu_kernels_bf16_unavailable(); !why.empty()) out[1].verdict = "not available: " + why;
  return out;
}

}  // namespace

void compare_canary_outputs(const std::vector<Tensor>& reference, const std::vector<Tensor>& candidate,
                            const std::vector<TensorInfo>& names, CanaryError& err) {
  if (reference.size() != candidate.size()) {
    err.mismatch = "a different number of outputs";
    return;
  }
  for (size_t i = 0; i < reference.size() && err.mismatch.empty(); ++i) {
    const Tensor& r = reference[i];
    const Tensor& c = candidate[i];
    const std::string name = i < names.size() ? names[i].name : std::to_string(i);
    if (r.dtype() != c.dtype() || r.shape() != c.shape()) {
      err.mismatch = "output '" + name + "' has another type or shape";
      return;
    }
    if (dtype_is_float(r.dtype())) {
      compare_rows(r, c, name, err);
    } else if (r.dtype() == DType::kString) {
      for (int64_t k = 0; k < r.size() && err.mismatch.empty(); ++k)
        if (r.data<std::string>()[k] != c.data<std::string>()[k]) err.mismatch = "output '" + name + "' differs";
    } else if (r.nbytes() && std::memcmp(r.raw_data(), c.raw_data(), r.nbytes()) != 0) {
      err.mismatch = "output '" + name + "' (" + dtype_name(r.dtype()) + ") differs from f32's";
    }
  }
}

Result<std::map<std::string, Tensor>> generate_canary_inputs(const std::vector<TensorInfo>& inputs) {
  std::mt19937_64 rng(20261129);
  std::uniform_real_distribution<float> fd(-1.0f, 1.0f);
  std::uniform_int_distribution<int> id(0, 1);
  std::map<std::string, int64_t> named;
  std::map<std::string, Tensor> feeds;
  for (const TensorInfo& in : inputs) {
    if (!in.is_tensor || in.dtype == DType::kString || in.dtype == DType::kUndefined)
      return Unsupported("input '" + in.name + "' is " + in.type + ", which canary inputs cannot be generated for");
    Shape shape;
    for (size_t d = 0; d < in.shape.size(); ++d) {
      int64_t n = in.shape[d] >= 0 ? in.shape[d] : (d == 0 ? 2 : 8);
      const std::string& sym = d < in.dim_names.size() ? in.dim_names[d] : std::string();
      if (in.shape[d] < 0 && !sym.empty() && sym != "?") n = named.emplace(sym, n).first->second;
      shape.push_back(n);
    }
    DLRT_ASSIGN_OR_RETURN(Tensor t, Tensor::allocate(in.dtype, shape));
    for (int64_t i = 0; i < t.size(); ++i) {
      const float f = fd(rng);
      const int v = id(rng);
      if (!set_element_from_double(t, i, dtype_is_float(in.dtype) ? f : v))
        return Unsupported(std::string("canary inputs of type ") + dtype_name(in.dtype) + " cannot be generated");
    }
    feeds[in.name] = std::move(t);
  }
  return feeds;
}

void decide_precision(PrecisionChoice& choice) {
  if (choice.trials.empty()) return;
  PrecisionTrial& f32 = choice.trials[0];
  const PrecisionBound& b = choice.bound;
  PrecisionTrial* best = nullptr;
  std::string summary;
  for (size_t i = 1; i < choice.trials.size(); ++i) {
    PrecisionTrial& t = choice.trials[i];
    if (!t.ran || !t.verdict.empty()) {
      summary += "; " + t.precision + " " + t.verdict;
      continue;
    }
    t.within_bound = t.min_cosine >= b.min_cosine && t.max_rel_error <= b.max_rel_error;
    t.faster = t.median_ms < (1 - b.speed_margin) * f32.median_ms;
    if (!t.within_bound)
      t.verdict = "over the bound (needs cosine >= " + fixed(b.min_cosine, 4) + ", rel. error <= " + sci(b.max_rel_error) + ")";
    else if (!t.faster)
      t.verdict = "not faster (needs < " + fixed(1 - b.speed_margin, 2) + "x f32's time)";
    else if (!best || t.median_ms < best->median_ms)
      best = &t;
    summary += "; " + t.precision + " " + figures(t, f32) + (t.verdict.empty() ? "" : ": " + t.verdict);
  }
  for (size_t i = 1; i < choice.trials.size(); ++i) {
    PrecisionTrial& t = choice.trials[i];
    if (&t != best && t.verdict.empty()) t.verdict = "slower than " + (best ? best->precision : std::string("f32"));
  }
  if (best) {
    best->verdict = "chosen";
    f32.verdict = "reference";
    choice.chosen = best->precision;
    choice.reason = best->precision + ": within the bound and the fastest" + summary;
  } else {
    f32.verdict = "chosen";
    choice.chosen = "f32";
    choice.reason = "f32: no other precision is both within the bound and faster" + summary;
  }
}

Result<AutoPrecision> choose_cpu_precision(const PrecisionSessionMaker& make, const Feeds& given, int rounds) {
  AutoPrecision out;
  PrecisionChoice& c = out.choice;
  c.automatic = true;
  c.chosen = "f32";
  c.rounds = rounds;
  DLRT_ASSIGN_OR_RETURN(out.session, make("f32"));
  PrecisionTrial f32;
  f32.precision = "f32";
  c.trials.push_back(f32);
  for (PrecisionTrial& t : candidate_trials()) c.trials.push_back(t);
  auto settle = [&](const std::string& why) -> Result<AutoPrecision> {  // f32 without a measurement
    c.trials[0].verdict = "chosen";
    c.reason = "f32: " + why;
    return std::move(out);
  };
  bool on_cpu = false;
  for (const PartitionReport& p : out.session->placement().partitions) on_cpu = on_cpu || p.backend == "cpu";
  if (!on_cpu) return settle("no partition runs on the CPU, whose precision this chooses");
  Feeds feeds = given;
  c.canary = given.empty() ? "generated from the inputs' shapes" : "given";
  if (feeds.empty()) {
    auto generated = generate_canary_inputs(out.session->inputs());
    if (!generated.ok()) return settle("no canary inputs (" + generated.status().message() + ")");
    feeds.push_back(std::move(generated).value());
  }
  c.canary_sets = static_cast<int>(feeds.size());
  std::vector<std::vector<Tensor>> reference;
  if (Status s = run_all(*out.session, feeds, &reference); !s.ok())
    return settle("the canary inputs do not run in f32 (" + s.message() + ")");
  c.trials[0].ran = true;
  // Each candidate the CPU runs, checked against f32 (its first run also warms it up).
  std::vector<std::unique_ptr<Session>> sessions(c.trials.size());
  for (size_t i = 1; i < c.trials.size(); ++i) {
    PrecisionTrial& t = c.trials[i];
    if (!t.verdict.empty()) continue;
    auto s = make(t.precision);
    if (!s.ok()) {
      t.verdict = "failed to build: " + s.status().message();
      continue;
    }
    std::vector<std::vector<Tensor>> got;
    if (Status st = run_all(**s, feeds, &got); !st.ok()) {
      t.verdict = "the canary run failed: " + st.message();
      continue;
    }
    CanaryError err;
    for (size_t k = 0; k < feeds.size(); ++k) compare_canary_outputs(reference[k], got[k], out.session->outputs(), err);
    t.ran = true;
    t.min_cosine = err.min_cosine;
    t.max_rel_error = std::isfinite(err.max_rel_error) ? err.max_rel_error : std::numeric_limits<double>::max();
    if (!err.mismatch.empty()) t.verdict = "over the bound: " + err.mismatch;
    sessions[i] = std::move(s).value();
  }
  sessions[0] = std::move(out.session);
  // Timed rounds, interleaved so that a slow moment of the machine hits every precision alike.
  std::vector<std::vector<double>> times(c.trials.size());
  for (int r = 0; r < rounds; ++r)
    for (size_t i = 0; i < sessions.size(); ++i) {
      if (!sessions[i]) continue;
      Status st;
      times[i].push_back(timed_run_ms(*sessions[i], feeds, st));
      if (!st.ok() && i > 0) c.trials[i].verdict = "the canary run failed: " + st.message();
    }
  for (size_t i = 0; i < c.trials.size(); ++i) c.trials[i].median_ms = median(times[i]);
  decide_precision(c);
  for (size_t i = 0; i < c.trials.size(); ++i)
    if (c.trials[i].precision == c.chosen) out.session = std::move(sessions[i]);
  return out;
}

}  // namespace dlrt
