// dlrt::embed::Classifier: a Hugging Face sequence-classification export
// (cross-encoder rerankers, text classifiers) turned into text -> scores.
//
// The folder holds model.onnx (or onnx/model.onnx) whose output is the
// logits [batch, labels] (named "logits", else the one 2-D float output),
// the tokenizer files of an Embedder folder, and config.json whose
// "architectures" name a *ForSequenceClassification class (that is how
// is_classifier_folder() tells it from an embedding model) and whose
// "id2label" names the labels ("LABEL_i" when absent). An LLM reranker folder
// (a causal LM, llm_reranker.h) is served too: one label, "yes", whose logit
// is logit("yes") - logit("no") at the end of the reranker's prompt.
//
// Thread-safety: create() builds an immutable object; score() may be called
// from many threads at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "dlrt/session.h"
#include "dlrt/status.h"
#include "embed/models/embedder.h"
#include "embed/models/score_activation.h"

namespace dlrt::embed {

class Tokenizer;

// True when DIR/config.json names a *ForSequenceClassification architecture,
// or DIR is an LLM reranker folder (is_llm_reranker_folder).
bool is_classifier_folder(const std::string& dir);

// One input of a classifier: a text, or a pair (query and passage).
// `instruction`: an LLM reranker's task instruction for this pair ("": the
// folder's default); other models refuse one.
struct ClassifierInput {
  std::string first;
  std::string second;
  bool pair = false;
  std::string instruction;
};

struct ClassifierResult {
  std::vector<std::vector<float>> logits;  // one row of labels() values per input
  size_t total_tokens = 0;
  dlrt::RunReport report;
};

class Classifier {
 public:
  // Errors as Embedder::create's, and kInvalidModel for a model without a
  // 2-D logits output.
  static dlrt::Result<std::unique_ptr<Classifier>> create(const std::string& model_dir, const EmbedderOptions& options);
  ~Classifier();
  Classifier(const Classifier&) = delete;
  Classifier& operator=(const Classifier&) = delete;

  // Tokenizes one input (pairs by the tokenizer's pair template), truncated
  // to max_length() ids; *truncated says whether it was longer.
  dlrt::Result<Encoding> tokenize(const ClassifierInput& input, bool* truncated = nullptr) const;
  // tokenize() of the pairs (query, documents[i]), the query tokenized once
  // (an LLM reranker's prompt is tokenized whole per pair, its query checked
  // once: kOutOfRange when it alone leaves no room for a document).
  // (*truncated)[i] says whether pair i was cut.
  dlrt::Result<std::vector<Encoding>> tokenize_pairs(std::string_view query, const std::vector<std::string>& documents,
                                                     const std::string& instruction,
                                                     std::vector<uint8_t>* truncated) const;
  // Runs the model on tokenized inputs (padded to the longest), within
  // `bounds` (kCancelled when they stop the run).
  dlrt::Result<ClassifierResult> score_encoded(const std::vector<Encoding>& batch,
                                               const dlrt::RunOptions& bounds = {}) const;
  // tokenize + score_encoded.
  dlrt::Result<ClassifierResult> score(const std::vector<ClassifierInput>& inputs) const;

  const std::vector<std::string>& labels() const;
  // What sentence-transformers' CrossEncoder applies to the logits (score_activation.h).
  const ScoreActivation& score_activation() const;
  // An LLM reranker (pairs only, instructions) rather than a sequence classifier.
  bool is_llm_reranker() const;
  // An LLM reranker with a prompt template, which takes an instruction.
  bool takes_instruction() const;
  std::string model_name() const;
  size_t max_length() const;
  dlrt::RunReport placement() const;
  const dlrt::PrecisionChoice& precision_choice() const;  // what cpu_precision "auto" chose
  size_t token_row_bytes() const;  // the session's widest per-token output row (token_inputs.h)
  const Tokenizer& tokenizer() const;

 private:
  struct Impl;
  explicit Classifier(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace dlrt::embed
