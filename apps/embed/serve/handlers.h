// The typed requests of dlrt serve's routes, their parsers and the
// free-function handlers the route table (routes.h) runs. A parser reads a
// JSON object into its request (the 413/422 otherwise; `max_inputs` is
// max_inputs_per_request); a handler runs once the model the request names is
// found and can serve the route (call.ref()), and formats the answer.
//
//   server_embed.cpp         /v1/embeddings, /embeddings, /embed, /embed_sparse, /similarity, and the
//                            embedding request they and /tokenize read (parse_embed_request)
//   server_info.cpp          /tokenize, /decode, /v1/models, /info, /openapi.json
//   docs_page.cpp            /docs and the Swagger UI files it loads (/docs/...)
//   server_classify.cpp      /rerank (cross-encoders, LLM rerankers, and MaxSim), /v1/rerank, /v2/rerank, /predict
//   server_cohere_embed.cpp  /v1/embed, /v2/embed (Cohere's)
//   server_multi_vector.cpp  /embed_all
//   server_health.cpp        /health, /ready, /live, /metrics, GET / and /ping (TEI's)
//   routes.cpp               POST / and /invocations (TEI's root route: the route of the model's kind)
//
// A route's request thus crosses at most five files of serve/ from its row to
// its answer: routes.cpp, its family's file above (and server_embed.cpp's
// parser for /tokenize), call.cpp, model_registry.cpp and batcher.cpp
// (tests/layers/route_files.py measures it). What the embedding families share
// lives in files every route crosses: the image-input and ranges readers and
// the vector writers in routes.cpp, embed_vectors in call.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "embed/models/output_type.h"
#include "embed/serve/call.h"
#include "embed/serve/routes.h"

namespace dlrt::embed {

// ---- embeddings (server_embed.cpp) ----------------------------------------------
// What an embedding request (/v1/embeddings, /embed, /embed_sparse,
// /similarity, /tokenize, Cohere's /v1/embed and /v2/embed) asks for: texts, token
// ids or images, or texts and images (a mixed request, image_at saying which input is which).
struct EmbedRequest {
  std::vector<std::string> texts;
  std::vector<std::string> images;              // image inputs' encoded bytes (read_image_input)
  std::vector<uint8_t> image_at;                // a mixed request: per input, 1 for an image (else empty)
  std::vector<std::vector<int64_t>> token_ids;  // inputs given as token ids, used as they are
  bool base64 = false;                          // OpenAI encoding_format "base64"
  std::optional<bool> truncate;                 // unset: the server's default
  std::string truncate_field = "\"truncate\": true";  // how a 413 for a long input names truncation
  std::optional<bool> normalize;                // unset: the model folder's
  std::optional<size_t> dimensions;             // keep the first N values (then normalise again)
  std::optional<size_t> max_tokens;             // tokens per input within the model's (Cohere's "max_tokens")
  std::optional<std::string> prompt_name;       // a prompt of config_sentence_transformers.json
  // Queries or documents (sentence-transformers' encode_query / encode_document): the folder's
  // "query" / "document" prompt when no prompt_name is given, and a Router folder's route.
  std::optional<bool> is_query;
  bool add_special_tokens = true;               // /tokenize
  bool sparse = false;                          // sparse vectors: /embed_sparse, or OpenAI encoding_format "sparse"
  std::optional<size_t> top_k;                  // sparse: keep each vector's top_k largest weights
  // /v1/embeddings' output type ("encoding_format": "int8", Mistral's "output_dtype")
  // and the int8/uint8 ranges: "ranges", else "calibration_embeddings" (row-major), else the
  // request's own vectors (sentence-transformers' quantize_embeddings; output_type.h).
  OutputType output_type = OutputType::kFloat32;
  std::optional<QuantizationRanges> ranges;
  std::vector<float> calibration;
  size_t calibration_rows = 0;

