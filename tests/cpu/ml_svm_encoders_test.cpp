// ai.onnx.ml SVMClassifier / SVMRegressor (ml_svm.cpp), the encoders
// (ml_encoders.cpp), TreeEnsemble opset 5 and the binary (one score column,
// two labels) rules of the classifiers. The expected numbers are ONNX Runtime
// 1.31.1's outputs on the same one-node models (computed outside dlrt with
// onnxruntime's Python package), or worked out by hand where noted.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <onnx/onnx_pb.h>

#include "../onnx_proto_util.h"
#include "dlrt/session.h"

namespace dlrt {
namespace {

using testing::add_unshaped_value_info;

using Attrs = std::function<void(onnx::NodeProto*)>;

void floats(onnx::NodeProto* n, const std::string& name, std::vector<float> v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOATS);
  for (float f : v) a->add_floats(f);
}
void ints(onnx::NodeProto* n, const std::string& name, std::vector<int64_t> v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t i : v) a->add_ints(i);
}
void strs(onnx::NodeProto* n, const std::string& name, std::vector<std::string> v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRINGS);
  for (const auto& s : v) a->add_strings(s);
}
void str(onnx::NodeProto* n, const std::string& name, const std::string& v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
}
void one(onnx::NodeProto* n, const std::string& name, int64_t v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}
// A tensor attribute of `dtype` (FLOAT or UINT8) holding `v`.
void tensor(onnx::NodeProto* n, const std::string& name, int dtype, std::vector<float> v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::TENSOR);
  auto* t = a->mutable_t();
  t->set_data_type(dtype);
  t->add_dims(static_cast<int64_t>(v.size()));
  for (float f : v) {
    if (dtype == onnx::TensorProto::FLOAT) t->add_float_data(f);
    else t->add_int32_data(static_cast<int32_t>(f));
  }
}

struct Out {
  std::string name;
  int elem;
};

// A model of one ai.onnx.ml node `op` (ai.onnx.ml opset `ml_opset`) with
// inputs `in` (name, element type) and outputs `outs`.
std::string model(const std::string& op, const std::vector<Out>& in, const std::vector<Out>& outs, const Attrs& attrs,
                  int ml_opset = 3) {
  onnx::ModelProto m;
  m.set_ir_version(ml_opset >= 5 ? 10 : 8);
  m.add_opset_import()->set_version(ml_opset >= 5 ? 21 : 17);
  auto* ml = m.add_opset_import();
  ml->set_domain("ai.onnx.ml");
  ml->set_version(ml_opset);
  auto* g = m.mutable_graph();
  g->set_name(op);
  auto* n = g->add_node();
  n->set_op_type(op);
  n->set_domain("ai.onnx.ml");
  for (const auto& i : in) {
    add_unshaped_value_info(g->add_input(), i.name, i.elem);
    n->add_input(i.name);
  }
  for (const auto& o : outs) {
    add_unshaped_value_info(g->add_output(), o.name, o.elem);
    n->add_output(o.name);
  }
  attrs(n);
  return m.SerializeAsString();
}

Result<std::vector<Tensor>> run(const std::string& bytes, std::vector<std::pair<std::string, Tensor>> feeds) {
  DLRT_ASSIGN_OR_RETURN(auto s, Session::create_from_bytes(bytes));
  std::map<std::string, Tensor> in;
  for (auto& [k, v] : feeds) in.emplace(k, std::move(v));
  return s->run(in);
}

std::vector<float> f32(const Tensor& t) { return {t.data<float>(), t.data<float>() + t.size()}; }

void expect_near(const std::vector<float>& got, const std::vector<float>& want, float tol = 2e-6f) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "at " << i;
}

constexpr int kF = onnx::TensorProto::FLOAT, kI = onnx::TensorProto::INT64, kS = onnx::TensorProto::STRING;

Tensor x3x2() { return Tensor::from_vector<float>({3, 2}, {0.5f, -1.0f, 1.5f, 2.0f, -0.3f, 0.7f}); }

