#include "runtime/canary_model.h"

#include <cmath>
#include <cstdlib>
#include <memory>

#include "core/tensor_values.h"
#include "ir/graph.h"
#include "ir/onnx_export.h"

namespace dlrt {

namespace {

constexpr int64_t kIn = 256, kOut = 2048, kCols = 8;

// The element types graph inputs and outputs take in the check.
constexpr DType kTypes[] = {DType::kFloat16, DType::kFloat64, DType::kInt8, DType::kInt16, DType::kInt32,
                            DType::kInt64,   DType::kUInt8,   DType::kBool};

// Small, exactly representable values: v/4 for floats, v for integers
// (its magnitude for unsigned ones), v odd for bool.
void fill(Tensor& t, int seed) {
  for (int64_t i = 0; i < t.size(); ++i) {
    const int v = static_cast<int>((i * 37 + seed * 11) % 19) - 9;
    const float f = static_cast<float>(v) / 4.0f;
    double value = v;
    if (dtype_is_float(t.dtype())) value = f;
    else if (t.dtype() == DType::kBool) value = v & 1;
    else if (t.dtype() == DType::kUInt8) value = std::abs(v);
    set_element_from_double(t, i, value);
  }
}

class Builder {
 public:
  Builder() : g_(std::make_shared<ir::Graph>()) {
    g_->name = "dlrt_canary";
    g_->opsets[""] = 17;
  }
  ir::TypeInfo type(DType dt, std::vector<ir::Dim> dims) {
    ir::TypeInfo t;
    t.dtype = dt;
    t.shape = std::move(dims);
    return t;
  }
  ir::ValueId input(const std::string& name, DType dt, int64_t cols) {
    ir::ValueId v = g_->add_value(name, type(dt, {ir::Dim{-1, "batch"}, ir::Dim{cols, ""}}));
    g_->inputs.push_back(v);
    return v;
  }
  ir::ValueId constant(const std::string& name, Tensor t) {
    std::vector<ir::Dim> dims;
    for (int64_t d : t.shape()) dims.push_back(ir::Dim{d, ""});
    ir::ValueId v = g_->add_value(name, type(t.dtype(), dims));
    g_->values[v].constant = std::move(t);
    return v;
  }
  ir::ValueId node(const std::string& op, std::vector<ir::ValueId> inputs, const std::string& out, DType dt,
                   int64_t cols, ir::Attributes attrs = {}) {
    ir::Node n;
    n.name = out;
    n.op_type = op;
    n.opset = 17;
    n.inputs = std::move(inputs);
    n.attributes = std::move(attrs);
    ir::ValueId o = g_->add_value(out, type(dt, {ir::Dim{-1, "batch"}, ir::Dim{cols, ""}}));
    n.outputs = {o};
    g_->nodes.push_back(std::move(n));
    return o;
  }
  void output(ir::ValueId v) { g_->outputs.push_back(v); }
  std::shared_ptr<ir::Graph> graph() { return g_; }

 private:
  std::shared_ptr<ir::Graph> g_;
};

ir::Attributes cast_to(DType dt) {
  ir::Attribute a;
  a.kind = ir::Attribute::Kind::kInt;
  a.i = static_cast<int64_t>(dt);
  return {{"to", a}};
}

}  // namespace

Result<CanaryModel> make_canary_model() {
  Builder b;
  // The large constant: y = Relu(x W + bias).
  ir::ValueId x = b.input("x", DType::kFloat32, kIn);
  DLRT_ASSIGN_OR_RETURN(Tensor w, Tensor::allocate(DType::kFloat32, {kIn, kOut}));
  DLRT_ASSIGN_OR_RETURN(Tensor bias, Tensor::allocate(DType::kFloat32, {kOut}));
  for (int64_t i = 0; i < w.size(); ++i) w.data<float>()[i] = std::sin(0.37f * static_cast<float>(i)) * 0.05f;
  for (int64_t i = 0; i < bias.size(); ++i) bias.data<float>()[i] = std::cos(0.11f * static_cast<float>(i)) * 0.1f;
  ir::ValueId mm = b.node("MatMul", {x, b.constant("w", std::move(w))}, "mm", DType::kFloat32, kOut);
  ir::ValueId add = b.node("Add", {mm, b.constant("bias", std::move(bias))}, "mm_bias", DType::kFloat32, kOut);
  b.output(b.node("Relu", {add}, "y", DType::kFloat32, kOut));
  // Every element type in and out: an op that keeps the type, and a cast to float32.
  ir::ValueId sum = ir::kNoValue;
  for (DType dt : kTypes) {
    const std::string name = std::string("in_") + dtype_name(dt);
    ir::ValueId in = b.input(name, dt, kCols);
    if (dt == DType::kBool) b.output(b.node("Not", {in}, std::string("same_") + dtype_name(dt), dt, kCols));
    else b.output(b.node("Add", {in, in}, std::string("same_") + dtype_name(dt), dt, kCols));
    ir::ValueId f = b.node("Cast", {in}, std::string("f32_") + dtype_name(dt), DType::kFloat32, kCols,
                           cast_to(DType::kFloat32));
    sum = sum == ir::kNoValue ? f : b.node("Add", {sum, f}, std::string("sum_") + dtype_name(dt), DType::kFloat32, kCols);
  }
  b.output(sum);
  auto g = b.graph();
  DLRT_RETURN_IF_ERROR(g->topological_sort());
  CanaryModel m;
  DLRT_ASSIGN_OR_RETURN(m.onnx, ir::export_onnx(*g));
  int seed = 0;
  for (int64_t batch : {1, 3}) {
    std::map<std::string, Tensor> feeds;
    for (ir::ValueId v : g->inputs) {
      const auto& val = g->values[v];
      DLRT_ASSIGN_OR_RETURN(Tensor t, Tensor::allocate(val.type.dtype, {batch, (*val.type.shape)[1].size}));
      fill(t, ++seed);
      feeds[val.name] = std::move(t);
    }
    m.feeds.push_back(std::move(feeds));
  }
  return m;
}

}  // namespace dlrt