  size_t size() const { return texts.size() + images.size() + token_ids.size(); }
  // Notes the input just appended to texts or images (`image`), for a request that may mix them.
  void added_input(bool image);
};

// The most rows of "calibration_embeddings" one request may send (413 above; docs/limits.md);
// max_body_bytes bounds their values too.
inline constexpr size_t kMaxCalibrationRows = 65536;

enum class RequestKind { kOpenAIEmbeddings, kTeiEmbed, kTeiEmbedSparse, kTeiTokenize };
// Reads `body` (a parsed JSON value) into *out; the error answer otherwise.
// `max_inputs` bounds the number of inputs (413 above it). (server_embed.cpp)
ParseError parse_embed_request(const nlohmann::json& body, RequestKind kind, size_t max_inputs, EmbedRequest* out);
// The int8/uint8 ranges of `body` into *out: "ranges", else "calibration_embeddings"
// (a 422 when given and `needs` is false: no requested type takes ranges). (routes.cpp, as
// are the image-input readers and vector writers below.)
ParseError read_quantization_ranges(const nlohmann::json& body, bool needs, EmbedRequest* out);

// Image inputs: {"image": S} (Jina's form) or {"type": "image_url",
// "image_url": {"url": S}} (OpenAI's content part, as vLLM takes it), S a data
// URL ("data:image/png;base64,...") or bare base64. is_image_input: whether
// `v` is one. read_image_input: its encoded bytes (`where` names it in
// messages); a 422 for a remote or other URL, bad base64 or an empty image, a
// 413 when the decoded bytes would pass `max_bytes`.
bool is_image_input(const nlohmann::json& v);
ParseError read_image_input(const nlohmann::json& v, const std::string& where, size_t max_bytes, std::string* bytes);
// The same for the string an input carries (a data URL or bare base64; Cohere's "images").
ParseError read_image_data(std::string_view text, const std::string& where, size_t max_bytes, std::string* bytes);
// Standard base64 (RFC 4648 section 4; padding optional, no other characters);
// false for anything else.
bool decode_base64(std::string_view text, std::string* out);

// The rows' parsers and handler of the embedding routes.
ParseError parse_openai_embeddings(const nlohmann::json& body, size_t max_inputs, EmbedRequest* out);
ParseError parse_tei_embed(const nlohmann::json& body, size_t max_inputs, EmbedRequest* out);
ParseError parse_tei_embed_sparse(const nlohmann::json& body, size_t max_inputs, EmbedRequest* out);
ParseError parse_tei_tokenize(const nlohmann::json& body, size_t max_inputs, EmbedRequest* out);
// The answer's shape by call.api(): OpenAI's list or TEI's arrays; sparse when req.sparse.
Reply handle_embeddings(Call& call, EmbedRequest& req);
// The vectors of a parsed request, texts (Call::embed) or images (the model's
// image tower), finished as asked; the error to answer otherwise. (call.cpp)
std::optional<Reply> embed_vectors(Call& call, EmbedRequest& req, RequestResult& result);

// Vectors as JSON text, as the embedding routes (and Cohere's) write them.
// `[v0,v1,...]`, each value as server_util::append_json_float.
void append_vector(std::string& out, const std::vector<float>& v);
// `"..."`: standard base64 (padded) of `bytes`.
void append_base64_bytes(std::string& out, std::string_view bytes);
// `"..."`: base64 of the vector's little-endian float32 bytes (OpenAI's "base64").
void append_base64(std::string& out, const std::vector<float>& v);
// A quantized vector's `n` bytes: its numbers (quantized_value), or base64 of the bytes.
void append_quantized(std::string& out, const uint8_t* bytes, size_t n, OutputType type, bool base64);

// ---- /similarity: the /embed request of [source, sentences...], scored by the
// model folder's similarity function (cosine unless config_sentence_transformers.json
// says dot, euclidean or manhattan).
ParseError parse_similarity(const nlohmann::json& body, size_t max_inputs, EmbedRequest* out);
Reply handle_similarity(Call& call, EmbedRequest& req);

// ---- tokens (server_info.cpp) -----------------------------------------------------
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
Reply handle_rerank(Call& call, RerankRequest& req);  // by MaxSim for a model of kMaxSim
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
Reply handle_models(Call& call);        // /v1/models (server_info.cpp)
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
