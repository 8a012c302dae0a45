// The activation sentence-transformers' CrossEncoder applies to a sequence
// classifier's (or LLM reranker's) logits in predict() and rank(), read from
// the folder where the library version that saved it names it:
// config_sentence_transformers.json's "activation_fn" (after 5.3, 6.x),
// else config.json's "sentence_transformers": {"activation_fn"} (4.0 to
// 5.3), else config.json's "sbert_ce_default_activation_function" (before
// 4.0), else the library's default: Sigmoid for one label, Identity for more.
// The value is a torch class path ("torch.nn.modules.linear.Identity"):
// torch.nn's element-wise activations (dense.h) and Softmax (over a row's
// labels, as torch.nn.Softmax() does on [batch, labels]).
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>

#include "dlrt/status.h"
#include "embed/models/dense.h"

namespace dlrt::embed {

struct ScoreActivation {
  DenseLayer::Activation elementwise = DenseLayer::Activation::kSigmoid;
  bool softmax = false;       // a row's softmax instead of `elementwise`
  std::string name = "Sigmoid";  // the torch class name
  std::string source;         // the file and key that name it; "" for the library's default

  // Sigmoid for one label, Identity otherwise.
  static ScoreActivation library_default(size_t labels);
  static ScoreActivation identity();
  bool is_identity() const { return !softmax && elementwise == DenseLayer::Activation::kIdentity; }
  // In place on one row of `labels` logits.
  void apply(float* row, size_t labels) const;
};

// The activation the folder `dir` names (see above) for a model of `labels`
// labels. kUnsupported names a class dlrt does not implement, or one outside
// torch (which sentence-transformers loads only with trust_remote_code);
// kInvalidModel for a broken JSON file.
Result<ScoreActivation> read_score_activation(const std::filesystem::path& dir, size_t labels);

}  // namespace dlrt::embed
