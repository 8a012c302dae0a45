// int4/uint4 (ONNX opset 21): packed in model files, unpacked in dlrt's
// tensors; QuantizeLinear saturates to 4 bits, DequantizeLinear reads them.
// Models are built here with ONNX's protobuf classes (test code only).
#include <gtest/gtest.h>

#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

#include "dlrt/session.h"

namespace dlrt {
namespace {

constexpr int kUInt4 = 21, kInt4 = 22;

void add_io(onnx::ValueInfoProto* vi, const std::string& name, int elem, std::vector<int64_t> dims) {
  vi->set_name(name);
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(elem);
  for (int64_t d : dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
}

onnx::NodeProto* add_node(onnx::GraphProto* g, const std::string& op, std::vector<std::string> in, std::string out) {
  auto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(op + "_" + out);
  for (auto& i : in) n->add_input(i);
  n->add_output(out);
  return n;
}

// Packs 4-bit values two per byte, the lower index in the lower nibble.
std::string pack(const std::vector<int>& v) {
  std::string out((v.size() + 1) / 2, '\0');
  for (size_t i = 0; i < v.size(); ++i) out[i / 2] = static_cast<char>(out[i / 2] | ((v[i] & 0x0F) << ((i & 1) * 4)));
  return out;
}

// A 4-bit initializer: packed in raw_data, or one packed byte per int32_data
// entry; 1-D, or a scalar when `scalar`.
void add_4bit(onnx::GraphProto* g, const std::string& name, int type, const std::vector<int>& v, bool raw,
              bool scalar = false) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(type);
  if (!scalar) t->add_dims(static_cast<int64_t>(v.size()));
  const std::string packed = pack(v);
  if (raw) t->set_raw_data(packed);
  else for (char c : packed) t->add_int32_data(static_cast<uint8_t>(c));
}

onnx::ModelProto model21() {
  onnx::ModelProto m;
  m.set_ir_version(10);
  m.add_opset_import()->set_version(21);
  m.mutable_graph()->set_name("int4");
  return m;
}

Result<std::vector<Tensor>> run(const onnx::ModelProto& m, std::map<std::string, Tensor> feeds) {
  auto s = Session::create_from_bytes(m.SerializeAsString());
  if (!s.ok()) return s.status();
  return (*s)->run(feeds);
}

TEST(Int4, DequantizeLinearReadsPackedInitializers) {
  // An odd count (the last byte half used), negative values, both encodings.
  const std::vector<int> w4 = {-8, 7, 1, -1, 3}, wu4 = {15, 0, 9, 4, 1};
  for (bool raw : {false, true}) {
    onnx::ModelProto m = model21();
    auto* g = m.mutable_graph();
    add_4bit(g, "w", kInt4, w4, raw);
    add_4bit(g, "wz", kInt4, {-2}, raw, true);
    add_4bit(g, "u", kUInt4, wu4, raw);
    auto* s = g->add_initializer();
    s->set_name("s");
    s->set_data_type(onnx::TensorProto::FLOAT);
    s->add_float_data(0.5f);
    add_node(g, "DequantizeLinear", {"w", "s", "wz"}, "y");
    add_node(g, "DequantizeLinear", {"u", "s"}, "z");
    add_io(g->add_output(), "y", onnx::TensorProto::FLOAT, {5});
    add_io(g->add_output(), "z", onnx::TensorProto::FLOAT, {5});
    auto r = run(m, {});
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    for (int i = 0; i < 5; ++i) {
      EXPECT_FLOAT_EQ((*r)[0].data<float>()[i], (w4[i] + 2) * 0.5f) << "raw=" << raw << " i=" << i;
      EXPECT_FLOAT_EQ((*r)[1].data<float>()[i], wu4[i] * 0.5f) << "raw=" << raw << " i=" << i;
    }
  }
}

TEST(Int4, QuantizeLinearSaturatesToFourBits) {
  for (int type : {kInt4, kUInt4}) {
    onnx::ModelProto m = model21();
    auto* g = m.mutable_graph();
    auto* s = g->add_initializer();
    s->set_name("s");
    s->set_data_type(onnx::TensorProto::FLOAT);
    s->add_float_data(1.0f);
    add_4bit(g, "z", type, {type == kInt4 ? 1 : 3}, true, true);
    add_node(g, "QuantizeLinear", {"x", "s", "z"}, "q");
    add_node(g, "Reshape", {"q", "shape"}, "y");  // 4-bit values through a data-movement op
    auto* shape = g->add_initializer();
    shape->set_name("shape");
    shape->set_data_type(onnx::TensorProto::INT64);
    shape->add_dims(2);
    shape->add_int64_data(2);
    shape->add_int64_data(3);
    add_io(g->add_input(), "x", onnx::TensorProto::FLOAT, {6});
    add_io(g->add_output(), "y", type, {2, 3});
    auto r = run(m, {{"x", Tensor::from_vector<float>({6}, {-100.0f, -8.5f, 0.5f, 1.5f, 5.0f, 100.0f})}});
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    const Tensor& y = (*r)[0];
    ASSERT_EQ(y.dtype(), type == kInt4 ? DType::kInt4 : DType::kUInt4);
    ASSERT_EQ(y.shape(), (Shape{2, 3}));
    if (type == kInt4) {
      // round half to even, + 1, clamped to [-8, 7]
      EXPECT_EQ(std::vector<int8_t>(y.data<int8_t>(), y.data<int8_t>() + 6), (std::vector<int8_t>{-8, -7, 1, 3, 6, 7}));
    } else {
      EXPECT_EQ(std::vector<uint8_t>(y.data<uint8_t>(), y.data<uint8_t>() + 6),
                (std::vector<uint8_t>{0, 0, 3, 5, 8, 15}));
    }
  }
}

TEST(Int4, CastRoundsToNearestEvenThenWraps) {
  // ONNX's notes on the 4-bit types: Cast rounds to the nearest integer, ties
  // to even, then truncates to 4 bits. (dlrt truncated toward zero: -1.7 gave
  // -1, 3.5 gave 3; ONNX Runtime 1.31 rounds ties away from zero: 2.5 -> 3.)
  const std::vector<float> x = {-1.7f, 3.5f, 7.9f, -8.6f, 2.5f, -2.5f, 0.5f, 15.5f};
  for (int type : {kInt4, kUInt4}) {
    onnx::ModelProto m = model21();
    auto* g = m.mutable_graph();
    auto* c = add_node(g, "Cast", {"x"}, "c");
    auto* to = c->add_attribute();
    to->set_name("to");
    to->set_type(onnx::AttributeProto::INT);
    to->set_i(type);
    add_node(g, "Cast", {"c"}, "y")->add_attribute()->CopyFrom(*to);
    g->mutable_node(1)->mutable_attribute(0)->set_i(onnx::TensorProto::FLOAT);
    add_io(g->add_input(), "x", onnx::TensorProto::FLOAT, {8});
    add_io(g->add_output(), "y", onnx::TensorProto::FLOAT, {8});
    auto r = run(m, {{"x", Tensor::from_vector<float>({8}, x)}});
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    // Rounded: -2, 4, 8, -9, 2, -2, 0, 16; then the low 4 bits.
    const std::vector<float> want =
        type == kInt4 ? std::vector<float>{-2, 4, -8, 7, 2, -2, 0, 0} : std::vector<float>{14, 4, 8, 7, 2, 14, 0, 0};
    EXPECT_EQ(std::vector<float>((*r)[0].data<float>(), (*r)[0].data<float>() + 8), want) << "type " << type;
  }
}

TEST(Int4, WrongPackedSizeIsAnInvalidModel) {
  onnx::ModelProto m = model21();
  auto* g = m.mutable_graph();
  auto* t = g->add_initializer();
  t->set_name("w");
  t->set_data_type(kInt4);
  t->add_dims(5);
  t->set_raw_data(std::string(2, '\0'));  // 5 values need 3 bytes
  auto* s = g->add_initializer();
  s->set_name("s");
  s->set_data_type(onnx::TensorProto::FLOAT);
  s->add_float_data(1.0f);
  add_node(g, "DequantizeLinear", {"w", "s"}, "y");
  add_io(g->add_output(), "y", onnx::TensorProto::FLOAT, {5});
  auto r = Session::create_from_bytes(m.SerializeAsString());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidModel);
  // dlrt's reader ("packed int4") or ONNX's checker, whichever sees it first.
  const std::string& msg = r.status().message();
  EXPECT_TRUE(msg.find("packed int4") != std::string::npos || msg.find("(3 bytes required)") != std::string::npos)
      << msg;
}

TEST(Int4, NamesAndSizes) {
  EXPECT_STREQ(dtype_name(DType::kInt4), "int4");
  EXPECT_STREQ(dtype_name(DType::kUInt4), "uint4");
  EXPECT_EQ(dtype_from_name("uint4"), DType::kUInt4);
  EXPECT_EQ(dtype_size(DType::kInt4), 1u);  // unpacked in memory
  EXPECT_TRUE(dtype_is_valid(22));
  EXPECT_FALSE(dtype_is_int(DType::kInt4));
}

}  // namespace
}  // namespace dlrt
