// Embedding requests from JSON (see request.h).
#include "embed/serve/request.h"

#include <cmath>

#include <nlohmann/json.hpp>

#include "embed/image/image.h"
#include "embed/serve/image_input.h"

namespace dlrt::embed {

using json = nlohmann::json;

namespace {

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

// Image inputs (image_input.h): one, or an array of them, where strings are texts
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

}  // namespace

std::optional<RequestError> read_quantization_ranges(const json& body, bool needs, EmbedRequest* out) {
  const auto ranges = body.find("ranges");
  const auto calibration = body.find("calibration_embeddings");
  const bool has_ranges = ranges != body.end() && !ranges->is_null();
  const bool has_calibration = calibration != body.end() && !calibration->is_null();
  if ((has_ranges || has_calibration) && !needs)
    return error(422, std::string("'") + (has_ranges ? "ranges" : "calibration_embeddings") +
                          "' applies to the int8 and uint8 output types");
  if (has_ranges && has_calibration) return error(422, "give 'ranges' or 'calibration_embeddings', not both");
  size_t rows = 0, cols = 0;
  if (has_ranges) {
    std::vector<float> flat;
    if (!read_matrix(*ranges, &flat, &rows, &cols) || rows != 2)
      return error(422, "'ranges' must be two arrays of numbers of one length: the per-dimension minimums, then "
                        "maximums");
    out->ranges = QuantizationRanges{{flat.begin(), flat.begin() + static_cast<std::ptrdiff_t>(cols)},
                                     {flat.begin() + static_cast<std::ptrdiff_t>(cols), flat.end()}};
  }
  if (has_calibration) {
    if (calibration->is_array() && calibration->size() > kMaxCalibrationRows)
      return error(413, std::to_string(calibration->size()) + " rows of 'calibration_embeddings'; the limit is " +
                            std::to_string(kMaxCalibrationRows) + " (give their 'ranges' instead)");
    if (!read_matrix(*calibration, &out->calibration, &rows, &cols))
      return error(422, "'calibration_embeddings' must be a non-empty array of arrays of numbers of one length");
    out->calibration_rows = rows;
  }
  return std::nullopt;
}

std::optional<RequestError> read_bool(const json& body, const char* name, std::optional<bool>& out) {
  auto f = body.find(name);
  if (f == body.end() || f->is_null()) return std::nullopt;
  if (!f->is_boolean()) return error(422, std::string("'") + name + "' must be a boolean");
  out = f->get<bool>();
  return std::nullopt;
}

std::optional<RequestError> read_string(const json& body, const char* name, std::optional<std::string>& out) {
  auto f = body.find(name);
  if (f == body.end() || f->is_null()) return std::nullopt;
  if (!f->is_string()) return error(422, std::string("'") + name + "' must be a string");
  out = f->get<std::string>();
  return std::nullopt;
}

RequestError too_many_inputs(size_t n, const char* noun, size_t max_inputs) {
  return error(413, std::to_string(n) + " " + noun + " in one request; the limit is " + std::to_string(max_inputs) +
                        kInputsLimitNote);
}

std::optional<RequestError> read_texts(const json& body, const char* field, bool one_allowed, size_t max_inputs,
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
    return error(422, "'" + name + "' must be " + (one_allowed ? "a string or " : "") + "a non-empty array of strings");
  if (in->size() > max_inputs) return too_many_inputs(in->size(), field, max_inputs);
  for (size_t i = 0; i < in->size(); ++i) {
    if (!(*in)[i].is_string()) return error(422, "'" + name + "'[" + std::to_string(i) + "] is not a string");
    out->push_back((*in)[i].get<std::string>());
  }
  return std::nullopt;
}

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

void finish_vector(std::vector<float>& v, std::optional<size_t> dimensions, bool normalize) {
  if (dimensions && *dimensions < v.size()) v.resize(*dimensions);
  if (!normalize) return;
  double sq = 0;
  for (float f : v) sq += static_cast<double>(f) * f;
  const double norm = std::max(std::sqrt(sq), 1e-12);  // torch.nn.functional.normalize's eps
  for (float& f : v) f = static_cast<float>(f / norm);
}

}  // namespace dlrt::embed
