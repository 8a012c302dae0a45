// dlrt serve's POST /similarity (TEI's sentence-similarity route): how alike
// a source sentence is to each of a list of sentences, by the model folder's
// similarity function (cosine unless config_sentence_transformers.json says
// dot, euclidean or manhattan). See server.h.
#include <cmath>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "embed/serve/body_json.h"
#include "embed/serve/request.h"
#include "embed/serve/route_kinds.h"
#include "embed/serve/server.h"
#include "embed/serve/server_util.h"

namespace dlrt::embed {
namespace {

using json = nlohmann::json;

// sentence-transformers' similarity functions: cosine, dot product, and the
// negated euclidean and manhattan distances (higher is more alike for all).
double similarity(const std::string& fn, const std::vector<float>& a, const std::vector<float>& b) {
  double dot = 0, aa = 0, bb = 0, l2 = 0, l1 = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    const double x = a[i], y = b[i];
    dot += x * y;
    aa += x * x;
    bb += y * y;
    l2 += (x - y) * (x - y);
    l1 += std::fabs(x - y);
  }
  if (fn == "dot") return dot;
  if (fn == "euclidean") return -std::sqrt(l2);
  if (fn == "manhattan") return -l1;
  const double norms = std::sqrt(aa) * std::sqrt(bb);
  return norms > 0 ? dot / norms : 0.0;
}

}  // namespace

EmbedServer::Reply EmbedServer::handle_similarity(const std::string& body) {
  constexpr Api api = Api::kTei;
  if (draining_.load()) return error_reply(api, 503, "unavailable", "the server is shutting down");
  json req;
  if (std::string e = parse_body_json(body, req); !e.empty()) return error_reply(api, 400, "invalid_request_error", e);
  if (!req.is_object()) return error_reply(api, 422, "invalid_request_error", "the body must be a JSON object");
  Reply unavailable;
  std::optional<ModelRef> ref = request_model(api, req, &unavailable);
  if (!ref) return unavailable;
  const EmbedModel& m = *ref->model;
  if (std::string e = route_kind_error("/similarity", m.kind(), model_label(*ref)); !e.empty())
    return error_reply(api, 400, "invalid_request_error", e);
  auto in = req.find("inputs");
  if (in == req.end() || !in->is_object())
    return error_reply(api, 422, "invalid_request_error",
                       "'inputs' must be an object {\"source_sentence\": str, \"sentences\": [str, ...]}");
  auto source = in->find("source_sentence");
  if (source == in->end() || !source->is_string())
    return error_reply(api, 422, "invalid_request_error", "'inputs.source_sentence' must be a string");
  auto sentences = in->find("sentences");
  if (sentences != in->end() && sentences->is_array() && sentences->empty())
    return error_reply(api, 400, "empty", "'inputs.sentences' is empty: send at least one sentence");
  if (sentences == in->end() || !sentences->is_array())
    return error_reply(api, 422, "invalid_request_error", "'inputs.sentences' must be a non-empty list of strings");
  // The same request as /embed of [source, sentences...] with the parameters.
  json embed = {{"inputs", json::array({*source})}};
  for (const json& s : *sentences) embed["inputs"].push_back(s);
  if (auto p = req.find("parameters"); p != req.end() && !p->is_null()) {
    if (!p->is_object()) return error_reply(api, 422, "invalid_request_error", "'parameters' must be an object");
    for (const char* key : {"truncate", "truncation_direction", "prompt_name"})
      if (auto v = p->find(key); v != p->end()) embed[key] = *v;
  }
  EmbedRequest parsed;
  if (auto e = parse_embed_request(embed, RequestKind::kTeiEmbed, config_.max_inputs_per_request, &parsed))
    return error_reply(api, e->status, e->type, e->message);
  RequestResult result;
  if (std::optional<Reply> error = embed_request(parsed, api, *ref, result)) return *error;
  const std::string fn = m.similarity_fn_name();
  json scores = json::array();
  for (size_t i = 1; i < result.vectors.size(); ++i)  // float32, as the vectors (TEI's f32 scores)
    scores.push_back(static_cast<float>(similarity(fn, result.vectors[0], result.vectors[i])));
  Reply r;
  r.body = server_util::dump_json(scores);
  return r;
}

}  // namespace dlrt::embed
