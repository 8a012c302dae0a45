// sentence-transformers' Dense module (a folder such as 2_Dense listed in
// modules.json): y = activation(W x + b) on the pooled vector, with W and b
// from the folder's model.safetensors ("linear.weight" [out, in],
// "linear.bias" [out]) and the shape and activation from its config.json.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "dlrt/status.h"

namespace dlrt::embed {

class DenseLayer {
 public:
  enum class Activation { kIdentity, kTanh, kReLU, kSigmoid, kGelu };

  // Reads `dir`/config.json and `dir`/model.safetensors. Errors:
  // kNotFound (no weights: pytorch_model.bin alone is kUnsupported),
  // kInvalidModel (broken files, shapes that disagree), kUnsupported (an
  // activation other than Identity, Tanh, ReLU, Sigmoid, GELU).
  static Result<DenseLayer> load(const std::filesystem::path& dir);
  // A layer from values (tests).
  static Result<DenseLayer> from_values(size_t in, size_t out, std::vector<float> weight, std::vector<float> bias,
                                        Activation activation);

  size_t in_features() const { return in_; }
  size_t out_features() const { return out_; }
  Activation activation() const { return activation_; }
  // x has in_features() values; the result out_features().
  std::vector<float> apply(const std::vector<float>& x) const;

 private:
  size_t in_ = 0, out_ = 0;
  std::vector<float> weight_;  // [out, in], row-major
  std::vector<float> bias_;    // [out] or empty
  Activation activation_ = Activation::kIdentity;
};

// The tensors of a .safetensors file as float32 (F32, F16 and BF16 are
// converted): name -> (shape, values). kInvalidModel for a broken file.
struct SafeTensor {
  std::vector<int64_t> shape;
  std::vector<float> values;
};
Result<std::vector<std::pair<std::string, SafeTensor>>> read_safetensors(const std::string& bytes,
                                                                         const std::string& what);

}  // namespace dlrt::embed
