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

// "special_tokens": false: how many ids the post-processor puts before and after every text, found
// on two probes whose own ids (without special tokens) come out unchanged between them. Unsupported
// when the post-processor adds ids otherwise (it cannot be undone by cutting the ends).
Status find_added(const Tokenizer& tokenizer, const std::string& where, const std::string& path, size_t* front,
                  size_t* back) {
  std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> probes;
  for (const char* text : {"a", "0 1 2 3 yes no"}) {
    DLRT_ASSIGN_OR_RETURN(Encoding e, tokenizer.encode_checked(text));
    DLRT_ASSIGN_OR_RETURN(std::vector<int64_t> plain, plain_ids(tokenizer, text, where));
    probes.emplace_back(std::move(e.ids), std::move(plain));
  }
  const auto& [ids0, plain0] = probes[0];
  const auto& [ids1, plain1] = probes[1];
  if (ids0.size() >= plain0.size() && ids1.size() >= plain1.size() &&
      ids1.size() - plain1.size() == ids0.size() - plain0.size()) {
    const size_t added = ids0.size() - plain0.size();
    for (size_t f = 0; f <= added; ++f) {
      auto around_plain = [&](const std::vector<int64_t>& ids, const std::vector<int64_t>& plain) {
        return std::equal(plain.begin(), plain.end(), ids.begin() + static_cast<std::ptrdiff_t>(f));
      };
      if (around_plain(ids0, plain0) && around_plain(ids1, plain1) &&
          std::equal(ids0.begin(), ids0.begin() + static_cast<std::ptrdiff_t>(f), ids1.begin()) &&
          std::equal(ids0.end() - static_cast<std::ptrdiff_t>(added - f), ids0.end(),
                     ids1.end() - static_cast<std::ptrdiff_t>(added - f))) {
        *front = f;
        *back = added - f;
        return Status::Ok();
      }
    }
  }
  return Unsupported(path + ": \"special_tokens\": false, but the tokenizer's post-processor adds ids to a text "
                     "other than the same tokens before and after it, which dlrt cannot take off again");
}

bool type_is(const json& module, const std::string& cls) {
  const std::string type = jsonu::get_string(module, "type", "");
  return type.size() > cls.size() && type.compare(type.size() - cls.size() - 1, cls.size() + 1, "." + cls) == 0;
}

// modules.json's entries when it lists a LogitScore (sentence-transformers 6's
// CrossEncoder over a causal LM); null otherwise.
json logit_score_modules(const fs::path& folder) {
  auto modules = jsonu::read_optional_json(folder / "modules.json");
  if (!modules.ok() || !modules->is_array()) return nullptr;
  for (const json& m : *modules)
    if (m.is_object() && type_is(m, "LogitScore")) return *modules;
  return nullptr;
}

