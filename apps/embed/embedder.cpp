// Temporary stub: the implementation lands next.
#include "embed/embedder.h"

namespace dlrt::embed {

const char* pooling_name(Pooling pooling) {
  switch (pooling) {
    case Pooling::kMean: return "mean";
    case Pooling::kCls: return "cls";
    case Pooling::kMax: return "max";
  }
  return "mean";
}

struct Embedder::Impl {};
Embedder::Embedder(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Embedder::~Embedder() = default;
dlrt::Result<std::unique_ptr<Embedder>> Embedder::create(const std::string&, const EmbedderOptions&) {
  return Status(StatusCode::kUnsupported, "dlrt embed: not implemented yet");
}
dlrt::Result<Encoding> Embedder::tokenize(std::string_view) const { return Internal("stub"); }
dlrt::Result<EmbedResult> Embedder::embed_encoded(const std::vector<Encoding>&) const { return Internal("stub"); }
dlrt::Result<EmbedResult> Embedder::embed(const std::vector<std::string>&) const { return Internal("stub"); }
size_t Embedder::dimension() const { return 0; }
std::string Embedder::model_name() const { return ""; }
size_t Embedder::max_length() const { return 0; }
Pooling Embedder::pooling() const { return Pooling::kMean; }
bool Embedder::normalize() const { return true; }
dlrt::RunReport Embedder::placement() const { return {}; }


}  // namespace dlrt::embed
