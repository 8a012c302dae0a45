// An LLM reranker: a causal language model (Qwen3-Reranker and its kind)
// that judges a (query, document) pair by its next-token logits after a
// prompt, scored as softmax([logit("no"), logit("yes")])[1] at the last
// position. The Classifier serves it behind the same interface as a
// cross-encoder: one label whose logit is logit("yes") - logit("no"), so that
// the sigmoid every reranker route applies gives that softmax exactly.
//
// The folder: config.json naming a *ForCausalLM architecture, no modules.json
// (that makes it a sentence-transformers embedder), the model with a
// "logits" [batch, sequence, vocabulary] output (optimum's text-generation
// export), the tokenizer; or any such model folder with reranker_config.json.
// Or sentence-transformers 6's CrossEncoder over a causal LM: a modules.json of
// a text-generation Transformer and a LogitScore (its true_token_id and
// false_token_id); each pair is then the tokenizer's pair encoding (longest
// first truncation; the default prompt, if any, before the query), scored
// logit(true) - logit(false) (logit(true) when false_token_id is null). One whose pairs go through the tokenizer's chat
// template (a "message" modality) is refused unless reranker_config.json gives the rendered prompt
// (`python -m dlrt.reranker_config DIR` writes it); the LogitScore's ids then stay the answer tokens
// unless the file names yes_token / no_token.
//
// The prompt is Qwen3-Reranker's model card's unless reranker_config.json
// gives others (every key optional):
//   {"prefix": "<|im_start|>system\n...<|im_start|>user\n",
//    "template": "<Instruct>: {instruction}\n<Query>: {query}\n<Document>: {document}",
//    "instruction": "Given a web search query, retrieve relevant passages that answer the query",
//    "suffix": "<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n",
//    "yes_token": "yes", "no_token": "no"}
// The prefix and suffix are tokenized without special tokens; the middle is
// tokenized as a text (the tokenizer's post-processor applies) and cut from
// the right so that the whole fits the maximum length, as the model card does.
// Three more keys, for a rendered chat template: "special_tokens": false tokenizes
// the middle without the post-processor's special tokens (add_special_tokens=False:
// the tokens a TemplateProcessing puts before and after every text, as a probe at
// load finds them, are cut off again; any other post-processor adding tokens is
// refused at load), "restore_suffix": true cuts the whole prompt from the right
// instead and writes its tail back over the last ids (sentence-transformers'
// restore_suffix: the tail is the ids common to the ends of the prompts with "0"
// and "1 2 3 4" as the query and document), "instruction_template" is the
// template for a request that gives an instruction (a chat template that adds a
// system turn for it only), and "empty_text" is what an empty query or document
// is filled in as (a processor renders an empty content as an empty list). A
// non-empty instruction is refused when neither template holds {instruction}.
//
// Thread-safety: immutable after load(); every method may be called from many
// threads at once.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "dlrt/status.h"
#include "dlrt/tensor.h"
#include "embed/models/embedder.h"

namespace dlrt::embed {

class Tokenizer;

// True for a folder served as an LLM reranker (see above).
bool is_llm_reranker_folder(const std::string& dir);

class LlmReranker {
 public:
  // The prompt (reranker_config.json or the defaults) and the ids of the yes
  // and no tokens. kInvalidModel for a broken file, a key of the wrong type, a
  // template without {query} and {document}, or tokens the vocabulary lacks.
  static Result<LlmReranker> load(const std::filesystem::path& dir, const Tokenizer& tokenizer);

  // The ids of one pair in the prompt, at most max_length of them;
  // `instruction` empty: the default. *truncated says whether the middle was
  // cut. kInvalidArgument when max_length leaves no room past the prefix and
  // suffix, or the tokenizer's budget runs out.
  Result<Encoding> encode(const Tokenizer& tokenizer, std::string_view query, std::string_view document,
                          const std::string& instruction, size_t max_length, bool* truncated) const;
  // Tokens of the prompt around the query and document (prefix and suffix; the
  // whole prompt with both empty in the restore_suffix form).
  size_t fixed_tokens() const { return restore_suffix_ ? fixed_ : prefix_ids_.size() + suffix_ids_.size(); }
  // False for sentence-transformers 6's form: pairs are encoded as the
  // tokenizer's pairs, without a prompt or an instruction.
  bool has_prompt() const { return !pairs_; }
  // A prompt with an {instruction} for a request's instruction to fill.
  bool takes_instruction() const {
    return !pairs_ && (!instruction_template_.empty() || template_.find("{instruction}") != std::string::npos);
  }
  // kInvalidArgument for a non-empty instruction without a prompt, or without
  // {instruction} in the template and no instruction_template.
  Status check_instruction(const std::string& instruction) const;
  // sentence-transformers' form: the default prompt (config_sentence_transformers.json's
  // default_prompt_name) put before each query; empty without one.
  const std::string& query_prompt() const { return query_prompt_; }

  // logit(yes) - logit(no) at the last position with mask 1, per row of a
  // [batch, length, vocabulary] float logits tensor; `mask` is [batch, length].
  Result<std::vector<float>> score(const Tensor& logits, const std::vector<int64_t>& mask) const;

  const std::string& default_instruction() const { return instruction_; }
  int64_t yes_id() const { return yes_id_; }
  int64_t no_id() const { return no_id_; }

 private:
  // The prompt's prefix ids, `middle`, its suffix ids.
  std::vector<int64_t> around(const std::vector<int64_t>& middle) const;
  // The template a request's instruction (empty: none) takes, and the instruction it is filled with.
  const std::string& template_for(const std::string& instruction) const;
  const std::string& instruction_or_default(const std::string& instruction) const;
  std::string_view or_empty_text(std::string_view text) const { return text.empty() ? empty_text_ : text; }
  // The ids of a filled template: the tokenizer's encoding, without the post-processor's
  // tokens when special_tokens is false; `limit` and `untruncated` count the ids kept.
  Result<Encoding> middle(const Tokenizer& tokenizer, const std::string& text, size_t limit, size_t* untruncated) const;
  // prefix + the filled template + suffix; `untruncated` its length uncut (limit cuts the template's ids).
  Result<Encoding> whole(const Tokenizer& tokenizer, const std::string& tmpl, std::string_view instruction,
                         std::string_view query, std::string_view document, size_t limit, size_t* untruncated) const;
  Result<std::vector<int64_t>> tail(const Tokenizer& tokenizer, const std::string& tmpl,
                                    std::string_view instruction) const;
  Result<Encoding> encode_restoring(const Tokenizer& tokenizer, std::string_view query, std::string_view document,
                                    const std::string& instruction, size_t max_length, bool* truncated) const;

  std::string template_, instruction_, query_prompt_;
  std::string instruction_template_;  // empty: template_ takes the instruction too
  std::string empty_text_;            // an empty query or document in the filled template
  // special_tokens false: the post-processor's ids before and after a text, cut off again.
  size_t strip_front_ = 0, strip_back_ = 0;
  std::vector<int64_t> prefix_ids_, suffix_ids_, tail_ids_;  // tail_ids_: restore_suffix's, default instruction
  size_t fixed_ = 0;
  bool restore_suffix_ = false;
  int64_t yes_id_ = -1, no_id_ = -1;  // no_id_ -1 in the LogitScore form: logit(yes) alone
  bool pairs_ = false;
};

}  // namespace dlrt::embed
