// The embedding requests `dlrt serve` accepts (OpenAI's /v1/embeddings and
// TEI's /embed, /embed_sparse, /tokenize), read from JSON into one form, and the per-request
// finishing of pooled vectors (Matryoshka truncation, L2 normalisation).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "embed/models/output_type.h"

namespace dlrt::embed {

// What a request asks for: texts, token ids or images, or texts and images
// (a mixed request, image_at saying which input is which).
struct EmbedRequest {
  std::vector<std::string> texts;
  std::vector<std::string> images;              // image inputs' encoded bytes (image_input.h)
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

// Why a request was refused: HTTP status and message.
struct RequestError {
  int status = 422;
  std::string message;
  std::string type = "invalid_request_error";  // "empty": no inputs (TEI's Empty, a 400)
};

// The most rows of "calibration_embeddings" one request may send (413 above; docs/limits.md);
// max_body_bytes bounds their values too.
inline constexpr size_t kMaxCalibrationRows = 65536;

// How a 413 for too many inputs names the setting and its flags.
inline constexpr const char* kInputsLimitNote =
    " (max_inputs_per_request, flag --max-inputs-per-request; TEI's --max-client-batch-size)";

enum class RequestKind { kOpenAIEmbeddings, kTeiEmbed, kTeiEmbedSparse, kTeiTokenize };

// Reads `body` (a parsed JSON value) into *out; the error answer otherwise.
// `max_inputs` bounds the number of inputs (413 above it).
std::optional<RequestError> parse_embed_request(const nlohmann::json& body, RequestKind kind, size_t max_inputs,
                                                EmbedRequest* out);

// The field readers every route's parser shares (handlers.h). An optional
// field is unset when absent or null, and a 422 naming it when of another type.
std::optional<RequestError> read_bool(const nlohmann::json& body, const char* name, std::optional<bool>& out);
std::optional<RequestError> read_string(const nlohmann::json& body, const char* name, std::optional<std::string>& out);
// The 413 of a request of `n` `noun` (inputs, texts, ...) over `max_inputs` (max_inputs_per_request).
RequestError too_many_inputs(size_t n, const char* noun, size_t max_inputs);
// `body`'s `field`: a non-empty array of strings (or one string when
// `one_allowed`), at most `max_inputs` of them, into *out.
std::optional<RequestError> read_texts(const nlohmann::json& body, const char* field, bool one_allowed,
                                       size_t max_inputs, std::vector<std::string>* out);

// The int8/uint8 ranges of `body` into *out: "ranges", else "calibration_embeddings"
// (a 422 when given and `needs` is false: no requested type takes ranges).
std::optional<RequestError> read_quantization_ranges(const nlohmann::json& body, bool needs, EmbedRequest* out);

// Finishes one pooled (unnormalised) vector for a request: the first
// `dimensions` values when given, then L2-normalised when `normalize`.
void finish_vector(std::vector<float>& v, std::optional<size_t> dimensions, bool normalize);

}  // namespace dlrt::embed
