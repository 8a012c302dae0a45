// dlrt serve's routes of the model's tokenizer and of what is served:
// /tokenize (its request read by parse_embed_request, server_embed.cpp),
// /decode, /v1/models, /info and /openapi.json: their parsers and handlers
// (handlers.h).
#include <algorithm>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "dlrt/dlrt.h"
#include "embed/models/precision_json.h"
#include "embed/models/prepare_inputs.h"
#include "embed/serve/handlers.h"
#include "embed/serve/openapi.h"
#include "embed/serve/server.h"
#include "embed/serve/server_util.h"

namespace dlrt::embed {
namespace {

using json = nlohmann::json;

// TEI's model_type: {"embedding": {pooling}}, {"reranker": {...}} (one
// score) or {"classifier": {id2label, label2id}}.
json model_type_json(const EmbedModel& m) {
  const PairScorer* scorer = m.as<PairScorer>();
  if (!scorer || !has_capability(m.kind(), Capability::kClassify)) return {{"embedding", {{"pooling", m.pooling()}}}};
  json id2label = json::object(), label2id = json::object();
  const auto labels = scorer->labels();
  for (size_t i = 0; i < labels.size(); ++i) {
    id2label[std::to_string(i)] = labels[i];
    label2id[labels[i]] = i;
  }
  return {{labels.size() == 1 ? "reranker" : "classifier", {{"id2label", id2label}, {"label2id", label2id}}}};
}

}  // namespace

Reply handle_tokenize(Call& c, EmbedRequest& req) {
  const EmbedModel* m = &c.model();
  auto prompt_text = resolve_prompt(*m, req.prompt_name, c.config().default_prompt_name);
  if (!prompt_text) return c.invalid("the model has no prompt named '" + *req.prompt_name + "'");
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
    if (!enc.ok()) return c.tokenize_error(enc.status(), "input " + std::to_string(i) + " cannot be tokenized: ");
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

ParseError parse_decode(const json& req, size_t max_inputs, DecodeRequest* out) {
  auto ids = req.find("ids");
  if (ids == req.end() || !ids->is_array() || ids->empty())
    return RequestError{422, "'ids' must be a list of token ids or a list of such lists"};
  std::optional<bool> skip;
  if (auto e = read_bool(req, "skip_special_tokens", skip)) return e;
  out->skip_special_tokens = skip.value_or(true);
  // [1, 2, 3] is one sequence, [[1, 2], [3]] several.
  std::vector<std::vector<int64_t>>& batch = out->ids;
  const bool nested = (*ids)[0].is_array();
  if (nested && ids->size() > max_inputs) return too_many_inputs(ids->size(), "sequences", max_inputs);
  for (const json& seq : nested ? *ids : json::array({*ids})) {
    if (!seq.is_array()) return RequestError{422, "'ids' mixes lists and ids"};
    std::vector<int64_t> one;
    for (const json& id : seq) {
      if (!id.is_number_integer() || id.get<int64_t>() < 0)
        return RequestError{422, "'ids' holds a value that is not a token id"};
      one.push_back(id.get<int64_t>());
    }
    batch.push_back(std::move(one));
  }
  return std::nullopt;
}

Reply handle_decode(Call& c, DecodeRequest& req) {
  const EmbedModel* m = &c.model();
  const bool skip = req.skip_special_tokens;
  const std::vector<std::vector<int64_t>>& batch = req.ids;
  json out = json::array();
  for (const auto& seq : batch) {
    auto text = m->decode(seq, skip);
    if (!text.ok()) {
      const int status = text.status().code() == StatusCode::kUnsupported ? 501 : 422;
      return c.error(status, "invalid_request_error", text.status().message());
    }
    out.push_back(*text);
  }
  Reply r;
  r.body = out.dump(-1, ' ', false, json::error_handler_t::replace);
  return r;
}

// /v1/models (`openai_models`) and /info.
Reply info_reply(Call& c, bool openai_models) {
  const EmbedServer& server = c.server();
  const ServiceConfig& config = c.config();
  Reply r;
  json j;
  if (openai_models) {  // every model that serves, the default first
    json data = json::array();
    for (const ModelRef& ref : server.models().all())
      if (ref.model)
        data.push_back({{"id", ref.name}, {"object", "model"},
                        {"created", std::chrono::duration_cast<std::chrono::seconds>(server.started().time_since_epoch()).count()},
                        {"owned_by", "dlrt"}});
    if (data.empty()) return c.error(503, "unavailable", "the model is still loading");
    j = {{"object", "list"}, {"data", std::move(data)}};
  } else {
    Call tei(c.server(), Api::kTei);  // /info's model errors take TEI's shape
    if (auto unavailable = tei.find_model(json::object())) return *unavailable;
    const ModelRef* ref = &tei.ref();
    const std::shared_ptr<const EmbedModel>& m = ref->model;
    const std::string& name = ref->name;
    const HealthInfo h = *server.model_health(name);
    json prompts = json::object();
    // TEI's fields: model_id is the --model (TEI: --model-id) value, the
    // served name is served_model_name; no hub revision or build label here.
    j = {{"model_id", ref->config.path.empty() ? name : ref->config.path},
         {"served_model_name", name},
         {"model_sha", nullptr},
         {"model_dtype", "float32"},
         {"model_type", model_type_json(*m)},
         {"max_input_length", tei.input_token_limit() > 0 ? std::min(m->max_length(), tei.input_token_limit())
                                                          : m->max_length()},
         {"max_batch_tokens", config.max_batch_tokens},
         {"max_client_batch_size", config.max_inputs_per_request},
         {"max_concurrent_requests", config.max_queue},
         {"max_batch_requests", config.max_batch_size},
         {"auto_truncate", config.truncate},
         {"tokenization_workers", config.http_threads},
         {"version", dlrt::version()},
         {"sha", nullptr},
         {"docker_label", nullptr},
         {"dimension", m->dimension()},
         // Both reranker kinds are TEI's "classifier" here (model_type says which head).
         {"model_kind", has_capability(m->kind(), Capability::kClassify) ? "classifier" : model_kind_name(m->kind())},
         {"normalize", m->normalizes()},
         {"batching", m->batching()},
         {"default_prompt_name", !config.default_prompt_name.empty() ? json(config.default_prompt_name)
                                 : m->default_prompt_name().empty() ? json(nullptr)
                                                                    : json(m->default_prompt_name())},
         {"truncate", config.truncate},
         {"backend", h.backend},
         {"device", h.device}};
    if (const PrecisionChoice* precision = m->precision_choice()) j["cpu_precision"] = precision_choice_json(*precision);
    // The memory budget of a run (core/memory_limit.h): the largest tensor
    // and the memory available to the process that the default derives from.
    const MemoryInfo b = memory_info();
    const bool set = config.max_tensor_mb > 0;  // the service's max_tensor_mb (flag, environment, config) wins
    auto opt = [](const std::optional<uint64_t>& v) { return v ? json(*v) : json(nullptr); };
    j["memory"] = {{"max_tensor_bytes", set ? static_cast<uint64_t>(config.max_tensor_mb) << 20 : b.max_tensor_bytes},
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

Reply handle_models(Call& c) { return info_reply(c, true); }

Reply handle_info(Call& c) { return info_reply(c, false); }

Reply handle_openapi(Call& c) {
  ModelLimits limits;
  std::shared_ptr<const EmbedModel> m;
  if (!server_util::path_model().empty()) {
    Reply error;
    auto ref = c.model_named("", &error);
    if (!ref) return error;
    m = ref->model;
  } else {
    m = c.server().models().default_model().model;
  }
  if (m) {
    limits.dimension = m->dimension();
    limits.vocab_size = m->vocab_size();
    limits.prompt_names = m->prompt_names();
  }
  Reply r;
  r.body = openapi_document(dlrt::version(), m ? &limits : nullptr);
  return r;
}

}  // namespace dlrt::embed
