// read_score_activation and ScoreActivation (score_activation.h).
#include "embed/models/score_activation.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include <nlohmann/json.hpp>

#include "embed/tokenizer/json_util.h"

namespace dlrt::embed {

namespace fs = std::filesystem;
using json = nlohmann::json;

ScoreActivation ScoreActivation::library_default(size_t labels) {
  return labels == 1 ? ScoreActivation{} : identity();
}

ScoreActivation ScoreActivation::identity() {
  ScoreActivation a;
  a.elementwise = DenseLayer::Activation::kIdentity;
  a.name = "Identity";
  return a;
}

void ScoreActivation::apply(float* row, size_t labels) const {
  if (labels == 0) return;
  if (!softmax) {
    for (size_t k = 0; k < labels; ++k) row[k] = static_cast<float>(apply_activation(elementwise, row[k]));
    return;
  }
  const double top = *std::max_element(row, row + labels);
  std::vector<double> e(labels);
  double sum = 0;
  for (size_t k = 0; k < labels; ++k) sum += (e[k] = std::exp(row[k] - top));
  for (size_t k = 0; k < labels; ++k) row[k] = static_cast<float>(e[k] / sum);
}

namespace {

// The activation a class path names; `where` says which file and key, for messages.
Result<ScoreActivation> named(const json& value, const std::string& where) {
  if (!value.is_string()) return InvalidModel(where + " is not a string (a torch class path)");
  const std::string path = value.get<std::string>();
  ScoreActivation a;
  a.source = where;
  a.name = path.substr(path.rfind('.') == std::string::npos ? 0 : path.rfind('.') + 1);
  const bool torch_class = path.rfind("torch.", 0) == 0 || path.find('.') == std::string::npos;
  if (!torch_class)
    return Unsupported(where + " names \"" + path + "\", a class outside torch: sentence-transformers applies it "
                       "only with trust_remote_code=True, and dlrt runs no Python code");
  if (a.name == "Softmax") {
    a.softmax = true;
    return a;
  }
  const std::optional<DenseLayer::Activation> e = torch_activation(path);
  if (!e)
    return Unsupported(where + " names \"" + path + "\", which dlrt does not implement (torch.nn's " +
                       torch_activation_names() + ", Softmax)");
  a.elementwise = *e;
  return a;
}

}  // namespace

Result<ScoreActivation> read_score_activation(const fs::path& dir, size_t labels) {
  const fs::path st_path = dir / "config_sentence_transformers.json", config_path = dir / "config.json";
  DLRT_ASSIGN_OR_RETURN(json st, jsonu::read_optional_json(st_path));
  if (const json* v = jsonu::member(st, "activation_fn"); v && !v->is_null())
    return named(*v, st_path.string() + "'s \"activation_fn\"");
  DLRT_ASSIGN_OR_RETURN(json config, jsonu::read_optional_json(config_path));
  if (const json* st_config = jsonu::member(config, "sentence_transformers")) {
    // As the library: a null value here means its default, not the older key.
    if (const json* v = jsonu::member(*st_config, "activation_fn")) {
      if (v->is_null()) return ScoreActivation::library_default(labels);
      return named(*v, config_path.string() + "'s \"sentence_transformers\": {\"activation_fn\"}");
    }
  }
  if (const json* v = jsonu::member(config, "sbert_ce_default_activation_function"); v && !v->is_null())
    return named(*v, config_path.string() + "'s \"sbert_ce_default_activation_function\"");
  return ScoreActivation::library_default(labels);
}

}  // namespace dlrt::embed
