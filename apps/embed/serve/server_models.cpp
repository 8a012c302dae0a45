// The models behind dlrt serve (server.h's EmbedModel): the Embedder, and a
// Classifier for cross-encoders and LLM rerankers; open_model, which opens a
// folder as its kind; and the warm-up run before serving.
#include <string>
#include <string_view>
#include <vector>

#include "embed/models/classifier.h"
#include "embed/models/embedder.h"
#include "embed/models/multi_vector.h"
#include "embed/serve/server.h"
#include "embed/models/sparse.h"
#include "embed/models/token_inputs.h"
#include "embed/tokenizer/tokenizer.h"

namespace dlrt::embed {
namespace {

// ---- the Embedder behind the server ----------------------------------------

class EmbedderModel final : public EmbedModel {
 public:
  explicit EmbedderModel(std::shared_ptr<const Embedder> e) : e_(std::move(e)) {}
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
  Result<EmbedResult> embed_encoded(const std::vector<Encoding>& batch, const dlrt::RunOptions& bounds) const override {
    if (is_sparse()) {
      // The vocabulary-wide SPLADE vectors: the sparse routes keep their non-zero (top_k) values.
      DLRT_ASSIGN_OR_RETURN(SparseResult s, e_->encode_sparse_encoded(batch, 0, bounds));
      EmbedResult r;
      r.total_tokens = s.total_tokens;
      r.report = std::move(s.report);
      for (const SparseVector& v : s.vectors) r.vectors.push_back(densify(v, e_->dimension()));
      return r;
    }
    return e_->embed_encoded(batch, /*normalize=*/false, bounds);  // the server normalises per request
  }
  ModelKind kind() const override { return e_->kind(); }
  bool is_sparse() const override { return kind() == ModelKind::kSparse; }
  size_t dimension() const override { return e_->dimension(); }
  std::string model_name() const override { return e_->model_name(); }
  size_t max_length() const override { return e_->max_length(); }
  dlrt::RunReport placement() const override { return e_->placement(); }
  size_t token_row_bytes() const override { return e_->token_row_bytes(); }
  bool normalizes() const override { return e_->normalize(); }
  std::string pooling() const override { return is_sparse() ? "splade" : pooling_name(e_->pooling()); }
  bool batch_dependent() const override { return e_->runs_alone(); }
  std::string batching() const override { return e_->batching(); }
  std::optional<std::string> prompt(const std::string& name) const override {
    auto it = e_->prompts().find(name);
    if (it == e_->prompts().end()) return std::nullopt;
    return it->second;
  }
  std::string default_prompt_name() const override { return e_->default_prompt_name(); }
  std::string similarity_fn_name() const override { return e_->similarity_fn_name(); }
  std::vector<std::string> prompt_names() const override {
    std::vector<std::string> names;
    for (const auto& [name, text] : e_->prompts()) names.push_back(name);
    return names;
  }
  size_t vocab_size() const override { return e_->tokenizer().vocab_size(); }
  std::string token_text(int64_t id) const override { return e_->tokenizer().id_to_token(id); }
  bool is_special_token(int64_t id) const override { return e_->tokenizer().is_special(id); }
  Result<std::string> decode(const std::vector<int64_t>& ids, bool skip_special_tokens) const override {
    return e_->tokenizer().decode(ids, skip_special_tokens);
  }
  Result<TokenEmbedResult> embed_tokens(const std::vector<Encoding>& batch, bool,
                                        const dlrt::RunOptions& bounds) const override {
    return e_->embed_tokens(batch, bounds);
  }

