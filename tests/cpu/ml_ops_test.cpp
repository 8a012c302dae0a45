// ai.onnx.ml ops (src/backends/cpu/ops/ml.cpp) on values worked out by hand;
// ONNX's conformance cases cover Binarizer, ArrayFeatureExtractor and LabelEncoder.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include <onnx/onnx_pb.h>

#include "../onnx_proto_util.h"
#include "dlrt/session.h"

namespace dlrt {
namespace {

using testing::add_onnx_node;
using testing::add_value_info;

// A model of one ai.onnx.ml node OP (opset `ml_opset`) reading x float[2, 3]
// and writing y float `y_dims`: the node, for its attributes.
onnx::NodeProto* ml_node(onnx::ModelProto& m, const std::string& op, int ml_opset, std::vector<int64_t> y_dims) {
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  auto* ml = m.add_opset_import();
  ml->set_domain("ai.onnx.ml");
  ml->set_version(ml_opset);
  auto* g = m.mutable_graph();
  g->set_name(op);
  add_value_info(g->add_input(), "x", onnx::TensorProto::FLOAT, {2, 3});
  add_value_info(g->add_output(), "y", onnx::TensorProto::FLOAT, y_dims);
  auto* n = add_onnx_node(g, op, {"x"}, "y");
  n->set_domain("ai.onnx.ml");
  return n;
}

// y = OP(x) of ai.onnx.ml with x float[2, 3]; `attrs` sets the node's attributes.
std::vector<float> run_ml(const std::string& op, const std::function<void(onnx::NodeProto*)>& attrs,
                          std::vector<int64_t> out_dims, std::vector<float> x) {
  onnx::ModelProto m;
  attrs(ml_node(m, op, 3, out_dims));
  auto s = Session::create_from_bytes(m.SerializeAsString());
  EXPECT_TRUE(s.ok()) << s.status().to_string();
  if (!s.ok()) return {};
  auto out = (*s)->run({{"x", Tensor::from_vector<float>({2, 3}, x)}});
  EXPECT_TRUE(out.ok()) << out.status().to_string();
  if (!out.ok()) return {};
  const Tensor& y = (*out)[0];
  return std::vector<float>(y.data<float>(), y.data<float>() + y.size());
}

void floats(onnx::NodeProto* n, const std::string& name, std::vector<float> v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOATS);
  for (float f : v) a->add_floats(f);
}

void str(onnx::NodeProto* n, const std::string& name, const std::string& v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
}

TEST(MlOps, ScalerSubtractsThenMultiplies) {
  auto y = run_ml("Scaler", [](onnx::NodeProto* n) { floats(n, "offset", {1, 2, 3}); floats(n, "scale", {2}); },
                  {2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(y, (std::vector<float>{0, 0, 0, 6, 6, 6}));
}

TEST(MlOps, NormalizerModes) {
  const std::vector<float> x{1, -3, 2, 0, 0, 0};  // the zero row stays as it is
  auto l1 = run_ml("Normalizer", [](onnx::NodeProto* n) { str(n, "norm", "L1"); }, {2, 3}, x);
  EXPECT_EQ(l1, (std::vector<float>{1 / 6.0f, -3 / 6.0f, 2 / 6.0f, 0, 0, 0}));
  auto mx = run_ml("Normalizer", [](onnx::NodeProto* n) { str(n, "norm", "MAX"); }, {2, 3}, x);
  EXPECT_EQ(mx, (std::vector<float>{0.5f, -1.5f, 1, 0, 0, 0}));  // X / max(X), as ONNX and ONNX Runtime
  auto l2 = run_ml("Normalizer", [](onnx::NodeProto* n) { str(n, "norm", "L2"); }, {2, 3}, x);
  ASSERT_EQ(l2.size(), 6u);
  EXPECT_NEAR(l2[1], -3 / std::sqrt(14.0f), 1e-6);
}

TEST(MlOps, LinearRegressorTwoTargetsWithIntercepts) {
  auto y = run_ml(
      "LinearRegressor",
      [](onnx::NodeProto* n) {
        floats(n, "coefficients", {1, 0, -1, 0.5f, 0.5f, 0.5f});
        floats(n, "intercepts", {10, -1});
        auto* t = n->add_attribute();
        t->set_name("targets");
        t->set_type(onnx::AttributeProto::INT);
        t->set_i(2);
      },
      {2, 2}, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(y, (std::vector<float>{8, 2, 8, 6.5f}));
}

// targets x features overflowed int64 in the run-time check (found by fuzz_ops):
// more targets than coefficients is refused at load.
TEST(MlOps, LinearRegressorTargetsPastTheCoefficientsAreRefused) {
  onnx::ModelProto m;
  auto* n = ml_node(m, "LinearRegressor", 1, {2, 1});
  floats(n, "coefficients", {1, 2, 3});
  auto* t = n->add_attribute();
  t->set_name("targets");
  t->set_type(onnx::AttributeProto::INT);
  t->set_i(0x5555555555555555LL);
  auto s = Session::create_from_bytes(m.SerializeAsString());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kInvalidModel) << s.status().to_string();
  EXPECT_NE(s.status().message().find("more than the 3 coefficients"), std::string::npos) << s.status().to_string();
}

// Two classes, one score column each, LOGISTIC; labels are the larger score's.
TEST(MlOps, LinearClassifierScoresAndLabels) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  auto* ml = m.add_opset_import();
  ml->set_domain("ai.onnx.ml");
  ml->set_version(1);
  auto* g = m.mutable_graph();
  g->set_name("lc");
  add_value_info(g->add_input(), "x", onnx::TensorProto::FLOAT, {2, 2});
  add_value_info(g->add_output(), "label", onnx::TensorProto::INT64, {2});
  add_value_info(g->add_output(), "scores", onnx::TensorProto::FLOAT, {2, 2});
  auto* n = g->add_node();
  n->set_op_type("LinearClassifier");
  n->set_domain("ai.onnx.ml");
  n->add_input("x");
  n->add_output("label");
  n->add_output("scores");
  floats(n, "coefficients", {1, 0, -1, 0});
  floats(n, "intercepts", {0, 0});
  str(n, "post_transform", "LOGISTIC");
  auto* labels = n->add_attribute();
  labels->set_name("classlabels_ints");
  labels->set_type(onnx::AttributeProto::INTS);
  labels->add_ints(7);
  labels->add_ints(9);
  auto s = Session::create_from_bytes(m.SerializeAsString());
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  auto out = (*s)->run({{"x", Tensor::from_vector<float>({2, 2}, {2, 5, -1, 5})}});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].data<int64_t>()[0], 7);
  EXPECT_EQ((*out)[0].data<int64_t>()[1], 9);
  EXPECT_NEAR((*out)[1].data<float>()[0], 1 / (1 + std::exp(-2.0f)), 1e-6);
  EXPECT_NEAR((*out)[1].data<float>()[3], 1 / (1 + std::exp(-1.0f)), 1e-6);
}