// The LogitScore form (see llm_reranker.h): its answer token ids, after the
// checks that the Transformer is the text-generation one at the folder's root
// and takes text pairs without a chat template.
Status load_logit_score(const fs::path& dir, const json& modules, int64_t* yes_id, int64_t* no_id,
                        std::string* query_prompt, bool has_config) {
  const std::string where = (dir / "modules.json").string();
  std::string types;
  for (const json& m : modules) types += (types.empty() ? "" : ", ") + jsonu::get_string(m, "type", "?");
  if (modules.size() != 2 || !type_is(modules[0], "Transformer") || jsonu::get_string(modules[0], "path", "") != "" ||
      !type_is(modules[1], "LogitScore"))
    return Unsupported(where +
                       ": an LLM reranker folder must list a Transformer at the folder's root, then a "
                       "LogitScore; it lists " +
                       types);
  DLRT_ASSIGN_OR_RETURN(json st, jsonu::read_optional_json(dir / "sentence_bert_config.json"));
  const std::string task = st.is_object() ? jsonu::get_string(st, "transformer_task", "") : "";
  if (task != "text-generation")
    return Unsupported(where +
                       ": a LogitScore reads a causal LM's logits, but the Transformer's transformer_task is \"" +
                       task + "\" (sentence_bert_config.json), not \"text-generation\"");
  const json* modality = st.is_object() ? jsonu::member(st, "modality_config") : nullptr;
  if (!has_config && modality && modality->is_object() && modality->contains("message"))
    return Unsupported((dir / "sentence_bert_config.json").string() +
                       ": this reranker renders (query, document) pairs through the tokenizer's chat template "
                       "(modality_config has \"message\"), which dlrt does not render itself; write the rendered "
                       "prompt to " + std::string(kConfigFile) + " with `python -m dlrt.reranker_config " +
                       dir.string() + "` (dlrt's Python package; needs jinja2), then load the folder again");
  const fs::path rel = jsonu::get_string(modules[1], "path", "");
  for (const fs::path& part : rel)
    if (rel.is_absolute() || part == "..")
      return InvalidModel(where + ": the LogitScore's path \"" + rel.string() + "\" leaves the folder");
  const fs::path cfg_path = dir / rel / "config.json";
  DLRT_ASSIGN_OR_RETURN(json cfg, jsonu::read_optional_json(cfg_path));
  const json* t = cfg.is_object() ? jsonu::member(cfg, "true_token_id") : nullptr;
  const json* f = cfg.is_object() ? jsonu::member(cfg, "false_token_id") : nullptr;
  auto is_id = [](const json* v) { return v && v->is_number_integer() && v->get<int64_t>() >= 0; };
  if (!is_id(t) || (f && !f->is_null() && !is_id(f)))
    return InvalidModel(cfg_path.string() +
                        ": expected a non-negative integer \"true_token_id\" and a "
                        "\"false_token_id\" that is one or null");
  *yes_id = t->get<int64_t>();
  *no_id = f && !f->is_null() ? f->get<int64_t>() : -1;
  // The default prompt, which CrossEncoder.predict puts before each pair's query (none when
  // default_prompt_name names no prompt).
  DLRT_ASSIGN_OR_RETURN(json cst, jsonu::read_optional_json(dir / "config_sentence_transformers.json"));
  const json* name = cst.is_object() ? jsonu::member(cst, "default_prompt_name") : nullptr;
  const json* prompts = cst.is_object() ? jsonu::member(cst, "prompts") : nullptr;
  if (name && name->is_string() && prompts && prompts->is_object()) {
    const json* prompt = jsonu::member(*prompts, name->get<std::string>());
    if (prompt && !prompt->is_string())
      return InvalidModel((dir / "config_sentence_transformers.json").string() + ": the prompt \"" +
                          name->get<std::string>() + "\" must be a string");
    if (prompt) *query_prompt = prompt->get<std::string>();
  }
  return Status::Ok();
}

}  // namespace

bool is_llm_reranker_folder(const std::string& dir) {
  const fs::path folder = model_folder_of(dir);
  std::error_code ec;
  if (fs::exists(folder / kConfigFile, ec)) return true;
  const bool logit_score = !logit_score_modules(folder).is_null();
  if (!logit_score && fs::exists(folder / "modules.json", ec)) return false;
  auto config = jsonu::read_optional_json(folder / "config.json");
  return config.ok() && names_causal_lm(*config);
}

Result<LlmReranker> LlmReranker::load(const fs::path& dir, const Tokenizer& tokenizer) {
  const bool has_config = fs::exists(dir / kConfigFile);
  // A LogitScore's answer ids; with reranker_config.json too, its prompt (a rendered chat template) takes
  // the pairs and these ids stay unless the file names tokens.
  int64_t logit_yes = -1, logit_no = -1;
  if (json modules = logit_score_modules(dir); !modules.is_null()) {
    LlmReranker r;
    r.pairs_ = true;
    DLRT_RETURN_IF_ERROR(load_logit_score(dir, modules, &r.yes_id_, &r.no_id_, &r.query_prompt_, has_config));
    if (!has_config) return r;
    logit_yes = r.yes_id_;
    logit_no = r.no_id_;
  }
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
  DLRT_ASSIGN_OR_RETURN(r.instruction_template_, text("instruction_template", ""));
  DLRT_ASSIGN_OR_RETURN(r.empty_text_, text("empty_text", ""));
  DLRT_ASSIGN_OR_RETURN(r.instruction_, text("instruction", kInstruction));
  DLRT_ASSIGN_OR_RETURN(std::string yes, text("yes_token", "yes"));
  DLRT_ASSIGN_OR_RETURN(std::string no, text("no_token", "no"));
  if (r.template_.find("{query}") == std::string::npos || r.template_.find("{document}") == std::string::npos)
    return InvalidModel(path.string() + ": \"template\" must hold {query} and {document}");
  if (!r.instruction_template_.empty() && (r.instruction_template_.find("{instruction}") == std::string::npos ||
                                           r.instruction_template_.find("{query}") == std::string::npos ||
                                           r.instruction_template_.find("{document}") == std::string::npos))
    return InvalidModel(path.string() + ": \"instruction_template\" must hold {instruction}, {query} and {document}");
  for (const char* key : {"special_tokens", "restore_suffix"}) {
    const json* v = c.is_object() ? jsonu::member(c, key) : nullptr;
    if (v && !v->is_boolean()) return InvalidModel(path.string() + ": \"" + key + "\" must be true or false");
  }
  const bool special_tokens = jsonu::get_bool(c, "special_tokens", true);
  r.restore_suffix_ = jsonu::get_bool(c, "restore_suffix", false);
  const std::string where = (dir / "tokenizer.json").string();
  DLRT_ASSIGN_OR_RETURN(r.prefix_ids_, plain_ids(tokenizer, prefix, where));
  DLRT_ASSIGN_OR_RETURN(r.suffix_ids_, plain_ids(tokenizer, suffix, where));
  if (!special_tokens) {
    DLRT_RETURN_IF_ERROR(find_added(tokenizer, where, path.string(), &r.strip_front_, &r.strip_back_));
  }
  if (logit_yes >= 0 && !jsonu::member(c, "yes_token") && !jsonu::member(c, "no_token")) {
    r.yes_id_ = logit_yes;
    r.no_id_ = logit_no;
  } else {
    auto yes_id = tokenizer.token_to_id(yes);
    auto no_id = tokenizer.token_to_id(no);
    if (!yes_id || !no_id)
      return InvalidModel(where + ": the LLM reranker's answer tokens \"" + yes + "\" and \"" + no +
                          "\" must both be in the vocabulary (set yes_token / no_token in " + kConfigFile + ")");
    r.yes_id_ = *yes_id;
    r.no_id_ = *no_id;
  }
  if (r.restore_suffix_) {
    DLRT_ASSIGN_OR_RETURN(r.tail_ids_, r.tail(tokenizer, r.template_, r.instruction_));
    DLRT_ASSIGN_OR_RETURN(Encoding bare, r.whole(tokenizer, r.template_, r.instruction_, "", "", 0, nullptr));
    r.fixed_ = bare.ids.size();
  }
  return r;
}