// Three classes, RBF (gamma 0.5), 1 / 2 / 1 support vectors.
void svc3(onnx::NodeProto* n) {
  str(n, "kernel_type", "RBF");
  floats(n, "kernel_params", {0.5f, 0, 0});
  ints(n, "vectors_per_class", {1, 2, 1});
  floats(n, "support_vectors", {0, 0, 1, 1, 2, -1, -1, 1});
  floats(n, "coefficients", {0.5f, -0.25f, -0.25f, 1.0f, 0.75f, 0.3f, -1.0f, -0.4f});
  floats(n, "rho", {0.1f, -0.2f, 0.05f});
  ints(n, "classlabels_ints", {5, 6, 7});
}

TEST(MlSvm, ClassifierThreeClassesVotesAndDecisionValues) {
  auto out = run(model("SVMClassifier", {{"x", kF}}, {{"y", kI}, {"z", kF}}, svc3), {{"x", x3x2()}});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ(std::vector<int64_t>((*out)[0].data<int64_t>(), (*out)[0].data<int64_t>() + 3), (std::vector<int64_t>{5, 6, 5}));
  expect_near(f32((*out)[1]), {0.25660938f, 0.24538304f, -0.25639734f, -0.01429781f, -0.14039820f, 0.19011515f,
                               0.36728305f, 1.10946131f, -0.14284793f});
}

TEST(MlSvm, ClassifierThreeClassesPlattProbabilities) {
  auto out = run(model("SVMClassifier", {{"x", kF}}, {{"y", kI}, {"z", kF}},
                       [](onnx::NodeProto* n) {
                         svc3(n);
                         floats(n, "prob_a", {-1.5f, -2.0f, -1.0f});
                         floats(n, "prob_b", {0.1f, -0.2f, 0.3f});
                       }),
                 {{"x", x3x2()}});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].data<int64_t>()[1], 6);
  expect_near(f32((*out)[1]), {0.45362136f, 0.25579256f, 0.29058608f, 0.31111622f, 0.33377230f, 0.35511139f,
                               0.60384238f, 0.26479137f, 0.13136616f});
}

// Two classes, POLY ((0.5 x.sv + 1)^2), string labels.
void svc2(onnx::NodeProto* n) {
  str(n, "kernel_type", "POLY");
  floats(n, "kernel_params", {0.5f, 1, 2});
  ints(n, "vectors_per_class", {2, 1});
  floats(n, "support_vectors", {0, 0, 1, 1, 2, -1});
  floats(n, "coefficients", {0.5f, -0.25f, -0.25f});
  floats(n, "rho", {0.1f});
  strs(n, "classlabels_strings", {"no", "yes"});
}

TEST(MlSvm, ClassifierBinaryScoresByPostTransform) {
  struct Case {
    const char* post;
    bool proba;
    std::vector<float> z;
  };
  const std::vector<Case> cases = {
      {"NONE", false, {0.54062498f, -0.54062498f, 1.85312498f, -1.85312498f, -0.20937498f, 0.20937498f}},
      {"LOGISTIC", false, {0.63195783f, 0.36804217f, 0.86449355f, 0.13550645f, 0.44784665f, 0.55215335f}},
      {"NONE", true, {0.26679474f, 0.73320526f, 0.04829824f, 0.95170170f, 0.52847981f, 0.47152021f}},
  };
  for (const auto& c : cases) {
    auto out = run(model("SVMClassifier", {{"x", kF}}, {{"y", kS}, {"z", kF}},
                         [&](onnx::NodeProto* n) {
                           svc2(n);
                           str(n, "post_transform", c.post);
                           if (c.proba) floats(n, "prob_a", {-1.5f}), floats(n, "prob_b", {0.2f});
                         }),
                   {{"x", x3x2()}});
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    const std::string* y = (*out)[0].data<std::string>();
    EXPECT_EQ(std::vector<std::string>(y, y + 3), (std::vector<std::string>{"yes", "yes", "no"})) << c.post;
    expect_near(f32((*out)[1]), c.z);
  }
}

