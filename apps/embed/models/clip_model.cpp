// The clip kind (kind.h): a ClipEmbedder behind DenseOut (texts through the
// text tower) and ImageOut (images through the vision tower), one space.
#include <memory>

#include "embed/models/clip.h"
#include "embed/models/embedder_model.h"
#include "embed/models/registry.h"
#include "embed/models/token_inputs.h"

namespace dlrt::embed {
namespace {

class ClipModel final : public TokenizerModel, public DenseOut, public ImageOut {
 public:
  explicit ClipModel(std::shared_ptr<const ClipEmbedder> m) : m_(std::move(m)) {}
  ModelKind kind() const override { return ModelKind::kClip; }
  Result<Encoding> tokenize(std::string_view text, bool* truncated) const override {
    return m_->tokenize(text, truncated);
  }
  Result<Encoding> tokenize_counted(std::string_view text, bool* truncated, size_t* tokens) const override {
    return m_->tokenize(text, truncated, tokens);
  }
  Result<EmbedResult> embed_encoded(const std::vector<Encoding>& batch, const dlrt::RunOptions& bounds) const override {
    return m_->embed_texts(batch, bounds);
  }
  Result<EmbedResult> embed_images(std::span<const image::Image> images,
                                   const dlrt::RunOptions& bounds) const override {
    return m_->embed_images(images, bounds);
  }
  size_t dimension() const override { return m_->dimension(); }
  std::string model_name() const override { return m_->model_name(); }
  size_t max_length() const override { return m_->max_length(); }
  dlrt::RunReport placement() const override { return m_->placement(); }
  // CLIP compares its text and image vectors by cosine (its logits are of unit vectors).
  bool normalizes() const override { return true; }
  std::string pooling() const override { return "projection"; }

 private:
  const Tokenizer& tokenizer() const override { return m_->tokenizer(); }
  std::shared_ptr<const ClipEmbedder> m_;
};

bool clip_folder(const std::string& model) { return is_clip_folder(model_folder_of(model)); }

}  // namespace

Result<std::shared_ptr<const EmbedModel>> open_clip(const std::string& path, const EmbedderOptions& options,
                                                     ModelKind /*kind*/) {
  DLRT_ASSIGN_OR_RETURN(std::unique_ptr<ClipEmbedder> m, ClipEmbedder::create(path, options));
  return std::shared_ptr<const EmbedModel>(std::make_shared<ClipModel>(std::shared_ptr<const ClipEmbedder>(std::move(m))));
}

KindRow clip_row() {
  return {ModelKind::kClip,
          "clip",
          "a CLIP model, texts and images in one space",
          {Capability::kDense, Capability::kImage, Capability::kTokenize},
          "it serves /embed and /v1/embeddings for texts and images (dlrt embed, dlrt embed --image)",
          clip_folder,
          open_clip};
}

}  // namespace dlrt::embed
