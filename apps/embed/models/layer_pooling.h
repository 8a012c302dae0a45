// sentence-transformers' WeightedLayerPooling module (a folder such as
// 1_WeightedLayerPooling between the Transformer and the Pooling): each
// token's vector is the average of the Transformer's per-layer hidden states
// layer_start .. num_hidden_layers (hidden state 0 is the embeddings' output),
// weighted by "layer_weights" [num_hidden_layers + 1 - layer_start] of the
// folder's model.safetensors: sum_l w_l h_l / sum_l w_l. Its config.json
// gives layer_start and num_hidden_layers (sentence-transformers' defaults 4
// and 12 when absent).
//
// sentence-transformers feeds it only when the Transformer's config.json sets
// output_hidden_states; without that, 5.7 and 6.x pass the last hidden state
// on unchanged (5.3 fails on such a folder), and dlrt does as 5.7 and 6.x.
//
// The ONNX graph gives the hidden states as outputs named
// "hidden_states.<i>", i = 0 .. num_hidden_layers, each [batch, sequence,
// hidden]: the names optimum gives per-layer outputs (its export with a
// custom ONNX config listing them; torch.onnx.export with these
// output_names). docs/embed-kinds.md has the recipe.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "dlrt/session.h"
#include "dlrt/status.h"

namespace dlrt::embed {

class WeightedLayerPooling {
 public:
  // Reads `dir`/config.json and `dir`/model.safetensors. Errors: kNotFound
  // (no weights; pytorch_model.bin alone is kUnsupported), kInvalidModel
  // (broken files, layer_start outside 0 .. num_hidden_layers, a
  // layer_weights tensor of another length, weights summing to 0).
  static Result<WeightedLayerPooling> load(const std::filesystem::path& dir);

  // Finds the per-layer outputs among the graph's `outputs` (`model` names
  // the graph in errors): kUnsupported when it has none (the message says how
  // to export them), kInvalidModel when they are not hidden_states.0 ..
  // hidden_states.num_hidden_layers or not 3-D of width `hidden` (when known).
  Status bind(const std::vector<TensorInfo>& outputs, size_t hidden, const std::string& model);

  // The weighted average of one run's bound outputs, each [batch, length,
  // hidden] float (float32, float16 or bfloat16), into `out` (float32, same shape).
  Status apply(const std::vector<Tensor>& outputs, size_t batch, size_t length, size_t hidden,
               std::vector<float>& out) const;

  size_t layer_start() const { return layer_start_; }
  size_t num_hidden_layers() const { return num_hidden_layers_; }
  const std::vector<float>& weights() const { return weights_; }

 private:
  std::filesystem::path dir_;
  size_t layer_start_ = 4, num_hidden_layers_ = 12;
  std::vector<float> weights_;         // [num_hidden_layers + 1 - layer_start]
  std::vector<size_t> output_index_;   // the graph output of hidden state i, i = 0 .. num_hidden_layers
};

}  // namespace dlrt::embed
