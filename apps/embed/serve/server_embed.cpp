// dlrt serve's embedding routes (handlers.h): /v1/embeddings, /embeddings,
// /embed and /embed_sparse (handle_embeddings), /similarity, and the request
// all of them and /tokenize read (parse_embed_request): text, token ids or
// image inputs, or texts and images mixed (Jina's {"image": S} and OpenAI's
// image_url content part, S a data URL or bare base64; a remote URL is refused,
// never fetched: the server makes no outbound requests), OpenAI's output types;
// and their answers: dense (float, base64, quantized: routes.cpp's writers) or
// sparse, in OpenAI's or TEI's shape.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "embed/image/image.h"
#include "embed/models/output_type.h"
#include "embed/models/sparse.h"
#include "embed/serve/handlers.h"
#include "embed/serve/server.h"
#include "embed/serve/server_util.h"

namespace dlrt::embed {
namespace {

using json = nlohmann::json;
using server_util::json_string;

// ---- reading the request ----------------------------------------------------

RequestError error(int status, std::string message) { return RequestError{status, std::move(message)}; }

// A token-id list: non-negative integers that fit int64.
bool read_ids(const json& v, std::vector<int64_t>& ids) {
  ids.clear();
  for (const json& e : v) {
    if (!e.is_number_integer() && !e.is_number_unsigned()) return false;
    if (e.is_number_unsigned() ? e.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX) : e.get<int64_t>() < 0) return false;
    ids.push_back(e.get<int64_t>());
  }
  return true;
}

// Image inputs (read_image_input): one, or an array of them, where strings are texts
// (a request mixing texts and images: a vector per input, in order).
std::optional<RequestError> read_images(const json& v, const std::string& field, size_t max_inputs,
                                        EmbedRequest* out) {
  if (v.is_array() && v.size() > max_inputs) return too_many_inputs(v.size(), "inputs", max_inputs);
  const size_t max_bytes = image::DecodeLimits{}.max_bytes;
  for (size_t i = 0; i < (v.is_array() ? v.size() : 1); ++i) {
    const json& e = v.is_array() ? v[i] : v;
    const std::string where = "'" + field + "'" + (v.is_array() ? "[" + std::to_string(i) + "]" : "");
    if (e.is_string()) {
      out->texts.push_back(e.get<std::string>());
      out->added_input(false);
      continue;
    }
    if (!is_image_input(e))
      return error(422, where + " is neither a string nor an image input (texts and images mix; token ids do not)");
    std::string bytes;
    if (auto err = read_image_input(e, where, max_bytes, &bytes)) return err;
    out->images.push_back(std::move(bytes));
    out->added_input(true);
  }
  return std::nullopt;
}

bool has_image(const json& v) {
  if (!v.is_array()) return is_image_input(v);
  for (const json& e : v)
    if (is_image_input(e)) return true;
  return false;
}

// The inputs: a string, strings, token ids, lists of token ids, or images.
std::optional<RequestError> read_inputs(const json& v, const std::string& field, bool ids_allowed, size_t max_inputs,
                                        EmbedRequest* out) {
  const std::string ids_note = ids_allowed ? ", token ids or lists of token ids" : "";
  if (ids_allowed && has_image(v)) return read_images(v, field, max_inputs, out);
  if (v.is_string()) {
    out->texts.push_back(v.get<std::string>());
    return std::nullopt;
  }
  if (!v.is_array()) return error(422, "'" + field + "' must be a string or an array of strings" + ids_note);
  if (v.empty()) return RequestError{400, "'" + field + "' is empty: send at least one input", "empty"};
  // [1, 2, 3]: one input given as token ids.
  if (v[0].is_number()) {
    if (!ids_allowed) return error(422, "'" + field + "' must be text here (token ids are not accepted)");
    std::vector<int64_t> ids;
    if (!read_ids(v, ids)) return error(422, "'" + field + "' mixes token ids with other values or has a negative id");
    out->token_ids.push_back(std::move(ids));
    return std::nullopt;
  }
  if (v.size() > max_inputs) return too_many_inputs(v.size(), "inputs", max_inputs);
  const bool as_ids = v[0].is_array();
  if (as_ids && !ids_allowed) return error(422, "'" + field + "' must be text here (token ids are not accepted)");
  for (size_t i = 0; i < v.size(); ++i) {
    const json& e = v[i];
    const std::string where = "'" + field + "'[" + std::to_string(i) + "]";
    if (as_ids) {
      std::vector<int64_t> ids;
      if (!e.is_array() || e.empty() || !read_ids(e, ids))
        return error(422, where + " is not a non-empty list of token ids (all inputs of a request are text, or all ids)");
      out->token_ids.push_back(std::move(ids));
    } else {
      if (!e.is_string()) return error(422, where + " is not a string (all inputs of a request are text, or all ids)");
      out->texts.push_back(e.get<std::string>());
    }
  }
  return std::nullopt;
}

// /v1/embeddings' output type: "encoding_format" (OpenAI's "float"/"base64", dlrt's
// "sparse", and the quantized types) and Mistral's "output_dtype", with the int8/uint8 ranges.
std::optional<RequestError> read_output_type(const json& body, EmbedRequest* out) {
  std::optional<OutputType> from_format;
  if (auto f = body.find("encoding_format"); f != body.end() && !f->is_null()) {
    const std::string name = f->is_string() ? f->get<std::string>() : "";
    from_format = name == "base64" || name == "sparse" ? std::optional(OutputType::kFloat32) : output_type_from_name(name);
    if (!from_format || name == "float32")
      return error(422, "'encoding_format' must be \"float\", \"base64\", \"sparse\", \"int8\", \"uint8\", "
                        "\"binary\" or \"ubinary\"");
    out->base64 = name == "base64";
    out->sparse = name == "sparse";
  }
  if (auto f = body.find("output_dtype"); f != body.end() && !f->is_null()) {
    std::optional<OutputType> t = f->is_string() ? output_type_from_name(f->get<std::string>()) : std::nullopt;
    if (!t || *f == "float32")
      return error(422, "'output_dtype' must be \"float\", \"int8\", \"uint8\", \"binary\" or \"ubinary\"");
    if (from_format && *from_format != OutputType::kFloat32 && *from_format != *t)
      return error(422, "'encoding_format' and 'output_dtype' name different output types");
    if (out->sparse) return error(422, "'output_dtype' does not apply to sparse vectors");
    from_format = *t;
  }
  out->output_type = from_format.value_or(OutputType::kFloat32);
  return read_quantization_ranges(body, needs_ranges(out->output_type), out);
}

// ---- image inputs -------------------------------------------------------------

// ---- the answers ----------------------------------------------------------------

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

std::optional<RequestError> parse_embed_request(const json& body, RequestKind kind, size_t max_inputs,
                                                EmbedRequest* out) {
  *out = EmbedRequest{};
  if (!body.is_object()) return error(422, "the body must be a JSON object");
  const std::string field = kind == RequestKind::kOpenAIEmbeddings ? "input" : "inputs";
  auto in = body.find(field);
  if (in == body.end()) return error(422, "missing field '" + field + "'");
  if (auto e = read_inputs(*in, field, kind != RequestKind::kTeiTokenize, max_inputs, out)) return e;
  for (const char* name : {"model", "user"})  // typed; "model" picks the served model (server.h), "user" is not used
    if (auto f = body.find(name); f != body.end() && !f->is_null() && !f->is_string())
      return error(422, std::string("'") + name + "' must be a string");

  if (auto p = body.find("prompt_name"); p != body.end() && !p->is_null()) {
    if (!p->is_string()) return error(422, "'prompt_name' must be a string");
    if (!out->token_ids.empty()) return error(422, "'prompt_name' applies to text inputs, not token ids");
    out->prompt_name = p->get<std::string>();
  }
  if (kind == RequestKind::kTeiTokenize) {
    std::optional<bool> special;
    if (auto e = read_bool(body, "add_special_tokens", special)) return e;
    out->add_special_tokens = special.value_or(true);
    return std::nullopt;
  }

  if (auto e = read_bool(body, "truncate", out->truncate)) return e;
  if (auto e = read_bool(body, "normalize", out->normalize)) return e;
  if (auto e = read_bool(body, "is_query", out->is_query)) return e;
  if (out->is_query && (!out->token_ids.empty() || !out->images.empty()))
    return error(422, "'is_query' applies to text inputs, not token ids or images");
  if (auto d = body.find("truncation_direction"); d != body.end() && !d->is_null()) {
    if (!d->is_string() || (*d != "right" && *d != "Right" && *d != "left" && *d != "Left"))
      return error(422, "'truncation_direction' must be \"right\" or \"left\"");
    if (*d == "left" || *d == "Left") return error(422, "'truncation_direction' \"left\" is not supported (only right)");
  }
  // Mistral's name for it ("output_dimension") on its route; not both.
  const char* dim_field = "dimensions";
  if (auto m = body.find("output_dimension"); kind == RequestKind::kOpenAIEmbeddings && m != body.end() && !m->is_null()) {
    if (auto d = body.find("dimensions"); d != body.end() && !d->is_null())
      return error(422, "give 'dimensions' or 'output_dimension', not both");
    dim_field = "output_dimension";
  }
  if (auto d = body.find(dim_field); d != body.end() && !d->is_null()) {
    if (!d->is_number_integer() || d->get<int64_t>() < 1)
      return error(422, std::string("'") + dim_field + "' must be a positive integer");
    out->dimensions = static_cast<size_t>(d->get<int64_t>());
  }
  for (const char* name : {"encoding_format", "output_dtype", "ranges", "calibration_embeddings"})
    if (auto f = body.find(name); kind != RequestKind::kOpenAIEmbeddings && f != body.end() && !f->is_null())
      return error(422, std::string("'") + name + "' is a field of /v1/embeddings");
  if (kind == RequestKind::kOpenAIEmbeddings)
    if (auto e = read_output_type(body, out)) return e;
  if (kind == RequestKind::kTeiEmbedSparse) out->sparse = true;
  if (!out->images.empty() && (out->sparse || (out->prompt_name && out->texts.empty())))
    return error(422, out->sparse ? "image inputs have dense vectors, not sparse ones"
                                  : "'prompt_name' applies to text inputs, not images");
  if (auto k = body.find("top_k"); k != body.end() && !k->is_null()) {
    if (!out->sparse) return error(422, "'top_k' applies to sparse vectors (/embed_sparse, \"encoding_format\": \"sparse\")");
    if (!k->is_number_integer() || k->get<int64_t>() < 1) return error(422, "'top_k' must be a positive integer");
    out->top_k = static_cast<size_t>(k->get<int64_t>());
  }
  if (out->sparse && (out->normalize || out->dimensions))
    return error(422, std::string("'") + (out->normalize ? "normalize" : "dimensions") +
                          "' does not apply to sparse vectors (use 'top_k' to keep the largest weights)");
  return std::nullopt;
}

void EmbedRequest::added_input(bool image) {
  if (image_at.empty()) {
    if (texts.empty() || images.empty()) return;  // one kind so far
    image_at.assign(size() - 1, image ? 0 : 1);   // the first mix: every input before it is of the other kind
  }
  image_at.push_back(image ? 1 : 0);
}

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
