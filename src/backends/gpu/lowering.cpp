#include "backends/gpu/lowering.h"

#include "backends/gpu/lowering_internal.h"

#include "ir/passes/passes.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <optional>

namespace dlrt::gpu {

using namespace lowering_detail;

namespace {

// ---- the op table ----

enum class Data { kFloat, kAny, kNone };  // what input 0 (and the outputs) must be

struct OpInfo {
  Data data = Data::kFloat;
  std::vector<int> host_params;  // inputs that must be host values
  int min_opset = 1;
  std::function<Status(LowerCtx&, const ir::Node&)> lower;  // for ops without epilogues
};

const std::map<std::string, OpInfo>& op_table() {
  static const std::map<std::string, OpInfo> t = [] {
    std::map<std::string, OpInfo> m;
    for (const char* op : {"Relu", "Sigmoid", "Tanh", "Exp", "Log", "Sqrt", "Abs", "Neg", "Erf", "Reciprocal", "Floor",
                           "Ceil", "Softplus", "Sin", "Cos", "Round", "Sign", "Softsign", "Mish", "HardSwish",
                           "LeakyRelu", "Elu", "Selu", "HardSigmoid", "Gelu"})
      m[op] = {Data::kFloat, {}, 1, lower_unary};
    m["Clip"] = {Data::kFloat, {1, 2}, 1, lower_unary};
    for (const char* op : {"Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Sum", "PRelu", "Mod"})
      m[op] = {Data::kFloat, {}, 7, lower_binary};
    for (const char* op : {"Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual"})
      m[op] = {Data::kFloat, {}, 7, lower_compare};
    m["Where"] = {Data::kNone, {}, 9, lower_where};
    m["Cast"] = {Data::kNone, {}, 6, lower_cast};
    m["Identity"] = {Data::kAny, {}, 1, lower_alias};
    m["Dropout"] = {Data::kFloat, {1, 2}, 7, lower_alias};
    m["Gemm"] = {Data::kFloat, {}, 7, nullptr};
    m["MatMul"] = {Data::kFloat, {}, 1, nullptr};
    m["Conv"] = {Data::kFloat, {}, 1, nullptr};
    m["ConvTranspose"] = {Data::kFloat, {}, 1, nullptr};
    m["MaxPool"] = {Data::kFloat, {}, 1, lower_pool};
    m["AveragePool"] = {Data::kFloat, {}, 7, lower_pool};
    m["GlobalAveragePool"] = {Data::kFloat, {}, 1, lower_reduce};
    m["GlobalMaxPool"] = {Data::kFloat, {}, 1, lower_reduce};
    for (const char* op : {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
                           "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp"})
      m[op] = {Data::kFloat, {1}, 1, lower_reduce};
    m["Softmax"] = {Data::kFloat, {}, 1, lower_softmax};
    m["LogSoftmax"] = {Data::kFloat, {}, 1, lower_softmax};
    m["LayerNormalization"] = {Data::kFloat, {}, 17, lower_layernorm};
    m["Reshape"] = {Data::kAny, {1}, 5, lower_reshape};
    m["Flatten"] = {Data::kAny, {}, 1, lower_reshape};
    m["Squeeze"] = {Data::kAny, {1}, 1, lower_reshape};
    m["Unsqueeze"] = {Data::kAny, {1}, 1, lower_reshape};
    m["Transpose"] = {Data::kAny, {}, 1, lower_transpose};
    m["Concat"] = {Data::kAny, {}, 4, lower_concat};
    m["Split"] = {Data::kAny, {1}, 2, lower_split};
    m["Slice"] = {Data::kAny, {1, 2, 3, 4}, 1, lower_slice};
    m["Expand"] = {Data::kAny, {1}, 8, lower_expand};
    m["Gather"] = {Data::kAny, {}, 1, lower_gather};
    m["Resize"] = {Data::kFloat, {1, 2, 3}, 11, lower_resize};
    return m;
  }();
  return t;
}

// The kernels' limits that placement can see in the graph's static types and
// attributes: each is also refused by the op's lowering, and claiming such a
// node would only move the refusal to the first run.
std::string static_shape_reason(const ir::Graph& graph, const ir::Node& node) {
  auto rank_of = [&](size_t input) -> std::optional<size_t> {
    if (input >= node.inputs.size() || node.inputs[input] == ir::kNoValue) return std::nullopt;
    const auto& shape = graph.values[node.inputs[input]].type.shape;
    if (!shape) return std::nullopt;
    return shape->size();
  };
  // A rank the kernel needs: known and equal, or the node stays on the cpu.
  auto needs_rank = [&](size_t input, size_t rank, const char* what) -> std::string {
    std::optional<size_t> r = rank_of(input);
    if (!r) return std::string("the rank of input ") + std::to_string(input) + " is unknown at placement (" + what + ")";
    if (*r != rank) return what;
    return "";
  };
  const std::string& op = node.op_type;
  if (op == "Conv" || op == "ConvTranspose") {
    std::string r = needs_rank(0, 4, "only 2-D convolution");
    if (r.empty()) r = needs_rank(1, 4, "only 2-D convolution");
    return r;
  }
  if (op == "MaxPool" || op == "AveragePool") {
    std::string r = needs_rank(0, 4, "only 2-D pooling");
    if (!r.empty()) return r;
    if (op == "MaxPool" && node.attr_int("storage_order", 0) != 0) return "MaxPool storage_order";
    if (op == "AveragePool")
      for (int64_t d : node.attr_ints("dilations", {}))
        if (d != 1) return "dilated AveragePool";
    return "";
  }
  if (op == "Resize") {
    std::string r = needs_rank(0, 4, "only 4-D Resize");
    if (!r.empty()) return r;
    std::string coord = node.attr_string("coordinate_transformation_mode", "half_pixel");
    std::string nearest = node.attr_string("nearest_mode", "round_prefer_floor");
    if (!resize_coord_codes().count(coord)) return "Resize coordinate_transformation_mode '" + coord + "'";
    if (!resize_nearest_codes().count(nearest)) return "Resize nearest_mode '" + nearest + "'";
    return "";
  }
  return "";
}

}  // namespace

std::string device_unsupported_reason(const ir::Graph& graph, const ir::Node& node,
                                      const std::vector<bool>& host_input) {
  if (!node.domain.empty() && node.domain != "ai.onnx") return "domain '" + node.domain + "' has no GPU kernels";
  auto it = op_table().find(node.op_type);
  if (it == op_table().end()) return "op " + node.op_type + " has no GPU kernel";
  const OpInfo& info = it->second;
  if (node.opset < info.min_opset) return node.op_type + " before opset " + std::to_string(info.min_opset);
  for (int p : info.host_params)
    if (p < static_cast<int>(node.inputs.size()) && node.inputs[p] != ir::kNoValue && !host_input[p])
      return node.op_type + " input " + std::to_string(p) + " must be computed on the host (a constant or shape)";
  // Half-precision values count as float32 for the ops the executor computes
  // in float32 (it rewrites its copy of the graph so, see executor.cpp).
  const bool half_as_float = node.domain.empty() && ir::passes::half_in_float32_op(node.op_type);
  auto as_computed = [&](DType t) {
    return half_as_float && (t == DType::kFloat16 || t == DType::kBFloat16) ? DType::kFloat32 : t;
  };
  auto type_of = [&](ir::ValueId v) {
    return as_computed(v >= 0 && v < static_cast<ir::ValueId>(graph.values.size()) ? graph.values[v].type.dtype
                                                                                    : DType::kUndefined);
  };
  auto kind_of = [&](ir::ValueId v) {
    return v >= 0 && v < static_cast<ir::ValueId>(graph.values.size()) ? graph.values[v].type.kind : ir::ValueKind::kUnknown;
  };
  for (auto v : node.inputs)
    if (v != ir::kNoValue && kind_of(v) != ir::ValueKind::kTensor) return "sequence/optional values stay on the cpu";
  for (auto v : node.outputs)
    if (v != ir::kNoValue && kind_of(v) != ir::ValueKind::kTensor) return "sequence/optional values stay on the cpu";
  if (node.inputs.empty() || node.inputs[0] == ir::kNoValue) return "missing first input";
  DType t0 = type_of(node.inputs[0]);
  if (info.data == Data::kFloat) {
    if (t0 != DType::kFloat32) return std::string("GPU kernels take float32 here, not ") + dtype_name(t0);
    for (auto v : node.outputs)
      if (v != ir::kNoValue && type_of(v) != DType::kFloat32 && node.op_type.find("Equal") == std::string::npos &&
          node.op_type.find("Less") == std::string::npos && node.op_type.find("Greater") == std::string::npos &&
          node.op_type != "Dropout")
        return "float32 output expected";
    if (node.op_type == "PRelu" || binary_code(node.op_type) >= 0)
      for (auto v : node.inputs)
        if (v != ir::kNoValue && type_of(v) != DType::kFloat32) return "all inputs must be float32";
  } else if (info.data == Data::kAny) {
    size_t es = dtype_size(t0);
    if (t0 == DType::kUndefined || t0 == DType::kString || (es != 1 && es != 4 && es != 8))
      return std::string("element type ") + dtype_name(t0) + " not handled";
  }
  const std::string& op = node.op_type;
  if (op == "Gather" && dtype_size(t0) != 4 && dtype_size(t0) != 8) return "Gather of 1-byte elements";
  if (op == "Where") {
    if (type_of(node.inputs[0]) != DType::kBool || node.inputs.size() < 3 || type_of(node.inputs[1]) != DType::kFloat32 ||
        type_of(node.inputs[2]) != DType::kFloat32)
      return "Where needs a bool condition and float32 values";
  }
  if (op == "Cast") {
    DType to = as_computed(static_cast<DType>(node.attr_int("to", 0)));
    DType from = graph.values[node.inputs[0]].type.dtype;
    bool half_border = (to == DType::kFloat32 && (from == DType::kFloat16 || from == DType::kBFloat16)) ||
                       (from == DType::kFloat32 && (to == DType::kFloat16 || to == DType::kBFloat16));
    bool ok = t0 == to || half_border ||
              (to == DType::kFloat32 && (t0 == DType::kInt64 || t0 == DType::kInt32 || t0 == DType::kBool ||
                                         t0 == DType::kUInt8)) ||
              (to == DType::kBool && t0 == DType::kFloat32);
    if (!ok) return std::string("Cast ") + dtype_name(t0) + " -> " + dtype_name(to) + " has no GPU kernel";
  }
  if (op == "LayerNormalization")
    for (size_t i = 1; i < node.outputs.size(); ++i)
      if (node.outputs[i] != ir::kNoValue) return "LayerNormalization Mean/InvStdDev outputs";
  if (op == "MaxPool" && node.outputs.size() > 1 && node.outputs[1] != ir::kNoValue) return "MaxPool Indices output";
  if (op == "Dropout" && node.outputs.size() > 1 && node.outputs[1] != ir::kNoValue) return "Dropout mask output";
  if (op == "Resize") {
    std::string mode = node.attr_string("mode", "nearest");
    if (mode != "nearest" && mode != "linear") return "Resize mode '" + mode + "'";
    if (node.attr_string("coordinate_transformation_mode", "half_pixel") == "tf_crop_and_resize")
      return "Resize tf_crop_and_resize";
    if (node.attr_int("antialias", 0) != 0 || node.has_attr("axes")) return "Resize antialias/axes";
    if (node.attr_string("keep_aspect_ratio_policy", "stretch") != "stretch") return "Resize keep_aspect_ratio_policy";
  }
  if ((op == "Sum" || op == "Max" || op == "Min") && node.inputs.size() > 2) return op + " of more than two inputs";
  if (op == "Mod" && node.attr_int("fmod", 0) != 1) return "Mod without fmod=1";
  return static_shape_reason(graph, node);
}

bool epilogue_of(const ir::Node& node, const std::vector<const Tensor*>& host, Epilogue* epi) {
  static const std::map<std::string, bool> ok = {{"Relu", true}, {"Clip", true}, {"Sigmoid", true},
                                                 {"LeakyRelu", true}, {"HardSigmoid", true}, {"HardSwish", true},
                                                 {"Tanh", true}, {"Gelu", true}, {"Erf", false}};
  auto it = ok.find(node.op_type);
  if (it == ok.end() || !it->second || !node.domain.empty()) return false;
  auto u = unary_info(node, host);
  if (!u.ok()) return false;
  *epi = {u->act, u->a, u->b};
  return true;
}

Status lower_node(LowerCtx& c, const ir::Node& n, const Epilogue& epi, ir::ValueId out_override) {
  const std::string& op = n.op_type;
  ir::ValueId out = out0(n, out_override);
  if (op == "Gemm") return lower_gemm(c, n, epi, out);
  if (op == "MatMul") return lower_matmul(c, n, epi, out, ir::kNoValue);
  if (op == "Conv") return lower_conv(c, n, epi, out);
  if (op == "ConvTranspose") return lower_convtranspose(c, n, epi, out);
  auto it = op_table().find(op);
  if (it == op_table().end() || !it->second.lower) return unsup(n, "no GPU lowering");
  return it->second.lower(c, n);
}

Status lower_matmul_bias(LowerCtx& c, const ir::Node& n, ir::ValueId bias, ir::ValueId out, const Epilogue& epi) {
  return lower_matmul(c, n, epi, out, bias);
}

}  // namespace dlrt::gpu
