// WeightedLayerPooling (layer_pooling.h).
#include "embed/models/layer_pooling.h"

#include <cmath>
#include <string>

#include <nlohmann/json.hpp>

#include "dlrt/dtype.h"
#include "embed/models/dense.h"
#include "embed/tokenizer/file_util.h"
#include "embed/tokenizer/json_util.h"

namespace dlrt::embed {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

constexpr const char* kLayerOutputPrefix = "hidden_states.";

// The layer index of an output named hidden_states.<i> (decimal digits only), or -1.
int64_t layer_of(const std::string& name) {
  const size_t n = std::char_traits<char>::length(kLayerOutputPrefix);
  if (name.size() <= n || name.size() > n + 6 || name.compare(0, n, kLayerOutputPrefix) != 0) return -1;
  int64_t i = 0;
  for (size_t k = n; k < name.size(); ++k) {
    if (name[k] < '0' || name[k] > '9') return -1;
    i = i * 10 + (name[k] - '0');
  }
  return i;
}

// A config key that must be a non-negative integer when present (`def` when absent).
Result<size_t> count_key(const json& config, const char* key, size_t def, const fs::path& path) {
  const json* v = jsonu::member(config, key);
  if (!v || v->is_null()) return def;
  if (!v->is_number_integer() || v->get<int64_t>() < 0 || v->get<int64_t>() > 100000)
    return InvalidModel(path.string() + ": \"" + key + "\" must be a non-negative integer");
  return static_cast<size_t>(v->get<int64_t>());
}

}  // namespace

Result<WeightedLayerPooling> WeightedLayerPooling::load(const fs::path& dir) {
  WeightedLayerPooling p;
  p.dir_ = dir;
  const fs::path config_path = dir / "config.json";
  auto text = read_folder_file(config_path.string());
  if (!text.ok()) return text.status().with_context("WeightedLayerPooling module");
  DLRT_RETURN_IF_ERROR(jsonu::check_json_depth(*text, config_path.string()));
  const json config = json::parse(*text, nullptr, false);
  if (config.is_discarded() || !config.is_object()) return InvalidModel(config_path.string() + ": not a JSON object");
  DLRT_ASSIGN_OR_RETURN(p.num_hidden_layers_, count_key(config, "num_hidden_layers", 12, config_path));
  DLRT_ASSIGN_OR_RETURN(p.layer_start_, count_key(config, "layer_start", 4, config_path));
  if (p.layer_start_ > p.num_hidden_layers_)
    return InvalidModel(config_path.string() + ": layer_start " + std::to_string(p.layer_start_) +
                        " is past the last layer (num_hidden_layers " + std::to_string(p.num_hidden_layers_) + ")");

  DLRT_ASSIGN_OR_RETURN(const fs::path weights_path, module_safetensors_path(dir, "WeightedLayerPooling"));
  auto bytes = read_folder_file(weights_path.string());
  if (!bytes.ok()) return bytes.status().with_context("WeightedLayerPooling module");
  DLRT_ASSIGN_OR_RETURN(auto tensors, read_safetensors(*bytes, weights_path.string()));
  const int64_t count = static_cast<int64_t>(p.num_hidden_layers_ + 1 - p.layer_start_);
  for (auto& [name, t] : tensors) {
    if (name != "layer_weights") continue;
    if (t.shape != std::vector<int64_t>{count})
      return InvalidModel(weights_path.string() + ": layer_weights is not [num_hidden_layers + 1 - layer_start] = [" +
                          std::to_string(count) + "]");
    p.weights_ = std::move(t.values);
  }
  if (p.weights_.empty()) return InvalidModel(weights_path.string() + ": no layer_weights tensor");
  double sum = 0;
  for (float w : p.weights_) sum += w;
  if (sum == 0 || !std::isfinite(sum))
    return InvalidModel(weights_path.string() + ": the layer_weights sum to " + std::to_string(sum) +
                        " (the average divides by it)");
  return p;
}