TEST(MlSvm, ClassifierLinearFormWithoutSupportVectors) {
  auto out = run(model("SVMClassifier", {{"x", kF}}, {{"y", kI}, {"z", kF}},
                       [](onnx::NodeProto* n) {
                         floats(n, "coefficients", {1.0f, -0.5f, -1.0f, 0.5f});
                         floats(n, "rho", {0.2f});
                         ints(n, "classlabels_ints", {0, 1});
                       }),
                 {{"x", x3x2()}});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  // Two classes with mixed-sign coefficients: class 1 wherever the top score is > 0.
  EXPECT_EQ(std::vector<int64_t>((*out)[0].data<int64_t>(), (*out)[0].data<int64_t>() + 3), (std::vector<int64_t>{1, 1, 1}));
  expect_near(f32((*out)[1]), {1.2f, -0.8f, 0.7f, -0.3f, -0.45f, 0.85f});
}

TEST(MlSvm, Regressor) {
  auto sig = run(model("SVMRegressor", {{"x", kF}}, {{"y", kF}},
                       [](onnx::NodeProto* n) {
                         str(n, "kernel_type", "SIGMOID");
                         floats(n, "kernel_params", {0.3f, 0.1f, 0});
                         one(n, "n_supports", 3);
                         floats(n, "support_vectors", {0, 0, 1, 1, 2, -1});
                         floats(n, "coefficients", {0.5f, -1.0f, 0.7f});
                         floats(n, "rho", {0.25f});
                       }),
                 {{"x", x3x2()}});
  ASSERT_TRUE(sig.ok()) << sig.status().to_string();
  EXPECT_EQ((*sig)[0].shape(), (Shape{3, 1}));
  expect_near(f32((*sig)[0]), {0.77284980f, -0.25195581f, -0.11417839f});
  auto oc = run(model("SVMRegressor", {{"x", kF}}, {{"y", kF}},
                      [](onnx::NodeProto* n) {
                        str(n, "kernel_type", "RBF");
                        floats(n, "kernel_params", {0.5f, 0, 0});
                        one(n, "n_supports", 3);
                        floats(n, "support_vectors", {0, 0, 1, 1, 2, -1});
                        floats(n, "coefficients", {0.5f, -1.0f, 0.7f});
                        floats(n, "rho", {-0.1f});
                        one(n, "one_class", 1);
                      }),
                {{"x", x3x2()}});
  ASSERT_TRUE(oc.ok()) << oc.status().to_string();
  EXPECT_EQ(f32((*oc)[0]), (std::vector<float>{1, -1, -1}));
  // Linear form, by hand: x . [0.5, -2] + 0.3.
  auto lin = run(model("SVMRegressor", {{"x", kF}}, {{"y", kF}},
                       [](onnx::NodeProto* n) {
                         floats(n, "coefficients", {0.5f, -2.0f});
                         floats(n, "rho", {0.3f});
                       }),
                 {{"x", x3x2()}});
  ASSERT_TRUE(lin.ok()) << lin.status().to_string();
  expect_near(f32((*lin)[0]), {2.55f, -2.95f, -1.25f});
}

TEST(MlSvm, BadAttributesAndInputsAreErrors) {
  auto bad = [](const Attrs& a) {
    return Session::create_from_bytes(model("SVMClassifier", {{"x", kF}}, {{"y", kI}, {"z", kF}}, a)).ok();
  };
  EXPECT_FALSE(bad([](onnx::NodeProto* n) { svc3(n), str(n, "kernel_type", "CUBIC"); }));
  EXPECT_FALSE(bad([](onnx::NodeProto* n) { svc3(n), floats(n, "kernel_params", {0.5f, 1}); }));
  EXPECT_FALSE(bad([](onnx::NodeProto* n) { svc3(n), ints(n, "vectors_per_class", {1, 3}); }));
  EXPECT_FALSE(bad([](onnx::NodeProto* n) { svc3(n), floats(n, "rho", {0.1f}); }));
  EXPECT_FALSE(bad([](onnx::NodeProto* n) { svc3(n), floats(n, "prob_a", {1, 2, 3}); }));  // no prob_b
  EXPECT_FALSE(bad([](onnx::NodeProto* n) { svc2(n), str(n, "post_transform", "PROBIT"); }));
  // Features that do not match the support vectors: a run error, not a crash.
  auto out = run(model("SVMClassifier", {{"x", kF}}, {{"y", kI}, {"z", kF}}, svc3),
                 {{"x", Tensor::from_vector<float>({1, 3}, {1, 2, 3})}});
  EXPECT_FALSE(out.ok());
}

