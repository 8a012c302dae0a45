// dlrt serve's embedding routes: /v1/embeddings, /embed and /embed_sparse
// (handle_embeddings), /tokenize, /decode, /v1/models, /info and /openapi.json:
// their parsers, handlers (handlers.h) and answers (dense, quantized, sparse).
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "dlrt/dlrt.h"
#include "embed/serve/handlers.h"
#include "embed/serve/openapi.h"
#include "embed/serve/precision_json.h"
#include "embed/serve/request.h"
#include "embed/serve/server.h"
#include "embed/serve/server_util.h"
#include "embed/serve/vector_json.h"
#include "embed/image/image.h"
#include "embed/models/output_type.h"
#include "embed/models/prepare_inputs.h"
#include "embed/models/sparse.h"

namespace dlrt::embed {
namespace {

using json = nlohmann::json;
using server_util::json_string;

// ---- JSON writing -----------------------------------------------------------

// The sparse answers. TEI (/embed_sparse): [[{"index": i, "value": v}, ...], ...], one list per
// input, indices ascending. OpenAI's list shape with each "embedding" an object
// {"indices": [...], "values": [...]} (/v1/embeddings with "encoding_format": "sparse").
std::string tei_sparse_body(const std::vector<SparseVector>& vectors) {
  std::string out = "[";
  for (size_t i = 0; i < vectors.size(); ++i) {
    const SparseVector& v = vectors[i];
    out += i ? ",[" : "[";
    for (size_t k = 0; k < v.indices.size(); ++k) {
      out += k ? ",{\"index\":" : "{\"index\":";
      out += std::to_string(v.indices[k]);
      out += ",\"value\":";
      server_util::append_json_float(out, v.values[k]);
      out += '}';
    }
    out += ']';
  }
  out += ']';
  return out;
}

std::string openai_sparse_body(const std::vector<SparseVector>& vectors, const std::string& model, size_t tokens) {
  std::string out = "{\"object\":\"list\",\"data\":[";
  for (size_t i = 0; i < vectors.size(); ++i) {
    const SparseVector& v = vectors[i];
    if (i) out += ',';
    out += "{\"object\":\"embedding\",\"index\":" + std::to_string(i) + ",\"embedding\":{\"indices\":[";
    for (size_t k = 0; k < v.indices.size(); ++k) {
      if (k) out += ',';
      out += std::to_string(v.indices[k]);
    }
    out += "],\"values\":[";
    for (size_t k = 0; k < v.values.size(); ++k) {
      if (k) out += ',';
      server_util::append_json_float(out, v.values[k]);
    }
    out += "]}}";
  }
  out += "],\"model\":" + server_util::json_string(model) + ",\"usage\":{\"prompt_tokens\":" + std::to_string(tokens) +
         ",\"total_tokens\":" + std::to_string(tokens) + "}}";
  return out;
}

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

// An image request's vectors (image_input.h): decoded here, then run through
// the model's vision tower in run slots, max_batch_size images a run.
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

ParseError parse_openai_embeddings(const json& body, size_t max_inputs, EmbedRequest* out) {
  return parse_embed_request(body, RequestKind::kOpenAIEmbeddings, max_inputs, out);
}

ParseError parse_tei_embed(const json& body, size_t max_inputs, EmbedRequest* out) {
  return parse_embed_request(body, RequestKind::kTeiEmbed, max_inputs, out);
}

ParseError parse_tei_embed_sparse(const json& body, size_t max_inputs, EmbedRequest* out) {
  return parse_embed_request(body, RequestKind::kTeiEmbedSparse, max_inputs, out);
}

ParseError parse_tei_tokenize(const json& body, size_t max_inputs, EmbedRequest* out) {
  return parse_embed_request(body, RequestKind::kTeiTokenize, max_inputs, out);
}

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

Reply handle_embeddings(Call& c, EmbedRequest& req) {
  const Api api = c.api();
  const ModelRef* ref = &c.ref();
  // TEI's defaults on its routes: /embed normalises unless asked not to, and
  // OpenAI's route gives unit vectors as OpenAI and TEI do (docs/migrate.md).
  if (!req.sparse && !req.normalize) req.normalize = true;
  RequestResult result;
  if (std::optional<Reply> error = embed_vectors(c, req, result)) return *error;
  if (req.sparse) {
    std::vector<SparseVector>& sparse = result.sparse;
    for (SparseVector& v : sparse) v = keep_top_k(std::move(v), req.top_k.value_or(0));
    Reply r;
    r.body = api == Api::kTei ? tei_sparse_body(sparse) : openai_sparse_body(sparse, ref->name, result.tokens);
    return r;
  }

  // int8 / uint8 / binary / ubinary: the whole request's vectors at once, as quantize_embeddings.
  std::vector<uint8_t> quantized;
  const OutputType type = req.output_type;
  if (type != OutputType::kFloat32) {
    QuantizationSource source{req.ranges, req.calibration.data(), req.calibration_rows};
    if (std::string e = quantize_rows(result.vectors, type, source, &quantized); !e.empty()) return c.invalid(e);
  }
  const size_t row_bytes = result.vectors.empty() ? 0 : quantized_bytes(type, result.vectors[0].size());

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
    if (type != OutputType::kFloat32) append_quantized(out, quantized.data() + i * row_bytes, row_bytes, type, req.base64);
    else if (req.base64) append_base64(out, result.vectors[i]);
    else append_vector(out, result.vectors[i]);
    out += '}';
  }
  out += "],\"model\":" + json_string(ref->name) + ",\"usage\":{\"prompt_tokens\":" + std::to_string(result.tokens) +
         ",\"total_tokens\":" + std::to_string(result.tokens) + "}}";
  return r;
}

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
