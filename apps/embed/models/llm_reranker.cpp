// LlmReranker: a causal LM's yes/no judgement as a reranking score (see llm_reranker.h).
#include "embed/models/llm_reranker.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "embed/tokenizer/json_util.h"
#include "embed/models/token_inputs.h"
#include "embed/tokenizer/tokenizer.h"

namespace dlrt::embed {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

// Qwen3-Reranker's model card.
constexpr const char* kPrefix =
    "<|im_start|>system\nJudge whether the Document meets the requirements based on the Query and the Instruct "
    "provided. Note that the answer can only be \"yes\" or \"no\".<|im_end|>\n<|im_start|>user\n";
constexpr const char* kSuffix = "<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n";
constexpr const char* kTemplate = "<Instruct>: {instruction}\n<Query>: {query}\n<Document>: {document}";
constexpr const char* kInstruction = "Given a web search query, retrieve relevant passages that answer the query";

constexpr const char* kConfigFile = "reranker_config.json";

bool names_causal_lm(const json& config) {
  const json* arch = jsonu::member(config, "architectures");
  if (!arch || !arch->is_array()) return false;
  const std::string suffix = "ForCausalLM";
  for (const json& a : *arch) {
    if (!a.is_string()) continue;
    const std::string s = a.get<std::string>();
    if (s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0) return true;
  }
  return false;
}

// `text`'s ids without the post-processor's special tokens (tokenizers'
// add_special_tokens=False), through the token strings of Tokenizer::tokenize.
Result<std::vector<int64_t>> plain_ids(const Tokenizer& tokenizer, const std::string& text, const std::string& what) {
  std::vector<int64_t> ids;
  for (const std::string& piece : tokenizer.tokenize(text)) {
    auto id = tokenizer.token_to_id(piece);
    if (!id) return InvalidModel(what + ": the token \"" + piece + "\" has no id in the vocabulary");
    ids.push_back(*id);
  }
  return ids;
}

// The template with {instruction}, {query} and {document} replaced in one
// pass (a query holding "{document}" stays as it is).
std::string fill(const std::string& tmpl, std::string_view instruction, std::string_view query,
                 std::string_view document) {
  std::string out;
  for (size_t i = 0; i < tmpl.size();) {
    bool done = false;
    for (const auto& [key, value] : {std::pair<std::string_view, std::string_view>{"{instruction}", instruction},
                                     {"{query}", query},
                                     {"{document}", document}}) {
      if (tmpl.compare(i, key.size(), key) == 0) {
        out += value;
        i += key.size();
        done = true;
        break;
      }
    }
    if (!done) out += tmpl[i++];
  }
  return out;
}

}  // namespace

bool is_llm_reranker_folder(const std::string& dir) {
  const fs::path folder = model_folder_of(dir);
  std::error_code ec;
  if (fs::exists(folder / kConfigFile, ec)) return true;
  if (fs::exists(folder / "modules.json", ec)) return false;
  auto config = jsonu::read_optional_json(folder / "config.json");
  return config.ok() && names_causal_lm(*config);
}

