// Cohere's embed routes (handlers.h): POST /v2/embed, what cohere.ClientV2's
// embed posts, and POST /v1/embed, the v1 client's. The request's texts or
// images become an EmbedRequest that the other embedding routes' code embeds
// (embed_vectors) and quantizes (output_type.h); the answer is Cohere's
// EmbedByTypeResponse, or v1's "embeddings_floats" without embedding_types.
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "embed/image/image.h"
#include "embed/models/model.h"
#include "embed/models/output_type.h"
#include "embed/serve/batcher.h"
#include "embed/serve/handlers.h"
#include "embed/serve/server_util.h"

namespace dlrt::embed {
namespace {

using json = nlohmann::json;

RequestError invalid(std::string message) { return RequestError{422, std::move(message)}; }

constexpr std::array<const char*, 5> kInputTypes = {"search_document", "search_query", "classification", "clustering",
                                                    "image"};
constexpr std::array<const char*, 6> kEmbeddingTypes = {"float", "int8", "uint8", "binary", "ubinary", "base64"};

template <size_t N>
bool one_of(const std::string& s, const std::array<const char*, N>& names) {
  for (const char* n : names)
    if (s == n) return true;
  return false;
}

// A positive integer field into *out (unset when absent or null).
ParseError read_positive(const json& body, const char* name, std::optional<size_t>* out) {
  auto f = body.find(name);
  if (f == body.end() || f->is_null()) return std::nullopt;
  if (!f->is_number_integer() || f->get<int64_t>() < 1)
    return invalid(std::string("'") + name + "' must be a positive integer");
  *out = static_cast<size_t>(f->get<int64_t>());
  return std::nullopt;
}

// "images": data URLs (or bare base64), each decoded to its bytes.
ParseError read_image_strings(const json& v, size_t max_inputs, EmbedRequest* out) {
  if (!v.is_array()) return invalid("'images' must be a non-empty array of data URLs");
  if (v.empty()) return RequestError{400, "'images' is empty: send at least one input", "empty"};
  if (v.size() > max_inputs) return too_many_inputs(v.size(), "images", max_inputs);
  for (size_t i = 0; i < v.size(); ++i) {
    const std::string where = "'images'[" + std::to_string(i) + "]";
    if (!v[i].is_string()) return invalid(where + " is not a string (a data URL: data:image/png;base64,...)");
    std::string bytes;
    if (auto e = read_image_data(v[i].get_ref<const std::string&>(), where, image::DecodeLimits{}.max_bytes, &bytes))
      return e;
    out->images.push_back(std::move(bytes));
  }
  return std::nullopt;
}

// "inputs": [{"content": [item]}], an item {"type": "text", "text"} or
// {"type": "image_url", "image_url": {"url"}}. Cohere embeds an input's items
// together into one vector; dlrt's models embed a text or an image, so each
// input holds one item (texts and images may mix: a vector per input, in order).
ParseError read_content_inputs(const json& v, size_t max_inputs, EmbedRequest* out) {
  if (!v.is_array()) return invalid("'inputs' must be a non-empty array of {\"content\": [...]} objects");
  if (v.empty()) return RequestError{400, "'inputs' is empty: send at least one input", "empty"};
  if (v.size() > max_inputs) return too_many_inputs(v.size(), "inputs", max_inputs);
  for (size_t i = 0; i < v.size(); ++i) {
    const std::string where = "'inputs'[" + std::to_string(i) + "]";
    const json* content = v[i].is_object() && v[i].contains("content") ? &v[i]["content"] : nullptr;
    if (!content || !content->is_array() || content->empty())
      return invalid(where + " must be an object whose \"content\" is a non-empty array");
    if (content->size() > 1)
      return invalid(where + " has " + std::to_string(content->size()) +
                     " content items: Cohere embeds them together into one vector, which dlrt's models do not (a "
                     "text or an image per input)");
    const json& item = (*content)[0];
    const std::string at = where + ".content[0]";
    const json* type = item.is_object() && item.contains("type") ? &item["type"] : nullptr;
    if (type && *type == "text") {
      if (!item.contains("text") || !item["text"].is_string()) return invalid(at + ": \"text\" must be a string");
      out->texts.push_back(item["text"].get<std::string>());
      out->added_input(false);
    } else if (type && *type == "image_url") {
      std::string bytes;
      if (auto e = read_image_input(item, at, image::DecodeLimits{}.max_bytes, &bytes)) return e;
      out->images.push_back(std::move(bytes));
      out->added_input(true);
    } else {
      return invalid(at +
                     " must be {\"type\": \"text\", \"text\": ...} or {\"type\": \"image_url\", \"image_url\": "
                     "{\"url\": ...}}");
    }
  }
  return std::nullopt;
}

// Fields Cohere's v1 and v2 share; `v2` requires input_type.
ParseError parse_cohere(const json& body, size_t max_inputs, bool v2, CohereEmbedRequest* out) {
  *out = CohereEmbedRequest{};
  EmbedRequest& req = out->embed;
  std::optional<std::string> model, input_type, truncate;
  if (auto e = read_string(body, "model", model)) return e;  // checked for its type; find_model chose the model
  if (auto e = read_string(body, "input_type", input_type)) return e;
  if (auto e = read_string(body, "truncate", truncate)) return e;
  if (!input_type && v2)
    return invalid(
        "missing field 'input_type' (\"search_document\", \"search_query\", \"classification\", "
        "\"clustering\" or \"image\")");
  if (input_type && !one_of(*input_type, kInputTypes))
    return invalid(
        "'input_type' must be \"search_document\", \"search_query\", \"classification\", \"clustering\" "
        "or \"image\"");
  out->input_type = input_type.value_or("");

  auto given = [&](const char* name) { return body.contains(name) && !body[name].is_null(); };
  const int sources = int(given("texts")) + int(given("images")) + int(given("inputs"));
  if (sources != 1)
    return invalid(sources ? "give one of 'texts', 'images' and 'inputs', not several"
                           : "missing field 'texts' (or 'images', or 'inputs')");
  if (given("texts")) {
    if (auto e = read_texts(body, "texts", false, max_inputs, &req.texts)) return e;
  } else if (given("images")) {
    if (auto e = read_image_strings(body["images"], max_inputs, &req)) return e;
  } else if (auto e = read_content_inputs(body["inputs"], max_inputs, &req)) {
    return e;
  }
  if (out->input_type == "image" && !req.texts.empty() && req.images.empty())
    return invalid(
        "'input_type' \"image\" is for images; texts take \"search_document\", \"search_query\", "
        "\"classification\" or \"clustering\"");

  if (auto f = body.find("embedding_types"); f != body.end() && !f->is_null()) {
    if (!f->is_array() || f->empty()) return invalid("'embedding_types' must be a non-empty array");
    for (const json& t : *f) {
      if (!t.is_string() || !one_of(t.get<std::string>(), kEmbeddingTypes))
        return invalid("'embedding_types' holds " + t.dump() +
                       "; the types are \"float\", \"int8\", \"uint8\", \"binary\", \"ubinary\" and \"base64\"");
      const std::string name = t.get<std::string>();
      if (std::find(out->types.begin(), out->types.end(), name) == out->types.end()) out->types.push_back(name);
    }
  }
  // Cohere's default is END: a long input loses its end, as dlrt's truncation does.
  if (truncate && *truncate == "START")
    return invalid(
        "'truncate' \"START\" is not supported: dlrt cuts the end of a long input (\"END\") or refuses it "
        "(\"NONE\")");
  if (truncate && *truncate != "END" && *truncate != "NONE")
    return invalid("'truncate' must be \"NONE\", \"START\" or \"END\"");
  req.truncate = !truncate || *truncate == "END";
  req.truncate_field = "\"truncate\": \"END\"";
  if (auto e = read_positive(body, "max_tokens", &req.max_tokens)) return e;
  if (auto e = read_positive(body, "output_dimension", &req.dimensions)) return e;
  if (auto p = body.find("priority"); p != body.end() && !p->is_null() && !p->is_number_integer())
    return invalid("'priority' must be an integer");  // accepted; requests are served in arrival order
  bool needs = false;
  for (const std::string& t : out->types) needs = needs || t == "int8" || t == "uint8";
  if (auto e = read_quantization_ranges(body, needs, &req)) return e;
  out->echoed = req.texts;
  return std::nullopt;
}

// The prompt an input_type asks for, where the model has it: sentence-transformers'
// encode_query ("query") and encode_document ("document", "passage", "corpus"), and
// prompts named as the other input types; else none (the default prompt applies).
std::optional<std::string> prompt_for(const EmbedModel& m, const std::string& input_type) {
  std::vector<std::string> wanted;
  if (input_type == "search_query")
    wanted = {"query"};
  else if (input_type == "search_document")
    wanted = {"document", "passage", "corpus"};
  else if (input_type == "classification" || input_type == "clustering")
    wanted = {input_type};
  const std::vector<std::string> names = m.prompt_names();
  for (const std::string& w : wanted)
    if (std::find(names.begin(), names.end(), w) != names.end()) return w;
  return std::nullopt;
}

// A version 4 UUID, as Cohere's ids are.
std::string new_id() {
  thread_local std::mt19937_64 rng{(uint64_t(std::random_device{}()) << 32) ^ std::random_device{}()};
  const uint64_t hi = (rng() & ~uint64_t{0xF000}) | 0x4000, lo = (rng() & ~(uint64_t{3} << 62)) | (uint64_t{2} << 62);
  char s[37];
  std::snprintf(s, sizeof s, "%08x-%04x-%04x-%04x-%012llx", unsigned(hi >> 32), unsigned((hi >> 16) & 0xFFFF),
                unsigned(hi & 0xFFFF), unsigned(lo >> 48), static_cast<unsigned long long>(lo & 0xFFFFFFFFFFFFull));
  return s;
}

// One embedding type's vectors as a JSON array, or the error message.
std::string append_type(std::string& out, const std::string& type, const EmbedRequest& req,
                        const std::vector<std::vector<float>>& vectors) {
  out += '[';
  if (type == "float" || type == "base64") {
    for (size_t i = 0; i < vectors.size(); ++i) {
      if (i) out += ',';
      type == "float" ? append_vector(out, vectors[i]) : append_base64(out, vectors[i]);
    }
  } else {
    const OutputType t = *output_type_from_name(type);
    std::vector<uint8_t> bytes;
    const QuantizationSource source{req.ranges, req.calibration.data(), req.calibration_rows};
    if (std::string e = quantize_rows(vectors, t, source, &bytes); !e.empty()) return e;
    const size_t row = vectors.empty() ? 0 : quantized_bytes(t, vectors[0].size());
    for (size_t i = 0; i < vectors.size(); ++i) {
      if (i) out += ',';
      append_quantized(out, bytes.data() + i * row, row, t, false);
    }
  }
  out += ']';
  return "";
}

Reply embed_answer(Call& c, CohereEmbedRequest& r, bool v2) {
  EmbedRequest& req = r.embed;
  if (!req.texts.empty()) req.prompt_name = prompt_for(c.model(), r.input_type);
  req.normalize = true;  // unit vectors, as the other embedding routes give
  const size_t images = req.images.size();
  RequestResult result;
  if (std::optional<Reply> error = embed_vectors(c, req, result)) return *error;

  Reply reply;
  std::string& out = reply.body;
  out = "{\"id\":\"" + new_id() + "\",\"embeddings\":";
  const bool floats = !v2 && r.types.empty();  // v1's "embeddings_floats" answer
  if (floats) {
    if (std::string e = append_type(out, "float", req, result.vectors); !e.empty()) return c.invalid(e);
  } else {
    out += '{';
    const std::vector<std::string> types = r.types.empty() ? std::vector<std::string>{"float"} : r.types;
    for (size_t k = 0; k < types.size(); ++k) {
      out += (k ? ",\"" : "\"") + types[k] + "\":";
      if (std::string e = append_type(out, types[k], req, result.vectors); !e.empty()) return c.invalid(e);
    }
    out += '}';
  }
  out += ",\"texts\":";
  server_util::append_json(out, json(r.echoed));
  json billed = json::object();
  if (!r.echoed.empty()) billed["input_tokens"] = result.tokens;
  if (images) billed["images"] = images;
  out += ",\"meta\":";
  server_util::append_json(out, json{{"api_version", {{"version", v2 ? "2" : "1"}}}, {"billed_units", billed}});
  out += std::string(",\"response_type\":\"") + (floats ? "embeddings_floats" : "embeddings_by_type") + "\"}";
  return reply;
}

}  // namespace

ParseError parse_cohere_embed_v1(const json& body, size_t max_inputs, CohereEmbedRequest* out) {
  return parse_cohere(body, max_inputs, false, out);
}

ParseError parse_cohere_embed_v2(const json& body, size_t max_inputs, CohereEmbedRequest* out) {
  return parse_cohere(body, max_inputs, true, out);
}

Reply handle_cohere_embed_v1(Call& c, CohereEmbedRequest& req) { return embed_answer(c, req, false); }

Reply handle_cohere_embed_v2(Call& c, CohereEmbedRequest& req) { return embed_answer(c, req, true); }

}  // namespace dlrt::embed
