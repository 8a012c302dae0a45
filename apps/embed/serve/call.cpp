// One request as a route's handler sees it (call.h): its model, its errors,
// its deadline and the batcher path of the embedding routes (texts, and the
// images of clip models: embed_vectors in handlers.h).
#include "embed/serve/call.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "embed/image/image.h"

#include "embed/models/output_type.h"
#include "embed/models/prepare_inputs.h"
#include "embed/serve/http_server.h"
#include "embed/serve/handlers.h"
#include "embed/serve/server.h"
#include "embed/serve/server_util.h"

namespace dlrt::embed {
namespace {

using json = nlohmann::json;
using server_util::is_device_failure;
using server_util::json_string;

}  // namespace

Reply error_reply(Api api, int status, const std::string& type, const std::string& message) {
  Reply r;
  r.status = status;
  if (api == Api::kTei) {
    r.body = "{\"error\":" + json_string(message) + ",\"error_type\":" +
             json_string(server_util::tei_error_type(status, type)) + "}";
  } else {
    r.body = "{\"error\":{\"message\":" + json_string(message) + ",\"type\":" +
             json_string(server_util::openai_error_type(type)) + ",\"code\":" + std::to_string(status) + "}}";
  }
  return r;
}

Call::Call(EmbedServer& server, Api api)
    : server_(server), api_(api), config_(server.config_), slots_(server.slots_.get()) {}

bool Call::batch_dependent(const EmbedModel& m) { return m.batch_dependent(); }
size_t Call::batch_tokens(const EmbedModel& m) const { return server_.batch_tokens(m); }

void Call::observe_run(const EmbedModel& m, size_t inputs, size_t padded_tokens, size_t tokens, double seconds,
                       bool ok) const {
  server_.metrics_.observe_batch(inputs, padded_tokens, tokens, report_device(m.placement()), seconds, ok);
  if (const std::string& name = server_util::request_model(); !name.empty())
    server_.metrics_.observe_model_batch(name, inputs, tokens, ok);
  if (ok) server_util::add_request_size(inputs, tokens);
}

std::string Call::model_label() const {
  return server_.registry_.size() > 1 ? "model '" + ref_->name + "'" : std::string("the served model");
}

size_t Call::input_token_limit() const {
  return ref_->config.max_input_tokens > 0 ? ref_->config.max_input_tokens : config_.max_input_tokens;
}

std::chrono::steady_clock::time_point Call::deadline() const { return server_.request_deadline(); }

Reply Call::run_error(const Status& s, const std::string& what) const {
  if (s.code() == StatusCode::kCancelled)
    return error(504, "timeout",
                 "the request was not answered within its deadline of " + std::to_string(config_.request_timeout_ms) +
                     " ms (request_timeout_ms), so its model run was stopped (" + s.message() +
                     "): retry later, send fewer or shorter inputs, or raise request_timeout_ms");
  if (s.code() == StatusCode::kOutOfMemory)  // the server stays up; a smaller request may fit
    return error(507, "insufficient_storage",
                 what + " ran out of memory: " + s.to_string() +
                     "; send fewer or shorter inputs, or raise the memory limit (max_tensor_mb, the container's)");
  if (is_device_failure(s.code()))
    return error(503, "device_unavailable",
                 "the accelerator failed and strict mode forbids falling back to the CPU: " + s.message());
  return error(500, "internal_error", what + " failed: " + s.to_string());
}

Reply Call::no_capability() const {
  return error(500, "internal_error",
               std::string("the model's kind has the route's capability but its model does not implement it (") +
                   model_kind_name(ref_->model->kind()) + ")");
}

Reply Call::deadline_reply(const char* what) const {
  return error(504, "timeout",
               "the request was not answered within its deadline of " + std::to_string(config_.request_timeout_ms) +
                   " ms (request_timeout_ms) from its arrival: it passed while " + what +
                   "; send fewer or shorter inputs, or raise request_timeout_ms");
}

std::optional<Reply> Call::past_deadline(const char* what) const {
  if (std::chrono::steady_clock::now() < deadline()) return std::nullopt;
  return deadline_reply(what);
}

Reply Call::tokenize_error(const Status& s, const std::string& context) const {
  if (s.code() == StatusCode::kCancelled) return deadline_reply("tokenizing");
  return error(422, "tokenizer", context + s.message());
}

std::optional<ModelRef> Call::model_named(const std::string& body_model, Reply* error) const {
  const ModelRegistry& registry_ = server_.registry_;
  const std::string& path_model = server_util::path_model();
  if (!path_model.empty() && !body_model.empty() && body_model != path_model && registry_.size() > 1) {
    *error = invalid("the route names model '" + path_model + "' but the body's 'model' is '" + body_model + "'");
    return std::nullopt;
  }
  const std::string name = path_model.empty() ? body_model : path_model;
  std::optional<ModelRef> ref = registry_.find(name);
  if (!ref) {
    std::string names;
    for (const std::string& n : registry_.names()) names += (names.empty() ? "" : ", ") + n;
    *error = this->error(404, "model_not_found", "the model '" + name + "' is not served here; served models: " + names);
    return std::nullopt;
  }
  server_util::note_request_model(ref->name);
  if (!ref->model) {
    const std::string which = registry_.size() > 1 ? "model '" + ref->name + "'" : std::string("model");
    *error = this->error(503, "unavailable",
                         ref->load_error.empty() ? "the " + which + " is still loading; retry shortly"
                                                 : "the " + which + " failed to load: " + ref->load_error);
    return std::nullopt;
  }
  return ref;
}

std::optional<Reply> Call::find_model(const json& body) {
  auto f = body.is_object() ? body.find("model") : body.end();
  if (f != body.end() && !f->is_null() && !f->is_string())
    return invalid("'model' must be a string: the name of a served model");
  Reply unavailable;
  ref_ = model_named(f != body.end() && f->is_string() ? f->get<std::string>() : std::string(), &unavailable);
  if (!ref_) return unavailable;
  return std::nullopt;
}

std::optional<Reply> Call::embed(EmbedRequest& req, RequestResult& result) const {
  const EmbedModel* m = ref_->model.get();
  Batcher* b = ref_->batcher.get();
  if (req.dimensions && *req.dimensions > m->dimension())
    return invalid("'dimensions' is " + std::to_string(*req.dimensions) + " but the model's vectors have " +
                   std::to_string(m->dimension()));
  const bool truncate = req.truncate.value_or(config_.truncate);
  const bool normalize = req.normalize.value_or(m->normalizes());

  size_t limit = m->max_length();
  if (const size_t cap = input_token_limit()) limit = std::min(limit, cap);
  if (req.max_tokens) limit = std::min(limit, *req.max_tokens);
  auto over_limit = [&](size_t i, size_t tokens) {
    return error(413, "invalid_request_error",
                 "input " + std::to_string(i) + " has " + (tokens ? std::to_string(tokens) : "more than " + std::to_string(limit)) +
                     " tokens; the limit is " + std::to_string(limit) +
                     " per input: shorten it or send " + req.truncate_field);
  };
  std::vector<Encoding> encodings;
  encodings.reserve(req.size());
  if (!req.token_ids.empty()) {
    // Token ids are used as given (no special tokens added).
    const size_t vocab = m->vocab_size();
    for (size_t i = 0; i < req.token_ids.size(); ++i) {
      std::vector<int64_t>& ids = req.token_ids[i];
      for (int64_t id : ids)
        if (vocab && static_cast<size_t>(id) >= vocab)
          return invalid("input " + std::to_string(i) + " has token id " + std::to_string(id) +
                         ", outside the vocabulary (" + std::to_string(vocab) + " tokens)");
      if (ids.size() > limit) {
        if (!truncate) return over_limit(i, ids.size());
        ids.resize(limit);
      }
      Encoding e;
      e.ids = std::move(ids);
      e.type_ids.assign(e.ids.size(), 0);
      e.attention_mask.assign(e.ids.size(), 1);
      encodings.push_back(std::move(e));
    }
  } else {
    // A named prompt (or the folder's default) goes in front of each text.
    InputOptions in;
    in.is_query = req.is_query;
    if (!req.prompt_name && req.is_query) req.prompt_name = task_prompt_name(*m, *req.is_query);
    if (auto p = resolve_prompt(*m, req.prompt_name, config_.default_prompt_name); !p) {
      return invalid("the model has no prompt named '" + *req.prompt_name + "'");
    } else {
      in.prompt = *p;
    }
    in.limit = limit;
    in.truncate = truncate;
    in.stop = [this] { return std::chrono::steady_clock::now() >= deadline(); };
    if (std::optional<InputError> e = prepare_inputs(*m, req.texts, in, encodings)) {
      if (e->what == InputError::What::kTokenize)
        return tokenize_error(e->status, "input " + std::to_string(e->index) + " cannot be tokenized: ");
      if (e->what == InputError::What::kTooLong) return over_limit(e->index, e->tokens);
      return deadline_reply("tokenizing");
    }
  }

  // The request's token budget bounds its work, whatever its count of inputs.
  size_t tokens = 0;
  for (const Encoding& e : encodings) tokens += e.ids.size();
  if (tokens > config_.max_request_tokens)
    return error(413, "invalid_request_error",
                 "the request's inputs have " + std::to_string(tokens) + " tokens in all; the limit is " +
                     std::to_string(config_.max_request_tokens) +
                     " per request (max_request_tokens, flag --max-request-tokens): send fewer or shorter inputs");
  // The request's deadline: past it the client gets 504 and its model run stops.
  const auto until = deadline();
  auto fut = b->submit(std::move(encodings), until);
  if (!fut.ok()) {
    if (fut.status().code() == StatusCode::kOutOfRange) {
      server_.metrics_.observe_rejected();
      Reply r = error(429, "rate_limit_error", "server busy: " + fut.status().message() + "; retry later");
      r.retry_after_s = 1;
      return r;
    }
    return error(503, "unavailable", fut.status().message());
  }
  if (fut->wait_until(until) != std::future_status::ready)
    return run_error(Status(StatusCode::kCancelled, "no answer by the deadline"), "embedding");
  Result<RequestResult> res = std::move(fut->get());
  if (!res.ok()) return run_error(res.status(), "embedding");
  // A sparse request's vectors are the model's non-zero weights, as they came.
  if (!req.sparse)
    for (std::vector<float>& v : res->vectors) finish_vector(v, req.dimensions, normalize);
  server_util::note_request_size(req.sparse ? res->sparse.size() : res->vectors.size(), res->tokens);
  result = std::move(res).value();
  return std::nullopt;
}

namespace {

// An image request's vectors: decoded here, then run through the model's
// vision tower in run slots, max_batch_size images a run.
std::optional<Reply> embed_images(Call& c, EmbedRequest& req, RequestResult& result) {
  const EmbedModel& m = c.model();
  const ImageOut* out = m.as<ImageOut>();
  if (!out)
    return c.error(400, "invalid_request_error",  // as every route refuses a kind (routes.cpp)
                   kind_refusal(m.kind(), {Capability::kImage}, c.model_label(), "an image input"));
  if (req.dimensions && *req.dimensions > m.dimension())
    return c.invalid("'dimensions' is " + std::to_string(*req.dimensions) + " but the model's vectors have " +
                     std::to_string(m.dimension()));
  const size_t most = std::max<size_t>(c.config().max_batch_size, 1);
  for (size_t begin = 0; begin < req.images.size(); begin += most) {
    const size_t end = std::min(req.images.size(), begin + most);
    std::vector<image::Image> images;
    for (size_t i = begin; i < end; ++i) {
      const auto& b = req.images[i];
      auto decoded = image::decode({reinterpret_cast<const uint8_t*>(b.data()), b.size()});
      if (!decoded.ok()) return c.invalid("input " + std::to_string(i) + ": " + decoded.status().message());
      images.push_back(std::move(decoded).value());
      std::string().swap(req.images[i]);  // the encoded bytes are no longer needed
    }
    auto r = c.in_run_slot([&](const dlrt::RunOptions& bounds) { return out->embed_images(images, bounds); });
    if (!r.ok()) {
      if (r.status().code() == StatusCode::kInvalidArgument)
        return c.invalid("inputs " + std::to_string(begin) + " to " + std::to_string(end - 1) + ": " +
                         r.status().message());
      return c.run_error(r.status(), "embedding");
    }
    for (auto& v : r->vectors) {
      finish_vector(v, req.dimensions, req.normalize.value_or(m.normalizes()));
      result.vectors.push_back(std::move(v));
    }
  }
  server_util::note_request_size(result.vectors.size(), 0);
  return std::nullopt;
}

}  // namespace

std::optional<Reply> embed_vectors(Call& c, EmbedRequest& req, RequestResult& result) {
  if (req.images.empty()) return c.embed(req, result);
  if (req.texts.empty()) return embed_images(c, req, result);
  // Texts and images: each through its tower (images first: a model without one
  // is refused before any text runs), then the vectors back in input order.
  RequestResult images, texts;
  if (std::optional<Reply> error = embed_images(c, req, images)) return error;
  req.images.clear();
  if (std::optional<Reply> error = c.embed(req, texts)) return error;
  size_t next_image = 0, next_text = 0;
  for (uint8_t is_image : req.image_at)
    result.vectors.push_back(std::move(is_image ? images.vectors[next_image++] : texts.vectors[next_text++]));
  result.tokens = texts.tokens;
  server_util::note_request_size(result.vectors.size(), result.tokens);
  return std::nullopt;
}

}  // namespace dlrt::embed
