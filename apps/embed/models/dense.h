// sentence-transformers' Dense module (a folder such as 2_Dense listed in
// modules.json): y = activation(W x + b) on the pooled vector, with W and b
// from the folder's model.safetensors ("linear.weight" [out, in],
// "linear.bias" [out]) and the shape and activation from its config.json;
// with "use_residual": y + x (in = out) or y + R x ("residual.weight" [out, in]).
// The activation is a torch.nn class constructed with its defaults, as
// sentence-transformers loads it: Identity, Tanh, ReLU, ReLU6, LeakyReLU,
// Sigmoid, Hardsigmoid, LogSigmoid, GELU, SiLU, Mish, ELU, CELU, SELU,
// Softplus, Softsign, Hardtanh, Hardswish, Tanhshrink.
// And its LayerNorm module: torch's LayerNorm (eps 1e-5) over the sentence
// vector with "norm.weight" and "norm.bias" [dimension] of model.safetensors.
// And its Normalize module (normalize_l2).
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "dlrt/status.h"

namespace dlrt::embed {

class DenseLayer {
 public:
  enum class Activation {
    kIdentity, kTanh, kReLU, kReLU6, kLeakyReLU, kSigmoid, kHardsigmoid, kLogSigmoid, kGelu, kSiLU,
    kMish, kElu, kCelu, kSelu, kSoftplus, kSoftsign, kHardtanh, kHardswish, kTanhshrink,
  };

  // Reads `dir`/config.json and `dir`/model.safetensors. Errors:
  // kNotFound (no weights: pytorch_model.bin alone is kUnsupported),
  // kInvalidModel (broken files, shapes that disagree), kUnsupported (an
  // activation other than Identity, Tanh, ReLU, Sigmoid, GELU).
  // `input`: the features key the caller applies it to (a multi-vector encoder's: token_embeddings).
  static Result<DenseLayer> load(const std::filesystem::path& dir, const std::string& input = "sentence_embedding");
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
  bool residual_ = false;
  std::vector<float> residual_weight_;  // [out, in] when residual_ and in != out
};

class LayerNormLayer {
 public:
  // Reads `dir`/config.json ("dimension") and `dir`/model.safetensors.
  static Result<LayerNormLayer> load(const std::filesystem::path& dir);
  size_t dimension() const { return weight_.size(); }
  std::vector<float> apply(const std::vector<float>& x) const;

 private:
  std::vector<float> weight_, bias_;
};

// A module after pooling (modules.json's order): a Dense or a LayerNorm.
struct VectorModule {
  std::vector<DenseLayer> dense;      // one, or none for a LayerNorm
  std::vector<LayerNormLayer> norm;   // one, or none for a Dense
  size_t in_features() const { return dense.empty() ? norm[0].dimension() : dense[0].in_features(); }
  size_t out_features() const { return dense.empty() ? norm[0].dimension() : dense[0].out_features(); }
  std::vector<float> apply(const std::vector<float>& x) const { return dense.empty() ? norm[0].apply(x) : dense[0].apply(x); }
};

// The tensors of a .safetensors file as float32 (F32, F16 and BF16 are
// converted): name -> (shape, values). kInvalidModel for a broken file.
struct SafeTensor {
  std::vector<int64_t> shape;
  std::vector<float> values;
};
Result<std::vector<std::pair<std::string, SafeTensor>>> read_safetensors(const std::string& bytes,
                                                                         const std::string& what);

// A sentence-transformers module folder's weights, dir/model.safetensors; `module` names it in
// messages ("Dense"). A folder with only pytorch_model.bin (a pickle, which dlrt does not read)
// is refused saying so, one with neither is NotFound.
Result<std::filesystem::path> module_safetensors_path(const std::filesystem::path& dir, const std::string& module);

// The torch.nn activation class a dotted path names, as sentence-transformers
// saves one ("torch.nn.modules.activation.Tanh"; a bare class name too):
// nullopt for a class dlrt lacks or a path outside torch.
std::optional<DenseLayer::Activation> torch_activation(const std::string& path);
// The class names torch_activation() knows, comma-separated (for messages).
std::string torch_activation_names();
// The activation of one value, as torch computes it (in double).
double apply_activation(DenseLayer::Activation a, double s);

// sentence-transformers' Normalize module: `v` divided by its L2 norm
// (torch.nn.functional.normalize, eps 1e-12), the sum of squares in double.
void normalize_l2(std::vector<float>& v);

}  // namespace dlrt::embed
