#include "ir/onnx_definitions.h"

#include <map>
#include <string>
#include <utility>

#include <onnx/defs/schema.h>

namespace dlrt::ir {
namespace {

// Definitions of ai.onnx ops newer than opset 21 (ONNX 1.23.2's opsets 22-28)
// that dlrt runs, keyed by (op, since_version), with what changed. The list
// comes from comparing each definition with the one before it (inputs,
// outputs, attributes, type constraints and description). Element types a
// kernel does not implement are refused by the kernel, so definitions that
// only add types are listed as such. Ops new in these opsets are not listed:
// they run where a kernel exists, or through their ONNX function body.
const std::map<std::pair<std::string, int>, const char*>& reviewed() {
  static const auto* table = [] {
    auto* t = new std::map<std::pair<std::string, int>, const char*>;
    const char* kTypes = "new element types only";
    // Opset 22: bfloat16 (and for some, float16/double) added; no other change.
    for (const char* op :
         {"Acos", "Acosh", "Asin", "Asinh", "Atan", "Atanh", "Bernoulli", "Conv", "ConvTranspose", "Cos", "Cosh",
          "DeformConv", "Det", "Dropout", "Elu", "EyeLike", "GRU", "GlobalAveragePool", "GlobalLpPool",
          "GlobalMaxPool", "GridSample", "HardSigmoid", "HardSwish", "InstanceNormalization", "LSTM",
          "LpNormalization", "LpPool", "MaxRoiPool", "MaxUnpool", "Mish", "Multinomial", "NegativeLogLikelihoodLoss",
          "RNN", "RandomNormal", "RandomNormalLike", "RandomUniform", "RandomUniformLike", "RoiAlign", "Round", "Selu",
          "Sin", "Sinh", "Softplus", "Softsign", "Tan", "ThresholdedRelu"})
      (*t)[{op, 22}] = kTypes;
    // AveragePool / MaxPool 22: bfloat16, and the description now says that a
    // window starting in the right padding is not produced (ceil_mode), which
    // is what the kernels do.
    (*t)[{"AveragePool", 22}] = kTypes;
    (*t)[{"MaxPool", 22}] = kTypes;
    // Opsets 23, 24, 25: float4e2m1, float8e8m0, then int2/uint2 for the ops
    // that move data of any type.
    for (const char* op : {"Constant", "ConstantOfShape", "Flatten", "Identity", "If", "Loop", "Pad", "Reshape", "Scan",
                           "Shape", "Size", "Squeeze", "Transpose", "Unsqueeze"})
      for (int v : {23, 24, 25}) (*t)[{op, v}] = kTypes;
    (*t)[{"Cast", 23}] = kTypes;
    (*t)[{"CastLike", 23}] = kTypes;
    // Cast 24: float8e8m0 and its round_mode attribute (only for conversions
    // to float8e8m0, a type dlrt does not run).
    (*t)[{"Cast", 24}] = "float8e8m0 and round_mode (for float8e8m0 only)";
    (*t)[{"CastLike", 24}] = "float8e8m0 and round_mode (for float8e8m0 only)";
    for (const char* op : {"Cast", "CastLike"})
      for (int v : {25, 28}) (*t)[{op, v}] = kTypes;
    (*t)[{"TopK", 24}] = kTypes;
    (*t)[{"SplitToSequence", 24}] = kTypes;
    for (int v : {24, 25, 28}) {
      (*t)[{"QuantizeLinear", v}] = kTypes;
      (*t)[{"DequantizeLinear", v}] = kTypes;
    }
    // Opset 28: bfloat16 / float16 / double additions.
    for (const char* op : {"Celu", "Compress", "DepthToSpace", "Einsum", "OneHot", "Optional", "OptionalGetElement",
                           "OptionalHasElement", "ReduceLogSum", "ReduceLogSumExp", "ReverseSequence", "Unique"})
      (*t)[{op, 28}] = kTypes;
    // BitShift 28: signed integer types (arithmetic right shift).
    (*t)[{"BitShift", 28}] = "signed integer types, which the kernel runs";
    // Mod 28: fmod=0 defined for floating-point types as A - floor(A/B)*B,
    // what the kernel computes.
    (*t)[{"Mod", 28}] = "fmod=0 for floating-point types";
    return t;
  }();
  return *table;
}

// Attribute or input changes in newer definitions: what dlrt implements of
// each, checked on the node. Empty when the node is fine.
std::string unimplemented_part(const onnx::NodeProto& n, int since) {
  auto attr_int = [&](const char* name, int64_t dflt) {
    for (const auto& a : n.attribute())
      if (a.name() == name) return a.i();
    return dflt;
  };
  const std::string& op = n.op_type();
  // QuantizeLinear 23: `precision`, the type x / scale is computed in
  // (0: the scale's). dlrt computes in float32 (double for double inputs).
  if (op == "QuantizeLinear" && since == 23) {
    int64_t p = attr_int("precision", 0);
    if (p != 0 && p != onnx::TensorProto::FLOAT) return "attribute precision=" + std::to_string(p) + " (0 or 1 are run)";
    return {};
  }
  // DequantizeLinear 23: `output_dtype`, the output's type (0: the scale's).
  if (op == "DequantizeLinear" && since == 23) {
    int64_t d = attr_int("output_dtype", 0);
    if (d != 0 && d != onnx::TensorProto::FLOAT) return "attribute output_dtype=" + std::to_string(d) + " (0 or 1 are run)";
    return {};
  }
  // Range 27: stash_type, the accumulation type for float16 / bfloat16 (the
  // kernel computes in float32 for those, the default stash_type 1).
  if (op == "Range" && since == 27) {
    if (attr_int("stash_type", 1) != 1) return "attribute stash_type other than 1 (float)";
    return {};
  }
  // SpaceToDepth 28: `mode` (DCR or CRD), which the kernel implements.
  if (op == "SpaceToDepth" && since == 28) return {};
  return "?";  // not reviewed
}

void collect_subgraphs(const onnx::NodeProto& n, std::vector<const onnx::GraphProto*>& out) {
  for (const auto& a : n.attribute()) {
    if (a.has_g()) out.push_back(&a.g());
    for (const auto& g : a.graphs()) out.push_back(&g);
  }
}

}  // namespace

int onnx_library_max_opset() {
  const auto& map = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  auto it = map.find(onnx::ONNX_DOMAIN);
  return it == map.end() ? 0 : it->second.second;
}

Status check_newer_definitions(const onnx::GraphProto& g, int opset) {
  if (opset <= kVerifiedOpset) return Status::Ok();
  for (const auto& n : g.node()) {
    std::vector<const onnx::GraphProto*> subs;
    collect_subgraphs(n, subs);
    for (const auto* sg : subs) DLRT_RETURN_IF_ERROR(check_newer_definitions(*sg, opset));
    if (!n.domain().empty() && n.domain() != "ai.onnx") continue;
    const onnx::OpSchema* s = onnx::OpSchemaRegistry::Schema(n.op_type(), opset, "");
    if (!s || s->SinceVersion() <= kVerifiedOpset) continue;
    // An op new after kVerifiedOpset: no older definition to compare with.
    if (!onnx::OpSchemaRegistry::Schema(n.op_type(), kVerifiedOpset, "")) continue;
    const int since = s->SinceVersion();
    const std::string what = "node '" + n.name() + "' (" + n.op_type() + ") at opset " + std::to_string(opset) +
                             " has the definition of opset " + std::to_string(since);
    if (reviewed().count({n.op_type(), since})) continue;
    std::string part = unimplemented_part(n, since);
    if (part.empty()) continue;
    if (part == "?")
      return Unsupported(what + ", which changed the op after opset " + std::to_string(kVerifiedOpset) +
                         " and is not supported yet; export the model at opset " + std::to_string(since - 1) +
                         " or older");
    return Unsupported(what + "; dlrt does not run its " + part);
  }
  return Status::Ok();
}

}  // namespace dlrt::ir
