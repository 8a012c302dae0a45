// Server metrics in the Prometheus text exposition format (version 0.0.4).
// Thread-safe: every method may be called from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace dlrt::embed {

// Cumulative histogram with fixed upper bounds (+Inf implied).
class Histogram {
 public:
  explicit Histogram(std::vector<double> bounds);
  void observe(double v);
  // Appends NAME_bucket{le=...}, NAME_sum, NAME_count lines; `labels` is
  // either empty or `key="value",` pairs without braces.
  void render(std::string& out, const std::string& name, const std::string& labels = "") const;
  uint64_t count() const { return count_; }
  // Adds `other`'s observations (same bounds; others are ignored).
  void add(const Histogram& other);
  // Smallest bound with at least q of the observations at or below it.
  double quantile_bound(double q) const;

 private:
  std::vector<double> bounds_;
  std::vector<uint64_t> counts_;  // per bucket (not cumulative), last = +Inf
  double sum_ = 0;
  uint64_t count_ = 0;
};

// One served model's values sampled at scrape time.
struct ModelGauges {
  std::string model;
  size_t queue_depth = 0;
  size_t batches_running = 0;
  bool ready = false;   // loaded and serving
  bool failed = false;  // could not be loaded
  bool degraded = false;
};

// Values sampled at scrape time (the totals over every served model).
struct MetricsGauges {
  size_t queue_depth = 0;         // inputs waiting for a batch
  size_t batches_running = 0;
  size_t requests_in_flight = 0;
  bool degraded = false;
  bool ready = false;
  bool draining = false;
  std::vector<ModelGauges> models;
};

class Metrics {
 public:
  Metrics();
  // One HTTP request finished with `status` after `seconds`.
  void observe_request(const std::string& route, int status, double seconds);
  // One batch ran: inputs, padded tokens, where (device spec) and how long.
  void observe_batch(size_t inputs, size_t padded_tokens, size_t tokens, const std::string& device, double seconds,
                     bool ok);
  // A request was turned away because the queue was full.
  void observe_rejected();
  // The same per served model (the dlrt_model_* series, labelled model="NAME"):
  // a request that went to `model`, and one of its batches.
  void observe_model_request(const std::string& model, const std::string& route, int status);
  void observe_model_batch(const std::string& model, size_t inputs, size_t tokens, bool ok);

  // dlrt's metrics (dlrt_*), then the same counters under text-embeddings-
  // inference's names (te_*, docs/migrate.md) for dashboards made for TEI.
  std::string render(const MetricsGauges& gauges) const;

  uint64_t requests_total() const;
  uint64_t errors_total() const;

 private:
  struct PerModel;
  // Under mu_: the dlrt_model_* series, and TEI's names (te_*) for dlrt's counters.
  void render_models(std::string& out, const MetricsGauges& g) const;
  void render_tei(std::string& out, const MetricsGauges& g) const;

  mutable std::mutex mu_;
  std::map<std::pair<std::string, int>, uint64_t> requests_;  // (route, status) -> count
  std::map<std::string, Histogram> latency_;                   // route -> seconds
  Histogram batch_size_;
  Histogram batch_tokens_;
  Histogram batch_seconds_;
  std::map<std::string, uint64_t> device_batches_, device_inputs_, device_failures_;
  uint64_t inputs_ = 0, tokens_ = 0, rejected_ = 0;
  uint64_t failed_inputs_ = 0;  // inputs of batches that failed
  struct PerModel {
    std::map<std::pair<std::string, int>, uint64_t> requests;  // (route, status) -> count
    uint64_t inputs = 0, tokens = 0, batches = 0, failures = 0;
  };
  std::map<std::string, PerModel> models_;
};

}  // namespace dlrt::embed
