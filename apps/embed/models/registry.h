// The registry of model kinds: one row per kind (in its *_model.cpp, listed in registry.cpp) holding its
// names, its capabilities, how its folder is recognised and how it opens.
// Every entry point opens folders here (open_model): `dlrt serve`, `dlrt
// embed`, `dlrt rerank`, the Python Embedder and CrossEncoder and the C API;
// one that needs a capability the folder's kind lacks gets kind_refusal's one
// message. Nothing outside models/ tells kinds apart by their files.
//
// A new kind: one new file holding its folder test, its model (model.h's
// EmbedModel and the capability interfaces it serves) or an existing kind's
// opener, and `KindRow NAME_row()` giving its row with its own ModelKind value
// (kind.h); then its one line, X(NAME), in registry.cpp's DLRT_EMBED_KINDS,
// where the detection order puts it. A function, not a static object that
// registers itself: a static library's linker drops an object nothing calls.
//
// Thread-safety: the table is immutable; open_model may run on many threads.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "dlrt/status.h"
#include "embed/models/embedder.h"
#include "embed/models/kind.h"
#include "embed/models/model.h"

namespace dlrt::embed {

class Classifier;
class MultiVectorEmbedder;

// Opens the folder `path` as the row's `kind` (a kind's model answers kind() with it).
using OpenFn = Result<std::shared_ptr<const EmbedModel>> (*)(const std::string& path, const EmbedderOptions& options,
                                                            ModelKind kind);

struct KindRow {
  ModelKind kind;
  const char* name;    // model_kind_name
  const char* phrase;  // model_kind_phrase
  std::vector<Capability> capabilities;
  const char* serves;  // what a refusal (kind_refusal) suggests instead
  // Whether the folder `model` (a folder or its model file) is of this kind;
  // rows are asked in table order, the first that answers wins.
  bool (*detect)(const std::string& model);
  OpenFn open;
};

// Every kind, in the order detect_kind asks them.
const std::vector<KindRow>& kind_rows();
const KindRow& kind_row(ModelKind kind);

// The folder `path` (or its model file) opened as its kind (detect_kind).
Result<std::shared_ptr<const EmbedModel>> open_model(const std::string& path, const EmbedderOptions& options);
// open_model for an entry point that needs one of `any_of` (`what` names it:
// "dlrt embed", "dlrt_embedder_create"): a folder whose kind has none is
// refused before it loads, kUnsupported with kind_refusal's message (no
// folder at `path`: kNotFound).
Result<std::shared_ptr<const EmbedModel>> open_model(const std::string& path, const EmbedderOptions& options,
                                                     const std::vector<Capability>& any_of, std::string_view what);

// Runs one short input through the model's capability so that the first
// request does not pay for first-run costs.
Status warm_up(const EmbedModel& model);

// Each kind's model over an object already loaded (tests, and the openers):
// the dense or sparse model of an Embedder (by its kind), a Classifier's, a
// MultiVectorEmbedder's.
std::shared_ptr<const EmbedModel> embedder_model(std::shared_ptr<const Embedder> embedder);
std::shared_ptr<const EmbedModel> dense_model(std::shared_ptr<const Embedder> embedder);   // dense_model.cpp
std::shared_ptr<const EmbedModel> sparse_model(std::shared_ptr<const Embedder> embedder);  // sparse_model.cpp
// classifier_model.cpp (of kind llm_reranker or cross_encoder, or `kind`), multi_vector_model.cpp
std::shared_ptr<const EmbedModel> classifier_model(std::shared_ptr<const Classifier> classifier);
std::shared_ptr<const EmbedModel> classifier_model(std::shared_ptr<const Classifier> classifier, ModelKind kind);
std::shared_ptr<const EmbedModel> multi_vector_model(std::shared_ptr<const MultiVectorEmbedder> embedder);
// The kinds' openers (the table's `open`).
// open_embedder's model is dense or sparse as the Embedder finds the folder.
Result<std::shared_ptr<const EmbedModel>> open_embedder(const std::string& path, const EmbedderOptions& options,
                                                        ModelKind kind);
Result<std::shared_ptr<const EmbedModel>> open_classifier(const std::string& path, const EmbedderOptions& options,
                                                          ModelKind kind);
Result<std::shared_ptr<const EmbedModel>> open_multi_vector(const std::string& path, const EmbedderOptions& options,
                                                            ModelKind kind);
Result<std::shared_ptr<const EmbedModel>> open_clip(const std::string& path, const EmbedderOptions& options,
                                                     ModelKind kind);  // clip_model.cpp

}  // namespace dlrt::embed
