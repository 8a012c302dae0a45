#include "embed/models/folder_check.h"

#include <algorithm>
#include <string>

#include "embed/tokenizer/json_util.h"
#include "embed/tokenizer/tokenizer.h"

namespace dlrt::embed {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

Status bad(const fs::path& path, const std::string& field, const std::string& what) {
  return InvalidModel(path.string() + ": \"" + field + "\" " + what);
}

// A present, non-null `key` of `j` passes `ok`; else "must be <what>".
template <typename Ok>
Status field(const fs::path& path, const json& j, const char* key, const char* what, Ok ok, const std::string& prefix = "") {
  const json* v = jsonu::member(j, key);
  if (!v || v->is_null() || ok(*v)) return Status::Ok();
  return bad(path, prefix + key, std::string("must be ") + what + ", not " + v->dump());
}

bool positive_int(const json& v) { return v.is_number_integer() && v.get<int64_t>() >= 1; }
bool is_bool(const json& v) { return v.is_boolean(); }
bool is_string(const json& v) { return v.is_string(); }

Result<json> object_file(const fs::path& path) {
  DLRT_ASSIGN_OR_RETURN(json j, jsonu::read_optional_json(path));
  if (!j.is_null() && !j.is_object()) return InvalidModel(path.string() + ": expected a JSON object");
  return j;
}

Status check_modules(const fs::path& path, const json& modules) {
  if (!modules.is_array()) return InvalidModel(path.string() + ": expected a list of modules");
  for (size_t i = 0; i < modules.size(); ++i) {
    const json& m = modules[i];
    const std::string at = "[" + std::to_string(i) + "].";
    if (!m.is_object()) return InvalidModel(path.string() + ": module " + std::to_string(i) + " is not an object");
    DLRT_RETURN_IF_ERROR(field(path, m, "idx", "an integer >= 0", [](const json& v) { return v.is_number_integer() && v.get<int64_t>() >= 0; }, at));
    for (const char* key : {"name", "path", "type"}) {
      const json* v = jsonu::member(m, key);
      if (v && !v->is_string()) return bad(path, at + key, "must be a string, not " + v->dump());
    }
    if (!jsonu::member(m, "type")) return bad(path, at + "type", "is missing");
  }
  return Status::Ok();
}

bool token_or_content(const json& v) {
  const json* content = v.is_object() ? jsonu::member(v, "content") : nullptr;
  return v.is_string() || (content && content->is_string());
}

}  // namespace

const char* const kFolderConfigFiles[kFolderConfigFileCount] = {"modules.json", "config.json", "sentence_bert_config.json",
                                                                "tokenizer_config.json", "1_Pooling/config.json"};

Status check_config_json(const fs::path& path, const std::string& file, const json& c) {
  if (c.is_null()) return Status::Ok();
  if (file == "modules.json") return check_modules(path, c);
  if (!c.is_object()) return InvalidModel(path.string() + ": expected a JSON object");
  if (file == "config.json") {
    for (const char* key : {"vocab_size", "type_vocab_size", "max_position_embeddings", "hidden_size"})
      DLRT_RETURN_IF_ERROR(field(path, c, key, "an integer >= 1", positive_int));
  } else if (file == "sentence_bert_config.json") {
    DLRT_RETURN_IF_ERROR(field(path, c, "max_seq_length", "an integer >= 1", positive_int));
    DLRT_RETURN_IF_ERROR(field(path, c, "do_lower_case", "a boolean", is_bool));
  } else if (file == "tokenizer_config.json") {
    for (const char* key : {"do_lower_case", "tokenize_chinese_chars", "strip_accents"})
      DLRT_RETURN_IF_ERROR(field(path, c, key, "a boolean", is_bool));
    DLRT_RETURN_IF_ERROR(field(path, c, "model_max_length", "a number > 0",
                               [](const json& v) { return v.is_number() && v.get<double>() > 0; }));
    for (const char* key : {"unk_token", "cls_token", "sep_token", "pad_token", "mask_token"})
      DLRT_RETURN_IF_ERROR(field(path, c, key, "a string or {\"content\": string}", token_or_content));
  } else {
    return check_pooling_config(path, c);
  }
  return Status::Ok();
}