void ints(onnx::NodeProto* n, const std::string& name, std::vector<int64_t> v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t i : v) a->add_ints(i);
}

// One tree: x[1] <= 0.5 ? (x[2] < 2 ? 10 : 20) : 30, a NaN x[1] going left;
// base value 1, post_transform NONE.
TEST(MlOps, TreeEnsembleRegressorWalksBranchesAndMissingValues) {
  const float nan = std::nanf("");
  auto y = run_ml(
      "TreeEnsembleRegressor",
      [](onnx::NodeProto* n) {
        ints(n, "nodes_treeids", {0, 0, 0, 0, 0});
        ints(n, "nodes_nodeids", {0, 1, 2, 3, 4});
        ints(n, "nodes_featureids", {1, 2, 0, 0, 0});
        floats(n, "nodes_values", {0.5f, 2, 0, 0, 0});
        auto* modes = n->add_attribute();
        modes->set_name("nodes_modes");
        modes->set_type(onnx::AttributeProto::STRINGS);
        for (const char* m : {"BRANCH_LEQ", "BRANCH_LT", "LEAF", "LEAF", "LEAF"}) modes->add_strings(m);
        ints(n, "nodes_truenodeids", {1, 3, 0, 0, 0});
        ints(n, "nodes_falsenodeids", {2, 4, 0, 0, 0});
        ints(n, "nodes_missing_value_tracks_true", {1, 0, 0, 0, 0});
        ints(n, "target_treeids", {0, 0, 0});
        ints(n, "target_nodeids", {2, 3, 4});
        ints(n, "target_ids", {0, 0, 0});
        floats(n, "target_weights", {30, 10, 20});
        floats(n, "base_values", {1});
      },
      {2, 1}, {0, 0.5f, 1.5f, 0, nan, 2});
  EXPECT_EQ(y, (std::vector<float>{11, 21}));
}