Result<LlmReranker> LlmReranker::load(const fs::path& dir, const Tokenizer& tokenizer) {
  const fs::path path = dir / kConfigFile;
  DLRT_ASSIGN_OR_RETURN(json c, jsonu::read_optional_json(path));
  if (!c.is_null() && !c.is_object()) return InvalidModel(path.string() + ": expected a JSON object");
  auto text = [&](const char* key, const char* def) -> Result<std::string> {
    const json* v = c.is_object() ? jsonu::member(c, key) : nullptr;
    if (!v || v->is_null()) return std::string(def);
    if (!v->is_string()) return InvalidModel(path.string() + ": \"" + key + "\" must be a string");
    return v->get<std::string>();
  };
  LlmReranker r;
  DLRT_ASSIGN_OR_RETURN(std::string prefix, text("prefix", kPrefix));
  DLRT_ASSIGN_OR_RETURN(std::string suffix, text("suffix", kSuffix));
  DLRT_ASSIGN_OR_RETURN(r.template_, text("template", kTemplate));
  DLRT_ASSIGN_OR_RETURN(r.instruction_, text("instruction", kInstruction));
  DLRT_ASSIGN_OR_RETURN(std::string yes, text("yes_token", "yes"));
  DLRT_ASSIGN_OR_RETURN(std::string no, text("no_token", "no"));
  if (r.template_.find("{query}") == std::string::npos || r.template_.find("{document}") == std::string::npos)
    return InvalidModel(path.string() + ": \"template\" must hold {query} and {document}");
  const std::string where = (dir / "tokenizer.json").string();
  DLRT_ASSIGN_OR_RETURN(r.prefix_ids_, plain_ids(tokenizer, prefix, where));
  DLRT_ASSIGN_OR_RETURN(r.suffix_ids_, plain_ids(tokenizer, suffix, where));
  auto yes_id = tokenizer.token_to_id(yes);
  auto no_id = tokenizer.token_to_id(no);
  if (!yes_id || !no_id)
    return InvalidModel(where + ": the LLM reranker's answer tokens \"" + yes + "\" and \"" + no +
                        "\" must both be in the vocabulary (set yes_token / no_token in " + kConfigFile + ")");
  r.yes_id_ = *yes_id;
  r.no_id_ = *no_id;
  return r;
}

Result<Encoding> LlmReranker::encode(const Tokenizer& tokenizer, std::string_view query, std::string_view document,
                                     const std::string& instruction, size_t max_length, bool* truncated) const {
  const size_t fixed = prefix_ids_.size() + suffix_ids_.size();
  if (max_length <= fixed)
    return InvalidArgument("a maximum length of " + std::to_string(max_length) + " tokens leaves no room for the query "
                           "and document past the reranker's prompt (" + std::to_string(fixed) + " tokens)");
  const std::string body = fill(template_, instruction.empty() ? instruction_ : instruction, query, document);
  DLRT_ASSIGN_OR_RETURN(Encoding middle, encode_within(max_length - fixed, truncated, [&](size_t limit, size_t* n) {
                          return tokenizer.encode_checked(body, limit, nullptr, n);
                        }));
  Encoding e;
  e.ids = prefix_ids_;
  e.ids.insert(e.ids.end(), middle.ids.begin(), middle.ids.end());
  e.ids.insert(e.ids.end(), suffix_ids_.begin(), suffix_ids_.end());
  e.attention_mask.assign(e.ids.size(), 1);
  e.type_ids.assign(e.ids.size(), 0);
  return e;
}

Result<std::vector<float>> LlmReranker::score(const Tensor& logits, const std::vector<int64_t>& mask) const {
  if (logits.rank() != 3 || logits.dtype() != DType::kFloat32 || logits.dim(0) <= 0 ||
      mask.size() != static_cast<size_t>(logits.dim(0) * logits.dim(1)))
    return RuntimeError("the model's logits have shape " + shape_to_string(logits.shape()) + " (" +
                        dtype_name(logits.dtype()) + "), expected float32 [batch, length, vocabulary]");
  const size_t b = static_cast<size_t>(logits.dim(0)), len = static_cast<size_t>(logits.dim(1));
  const size_t vocab = static_cast<size_t>(logits.dim(2));
  if (static_cast<size_t>(std::max(yes_id_, no_id_)) >= vocab)
    return RuntimeError("the model's logits have " + std::to_string(vocab) + " columns; the answer tokens' ids are " +
                        std::to_string(yes_id_) + " and " + std::to_string(no_id_));
  std::vector<float> out(b);
  const float* x = logits.data<float>();
  for (size_t i = 0; i < b; ++i) {
    size_t last = 0;
    for (size_t t = 0; t < len; ++t)
      if (mask[i * len + t] != 0) last = t;
    const float* row = x + (i * len + last) * vocab;
    out[i] = row[yes_id_] - row[no_id_];
  }
  return out;
}

}  // namespace dlrt::embed
