// The embedding HTTP server behind `dlrt serve` (cpp-httplib). Its routes are
// one table (routes.cpp: path, methods, the capability the model must have, a
// typed request parser, a free-function handler, the OpenAPI entry); the
// server installs them from it (server_dispatch.cpp), and GET /openapi.json
// and GET /docs describe them. OpenAI's /v1/embeddings, TEI's /embed,
// /embed_sparse, /embed_all, /similarity, /tokenize, /decode, /rerank,
// /predict, Cohere's and Jina's /v1/rerank, /v1/models, /info, the probes
// /health, /ready, /live, /metrics, and TEI's root routes: POST / and
// /invocations as the route of the model's kind, GET / and /ping as its
// health, /api-doc/openapi.json (docs/serve.md).
//
// Several models (model_registry.h): a request to a model's route (per_model
// in the table) names one by the body's "model" field or a /models/NAME prefix
// on the route (/models/NAME/embed, /models/NAME/v1/embeddings,
// /models/NAME/health, ...); none names the default. An unknown name is a 404
// that lists the served ones; a model whose kind lacks the route's capability
// is a 400 that names its kind (models/kind.h). Every model's batches and
// HTTP-thread runs share pool_size run slots (batcher.h).
//
// Requests are tokenized on the HTTP thread (so limits answer at once), then
// queued for dynamic batching (batcher.h). Errors are JSON: 400 bad JSON,
// 413 body or input count over the limit, 422 bad fields or an input over
// the token limit, 429 + Retry-After when the queue is full, 503 while
// loading/draining or when strict mode forbids the CPU fallback, 504 when a
// request is not answered within request_timeout_ms: its deadline, which
// also stops its model run (RunOptions) so the worker is free again.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "dlrt/session.h"
#include "dlrt/status.h"
#include "embed/serve/batcher.h"
#include "embed/serve/call.h"
#include "embed/models/embedder.h"
#include "embed/models/kind.h"
#include "embed/models/model.h"
#include "embed/models/registry.h"
#include "embed/serve/metrics.h"
#include "embed/serve/model_registry.h"
#include "embed/serve/handlers.h"
#include "embed/serve/serve_log.h"
#include "embed/serve/service_config.h"

namespace httplib {
class Server;
}

namespace dlrt::embed {

struct HealthInfo {
  std::string status;   // loading, ok, warming, degraded, draining, failed
  std::string backend;  // where the model runs now (the accelerator's backend, or cpu)
  std::string device;   // "cpu:0", "openvino:GPU.0"
  bool degraded = false;
  std::string since;    // ISO 8601 UTC: when this status (and reason) began
  std::string reason;   // why degraded / warming / failed; empty when ok
  int http_status = 200;
};

// The device a run's report says did the work: the first partition not on
// the CPU, else cpu:0.
std::string report_device(const dlrt::RunReport& report);

class EmbedServer {
 public:
  explicit EmbedServer(ServiceConfig config);
  ~EmbedServer();  // shutdown()
  EmbedServer(const EmbedServer&) = delete;
  EmbedServer& operator=(const EmbedServer&) = delete;

  // Binds host:port (port 0: any free port). kIoError when it cannot.
  Status bind();
  int port() const { return port_; }
  // Serves until shutdown(), then stops the batcher. Call after bind(), once.
  void run();
  // From now on embedding routes are served by `model` (loading until then):
  // the default model, or the one served as `name` (config's models; "" for
  // a bare folder). Unknown names are ignored.
  void set_model(std::shared_ptr<const EmbedModel> model);
  void set_model(const std::string& name, std::shared_ptr<const EmbedModel> model);
  // The model could not be loaded: its /health answers 503 "failed" with the
  // reason; the other models keep serving.
  void set_load_error(const std::string& reason);
  void set_load_error(const std::string& name, const std::string& reason);
  // Graceful stop: from now on requests get 503 (embedding routes) and
  // /ready 503, every response closes its connection; requests already
  // queued or running finish, connections already accepted are answered.
  // Returns at once: a drain thread waits for the accepted connections (at
  // most drain_timeout_ms), then closes the listening socket, which ends run().
  // Any thread; idempotent.
  void shutdown();
  bool draining() const { return draining_.load(); }