TEST(MlSvm, VectorsPerClassThatSumPastTheSupportVectorsAreRefused) {
  // [2^62, 2^62, 2^62, 2^62 + 3] summed to 3 (wrapping), which matched 3
  // support vectors: the model loaded and the per-class loops ran 2^62 times
  // (SIGSEGV). Now a load error, as is a count past the vectors given.
  const int64_t big = int64_t{1} << 62;
  for (const std::vector<int64_t>& per_class :
       {std::vector<int64_t>{big, big, big, big + 3}, std::vector<int64_t>{1, 1, 1, 1}}) {
    auto s =
        Session::create_from_bytes(model("SVMClassifier", {{"x", kF}}, {{"y", kI}, {"z", kF}}, [&](onnx::NodeProto* n) {
          ints(n, "vectors_per_class", per_class);
          floats(n, "support_vectors", {0, 1, 2});  // 3 vectors of 1 feature
          floats(n, "coefficients", std::vector<float>(9, 0.5f));
          floats(n, "rho", std::vector<float>(6, 0.1f));
          ints(n, "classlabels_ints", {0, 1, 2, 3});
        }));
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.status().code(), StatusCode::kInvalidModel) << s.status().to_string();
    EXPECT_NE(s.status().message().find("vectors_per_class"), std::string::npos) << s.status().to_string();
  }
}

// One score column for two labels (skl2onnx's binary converters), ONNX Runtime's rules.
TEST(MlBinary, LinearClassifierOneColumn) {
  auto out = run(model("LinearClassifier", {{"x", kF}}, {{"y", kI}, {"z", kF}},
                       [](onnx::NodeProto* n) {
                         floats(n, "coefficients", {1.0f, -0.5f});
                         floats(n, "intercepts", {0.2f});
                         ints(n, "classlabels_ints", {3, 9});
                         str(n, "post_transform", "LOGISTIC");
                       }),
                 {{"x", x3x2()}});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ(std::vector<int64_t>((*out)[0].data<int64_t>(), (*out)[0].data<int64_t>() + 3), (std::vector<int64_t>{9, 9, 3}));
  expect_near(f32((*out)[1]), {0.23147517f, 0.76852483f, 0.33181226f, 0.66818774f, 0.61063927f, 0.38936073f});
  // NONE: [1 - s, s] of the raw score s = x . [1, -0.5] + 0.2 (by hand).
  auto none = run(model("LinearClassifier", {{"x", kF}}, {{"y", kI}, {"z", kF}},
                        [](onnx::NodeProto* n) {
                          floats(n, "coefficients", {1.0f, -0.5f});
                          floats(n, "intercepts", {0.2f});
                          ints(n, "classlabels_ints", {3, 9});
                        }),
                  {{"x", x3x2()}});
  ASSERT_TRUE(none.ok()) << none.status().to_string();
  expect_near(f32((*none)[1]), {1 - 1.2f, 1.2f, 1 - 0.7f, 0.7f, 1 + 0.45f, -0.45f});
}

// Two trees on x[0] <= 0.6 and x[1] < 0.8, every weight for class id 0.
void tree2(onnx::NodeProto* n) {
  ints(n, "nodes_treeids", {0, 0, 0, 1, 1, 1});
  ints(n, "nodes_nodeids", {0, 1, 2, 0, 1, 2});
  ints(n, "nodes_featureids", {0, 0, 0, 1, 0, 0});
  strs(n, "nodes_modes", {"BRANCH_LEQ", "LEAF", "LEAF", "BRANCH_LT", "LEAF", "LEAF"});
  floats(n, "nodes_values", {0.6f, 0, 0, 0.8f, 0, 0});
  ints(n, "nodes_truenodeids", {1, 0, 0, 1, 0, 0});
  ints(n, "nodes_falsenodeids", {2, 0, 0, 2, 0, 0});
  ints(n, "class_treeids", {0, 0, 1, 1});
  ints(n, "class_nodeids", {1, 2, 1, 2});
  ints(n, "class_ids", {0, 0, 0, 0});
  ints(n, "classlabels_int64s", {10, 20});
}

