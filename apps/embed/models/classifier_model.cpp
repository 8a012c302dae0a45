// The cross_encoder and llm_reranker kinds (kind.h): a Classifier behind
// PairScorer (logits per text or pair; an LLM reranker takes pairs only).
#include <memory>

#include "embed/models/classifier.h"
#include "embed/models/embedder_model.h"
#include "embed/models/llm_reranker.h"
#include "embed/models/registry.h"

namespace dlrt::embed {
namespace {

class ClassifierModel final : public TokenizerModel, public PairScorer {
 public:
  ClassifierModel(std::shared_ptr<const Classifier> c, ModelKind kind) : c_(std::move(c)), kind_(kind) {}
  ModelKind kind() const override { return kind_; }
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
  Result<std::vector<Encoding>> tokenize_rerank_all(std::string_view query, const std::vector<std::string>& documents,
                                                    const std::string& instruction,
                                                    std::vector<uint8_t>* truncated) const override {
    return c_->tokenize_pairs(query, documents, instruction, truncated);
  }
  Result<std::vector<std::vector<float>>> classify(const std::vector<Encoding>& batch,
                                                   const dlrt::RunOptions& bounds) const override {
    DLRT_ASSIGN_OR_RETURN(ClassifierResult r, c_->score_encoded(batch, bounds));
    return std::move(r.logits);
  }
  std::vector<std::string> labels() const override { return c_->labels(); }
  ScoreActivation score_activation() const override { return c_->score_activation(); }
  bool takes_instruction() const override { return c_->takes_instruction(); }
  size_t dimension() const override { return c_->labels().size(); }
  std::string model_name() const override { return c_->model_name(); }
  size_t max_length() const override { return c_->max_length(); }
  dlrt::RunReport placement() const override { return c_->placement(); }
  const dlrt::PrecisionChoice* precision_choice() const override { return &c_->precision_choice(); }
  size_t token_row_bytes() const override { return c_->token_row_bytes(); }
  // /tokenize: one text as the tokenizer encodes it alone (an LLM reranker's
  // prompt template applies to pairs only), with offsets and special tokens marked.
  Result<Encoding> tokenize_with_offsets(std::string_view text,
                                         std::vector<std::pair<size_t, size_t>>& offsets) const override {
    return c_->tokenizer().encode_checked(text, c_->max_length(), &offsets);
  }

 private:
  const Tokenizer& tokenizer() const override { return c_->tokenizer(); }
  std::shared_ptr<const Classifier> c_;
  ModelKind kind_;
};

}  // namespace

std::shared_ptr<const EmbedModel> classifier_model(std::shared_ptr<const Classifier> classifier, ModelKind kind) {
  return std::make_shared<ClassifierModel>(std::move(classifier), kind);
}

std::shared_ptr<const EmbedModel> classifier_model(std::shared_ptr<const Classifier> classifier) {
  const ModelKind kind = classifier->is_llm_reranker() ? ModelKind::kLlmReranker : ModelKind::kCrossEncoder;
  return classifier_model(std::move(classifier), kind);
}

Result<std::shared_ptr<const EmbedModel>> open_classifier(const std::string& path, const EmbedderOptions& options,
                                                          ModelKind kind) {
  DLRT_ASSIGN_OR_RETURN(std::unique_ptr<Classifier> c, Classifier::create(path, options));
  return classifier_model(std::shared_ptr<const Classifier>(std::move(c)), kind);
}

// An LLM reranker is also a classifier folder: its row is asked first.
KindRow llm_reranker_row() {
  return {ModelKind::kLlmReranker,
          "llm_reranker",
          "a sequence classifier, an LLM reranker scoring (query, document) pairs",
          {Capability::kPairScore, Capability::kClassify, Capability::kTokenize},
          "use /rerank or /v1/rerank (dlrt rerank)",
          is_llm_reranker_folder,
          open_classifier};
}

KindRow cross_encoder_row() {
  return {ModelKind::kCrossEncoder,
          "cross_encoder",
          "a sequence classifier (cross-encoder)",
          {Capability::kPairScore, Capability::kClassify, Capability::kTokenize},
          "use /rerank, /v1/rerank or /predict (dlrt rerank)",
          is_classifier_folder,
          open_classifier};
}

}  // namespace dlrt::embed
