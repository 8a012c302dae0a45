// The dense kind (kind.h): an Embedder of one vector per text (Transformer +
// Pooling, or a static embedding) behind DenseOut, and its transformer's
// token vectors behind PerTokenOut.
#include <memory>

#include "embed/models/embedder_model.h"
#include "embed/models/registry.h"

namespace dlrt::embed {
namespace {

class DenseModel final : public EmbedderModelBase, public DenseOut, public PerTokenOut {
 public:
  using EmbedderModelBase::EmbedderModelBase;
  std::string pooling() const override { return pooling_name(e_->pooling()); }
  Result<EmbedResult> embed_encoded(const std::vector<Encoding>& batch, const dlrt::RunOptions& bounds) const override {
    return e_->embed_encoded(batch, /*normalize=*/false, bounds);  // the caller normalises per request
  }
  size_t token_dimension() const override { return e_->hidden_size(); }
  Result<Encoding> tokenize_tokens(std::string_view text, bool, bool* truncated) const override {
    return tokenize(text, truncated);
  }
  Result<TokenEmbedResult> embed_tokens(const std::vector<Encoding>& batch, bool,
                                        const dlrt::RunOptions& bounds) const override {
    return e_->embed_tokens(batch, bounds);
  }
};

bool any_folder(const std::string&) { return true; }

}  // namespace

std::shared_ptr<const EmbedModel> dense_model(std::shared_ptr<const Embedder> embedder) {
  return std::make_shared<DenseModel>(std::move(embedder));
}

// The last row: any folder the other kinds' tests did not take.
KindRow dense_row() {
  return {ModelKind::kDense,
          "dense",
          "a dense embedding model",
          {Capability::kDense, Capability::kPerToken, Capability::kTokenize},
          "it serves /embed, /v1/embeddings, /similarity and /embed_all (dlrt embed)",
          any_folder,
          open_embedder};
}

}  // namespace dlrt::embed
