// dlrt serve's embedding routes: /v1/embeddings and /embed (handle_embeddings),
// /tokenize, /decode, and /v1/models and /info (info_reply). See server.h.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "dlrt/dlrt.h"
#include "embed/serve/body_json.h"
#include "embed/serve/request.h"
#include "embed/serve/route_kinds.h"
#include "embed/serve/server.h"
#include "embed/serve/server_util.h"
#include "embed/models/sparse.h"
#include "embed/serve/sparse_json.h"

namespace dlrt::embed {
namespace {

using json = nlohmann::json;
using server_util::json_string;
using server_util::resolve_prompt;

// ---- JSON writing -----------------------------------------------------------

void append_vector(std::string& out, const std::vector<float>& v) {
  out += '[';
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) out += ',';
    server_util::append_json_float(out, v[i]);
  }
  out += ']';
}

void append_base64(std::string& out, const std::vector<float>& v) {
  static const char* kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string bytes(v.size() * sizeof(float), '\0');
  if (!v.empty()) std::memcpy(bytes.data(), v.data(), bytes.size());  // little-endian float32 (x86, arm)
  out += '"';
  size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    uint32_t n = (uint8_t(bytes[i]) << 16) | (uint8_t(bytes[i + 1]) << 8) | uint8_t(bytes[i + 2]);
    out += kAlphabet[n >> 18];
    out += kAlphabet[(n >> 12) & 63];
    out += kAlphabet[(n >> 6) & 63];
    out += kAlphabet[n & 63];
  }
  if (size_t rest = bytes.size() - i) {
    uint32_t n = uint8_t(bytes[i]) << 16;
    if (rest == 2) n |= uint8_t(bytes[i + 1]) << 8;
    out += kAlphabet[n >> 18];
    out += kAlphabet[(n >> 12) & 63];
    out += rest == 2 ? kAlphabet[(n >> 6) & 63] : '=';
    out += '=';
  }
  out += '"';
}

// Keeps [CLS] ... [SEP]: cuts the middle, keeps the last token.
void truncate_encoding(Encoding& e, size_t limit) {
  if (e.ids.size() <= limit || limit < 2) return;
  auto cut = [limit](std::vector<int64_t>& v) {
    if (v.size() <= limit) return;
    int64_t last = v.back();
    v.resize(limit - 1);
    v.push_back(last);
  };
  cut(e.ids);
  cut(e.type_ids);
  cut(e.attention_mask);
}

// TEI's model_type: {"embedding": {pooling}}, {"reranker": {...}} (one
// score) or {"classifier": {id2label, label2id}}.
json model_type_json(const EmbedModel& m) {
  if (!has_capability(m.kind(), Capability::kClassify)) return {{"embedding", {{"pooling", m.pooling()}}}};
  json id2label = json::object(), label2id = json::object();
  const auto labels = m.labels();
  for (size_t i = 0; i < labels.size(); ++i) {
    id2label[std::to_string(i)] = labels[i];
    label2id[labels[i]] = i;
  }
  return {{labels.size() == 1 ? "reranker" : "classifier", {{"id2label", id2label}, {"label2id", label2id}}}};
}

}  // namespace