TEST(MlBinary, TreeClassifierOneClassId) {
  // Mixed-sign weights, LOGISTIC, one base value (a boosted model).
  auto mixed = run(model("TreeEnsembleClassifier", {{"x", kF}}, {{"y", kI}, {"z", kF}},
                         [](onnx::NodeProto* n) {
                           tree2(n);
                           floats(n, "class_weights", {-0.4f, 0.9f, 0.3f, -0.2f});
                           str(n, "post_transform", "LOGISTIC");
                           floats(n, "base_values", {0.05f});
                         }),
                   {{"x", x3x2()}});
  ASSERT_TRUE(mixed.ok()) << mixed.status().to_string();
  EXPECT_EQ(std::vector<int64_t>((*mixed)[0].data<int64_t>(), (*mixed)[0].data<int64_t>() + 3),
            (std::vector<int64_t>{10, 20, 10}));
  expect_near(f32((*mixed)[1]), {0.51249737f, 0.48750263f, 0.32082129f, 0.67917871f, 0.51249737f, 0.48750263f});
  // Positive weights, NONE, no base values: [1 - p, p], label 20 where p > 0.5.
  auto pos = run(model("TreeEnsembleClassifier", {{"x", kF}}, {{"y", kI}, {"z", kF}},
                       [](onnx::NodeProto* n) {
                         tree2(n);
                         floats(n, "class_weights", {0.4f, 0.9f, 0.3f, 0.2f});
                       }),
                 {{"x", x3x2()}});
  ASSERT_TRUE(pos.ok()) << pos.status().to_string();
  EXPECT_EQ(std::vector<int64_t>((*pos)[0].data<int64_t>(), (*pos)[0].data<int64_t>() + 3), (std::vector<int64_t>{20, 20, 20}));
  expect_near(f32((*pos)[1]), {0.3f, 0.7f, -0.1f, 1.1f, 0.3f, 0.7f});
}

TEST(MlBinary, TreeClassifierBothClassIdsStringLabels) {
  auto out = run(model("TreeEnsembleClassifier", {{"x", kF}}, {{"y", kS}, {"z", kF}},
                       [](onnx::NodeProto* n) {
                         ints(n, "nodes_treeids", {0, 0, 0, 1, 1, 1});
                         ints(n, "nodes_nodeids", {0, 1, 2, 0, 1, 2});
                         ints(n, "nodes_featureids", {0, 0, 0, 1, 0, 0});
                         strs(n, "nodes_modes", {"BRANCH_LEQ", "LEAF", "LEAF", "BRANCH_LT", "LEAF", "LEAF"});
                         floats(n, "nodes_values", {0.6f, 0, 0, 0.8f, 0, 0});
                         ints(n, "nodes_truenodeids", {1, 0, 0, 1, 0, 0});
                         ints(n, "nodes_falsenodeids", {2, 0, 0, 2, 0, 0});
                         ints(n, "class_treeids", {0, 0, 0, 0, 1, 1, 1, 1});
                         ints(n, "class_nodeids", {1, 1, 2, 2, 1, 1, 2, 2});
                         ints(n, "class_ids", {0, 1, 0, 1, 0, 1, 0, 1});
                         floats(n, "class_weights", {0.4f, 0.1f, 0.05f, 0.45f, 0.2f, 0.3f, 0.35f, 0.15f});
                         strs(n, "classlabels_strings", {"a", "b"});
                       }),
                 {{"x", x3x2()}});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  const std::string* y = (*out)[0].data<std::string>();
  // ONNX Runtime's label: the second class wherever its score is > 0.
  EXPECT_EQ(std::vector<std::string>(y, y + 3), (std::vector<std::string>{"b", "b", "b"}));
  expect_near(f32((*out)[1]), {0.6f, 0.4f, 0.4f, 0.6f, 0.6f, 0.4f});
}

