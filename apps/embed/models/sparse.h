// Sparse (SPLADE) embeddings: sentence-transformers' SpladePooling module
// over a masked-language model's logits, and sparse vectors.
//
// A SparseEncoder folder's modules.json lists an MLMTransformer (the ONNX
// model: MLM logits [batch, sequence, vocabulary], optimum's fill-mask export)
// and a SpladePooling module whose config.json (1_SpladePooling/config.json)
// holds
//   pooling_strategy          "max" (default) or "sum" over the text's tokens
//   activation_function       "relu" (default): log(1 + relu(logit));
//                             "log1p_relu": log(1 + log(1 + relu(logit)))
//   word_embedding_dimension  the vocabulary size (optional; checked against the model)
// Padding tokens count as logit 0 (contributing nothing). The vector has one
// value per vocabulary token, all >= 0 and mostly 0.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "dlrt/status.h"

namespace dlrt::embed {

class SpladePooling {
 public:
  enum class Strategy { kMax, kSum };
  enum class Activation { kRelu, kLog1pRelu };

  // Reads DIR/config.json (absent: the defaults). kInvalidModel for a field
  // of the wrong type, kUnsupported for a strategy or activation other than
  // the ones above.
  static Result<SpladePooling> load(const std::filesystem::path& dir);
  static SpladePooling with(Strategy strategy, Activation activation);

  Strategy strategy() const { return strategy_; }
  Activation activation() const { return activation_; }
  // "max" / "sum", "relu" / "log1p_relu".
  const char* strategy_name() const;
  const char* activation_name() const;
  // word_embedding_dimension (0: not given).
  size_t dimension() const { return dimension_; }

  // One text's vector: `logits` [length, vocab] row-major, `mask` [length]
  // (0: padding), `out` [vocab].
  void pool(const float* logits, const int64_t* mask, size_t length, size_t vocab, float* out) const;

 private:
  Strategy strategy_ = Strategy::kMax;
  Activation activation_ = Activation::kRelu;
  size_t dimension_ = 0;
};

// A sparse vector: the indices of its non-zero values, ascending, and the values.
struct SparseVector {
  std::vector<int64_t> indices;
  std::vector<float> values;
};

// The non-zero entries of `dense`. With top_k > 0, only the top_k largest
// by absolute value (sentence-transformers' max_active_dims; ties go to the
// lower index); indices stay ascending.
SparseVector sparsify(const std::vector<float>& dense, size_t top_k = 0);

// `v` cut to its top_k largest values by absolute value as sparsify() cuts
// (ties go to the lower index; top_k 0 keeps all).
SparseVector keep_top_k(SparseVector v, size_t top_k);

// `v` as a dense vector of `dimension` values (indices past it are dropped).
std::vector<float> densify(const SparseVector& v, size_t dimension);

}  // namespace dlrt::embed
