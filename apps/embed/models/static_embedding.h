// sentence-transformers' input modules without a transformer: the folder's
// weights are the model, read from the module's model.safetensors (mapped,
// not copied, when they are float32) and its tokenizer, which runs without
// special tokens (add_special_tokens=False, as both modules tokenize).
//
//   StaticEmbedding        "embedding.weight" [vocabulary, dimension]: a text's
//                          vector is the mean of its tokens' rows (torch's
//                          EmbeddingBag, mode "mean"; no tokens: zeros). No
//                          truncation beyond tokenizer.json's own.
//   SparseStaticEmbedding  "weight" [vocabulary]: a text's sparse vector holds
//                          weight[t] for each distinct token t of the text
//                          (its `frozen` key changes training only). Texts are
//                          cut at tokenizer_config.json's model_max_length.
//
// Thread-safety: immutable after load; embed() may run on many threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <vector>

#include "dlrt/status.h"

namespace dlrt::embed {

class Tokenizer;

// The tokens per text of a static module whose tokenizer sets no limit
// (an Embedder's max_length(): what a request may send).
inline constexpr size_t kStaticMaxTokens = size_t{1} << 20;

class StaticEmbedding {
 public:
  enum class Mode { kMeanOfRows, kTokenWeights };

  // The module in `dir` (its model.safetensors, tokenizer.json and, for
  // kTokenWeights, tokenizer_config.json). Errors: kNotFound (no weights or
  // no tokenizer), kInvalidModel (a missing tensor, a shape that is not
  // [vocabulary, dimension] / [vocabulary], or a vocabulary smaller than the
  // tokenizer's), kUnsupported (weights only in pytorch_model.bin).
  struct Loaded;
  static Result<Loaded> load(const std::filesystem::path& dir, Mode mode);
  ~StaticEmbedding();
  StaticEmbedding(const StaticEmbedding&) = delete;
  StaticEmbedding& operator=(const StaticEmbedding&) = delete;

  Mode mode() const { return mode_; }
  // The vector length: the table's dimension, or the vocabulary size (kTokenWeights).
  size_t dimension() const { return mode_ == Mode::kMeanOfRows ? dim_ : rows_; }
  // One text's vector from its ids (`out` has dimension() values); an id
  // outside the table is kInvalidArgument.
  Status embed(const std::vector<int64_t>& ids, float* out) const;

 private:
  StaticEmbedding() = default;
  Mode mode_ = Mode::kMeanOfRows;
  size_t rows_ = 0, dim_ = 0;
  const float* table_ = nullptr;  // [rows, dim] (or [rows]): into the mapping or `copy_`
  std::vector<float> copy_;       // the table when it is not float32 or not aligned in the file
  void* map_ = nullptr;
  size_t map_bytes_ = 0;
};

// The module and the tokenizer its weights go with (no special tokens added).
struct StaticEmbedding::Loaded {
  std::shared_ptr<const StaticEmbedding> module;
  std::unique_ptr<Tokenizer> tokenizer;
};

}  // namespace dlrt::embed
