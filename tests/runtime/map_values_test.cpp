// Maps and sequences of maps through the public API: ZipMap's output and
// DictVectorizer's input via Session::run_values, the type strings of
// TensorInfo, and the errors for a value of the wrong kind.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "dlrt/session.h"
#include "../onnx_proto_util.h"

namespace dlrt {
namespace {

using testing::add_onnx_node;
using testing::add_unshaped_value_info;
using testing::start_model;

onnx::GraphProto* ml_model(onnx::ModelProto& m, const std::string& name) {
  auto* g = start_model(m, 17, name);
  auto* ml = m.add_opset_import();
  ml->set_domain("ai.onnx.ml");
  ml->set_version(3);
  return g;
}

// X float [N, 3] -> ZipMap with int64 labels 7, 8, 9 (or strings).
std::string zipmap_model(bool string_labels) {
  onnx::ModelProto m;
  auto* g = ml_model(m, "zipmap");
  add_unshaped_value_info(g->add_input(), "x", onnx::TensorProto::FLOAT);
  auto* n = add_onnx_node(g, "ZipMap", {"x"}, "y");
  n->set_domain("ai.onnx.ml");
  auto* a = n->add_attribute();
  if (string_labels) {
    a->set_name("classlabels_strings");
    a->set_type(onnx::AttributeProto::STRINGS);
    for (const char* s : {"a", "b", "c"}) a->add_strings(s);
  } else {
    a->set_name("classlabels_int64s");
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t v : {7, 8, 9}) a->add_ints(v);
  }
  auto* y = g->add_output();
  y->set_name("y");
  auto* mt = y->mutable_type()->mutable_sequence_type()->mutable_elem_type()->mutable_map_type();
  mt->set_key_type(string_labels ? onnx::TensorProto::STRING : onnx::TensorProto::INT64);
  mt->mutable_value_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  return m.SerializeAsString();
}

// map(string -> float) -> DictVectorizer over "a", "b", "c" -> [1, 3]; with
// `also_relu`, the map also feeds a Relu (which no map may).
std::string dict_vectorizer_model(bool also_relu = false) {
  onnx::ModelProto m;
  auto* g = ml_model(m, "dv");
  auto* x = g->add_input();
  x->set_name("x");
  auto* mt = x->mutable_type()->mutable_map_type();
  mt->set_key_type(onnx::TensorProto::STRING);
  mt->mutable_value_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  auto* n = add_onnx_node(g, "DictVectorizer", {"x"}, "y");
  n->set_domain("ai.onnx.ml");
  auto* a = n->add_attribute();
  a->set_name("string_vocabulary");
  a->set_type(onnx::AttributeProto::STRINGS);
  for (const char* s : {"a", "b", "c"}) a->add_strings(s);
  add_unshaped_value_info(g->add_output(), "y", onnx::TensorProto::FLOAT);
  if (also_relu) {
    add_onnx_node(g, "Relu", {"x"}, "z");
    add_unshaped_value_info(g->add_output(), "z", onnx::TensorProto::FLOAT);
  }
  return m.SerializeAsString();
}

TEST(MapValues, ZipMapGivesOneMapPerRow) {
  for (bool strings : {false, true}) {
    auto s = Session::create_from_bytes(zipmap_model(strings));
    ASSERT_TRUE(s.ok()) << s.status().to_string();
    EXPECT_EQ((*s)->outputs()[0].type, strings ? "seq(map(string,tensor(float)))" : "seq(map(int64,tensor(float)))");
    EXPECT_FALSE((*s)->outputs()[0].is_tensor);
    EXPECT_EQ((*s)->inputs()[0].type, "tensor(float)");
    Tensor x = Tensor::from_vector<float>({2, 3}, {1, 2, 3, 4, 5, 6});
    auto r = (*s)->run_values({{"x", Value::of(x)}});
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    const Value& y = (*r)[0];
    ASSERT_EQ(y.kind, Value::Kind::kMapSequence);
    ASSERT_EQ(y.keys.shape(), (Shape{3}));
    if (strings) EXPECT_EQ(y.keys.data<std::string>()[2], "c");
    else EXPECT_EQ(y.keys.data<int64_t>()[1], 8);
    ASSERT_EQ(y.values.shape(), (Shape{2, 3}));
    EXPECT_EQ(y.values.data<float>()[4], 5.0f);
    // The run's values alias neither the input nor the model: writing into
    // one run's keys leaves the next run's alone.
    EXPECT_NE(y.values.raw_data(), x.raw_data());
    if (strings) (*r)[0].keys.data<std::string>()[0] = "changed";
    else (*r)[0].keys.data<int64_t>()[0] = -5;
    auto again = (*s)->run_values({{"x", Value::of(x)}});
    ASSERT_TRUE(again.ok()) << again.status().to_string();
    if (strings) EXPECT_EQ((*again)[0].keys.data<std::string>()[0], "a");
    else EXPECT_EQ((*again)[0].keys.data<int64_t>()[0], 7);
    // A 1-D X is one row; Session::run cannot return maps and says what can.
    auto one = (*s)->run_values({{"x", Value::of(Tensor::from_vector<float>({3}, {1, 2, 3}))}});
    ASSERT_TRUE(one.ok()) << one.status().to_string();
    EXPECT_EQ((*one)[0].values.shape(), (Shape{1, 3}));
    auto plain = (*s)->run({{"x", x}});
    ASSERT_FALSE(plain.ok());
    EXPECT_NE(plain.status().message().find("run_values"), std::string::npos) << plain.status().message();
  }
}

TEST(MapValues, ZipMapRefusesAWrongColumnCountOrRank) {
  auto s = Session::create_from_bytes(zipmap_model(false));
  ASSERT_TRUE(s.ok());
  auto cols = (*s)->run_values({{"x", Value::of(Tensor::from_vector<float>({1, 2}, {1, 2}))}});
  ASSERT_FALSE(cols.ok());
  EXPECT_NE(cols.status().message().find("3 class labels"), std::string::npos) << cols.status().message();
  auto rank = (*s)->run_values({{"x", Value::of(Tensor::from_vector<float>({1, 1, 3}, {1, 2, 3}))}});
  ASSERT_FALSE(rank.ok());
  EXPECT_NE(rank.status().message().find("1-D or 2-D"), std::string::npos) << rank.status().message();
}

TEST(MapValues, DictVectorizerReadsAMap) {
  auto s = Session::create_from_bytes(dict_vectorizer_model());
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  EXPECT_EQ((*s)->inputs()[0].type, "map(string,tensor(float))");
  // Keys outside the vocabulary are ignored; absent ones are 0.
  Value m = Value::of_map(Tensor::from_vector<std::string>({3}, {"c", "zz", "a"}),
                          Tensor::from_vector<float>({3}, {2.5f, 9.0f, -1.0f}));
  auto r = (*s)->run_values({{"x", m}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  ASSERT_EQ((*r)[0].kind, Value::Kind::kTensor);
  const Tensor& y = (*r)[0].tensor;
  ASSERT_EQ(y.shape(), (Shape{1, 3}));
  EXPECT_EQ(y.data<float>()[0], -1.0f);
  EXPECT_EQ(y.data<float>()[1], 0.0f);
  EXPECT_EQ(y.data<float>()[2], 2.5f);

  // The wrong kind, key type or value type; keys and values of two lengths; an empty map.
  auto as_tensor = (*s)->run_values({{"x", Value::of(Tensor::from_vector<float>({1}, {1}))}});
  ASSERT_FALSE(as_tensor.ok());
  EXPECT_NE(as_tensor.status().message().find("must be a map(string,tensor(float))"), std::string::npos)
      << as_tensor.status().message();
  auto int_keys = (*s)->run_values(
      {{"x", Value::of_map(Tensor::from_vector<int64_t>({1}, {1}), Tensor::from_vector<float>({1}, {1}))}});
  EXPECT_EQ(int_keys.status().code(), StatusCode::kInvalidArgument);
  auto lengths = (*s)->run_values(
      {{"x", Value::of_map(Tensor::from_vector<std::string>({2}, {"a", "b"}), Tensor::from_vector<float>({1}, {1}))}});
  EXPECT_EQ(lengths.status().code(), StatusCode::kInvalidArgument);
  auto empty = (*s)->run_values(
      {{"x", Value::of_map(Tensor::from_vector<std::string>({0}, {}), Tensor::from_vector<float>({0}, {}))}});
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.status().message().find("empty"), std::string::npos) << empty.status().message();
  // A map cannot go where a tensor is read.
  auto tensor_input = Session::create_from_bytes(zipmap_model(false));
  ASSERT_TRUE(tensor_input.ok());
  auto wrong = (*tensor_input)->run_values({{"x", m}});
  EXPECT_EQ(wrong.status().code(), StatusCode::kInvalidArgument);
}

TEST(MapValues, AMapInputReadByAnythingButDictVectorizerIsRefusedAtLoad) {
  auto s = Session::create_from_bytes(dict_vectorizer_model(/*also_relu=*/true));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(s.status().message().find("read by Relu"), std::string::npos) << s.status().message();
}

}  // namespace
}  // namespace dlrt
