// The text side of CLIP / SigLIP / SigLIP 2 folders as transformers prepares it (clip_text.h).
#include "embed/models/clip_text.h"

#include <nlohmann/json.hpp>

#include "embed/tokenizer/file_util.h"
#include "embed/tokenizer/json_util.h"

namespace dlrt::embed {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

constexpr const char* kSiglip2Tokenizer = "Siglip2Tokenizer";
// Siglip2Processor's text_kwargs: padding "max_length", truncation, max_length 64.
constexpr size_t kSiglip2ProcessorMaxLength = 64;

// A special token's name in tokenizer_config.json: a string or {"content": ...}.
std::string token_name(const json& config, const char* key, const std::string& def) {
  const json* v = jsonu::member(config, key);
  if (v && v->is_string()) return v->get<std::string>();
  if (v && v->is_object()) return jsonu::get_string(*v, "content", def);
  return def;
}

// The id of `name` in tokenizer.json's vocabulary or added tokens (-1: none).
int64_t json_token_id(const json& tj, const std::string& name) {
  if (const json* added = jsonu::member(tj, "added_tokens"); added && added->is_array())
    for (const json& t : *added)
      if (t.is_object() && jsonu::get_string(t, "content", "") == name) return jsonu::get_int(t, "id", -1);
  if (const json* model = jsonu::member(tj, "model"); model && model->is_object())
    if (const json* vocab = jsonu::member(*model, "vocab"); vocab && vocab->is_object())
      if (const json* id = jsonu::member(*vocab, name); id && id->is_number_integer()) return id->get<int64_t>();
  return -1;
}

// transformers' update_post_processor: [bos] $A [eos] (and the pair
// template), a flag dropped when its token is not in the vocabulary.
json bos_eos_template(const json& tj, const json& config) {
  const std::string bos = token_name(config, "bos_token", "<bos>"), eos = token_name(config, "eos_token", "<eos>");
  const int64_t bos_id = json_token_id(tj, bos), eos_id = json_token_id(tj, eos);
  const bool add_bos = jsonu::get_bool(config, "add_bos_token", false) && bos_id >= 0;
  const bool add_eos = jsonu::get_bool(config, "add_eos_token", false) && eos_id >= 0;
  json single = json::array(), pair = json::array(), special = json::object();
  const auto piece = [](const std::string& token, int type) {
    return json{{"SpecialToken", {{"id", token}, {"type_id", type}}}};
  };
  for (int type = 0; type < 2; ++type) {
    if (add_bos) pair.push_back(piece(bos, type));
    pair.push_back(json{{"Sequence", {{"id", type == 0 ? "A" : "B"}, {"type_id", type}}}});
    if (add_eos) pair.push_back(piece(eos, type));
    if (type == 0) single = pair;
  }
  if (add_bos) special[bos] = {{"id", bos}, {"ids", {bos_id}}, {"tokens", {bos}}};
  if (add_eos) special[eos] = {{"id", eos}, {"ids", {eos_id}}, {"tokens", {eos}}};
  return {{"type", "TemplateProcessing"}, {"single", single}, {"pair", pair}, {"special_tokens", special}};
}

// Siglip2Tokenizer's __init__: a BPE of the file's vocabulary and merges
// with its own normalizer (lowercase, then " " -> "▁"), pre-tokenizer and
// model options; the file's post-processor unless the config sets
// add_bos_token / add_eos_token.
Result<Tokenizer> siglip2_tokenizer(const fs::path& dir, const json& config) {
  const std::string path = (dir / "tokenizer.json").string();
  DLRT_ASSIGN_OR_RETURN(std::string text, read_folder_file(path));
  DLRT_RETURN_IF_ERROR(jsonu::check_json_depth(text, path));
  json tj = json::parse(text, nullptr, false);
  if (tj.is_discarded() || !tj.is_object()) return InvalidModel(path + ": not a valid JSON object");
  json* model = tj.contains("model") ? &tj["model"] : nullptr;
  if (!model || !model->is_object() || jsonu::get_string(*model, "type", "") != "BPE")
    return Unsupported(path +
                       ": transformers builds a Siglip2Tokenizer for this folder (model_type \"siglip2\"), "
                       "which takes a BPE tokenizer.json; this one's model is \"" +
                       (model && model->is_object() ? jsonu::get_string(*model, "type", "") : std::string()) + "\"");
  (*model)["unk_token"] = token_name(config, "unk_token", "<unk>");
  (*model)["fuse_unk"] = true;
  (*model)["byte_fallback"] = true;
  (*model)["dropout"] = nullptr;
  (*model)["continuing_subword_prefix"] = nullptr;
  (*model)["end_of_word_suffix"] = nullptr;
  (*model)["ignore_merges"] = false;
  const json space = {{"String", " "}};
  tj["normalizer"] = {
      {"type", "Sequence"},
      {"normalizers", {{{"type", "Lowercase"}}, {{"type", "Replace"}, {"pattern", space}, {"content", "\u2581"}}}}};
  tj["pre_tokenizer"] = {{"type", "Split"}, {"pattern", space}, {"behavior", "MergedWithPrevious"}, {"invert", false}};
  if (config.contains("add_bos_token") || config.contains("add_eos_token") || tj["post_processor"].is_null())
    tj["post_processor"] = bos_eos_template(tj, config);
  auto tok = Tokenizer::from_json_string(tj.dump());
  if (!tok.ok()) return tok.status().with_context(path);
  Tokenizer t = std::move(tok).value();
  // model_max_length is 1e30 when the model sets none; ignore such values (as Tokenizer::from_folder).
  const json* m = jsonu::member(config, "model_max_length");
  if (t.configured_max_length() == 0 && m && m->is_number() && m->get<double>() > 0 && m->get<double>() < 1e7)
    t.set_configured_max_length(static_cast<size_t>(m->get<double>()));
  return t;
}

// processor_class from the processor's or the tokenizer's config.
std::string processor_class(const fs::path& dir, const json& config) {
  for (const char* file : {"processor_config.json", "preprocessor_config.json"}) {
    auto j = jsonu::read_optional_json(dir / file);
    if (j.ok() && j->is_object() && j->contains("processor_class")) return jsonu::get_string(*j, "processor_class", "");
  }
  return jsonu::get_string(config, "processor_class", "");
}

}  // namespace