const std::string& LlmReranker::template_for(const std::string& instruction) const {
  return !instruction.empty() && !instruction_template_.empty() ? instruction_template_ : template_;
}

const std::string& LlmReranker::instruction_or_default(const std::string& instruction) const {
  return instruction.empty() ? instruction_ : instruction;
}

Status LlmReranker::check_instruction(const std::string& instruction) const {
  if (pairs_ && !instruction.empty())
    return InvalidArgument(
        "an instruction is for LLM rerankers with a prompt template; this sentence-transformers "
        "reranker (LogitScore) scores plain (query, document) pairs");
  if (!instruction.empty() && !takes_instruction())
    return InvalidArgument("this LLM reranker's prompt has no place for an instruction (its template in " +
                           std::string(kConfigFile) + " holds no {instruction}, and it gives no instruction_template)");
  return Status::Ok();
}

std::vector<int64_t> LlmReranker::around(const std::vector<int64_t>& middle) const {
  std::vector<int64_t> ids = prefix_ids_;
  ids.insert(ids.end(), middle.begin(), middle.end());
  ids.insert(ids.end(), suffix_ids_.begin(), suffix_ids_.end());
  return ids;
}

Result<Encoding> LlmReranker::middle(const Tokenizer& tokenizer, const std::string& text, size_t limit,
                                     size_t* untruncated) const {
  const size_t added = strip_front_ + strip_back_;
  size_t n = 0;
  DLRT_ASSIGN_OR_RETURN(Encoding e, tokenizer.encode_checked(text, limit > 0 ? limit + added : 0, nullptr, &n));
  if (e.ids.size() < added) return RuntimeError("the tokenizer's special tokens did not come around the prompt");
  e.ids.erase(e.ids.end() - static_cast<std::ptrdiff_t>(strip_back_), e.ids.end());
  e.ids.erase(e.ids.begin(), e.ids.begin() + static_cast<std::ptrdiff_t>(strip_front_));
  e.attention_mask.resize(e.ids.size());
  e.type_ids.resize(e.ids.size());
  if (untruncated) *untruncated = n >= added ? n - added : 0;
  return e;
}

Result<Encoding> LlmReranker::whole(const Tokenizer& tokenizer, const std::string& tmpl, std::string_view instruction,
                                    std::string_view query, std::string_view document, size_t limit,
                                    size_t* untruncated) const {
  size_t n = 0;
  DLRT_ASSIGN_OR_RETURN(Encoding mid, middle(tokenizer, fill(tmpl, instruction, query, document), limit, &n));
  Encoding e;
  e.ids = around(mid.ids);
  if (untruncated) *untruncated = prefix_ids_.size() + std::max(n, mid.ids.size()) + suffix_ids_.size();
  return e;
}