 private:
  std::shared_ptr<const Embedder> e_;
};

// ---- a Classifier behind the server ------------------------------------------

class ClassifierModel final : public EmbedModel {
 public:
  explicit ClassifierModel(std::shared_ptr<const Classifier> c) : c_(std::move(c)) {}
  Result<Encoding> tokenize(std::string_view text, bool* truncated) const override {
    return c_->tokenize(ClassifierInput{std::string(text), {}, false, {}}, truncated);
  }
  Result<Encoding> tokenize_pair(std::string_view first, std::string_view second, bool* truncated) const override {
    return c_->tokenize(ClassifierInput{std::string(first), std::string(second), true, {}}, truncated);
  }
  Result<Encoding> tokenize_rerank(std::string_view query, std::string_view document, const std::string& instruction,
                                   bool* truncated) const override {
    return c_->tokenize(ClassifierInput{std::string(query), std::string(document), true, instruction}, truncated);
  }
  ModelKind kind() const override { return c_->is_llm_reranker() ? ModelKind::kLlmReranker : ModelKind::kCrossEncoder; }
  Result<std::vector<Encoding>> tokenize_rerank_all(std::string_view query, const std::vector<std::string>& documents,
                                                    const std::string& instruction,
                                                    std::vector<uint8_t>* truncated) const override {
    return c_->tokenize_pairs(query, documents, instruction, truncated);
  }
  std::string reranker_kind() const override { return c_->is_llm_reranker() ? "llm" : ""; }
  Result<EmbedResult> embed_encoded(const std::vector<Encoding>&, const dlrt::RunOptions&) const override {
    return InvalidArgument("the served model is a sequence classifier: use /rerank or /predict");
  }
  Result<std::vector<std::vector<float>>> classify(const std::vector<Encoding>& batch,
                                                   const dlrt::RunOptions& bounds) const override {
    DLRT_ASSIGN_OR_RETURN(ClassifierResult r, c_->score_encoded(batch, bounds));
    return std::move(r.logits);
  }
  bool is_classifier() const override { return true; }
  std::vector<std::string> labels() const override { return c_->labels(); }
  size_t dimension() const override { return c_->labels().size(); }
  std::string model_name() const override { return c_->model_name(); }
  size_t max_length() const override { return c_->max_length(); }
  dlrt::RunReport placement() const override { return c_->placement(); }
  size_t token_row_bytes() const override { return c_->token_row_bytes(); }
  size_t vocab_size() const override { return c_->tokenizer().vocab_size(); }
  std::string token_text(int64_t id) const override { return c_->tokenizer().id_to_token(id); }
  // /tokenize: one text as the tokenizer encodes it alone (an LLM reranker's
  // prompt template applies to pairs only), with offsets and special tokens marked.
  Result<Encoding> tokenize_with_offsets(std::string_view text,
                                         std::vector<std::pair<size_t, size_t>>& offsets) const override {
    return c_->tokenizer().encode_checked(text, c_->max_length(), &offsets);
  }
  bool is_special_token(int64_t id) const override { return c_->tokenizer().is_special(id); }
  Result<std::string> decode(const std::vector<int64_t>& ids, bool skip_special_tokens) const override {
    return c_->tokenizer().decode(ids, skip_special_tokens);
  }

 private:
  std::shared_ptr<const Classifier> c_;
};

}  // namespace

std::shared_ptr<const EmbedModel> embedder_model(std::shared_ptr<const Embedder> embedder) {
  return std::make_shared<EmbedderModel>(std::move(embedder));
}

std::shared_ptr<const EmbedModel> classifier_model(std::shared_ptr<const Classifier> classifier) {
  return std::make_shared<ClassifierModel>(std::move(classifier));
}

// Each kind's model opens here: a new kind is one line (and its EmbedModel).
Result<std::shared_ptr<const EmbedModel>> open_model(const std::string& path, const EmbedderOptions& options) {
  switch (detect_kind(path)) {
    case ModelKind::kCrossEncoder:
    case ModelKind::kLlmReranker: {
      DLRT_ASSIGN_OR_RETURN(std::unique_ptr<Classifier> c, Classifier::create(path, options));
      return classifier_model(std::shared_ptr<const Classifier>(std::move(c)));
    }
    case ModelKind::kMultiVector: {
      DLRT_ASSIGN_OR_RETURN(std::unique_ptr<MultiVectorEmbedder> m, MultiVectorEmbedder::create(path, options));
      return multi_vector_model(std::shared_ptr<const MultiVectorEmbedder>(std::move(m)));
    }
    case ModelKind::kDense:
    case ModelKind::kSparse: break;
  }
  DLRT_ASSIGN_OR_RETURN(std::unique_ptr<Embedder> e, Embedder::create(path, options));
  return embedder_model(std::shared_ptr<const Embedder>(std::move(e)));
}

Status warm_up(const EmbedModel& model) {
  bool truncated = false;
  if (model.kind() == ModelKind::kLlmReranker) {  // takes pairs only
    DLRT_ASSIGN_OR_RETURN(Encoding pair, model.tokenize_pair("warm up", "the model before serving", &truncated));
    DLRT_ASSIGN_OR_RETURN(auto logits, model.classify({pair}, {}));
    if (logits.size() != 1) return Internal("warm-up run returned " + std::to_string(logits.size()) + " rows");
    return Status::Ok();
  }
  DLRT_ASSIGN_OR_RETURN(Encoding enc, model.tokenize("warm up the model before serving", &truncated));
  if (has_capability(model.kind(), Capability::kClassify)) {
    DLRT_ASSIGN_OR_RETURN(auto logits, model.classify({enc}, {}));
    if (logits.size() != 1 || logits[0].size() != model.labels().size())
      return Internal("warm-up run returned " + std::to_string(logits.size()) + " rows");
    return Status::Ok();
  }
  if (has_capability(model.kind(), Capability::kMaxSim)) {
    DLRT_ASSIGN_OR_RETURN(Encoding query, model.tokenize_tokens("warm up the model before serving", true, &truncated));
    DLRT_ASSIGN_OR_RETURN(TokenEmbedResult t, model.embed_tokens({query}, true, {}));
    if (t.tokens.size() != 1 || t.tokens[0].empty() || t.tokens[0][0].size() != model.dimension())
      return Internal("warm-up run returned " + std::to_string(t.tokens.size()) + " token lists");
    return Status::Ok();
  }
  DLRT_ASSIGN_OR_RETURN(EmbedResult r, model.embed_encoded({enc}, {}));
  if (r.vectors.size() != 1 || r.vectors[0].size() != model.dimension())
    return Internal("warm-up run returned " + std::to_string(r.vectors.size()) + " vectors");
  return Status::Ok();
}

}  // namespace dlrt::embed
