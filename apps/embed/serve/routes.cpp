// dlrt serve's route table and the opening every POST route shares (routes.h).
#include "embed/serve/routes.h"

#include <nlohmann/json.hpp>

#include "embed/serve/body_json.h"
#include "embed/serve/handlers.h"
#include "embed/serve/route_kinds.h"
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
      return call.error(e->status, "invalid_request_error", e->message);
    return std::nullopt;
  };
  if (route.fields_first)
    if (auto e = parse()) return *e;
  if (auto e = call.find_model(body)) return *e;
  const EmbedModel& m = call.model();
  const std::string who = call.model_label();
  std::string refusal = route_kind_error(route.path, m.kind(), who, in_variant(route, body));
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

constexpr PostFn kEmbeddings = typed<EmbedRequest, parse_openai_embeddings, handle_embeddings>;
constexpr const char* kProbe = R"({"type":"object","properties":{"status":{"type":"string"}}})";

std::vector<Route> make_routes() {
  auto embeddings = [](const char* path, bool listed) {
    Route r{path, Api::kOpenAI, listed, true, false, kEmbeddings};
    r.doc = {"Embeddings (OpenAI)", "EmbeddingsRequest", "EmbeddingsResponse"};
    r.needs = {C::kDense};
    r.variant_field = "encoding_format";
    r.variant_value = "sparse";
    r.variant_needs = {C::kSparse};
    r.drains = r.fields_first = true;
    return r;
  };
  // A POST route of a model: its row with what it needs.
  auto post = [](const char* path, Api api, PostFn fn, RouteDoc doc, std::vector<Capability> needs) {
    Route r{path, api, true, true, false, fn};
    r.doc = doc;
    r.needs = std::move(needs);
    return r;
  };
  auto get = [](const char* path, bool per_model, GetFn fn, RouteDoc doc) {
    Route r{path, Api::kOpenAI, true, per_model, false, nullptr, fn};
    r.doc = doc;
    return r;
  };
  std::vector<Route> t;
  t.push_back(embeddings("/v1/embeddings", true));
  t.push_back(embeddings("/embeddings", false));
  t.push_back(post("/embed", Api::kTei, typed<EmbedRequest, parse_tei_embed, handle_embeddings>,
                   {"Embeddings (TEI)", "EmbedRequest", "EmbedResponse"}, {C::kDense}));
  t.back().drains = t.back().fields_first = true;
  t.push_back(post("/embed_sparse", Api::kTei, typed<EmbedRequest, parse_tei_embed_sparse, handle_embeddings>,
                   {"Sparse (SPLADE) vectors (TEI)", "EmbedSparseRequest", "EmbedSparseResponse"}, {C::kSparse}));
  t.back().drains = t.back().fields_first = true;
  t.push_back(post("/embed_all", Api::kTei, typed<EmbedAllRequest, parse_embed_all, handle_embed_all>,
                   {"Per-token vectors (TEI); multi-vector models", "EmbedAllRequest", "EmbedAllResponse"},
                   {C::kPerToken}));
  t.back().drains = true;
  t.push_back(post("/similarity", Api::kTei, typed<EmbedRequest, parse_similarity, handle_similarity>,
                   {"Similarity of a sentence to others, by the model's similarity function (TEI)",
                    "SimilarityRequest", "SimilarityResponse"},
                   {C::kDense}));
  t.back().drains = true;
  t.push_back(post("/tokenize", Api::kTei, typed<EmbedRequest, parse_tei_tokenize, handle_tokenize>,
                   {"Tokens of texts (TEI)", "TokenizeRequest", "TokenizeResponse"}, {C::kTokenize}));
  t.back().fields_first = true;
  t.push_back(post("/decode", Api::kTei, typed<DecodeRequest, parse_decode, handle_decode>,
                   {"Text of token ids (TEI)", "DecodeRequest", "DecodeResponse"}, {C::kTokenize}));
  t.push_back(post("/rerank", Api::kTei, typed<RerankRequest, parse_rerank, handle_rerank>,
                   {"Texts scored against a query by a cross-encoder or LLM reranker (TEI)", "RerankRequest",
                    "RerankResponse"},
                   {C::kPairScore, C::kMaxSim}));
  t.back().check = one_score_check;
  t.push_back(post("/v1/rerank", Api::kOpenAI, typed<V1RerankRequest, parse_v1_rerank, handle_v1_rerank>,
                   {"Documents ranked against a query (Cohere, Jina)", "V1RerankRequest", "V1RerankResponse"},
                   {C::kPairScore}));
  t.back().check = one_score_check;
  t.push_back(post("/predict", Api::kTei, typed<PredictRequest, parse_predict, handle_predict>,
                   {"Label scores of a sequence classifier (TEI)", "PredictRequest", "PredictResponse"},
                   {C::kClassify}));
  t.push_back(get("/v1/models", false, handle_models, {"The served model (OpenAI)", nullptr, "ModelList"}));
  t.push_back(get("/info", true, handle_info, {"The served model and settings (TEI)", nullptr, "Info"}));
  t.push_back(get("/health", true, handle_health,
                  {"Status, and where the model runs", nullptr, "Health", "application/json",
                   "loading, draining or failed"}));
  t.back().open = true;
  t.push_back(get("/ready", false, handle_ready,
                  {"Readiness: 200 while serving at full speed", nullptr, kProbe, "application/json",
                   "not ready / not live"}));
  t.back().open = true;
  t.push_back(get("/live", false, handle_live,
                  {"Liveness: 503 when failed", nullptr, kProbe, "application/json", "not ready / not live"}));
  t.back().open = true;
  t.push_back(get("/metrics", false, handle_metrics, {"Prometheus metrics", nullptr, R"({"type":"string"})", "text/plain"}));
  t.push_back(get("/openapi.json", true, handle_openapi, {"This document", nullptr, R"({"type":"object"})"}));
  t.push_back(get("/docs", false, handle_docs,
                  {"This document as a web page", nullptr, R"({"type":"string"})", "text/html"}));
  // TEI's: POST / and /invocations (SageMaker's) as the model's route, GET /
  // and /ping (SageMaker's) its health, its document's path.
  t.push_back({"/", Api::kTei, true, true, true, serve_by_kind, handle_tei_health});
  t.back().documented = false;
  t.push_back({"/invocations", Api::kTei, true, true, false, serve_by_kind});
  t.back().documented = false;
  t.push_back({"/ping", Api::kTei, true, false, true, nullptr, handle_tei_health});
  t.back().documented = false;
  t.push_back(get("/api-doc/openapi.json", true, handle_openapi, {"This document (TEI's path)", nullptr,
                                                                  R"({"type":"object"})"}));
  t.back().listed = false;
  return t;
}

}  // namespace