Status check_folder_configs(const fs::path& dir) {
  // The Pooling module's config is checked where modules.json puts it (the embedder's read_pooling).
  for (size_t k = 0; k + 1 < kFolderConfigFileCount; ++k) {
    const fs::path path = dir / kFolderConfigFiles[k];
    DLRT_ASSIGN_OR_RETURN(json c, jsonu::read_optional_json(path));
    DLRT_RETURN_IF_ERROR(check_config_json(path, kFolderConfigFiles[k], c));
  }
  return Status::Ok();
}

Status check_pooling_config(const fs::path& path, const json& pc) {
  if (pc.is_null()) return Status::Ok();
  DLRT_RETURN_IF_ERROR(field(path, pc, "word_embedding_dimension", "an integer >= 1", positive_int));
  DLRT_RETURN_IF_ERROR(field(path, pc, "pooling_mode", "a string", is_string));
  DLRT_RETURN_IF_ERROR(field(path, pc, "include_prompt", "a boolean", is_bool));
  bool any_flag = false, any_true = false;
  for (const auto& [key, v] : pc.items()) {
    if (key.rfind("pooling_mode_", 0) != 0) continue;
    if (!v.is_boolean()) return bad(path, key, "must be a boolean, not " + v.dump());
    any_flag = true;
    any_true = any_true || v.get<bool>();
  }
  if (any_flag && !any_true && !jsonu::member(pc, "pooling_mode"))
    return InvalidModel(path.string() + ": every pooling_mode_* is false: no pooling mode is set");
  return Status::Ok();
}

Status check_pooling_dimension(const fs::path& path, const json& pc, size_t hidden) {
  const int64_t dim = jsonu::get_int(pc, "word_embedding_dimension", 0);
  if (dim > 0 && hidden > 0 && static_cast<size_t>(dim) != hidden)
    return bad(path, "word_embedding_dimension", "is " + std::to_string(dim) + " but the model's vectors have " + std::to_string(hidden) + " values");
  return Status::Ok();
}

Status check_tokenizer_ids(const fs::path& dir, const Tokenizer& tok) {
  const fs::path config_path = dir / "config.json";
  DLRT_ASSIGN_OR_RETURN(json config, object_file(config_path));
  const int64_t vocab = jsonu::get_int(config, "vocab_size", 0);
  const int64_t pad = tok.pad_id();
  if (pad < 0 || static_cast<size_t>(pad) >= tok.vocab_size())
    return InvalidModel((dir / "tokenizer.json").string() + ": the pad id " + std::to_string(pad) + " is outside the vocabulary (" +
                        std::to_string(tok.vocab_size()) + " tokens)");
  if (vocab > 0 && pad >= vocab)
    return InvalidModel((dir / "tokenizer.json").string() + ": the pad id " + std::to_string(pad) + " is outside the model's vocabulary (" +
                        config_path.string() + ": vocab_size " + std::to_string(vocab) + ")");
  const int64_t types = jsonu::get_int(config, "type_vocab_size", 0);
  if (types <= 0) return Status::Ok();
  // The type ids the post-processor gives to a single text and to a pair.
  int64_t highest = 0;
  for (const Encoding& e : {tok.encode("a"), tok.encode_pair("a", "b")})
    for (int64_t t : e.type_ids) highest = std::max(highest, t);
  if (highest >= types)
    return InvalidModel((dir / "tokenizer.json").string() + ": the post-processor gives type id " + std::to_string(highest) +
                        " but the model has " + std::to_string(types) + " token types (" + config_path.string() + ": type_vocab_size)");
  return Status::Ok();
}

}  // namespace dlrt::embed
