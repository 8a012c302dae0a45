// libFuzzer harness: bytes -> one com.microsoft or ai.onnx.ml node (and a few
// standard ops with narrow types) with fuzzed attributes, input shapes and
// values, each input a graph input or an initializer, exported to ONNX, loaded
// by Session::create_from_bytes on the CPU and run once. What it looks for:
// attribute- and input-derived sizes that overflow or go unchecked (the
// hostile sweep of 2026-11 found them by hand: GroupQueryAttention's head
// counts, MatMulNBits' block size, SVMClassifier's vectors_per_class,
// FeatureVectorizer's inputdimensions, RotaryEmbedding's positions), scratch
// that ignores the tensor limit, and wrong answers that read outside a buffer
// (ASan). Tensors stay small (at most 4096 elements); DLRT_MAX_TENSOR_MB bounds
// what the kernels allocate.
#include <fuzzer/FuzzedDataProvider.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "dlrt/session.h"
#include "ir/graph.h"
#include "ir/onnx_export.h"

namespace {

using dlrt::DType;
using dlrt::ir::Attribute;

enum class A { kInt, kFloat, kInts, kFloats, kString, kStrings };

struct AttrSpec {
  const char* name;
  A kind;
  std::vector<const char*> strings = {};  // for kString / kStrings: the values to pick from
};

struct OpSpec {
  const char* op;
  const char* domain;
  int opset;
  std::vector<DType> inputs;   // in order; the fuzzer may leave optional trailing ones out
  int min_inputs;
  std::vector<DType> outputs;  // element types of the outputs
  std::vector<AttrSpec> attrs;
  bool variadic = false;  // inputs: the last type repeats (FeatureVectorizer)
};

constexpr DType F = DType::kFloat32, I32 = DType::kInt32, I64 = DType::kInt64, U8 = DType::kUInt8;

const std::vector<OpSpec>& specs() {
  static const std::vector<OpSpec> s = {
      {"GroupQueryAttention", "com.microsoft", 1, {F, F, F, F, F, I32, I32, F, F}, 7, {F, F, F},
       {{"num_heads", A::kInt}, {"kv_num_heads", A::kInt}, {"scale", A::kFloat}, {"local_window_size", A::kInt},
        {"do_rotary", A::kInt}, {"rotary_interleaved", A::kInt}, {"softcap", A::kFloat}}},
      {"MultiHeadAttention", "com.microsoft", 1, {F, F, F, F, I32, F, F, F}, 1, {F, F, F},
       {{"num_heads", A::kInt}, {"mask_filter_value", A::kFloat}, {"scale", A::kFloat}, {"unidirectional", A::kInt}}},
      {"Attention", "com.microsoft", 1, {F, F, F, I32, F, F}, 2, {F, F},
       {{"num_heads", A::kInt}, {"unidirectional", A::kInt}, {"qkv_hidden_sizes", A::kInts},
        {"mask_filter_value", A::kFloat}, {"scale", A::kFloat}, {"past_present_share_buffer", A::kInt}}},
      {"RotaryEmbedding", "com.microsoft", 1, {F, I64, F, F}, 4, {F},
       {{"interleaved", A::kInt}, {"num_heads", A::kInt}, {"rotary_embedding_dim", A::kInt},
        {"is_packed_batching", A::kInt}, {"scale", A::kFloat}}},
      {"MatMulNBits", "com.microsoft", 1, {F, U8, F, U8, I32, F}, 3, {F},
       {{"K", A::kInt}, {"N", A::kInt}, {"bits", A::kInt}, {"block_size", A::kInt}, {"accuracy_level", A::kInt}}},
      {"SkipLayerNormalization", "com.microsoft", 1, {F, F, F, F, F}, 3, {F, F, F, F}, {{"epsilon", A::kFloat}}},
      {"SkipSimplifiedLayerNormalization", "com.microsoft", 1, {F, F, F, F}, 3, {F, F, F, F},
       {{"epsilon", A::kFloat}}},
      {"EmbedLayerNormalization", "com.microsoft", 1, {I32, I32, F, F, F, F, F, I32, I32}, 7, {F, I32, F},
       {{"epsilon", A::kFloat}, {"mask_index_type", A::kInt}}},
      {"FusedMatMul", "com.microsoft", 1, {F, F}, 2, {F},
       {{"alpha", A::kFloat}, {"transA", A::kInt}, {"transB", A::kInt}, {"transBatchA", A::kInt},
        {"transBatchB", A::kInt}}},
      {"BiasGelu", "com.microsoft", 1, {F, F}, 2, {F}, {}},
      {"FastGelu", "com.microsoft", 1, {F, F}, 1, {F}, {}},
      {"QuickGelu", "com.microsoft", 1, {F}, 1, {F}, {{"alpha", A::kFloat}}},
      {"BiasAdd", "com.microsoft", 1, {F, F, F}, 3, {F}, {}},
      {"SVMClassifier", "ai.onnx.ml", 1, {F}, 1, {I64, F},
       {{"kernel_type", A::kString, {"LINEAR", "POLY", "RBF", "SIGMOID", "BAD"}}, {"kernel_params", A::kFloats},
        {"vectors_per_class", A::kInts}, {"support_vectors", A::kFloats}, {"coefficients", A::kFloats},
        {"rho", A::kFloats}, {"classlabels_ints", A::kInts}, {"prob_a", A::kFloats}, {"prob_b", A::kFloats},
        {"post_transform", A::kString, {"NONE", "SOFTMAX", "LOGISTIC", "SOFTMAX_ZERO", "PROBIT"}}}},
      {"SVMRegressor", "ai.onnx.ml", 1, {F}, 1, {F},
       {{"kernel_type", A::kString, {"LINEAR", "POLY", "RBF", "SIGMOID"}}, {"kernel_params", A::kFloats},
        {"n_supports", A::kInt}, {"support_vectors", A::kFloats}, {"coefficients", A::kFloats},
        {"rho", A::kFloats}, {"one_class", A::kInt}}},
      {"FeatureVectorizer", "ai.onnx.ml", 1, {F, F}, 1, {F}, {{"inputdimensions", A::kInts}}, true},
      {"LinearClassifier", "ai.onnx.ml", 1, {F}, 1, {I64, F},
       {{"coefficients", A::kFloats}, {"intercepts", A::kFloats}, {"classlabels_ints", A::kInts},
        {"multi_class", A::kInt}, {"post_transform", A::kString, {"NONE", "SOFTMAX", "LOGISTIC"}}}},
      {"LinearRegressor", "ai.onnx.ml", 1, {F}, 1, {F},
       {{"coefficients", A::kFloats}, {"intercepts", A::kFloats}, {"targets", A::kInt}}},
      {"TreeEnsembleRegressor", "ai.onnx.ml", 3, {F}, 1, {F},
       {{"nodes_treeids", A::kInts}, {"nodes_nodeids", A::kInts}, {"nodes_featureids", A::kInts},
        {"nodes_values", A::kFloats}, {"nodes_truenodeids", A::kInts}, {"nodes_falsenodeids", A::kInts},
        {"nodes_modes", A::kStrings, {"BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE", "BRANCH_GT", "BRANCH_EQ", "LEAF"}},
        {"nodes_missing_value_tracks_true", A::kInts}, {"target_treeids", A::kInts}, {"target_nodeids", A::kInts},
        {"target_ids", A::kInts}, {"target_weights", A::kFloats}, {"n_targets", A::kInt},
        {"aggregate_function", A::kString, {"SUM", "AVERAGE", "MIN", "MAX"}}, {"base_values", A::kFloats}}},
      {"ArrayFeatureExtractor", "ai.onnx.ml", 1, {F, I64}, 2, {F}, {}},
      {"Normalizer", "ai.onnx.ml", 1, {F}, 1, {F}, {{"norm", A::kString, {"MAX", "L1", "L2", "X"}}}},
      {"Scaler", "ai.onnx.ml", 1, {F}, 1, {F}, {{"offset", A::kFloats}, {"scale", A::kFloats}}},
      {"OneHotEncoder", "ai.onnx.ml", 1, {I64}, 1, {F}, {{"cats_int64s", A::kInts}, {"zeros", A::kInt}}},
      {"Imputer", "ai.onnx.ml", 1, {F}, 1, {F},
       {{"imputed_value_floats", A::kFloats}, {"replaced_value_float", A::kFloat}}},
      {"Cast", "", 21, {F}, 1, {DType::kInt4}, {{"saturate", A::kInt}}},
      {"Cast", "", 21, {F}, 1, {DType::kUInt4}, {}},
  };
  return s;
}

int64_t pick_int(FuzzedDataProvider& p) {
  static const int64_t interesting[] = {0,  1,  -1, 2,  3,  4,  5,  6,   8,    12,         16,
                                        31, 32, 64, 128, 255, 256, 1024, 65536, 1LL << 31, (1LL << 31) - 1,
                                        1LL << 32, 1LL << 40, 1LL << 61, 1LL << 62, std::numeric_limits<int64_t>::max(),
                                        std::numeric_limits<int64_t>::min(), 0x5555555555555555LL, -2, -3};
  if (p.ConsumeBool()) return p.ConsumeIntegralInRange<int64_t>(-4, 40);
  return p.PickValueInArray(interesting);
}

float pick_float(FuzzedDataProvider& p) {
  static const float interesting[] = {0.0f, 1.0f, -1.0f, 0.5f, 1e-5f, 1e30f, -1e30f, 3.0f,
                                      std::numeric_limits<float>::infinity(), std::nanf("")};
  if (p.ConsumeBool()) return p.PickValueInArray(interesting);
  return p.ConsumeFloatingPointInRange<float>(-8.0f, 8.0f);
}

Attribute make_attr(FuzzedDataProvider& p, const AttrSpec& spec) {
  Attribute a;
  switch (spec.kind) {
    case A::kInt: a.kind = Attribute::Kind::kInt; a.i = pick_int(p); break;
    case A::kFloat: a.kind = Attribute::Kind::kFloat; a.f = pick_float(p); break;
    case A::kInts: {
      a.kind = Attribute::Kind::kInts;
      const int n = p.ConsumeIntegralInRange(0, 12);
      for (int i = 0; i < n; ++i) a.ints.push_back(pick_int(p));
      break;
    }
    case A::kFloats: {
      a.kind = Attribute::Kind::kFloats;
      const int n = p.ConsumeIntegralInRange(0, 24);
      for (int i = 0; i < n; ++i) a.floats.push_back(pick_float(p));
      break;
    }
    case A::kString:
      a.kind = Attribute::Kind::kString;
      a.s = spec.strings[p.ConsumeIntegralInRange<size_t>(0, spec.strings.size() - 1)];
      break;
    case A::kStrings: {
      a.kind = Attribute::Kind::kStrings;
      const int n = p.ConsumeIntegralInRange(0, 12);
      for (int i = 0; i < n; ++i) a.strings.push_back(spec.strings[p.ConsumeIntegralInRange<size_t>(0, spec.strings.size() - 1)]);
      break;
    }
  }
  return a;
}

// A small tensor of `dt`: rank 0-4, at most 4096 elements, values from the bytes.
dlrt::Tensor make_tensor(FuzzedDataProvider& p, DType dt) {
  std::vector<int64_t> shape(p.ConsumeIntegralInRange(0, 4));
  int64_t n = 1;
  for (auto& d : shape) {
    static const int64_t dims[] = {0, 1, 1, 2, 2, 3, 4, 5, 6, 8, 16, 32};
    d = p.PickValueInArray(dims);
    if (n * std::max<int64_t>(d, 1) > 4096) d = 1;
    n *= d;
  }
  auto t = dlrt::Tensor::allocate(dt, shape);
  if (!t.ok()) return dlrt::Tensor();
  for (int64_t i = 0; i < n; ++i) {
    switch (dt) {
      case DType::kFloat32: t->data<float>()[i] = pick_float(p); break;
      case DType::kInt32: t->data<int32_t>()[i] = static_cast<int32_t>(pick_int(p)); break;
      case DType::kInt64: t->data<int64_t>()[i] = pick_int(p); break;
      case DType::kUInt8: t->data<uint8_t>()[i] = p.ConsumeIntegral<uint8_t>(); break;
      default: break;
    }
  }
  return std::move(t).value();
}

dlrt::ir::TypeInfo type_of(const dlrt::Tensor& t) {
  dlrt::ir::TypeInfo type;
  type.dtype = t.dtype();
  std::vector<dlrt::ir::Dim> d;
  for (int64_t x : t.shape()) d.push_back(dlrt::ir::Dim{x, ""});
  type.shape = d;
  return type;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  setenv("DLRT_MAX_TENSOR_MB", "64", 1);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider p(data, size);
  const OpSpec& spec = specs()[p.ConsumeIntegralInRange<size_t>(0, specs().size() - 1)];
  auto g = std::make_shared<dlrt::ir::Graph>();
  g->name = "fuzz_ops";
  g->opsets[""] = 21;
  g->opsets[spec.domain] = spec.opset;
  dlrt::ir::Node n;
  n.name = "n";
  n.op_type = spec.op;
  n.domain = spec.domain;
  n.opset = spec.opset;
  for (const AttrSpec& a : spec.attrs)
    if (p.ConsumeBool()) n.attributes[a.name] = make_attr(p, a);
  if (n.op_type == "Cast") {
    n.attributes["to"].kind = Attribute::Kind::kInt;
    n.attributes["to"].i = static_cast<int64_t>(spec.outputs[0]);  // dlrt's DType numbers are ONNX's
  }
  size_t count = p.ConsumeIntegralInRange<size_t>(spec.min_inputs, spec.inputs.size() + (spec.variadic ? 2 : 0));
  std::map<std::string, dlrt::Tensor> feeds;
  for (size_t i = 0; i < count; ++i) {
    const DType dt = spec.inputs[std::min(i, spec.inputs.size() - 1)];
    if (i >= static_cast<size_t>(spec.min_inputs) && p.ConsumeBool()) {  // an omitted optional input
      n.inputs.push_back(dlrt::ir::kNoValue);
      continue;
    }
    dlrt::Tensor t = make_tensor(p, dt);
    if (t.dtype() != dt) return 0;
    const std::string name = "in" + std::to_string(i);
    const dlrt::ir::ValueId v = g->add_value(name, type_of(t));
    if (p.ConsumeBool()) {
      g->values[v].constant = std::move(t);  // an initializer: the kernel may prepare it at load
    } else {
      g->inputs.push_back(v);
      feeds[name] = std::move(t);
    }
    n.inputs.push_back(v);
  }
  while (!n.inputs.empty() && n.inputs.back() == dlrt::ir::kNoValue) n.inputs.pop_back();
  const size_t outputs = p.ConsumeIntegralInRange<size_t>(1, spec.outputs.size());
  for (size_t i = 0; i < outputs; ++i) {
    dlrt::ir::TypeInfo t;
    t.dtype = spec.outputs[i];
    const dlrt::ir::ValueId v = g->add_value("out" + std::to_string(i), t);
    n.outputs.push_back(v);
    g->outputs.push_back(v);
  }
  g->nodes.push_back(std::move(n));
  if (!g->topological_sort().ok()) return 0;
  auto bytes = dlrt::ir::export_onnx(*g);
  if (!bytes.ok()) return 0;
  dlrt::SessionOptions options;
  options.device = "cpu";
  options.threads = 1;
  auto session = dlrt::Session::create_from_bytes(*bytes, options);
  if (!session.ok()) return 0;
  auto out = (*session)->run(feeds);
  (void)out;
  return 0;
}
