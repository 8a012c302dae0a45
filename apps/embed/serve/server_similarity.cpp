// dlrt serve's POST /similarity (TEI's sentence-similarity route): how alike
// a source sentence is to each of a list of sentences, by the model folder's
// similarity function (cosine unless config_sentence_transformers.json says
// dot, euclidean or manhattan). See handlers.h.
#include <cmath>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "embed/serve/handlers.h"
#include "embed/serve/request.h"
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

ParseError parse_similarity(const json& req, size_t max_inputs, EmbedRequest* parsed) {
  auto in = req.find("inputs");
  if (in == req.end() || !in->is_object())
    return RequestError{422, "'inputs' must be an object {\"source_sentence\": str, \"sentences\": [str, ...]}"};
  auto source = in->find("source_sentence");
  if (source == in->end() || !source->is_string()) return RequestError{422, "'inputs.source_sentence' must be a string"};
  auto sentences = in->find("sentences");
  if (sentences != in->end() && sentences->is_array() && sentences->empty())
    return RequestError{400, "'inputs.sentences' is empty: send at least one sentence", "empty"};
  if (sentences == in->end() || !sentences->is_array())
    return RequestError{422, "'inputs.sentences' must be a non-empty list of strings"};
  // The same request as /embed of [source, sentences...] with the parameters.
  json embed = {{"inputs", json::array({*source})}};
  for (const json& s : *sentences) embed["inputs"].push_back(s);
  if (auto p = req.find("parameters"); p != req.end() && !p->is_null()) {
    if (!p->is_object()) return RequestError{422, "'parameters' must be an object"};
    for (const char* key : {"truncate", "truncation_direction", "prompt_name"})
      if (auto v = p->find(key); v != p->end()) embed[key] = *v;
  }
  return parse_embed_request(embed, RequestKind::kTeiEmbed, max_inputs, parsed);
}

Reply handle_similarity(Call& c, EmbedRequest& parsed) {
  const EmbedModel& m = c.model();
  RequestResult result;
  if (std::optional<Reply> error = c.embed(parsed, result)) return *error;
  const std::string fn = m.similarity_fn_name();
  json scores = json::array();
  for (size_t i = 1; i < result.vectors.size(); ++i)  // float32, as the vectors (TEI's f32 scores)
    scores.push_back(static_cast<float>(similarity(fn, result.vectors[0], result.vectors[i])));
  Reply r;
  r.body = server_util::dump_json(scores);
  return r;
}

}  // namespace dlrt::embed
