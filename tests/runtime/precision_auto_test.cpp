// cpu_precision "auto": the choice over injected measurements, the output
// comparison, generated canary inputs, and a whole session choosing.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <onnx/onnx_pb.h>

#include "dlrt/precision_choice.h"
#include "dlrt/session.h"
#include "runtime/precision_auto.h"

namespace dlrt {
namespace {

PrecisionTrial measured(const std::string& name, double ms, double cosine = 1, double rel = 0) {
  PrecisionTrial t;
  t.precision = name;
  t.ran = true;
  t.median_ms = ms;
  t.min_cosine = cosine;
  t.max_rel_error = rel;
  return t;
}

PrecisionChoice choice_of(std::vector<PrecisionTrial> candidates, double f32_ms = 100) {
  PrecisionChoice c;
  c.automatic = true;
  c.trials.push_back(measured("f32", f32_ms));
  for (auto& t : candidates) c.trials.push_back(t);
  decide_precision(c);
  return c;
}

TEST(PrecisionAuto, PicksAFasterCandidateWithinTheBound) {
  const PrecisionChoice c = choice_of({measured("bf16", 50, 0.99999, 3e-3)});
  EXPECT_EQ(c.chosen, "bf16");
  EXPECT_EQ(c.trials[1].verdict, "chosen");
  EXPECT_TRUE(c.trials[1].within_bound && c.trials[1].faster);
  EXPECT_EQ(c.trials[0].verdict, "reference");
  EXPECT_NE(c.reason.find("0.50x f32's time"), std::string::npos) << c.reason;
}

TEST(PrecisionAuto, RefusesACandidateOverTheBound) {
  PrecisionChoice c = choice_of({measured("bf16", 10, 0.9998, 1e-3)});  // cosine below 0.9999
  EXPECT_EQ(c.chosen, "f32");
  EXPECT_FALSE(c.trials[1].within_bound);
  EXPECT_EQ(c.trials[1].verdict.rfind("over the bound", 0), 0u) << c.trials[1].verdict;
  c = choice_of({measured("bf16", 10, 0.99999, 1.1e-2)});  // relative error above 1e-2
  EXPECT_EQ(c.chosen, "f32");
  EXPECT_EQ(c.trials[1].verdict.rfind("over the bound", 0), 0u) << c.trials[1].verdict;
  EXPECT_NE(c.reason.find("bf16 cosine 0.999990, rel. error 1.1e-02"), std::string::npos) << c.reason;
  // At the bound exactly: accepted.
  EXPECT_EQ(choice_of({measured("bf16", 10, 0.9999, 1e-2)}).chosen, "bf16");
}

TEST(PrecisionAuto, RefusesACandidateThatIsNotFaster) {
  PrecisionChoice c = choice_of({measured("bf16", 131, 1, 0)});
  EXPECT_EQ(c.chosen, "f32");
  EXPECT_EQ(c.trials[0].verdict, "chosen");
  EXPECT_EQ(c.trials[1].verdict.rfind("not faster", 0), 0u) << c.trials[1].verdict;
  EXPECT_NE(c.reason.find("1.31x f32's time"), std::string::npos) << c.reason;
  // Faster, but within the margin (5%): f32.
  EXPECT_EQ(choice_of({measured("bf16", 96)}).chosen, "f32");
}

TEST(PrecisionAuto, TiesGoToF32) {
  EXPECT_EQ(choice_of({measured("bf16", 100)}).chosen, "f32");
  PrecisionChoice c;
  c.bound.speed_margin = 0;
  c.trials = {measured("f32", 100), measured("bf16", 100)};
  decide_precision(c);
  EXPECT_EQ(c.chosen, "f32");
  // Nothing measured (a model too small to time): f32.
  EXPECT_EQ(choice_of({measured("bf16", 0)}, 0).chosen, "f32");
}

TEST(PrecisionAuto, FastestCandidateWinsAndEqualsKeepTheFirst) {
  PrecisionChoice c = choice_of({measured("bf16x3", 60, 1, 1e-5), measured("bf16", 40, 0.99999, 2e-3)});
  EXPECT_EQ(c.chosen, "bf16");
  EXPECT_EQ(c.trials[1].verdict, "slower than bf16");
  c = choice_of({measured("bf16x3", 40, 1, 1e-5), measured("bf16", 40, 0.99999, 2e-3)});
  EXPECT_EQ(c.chosen, "bf16x3");
}

TEST(PrecisionAuto, SkippedAndMismatchedCandidatesKeepTheirVerdict) {
  PrecisionTrial absent;
  absent.precision = "bf16x3";
  absent.verdict = "not available: no AMX";
  PrecisionTrial nan = measured("bf16", 10);
  nan.verdict = "over the bound: output 'y' is nan where f32 gives 1";
  const PrecisionChoice c = choice_of({absent, nan});
  EXPECT_EQ(c.chosen, "f32");
  EXPECT_EQ(c.trials[1].verdict, "not available: no AMX");
  EXPECT_EQ(c.trials[2].verdict, "over the bound: output 'y' is nan where f32 gives 1");
  EXPECT_NE(c.reason.find("bf16x3 not available: no AMX"), std::string::npos) << c.reason;
}

TEST(PrecisionAuto, ComparesRows) {
  const std::vector<TensorInfo> names(2);
  const Tensor ref = Tensor::from_vector<float>({2, 2}, {1, 0, 0, 2});
  CanaryError same;
  compare_canary_outputs({ref}, {ref}, names, same);
  EXPECT_EQ(same.min_cosine, 1);
  EXPECT_EQ(same.max_rel_error, 0);
  EXPECT_TRUE(same.mismatch.empty());
  // Row 1 is [0, 2] against [0.02, 2]: rel. error 0.02 / 2; cosine 2 / sqrt(4.0004).
  CanaryError off;
  compare_canary_outputs({ref}, {Tensor::from_vector<float>({2, 2}, {1, 0, 0.02f, 2})}, names, off);
  EXPECT_NEAR(off.max_rel_error, 0.01, 1e-6);
  EXPECT_NEAR(off.min_cosine, 2 / std::sqrt(4.0004), 1e-7);
  // A NaN where f32 has a number, integers that differ, a zero row made non-zero.
  CanaryError nan;
  compare_canary_outputs({ref}, {Tensor::from_vector<float>({2, 2}, {1, std::nanf(""), 0, 2})}, names, nan);
  EXPECT_FALSE(nan.mismatch.empty());
  CanaryError ints;
  compare_canary_outputs({Tensor::from_vector<int64_t>({2}, {1, 2})}, {Tensor::from_vector<int64_t>({2}, {1, 3})},
                         names, ints);
  EXPECT_NE(ints.mismatch.find("int64"), std::string::npos) << ints.mismatch;
  CanaryError zero;
  compare_canary_outputs({Tensor::from_vector<float>({2}, {0, 0})}, {Tensor::from_vector<float>({2}, {0, 1e-6f})},
                         names, zero);
  EXPECT_EQ(zero.min_cosine, 0);
  EXPECT_TRUE(std::isinf(zero.max_rel_error));
}

TEST(PrecisionAuto, GeneratesInputsFromDeclaredShapes) {
  TensorInfo ids{"ids", DType::kInt64, {-1, -1}, {"batch", "seq"}, true, "tensor(int64)"};
  TensorInfo mask{"mask", DType::kInt64, {-1, -1}, {"batch", "seq"}, true, "tensor(int64)"};
  TensorInfo x{"x", DType::kFloat32, {-1, 4, -1}, {"", "", ""}, true, "tensor(float)"};
  auto feeds = generate_canary_inputs({ids, mask, x});
  ASSERT_TRUE(feeds.ok()) << feeds.status().to_string();
  EXPECT_EQ((*feeds)["ids"].shape(), (Shape{2, 8}));
  EXPECT_EQ((*feeds)["mask"].shape(), (Shape{2, 8}));
  EXPECT_EQ((*feeds)["x"].shape(), (Shape{2, 4, 8}));
  for (int64_t i = 0; i < 16; ++i) EXPECT_TRUE((*feeds)["ids"].data<int64_t>()[i] == 0 || (*feeds)["ids"].data<int64_t>()[i] == 1);
  for (int64_t i = 0; i < 64; ++i) EXPECT_LT(std::fabs((*feeds)["x"].data<float>()[i]), 1.0f);
  TensorInfo text{"text", DType::kString, {1}, {""}, true, "tensor(string)"};
  auto refused = generate_canary_inputs({text});
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("'text'"), std::string::npos) << refused.status().message();
}

void add_float_io(onnx::ValueInfoProto* vi, const std::string& name, const std::string& rows, int64_t cols) {
  vi->set_name(name);
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto::FLOAT);
  tt->mutable_shape()->add_dim()->set_dim_param(rows);
  tt->mutable_shape()->add_dim()->set_dim_value(cols);
}

