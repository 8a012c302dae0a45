// DenseLayer and the .safetensors reader (dense.h).
#include "embed/models/dense.h"

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

Result<DenseLayer> DenseLayer::load(const fs::path& dir) {
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
  // torch.nn.modules.activation.Tanh, torch.nn.modules.linear.Identity, ...: the class name decides.
  std::string act = jsonu::get_string(config, "activation_function", "torch.nn.modules.linear.Identity");
  const std::string cls = act.substr(act.rfind('.') == std::string::npos ? 0 : act.rfind('.') + 1);
  Activation activation;
  if (cls == "Identity") activation = Activation::kIdentity;
  else if (cls == "Tanh") activation = Activation::kTanh;
  else if (cls == "ReLU") activation = Activation::kReLU;
  else if (cls == "Sigmoid") activation = Activation::kSigmoid;
  else if (cls == "GELU") activation = Activation::kGelu;
  else return Unsupported(config_path.string() + ": Dense activation \"" + act + "\" (Identity, Tanh, ReLU, Sigmoid, GELU)");

  const fs::path weights_path = dir / "model.safetensors";
  std::error_code ec;
  if (!fs::exists(weights_path, ec)) {
    if (fs::exists(dir / "pytorch_model.bin", ec))
      return Unsupported(dir.string() + ": the Dense weights are only in pytorch_model.bin (a pickle); "
                         "save them as model.safetensors");
    return NotFound(dir.string() + ": no model.safetensors for the Dense module");
  }
  auto bytes = read_folder_file(weights_path.string());
  if (!bytes.ok()) return bytes.status().with_context("Dense module");
  DLRT_ASSIGN_OR_RETURN(auto tensors, read_safetensors(*bytes, weights_path.string()));
  std::vector<float> weight, bias;
  for (auto& [name, t] : tensors) {
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
  return from_values(static_cast<size_t>(in), static_cast<size_t>(out), std::move(weight), std::move(bias), activation);
}

std::vector<float> DenseLayer::apply(const std::vector<float>& x) const {
  std::vector<float> y(out_);
  for (size_t o = 0; o < out_; ++o) {
    double s = bias_.empty() ? 0.0 : bias_[o];
    const float* w = weight_.data() + o * in_;
    for (size_t i = 0; i < in_ && i < x.size(); ++i) s += static_cast<double>(w[i]) * x[i];
    switch (activation_) {
      case Activation::kIdentity: break;
      case Activation::kTanh: s = std::tanh(s); break;
      case Activation::kReLU: s = s > 0 ? s : 0; break;
      case Activation::kSigmoid: s = 1 / (1 + std::exp(-s)); break;
      case Activation::kGelu: s = 0.5 * s * (1 + std::erf(s / std::sqrt(2.0))); break;
    }
    y[o] = static_cast<float>(s);
  }
  return y;
}

}  // namespace dlrt::embed
