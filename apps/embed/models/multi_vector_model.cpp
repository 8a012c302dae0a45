// The multi_vector kind (kind.h): a MultiVectorEmbedder (ColBERT / PyLate)
// behind PerTokenOut, its query and document vectors apart; MaxSim (or MeanMaxSim) scores by them.
#include <algorithm>
#include <memory>

#include "embed/models/embedder_model.h"
#include "embed/models/multi_vector.h"
#include "embed/models/registry.h"
#include "embed/models/token_inputs.h"

namespace dlrt::embed {
namespace {

class MultiVectorModel final : public PromptedModel, public PerTokenOut {
 public:
  explicit MultiVectorModel(std::shared_ptr<const MultiVectorEmbedder> m) : m_(std::move(m)) {}
  ModelKind kind() const override { return ModelKind::kMultiVector; }
  // /tokenize shows a text as a document.
  Result<Encoding> tokenize(std::string_view text, bool* truncated) const override {
    return m_->tokenize(text, false, truncated);
  }
  Result<Encoding> tokenize_tokens(std::string_view text, bool is_query, bool* truncated) const override {
    return m_->tokenize(text, is_query, truncated);
  }
  Result<TokenEmbedResult> embed_tokens(const std::vector<Encoding>& batch, bool is_query,
                                        const dlrt::RunOptions& bounds) const override {
    return m_->embed_encoded(batch, is_query, bounds);
  }
  size_t dimension() const override { return m_->dimension(); }
  size_t token_dimension() const override { return m_->dimension(); }
  std::string model_name() const override { return m_->base().model_name(); }
  size_t max_length() const override { return std::max(m_->config().query_length, m_->config().document_length); }
  dlrt::RunReport placement() const override { return m_->base().placement(); }
  const dlrt::PrecisionChoice* precision_choice() const override { return &m_->base().precision_choice(); }
  size_t token_row_bytes() const override { return m_->base().token_row_bytes(); }
  bool normalizes() const override {
    const MultiVectorConfig& c = m_->config();
    return !c.encoder || (c.normalize_queries && c.normalize_documents);
  }
  bool prompts_by_task() const override { return m_->config().encoder; }
  std::string pooling() const override { return "none"; }
  // What /rerank and dlrt rerank score by (late_interaction_score): "maxsim" unless the folder names
  // "meanmaxsim" (a null or absent similarity_fn_name is MaxSim, as in the libraries).
  std::string similarity_fn_name() const override {
    return m_->base().similarity_fn_name() == "meanmaxsim" ? "meanmaxsim" : "maxsim";
  }

 private:
  const Embedder& embedder() const override { return m_->base(); }
  std::shared_ptr<const MultiVectorEmbedder> m_;
};

bool multi_vector_folder(const std::string& model) { return is_multi_vector_folder(model_folder_of(model)); }

}  // namespace

std::shared_ptr<const EmbedModel> multi_vector_model(std::shared_ptr<const MultiVectorEmbedder> embedder) {
  return std::make_shared<MultiVectorModel>(std::move(embedder));
}

Result<std::shared_ptr<const EmbedModel>> open_multi_vector(const std::string& path, const EmbedderOptions& options,
                                                            ModelKind) {
  DLRT_ASSIGN_OR_RETURN(std::unique_ptr<MultiVectorEmbedder> m, MultiVectorEmbedder::create(path, options));
  return multi_vector_model(std::shared_ptr<const MultiVectorEmbedder>(std::move(m)));
}

KindRow multi_vector_row() {
  return {ModelKind::kMultiVector,
          "multi_vector",
          "a multi-vector (ColBERT) model, one vector per token",
          {Capability::kPerToken, Capability::kMaxSim, Capability::kTokenize},
          "use /embed_all for its per-token vectors (dlrt embed); it scores by MaxSim on POST /rerank (rank texts "
          "against a query by MaxSim with /rerank, or dlrt rerank)",
          multi_vector_folder,
          open_multi_vector};
}

}  // namespace dlrt::embed