// sentence-transformers' chat-template suffix: the longest run of ids that ends both prompts with the
// query and document "0" and "1 2 3 4", none when one prompt ends wholly in the other.
Result<std::vector<int64_t>> LlmReranker::tail(const Tokenizer& tokenizer, const std::string& tmpl,
                                               std::string_view instruction) const {
  DLRT_ASSIGN_OR_RETURN(Encoding a, whole(tokenizer, tmpl, instruction, "0", "0", 0, nullptr));
  DLRT_ASSIGN_OR_RETURN(Encoding b, whole(tokenizer, tmpl, instruction, "1 2 3 4", "1 2 3 4", 0, nullptr));
  size_t count = 0;
  while (count < a.ids.size() && count < b.ids.size() &&
         a.ids[a.ids.size() - 1 - count] == b.ids[b.ids.size() - 1 - count])
    ++count;
  if (count == 0 || count >= std::min(a.ids.size(), b.ids.size())) return std::vector<int64_t>{};
  return std::vector<int64_t>(a.ids.end() - static_cast<std::ptrdiff_t>(count), a.ids.end());
}

// The restore_suffix form: the whole prompt cut from the right to max_length, its tail written back over
// the last ids of a cut (or exactly full) prompt, as sentence-transformers truncates a chat template.
Result<Encoding> LlmReranker::encode_restoring(const Tokenizer& tokenizer, std::string_view query,
                                               std::string_view document, const std::string& instruction,
                                               size_t max_length, bool* truncated) const {
  const std::string& instr = instruction_or_default(instruction);
  const std::string& tmpl = template_for(instruction);
  std::vector<int64_t> tail_ids = tail_ids_;
  if (instr != instruction_ || &tmpl != &template_) {
    DLRT_ASSIGN_OR_RETURN(tail_ids, tail(tokenizer, tmpl, instr));
  }
  if (max_length <= std::max(tail_ids.size(), prefix_ids_.size()))
    return InvalidArgument("a maximum length of " + std::to_string(max_length) + " tokens leaves no room for the query "
                           "and document past the reranker's prompt");
  size_t total = 0;
  DLRT_ASSIGN_OR_RETURN(Encoding e,
                        whole(tokenizer, tmpl, instr, or_empty_text(query), or_empty_text(document),
                              max_length - prefix_ids_.size(), &total));
  if (e.ids.size() > max_length) e.ids.resize(max_length);
  if (total >= max_length) {
    const size_t keep = std::min(tail_ids.size(), e.ids.size());
    std::copy(tail_ids.end() - static_cast<std::ptrdiff_t>(keep), tail_ids.end(),
              e.ids.end() - static_cast<std::ptrdiff_t>(keep));
  }
  if (truncated) *truncated = total > max_length;
  e.attention_mask.assign(e.ids.size(), 1);
  e.type_ids.assign(e.ids.size(), 0);
  return e;
}

Result<Encoding> LlmReranker::encode(const Tokenizer& tokenizer, std::string_view query, std::string_view document,
                                     const std::string& instruction, size_t max_length, bool* truncated) const {
  DLRT_RETURN_IF_ERROR(check_instruction(instruction));
  if (pairs_) {
    return encode_within(max_length, truncated, [&](size_t limit, size_t* n) {
      return tokenizer.encode_pair_checked(query_prompt_ + std::string(query), document, limit, n);
    });
  }
  if (restore_suffix_) return encode_restoring(tokenizer, query, document, instruction, max_length, truncated);
  const size_t fixed = prefix_ids_.size() + suffix_ids_.size();
  if (max_length <= fixed)
    return InvalidArgument("a maximum length of " + std::to_string(max_length) + " tokens leaves no room for the query "
                           "and document past the reranker's prompt (" + std::to_string(fixed) + " tokens)");
  const std::string body = fill(template_for(instruction), instruction_or_default(instruction), or_empty_text(query),
                                or_empty_text(document));
  DLRT_ASSIGN_OR_RETURN(Encoding mid, encode_within(max_length - fixed, truncated, [&](size_t limit, size_t* n) {
                          return middle(tokenizer, body, limit, n);
                        }));
  Encoding e;
  e.ids = around(mid.ids);
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
  if (yes_id_ < 0 || static_cast<size_t>(std::max(yes_id_, no_id_)) >= vocab)
    return RuntimeError("the model's logits have " + std::to_string(vocab) + " columns; the answer tokens' ids are " +
                        std::to_string(yes_id_) + " and " + std::to_string(no_id_));
  std::vector<float> out(b);
  const float* x = logits.data<float>();
  for (size_t i = 0; i < b; ++i) {
    size_t last = 0;
    for (size_t t = 0; t < len; ++t)
      if (mask[i * len + t] != 0) last = t;
    const float* row = x + (i * len + last) * vocab;
    out[i] = no_id_ < 0 ? row[yes_id_] : row[yes_id_] - row[no_id_];
  }
  return out;
}

}  // namespace dlrt::embed