std::string Route::variant() const {
  return *variant_field ? std::string("\"") + variant_field + "\": \"" + variant_value + "\"" : std::string();
}

const std::vector<Route>& routes() {
  static const std::vector<Route> table = make_routes();
  return table;
}

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
  const char* path = has_capability(kind, C::kDense)                                 ? "/embed"
                     : has_capability(kind, C::kSparse)                              ? "/embed_sparse"
                     : has_capability(kind, C::kClassify) && m.labels().size() != 1 ? "/predict"
                     : has_capability(kind, C::kPairScore)                           ? "/rerank"
                                                                                     : "/embed_all";
  return *find_route(path);
}

bool in_variant(const Route& route, const json& body) {
  if (!*route.variant_field || !body.is_object()) return false;
  auto f = body.find(route.variant_field);
  return f != body.end() && f->is_string() && *f == route.variant_value;
}

Reply serve_post(Call& call, const Route& route, const std::string& body) {
  if (route.drains && call.server().draining()) return call.error(503, "unavailable", "the server is shutting down");
  json body_json;
  if (std::string e = parse_body_json(body, body_json); !e.empty()) return call.error(400, "invalid_request_error", e);
  if (!body_json.is_object()) return call.invalid("the body must be a JSON object");
  return route.post(call, route, body_json);
}

}  // namespace dlrt::embed