// TreeEnsemble (opset 5): tree 0: x0 in {1, 3, 5} ? (x1 <= 0.5, NaN true ? leaf 0 : leaf 1) : leaf 1;
// tree 1: x0 > 2 ? leaf 1 : leaf 2; leaves (target, weight) (0, 1) (1, 2) (0, 4) (1, 8); AVERAGE.
void tree_v5(onnx::NodeProto* n) {
  ints(n, "nodes_featureids", {0, 1, 0});
  tensor(n, "nodes_modes", onnx::TensorProto::UINT8, {6, 0, 3});
  tensor(n, "nodes_splits", kF, {0, 0.5f, 2.0f});
  tensor(n, "membership_values", kF, {1, 3, 5, std::nanf("")});
  ints(n, "nodes_truenodeids", {1, 0, 1});
  ints(n, "nodes_trueleafs", {0, 1, 1});
  ints(n, "nodes_falsenodeids", {1, 1, 2});
  ints(n, "nodes_falseleafs", {1, 1, 1});
  ints(n, "nodes_missing_value_tracks_true", {0, 1, 0});
  ints(n, "leaf_targetids", {0, 1, 0, 1});
  tensor(n, "leaf_weights", kF, {1, 2, 4, 8});
  ints(n, "tree_roots", {0, 2});
  one(n, "n_targets", 2);
  one(n, "aggregate_function", 0);
}

TEST(MlTreeEnsemble, Opset5MembershipMissingAndAverage) {
  const float nan = std::nanf("");
  auto out = run(model("TreeEnsemble", {{"x", kF}}, {{"y", kF}}, tree_v5, 5),
                 {{"x", Tensor::from_vector<float>({5, 2}, {3, 0.2f, 2, 0.9f, 5, nan, 2.5f, 0, nan, 0.2f})}});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].shape(), (Shape{5, 2}));
  // (The last row: a NaN is in no set, and the membership node does not send NaN to its true branch.)
  EXPECT_EQ(f32((*out)[0]), (std::vector<float>{0.5f, 1, 2, 1, 0.5f, 1, 0, 2, 2, 1}));
  // Double input: double output.
  auto d = run(model("TreeEnsemble", {{"x", onnx::TensorProto::DOUBLE}}, {{"y", onnx::TensorProto::DOUBLE}}, tree_v5, 5),
               {{"x", Tensor::from_vector<double>({1, 2}, {3, 0.2})}});
  ASSERT_TRUE(d.ok()) << d.status().to_string();
  EXPECT_EQ((*d)[0].dtype(), DType::kFloat64);
  EXPECT_EQ((*d)[0].data<double>()[1], 1.0);
}

TEST(MlTreeEnsemble, Opset5BadAttributes) {
  auto bad = [](const Attrs& a) {
    return Session::create_from_bytes(model("TreeEnsemble", {{"x", kF}}, {{"y", kF}}, a, 5)).ok();
  };
  EXPECT_TRUE(bad(tree_v5));
  EXPECT_FALSE(bad([](onnx::NodeProto* n) { tree_v5(n), tensor(n, "nodes_modes", onnx::TensorProto::UINT8, {6, 9, 3}); }));
  EXPECT_FALSE(bad([](onnx::NodeProto* n) { tree_v5(n), tensor(n, "membership_values", kF, {1, 3}); }));
  EXPECT_FALSE(bad([](onnx::NodeProto* n) { tree_v5(n), ints(n, "tree_roots", {0, 7}); }));
  EXPECT_FALSE(bad([](onnx::NodeProto* n) { tree_v5(n), ints(n, "leaf_targetids", {0, 1, 0, 2}); }));
}