Result<Tokenizer> load_clip_tokenizer(const fs::path& dir, const std::string& model_type, ClipTextRule& rule) {
  DLRT_ASSIGN_OR_RETURN(json config, jsonu::read_optional_json(dir / "tokenizer_config.json"));
  if (!config.is_object()) config = json::object();
  rule.tokenizer_class = model_type == "siglip2" ? kSiglip2Tokenizer : jsonu::get_string(config, "tokenizer_class", "");
  const bool siglip2 = rule.tokenizer_class == kSiglip2Tokenizer;
  Result<Tokenizer> tok = siglip2 ? siglip2_tokenizer(dir, config) : Tokenizer::from_folder(dir.string());
  if (!tok.ok()) return tok.status();

  // Padding side: the config's, else tokenizer.json's padding, else the class's.
  std::string side = jsonu::get_string(config, "padding_side", "");
  if (side.empty()) {
    auto tj = jsonu::read_optional_json(dir / "tokenizer.json");
    if (tj.ok() && tj->is_object())
      if (const json* p = jsonu::member(*tj, "padding"); p && p->is_object())
        side = jsonu::get_string(*p, "direction", "") == "Left" ? "left" : "right";
  }
  // Siglip2Tokenizer and GemmaTokenizer (SigLIP 2's fixed-resolution folders name it) pad on the left by class.
  const bool left_by_class =
      siglip2 || rule.tokenizer_class == "GemmaTokenizer" || rule.tokenizer_class == "GemmaTokenizerFast";
  rule.pad_left = side.empty() ? left_by_class : side == "left";
  if (const json* names = jsonu::member(config, "model_input_names"); names && names->is_array()) {
    rule.returns_mask = false;
    for (const json& n : *names)
      rule.returns_mask = rule.returns_mask || (n.is_string() && n.get<std::string>() == "attention_mask");
  }
  if (processor_class(dir, config) == "Siglip2Processor") {
    const int64_t n = jsonu::get_int(config, "max_length", 0);
    rule.processor_max_length = n > 0 ? static_cast<size_t>(n) : kSiglip2ProcessorMaxLength;
  }
  return tok;
}

}  // namespace dlrt::embed