  // The server's health: the worst of its models' (draining, loading while
  // any loads, failed when all failed, degraded when some failed), see docs/serve-models.md.
  HealthInfo health() const;
  // One model's; nullopt for a name not served.
  std::optional<HealthInfo> model_health(const std::string& name) const;
  // The state of one model (no draining, no "since").
  HealthInfo model_state(const ModelRef& ref) const;
  // Requests being handled now, and when the server started (/metrics, /v1/models).
  size_t requests_in_flight() const { return in_flight_.load(); }
  std::chrono::system_clock::time_point started() const { return started_; }
  const ModelRegistry& models() const { return registry_; }
  const Metrics& metrics() const { return metrics_; }
  // The server's log (cmd_serve writes its lifecycle lines there too).
  ServeLog& log() { return log_; }
  const ServiceConfig& config() const { return config_; }

 private:
  friend class Call;  // a request's view of the server (call.h)

  // server_dispatch.cpp: the routes installed from the table (routes.h), and
  // what every request passes before and after its handler (request id, CORS,
  // API key, model prefix, logging).
  void install_routes();
  void install_hooks();
  // `h.since`: when h's status and reason (for model `key`, "" the server's) began.
  void stamp_since(const std::string& key, HealthInfo& h) const;
  // The padded tokens one run of model m may take: max_batch_tokens, and
  // within max_batch_mb of its per-token outputs (at least 1).
  size_t batch_tokens(const EmbedModel& m) const {
    const size_t row = m.token_row_bytes();
    const size_t budget = config_.max_batch_mb > (SIZE_MAX >> 20) ? SIZE_MAX : config_.max_batch_mb << 20;
    const size_t tokens = std::max(config_.max_batch_tokens, size_t{1});
    return row == 0 ? tokens : std::clamp(budget / row, size_t{1}, tokens);
  }
  // The deadline of the request on this thread: request_timeout_ms from its
  // arrival (http_server.h), which covers reading its body and tokenizing.
  std::chrono::steady_clock::time_point request_deadline() const;
  void on_batch(size_t index, const std::string& name, const BatchInfo& info);
  void set_model_at(size_t index, std::shared_ptr<const EmbedModel> model);
  // The default model and its batcher.
  std::shared_ptr<const EmbedModel> model() const;
  Batcher* batcher() const;

  ServiceConfig config_;
  std::unique_ptr<httplib::Server> http_;
  int port_ = 0;
  Metrics metrics_;
  ServeLog log_;

  mutable std::mutex mu_;
  ModelRegistry registry_;
  // Model runs at once, every model's together (pool_size).
  std::shared_ptr<RunSlots> slots_;
  // /health "since", per model ("" the server's): the status/reason last seen and when it began.
  mutable std::map<std::string, std::pair<std::string, std::chrono::system_clock::time_point>> health_since_;
  std::chrono::system_clock::time_point started_ = std::chrono::system_clock::now();

  std::atomic<bool> draining_{false};
  std::atomic<bool> bound_{false};
  std::atomic<int> run_state_{0};  // 0 not started, 1 in run(), 2 run() done
  std::atomic<size_t> in_flight_{0};
  // Connections accepted and not yet finished (queued or being served): a
  // drain waits for them before closing the listening socket, which would
  // drop the queued ones unanswered.
  std::shared_ptr<std::atomic<size_t>> connections_ = std::make_shared<std::atomic<size_t>>(0);
  // Accepted connections not yet on a thread (the same pool).
  std::shared_ptr<std::atomic<size_t>> waiting_connections_ = std::make_shared<std::atomic<size_t>>(0);
  // The listening socket (bind()), for its accept queue during a drain; -1 when not found.
  int listen_fd_ = -1;
  std::thread drainer_;
};

}  // namespace dlrt::embed
