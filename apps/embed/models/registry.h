// The registry of model kinds: one row per kind (registry.cpp) holding its
// names, its capabilities, how its folder is recognised and how it opens.
// `dlrt serve` and `dlrt rerank` open folders here (open_model); `dlrt embed`
// and the Python Embedder ask it what a folder can do (kind.h's folder_has,
// has_capability, kind_refusal) and load the Embedder themselves, as the C API
// does. Nothing outside models/ tells kinds apart by their files.
//
// A new kind: its model in one new file (model.h's EmbedModel and the
// capability interfaces it serves, and its opener), a value in kind.h's
// ModelKind, and one row in registry.cpp's table.
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

using OpenFn = Result<std::shared_ptr<const EmbedModel>> (*)(const std::string& path, const EmbedderOptions& options);

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

// Runs one short input through the model's capability so that the first
// request does not pay for first-run costs.
Status warm_up(const EmbedModel& model);

// Each kind's model over an object already loaded (tests, and the openers):
// the dense or sparse model of an Embedder (by its kind), a Classifier's, a
// MultiVectorEmbedder's.
std::shared_ptr<const EmbedModel> embedder_model(std::shared_ptr<const Embedder> embedder);
std::shared_ptr<const EmbedModel> dense_model(std::shared_ptr<const Embedder> embedder);   // dense_model.cpp
std::shared_ptr<const EmbedModel> sparse_model(std::shared_ptr<const Embedder> embedder);  // sparse_model.cpp
// classifier_model.cpp, multi_vector_model.cpp
std::shared_ptr<const EmbedModel> classifier_model(std::shared_ptr<const Classifier> classifier);
std::shared_ptr<const EmbedModel> multi_vector_model(std::shared_ptr<const MultiVectorEmbedder> embedder);
// The kinds' openers (the table's `open`).
Result<std::shared_ptr<const EmbedModel>> open_embedder(const std::string& path, const EmbedderOptions& options);
Result<std::shared_ptr<const EmbedModel>> open_classifier(const std::string& path, const EmbedderOptions& options);
Result<std::shared_ptr<const EmbedModel>> open_multi_vector(const std::string& path, const EmbedderOptions& options);
Result<std::shared_ptr<const EmbedModel>> open_clip(const std::string& path, const EmbedderOptions& options);  // clip_model.cpp

}  // namespace dlrt::embed
