// The typed requests of dlrt serve's routes, their parsers and the
// free-function handlers the route table (routes.h) runs. A parser reads a
// JSON object into its request (the 413/422 otherwise; `max_inputs` is
// max_inputs_per_request); a handler runs once the model the request names is
// found and can serve the route (call.ref()), and formats the answer.
//
//   server_routes.cpp        /v1/embeddings, /embeddings, /embed, /embed_sparse, /tokenize, /decode,
//                            /v1/models, /info, /openapi.json
//   docs_page.cpp            /docs and the Swagger UI files it loads (/docs/...)
//   server_similarity.cpp    /similarity
//   server_classify.cpp      /rerank, /v1/rerank, /predict
//   server_cohere_embed.cpp  /v1/embed, /v2/embed (Cohere's)
//   server_multi_vector.cpp  /embed_all, and /rerank by MaxSim
//   server_health.cpp        /health, /ready, /live, /metrics, GET / and /ping (TEI's)
//   routes.cpp               POST / and /invocations (TEI's root route: the route of the model's kind)
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "embed/serve/call.h"
#include "embed/serve/request.h"

namespace dlrt::embed {

using ParseError = std::optional<RequestError>;

// ---- embeddings and tokens (server_routes.cpp) --------------------------------
ParseError parse_openai_embeddings(const nlohmann::json& body, size_t max_inputs, EmbedRequest* out);
ParseError parse_tei_embed(const nlohmann::json& body, size_t max_inputs, EmbedRequest* out);
ParseError parse_tei_embed_sparse(const nlohmann::json& body, size_t max_inputs, EmbedRequest* out);
ParseError parse_tei_tokenize(const nlohmann::json& body, size_t max_inputs, EmbedRequest* out);
// The answer's shape by call.api(): OpenAI's list or TEI's arrays; sparse when req.sparse.
Reply handle_embeddings(Call& call, EmbedRequest& req);
// The vectors of a parsed request, texts (Call::embed) or images (the model's
// image tower), finished as asked; the error to answer otherwise.
std::optional<Reply> embed_vectors(Call& call, EmbedRequest& req, RequestResult& result);
Reply handle_tokenize(Call& call, EmbedRequest& req);

struct DecodeRequest {
  std::vector<std::vector<int64_t>> ids;  // one sequence per answer
  bool skip_special_tokens = true;
};
ParseError parse_decode(const nlohmann::json& body, size_t max_inputs, DecodeRequest* out);
Reply handle_decode(Call& call, DecodeRequest& req);

// ---- Cohere's /v1/embed and /v2/embed (server_cohere_embed.cpp) ----------------
struct CohereEmbedRequest {
  EmbedRequest embed;                // texts or images, truncation, max_tokens, output_dimension, ranges
  std::string input_type;            // "" when not given (v1 only)
  std::vector<std::string> types;    // "embedding_types" in order, each once; empty: float
  std::vector<std::string> echoed;   // the texts, as the answer's "texts" gives them back
};
ParseError parse_cohere_embed_v1(const nlohmann::json& body, size_t max_inputs, CohereEmbedRequest* out);
ParseError parse_cohere_embed_v2(const nlohmann::json& body, size_t max_inputs, CohereEmbedRequest* out);
// v2: "embeddings_by_type"; v1: the same with embedding_types, else "embeddings_floats".
Reply handle_cohere_embed_v1(Call& call, CohereEmbedRequest& req);
Reply handle_cohere_embed_v2(Call& call, CohereEmbedRequest& req);

// ---- /similarity (server_similarity.cpp): the /embed request of [source, sentences...]
ParseError parse_similarity(const nlohmann::json& body, size_t max_inputs, EmbedRequest* out);
Reply handle_similarity(Call& call, EmbedRequest& req);

// ---- rerankers and classifiers (server_classify.cpp) -------------------------
struct RerankRequest {  // TEI's /rerank
  std::string query;
  std::vector<std::string> texts;
  bool raw_scores = false;
  bool return_text = false;
  std::optional<bool> truncate;  // unset: the server's
  std::string instruction;       // LLM rerankers' task ("" the model's default)
};
ParseError parse_rerank(const nlohmann::json& body, size_t max_inputs, RerankRequest* out);
Reply handle_rerank(Call& call, RerankRequest& req);
// /rerank of a model with the kMaxSim capability (server_multi_vector.cpp).
Reply handle_rerank_maxsim(Call& call, RerankRequest& req);
// "" when the model gives one score per pair (a MaxSim model does too); else
// the 400's message (`who` names the model).
std::string one_score_check(const EmbedModel& m, const std::string& who, const char* path);

struct V1RerankRequest {  // Cohere's and Jina's /v1/rerank
  std::string query;
  std::vector<std::string> documents;
  size_t top_n = 0;  // 0: all
  bool return_documents = false;
  bool truncate = true;
  std::string instruction;
};
ParseError parse_v1_rerank(const nlohmann::json& body, size_t max_inputs, V1RerankRequest* out);
Reply handle_v1_rerank(Call& call, V1RerankRequest& req);
// Cohere's /v2/rerank (what cohere.ClientV2 posts): /v1/rerank's fields and
// answer, with v2's "meta"; "max_tokens_per_doc" is refused (pairs are cut at
// the model's maximum length, as on /v1/rerank).
ParseError parse_v2_rerank(const nlohmann::json& body, size_t max_inputs, V1RerankRequest* out);
Reply handle_v2_rerank(Call& call, V1RerankRequest& req);

struct PredictRequest {  // TEI's /predict
  struct Item {
    std::string first, second;
    bool pair = false;
  };
  std::vector<Item> items;
  bool batch = false;  // a list of inputs (answered per input), not one
  bool raw_scores = false;
  std::optional<bool> truncate;
};
ParseError parse_predict(const nlohmann::json& body, size_t max_inputs, PredictRequest* out);
Reply handle_predict(Call& call, PredictRequest& req);

// ---- per-token vectors (server_multi_vector.cpp) -----------------------------
struct EmbedAllRequest {
  std::vector<std::string> texts;
  std::optional<bool> truncate;
  std::optional<bool> is_query;  // multi-vector models: query or document vectors
  std::optional<std::string> prompt_name;
};
ParseError parse_embed_all(const nlohmann::json& body, size_t max_inputs, EmbedAllRequest* out);
Reply handle_embed_all(Call& call, EmbedAllRequest& req);

// ---- GET routes ----------------------------------------------------------------
Reply handle_models(Call& call);        // /v1/models (server_routes.cpp)
Reply handle_info(Call& call);          // /info
Reply handle_openapi(Call& call);       // /openapi.json
Reply handle_docs(Call& call);          // /docs (docs_page.cpp)
Reply handle_docs_bundle(Call& call);   // /docs/swagger-ui-bundle.js
Reply handle_docs_css(Call& call);      // /docs/swagger-ui.css
Reply handle_docs_license(Call& call);  // /docs/LICENSE (Swagger UI's)
Reply handle_health(Call& call);        // /health (server_health.cpp)
Reply handle_ready(Call& call);         // /ready
Reply handle_live(Call& call);          // /live
Reply handle_metrics(Call& call);       // /metrics
// GET / and /ping as TEI answers them: 200 with no body while the server (or
// the model of a /models/NAME/ prefix) serves, else 503 with TEI's error.
Reply handle_tei_health(Call& call);

}  // namespace dlrt::embed