void add_weight(onnx::GraphProto* g, const std::string& name, float shift) {
  auto* w = g->add_initializer();
  w->set_name(name);
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(64);
  w->add_dims(48);
  for (int i = 0; i < 64 * 48; ++i) w->add_float_data(static_cast<float>((i * 37) % 101) / 50.0f - 1.0f + shift);
}

// y = x @ W; with `cancel`, y = x @ W - x @ (W + 1e-4): what one bf16 pass
// rounds to zero (W and W + 1e-4 are one bf16 number), f32 does not.
std::string auto_model(bool cancel) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name("auto");
  add_float_io(g->add_input(), "x", "rows", 64);
  add_float_io(g->add_output(), "y", "rows", 48);
  add_weight(g, "w", 0);
  auto* n = g->add_node();
  n->set_op_type("MatMul");
  n->add_input("x");
  n->add_input("w");
  n->add_output(cancel ? "a" : "y");
  if (cancel) {
    add_weight(g, "w2", 1e-4f);
    n = g->add_node();
    n->set_op_type("MatMul");
    n->add_input("x");
    n->add_input("w2");
    n->add_output("b");
    n = g->add_node();
    n->set_op_type("Sub");
    n->add_input("a");
    n->add_input("b");
    n->add_output("y");
  }
  return m.SerializeAsString();
}

