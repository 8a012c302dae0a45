// One request as a route's handler sees it (routes.h): the shape its errors
// take (OpenAI's or TEI's), the model it goes to, and the server's bounds on
// it (its deadline, the run slots every model shares, the model's batcher).
// A Call lives on the HTTP thread that serves its request, for that request.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "dlrt/session.h"
#include "dlrt/status.h"
#include "embed/serve/batcher.h"
#include "embed/serve/model_registry.h"
#include "embed/serve/service_config.h"
#include "embed/tokenizer/encoding.h"

namespace dlrt::embed {

class EmbedModel;
class EmbedServer;
struct EmbedRequest;
struct RequestResult;

// The shape of a route's errors: OpenAI's {"error": {"message", "type", "code"}}
// or TEI's {"error", "error_type"}.
enum class Api { kOpenAI, kTei };

// What a route answers.
struct Reply {
  int status = 200;
  std::string body;
  std::string content_type = "application/json";
  int retry_after_s = 0;
  std::string cache_control;  // the Cache-Control header, when set
  std::string etag;           // the ETag (quoted); a GET whose If-None-Match names it is answered 304
};

// An error answer in `api`'s shape.
Reply error_reply(Api api, int status, const std::string& type, const std::string& message);

class Call {
 public:
  Call(EmbedServer& server, Api api);

  Api api() const { return api_; }
  EmbedServer& server() const { return server_; }
  const ServiceConfig& config() const { return config_; }

  // The model a request names: a /models/NAME/ route prefix, else its body's
  // "model" field (422 when that is not a string), else the default; once
  // found, ref() returns it. The error answer otherwise (404 unknown, 503
  // loading or failed).
  std::optional<Reply> find_model(const nlohmann::json& body);
  // The same with the body's name given (`body_model`, "" for none); nullopt with *error set.
  std::optional<ModelRef> model_named(const std::string& body_model, Reply* error) const;
  // The model find_model found (a model route's handler runs only then).
  const ModelRef& ref() const { return *ref_; }
  const EmbedModel& model() const { return *ref_->model; }
  // How an error names the model: "model 'NAME'" when several are served, else "the served model".
  std::string model_label() const;
  // The token limit per input of the model (its max_input_tokens, else the
  // server's; 0: the model's maximum).
  size_t input_token_limit() const;

  Reply error(int status, const std::string& type, const std::string& message) const {
    return error_reply(api_, status, type, message);
  }
  // A 422 invalid_request_error.
  Reply invalid(const std::string& message) const { return error(422, "invalid_request_error", message); }
  // A failed model run: 504 past the request's deadline (kCancelled), 507 out
  // of memory, 503 for a device failure in strict mode, else 500 "<what> failed: ...".
  Reply run_error(const Status& s, const std::string& what) const;
  // An input that could not be tokenized: 504 when the request's deadline
  // stopped the tokenizer (kCancelled), else 422 (`context` before the reason).
  Reply tokenize_error(const Status& s, const std::string& context = "") const;
  // The 500 of a model whose kind lists the route's capability but which
  // lacks its interface (models/model.h's as<T>() null): a bug, not a request's fault.
  Reply no_capability() const;
  // The 504 of a request whose deadline passed while `what` (tokenizing).
  Reply deadline_reply(const char* what) const;
  // deadline_reply when the request's deadline has passed, else nullopt.
  std::optional<Reply> past_deadline(const char* what) const;
  // request_timeout_ms from the request's arrival (http_server.h), which
  // covers reading its body and tokenizing.
  std::chrono::steady_clock::time_point deadline() const;

  // Tokenizes and runs a parsed embedding request on the model through its
  // batcher (prompt, limits and truncation by models/prepare_inputs.h;
  // queueing, deadline): its finished vectors (cut to `dimensions`, normalised
  // as asked; a sparse request's in result.sparse) in `result`, or the error to answer.
  std::optional<Reply> embed(EmbedRequest& req, RequestResult& result) const;

  // Runs run(bounds) on the HTTP thread (/rerank, /predict, /embed_all) in one
  // of the run slots every model's batches share (pool_size), the wait and the
  // run both within the deadline: kCancelled when no slot frees up in time.
  template <class Run>
  auto in_run_slot(const Run& run) const -> decltype(run(dlrt::RunOptions{})) {
    const auto until = deadline();
    RunSlot slot(slots_, until);
    if (!slot.held()) return Status(StatusCode::kCancelled, "no free worker before the request's deadline");
    dlrt::RunOptions bounds;
    bounds.timeout_ms =
        std::max(std::chrono::duration<double, std::milli>(until - std::chrono::steady_clock::now()).count(), 1.0);
    return run(bounds);
  }
  // Runs `batch` in input order in chunks within the batcher's bounds (at
  // most max_batch_size encodings and batch_tokens(m) padded tokens (within
  // max_batch_tokens and the memory budget max_batch_mb); an
  // encoding longer than that alone; one per chunk for a batch-dependent
  // model `m`), each in a run slot as in_run_slot: run(chunk, bounds) -> Status
  // per chunk, until the first error. The encodings are moved out of `batch`.
  // Each chunk counts as a batch in the metrics and its inputs and tokens in
  // the request's log line (observe_run).
  template <class Run>
  Status in_run_slots(const EmbedModel& m, std::vector<Encoding>& batch, const Run& run) const {
    const size_t most = batch_dependent(m) ? 1 : std::max<size_t>(config_.max_batch_size, 1);
    const size_t max_tokens = batch_tokens(m);
    for (size_t begin = 0; begin < batch.size();) {
      size_t end = begin, longest = 0;
      while (end < batch.size() && end - begin < most) {
        const size_t len = std::max(longest, batch[end].ids.size());
        if (end > begin && (end - begin + 1) * len > max_tokens) break;
        longest = len;
        ++end;
      }
      std::vector<Encoding> chunk(std::make_move_iterator(batch.begin() + static_cast<std::ptrdiff_t>(begin)),
                                  std::make_move_iterator(batch.begin() + static_cast<std::ptrdiff_t>(end)));
      size_t tokens = 0;
      for (const Encoding& e : chunk) tokens += e.ids.size();
      const auto start = std::chrono::steady_clock::now();
      Status s = in_run_slot([&](const dlrt::RunOptions& bounds) -> Status { return run(chunk, bounds); });
      observe_run(m, chunk.size(), chunk.size() * longest, tokens,
                  std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), s.ok());
      if (!s.ok()) return s;
      begin = end;
    }
    return Status::Ok();
  }

  // The padded tokens one run of model m may take (EmbedServer::batch_tokens:
  // max_batch_tokens within the memory budget max_batch_mb).
  size_t batch_tokens(const EmbedModel& m) const;

 private:
  static bool batch_dependent(const EmbedModel& m);
  // One model run on the HTTP thread (in_run_slots): the batch metrics, the
  // model's, and the request's inputs and tokens for its log line.
  void observe_run(const EmbedModel& m, size_t inputs, size_t padded_tokens, size_t tokens, double seconds,
                   bool ok) const;

  EmbedServer& server_;
  Api api_;
  const ServiceConfig& config_;
  RunSlots* slots_;
  std::optional<ModelRef> ref_;
};

}  // namespace dlrt::embed