TEST(MlTreeEnsemble, Opset5CycleIsRefusedAtLoad) {
  // tree_v5 with node 1's true branch back to node 0 (0 -> 1 -> 0): it loaded,
  // and was an error only for rows that reached the loop; ONNX Runtime refuses
  // the model. (Each attribute once: the checker refuses repeated ones.)
  auto s = Session::create_from_bytes(model(
      "TreeEnsemble", {{"x", kF}}, {{"y", kF}},
      [](onnx::NodeProto* n) {
        onnx::NodeProto v5;
        tree_v5(&v5);
        for (const auto& a : v5.attribute())
          if (a.name() != "nodes_trueleafs") *n->add_attribute() = a;
        ints(n, "nodes_trueleafs", {0, 0, 1});
      },
      5));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kInvalidModel) << s.status().to_string();
  EXPECT_NE(s.status().message().find("cycle"), std::string::npos) << s.status().to_string();
}

TEST(MlEncoders, OneHotEncoder) {
  auto out = run(model("OneHotEncoder", {{"x", kI}}, {{"y", kF}}, [](onnx::NodeProto* n) { ints(n, "cats_int64s", {4, 2, 7}); }),
                 {{"x", Tensor::from_vector<int64_t>({2, 2}, {2, 7, 9, 4})}});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].shape(), (Shape{2, 2, 3}));
  EXPECT_EQ(f32((*out)[0]), (std::vector<float>{0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0}));  // 9: no category, zeros
  auto strict = model("OneHotEncoder", {{"x", kS}}, {{"y", kF}}, [](onnx::NodeProto* n) {
    strs(n, "cats_strings", {"red", "blue"});
    one(n, "zeros", 0);
  });
  auto ok = run(strict, {{"x", Tensor::from_vector<std::string>({2}, {"blue", "red"})}});
  ASSERT_TRUE(ok.ok()) << ok.status().to_string();
  EXPECT_EQ(f32((*ok)[0]), (std::vector<float>{0, 1, 1, 0}));
  EXPECT_FALSE(run(strict, {{"x", Tensor::from_vector<std::string>({1}, {"pink"})}}).ok());
  EXPECT_FALSE(Session::create_from_bytes(model("OneHotEncoder", {{"x", kI}}, {{"y", kF}}, [](onnx::NodeProto* n) {
                 ints(n, "cats_int64s", {1});
                 strs(n, "cats_strings", {"a"});
               })).ok());
}

TEST(MlEncoders, Imputer) {
  const float nan = std::nanf("");
  auto f = run(model("Imputer", {{"x", kF}}, {{"y", kF}},
                     [](onnx::NodeProto* n) {
                       floats(n, "imputed_value_floats", {10, 20, 30});
                       auto* a = n->add_attribute();
                       a->set_name("replaced_value_float");
                       a->set_type(onnx::AttributeProto::FLOAT);
                       a->set_f(std::nanf(""));
                     }),
               {{"x", Tensor::from_vector<float>({2, 3}, {1, nan, 3, nan, 5, -1})}});
  ASSERT_TRUE(f.ok()) << f.status().to_string();
  EXPECT_EQ(f32((*f)[0]), (std::vector<float>{1, 20, 3, 10, 5, -1}));
  auto i = run(model("Imputer", {{"x", kI}}, {{"y", kI}},
                     [](onnx::NodeProto* n) {
                       ints(n, "imputed_value_int64s", {7});
                       one(n, "replaced_value_int64", -1);
                     }),
               {{"x", Tensor::from_vector<int64_t>({2, 3}, {1, -1, 3, -1, 5, -1})}});
  ASSERT_TRUE(i.ok()) << i.status().to_string();
  EXPECT_EQ(std::vector<int64_t>((*i)[0].data<int64_t>(), (*i)[0].data<int64_t>() + 6), (std::vector<int64_t>{1, 7, 3, 7, 5, 7}));
  EXPECT_FALSE(Session::create_from_bytes(model("Imputer", {{"x", kF}}, {{"y", kF}}, [](onnx::NodeProto*) {})).ok());
  // Float input, only int64 values to impute: a run error.
  EXPECT_FALSE(run(model("Imputer", {{"x", kF}}, {{"y", kF}}, [](onnx::NodeProto* n) { ints(n, "imputed_value_int64s", {7}); }),
                   {{"x", Tensor::from_vector<float>({1, 1}, {0})}})
                   .ok());
}

