#include "op_cases.h"

// Test tables use brace-initialised structs with trailing defaults.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "../cpu/kernel_test_util.h"

namespace dlrt::testing::ops {

AttrFn ai(int64_t v) {
  return [v](onnx::AttributeProto* a) { a->set_type(onnx::AttributeProto::INT); a->set_i(v); };
}
AttrFn af(float v) {
  return [v](onnx::AttributeProto* a) { a->set_type(onnx::AttributeProto::FLOAT); a->set_f(v); };
}
AttrFn as(std::string v) {
  return [v](onnx::AttributeProto* a) { a->set_type(onnx::AttributeProto::STRING); a->set_s(v); };
}
AttrFn ais(std::vector<int64_t> v) {
  return [v](onnx::AttributeProto* a) {
    a->set_type(onnx::AttributeProto::INTS);
    for (auto x : v) a->add_ints(x);
  };
}

OpInput f(std::string name, Shape s) { return OpInput{std::move(name), std::move(s)}; }
OpInput w(std::string name, Shape s) { OpInput i{std::move(name), std::move(s)}; i.initializer = true; return i; }
OpInput ints(std::string name, std::vector<int64_t> v) {
  OpInput i{std::move(name), {static_cast<int64_t>(v.size())}, onnx::TensorProto::INT64, true, v};
  return i;
}
OpInput fconst(std::string name, std::vector<float> v, Shape s) {
  OpInput i{std::move(name), s, onnx::TensorProto::FLOAT, true};
  i.float_values = std::move(v);
  return i;
}

namespace {

using cpu::testing::random_floats;

// one_node_model's range of random values.
constexpr float kLo = -2.0f, kHi = 2.0f;

}  // namespace

int64_t numel(const Shape& s) {
  int64_t n = 1;
  for (auto d : s) n *= d;
  return n;
}

std::string one_node_model(const OpCase& c, std::mt19937& rng, std::map<std::string, Tensor>& feeds) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(c.opset);
  auto* g = m.mutable_graph();
  g->set_name(c.label);
  auto* n = g->add_node();
  n->set_op_type(c.op);
  n->set_name(c.op);
  for (const auto& in : c.inputs) {
    n->add_input(in.name);
    if (in.name.empty()) continue;
    if (in.initializer) {
      auto* t = g->add_initializer();
      t->set_name(in.name);
      t->set_data_type(in.dtype);
      for (auto d : in.shape) t->add_dims(d);
      if (in.dtype == onnx::TensorProto::INT64)
        for (auto v : in.int_values) t->add_int64_data(v);
      else
        for (auto v : in.float_values.empty() ? random_floats(numel(in.shape), rng, kLo, kHi) : in.float_values)
          t->add_float_data(v);
      continue;
    }
    auto* vi = g->add_input();
    vi->set_name(in.name);
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(in.dtype);
    for (auto d : in.shape) tt->mutable_shape()->add_dim()->set_dim_value(d);
    if (in.dtype == onnx::TensorProto::INT64) {
      feeds[in.name] = Tensor::from_vector<int64_t>(in.shape, in.int_values);
    } else if (in.dtype == onnx::TensorProto::BOOL) {
      auto t = Tensor::allocate(DType::kBool, in.shape).value();
      for (int64_t i = 0; i < t.size(); ++i) static_cast<uint8_t*>(t.raw_data())[i] = (rng() & 1);
      feeds[in.name] = t;
    } else {
      feeds[in.name] = Tensor::from_vector<float>(in.shape, random_floats(numel(in.shape), rng, kLo, kHi));
    }
  }
  for (int i = 0; i < c.outputs; ++i) {
    std::string o = "y" + std::to_string(i);
    n->add_output(o);
    auto* vo = g->add_output();
    vo->set_name(o);
    bool cmp = c.op == "Greater" || c.op == "Less" || c.op == "Equal";
    vo->mutable_type()->mutable_tensor_type()->set_elem_type(cmp ? onnx::TensorProto::BOOL : onnx::TensorProto::FLOAT);
    vo->mutable_type()->mutable_tensor_type()->mutable_shape();
  }
  for (const auto& [k, fn] : c.attrs) {
    auto* a = n->add_attribute();
    a->set_name(k);
    fn(a);
  }
  return m.SerializeAsString();
}