EmbedServer::Reply EmbedServer::handle_embeddings(const std::string& body, Api api, bool sparse_route) {
  if (draining_.load()) return error_reply(api, 503, "unavailable", "the server is shutting down");
  json body_json;
  if (std::string e = parse_body_json(body, body_json); !e.empty()) return error_reply(api, 400, "invalid_request_error", e);
  EmbedRequest req;
  const RequestKind kind = api == Api::kOpenAI ? RequestKind::kOpenAIEmbeddings
                           : sparse_route      ? RequestKind::kTeiEmbedSparse
                                               : RequestKind::kTeiEmbed;
  if (auto e = parse_embed_request(body_json, kind, config_.max_inputs_per_request, &req))
    return error_reply(api, e->status, e->type, e->message);
  Reply unavailable;
  std::optional<ModelRef> ref = request_model(api, body_json, &unavailable);
  if (!ref) return unavailable;
  const EmbedModel& m = *ref->model;
  const std::string who = model_label(*ref);
  const char* route = api == Api::kOpenAI ? "/v1/embeddings" : sparse_route ? "/embed_sparse" : "/embed";
  if (std::string e = route_kind_error(route, m.kind(), who, req.sparse); !e.empty())
    return error_reply(api, 400, "invalid_request_error", e);
  // TEI's defaults on its routes: /embed normalises unless asked not to, and
  // OpenAI's route gives unit vectors as OpenAI and TEI do (docs/migrate.md).
  if (!req.sparse && !req.normalize) req.normalize = true;
  RequestResult result;
  if (std::optional<Reply> error = embed_request(req, api, *ref, result)) return *error;
  if (req.sparse) {
    std::vector<SparseVector> sparse;
    sparse.reserve(result.vectors.size());
    for (const std::vector<float>& v : result.vectors) sparse.push_back(sparsify(v, req.top_k.value_or(0)));
    Reply r;
    r.body = api == Api::kTei ? tei_sparse_body(sparse) : openai_sparse_body(sparse, ref->name, result.tokens);
    return r;
  }

  Reply r;
  std::string& out = r.body;
  size_t dim = result.vectors.empty() ? 0 : result.vectors[0].size();
  out.reserve(64 + result.vectors.size() * (req.base64 ? dim * 4 / 3 + 64 : dim * 12 + 64));
  if (api == Api::kTei) {
    out += '[';
    for (size_t i = 0; i < result.vectors.size(); ++i) {
      if (i) out += ',';
      append_vector(out, result.vectors[i]);
    }
    out += ']';
    return r;
  }
  out += "{\"object\":\"list\",\"data\":[";
  for (size_t i = 0; i < result.vectors.size(); ++i) {
    if (i) out += ',';
    out += "{\"object\":\"embedding\",\"index\":" + std::to_string(i) + ",\"embedding\":";
    if (req.base64) append_base64(out, result.vectors[i]);
    else append_vector(out, result.vectors[i]);
    out += '}';
  }
  out += "],\"model\":" + json_string(ref->name) + ",\"usage\":{\"prompt_tokens\":" + std::to_string(result.tokens) +
         ",\"total_tokens\":" + std::to_string(result.tokens) + "}}";
  return r;
}