TEST(MlEncoders, CategoryMapperBothWays) {
  auto cats = [](onnx::NodeProto* n) {
    ints(n, "cats_int64s", {1, 2, 3});
    strs(n, "cats_strings", {"a", "b", "c"});
    one(n, "default_int64", -5);
    str(n, "default_string", "?");
  };
  auto s2i = run(model("CategoryMapper", {{"x", kS}}, {{"y", kI}}, cats),
                 {{"x", Tensor::from_vector<std::string>({3}, {"b", "z", "c"})}});
  ASSERT_TRUE(s2i.ok()) << s2i.status().to_string();
  EXPECT_EQ(std::vector<int64_t>((*s2i)[0].data<int64_t>(), (*s2i)[0].data<int64_t>() + 3), (std::vector<int64_t>{2, -5, 3}));
  auto i2s = run(model("CategoryMapper", {{"x", kI}}, {{"y", kS}}, cats), {{"x", Tensor::from_vector<int64_t>({1, 2}, {3, 0})}});
  ASSERT_TRUE(i2s.ok()) << i2s.status().to_string();
  EXPECT_EQ((*i2s)[0].data<std::string>()[0], "c");
  EXPECT_EQ((*i2s)[0].data<std::string>()[1], "?");
  EXPECT_FALSE(Session::create_from_bytes(model("CategoryMapper", {{"x", kS}}, {{"y", kI}}, [](onnx::NodeProto* n) {
                 ints(n, "cats_int64s", {1, 2});
                 strs(n, "cats_strings", {"a"});
               })).ok());
}

TEST(MlEncoders, FeatureVectorizerCutsAndPads) {
  auto fv = model("FeatureVectorizer", {{"a", kI}, {"b", kI}, {"c", kI}}, {{"y", kF}},
                  [](onnx::NodeProto* n) { ints(n, "inputdimensions", {3, 1, 2}); });
  auto out = run(fv, {{"a", Tensor::from_vector<int64_t>({2, 2}, {1, 2, 3, 4})},
                      {"b", Tensor::from_vector<int64_t>({2, 2}, {5, 9, 6, 8})},
                      {"c", Tensor::from_vector<int64_t>({2, 2}, {7, 8, 9, 10})}});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].shape(), (Shape{2, 6}));
  EXPECT_EQ(f32((*out)[0]), (std::vector<float>{1, 2, 0, 5, 7, 8, 3, 4, 0, 6, 9, 10}));
  // Rows that differ between the inputs: a run error.
  EXPECT_FALSE(run(fv, {{"a", Tensor::from_vector<int64_t>({2, 2}, {1, 2, 3, 4})},
                        {"b", Tensor::from_vector<int64_t>({1, 1}, {5})},
                        {"c", Tensor::from_vector<int64_t>({2, 2}, {7, 8, 9, 10})}})
                   .ok());
  EXPECT_FALSE(Session::create_from_bytes(model("FeatureVectorizer", {{"a", kF}}, {{"y", kF}}, [](onnx::NodeProto* n) {
                 ints(n, "inputdimensions", {3, 1});
               })).ok());
}

TEST(MlEncoders, FeatureVectorizerDimensionsThatOverflowAreRefused) {
  // [2^63 - 1, 2^63 - 1, 5] summed to 3 (wrapping): the rows were written at
  // offsets before the output (heap corruption, SIGABRT). Now a load error.
  const int64_t max = std::numeric_limits<int64_t>::max(), big = int64_t{1} << 62;
  for (const std::vector<int64_t>& dims :
       {std::vector<int64_t>{max, max, 5}, std::vector<int64_t>{big, big, big, big + 3}}) {
    std::vector<Out> in;
    for (size_t i = 0; i < dims.size(); ++i) in.push_back({"x" + std::to_string(i), kF});
    auto s = Session::create_from_bytes(
        model("FeatureVectorizer", in, {{"y", kF}}, [&](onnx::NodeProto* n) { ints(n, "inputdimensions", dims); }));
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.status().code(), StatusCode::kInvalidModel) << s.status().to_string();
    EXPECT_NE(s.status().message().find("inputdimensions"), std::string::npos) << s.status().to_string();
  }
}

}  // namespace
}  // namespace dlrt