// n_targets sizes each row's accumulators, which count against the tensor
// limit like an output (found by fuzz_ops: 2^32 targets allocated 64 GiB of
// scratch for an empty input): here 2^20 targets against a 1 MiB limit.
TEST(MlOps, TreeEnsembleAccumulatorsAreCheckedAgainstTheTensorLimit) {
  onnx::ModelProto m;
  auto* n = ml_node(m, "TreeEnsembleRegressor", 3, {2, 1});
  m.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->set_dim_param("rows");
  ints(n, "nodes_treeids", {0});
  ints(n, "nodes_nodeids", {0});
  ints(n, "nodes_featureids", {0});
  floats(n, "nodes_values", {0});
  auto* modes = n->add_attribute();
  modes->set_name("nodes_modes");
  modes->set_type(onnx::AttributeProto::STRINGS);
  modes->add_strings("LEAF");
  ints(n, "nodes_truenodeids", {0});
  ints(n, "nodes_falsenodeids", {0});
  ints(n, "target_treeids", {0});
  ints(n, "target_nodeids", {0});
  ints(n, "target_ids", {0});
  floats(n, "target_weights", {1});
  auto* targets = n->add_attribute();
  targets->set_name("n_targets");
  targets->set_type(onnx::AttributeProto::INT);
  targets->set_i(int64_t{1} << 20);
  SessionOptions options;
  options.max_tensor_bytes = 1 << 20;
  auto s = Session::create_from_bytes(m.SerializeAsString(), options);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  // No rows, so an empty output: only the accumulators are too large.
  auto out = (*s)->run({{"x", Tensor::from_vector<float>({0, 3}, {})}});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kOutOfMemory) << out.status().to_string();
}

TEST(MlOps, TreeEnsembleWithACycleIsRefusedAtLoad) {
  // Root 0 -> 1 -> 2 -> 1 (a loop; node 3 the leaf): the model loaded and
  // only rows that reached the loop failed. ONNX Runtime refuses it at load.
  onnx::ModelProto m;
  auto* n = ml_node(m, "TreeEnsembleRegressor", 3, {2, 1});
  ints(n, "nodes_treeids", {0, 0, 0, 0});
  ints(n, "nodes_nodeids", {0, 1, 2, 3});
  ints(n, "nodes_featureids", {0, 1, 2, 0});
  floats(n, "nodes_values", {0.5f, 0.5f, 0.5f, 0});
  auto* modes = n->add_attribute();
  modes->set_name("nodes_modes");
  modes->set_type(onnx::AttributeProto::STRINGS);
  for (const char* md : {"BRANCH_LEQ", "BRANCH_LEQ", "BRANCH_LEQ", "LEAF"}) modes->add_strings(md);
  ints(n, "nodes_truenodeids", {3, 2, 1, 0});
  ints(n, "nodes_falsenodeids", {1, 3, 3, 0});
  ints(n, "target_treeids", {0});
  ints(n, "target_nodeids", {3});
  ints(n, "target_ids", {0});
  floats(n, "target_weights", {1});
  auto s = Session::create_from_bytes(m.SerializeAsString());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kInvalidModel) << s.status().to_string();
  EXPECT_NE(s.status().message().find("cycle"), std::string::npos) << s.status().to_string();
}

}  // namespace
}  // namespace dlrt
