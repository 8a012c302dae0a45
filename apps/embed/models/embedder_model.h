// What the kinds' models share (model.h's EmbedModel): the answers of a
// tokenizer (TokenizerModel), of an Embedder folder's prompts too
// (PromptedModel), and the dense and sparse kinds' Embedder
// (EmbedderModelBase: dense_model.cpp, sparse_model.cpp). Internal to models/.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "embed/models/embedder.h"
#include "embed/models/model.h"
#include "embed/models/token_inputs.h"
#include "embed/tokenizer/tokenizer.h"

namespace dlrt::embed {

class TokenizerModel : public EmbedModel {
 public:
  size_t vocab_size() const override { return tokenizer().vocab_size(); }
  int64_t pad_id() const override { return tokenizer().pad_id(); }
  std::string token_text(int64_t id) const override { return tokenizer().id_to_token(id); }
  bool is_special_token(int64_t id) const override { return tokenizer().is_special(id); }
  Result<std::string> decode(const std::vector<int64_t>& ids, bool skip_special_tokens) const override {
    return tokenizer().decode(ids, skip_special_tokens);
  }

 protected:
  virtual const Tokenizer& tokenizer() const = 0;
};

class PromptedModel : public TokenizerModel {
 public:
  std::optional<std::string> prompt(const std::string& name) const override {
    auto it = embedder().prompts().find(name);
    if (it == embedder().prompts().end()) return std::nullopt;
    return it->second;
  }
  std::string default_prompt_name() const override { return embedder().default_prompt_name(); }
  std::vector<std::string> prompt_names() const override {
    std::vector<std::string> names;
    for (const auto& [name, text] : embedder().prompts()) names.push_back(name);
    return names;
  }

 protected:
  virtual const Embedder& embedder() const = 0;
  const Tokenizer& tokenizer() const override { return embedder().tokenizer(); }
};

class EmbedderModelBase : public PromptedModel {
 public:
  explicit EmbedderModelBase(std::shared_ptr<const Embedder> e) : e_(std::move(e)) {}
  ModelKind kind() const override { return e_->kind(); }
  Result<Encoding> tokenize(std::string_view text, bool* truncated) const override {
    size_t tokens = 0;
    return tokenize_counted(text, truncated, &tokens);
  }
  Result<Encoding> tokenize_counted(std::string_view text, bool* truncated, size_t* tokens) const override {
    return encode_within(
        e_->max_length(), truncated,
        [&](size_t limit, size_t* n) { return e_->tokenizer().encode_checked(text, limit, nullptr, n); }, tokens);
  }
  Result<Encoding> tokenize_with_offsets(std::string_view text,
                                         std::vector<std::pair<size_t, size_t>>& offsets) const override {
    return e_->tokenizer().encode_checked(text, e_->max_length(), &offsets);
  }
  size_t dimension() const override { return e_->dimension(); }
  std::string model_name() const override { return e_->model_name(); }
  size_t max_length() const override { return e_->max_length(); }
  dlrt::RunReport placement() const override { return e_->placement(); }
  const dlrt::PrecisionChoice* precision_choice() const override { return &e_->precision_choice(); }
  size_t token_row_bytes() const override { return e_->token_row_bytes(); }
  bool normalizes() const override { return e_->normalize(); }
  bool batch_dependent() const override { return e_->runs_alone(); }
  std::string batching() const override { return e_->batching(); }
  std::string similarity_fn_name() const override { return e_->similarity_fn_name(); }

 protected:
  const Embedder& embedder() const override { return *e_; }
  std::shared_ptr<const Embedder> e_;
};

}  // namespace dlrt::embed
