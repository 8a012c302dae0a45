// dlrt serve's route table, the opening every POST route shares and the
// field readers of its parsers (routes.h).
#include "embed/serve/routes.h"

#include <nlohmann/json.hpp>

#include "embed/serve/body_json.h"
#include "embed/serve/handlers.h"
#include "embed/serve/server.h"

namespace dlrt::embed {
namespace {

using json = nlohmann::json;
using C = Capability;

// A row's PostFn: the request read by `Parse` and answered by `Handle`, with
// the model looked up and checked before or after the fields (fields_first).
template <class Req, ParseError (*Parse)(const json&, size_t, Req*), Reply (*Handle)(Call&, Req&)>
Reply typed(Call& call, const Route& route, const json& body) {
  Req req;
  auto parse = [&]() -> std::optional<Reply> {
    if (ParseError e = Parse(body, call.config().max_inputs_per_request, &req))
      return call.error(e->status, e->type, e->message);
    return std::nullopt;
  };
  if (route.fields_first)
    if (auto e = parse()) return *e;
  if (auto e = call.find_model(body)) return *e;
  const EmbedModel& m = call.model();
  const std::string who = call.model_label();
  const bool variant = in_variant(route, body);
  std::string refusal = kind_refusal(m.kind(), variant ? route.variant_needs : route.needs, who,
                                     route.path + (variant ? " with " + route.variant() : std::string()));
  if (refusal.empty() && route.check) refusal = route.check(m, who, route.path);
  if (!refusal.empty()) return call.error(400, "invalid_request_error", refusal);
  if (!route.fields_first)
    if (auto e = parse()) return *e;
  return Handle(call, req);
}

// TEI's root route: the request answered by the route of its model (route_for).
Reply serve_by_kind(Call& call, const Route&, const json& body) {
  if (auto e = call.find_model(body)) return *e;
  const Route& target = route_for(call.model());
  if (target.drains && call.server().draining()) return call.error(503, "unavailable", "the server is shutting down");
  return target.post(call, target, body);
}

template <class Req, ParseError (*Parse)(const json&, size_t, Req*), Reply (*Handle)(Call&, Req&)>
constexpr PostFn kPost = typed<Req, Parse, Handle>;
constexpr const char* kProbe = R"({"type":"object","properties":{"status":{"type":"string"}}})";
constexpr const char* kText = R"({"type":"string"})";
constexpr const char* kObject = R"({"type":"object"})";
const RouteDoc kOpenAIEmbeddings = {"Embeddings (OpenAI)", "EmbeddingsRequest", "EmbeddingsResponse"};

// Every route; the order is a 404's.
const std::vector<Route> kRoutes = {
    {.path = "/v1/embeddings", .post = kPost<EmbedRequest, parse_openai_embeddings, handle_embeddings>,
     .api = Api::kOpenAI, .needs = {C::kDense}, .variant_field = "encoding_format", .variant_value = "sparse",
     .variant_needs = {C::kSparse}, .fields_first = true, .drains = true, .doc = kOpenAIEmbeddings},
    {.path = "/embeddings", .post = kPost<EmbedRequest, parse_openai_embeddings, handle_embeddings>,
     .api = Api::kOpenAI, .needs = {C::kDense}, .variant_field = "encoding_format", .variant_value = "sparse",
     .variant_needs = {C::kSparse}, .fields_first = true, .drains = true, .listed = false, .doc = kOpenAIEmbeddings},
    {.path = "/embed", .post = kPost<EmbedRequest, parse_tei_embed, handle_embeddings>, .needs = {C::kDense},
     .fields_first = true, .drains = true, .doc = {"Embeddings (TEI)", "EmbedRequest", "EmbedResponse"}},
    {.path = "/embed_sparse", .post = kPost<EmbedRequest, parse_tei_embed_sparse, handle_embeddings>,
     .needs = {C::kSparse}, .fields_first = true, .drains = true,
     .doc = {"Sparse (SPLADE) vectors (TEI)", "EmbedSparseRequest", "EmbedSparseResponse"}},
    {.path = "/embed_all", .post = kPost<EmbedAllRequest, parse_embed_all, handle_embed_all>, .needs = {C::kPerToken},
     .drains = true, .doc = {"Per-token vectors (TEI); multi-vector models", "EmbedAllRequest", "EmbedAllResponse"}},
    {.path = "/similarity", .post = kPost<EmbedRequest, parse_similarity, handle_similarity>, .needs = {C::kDense},
     .drains = true,
     .doc = {"Similarity of a sentence to others, by the model's similarity function (TEI)", "SimilarityRequest",
             "SimilarityResponse"}},
    {.path = "/tokenize", .post = kPost<EmbedRequest, parse_tei_tokenize, handle_tokenize>, .needs = {C::kTokenize},
     .fields_first = true, .doc = {"Tokens of texts (TEI)", "TokenizeRequest", "TokenizeResponse"}},
    {.path = "/decode", .post = kPost<DecodeRequest, parse_decode, handle_decode>, .needs = {C::kTokenize},
     .doc = {"Text of token ids (TEI)", "DecodeRequest", "DecodeResponse"}},
    {.path = "/rerank", .post = kPost<RerankRequest, parse_rerank, handle_rerank>,
     .needs = {C::kPairScore, C::kMaxSim}, .check = one_score_check,
     .doc = {"Texts scored against a query by a cross-encoder or LLM reranker (TEI)", "RerankRequest",
             "RerankResponse"}},
    {.path = "/v1/rerank", .post = kPost<V1RerankRequest, parse_v1_rerank, handle_v1_rerank>, .api = Api::kOpenAI,
     .needs = {C::kPairScore}, .check = one_score_check,
     .doc = {"Documents ranked against a query (Cohere, Jina)", "V1RerankRequest", "V1RerankResponse"}},
    {.path = "/v2/rerank", .post = kPost<V1RerankRequest, parse_v2_rerank, handle_v2_rerank>, .api = Api::kOpenAI,
     .needs = {C::kPairScore}, .check = one_score_check,
     .doc = {"Documents ranked against a query (Cohere v2: /v1/rerank's answer with \"meta\")", "V1RerankRequest",
             "V1RerankResponse"}},
    {.path = "/v2/embed", .post = kPost<CohereEmbedRequest, parse_cohere_embed_v2, handle_cohere_embed_v2>,
     .api = Api::kOpenAI, .needs = {C::kDense}, .fields_first = true, .drains = true,
     .doc = {"Embeddings by type (Cohere v2: input_type, embedding_types)", "CohereEmbedRequest",
             "CohereEmbedByTypeResponse"}},
    {.path = "/v1/embed", .post = kPost<CohereEmbedRequest, parse_cohere_embed_v1, handle_cohere_embed_v1>,
     .api = Api::kOpenAI, .needs = {C::kDense}, .fields_first = true, .drains = true,
     .doc = {"Embeddings (Cohere v1: floats, or by type with embedding_types)", "CohereV1EmbedRequest",
             "CohereEmbedResponse"}},
    {.path = "/predict", .post = kPost<PredictRequest, parse_predict, handle_predict>, .needs = {C::kClassify},
     .doc = {"Label scores of a sequence classifier (TEI)", "PredictRequest", "PredictResponse"}},
    {.path = "/v1/models", .get = handle_models, .api = Api::kOpenAI, .per_model = false,
     .doc = {"The served model (OpenAI)", nullptr, "ModelList"}},
    {.path = "/info", .get = handle_info, .api = Api::kOpenAI,
     .doc = {"The served model and settings (TEI)", nullptr, "Info"}},
    {.path = "/health", .get = handle_health, .api = Api::kOpenAI, .open = true,
     .doc = {"Status, and where the model runs", nullptr, "Health", "application/json", "loading, draining or failed"}},
    {.path = "/ready", .get = handle_ready, .api = Api::kOpenAI, .per_model = false, .open = true,
     .doc = {"Readiness: 200 while serving at full speed", nullptr, kProbe, "application/json",
             "not ready / not live"}},
    {.path = "/live", .get = handle_live, .api = Api::kOpenAI, .per_model = false, .open = true,
     .doc = {"Liveness: 503 when failed", nullptr, kProbe, "application/json", "not ready / not live"}},
    {.path = "/metrics", .get = handle_metrics, .api = Api::kOpenAI, .per_model = false,
     .doc = {"Prometheus metrics", nullptr, kText, "text/plain"}},
    {.path = "/openapi.json", .get = handle_openapi, .api = Api::kOpenAI, .doc = {"This document", nullptr, kObject}},
    {.path = "/docs", .get = handle_docs, .api = Api::kOpenAI, .per_model = false,
     .doc = {"This document as a web page (Swagger UI)", nullptr, kText, "text/html"}},
    // The Swagger UI files /docs loads (docs_page.cpp), not routes of the API.
    {.path = "/docs/swagger-ui-bundle.js", .get = handle_docs_bundle, .api = Api::kOpenAI, .per_model = false,
     .listed = false, .documented = false},
    {.path = "/docs/swagger-ui.css", .get = handle_docs_css, .api = Api::kOpenAI, .per_model = false,
     .listed = false, .documented = false},
    {.path = "/docs/LICENSE", .get = handle_docs_license, .api = Api::kOpenAI, .per_model = false,
     .listed = false, .documented = false},
    // TEI's: POST / and /invocations (SageMaker's) as the model's route, GET /
    // and /ping (SageMaker's) as its health, and its document's path.
    {.path = "/", .post = serve_by_kind, .get = handle_tei_health, .open = true, .documented = false},
    {.path = "/invocations", .post = serve_by_kind, .documented = false},
    {.path = "/ping", .get = handle_tei_health, .per_model = false, .open = true, .documented = false},
    {.path = "/api-doc/openapi.json", .get = handle_openapi, .api = Api::kOpenAI, .listed = false,
     .doc = {"This document (TEI's path)", nullptr, kObject}},
};

}  // namespace

std::string Route::variant() const {
  return *variant_field ? std::string("\"") + variant_field + "\": \"" + variant_value + "\"" : std::string();
}

const std::vector<Route>& routes() { return kRoutes; }

const Route* find_route(std::string_view path) {
  for (const Route& r : routes())
    if (path == r.path) return &r;
  return nullptr;
}

std::string route_list() {
  std::string s;
  for (const Route& r : routes()) {
    if (!r.listed) continue;
    if (r.get && r.post) s += std::string(s.empty() ? "" : ", ") + "GET " + r.path;
    s += std::string(s.empty() ? "" : ", ") + (r.post ? "POST " : "GET ") + r.path;
  }
  return s;
}

const Route& route_for(const EmbedModel& m) {
  const ModelKind kind = m.kind();
  const PairScorer* scorer = m.as<PairScorer>();
  const bool several_labels = scorer && scorer->labels().size() != 1;
  const char* path = has_capability(kind, C::kDense)                        ? "/embed"
                     : has_capability(kind, C::kSparse)                     ? "/embed_sparse"
                     : has_capability(kind, C::kClassify) && several_labels ? "/predict"
                     : has_capability(kind, C::kPairScore)                  ? "/rerank"
                                                                            : "/embed_all";
  return *find_route(path);
}

bool in_variant(const Route& route, const json& body) {
  if (!*route.variant_field || !body.is_object()) return false;
  auto f = body.find(route.variant_field);
  return f != body.end() && f->is_string() && *f == route.variant_value;
}

ParseError read_bool(const json& body, const char* name, std::optional<bool>& out) {
  auto f = body.find(name);
  if (f == body.end() || f->is_null()) return std::nullopt;
  if (!f->is_boolean()) return RequestError{422, std::string("'") + name + "' must be a boolean"};
  out = f->get<bool>();
  return std::nullopt;
}

ParseError read_string(const json& body, const char* name, std::optional<std::string>& out) {
  auto f = body.find(name);
  if (f == body.end() || f->is_null()) return std::nullopt;
  if (!f->is_string()) return RequestError{422, std::string("'") + name + "' must be a string"};
  out = f->get<std::string>();
  return std::nullopt;
}

RequestError too_many_inputs(size_t n, const char* noun, size_t max_inputs) {
  return {413, std::to_string(n) + " " + noun + " in one request; the limit is " + std::to_string(max_inputs) +
                   kInputsLimitNote};
}

ParseError read_texts(const json& body, const char* field, bool one_allowed, size_t max_inputs,
                      std::vector<std::string>* out) {
  const std::string name(field);
  auto in = body.find(field);
  if (one_allowed && in != body.end() && in->is_string()) {
    out->push_back(in->get<std::string>());
    return std::nullopt;
  }
  if (in != body.end() && in->is_array() && in->empty())
    return RequestError{400, "'" + name + "' is empty: send at least one input", "empty"};
  if (in == body.end() || !in->is_array())
    return RequestError{422, "'" + name + "' must be " + (one_allowed ? "a string or " : "") +
                                 "a non-empty array of strings"};
  if (in->size() > max_inputs) return too_many_inputs(in->size(), field, max_inputs);
  for (size_t i = 0; i < in->size(); ++i) {
    if (!(*in)[i].is_string()) return RequestError{422, "'" + name + "'[" + std::to_string(i) + "] is not a string"};
    out->push_back((*in)[i].get<std::string>());
  }
  return std::nullopt;
}

Reply serve_post(Call& call, const Route& route, const std::string& body) {
  if (route.drains && call.server().draining()) return call.error(503, "unavailable", "the server is shutting down");
  json body_json;
  if (std::string e = parse_body_json(body, body_json); !e.empty()) return call.error(400, "invalid_request_error", e);
  if (!body_json.is_object()) return call.invalid("the body must be a JSON object");
  return route.post(call, route, body_json);
}

}  // namespace dlrt::embed
