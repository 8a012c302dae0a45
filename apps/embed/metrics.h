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

// Values sampled at scrape time.
struct MetricsGauges {
  size_t queue_depth = 0;         // inputs waiting for a batch
  size_t batches_running = 0;
  size_t requests_in_flight = 0;
  bool degraded = false;
  bool ready = false;
  bool draining = false;
};

class Metrics {
  void render_tei(std::string& out, const MetricsGauges& gauges) const;


 public:
  Metrics();
  // One HTTP request finished with `status` after `seconds`.
  void observe_request(const std::string& route, int status, double seconds);
  // One batch ran: inputs, padded tokens, where (device spec) and how long.
  void observe_batch(size_t inputs, size_t padded_tokens, size_t tokens, const std::string& device, double seconds,
                     bool ok);
  // A request was turned away because the queue was full.
  void observe_rejected();

  // dlrt's metrics (dlrt_*), then the same counters under text-embeddings-
  // inference's names (te_*, docs/migrate.md) for dashboards made for TEI.
  std::string render(const MetricsGauges& gauges) const;

  uint64_t requests_total() const;
  uint64_t errors_total() const;

 private:
  mutable std::mutex mu_;
  std::map<std::pair<std::string, int>, uint64_t> requests_;  // (route, status) -> count
  std::map<std::string, Histogram> latency_;                   // route -> seconds
  Histogram batch_size_;
  Histogram batch_tokens_;
  Histogram batch_seconds_;
  std::map<std::string, uint64_t> device_batches_, device_inputs_, device_failures_;
  uint64_t inputs_ = 0, tokens_ = 0, rejected_ = 0;
  uint64_t failed_inputs_ = 0;  // inputs of batches that failed
};

}  // namespace dlrt::embed
