#include "embed/models/sparse.h"

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

#include "embed/tokenizer/json_util.h"

namespace dlrt::embed {

namespace fs = std::filesystem;
using json = nlohmann::json;

Result<SpladePooling> SpladePooling::load(const fs::path& dir) {
  const fs::path path = dir / "config.json";
  DLRT_ASSIGN_OR_RETURN(json c, jsonu::read_optional_json(path));
  SpladePooling p;
  if (c.is_null()) return p;
  if (!c.is_object()) return InvalidModel(path.string() + ": expected a JSON object");
  auto text = [&](const char* key, const char* def) -> Result<std::string> {
    const json* v = jsonu::member(c, key);
    if (!v || v->is_null()) return std::string(def);
    if (!v->is_string()) return InvalidModel(path.string() + ": \"" + key + "\" must be a string, not " + v->dump());
    return v->get<std::string>();
  };
  DLRT_ASSIGN_OR_RETURN(std::string strategy, text("pooling_strategy", "max"));
  if (strategy == "max") p.strategy_ = Strategy::kMax;
  else if (strategy == "sum") p.strategy_ = Strategy::kSum;
  else return Unsupported(path.string() + ": pooling_strategy \"" + strategy + "\" is not supported (max, sum)");
  DLRT_ASSIGN_OR_RETURN(std::string activation, text("activation_function", "relu"));
  if (activation == "relu") p.activation_ = Activation::kRelu;
  else if (activation == "log1p_relu") p.activation_ = Activation::kLog1pRelu;
  else return Unsupported(path.string() + ": activation_function \"" + activation + "\" is not supported (relu, log1p_relu)");
  if (const json* d = jsonu::member(c, "word_embedding_dimension"); d && !d->is_null()) {
    if (!d->is_number_integer() || d->get<int64_t>() < 1)
      return InvalidModel(path.string() + ": \"word_embedding_dimension\" must be an integer >= 1, not " + d->dump());
    p.dimension_ = static_cast<size_t>(d->get<int64_t>());
  }
  return p;
}

SpladePooling SpladePooling::with(Strategy strategy, Activation activation) {
  SpladePooling p;
  p.strategy_ = strategy;
  p.activation_ = activation;
  return p;
}

const char* SpladePooling::strategy_name() const { return strategy_ == Strategy::kMax ? "max" : "sum"; }
const char* SpladePooling::activation_name() const { return activation_ == Activation::kRelu ? "relu" : "log1p_relu"; }

void SpladePooling::pool(const float* logits, const int64_t* mask, size_t length, size_t vocab, float* out) const {
  // Every value is >= 0 and a padding token's is 0: both poolings start from 0.
  std::vector<double> acc(vocab, 0.0);
  for (size_t t = 0; t < length; ++t) {
    if (mask[t] == 0) continue;
    const float* row = logits + t * vocab;
    for (size_t k = 0; k < vocab; ++k) {
      if (!(row[k] > 0.0f)) continue;  // relu: 0, which adds nothing and never wins a max
      float v = std::log1p(row[k]);
      if (activation_ == Activation::kLog1pRelu) v = std::log1p(v);
      if (strategy_ == Strategy::kMax) acc[k] = std::max(acc[k], static_cast<double>(v));
      else acc[k] += v;
    }
  }
  for (size_t k = 0; k < vocab; ++k) out[k] = static_cast<float>(acc[k]);
}

SparseVector sparsify(const std::vector<float>& dense, size_t top_k) {
  std::vector<int64_t> nz;
  for (size_t i = 0; i < dense.size(); ++i)
    if (dense[i] != 0.0f) nz.push_back(static_cast<int64_t>(i));
  if (top_k > 0 && nz.size() > top_k) {
    std::stable_sort(nz.begin(), nz.end(),
                     [&](int64_t a, int64_t b) { return std::fabs(dense[a]) > std::fabs(dense[b]); });
    nz.resize(top_k);
    std::sort(nz.begin(), nz.end());
  }
  SparseVector v;
  v.indices = std::move(nz);
  v.values.reserve(v.indices.size());
  for (int64_t i : v.indices) v.values.push_back(dense[static_cast<size_t>(i)]);
  return v;
}

SparseVector keep_top_k(SparseVector v, size_t top_k) {
  if (top_k == 0 || v.indices.size() <= top_k) return v;
  std::vector<size_t> keep(v.indices.size());
  for (size_t k = 0; k < keep.size(); ++k) keep[k] = k;  // indices ascend, so ties keep the lower index
  std::stable_sort(keep.begin(), keep.end(), [&](size_t a, size_t b) { return std::fabs(v.values[a]) > std::fabs(v.values[b]); });
  keep.resize(top_k);
  std::sort(keep.begin(), keep.end());
  SparseVector out;
  for (size_t k : keep) {
    out.indices.push_back(v.indices[k]);
    out.values.push_back(v.values[k]);
  }
  return out;
}

std::vector<float> densify(const SparseVector& v, size_t dimension) {
  std::vector<float> dense(dimension, 0.0f);
  for (size_t k = 0; k < v.indices.size() && k < v.values.size(); ++k)
    if (v.indices[k] >= 0 && static_cast<size_t>(v.indices[k]) < dimension) dense[static_cast<size_t>(v.indices[k])] = v.values[k];
  return dense;
}

}  // namespace dlrt::embed
