// The attributes of RNN, GRU and LSTM (rnn_attrs.h): direction, layout,
// clip, and the activations with their alpha and beta.
#include "backends/cpu/ops/rnn_attrs.h"

#include <span>
#include <string>

#include "backends/cpu/kernel_util.h"

namespace dlrt::cpu::rnn {
namespace {

struct ActSpec {
  const char* name;
  RnnActKind kind;
  bool uses_alpha, uses_beta;
  float alpha, beta;  // defaults
};

constexpr ActSpec kActSpecs[] = {
    {"relu", RnnActKind::kRelu, false, false, 0, 0},
    {"tanh", RnnActKind::kTanh, false, false, 0, 0},
    {"sigmoid", RnnActKind::kSigmoid, false, false, 0, 0},
    {"affine", RnnActKind::kAffine, true, true, 1.0f, 0.0f},
    {"leakyrelu", RnnActKind::kLeakyRelu, true, false, 0.01f, 0},
    {"thresholdedrelu", RnnActKind::kThresholdedRelu, true, false, 1.0f, 0},
    {"scaledtanh", RnnActKind::kScaledTanh, true, true, 1.0f, 1.0f},
    {"hardsigmoid", RnnActKind::kHardSigmoid, true, true, 0.2f, 0.5f},
    {"elu", RnnActKind::kElu, true, false, 1.0f, 0},
    {"softsign", RnnActKind::kSoftsign, false, false, 0, 0},
    {"softplus", RnnActKind::kSoftplus, false, false, 0, 0},
};

Status node_error(const ir::Node& n, StatusCode code, const std::string& message) {
  return Status(code, n.describe() + ": " + message);
}

// Parses activations/activation_alpha/activation_beta; `defaults` is one direction's list.
Status parse_activations(const ir::Node& n, std::span<const char* const> defaults, RnnAttrs& at) {
  std::vector<std::string> names = n.attr_strings("activations");
  const size_t per_dir = defaults.size();
  if (names.empty()) {
    for (int64_t d = 0; d < at.D; ++d) names.insert(names.end(), defaults.begin(), defaults.end());
  } else if (names.size() == per_dir && at.D == 2) {
    std::vector<std::string> twice = names;
    names.insert(names.end(), twice.begin(), twice.end());
  }
  if (names.size() != per_dir * static_cast<size_t>(at.D))
    return node_error(n, StatusCode::kInvalidArgument,
                      "expected " + std::to_string(per_dir * at.D) + " activations, got " + std::to_string(names.size()));
  const std::vector<float> alphas = n.attr_floats("activation_alpha");
  const std::vector<float> betas = n.attr_floats("activation_beta");
  size_t ai = 0, bi = 0;
  for (const std::string& raw : names) {
    std::string lower;
    for (char c : raw) lower.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    const ActSpec* spec = nullptr;
    for (const ActSpec& s : kActSpecs)
      if (lower == s.name) spec = &s;
    if (!spec) return node_error(n, StatusCode::kUnsupported, "activation '" + raw + "' is not supported");
    RnnActivation a;
    a.kind = spec->kind;
    a.alpha = spec->alpha;
    a.beta = spec->beta;
    if (spec->uses_alpha && ai < alphas.size()) a.alpha = alphas[ai++];
    if (spec->uses_beta && bi < betas.size()) a.beta = betas[bi++];
    at.acts.push_back(a);
  }
  return Status::Ok();
}

}  // namespace

Result<RnnAttrs> parse_attrs(const ir::Node& n, Cell cell) {
  RnnAttrs at;
  at.cell = cell;
  at.G = cell == Cell::kRnn ? 1 : (cell == Cell::kGru ? 3 : 4);
  const std::string direction = n.attr_string("direction", "forward");
  if (direction == "forward") {
    at.D = 1;
  } else if (direction == "reverse") {
    at.D = 1;
    at.reverse = true;
  } else if (direction == "bidirectional") {
    at.D = 2;
  } else {
    return node_error(n, StatusCode::kInvalidArgument, "unknown direction '" + direction + "'");
  }
  at.layout = n.opset >= 14 ? n.attr_int("layout", 0) : 0;
  if (at.layout != 0 && at.layout != 1) return node_error(n, StatusCode::kInvalidArgument, "layout must be 0 or 1");
  if (n.has_attr("hidden_size")) at.hidden_size = n.attr_int("hidden_size", 0);
  if (const ir::Attribute* a = n.attr("clip")) {
    at.has_clip = true;
    at.clip = a->f;
    if (!(at.clip > 0)) return node_error(n, StatusCode::kInvalidArgument, "clip must be positive");
  }
  at.linear_before_reset = n.attr_int("linear_before_reset", 0) != 0;
  at.input_forget = n.attr_int("input_forget", 0) != 0;
  static constexpr const char* kRnnActs[] = {"Tanh"};
  static constexpr const char* kGruActs[] = {"Sigmoid", "Tanh"};
  static constexpr const char* kLstmActs[] = {"Sigmoid", "Tanh", "Tanh"};
  std::span<const char* const> defaults = cell == Cell::kRnn   ? std::span<const char* const>(kRnnActs)
                                          : cell == Cell::kGru ? std::span<const char* const>(kGruActs)
                                                               : std::span<const char* const>(kLstmActs);
  DLRT_RETURN_IF_ERROR(parse_activations(n, defaults, at));
  return at;
}

}  // namespace dlrt::cpu::rnn
