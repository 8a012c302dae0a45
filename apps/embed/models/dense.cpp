// DenseLayer and the .safetensors reader (dense.h).
#include "embed/models/dense.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include <nlohmann/json.hpp>

#include "dlrt/dtype.h"
#include "embed/tokenizer/file_util.h"
#include "embed/tokenizer/json_util.h"

namespace dlrt::embed {

namespace fs = std::filesystem;
using json = nlohmann::json;

Result<std::vector<std::pair<std::string, SafeTensor>>> read_safetensors(const std::string& bytes,
                                                                         const std::string& what) {
  // Layout: u64 little-endian header size N, N bytes of JSON header, the data.
  if (bytes.size() < 8) return InvalidModel(what + ": too short for a .safetensors file");
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<uint8_t>(bytes[static_cast<size_t>(i)]);
  if (n > bytes.size() - 8) return InvalidModel(what + ": header size " + std::to_string(n) + " is past the end of the file");
  DLRT_RETURN_IF_ERROR(jsonu::check_json_depth(std::string_view(bytes).substr(8, static_cast<size_t>(n)), what));
  json header = json::parse(bytes.begin() + 8, bytes.begin() + 8 + static_cast<std::ptrdiff_t>(n), nullptr, false);
  if (header.is_discarded() || !header.is_object()) return InvalidModel(what + ": the header is not a JSON object");
  const size_t data_start = 8 + static_cast<size_t>(n), data_size = bytes.size() - data_start;
  std::vector<std::pair<std::string, SafeTensor>> out;
  for (const auto& [name, info] : header.items()) {
    if (name == "__metadata__") continue;
    const std::string where = what + ": tensor \"" + name + "\"";
    if (!info.is_object()) return InvalidModel(where + " is not described by an object");
    const std::string dtype = jsonu::get_string(info, "dtype", "");
    const size_t elem = dtype == "F32" ? 4 : (dtype == "F16" || dtype == "BF16") ? 2 : 0;
    if (elem == 0) return InvalidModel(where + " has dtype \"" + dtype + "\" (F32, F16 or BF16 expected)");
    auto shape = info.find("shape");
    auto offsets = info.find("data_offsets");
    if (shape == info.end() || !shape->is_array() || offsets == info.end() || !offsets->is_array() || offsets->size() != 2)
      return InvalidModel(where + " lacks shape or data_offsets");
    SafeTensor t;
    uint64_t count = 1;
    for (const json& d : *shape) {
      if (!d.is_number_unsigned() || d.get<uint64_t>() > (uint64_t{1} << 32)) return InvalidModel(where + " has a bad dim");
      t.shape.push_back(d.get<int64_t>());
      count *= d.get<uint64_t>();
      if (count > (uint64_t{1} << 32)) return InvalidModel(where + " is too large");
    }
    if (!(*offsets)[0].is_number_unsigned() || !(*offsets)[1].is_number_unsigned())
      return InvalidModel(where + " has bad data_offsets");
    const uint64_t begin = (*offsets)[0].get<uint64_t>(), end = (*offsets)[1].get<uint64_t>();
    if (begin > end || end > data_size || end - begin != count * elem)
      return InvalidModel(where + ": data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) +
                          ") do not fit its shape and the file");
    const char* src = bytes.data() + data_start + begin;
    t.values.resize(static_cast<size_t>(count));
    for (size_t i = 0; i < t.values.size(); ++i) {
      if (elem == 4) {
        std::memcpy(&t.values[i], src + 4 * i, 4);
      } else {
        uint16_t bits;
        std::memcpy(&bits, src + 2 * i, 2);
        t.values[i] = dtype == "F16" ? Float16::to_float(bits) : BFloat16::to_float(bits);
      }
    }
    out.emplace_back(name, std::move(t));
  }
  return out;
}

Result<DenseLayer> DenseLayer::from_values(size_t in, size_t out, std::vector<float> weight, std::vector<float> bias,
                                           Activation activation) {
  if (in == 0 || out == 0 || weight.size() != in * out || (!bias.empty() && bias.size() != out))
    return InvalidModel("Dense: weight " + std::to_string(weight.size()) + " values and bias " +
                        std::to_string(bias.size()) + " do not fit in_features " + std::to_string(in) +
                        " and out_features " + std::to_string(out));
  DenseLayer d;
  d.in_ = in;
  d.out_ = out;
  d.weight_ = std::move(weight);
  d.bias_ = std::move(bias);
  d.activation_ = activation;
  return d;
}

namespace {

const struct {
  const char* name;
  DenseLayer::Activation activation;
} kActivations[] = {
    {"Identity", DenseLayer::Activation::kIdentity},       {"Tanh", DenseLayer::Activation::kTanh},
    {"ReLU", DenseLayer::Activation::kReLU},               {"ReLU6", DenseLayer::Activation::kReLU6},
    {"LeakyReLU", DenseLayer::Activation::kLeakyReLU},     {"Sigmoid", DenseLayer::Activation::kSigmoid},
    {"Hardsigmoid", DenseLayer::Activation::kHardsigmoid}, {"LogSigmoid", DenseLayer::Activation::kLogSigmoid},
    {"GELU", DenseLayer::Activation::kGelu},               {"SiLU", DenseLayer::Activation::kSiLU},
    {"Mish", DenseLayer::Activation::kMish},               {"ELU", DenseLayer::Activation::kElu},
    {"CELU", DenseLayer::Activation::kCelu},               {"SELU", DenseLayer::Activation::kSelu},
    {"Softplus", DenseLayer::Activation::kSoftplus},       {"Softsign", DenseLayer::Activation::kSoftsign},
    {"Hardtanh", DenseLayer::Activation::kHardtanh},       {"Hardswish", DenseLayer::Activation::kHardswish},
    {"Tanhshrink", DenseLayer::Activation::kTanhshrink},
};

}  // namespace

std::optional<DenseLayer::Activation> torch_activation(const std::string& path) {
  // torch.nn.modules.activation.Tanh, torch.nn.modules.linear.Identity, ...: the class name decides.
  // sentence-transformers constructs a torch class only (anything else needs trust_remote_code).
  if (path.rfind("torch.", 0) != 0 && path.find('.') != std::string::npos) return std::nullopt;
  const std::string cls = path.substr(path.rfind('.') == std::string::npos ? 0 : path.rfind('.') + 1);
  for (const auto& a : kActivations)
    if (cls == a.name) return a.activation;
  return std::nullopt;
}

std::string torch_activation_names() {
  std::string names;
  for (const auto& a : kActivations) names += std::string(names.empty() ? "" : ", ") + a.name;
  return names;
}

Result<fs::path> module_safetensors_path(const fs::path& dir, const std::string& module) {
  fs::path path = dir / "model.safetensors";
  std::error_code ec;
  if (fs::exists(path, ec)) return path;
  if (fs::exists(dir / "pytorch_model.bin", ec))
    return Unsupported(dir.string() + ": the " + module +
                       " weights are only in pytorch_model.bin (a pickle); save them as model.safetensors");
  return NotFound(dir.string() + ": no model.safetensors for the " + module + " module");
}

Result<DenseLayer> DenseLayer::load(const fs::path& dir, const std::string& applied_to) {
  const fs::path config_path = dir / "config.json";
  auto config_text = read_folder_file(config_path.string());
  if (!config_text.ok()) return config_text.status().with_context("Dense module");
  DLRT_RETURN_IF_ERROR(jsonu::check_json_depth(*config_text, config_path.string()));
  json config = json::parse(*config_text, nullptr, false);
  if (config.is_discarded() || !config.is_object()) return InvalidModel(config_path.string() + ": not a JSON object");
  const int64_t in = jsonu::get_int(config, "in_features", 0), out = jsonu::get_int(config, "out_features", 0);
  if (in <= 0 || out <= 0 || in > (1 << 20) || out > (1 << 20))
    return InvalidModel(config_path.string() + ": in_features and out_features must be positive");
  const bool has_bias = jsonu::get_bool(config, "bias", true);
  std::string act = jsonu::get_string(config, "activation_function", "torch.nn.modules.linear.Identity");
  const std::optional<Activation> activation = torch_activation(act);
  if (!activation)
    return Unsupported(config_path.string() + ": Dense activation \"" + act + "\" (torch.nn's " +
                       torch_activation_names() + ")");
  const std::string input = jsonu::get_string(config, "module_input_name", applied_to);
  if (input != applied_to || jsonu::get_string(config, "module_output_name", input) != input)
    return Unsupported(config_path.string() + ": a Dense module on \"" + input + "\" (dlrt applies this one to " +
                       (applied_to == "sentence_embedding" ? "the sentence embedding" : applied_to) + ")");
  const bool residual = jsonu::get_bool(config, "use_residual", false);

  DLRT_ASSIGN_OR_RETURN(const fs::path weights_path, module_safetensors_path(dir, "Dense"));
  auto bytes = read_folder_file(weights_path.string());
  if (!bytes.ok()) return bytes.status().with_context("Dense module");
  DLRT_ASSIGN_OR_RETURN(auto tensors, read_safetensors(*bytes, weights_path.string()));
  std::vector<float> weight, bias, residual_weight;
  for (auto& [name, t] : tensors) {
    if (name == "residual.weight" && residual && in != out) {
      if (t.shape != std::vector<int64_t>{out, in})
        return InvalidModel(weights_path.string() + ": residual.weight is not [out_features, in_features]");
      residual_weight = std::move(t.values);
    }
    if (name == "linear.weight") {
      if (t.shape != std::vector<int64_t>{out, in})
        return InvalidModel(weights_path.string() + ": linear.weight is not [out_features, in_features] = [" +
                            std::to_string(out) + ", " + std::to_string(in) + "]");
      weight = std::move(t.values);
    } else if (name == "linear.bias") {
      if (t.shape != std::vector<int64_t>{out})
        return InvalidModel(weights_path.string() + ": linear.bias is not [out_features]");
      bias = std::move(t.values);
    }
  }
  if (weight.empty()) return InvalidModel(weights_path.string() + ": no linear.weight tensor");
  if (has_bias && bias.empty()) return InvalidModel(weights_path.string() + ": config.json says bias but there is no linear.bias");
  if (residual && in != out && residual_weight.empty())
    return InvalidModel(weights_path.string() + ": use_residual with in_features != out_features needs residual.weight");
  DLRT_ASSIGN_OR_RETURN(DenseLayer d, from_values(static_cast<size_t>(in), static_cast<size_t>(out), std::move(weight),
                                                  std::move(bias), *activation));
  d.residual_ = residual;
  d.residual_weight_ = std::move(residual_weight);
  return d;
}

namespace {

// torch.nn's activation classes with their default arguments.
double activate(DenseLayer::Activation a, double s) {
  using A = DenseLayer::Activation;
  const auto sigmoid = [](double v) { return 1 / (1 + std::exp(-v)); };
  const auto softplus = [](double v) { return v > 20 ? v : std::log1p(std::exp(v)); };  // beta 1, threshold 20
  switch (a) {
    case A::kIdentity: return s;
    case A::kTanh: return std::tanh(s);
    case A::kReLU: return s > 0 ? s : 0;
    case A::kReLU6: return std::min(std::max(s, 0.0), 6.0);
    case A::kLeakyReLU: return s >= 0 ? s : 0.01 * s;
    case A::kSigmoid: return sigmoid(s);
    case A::kHardsigmoid: return std::min(std::max(s + 3, 0.0), 6.0) / 6;
    case A::kLogSigmoid: return -softplus(-s);
    case A::kGelu: return 0.5 * s * (1 + std::erf(s / std::sqrt(2.0)));
    case A::kSiLU: return s * sigmoid(s);
    case A::kMish: return s * std::tanh(softplus(s));
    case A::kElu: return s > 0 ? s : std::expm1(s);
    case A::kCelu: return s > 0 ? s : std::expm1(s);  // alpha 1: as ELU
    case A::kSelu: return 1.0507009873554804934 * (s > 0 ? s : 1.6732632423543772848 * std::expm1(s));
    case A::kSoftplus: return softplus(s);
    case A::kSoftsign: return s / (1 + std::fabs(s));
    case A::kHardtanh: return std::min(std::max(s, -1.0), 1.0);
    case A::kHardswish: return s * std::min(std::max(s + 3, 0.0), 6.0) / 6;
    case A::kTanhshrink: return s - std::tanh(s);
  }
  return s;
}

}  // namespace

double apply_activation(DenseLayer::Activation a, double s) { return activate(a, s); }

std::vector<float> DenseLayer::apply(const std::vector<float>& x) const {
  std::vector<float> y(out_);
  for (size_t o = 0; o < out_; ++o) {
    double s = bias_.empty() ? 0.0 : bias_[o];
    const float* w = weight_.data() + o * in_;
    for (size_t i = 0; i < in_ && i < x.size(); ++i) s += static_cast<double>(w[i]) * x[i];
    s = activate(activation_, s);
    if (residual_ && residual_weight_.empty()) {
      s += x[o];
    } else if (residual_) {
      const float* r = residual_weight_.data() + o * in_;
      double t = 0;
      for (size_t i = 0; i < in_ && i < x.size(); ++i) t += static_cast<double>(r[i]) * x[i];
      s += t;
    }
    y[o] = static_cast<float>(s);
  }
  return y;
}

Result<LayerNormLayer> LayerNormLayer::load(const fs::path& dir) {
  const fs::path config_path = dir / "config.json";
  auto config_text = read_folder_file(config_path.string());
  if (!config_text.ok()) return config_text.status().with_context("LayerNorm module");
  DLRT_RETURN_IF_ERROR(jsonu::check_json_depth(*config_text, config_path.string()));
  json config = json::parse(*config_text, nullptr, false);
  if (config.is_discarded() || !config.is_object()) return InvalidModel(config_path.string() + ": not a JSON object");
  const int64_t dim = jsonu::get_int(config, "dimension", 0);
  if (dim <= 0 || dim > (1 << 20)) return InvalidModel(config_path.string() + ": dimension must be a positive integer");
  const fs::path weights_path = dir / "model.safetensors";
  auto bytes = read_folder_file(weights_path.string());
  if (!bytes.ok()) return bytes.status().with_context("LayerNorm module (its model.safetensors)");
  DLRT_ASSIGN_OR_RETURN(auto tensors, read_safetensors(*bytes, weights_path.string()));
  LayerNormLayer n;
  for (auto& [name, t] : tensors) {
    if (name != "norm.weight" && name != "norm.bias") continue;
    if (t.shape != std::vector<int64_t>{dim})
      return InvalidModel(weights_path.string() + ": " + name + " is not [dimension] = [" + std::to_string(dim) + "]");
    (name == "norm.weight" ? n.weight_ : n.bias_) = std::move(t.values);
  }
  if (n.weight_.empty() || n.bias_.empty())
    return InvalidModel(weights_path.string() + ": the LayerNorm needs norm.weight and norm.bias");
  return n;
}

std::vector<float> LayerNormLayer::apply(const std::vector<float>& x) const {
  const size_t n = weight_.size();
  double mean = 0, var = 0;
  for (size_t i = 0; i < n; ++i) mean += x[i];
  mean /= static_cast<double>(n);
  for (size_t i = 0; i < n; ++i) var += (x[i] - mean) * (x[i] - mean);
  var /= static_cast<double>(n);  // biased, as torch
  const double inv = 1 / std::sqrt(var + 1e-5);
  std::vector<float> y(n);
  for (size_t i = 0; i < n; ++i) y[i] = static_cast<float>((x[i] - mean) * inv * weight_[i] + bias_[i]);
  return y;
}

void normalize_l2(std::vector<float>& v) {
  double sq = 0;
  for (float f : v) sq += static_cast<double>(f) * f;
  const double norm = std::max(std::sqrt(sq), 1e-12);
  for (float& f : v) f = static_cast<float>(f / norm);
}

}  // namespace dlrt::embed
