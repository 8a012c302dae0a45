// The sparse kind (kind.h): a SPLADE or sparse static-embedding Embedder
// behind SparseOut, its vectors kept sparse (their non-zero values) from the
// run to the answer.
#include <memory>

#include "embed/models/embedder_model.h"
#include "embed/models/modules.h"
#include "embed/models/registry.h"
#include "embed/models/router.h"
#include "embed/models/token_inputs.h"

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

// modules.json lists SpladePooling or SparseStaticEmbedding (as Embedder::create's read_pooling finds them),
// or a Router's first route does.
bool sparse_folder(const std::string& model) {
  auto modules = read_modules(model_folder_of(model));
  if (!modules.ok()) return false;
  if (!modules->empty() && (*modules)[0].type == ModuleType::kRouter) {
    auto router = read_router(model_folder_of(model));
    if (!router.ok() || !*router) return false;
    modules = (*router)->routes[0].modules;
  }
  for (const Module& m : *modules)
    if (m.type == ModuleType::kSpladePooling || m.type == ModuleType::kSparseStaticEmbedding) return true;
  return false;
}

}  // namespace

std::shared_ptr<const EmbedModel> sparse_model(std::shared_ptr<const Embedder> embedder) {
  return std::make_shared<SparseModel>(std::move(embedder));
}

KindRow sparse_row() {
  return {ModelKind::kSparse,
          "sparse",
          "an embedding model, a sparse (SPLADE) encoder",
          {Capability::kSparse, Capability::kTokenize},
          "use POST /embed_sparse, or /v1/embeddings with \"encoding_format\": \"sparse\" (dlrt embed --sparse)",
          sparse_folder,
          open_embedder};
}

}  // namespace dlrt::embed
