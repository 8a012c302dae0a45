// dlrt serve's route table, the opening every POST route shares, the field
// readers of its parsers (routes.h), and the fields and answer writers the
// embedding route families share (handlers.h: image inputs, quantization
// ranges, vectors as JSON, base64 or quantized).
#include "embed/serve/routes.h"

#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string_view>

#include <nlohmann/json.hpp>

#include "embed/models/output_type.h"
#include "embed/serve/body_json.h"
#include "embed/serve/handlers.h"
#include "embed/serve/server.h"
#include "embed/serve/server_util.h"

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

// ---- fields and answers the embedding families share (server_embed, server_cohere_embed) ----

namespace {

RequestError ranges_error(int status, std::string message) { return RequestError{status, std::move(message)}; }

// The string an image input carries ("" when it has none).
const json* image_string(const json& v) {
  if (!v.is_object()) return nullptr;
  if (auto f = v.find("image"); f != v.end()) return &*f;
  auto t = v.find("type");
  auto u = v.find("image_url");
  if (t == v.end() || *t != "image_url" || u == v.end()) return nullptr;
  if (u->is_object()) {
    auto url = u->find("url");
    return url == u->end() ? nullptr : &*url;
  }
  return &*u;
}

bool starts_with_ci(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(s[i])) != prefix[i]) return false;
  return true;
}

int base64_value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

// A non-empty array of non-empty, equally long arrays of numbers, appended row-major to *flat.
bool read_matrix(const json& v, std::vector<float>* flat, size_t* rows, size_t* cols) {
  if (!v.is_array() || v.empty()) return false;
  *rows = v.size();
  *cols = v[0].is_array() ? v[0].size() : 0;
  if (*cols == 0) return false;
  flat->reserve(*rows * *cols);
  for (const json& row : v) {
    if (!row.is_array() || row.size() != *cols) return false;
    for (const json& x : row) {
      // float32, as the library casts ranges; beyond float's range is refused, not made infinite.
      if (!x.is_number() || !(std::fabs(x.get<double>()) <= 3.4028234663852886e38)) return false;
      flat->push_back(static_cast<float>(x.get<double>()));
    }
  }
  return true;
}

}  // namespace

void append_vector(std::string& out, const std::vector<float>& v) {
  out += '[';
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) out += ',';
    server_util::append_json_float(out, v[i]);
  }
  out += ']';
}

void append_base64_bytes(std::string& out, std::string_view bytes) {
  static const char* kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
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

void append_base64(std::string& out, const std::vector<float>& v) {
  std::string bytes(v.size() * sizeof(float), '\0');
  if (!v.empty()) std::memcpy(bytes.data(), v.data(), bytes.size());  // little-endian float32 (x86, arm)
  append_base64_bytes(out, bytes);
}

void append_quantized(std::string& out, const uint8_t* bytes, size_t n, OutputType type, bool base64) {
  if (base64) return append_base64_bytes(out, std::string_view(reinterpret_cast<const char*>(bytes), n));
  out += '[';
  for (size_t i = 0; i < n; ++i) {
    if (i) out += ',';
    out += std::to_string(quantized_value(type, bytes[i]));
  }
  out += ']';
}

std::optional<RequestError> read_quantization_ranges(const json& body, bool needs, EmbedRequest* out) {
  const auto ranges = body.find("ranges");
  const auto calibration = body.find("calibration_embeddings");
  const bool has_ranges = ranges != body.end() && !ranges->is_null();
  const bool has_calibration = calibration != body.end() && !calibration->is_null();
  if ((has_ranges || has_calibration) && !needs)
    return ranges_error(422, std::string("'") + (has_ranges ? "ranges" : "calibration_embeddings") +
                          "' applies to the int8 and uint8 output types");
  if (has_ranges && has_calibration) return ranges_error(422, "give 'ranges' or 'calibration_embeddings', not both");
  size_t rows = 0, cols = 0;
  if (has_ranges) {
    std::vector<float> flat;
    if (!read_matrix(*ranges, &flat, &rows, &cols) || rows != 2)
      return ranges_error(422, "'ranges' must be two arrays of numbers of one length: the per-dimension minimums, then "
                        "maximums");
    out->ranges = QuantizationRanges{{flat.begin(), flat.begin() + static_cast<std::ptrdiff_t>(cols)},
                                     {flat.begin() + static_cast<std::ptrdiff_t>(cols), flat.end()}};
  }
  if (has_calibration) {
    if (calibration->is_array() && calibration->size() > kMaxCalibrationRows)
      return ranges_error(413, std::to_string(calibration->size()) + " rows of 'calibration_embeddings'; the limit is " +
                            std::to_string(kMaxCalibrationRows) + " (give their 'ranges' instead)");
    if (!read_matrix(*calibration, &out->calibration, &rows, &cols))
      return ranges_error(422, "'calibration_embeddings' must be a non-empty array of arrays of numbers of one length");
    out->calibration_rows = rows;
  }
  return std::nullopt;
}

bool is_image_input(const json& v) { return image_string(v) != nullptr; }

bool decode_base64(std::string_view text, std::string* out) {
  out->clear();
  while (!text.empty() && text.back() == '=') text.remove_suffix(1);
  if (text.size() % 4 == 1) return false;
  out->reserve(text.size() / 4 * 3 + 2);
  uint32_t acc = 0;
  int bits = 0;
  for (char c : text) {
    const int v = base64_value(c);
    if (v < 0) return false;
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out->push_back(static_cast<char>((acc >> bits) & 0xFF));
    }
  }
  return true;
}

std::optional<RequestError> read_image_input(const json& v, const std::string& where, size_t max_bytes,
                                             std::string* bytes) {
  const json* s = image_string(v);
  if (!s || !s->is_string())
    return RequestError{422, where + ": an image input's \"image\" (or \"image_url\".\"url\") must be a string: a data "
                                     "URL or base64"};
  return read_image_data(s->get_ref<const std::string&>(), where, max_bytes, bytes);
}

std::optional<RequestError> read_image_data(std::string_view text, const std::string& where, size_t max_bytes,
                                            std::string* bytes) {
  if (starts_with_ci(text, "http://") || starts_with_ci(text, "https://"))
    return RequestError{422, where + ": remote image URLs are not fetched (the server makes no outbound requests); "
                                     "send the image's bytes as base64 or a data URL (data:image/png;base64,...)"};
  if (starts_with_ci(text, "data:")) {
    const size_t comma = text.find(',');
    if (comma == std::string_view::npos || text.substr(0, comma).find(";base64") == std::string_view::npos)
      return RequestError{422, where + ": a data URL must be base64 (data:image/...;base64,...)"};
    text.remove_prefix(comma + 1);
  } else if (text.find("://") != std::string_view::npos) {
    return RequestError{422, where + ": only data URLs and base64 are accepted, not \"" +
                                 std::string(text.substr(0, text.find("://"))) + "://\" URLs"};
  }
  if (text.size() / 4 * 3 > max_bytes + 2)
    return RequestError{413, where + ": the image is over " + std::to_string(max_bytes >> 20) + " MiB"};
  if (!decode_base64(text, bytes)) return RequestError{422, where + ": the image is not valid base64"};
  if (bytes->empty()) return RequestError{422, where + ": the image is empty"};
  return std::nullopt;
}

}  // namespace dlrt::embed
