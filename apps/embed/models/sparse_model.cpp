// The sparse kind (kind.h): a SPLADE or sparse static-embedding Embedder
// behind SparseOut, its vectors kept sparse (their non-zero values) from the
// run to the answer.
#include <memory>

#include "embed/models/embedder_model.h"
#include "embed/models/registry.h"

namespace dlrt::embed {
namespace {

class SparseModel final : public EmbedderModelBase, public SparseOut {
 public:
  using EmbedderModelBase::EmbedderModelBase;
  std::string pooling() const override { return "splade"; }
  Result<SparseResult> encode_sparse(const std::vector<Encoding>& batch,
                                     const dlrt::RunOptions& bounds) const override {
    return e_->encode_sparse_encoded(batch, /*top_k=*/0, bounds);
  }
  const SpladePooling* splade_pooling() const override { return e_->splade_pooling(); }
};

}  // namespace

std::shared_ptr<const EmbedModel> sparse_model(std::shared_ptr<const Embedder> embedder) {
  return std::make_shared<SparseModel>(std::move(embedder));
}

}  // namespace dlrt::embed