Status WeightedLayerPooling::bind(const std::vector<TensorInfo>& outputs, size_t hidden, const std::string& model) {
  const size_t layers = num_hidden_layers_ + 1;
  output_index_.assign(layers, outputs.size());
  size_t found = 0;
  for (size_t k = 0; k < outputs.size(); ++k) {
    const int64_t i = layer_of(outputs[k].name);
    if (i < 0) continue;
    ++found;
    const std::string what = model + ": output \"" + outputs[k].name + "\"";
    if (static_cast<size_t>(i) >= layers)
      return InvalidModel(what + " is past the " + std::to_string(layers) + " hidden states (embeddings + " +
                          std::to_string(num_hidden_layers_) + " layers) that " + (dir_ / "config.json").string() +
                          " (num_hidden_layers) asks for");
    const std::vector<int64_t>& s = outputs[k].shape;
    const bool width_ok = s.size() == 3 && (hidden == 0 || s[2] < 0 || s[2] == static_cast<int64_t>(hidden));
    const DType t = outputs[k].dtype;
    const bool float_ok = t == DType::kFloat32 || t == DType::kFloat16 || t == DType::kBFloat16;
    if (!outputs[k].is_tensor || !float_ok || (!s.empty() && !width_ok))
      return InvalidModel(what + " is not a float [batch, sequence, " + std::to_string(hidden) + "] tensor");
    if (output_index_[static_cast<size_t>(i)] != outputs.size()) return InvalidModel(what + " appears twice");
    output_index_[static_cast<size_t>(i)] = k;
  }
  if (found == 0)
    return Unsupported(
        model + " has no per-layer hidden state outputs, which the WeightedLayerPooling module " + dir_.string() +
        " averages (its Transformer's config.json sets output_hidden_states). Export them as outputs named "
        "hidden_states.0 .. hidden_states." + std::to_string(num_hidden_layers_) +
        " beside last_hidden_state: optimum's main_export with a custom ONNX config whose outputs add them, or "
        "torch.onnx.export of the model called with output_hidden_states=True and those output_names "
        "(docs/embed-kinds.md). sentence-transformers' own ONNX export (backend=\"onnx\") gives last_hidden_state "
        "only");
  for (size_t i = 0; i < layers; ++i)
    if (output_index_[i] == outputs.size())
      return InvalidModel(model + ": no output hidden_states." + std::to_string(i) + " (WeightedLayerPooling needs "
                          "hidden_states.0 .. hidden_states." + std::to_string(num_hidden_layers_) + ", as " +
                          (dir_ / "config.json").string() + " (num_hidden_layers) asks)");
  return Status::Ok();
}

Status WeightedLayerPooling::apply(const std::vector<Tensor>& outputs, size_t batch, size_t length, size_t hidden,
                                   std::vector<float>& out) const {
  const size_t n = batch * length * hidden;
  std::vector<double> acc(n, 0.0);
  double sum = 0;
  for (size_t l = layer_start_; l <= num_hidden_layers_; ++l) {
    if (output_index_.size() <= l || output_index_[l] >= outputs.size())
      return Internal("WeightedLayerPooling: the hidden state outputs are not bound");
    const Tensor& t = outputs[output_index_[l]];
    if (t.rank() != 3 || t.dim(0) != static_cast<int64_t>(batch) || t.dim(1) != static_cast<int64_t>(length) ||
        t.dim(2) != static_cast<int64_t>(hidden))
      return RuntimeError("the model's hidden_states." + std::to_string(l) + " has shape " + shape_to_string(t.shape()) +
                          ", expected [" + std::to_string(batch) + ", " + std::to_string(length) + ", " +
                          std::to_string(hidden) + "]");
    const double w = weights_[l - layer_start_];
    sum += w;
    if (t.dtype() == DType::kFloat32) {
      const float* x = t.data<float>();
      for (size_t i = 0; i < n; ++i) acc[i] += w * x[i];
    } else if (t.dtype() == DType::kFloat16) {
      const Float16* x = t.data<Float16>();
      for (size_t i = 0; i < n; ++i) acc[i] += w * static_cast<float>(x[i]);
    } else if (t.dtype() == DType::kBFloat16) {
      const BFloat16* x = t.data<BFloat16>();
      for (size_t i = 0; i < n; ++i) acc[i] += w * static_cast<float>(x[i]);
    } else {
      return RuntimeError(std::string("the model's hidden_states.") + std::to_string(l) + " is " +
                          dtype_name(t.dtype()) + ", expected float");
    }
  }
  out.resize(n);
  for (size_t i = 0; i < n; ++i) out[i] = static_cast<float>(acc[i] / sum);
  return Status::Ok();
}

}  // namespace dlrt::embed