const PrecisionTrial* trial(const PrecisionChoice& c, const std::string& name) {
  for (const auto& t : c.trials)
    if (t.precision == name) return &t;
  return nullptr;
}

TEST(PrecisionAuto, SessionReportsItsChoice) {
  SessionOptions opts;
  opts.threads = 1;
  opts.cpu_precision = "auto";
  auto s = Session::create_from_bytes(auto_model(false), opts);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  const PrecisionChoice& c = precision_choice(**s);
  EXPECT_TRUE(c.automatic);
  EXPECT_EQ(c.canary, "generated from the inputs' shapes");
  EXPECT_EQ(c.canary_sets, 1);
  ASSERT_EQ(c.trials.size(), 3u);
  EXPECT_EQ(c.trials[0].precision, "f32");
  EXPECT_TRUE(c.trials[0].ran);
  const PrecisionTrial* bf16 = trial(c, "bf16");
  ASSERT_TRUE(bf16);
  EXPECT_FALSE(bf16->verdict.empty());
  if (bf16->ran) {  // AVX512-BF16 here: measured, one bf16 pass is not exact
    EXPECT_LT(bf16->min_cosine, 1.0);
    EXPECT_GT(bf16->max_rel_error, 0.0);
    EXPECT_GT(bf16->median_ms, 0.0);
  } else {
    EXPECT_EQ(bf16->verdict.rfind("not available: ", 0), 0u) << bf16->verdict;
  }
  const PrecisionTrial* chosen = trial(c, c.chosen);
  ASSERT_TRUE(chosen);
  EXPECT_EQ(chosen->verdict, "chosen");
  const std::string label = (*s)->placement().partitions[0].precision;
  EXPECT_EQ(label.rfind(c.chosen, 0), 0u) << label;
  EXPECT_NE(label.find("; auto: "), std::string::npos) << label;
  EXPECT_TRUE((*s)->run({{"x", Tensor::from_vector<float>({1, 64}, std::vector<float>(64, 0.5f))}}).ok());

  // A named precision: nothing measured.
  opts.cpu_precision = "f32";
  auto named = Session::create_from_bytes(auto_model(false), opts);
  ASSERT_TRUE(named.ok());
  EXPECT_FALSE(precision_choice(**named).automatic);
  EXPECT_EQ(precision_choice(**named).chosen, "f32");
}

TEST(PrecisionAuto, GivenCanaryInputsAndARefusedCandidate) {
  SessionOptions opts;
  opts.threads = 1;
  opts.cpu_precision = "auto";
  std::vector<float> xv(3 * 64);
  for (size_t i = 0; i < xv.size(); ++i) xv[i] = static_cast<float>((i * 13) % 29) / 14.0f - 1.0f;
  opts.canary_inputs = {{{"x", Tensor::from_vector<float>({3, 64}, xv)}},
                        {{"x", Tensor::from_vector<float>({1, 64}, std::vector<float>(64, 1.0f))}}};
  auto s = Session::create_from_bytes(auto_model(true), opts);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  const PrecisionChoice& c = precision_choice(**s);
  EXPECT_EQ(c.canary, "given");
  EXPECT_EQ(c.canary_sets, 2);
  const PrecisionTrial* bf16 = trial(c, "bf16");
  ASSERT_TRUE(bf16);
  EXPECT_TRUE(bf16->ran || bf16->verdict.rfind("not available: ", 0) == 0) << bf16->verdict;
  if (bf16->ran) {  // the difference of two products bf16 rounds alike is lost: refused
    EXPECT_FALSE(bf16->within_bound);
    EXPECT_EQ(bf16->verdict.rfind("over the bound", 0), 0u) << bf16->verdict;
  }
  EXPECT_NE(c.chosen, "bf16") << c.reason;

  // Canary inputs the model refuses: an error of f32's run, f32 kept.
  opts.canary_inputs = {{{"nope", Tensor::from_vector<float>({1}, {1.0f})}}};
  auto bad = Session::create_from_bytes(auto_model(false), opts);
  ASSERT_TRUE(bad.ok()) << bad.status().to_string();
  EXPECT_EQ(precision_choice(**bad).chosen, "f32");
  EXPECT_NE(precision_choice(**bad).reason.find("do not run in f32"), std::string::npos) << precision_choice(**bad).reason;
}

}  // namespace
}  // namespace dlrt
