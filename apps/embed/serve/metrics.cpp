#include "embed/serve/metrics.h"

#include <algorithm>
#include <charconv>
#include <cmath>

namespace dlrt::embed {
namespace {

std::string num(double v) {
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[64];
  auto [p, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc() ? std::string(buf, p) : "NaN";
}

// Label values: backslash, quote and newline escaped.
std::string label(const std::string& v) {
  std::string s;
  for (char c : v) {
    if (c == '\\' || c == '"') s += '\\';
    if (c == '\n') {
      s += "\\n";
      continue;
    }
    s += c;
  }
  return s;
}

void header(std::string& out, const std::string& name, const char* type, const char* help) {
  out += "# HELP " + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
}

const std::vector<double> kLatencyBounds = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                                            0.25,  0.5,    1,     2.5,  5,     10};

}  // namespace

Histogram::Histogram(std::vector<double> bounds) : bounds_(std::move(bounds)), counts_(bounds_.size() + 1, 0) {}

void Histogram::observe(double v) {
  size_t i = std::lower_bound(bounds_.begin(), bounds_.end(), v) - bounds_.begin();
  ++counts_[i];
  sum_ += v;
  ++count_;
}

void Histogram::render(std::string& out, const std::string& name, const std::string& labels) const {
  uint64_t cum = 0;
  for (size_t i = 0; i <= bounds_.size(); ++i) {
    cum += counts_[i];
    out += name + "_bucket{" + labels + "le=\"" + num(i < bounds_.size() ? bounds_[i] : INFINITY) + "\"} " +
           std::to_string(cum) + "\n";
  }
  std::string l = labels.empty() ? "" : "{" + labels.substr(0, labels.size() - 1) + "}";
  out += name + "_sum" + l + " " + num(sum_) + "\n";
  out += name + "_count" + l + " " + std::to_string(count_) + "\n";
}

void Histogram::add(const Histogram& other) {
  if (other.bounds_ != bounds_) return;
  for (size_t i = 0; i < counts_.size(); ++i) counts_[i] += other.counts_[i];
  sum_ += other.sum_;
  count_ += other.count_;
}

double Histogram::quantile_bound(double q) const {
  if (count_ == 0) return 0;
  uint64_t need = static_cast<uint64_t>(std::ceil(q * static_cast<double>(count_)));
  uint64_t cum = 0;
  for (size_t i = 0; i < bounds_.size(); ++i) {
    cum += counts_[i];
    if (cum >= need) return bounds_[i];
  }
  return INFINITY;
}

Metrics::Metrics()
    : batch_size_({1, 2, 4, 8, 16, 32, 64, 128, 256}),
      batch_tokens_({64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768}),
      batch_seconds_(kLatencyBounds) {}

void Metrics::observe_request(const std::string& route, int status, double seconds) {
  std::lock_guard<std::mutex> lk(mu_);
  ++requests_[{route, status}];
  auto it = latency_.find(route);
  if (it == latency_.end()) it = latency_.emplace(route, Histogram(kLatencyBounds)).first;
  it->second.observe(seconds);
}

void Metrics::observe_batch(size_t inputs, size_t padded_tokens, size_t tokens, const std::string& device,
                            double seconds, bool ok) {
  std::lock_guard<std::mutex> lk(mu_);
  batch_size_.observe(static_cast<double>(inputs));
  batch_tokens_.observe(static_cast<double>(padded_tokens));
  batch_seconds_.observe(seconds);
  if (ok) {
    ++device_batches_[device];
    device_inputs_[device] += inputs;
    inputs_ += inputs;
    tokens_ += tokens;
  } else {
    ++device_failures_[device];
    failed_inputs_ += inputs;
  }
}

void Metrics::observe_rejected() {
  std::lock_guard<std::mutex> lk(mu_);
  ++rejected_;
}

void Metrics::observe_model_request(const std::string& model, const std::string& route, int status) {
  std::lock_guard<std::mutex> lk(mu_);
  ++models_[model].requests[{route, status}];
}

void Metrics::observe_model_batch(const std::string& model, size_t inputs, size_t tokens, bool ok) {
  std::lock_guard<std::mutex> lk(mu_);
  PerModel& m = models_[model];
  if (ok) {
    ++m.batches;
    m.inputs += inputs;
    m.tokens += tokens;
  } else {
    ++m.failures;
  }
}

uint64_t Metrics::requests_total() const {
  std::lock_guard<std::mutex> lk(mu_);
  uint64_t n = 0;
  for (const auto& [k, v] : requests_) n += v;
  return n;
}

uint64_t Metrics::errors_total() const {
  std::lock_guard<std::mutex> lk(mu_);
  uint64_t n = 0;
  for (const auto& [k, v] : requests_)
    if (k.second >= 400) n += v;
  return n;
}

// The dlrt_model_* series: the above per served model (labelled model="NAME").
void Metrics::render_models(std::string& out, const MetricsGauges& g) const {
  auto m = [](const std::string& model) { return "{model=\"" + label(model) + "\""; };
  header(out, "dlrt_model_requests_total", "counter", "HTTP requests by model, route and status code.");
  for (const auto& [model, pm] : models_)
    for (const auto& [k, v] : pm.requests)
      out += "dlrt_model_requests_total" + m(model) + ",route=\"" + label(k.first) + "\",code=\"" +
             std::to_string(k.second) + "\"} " + std::to_string(v) + "\n";
  auto counter = [&](const char* name, const char* help, uint64_t PerModel::*field) {
    header(out, name, "counter", help);
    for (const auto& [model, pm] : models_) out += name + m(model) + "} " + std::to_string(pm.*field) + "\n";
  };
  counter("dlrt_model_inputs_total", "Inputs embedded, by model.", &PerModel::inputs);
  counter("dlrt_model_tokens_total", "Tokens embedded (no padding), by model.", &PerModel::tokens);
  counter("dlrt_model_batches_total", "Batches run, by model.", &PerModel::batches);
  counter("dlrt_model_batch_failures_total", "Batches that failed, by model.", &PerModel::failures);
  auto gauge = [&](const char* name, const char* help, auto value) {
    header(out, name, "gauge", help);
    for (const ModelGauges& mg : g.models) out += name + m(mg.model) + "} " + std::to_string(value(mg)) + "\n";
  };
  gauge("dlrt_model_queue_depth", "Inputs waiting for a batch, by model.", [](const ModelGauges& x) { return x.queue_depth; });
  gauge("dlrt_model_batches_running", "Batches running now, by model.", [](const ModelGauges& x) { return x.batches_running; });
  gauge("dlrt_model_ready", "1 while the model is loaded and serving.", [](const ModelGauges& x) { return int(x.ready); });
  gauge("dlrt_model_load_failed", "1 when the model could not be loaded.", [](const ModelGauges& x) { return int(x.failed); });
  gauge("dlrt_model_degraded", "1 while part of the model runs on the CPU instead of its accelerator.",
        [](const ModelGauges& x) { return int(x.degraded); });
}

std::string Metrics::render(const MetricsGauges& g) const {
  std::lock_guard<std::mutex> lk(mu_);
  std::string out;
  header(out, "dlrt_http_requests_total", "counter", "HTTP requests by route and status code.");
  for (const auto& [k, v] : requests_)
    out += "dlrt_http_requests_total{route=\"" + label(k.first) + "\",code=\"" + std::to_string(k.second) + "\"} " +
           std::to_string(v) + "\n";
  header(out, "dlrt_http_errors_total", "counter", "HTTP requests answered with a status of 400 or more.");
  for (const auto& [k, v] : requests_)
    if (k.second >= 400)
      out += "dlrt_http_errors_total{route=\"" + label(k.first) + "\",code=\"" + std::to_string(k.second) +
             "\"} " + std::to_string(v) + "\n";
  header(out, "dlrt_http_request_duration_seconds", "histogram", "HTTP request latency by route.");
  for (const auto& [route, h] : latency_) h.render(out, "dlrt_http_request_duration_seconds", "route=\"" + label(route) + "\",");
  header(out, "dlrt_queue_rejected_total", "counter", "Requests answered 429 because the queue was full.");
  out += "dlrt_queue_rejected_total " + std::to_string(rejected_) + "\n";
  header(out, "dlrt_batch_size", "histogram", "Inputs per batch.");
  batch_size_.render(out, "dlrt_batch_size");
  header(out, "dlrt_batch_padded_tokens", "histogram", "Padded tokens per batch (inputs x longest input).");
  batch_tokens_.render(out, "dlrt_batch_padded_tokens");
  header(out, "dlrt_batch_duration_seconds", "histogram", "Time to run one batch.");
  batch_seconds_.render(out, "dlrt_batch_duration_seconds");
  header(out, "dlrt_inputs_total", "counter", "Inputs embedded.");
  out += "dlrt_inputs_total " + std::to_string(inputs_) + "\n";
  header(out, "dlrt_tokens_total", "counter", "Tokens embedded (no padding).");
  out += "dlrt_tokens_total " + std::to_string(tokens_) + "\n";
  header(out, "dlrt_device_batches_total", "counter", "Batches run, by the device that ran them.");
  for (const auto& [d, v] : device_batches_)
    out += "dlrt_device_batches_total{device=\"" + label(d) + "\"} " + std::to_string(v) + "\n";
  header(out, "dlrt_device_inputs_total", "counter", "Inputs embedded, by device.");
  for (const auto& [d, v] : device_inputs_)
    out += "dlrt_device_inputs_total{device=\"" + label(d) + "\"} " + std::to_string(v) + "\n";
  header(out, "dlrt_device_batch_failures_total", "counter", "Batches that failed, by device.");
  for (const auto& [d, v] : device_failures_)
    out += "dlrt_device_batch_failures_total{device=\"" + label(d) + "\"} " + std::to_string(v) + "\n";
  header(out, "dlrt_queue_depth", "gauge", "Inputs waiting for a batch.");
  out += "dlrt_queue_depth " + std::to_string(g.queue_depth) + "\n";
  header(out, "dlrt_batches_running", "gauge", "Batches running now.");
  out += "dlrt_batches_running " + std::to_string(g.batches_running) + "\n";
  header(out, "dlrt_requests_in_flight", "gauge", "Embedding requests being served now.");
  out += "dlrt_requests_in_flight " + std::to_string(g.requests_in_flight) + "\n";
  header(out, "dlrt_degraded", "gauge", "1 while part of the model runs on the CPU instead of its accelerator.");
  out += std::string("dlrt_degraded ") + (g.degraded ? "1" : "0") + "\n";
  header(out, "dlrt_ready", "gauge", "1 once the model is loaded and warm.");
  out += std::string("dlrt_ready ") + (g.ready ? "1" : "0") + "\n";
  header(out, "dlrt_draining", "gauge", "1 during graceful shutdown.");
  out += std::string("dlrt_draining ") + (g.draining ? "1" : "0") + "\n";
  render_models(out, g);
  render_tei(out, g);
  return out;
}

// TEI's names for the counters above: requests of the inference routes
// (embeddings, similarity, rerank, predict) with failures by kind, inputs
// embedded, the queue and the batches. Counters keep TEI's names (no _total).
void Metrics::render_tei(std::string& out, const MetricsGauges& g) const {
  auto inference_route = [](const std::string& r) {
    return r == "/v1/embeddings" || r == "/embeddings" || r == "/embed" || r == "/similarity" || r == "/rerank" ||
           r == "/predict";
  };
  auto embedding_route = [](const std::string& r) {
    return r == "/v1/embeddings" || r == "/embeddings" || r == "/embed" || r == "/similarity";
  };
  uint64_t count = 0, success = 0;
  std::map<std::string, uint64_t> failures = {{"validation", 0}, {"overloaded", 0}, {"inference", 0}};
  for (const auto& [k, v] : requests_) {
    if (!inference_route(k.first)) continue;
    count += v;
    if (k.second < 400) success += v;
    else failures[k.second == 429 ? "overloaded" : k.second < 500 ? "validation" : "inference"] += v;
  }
  header(out, "te_request_count", "counter", "Inference requests (TEI's name; dlrt_http_requests_total by route).");
  out += "te_request_count " + std::to_string(count) + "\n";
  header(out, "te_request_success", "counter", "Inference requests answered 2xx.");
  out += "te_request_success " + std::to_string(success) + "\n";
  header(out, "te_request_failure", "counter",
         "Inference requests refused or failed: validation (4xx), overloaded (429), inference (5xx).");
  for (const auto& [err, v] : failures) out += "te_request_failure{err=\"" + err + "\"} " + std::to_string(v) + "\n";
  header(out, "te_embed_count", "counter", "Inputs sent to the model (dlrt_inputs_total plus those of failed batches).");
  out += "te_embed_count " + std::to_string(inputs_ + failed_inputs_) + "\n";
  header(out, "te_embed_success", "counter", "Inputs embedded (dlrt_inputs_total).");
  out += "te_embed_success " + std::to_string(inputs_) + "\n";
  Histogram embed_seconds(kLatencyBounds);
  for (const auto& [route, h] : latency_)
    if (embedding_route(route)) embed_seconds.add(h);
  header(out, "te_embed_duration", "histogram", "Embedding request latency, seconds (all embedding routes).");
  embed_seconds.render(out, "te_embed_duration");
  header(out, "te_embed_inference_duration", "histogram", "Time to run one batch, seconds (dlrt_batch_duration_seconds).");
  batch_seconds_.render(out, "te_embed_inference_duration");
  header(out, "te_batch_next_size", "histogram", "Inputs per batch (dlrt_batch_size).");
  batch_size_.render(out, "te_batch_next_size");
  header(out, "te_batch_next_tokens", "histogram", "Padded tokens per batch (dlrt_batch_padded_tokens).");
  batch_tokens_.render(out, "te_batch_next_tokens");
  header(out, "te_queue_size", "gauge", "Inputs waiting for a batch (dlrt_queue_depth).");
  out += "te_queue_size " + std::to_string(g.queue_depth) + "\n";
}

}  // namespace dlrt::embed