std::optional<EmbedServer::Reply> EmbedServer::embed_request(EmbedRequest& req, Api api, const ModelRef& ref,
                                                             RequestResult& result) {
  const EmbedModel* m = ref.model.get();
  Batcher* b = ref.batcher.get();
  if (req.dimensions && *req.dimensions > m->dimension())
    return error_reply(api, 422, "invalid_request_error",
                       "'dimensions' is " + std::to_string(*req.dimensions) + " but the model's vectors have " +
                           std::to_string(m->dimension()));
  const bool truncate = req.truncate.value_or(config_.truncate);
  const bool normalize = req.normalize.value_or(m->normalizes());

  size_t limit = m->max_length();
  if (const size_t cap = input_token_limit(ref)) limit = std::min(limit, cap);
  auto over_limit = [&](size_t i, size_t tokens) {
    return error_reply(api, 413, "invalid_request_error",
                       "input " + std::to_string(i) + " has " + (tokens ? std::to_string(tokens) : "more than " + std::to_string(limit)) +
                           " tokens; the limit is " + std::to_string(limit) +
                           " per input: shorten it or send \"truncate\": true");
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
          return error_reply(api, 422, "invalid_request_error",
                             "input " + std::to_string(i) + " has token id " + std::to_string(id) +
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
    std::string prompt;
    if (auto p = resolve_prompt(*m, req.prompt_name, config_.default_prompt_name); !p) {
      return error_reply(api, 422, "invalid_request_error", "the model has no prompt named '" + *req.prompt_name + "'");
    } else {
      prompt = *p;
    }
    for (size_t i = 0; i < req.texts.size(); ++i) {
      bool truncated = false;
      const std::string text = prompt.empty() ? std::move(req.texts[i]) : prompt + req.texts[i];
      auto enc = m->tokenize(text, &truncated);
      if (!enc.ok()) return tokenize_error(api, enc.status(), "input " + std::to_string(i) + " cannot be tokenized: ");
      if ((truncated || enc->ids.size() > limit) && !truncate) return over_limit(i, m->count_tokens(text));
      truncate_encoding(*enc, limit);
      encodings.push_back(std::move(enc).value());
      if (auto late = past_deadline(api, "tokenizing")) return *late;
    }
  }

  // The request's token budget bounds its work, whatever its count of inputs.
  size_t tokens = 0;
  for (const Encoding& e : encodings) tokens += e.ids.size();
  if (tokens > config_.max_request_tokens)
    return error_reply(api, 413, "invalid_request_error",
                       "the request's inputs have " + std::to_string(tokens) + " tokens in all; the limit is " +
                           std::to_string(config_.max_request_tokens) +
                           " per request (max_request_tokens, flag --max-request-tokens): send fewer or shorter inputs");
  // The request's deadline: past it the client gets 504 and its model run stops.
  const auto deadline = request_deadline();
  auto fut = b->submit(std::move(encodings), deadline);
  if (!fut.ok()) {
    if (fut.status().code() == StatusCode::kOutOfRange) {
      metrics_.observe_rejected();
      Reply r = error_reply(api, 429, "rate_limit_error", "server busy: " + fut.status().message() + "; retry later");
      r.retry_after_s = 1;
      return r;
    }
    return error_reply(api, 503, "unavailable", fut.status().message());
  }
  if (fut->wait_until(deadline) != std::future_status::ready)
    return run_error_reply(api, Status(StatusCode::kCancelled, "no answer by the deadline"), "embedding");
  Result<RequestResult> res = std::move(fut->get());
  if (!res.ok()) return run_error_reply(api, res.status(), "embedding");
  // A sparse request's vectors are the model's vocabulary-wide weights, as they came.
  if (!req.sparse)
    for (std::vector<float>& v : res->vectors) finish_vector(v, req.dimensions, normalize);
  server_util::note_request_size(res->vectors.size(), res->tokens);
  result = std::move(res).value();
  return std::nullopt;
}

EmbedServer::Reply EmbedServer::handle_tokenize(const std::string& body) {
  json body_json;
  if (std::string e = parse_body_json(body, body_json); !e.empty()) return error_reply(Api::kTei, 400, "invalid_request_error", e);
  EmbedRequest req;
  if (auto e = parse_embed_request(body_json, RequestKind::kTeiTokenize, config_.max_inputs_per_request, &req))
    return error_reply(Api::kTei, e->status, e->type, e->message);
  Reply unavailable;
  std::optional<ModelRef> ref = request_model(Api::kTei, body_json, &unavailable);
  if (!ref) return unavailable;
  const std::shared_ptr<const EmbedModel>& m = ref->model;
  auto prompt_text = resolve_prompt(*m, req.prompt_name, config_.default_prompt_name);
  if (!prompt_text)
    return error_reply(Api::kTei, 422, "invalid_request_error", "the model has no prompt named '" + *req.prompt_name + "'");
  const std::string prompt = *prompt_text;
  // As TEI: "start"/"stop" are byte offsets into the text (the prompt
  // included) and "text" is that part of it; a special token (one the
  // tokenizer added: [CLS], [SEP], ...) has its own text and null offsets.
  // A token the model made from the text ([UNK] for an unknown word) is not
  // special, whatever its id.
  json out = json::array();
  for (size_t i = 0; i < req.texts.size(); ++i) {
    const std::string text = prompt + req.texts[i];
    std::vector<std::pair<size_t, size_t>> offsets;
    auto enc = m->tokenize_with_offsets(text, offsets);
    if (!enc.ok())
      return tokenize_error(Api::kTei, enc.status(), "input " + std::to_string(i) + " cannot be tokenized: ");
    const bool have_offsets = offsets.size() == enc->ids.size();
    json tokens = json::array();
    for (size_t t = 0; t < enc->ids.size(); ++t) {
      const int64_t id = enc->ids[t];
      const bool special = m->is_special_token(id) && (!have_offsets || offsets[t].first == offsets[t].second);
      if (special && !req.add_special_tokens) continue;
      json token = {{"id", id}, {"text", m->token_text(id)}, {"special", special}, {"start", nullptr}, {"stop", nullptr}};
      if (!special && have_offsets) {
        const auto [start, stop] = offsets[t];
        if (start <= stop && stop <= text.size()) {
          token["text"] = text.substr(start, stop - start);
          token["start"] = start;
          token["stop"] = stop;
        }
      }
      tokens.push_back(std::move(token));
    }
    out.push_back(std::move(tokens));
  }
  Reply r;
  r.body = out.dump(-1, ' ', false, json::error_handler_t::replace);
  return r;
}

EmbedServer::Reply EmbedServer::handle_decode(const std::string& body) {
  json req;
  if (std::string e = parse_body_json(body, req); !e.empty()) return error_reply(Api::kTei, 400, "invalid_request_error", e);
  if (!req.is_object()) return error_reply(Api::kTei, 422, "invalid_request_error", "the body must be a JSON object");
  Reply unavailable;
  std::optional<ModelRef> ref = request_model(Api::kTei, req, &unavailable);
  if (!ref) return unavailable;
  const std::shared_ptr<const EmbedModel>& m = ref->model;
  auto ids = req.find("ids");
  if (ids == req.end() || !ids->is_array() || ids->empty())
    return error_reply(Api::kTei, 422, "invalid_request_error", "'ids' must be a list of token ids or a list of such lists");
  bool skip = true;
  if (auto s = req.find("skip_special_tokens"); s != req.end() && !s->is_null()) {
    if (!s->is_boolean()) return error_reply(Api::kTei, 422, "invalid_request_error", "'skip_special_tokens' must be a boolean");
    skip = s->get<bool>();
  }
  // [1, 2, 3] is one sequence, [[1, 2], [3]] several.
  std::vector<std::vector<int64_t>> batch;
  const bool nested = (*ids)[0].is_array();
  if (nested && ids->size() > config_.max_inputs_per_request)
    return error_reply(Api::kTei, 413, "invalid_request_error",
                       std::to_string(ids->size()) + " sequences in one request; the limit is " +
                           std::to_string(config_.max_inputs_per_request) + kInputsLimitNote);
  for (const json& seq : nested ? *ids : json::array({*ids})) {
    if (!seq.is_array()) return error_reply(Api::kTei, 422, "invalid_request_error", "'ids' mixes lists and ids");
    std::vector<int64_t> one;
    for (const json& id : seq) {
      if (!id.is_number_integer() || id.get<int64_t>() < 0)
        return error_reply(Api::kTei, 422, "invalid_request_error", "'ids' holds a value that is not a token id");
      one.push_back(id.get<int64_t>());
    }
    batch.push_back(std::move(one));
  }
  json out = json::array();
  for (const auto& seq : batch) {
    auto text = m->decode(seq, skip);
    if (!text.ok()) {
      const int status = text.status().code() == StatusCode::kUnsupported ? 501 : 422;
      return error_reply(Api::kTei, status, "invalid_request_error", text.status().message());
    }
    out.push_back(*text);
  }
  Reply r;
  r.body = out.dump(-1, ' ', false, json::error_handler_t::replace);
  return r;
}

EmbedServer::Reply EmbedServer::info_reply(bool openai_models) const {
  Reply r;
  json j;
  if (openai_models) {  // every model that serves, the default first
    json data = json::array();
    for (const ModelRef& ref : registry_.all())
      if (ref.model)
        data.push_back({{"id", ref.name}, {"object", "model"},
                        {"created", std::chrono::duration_cast<std::chrono::seconds>(started_.time_since_epoch()).count()},
                        {"owned_by", "dlrt"}});
    if (data.empty()) return error_reply(Api::kOpenAI, 503, "unavailable", "the model is still loading");
    j = {{"object", "list"}, {"data", std::move(data)}};
  } else {
    Reply unavailable;
    std::optional<ModelRef> ref = model_named(Api::kTei, "", &unavailable);
    if (!ref) return unavailable;
    const std::shared_ptr<const EmbedModel>& m = ref->model;
    const std::string& name = ref->name;
    const HealthInfo h = *model_health(name);
    json prompts = json::object();
    // TEI's fields: model_id is the --model (TEI: --model-id) value, the
    // served name is served_model_name; no hub revision or build label here.
    j = {{"model_id", ref->config.path.empty() ? name : ref->config.path},
         {"served_model_name", name},
         {"model_sha", nullptr},
         {"model_dtype", "float32"},
         {"model_type", model_type_json(*m)},
         {"max_input_length", input_token_limit(*ref) > 0 ? std::min(m->max_length(), input_token_limit(*ref))
                                                          : m->max_length()},
         {"max_batch_tokens", config_.max_batch_tokens},
         {"max_client_batch_size", config_.max_inputs_per_request},
         {"max_concurrent_requests", config_.max_queue},
         {"max_batch_requests", config_.max_batch_size},
         {"auto_truncate", config_.truncate},
         {"tokenization_workers", config_.http_threads},
         {"version", dlrt::version()},
         {"sha", nullptr},
         {"docker_label", nullptr},
         {"dimension", m->dimension()},
         // Both reranker kinds are TEI's "classifier" here (model_type says which head).
         {"model_kind", has_capability(m->kind(), Capability::kClassify) ? "classifier" : model_kind_name(m->kind())},
         {"normalize", m->normalizes()},
         {"batching", m->batching()},
         {"default_prompt_name", !config_.default_prompt_name.empty() ? json(config_.default_prompt_name)
                                 : m->default_prompt_name().empty() ? json(nullptr)
                                                                    : json(m->default_prompt_name())},
         {"truncate", config_.truncate},
         {"backend", h.backend},
         {"device", h.device}};
    // The memory budget of a run (core/memory_limit.h): the largest tensor
    // and the memory available to the process that the default derives from.
    const MemoryInfo b = memory_info();
    const bool set = config_.max_tensor_mb > 0;  // the service's max_tensor_mb (flag, environment, config) wins
    auto opt = [](const std::optional<uint64_t>& v) { return v ? json(*v) : json(nullptr); };
    j["memory"] = {{"max_tensor_bytes", set ? static_cast<uint64_t>(config_.max_tensor_mb) << 20 : b.max_tensor_bytes},
                   {"max_tensor_source", set ? std::string("max_tensor_mb") : b.max_tensor_source},
                   {"available_bytes", b.available_bytes},
                   {"available_source", b.available_source},
                   {"physical_bytes", b.physical_bytes},
                   {"cgroup_limit_bytes", opt(b.cgroup_limit_bytes)},
                   {"rlimit_as_bytes", opt(b.rlimit_as_bytes)},
                   {"rss_bytes", b.rss_bytes},
                   {"vm_size_bytes", b.vm_size_bytes}};
  }
  r.body = j.dump(-1, ' ', false, json::error_handler_t::replace);
  return r;
}

std::optional<std::string> server_util::resolve_prompt(const EmbedModel& m,
                                                      const std::optional<std::string>& requested,
                                                      const std::string& server_default) {
  if (requested) return m.prompt(*requested);
  const std::string def = server_default.empty() ? m.default_prompt_name() : server_default;
  if (def.empty()) return std::string();
  return m.prompt(def).value_or(std::string());
}

}  // namespace dlrt::embed