double max_rel_error(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) return INFINITY;
  if (a.dtype() != DType::kFloat32)
    return a.nbytes() == b.nbytes() && std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()) == 0 ? 0 : INFINITY;
  double scale = 1e-6, err = 0;
  for (int64_t i = 0; i < a.size(); ++i) {
    double x = a.data<float>()[i], y = b.data<float>()[i];
    if (std::isnan(x) != std::isnan(y)) return INFINITY;
    if (std::isnan(x) || (std::isinf(x) && x == y)) continue;
    scale = std::max(scale, std::abs(y));
    err = std::max(err, std::abs(x - y));
  }
  return err / scale;
}

Result<std::vector<Tensor>> run_on(const std::string& model, const std::map<std::string, Tensor>& feeds,
                                   const std::string& device, RunReport* report, bool strict, bool optimize) {
  SessionOptions o;
  o.device = device;
  o.strict = strict && device != "cpu";
  o.optimize = optimize;
  o.threads = 1;
  DLRT_ASSIGN_OR_RETURN(auto s, Session::create_from_bytes(model, o));
  return s->run(feeds, report);
}

std::vector<OpCase> op_cases() {
  std::vector<OpCase> c;
  // Unary and activations, odd sizes.
  for (const char* op : {"Relu", "Sigmoid", "Tanh", "Exp", "Abs", "Neg", "Erf", "Floor", "Ceil", "Softplus", "Sin",
                         "HardSwish", "Softsign", "Round", "Sign"})
    c.push_back({op, op, {f("x", {3, 7, 5})}});
  c.push_back({"Sqrt", "Sqrt", {fconst("x", random_floats(35, 1u, 0.1f, 4.0f), {5, 7})}});
  c.push_back({"Log", "Log", {fconst("x", random_floats(35, 2u, 0.1f, 4.0f), {5, 7})}});
  c.push_back({"Reciprocal", "Reciprocal", {fconst("x", random_floats(35, 3u, 0.5f, 4.0f), {5, 7})}});
  c.push_back({"LeakyRelu", "LeakyRelu", {f("x", {2, 9})}, {{"alpha", af(0.13f)}}});
  c.push_back({"Elu", "Elu", {f("x", {2, 9})}, {{"alpha", af(0.7f)}}});
  c.push_back({"HardSigmoid", "HardSigmoid", {f("x", {11})}, {{"alpha", af(0.3f)}, {"beta", af(0.4f)}}});
  c.push_back({"Gelu", "Gelu", {f("x", {4, 13})}, {}, 20});
  c.push_back({"Clip11", "Clip", {f("x", {6, 5}), fconst("lo", {-0.5f}), fconst("hi", {0.75f})}});
  c.push_back({"Clip6", "Clip", {f("x", {6, 5})}, {{"min", af(-1.0f)}, {"max", af(0.5f)}}, 6});
  // Binary with broadcasting.
  for (const char* op : {"Add", "Sub", "Mul", "Div", "Max", "Min"}) {
    c.push_back({std::string(op) + "_same", op, {f("a", {3, 5, 7}), f("b", {3, 5, 7})}});
    c.push_back({std::string(op) + "_bcast", op, {f("a", {2, 1, 7}), f("b", {3, 1})}});
    c.push_back({std::string(op) + "_scalar", op, {f("a", {4, 3}), w("b", {})}});
  }
  c.push_back({"Pow", "Pow", {fconst("a", random_floats(15, 4u, 0.2f, 3.0f), {3, 5}), f("b", {5})}});
  c.push_back({"PRelu", "PRelu", {f("x", {2, 3, 4, 5}), w("slope", {3, 1, 1})}});
  c.push_back({"Where", "Where", {OpInput{"c", {3, 1, 5}, onnx::TensorProto::BOOL}, f("x", {4, 5}), f("z", {3, 4, 1})}});
  c.push_back({"Greater", "Greater", {f("a", {3, 4}), f("b", {4})}});
  // GEMM family.
  c.push_back({"MatMul_odd", "MatMul", {f("a", {37, 29}), f("b", {29, 67})}});
  c.push_back({"MatMul_batched_bcast", "MatMul", {f("a", {2, 3, 17, 9}), f("b", {3, 9, 5})}});
  c.push_back({"MatMul_vec", "MatMul", {f("a", {9}), f("b", {2, 9, 6})}});
  c.push_back({"MatMul_5d", "MatMul", {f("a", {2, 2, 2, 3, 4}), f("b", {2, 1, 2, 4, 3})}});
  c.push_back({"Gemm_tt_bias", "Gemm", {f("a", {13, 7}), w("b", {66, 13}), w("c", {66})},
               {{"transA", ai(1)}, {"transB", ai(1)}, {"alpha", af(0.5f)}, {"beta", af(2.0f)}}});
  c.push_back({"Gemm_colbias", "Gemm", {f("a", {5, 70}), w("b", {70, 3}), w("c", {5, 1})}});
  // Convolution and pooling.
  c.push_back({"Conv_3x3_pad_stride", "Conv", {f("x", {2, 3, 11, 9}), w("w", {5, 3, 3, 3}), w("b", {5})},
               {{"pads", ais({1, 1, 1, 1})}, {"strides", ais({2, 1})}}});
  c.push_back({"Conv_1x1", "Conv", {f("x", {1, 8, 5, 7}), w("w", {6, 8, 1, 1})}});
  c.push_back({"Conv_group_batch3", "Conv", {f("x", {3, 4, 7, 6}), w("w", {6, 2, 3, 3}), w("b", {6})},
               {{"group", ai(2)}, {"pads", ais({1, 1, 0, 1})}}});
  c.push_back({"Conv_wide_plane_batch2", "Conv", {f("x", {2, 3, 40, 33}), w("w", {4, 3, 3, 3})},
               {{"pads", ais({1, 1, 1, 1})}}});
  c.push_back({"Conv_group_dil", "Conv", {f("x", {1, 4, 9, 9}), w("w", {6, 2, 3, 3})},
               {{"group", ai(2)}, {"dilations", ais({2, 2})}, {"auto_pad", as("SAME_UPPER")}}});
  c.push_back({"Conv_depthwise", "Conv", {f("x", {2, 6, 8, 7}), w("w", {6, 1, 3, 3}), w("b", {6})},
               {{"group", ai(6)}, {"pads", ais({1, 0, 1, 2})}, {"strides", ais({2, 2})}}});
  c.push_back({"ConvTranspose_2x2_s2", "ConvTranspose", {f("x", {2, 6, 5, 4}), w("w", {6, 3, 2, 2}), w("b", {3})},
               {{"strides", ais({2, 2})}}});
  c.push_back({"ConvTranspose_3x3_pad_outpad_dil", "ConvTranspose", {f("x", {1, 4, 6, 5}), w("w", {4, 5, 3, 3})},
               {{"strides", ais({2, 3})}, {"pads", ais({1, 0, 2, 1})}, {"output_padding", ais({1, 2})},
                {"dilations", ais({1, 2})}}});
  c.push_back({"ConvTranspose_group_outshape", "ConvTranspose", {f("x", {1, 4, 5, 5}), w("w", {4, 2, 3, 3}), w("b", {4})},
               {{"group", ai(2)}, {"strides", ais({2, 2})}, {"output_shape", ais({10, 9})}, {"auto_pad", as("SAME_UPPER")}}});
  c.push_back({"ConvTranspose_same_lower", "ConvTranspose", {f("x", {1, 3, 4, 5}), w("w", {3, 2, 3, 3})},
               {{"strides", ais({2, 2})}, {"auto_pad", as("SAME_LOWER")}}});
  c.push_back({"MaxPool", "MaxPool", {f("x", {1, 3, 10, 9})},
               {{"kernel_shape", ais({3, 3})}, {"strides", ais({2, 2})}, {"pads", ais({1, 1, 1, 1})}, {"ceil_mode", ai(1)}}});
  c.push_back({"AveragePool", "AveragePool", {f("x", {2, 2, 7, 8})},
               {{"kernel_shape", ais({3, 2})}, {"pads", ais({1, 0, 1, 1})}, {"count_include_pad", ai(1)}}});
  c.push_back({"GlobalAveragePool", "GlobalAveragePool", {f("x", {2, 5, 3, 7})}});
  c.push_back({"GlobalMaxPool", "GlobalMaxPool", {f("x", {1, 5, 4, 3})}});
  // Normalisation, reductions.
  c.push_back({"Softmax_last", "Softmax", {f("x", {3, 4, 37})}});
  c.push_back({"Softmax_mid", "Softmax", {f("x", {3, 5, 6})}, {{"axis", ai(1)}}});
  c.push_back({"Softmax_v11", "Softmax", {f("x", {3, 5, 6})}, {{"axis", ai(1)}}, 11});
  c.push_back({"LogSoftmax", "LogSoftmax", {f("x", {7, 300})}});
  c.push_back({"LayerNorm", "LayerNormalization", {f("x", {2, 5, 33}), w("s", {33}), w("b", {33})},
               {{"epsilon", af(1e-5f)}}});
  c.push_back({"LayerNorm_axis1", "LayerNormalization", {f("x", {3, 4, 5}), w("s", {4, 5})}, {{"axis", ai(1)}}});
  for (const char* op : {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceL2", "ReduceLogSumExp"})
    c.push_back({op, op, {f("x", {3, 4, 5, 6}), ints("axes", {1, -1})}, {{"keepdims", ai(0)}}, 18});
  c.push_back({"ReduceMean_v13_attr", "ReduceMean", {f("x", {3, 4, 5})}, {{"axes", ais({0, 2})}}, 13});
  c.push_back({"ReduceSum_all", "ReduceSum", {f("x", {3, 7})}, {}, 13});
  // Data movement (Reshape-likes alias the input).
  c.push_back({"Transpose", "Transpose", {f("x", {2, 3, 4, 5})}, {{"perm", ais({3, 1, 0, 2})}}});
  c.push_back({"Concat", "Concat", {f("a", {2, 3, 5}), f("b", {2, 1, 5}), f("c", {2, 4, 5})}, {{"axis", ai(1)}}});
  c.push_back({"Slice_steps", "Slice", {f("x", {6, 7, 8}), ints("s", {5, 1}), ints("e", {-100, 7}), ints("a", {0, 2}),
                                         ints("st", {-2, 3})}});
  c.push_back({"Split", "Split", {f("x", {4, 9}), ints("sp", {2, 7})}, {{"axis", ai(1)}}, 17, 2});
  c.push_back({"Expand", "Expand", {f("x", {3, 1}), ints("s", {2, 3, 4})}});
  c.push_back({"Gather_axis1", "Gather", {f("x", {3, 5, 4}), ints("i", {4, 0, -1, 2})}, {{"axis", ai(1)}}});
  c.push_back({"Gather_embed", "Gather", {w("x", {50, 8}), OpInput{"i", {2, 3}, onnx::TensorProto::INT64, false, {1, 49, 7, 0, 3, 3}}}});
  c.push_back({"Reshape", "Reshape", {f("x", {2, 3, 4}), ints("s", {0, -1})}});
  c.push_back({"Flatten", "Flatten", {f("x", {2, 3, 4})}, {{"axis", ai(2)}}});
  c.push_back({"Squeeze", "Squeeze", {f("x", {2, 1, 4}), ints("a", {1})}});
  c.push_back({"Unsqueeze", "Unsqueeze", {f("x", {2, 4}), ints("a", {0, 3})}});
  c.push_back({"Resize_nearest", "Resize", {f("x", {1, 2, 3, 4}), OpInput{"", {}}, fconst("sc", {1, 1, 2, 1.5f}, {4})},
               {{"mode", as("nearest")}}, 13});
  c.push_back({"Resize_linear_sizes", "Resize", {f("x", {1, 2, 5, 4}), OpInput{"", {}}, OpInput{"", {}}, ints("sz", {1, 2, 3, 9})},
               {{"mode", as("linear")}, {"coordinate_transformation_mode", as("align_corners")}}, 13});
  return c;
}

}  // namespace dlrt::testing::ops
