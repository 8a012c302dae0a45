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
// HTTP-thread runs share pool_size run slots (run_slots.h).
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
#include "embed/models/classifier.h"
#include "embed/models/embedder.h"
#include "embed/models/kind.h"
#include "embed/serve/metrics.h"
#include "embed/serve/model_registry.h"
#include "embed/serve/request.h"
#include "embed/serve/run_slots.h"
#include "embed/serve/serve_log.h"
#include "embed/serve/service_config.h"

namespace httplib {
class Server;
}

namespace dlrt::embed {

// A model as the server runs it: the Embedder (embedder_model()), a
// Classifier (classifier_model()), a MultiVectorEmbedder (multi_vector_model()),
// as open_model() picks by the folder's kind, or a test double. The routes
// ask kind() for what it can do (models/kind.h: capabilities, refusals).
// Every method is called from many threads at once.
class EmbedModel {
 public:
  virtual ~EmbedModel() = default;
  // The model's kind. The default reads the older flags below (test doubles set those).
  virtual ModelKind kind() const {
    if (is_classifier()) return reranker_kind() == "llm" ? ModelKind::kLlmReranker : ModelKind::kCrossEncoder;
    if (is_sparse()) return ModelKind::kSparse;
    return is_multi_vector() ? ModelKind::kMultiVector : ModelKind::kDense;
  }
  // One text, truncated to max_length(); *truncated says whether it was longer.
  virtual Result<Encoding> tokenize(std::string_view text, bool* truncated) const = 0;
  // `bounds` bound the model run (the request deadline): a run past them
  // returns kCancelled.
  virtual Result<EmbedResult> embed_encoded(const std::vector<Encoding>& batch, const dlrt::RunOptions& bounds) const = 0;
  virtual size_t dimension() const = 0;
  virtual std::string model_name() const = 0;
  virtual size_t max_length() const = 0;
  virtual dlrt::RunReport placement() const = 0;
  // embed_encoded's vectors are pooled but not normalised; the server
  // normalises per request, by default when normalizes() (the folder asks for it).
  virtual bool normalizes() const { return false; }
  virtual std::string pooling() const { return ""; }
  // True when a text's result would depend on its batch-mates (dynamic
  // quantization that cannot take scales per text, see batch_dependence.h):
  // the batcher then runs one input per batch. batching() says which rule applies (/info's "batching").
  virtual bool batch_dependent() const { return false; }
  virtual std::string batching() const { return "padded batches"; }
  // The text of a named prompt (config_sentence_transformers.json), and the
  // name used when a request names none ("" for none).
  virtual std::optional<std::string> prompt(const std::string& name) const { return std::nullopt; }
  virtual std::string default_prompt_name() const { return ""; }
  virtual std::vector<std::string> prompt_names() const { return {}; }
  // The folder's similarity function (Embedder::similarity_fn_name), for /similarity.
  virtual std::string similarity_fn_name() const { return "cosine"; }
  // Token ids are in [0, vocab_size()) (0: not known, not checked).
  virtual size_t vocab_size() const { return 0; }
  // The bytes a padded token adds to a run's outputs (its widest per-token
  // output row; 0: not known), for the memory budget max_batch_mb.
  virtual size_t token_row_bytes() const { return 0; }
  // tokenize() that also gives the text's ids before the cut in *tokens (0:
  // not known), from the same pass (a 413's count without tokenizing twice).
  virtual Result<Encoding> tokenize_counted(std::string_view text, bool* truncated, size_t* tokens) const {
    *tokens = 0;
    return tokenize(text, truncated);
  }
  // One text as tokenize() does, with each token's byte offsets [start, stop)
  // into `text` in `offsets` ((0, 0) for the special tokens the tokenizer
  // adds); the default leaves `offsets` empty (not known).
  virtual Result<Encoding> tokenize_with_offsets(std::string_view text,
                                                 std::vector<std::pair<size_t, size_t>>& offsets) const {
    offsets.clear();
    return tokenize(text, nullptr);
  }
  // A token's text and whether it is a special token (for /tokenize).
  virtual std::string token_text(int64_t id) const { return ""; }
  virtual bool is_special_token(int64_t id) const { return false; }
  // Text of token ids (the tokenizer's decoder), for /decode.
  virtual Result<std::string> decode(const std::vector<int64_t>& ids, bool skip_special_tokens) const {
    return Unsupported("this model's tokenizer cannot decode");
  }
  // Sequence classifiers (cross-encoders): /rerank and /predict instead of
  // the embedding routes. labels() names the logits' columns.
  virtual bool is_classifier() const { return false; }
  // Sparse (SPLADE) models: embed_encoded's vectors are vocabulary-wide and
  // mostly zero; the sparse routes answer them, the dense ones refuse.
  virtual bool is_sparse() const { return false; }
  virtual std::vector<std::string> labels() const { return {}; }
  virtual Result<Encoding> tokenize_pair(std::string_view first, std::string_view second, bool* truncated) const {
    return Unsupported("this model does not take text pairs");
  }
  // A (query, document) pair for /rerank and /v1/rerank with a task
  // instruction ("": the model's default); only LLM rerankers take one.
  virtual Result<Encoding> tokenize_rerank(std::string_view query, std::string_view document,
                                           const std::string& instruction, bool* truncated) const {
    if (!instruction.empty()) return InvalidArgument("'instruction' is for LLM rerankers; the served model takes none");
    return tokenize_pair(query, document, truncated);
  }
  // tokenize_rerank of (query, documents[i]) for every document, the query
  // tokenized once where the model allows; (*truncated)[i] says whether pair
  // i was cut. kOutOfRange: the query alone fills the model's length.
  virtual Result<std::vector<Encoding>> tokenize_rerank_all(std::string_view query,
                                                            const std::vector<std::string>& documents,
                                                            const std::string& instruction,
                                                            std::vector<uint8_t>* truncated) const {
    std::vector<Encoding> out;
    if (truncated) truncated->assign(documents.size(), 0);
    for (size_t i = 0; i < documents.size(); ++i) {
      bool cut = false;
      auto e = tokenize_rerank(query, documents[i], instruction, &cut);
      if (!e.ok()) return e.status();
      if (truncated) (*truncated)[i] = cut ? 1 : 0;
      out.push_back(std::move(e).value());
    }
    return out;
  }
  // "llm" for an LLM reranker (llm_reranker.h), "" otherwise (/info).
  virtual std::string reranker_kind() const { return ""; }
  // Logits, one row per encoding; `bounds` as embed_encoded's.
  virtual Result<std::vector<std::vector<float>>> classify(const std::vector<Encoding>& batch,
                                                           const dlrt::RunOptions& bounds) const {
    return Unsupported("this model is not a classifier");
  }
  // Per-token vectors (/embed_all). An embedding model gives its
  // transformer's token vectors (is_query does not apply); a multi-vector
  // model (ColBERT) its own, for queries or documents, and /rerank scores by MaxSim.
  virtual bool is_multi_vector() const { return false; }
  virtual Result<Encoding> tokenize_tokens(std::string_view text, bool is_query, bool* truncated) const {
    return tokenize(text, truncated);
  }
  virtual Result<TokenEmbedResult> embed_tokens(const std::vector<Encoding>& batch, bool is_query,
                                                const dlrt::RunOptions& bounds) const {
    return Unsupported("this model does not give per-token vectors");
  }
};

std::shared_ptr<const EmbedModel> embedder_model(std::shared_ptr<const Embedder> embedder);
std::shared_ptr<const EmbedModel> classifier_model(std::shared_ptr<const Classifier> classifier);
class MultiVectorEmbedder;
std::shared_ptr<const EmbedModel> multi_vector_model(std::shared_ptr<const MultiVectorEmbedder> embedder);

// The registry of kinds for dlrt serve: the folder `path` opened as its kind
// (detect_kind) says, with that kind's model behind the server.
Result<std::shared_ptr<const EmbedModel>> open_model(const std::string& path, const EmbedderOptions& options);

// Runs one short batch so the first request does not pay for first-run costs.
Status warm_up(const EmbedModel& model);

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
