// RNN, GRU and LSTM against a plain per-row, per-timestep numpy reference
// (values generated offline; the reference loops over batch rows and steps).
#include <gtest/gtest.h>

#include <cmath>

#include "backends/cpu/kernels/isa.h"
#include "kernel_test_util.h"

namespace dlrt::cpu {
namespace {

using testing::attr_float;
using testing::attr_int;
using testing::attr_string;
using testing::expect_near;
using testing::run_op;

ir::Attribute attr_strings(std::vector<std::string> v) {
  ir::Attribute a;
  a.kind = ir::Attribute::Kind::kStrings;
  a.strings = std::move(v);
  return a;
}

Tensor f32(Shape s, const std::vector<float>& v) { return Tensor::from_vector<float>(std::move(s), v); }

// LSTM bidirectional
const std::vector<float> l_X = {1.00000000e-01f, 4.30000000e-01f, 2.10000000e-01f, 9.00000000e-02f, -1.50000000e-01f, 2.90000000e-01f, -1.20000000e-01f, 7.80000000e-01f, 9.30000000e-01f, -2.30000000e-01f, 5.80000000e-01f, 6.00000000e-02f, 1.40000000e-01f, 8.50000000e-01f, -8.60000000e-01f, -8.30000000e-01f, -9.60000000e-01f, 6.70000000e-01f};
const std::vector<float> l_W = {5.60000000e-01f, 7.40000000e-01f, 9.60000000e-01f, 6.00000000e-01f, -8.00000000e-02f, 5.60000000e-01f, -7.60000000e-01f, 2.80000000e-01f, -7.10000000e-01f, 8.90000000e-01f, 4.00000000e-02f, -1.70000000e-01f, -4.70000000e-01f, 5.50000000e-01f, -9.00000000e-02f, 1.40000000e-01f, -9.60000000e-01f, 2.40000000e-01f, 2.20000000e-01f, 2.30000000e-01f, 8.90000000e-01f, 3.60000000e-01f, -2.80000000e-01f, -1.30000000e-01f, 4.00000000e-01f, -8.80000000e-01f, 3.30000000e-01f, 3.40000000e-01f, -5.80000000e-01f, -7.40000000e-01f, -3.70000000e-01f, -2.70000000e-01f, 1.40000000e-01f, -1.20000000e-01f, 9.80000000e-01f, -8.00000000e-01f, -5.80000000e-01f, -6.80000000e-01f, 3.10000000e-01f, -4.90000000e-01f, -7.00000000e-02f, -5.10000000e-01f, -6.80000000e-01f, -7.80000000e-01f, 3.10000000e-01f, -7.20000000e-01f, -6.10000000e-01f, -2.60000000e-01f};
const std::vector<float> l_R = {6.40000000e-01f, -8.10000000e-01f, 6.80000000e-01f, -8.10000000e-01f, 9.50000000e-01f, -6.00000000e-02f, 9.50000000e-01f, 2.10000000e-01f, 4.80000000e-01f, -9.20000000e-01f, -4.30000000e-01f, -7.60000000e-01f, -4.10000000e-01f, -7.60000000e-01f, -3.60000000e-01f, -1.70000000e-01f, -8.70000000e-01f, 3.80000000e-01f, 1.30000000e-01f, -4.70000000e-01f, 5.00000000e-02f, -8.10000000e-01f, 1.50000000e-01f, 8.60000000e-01f, -3.60000000e-01f, 3.30000000e-01f, -7.40000000e-01f, 4.30000000e-01f, -4.20000000e-01f, -6.30000000e-01f, 1.70000000e-01f, -9.60000000e-01f};
const std::vector<float> l_B = {6.60000000e-01f, -9.90000000e-01f, 3.60000000e-01f, -4.60000000e-01f, 4.70000000e-01f, 9.20000000e-01f, -5.00000000e-01f, 1.50000000e-01f, 1.80000000e-01f, 1.40000000e-01f, -5.50000000e-01f, 9.10000000e-01f, -1.10000000e-01f, 6.90000000e-01f, 4.00000000e-01f, -4.10000000e-01f, 6.30000000e-01f, -2.10000000e-01f, 7.60000000e-01f, 1.60000000e-01f, 7.60000000e-01f, 3.90000000e-01f, 4.50000000e-01f, 0.00000000e+00f, 9.10000000e-01f, 2.90000000e-01f, -1.50000000e-01f, 2.10000000e-01f, -9.60000000e-01f, -4.00000000e-01f, 3.20000000e-01f, -4.20000000e-01f};
const std::vector<float> l_P = {2.40000000e-01f, -1.40000000e-01f, -7.30000000e-01f, -4.00000000e-01f, 1.40000000e-01f, 1.80000000e-01f, 1.50000000e-01f, 3.10000000e-01f, 3.00000000e-01f, -1.40000000e-01f, 7.90000000e-01f, -2.60000000e-01f};
const std::vector<float> l_h0 = {-1.30000000e-01f, 7.80000000e-01f, 6.10000000e-01f, 4.10000000e-01f, -8.00000000e-01f, 8.40000000e-01f, 4.30000000e-01f, 1.00000000e+00f};
const std::vector<float> l_c0 = {-7.00000000e-01f, 7.40000000e-01f, -6.80000000e-01f, 2.30000000e-01f, -7.50000000e-01f, 7.00000000e-01f, 6.10000000e-01f, 1.40000000e-01f};
// X scaled by 3 in the clip case
const std::vector<float> l_Y = {-5.48428619e-02f, 1.45605165e-01f, -9.62579262e-02f, -2.21631100e-02f, -7.22096490e-02f, -1.91391095e-01f, 3.13152129e-01f, -7.29933137e-02f, 1.10060003e-01f, -1.20657868e-01f, 4.68683147e-02f, -1.02067823e-01f, -5.86261880e-02f, -1.15396970e-01f, -2.74245413e-02f, -9.21996326e-02f, -1.41284157e-01f, -1.49104241e-01f, 0.00000000e+00f, 0.00000000e+00f, -1.31245535e-01f, 5.23703165e-02f, 0.00000000e+00f, 0.00000000e+00f};
const std::vector<float> l_Yh = {-1.41284157e-01f, -1.49104241e-01f, 4.68683147e-02f, -1.02067823e-01f, -7.22096490e-02f, -1.91391095e-01f, 3.13152129e-01f, -7.29933137e-02f};
const std::vector<float> l_Yc = {-2.01405831e-01f, -2.12884201e-01f, 7.40541922e-02f, -2.22161489e-01f, -1.26842489e-01f, -2.76006409e-01f, 4.72814143e-01f, -2.48422423e-01f};
const std::vector<float> lf_Y_bsdh = {-2.01435320e-01f, 2.85472014e-01f, 1.10650184e-01f, 1.08437475e-01f, -2.07053527e-01f, 6.90050994e-02f, -2.64082082e-01f, -1.77673220e-02f, -1.02977743e-02f, -5.67784678e-02f, 2.96269167e-02f, -7.29995053e-02f};
const std::vector<float> lf_Yh_bdh = {-2.07053527e-01f, 6.90050994e-02f, 2.96269167e-02f, -7.29995053e-02f};
const std::vector<float> g_W = {-1.90000000e-01f, -8.60000000e-01f, 3.90000000e-01f, -9.00000000e-02f, 4.40000000e-01f, 7.30000000e-01f, 9.50000000e-01f, 7.10000000e-01f, -9.80000000e-01f, -2.80000000e-01f, 4.60000000e-01f, -6.60000000e-01f, 4.00000000e-02f, -8.90000000e-01f, -6.00000000e-01f, -9.60000000e-01f, 5.90000000e-01f, -5.50000000e-01f};
const std::vector<float> g_R = {-3.10000000e-01f, 8.60000000e-01f, 4.10000000e-01f, -9.40000000e-01f, -6.70000000e-01f, 2.40000000e-01f, 1.50000000e-01f, -5.20000000e-01f, 8.70000000e-01f, 2.30000000e-01f, 7.00000000e-02f, 1.80000000e-01f};
const std::vector<float> g_B = {4.60000000e-01f, -3.80000000e-01f, -2.00000000e-01f, -5.80000000e-01f, -6.30000000e-01f, 8.90000000e-01f, 4.80000000e-01f, -2.00000000e-02f, -5.50000000e-01f, -4.90000000e-01f, -8.80000000e-01f, -1.30000000e-01f};
const std::vector<float> g_h0 = {-3.80000000e-01f, 3.90000000e-01f, -2.40000000e-01f, -6.40000000e-01f};
const std::vector<float> g0_Y = {-6.31082089e-01f, 6.22090181e-01f, -6.29108320e-01f, 3.96326734e-01f, -5.32262659e-01f, 5.26801211e-01f, -5.71616701e-01f, 3.89738536e-01f, 0.00000000e+00f, 0.00000000e+00f, -3.27592391e-01f, -1.23515339e-01f};
const std::vector<float> g0_Yh = {-6.31082089e-01f, 6.22090181e-01f, -6.29108320e-01f, 3.96326734e-01f};
const std::vector<float> g1_Y = {-6.17786475e-01f, 6.71983074e-01f, -5.47523459e-01f, 4.70316956e-01f, -5.28101506e-01f, 5.52820656e-01f, -5.00670886e-01f, 4.15066460e-01f, 0.00000000e+00f, 0.00000000e+00f, -2.44641187e-01f, -9.32291813e-02f};
const std::vector<float> g1_Yh = {-6.17786475e-01f, 6.71983074e-01f, -5.47523459e-01f, 4.70316956e-01f};
const std::vector<float> r_W = {-9.50000000e-01f, -8.70000000e-01f, 3.60000000e-01f, -9.00000000e-02f, 7.00000000e-02f, 7.90000000e-01f};
const std::vector<float> r_R = {9.80000000e-01f, -5.70000000e-01f, 3.30000000e-01f, -4.70000000e-01f};
const std::vector<float> r_B = {-9.60000000e-01f, 5.20000000e-01f, -3.60000000e-01f, -2.30000000e-01f};
const std::vector<float> r_Y_tanh = {-9.37075558e-01f, 4.43837797e-01f, -8.24464420e-01f, 4.62510290e-01f, -9.91377812e-01f, 5.17018053e-01f, -9.90186376e-01f, -9.05047620e-02f, -9.98934261e-01f, -7.22403253e-01f, -3.57393864e-01f, 4.94935225e-01f};
const std::vector<float> r_Yh_tanh = {-9.98934261e-01f, -7.22403253e-01f, -3.57393864e-01f, 4.94935225e-01f};
const std::vector<float> r_Y_leaky = {-8.56750000e-01f, 4.77000000e-01f, -5.85300000e-01f, 5.00500000e-01f, -1.33065250e+00f, 5.83182500e-01f, -1.22168950e+00f, -1.48420000e-02f, -2.06927674e+00f, -5.27855550e-01f, -3.21947885e-01f, 4.30618205e-01f};

// Reorders [S, B, I] into [B, S, I].
std::vector<float> to_batch_first(const std::vector<float>& x, int64_t S, int64_t B, int64_t I) {
  std::vector<float> out(x.size());
  for (int64_t t = 0; t < S; ++t)
    for (int64_t b = 0; b < B; ++b)
      for (int64_t i = 0; i < I; ++i) out[(b * S + t) * I + i] = x[(t * B + b) * I + i];
  return out;
}

TEST(RnnKernels, LstmBidirectionalPeepholesClipSeqLens) {
  std::vector<float> x3 = l_X;
  for (float& v : x3) v *= 3;
  auto r = run_op("LSTM",
                  {f32({3, 2, 3}, x3), f32({2, 8, 3}, l_W), f32({2, 8, 2}, l_R), f32({2, 16}, l_B),
                   Tensor::from_vector<int32_t>({2}, {3, 2}), f32({2, 2, 2}, l_h0), f32({2, 2, 2}, l_c0),
                   f32({2, 6}, l_P)},
                  {{"direction", attr_string("bidirectional")}, {"hidden_size", attr_int(2)}, {"clip", attr_float(0.9f)}},
                  3, 14);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].shape(), (Shape{3, 2, 2, 2}));
  expect_near((*r)[0], l_Y, 1e-5f);
  expect_near((*r)[1], l_Yh, 1e-5f);
  expect_near((*r)[2], l_Yc, 1e-5f);
}

// The kernel made with the graph's constants prepares W, R, B and P once;
// a run with other tensors in those inputs must not use what it prepared.
TEST(RnnKernels, PreparedConstantWeightsAndTheirFallback) {
  std::vector<float> x3 = l_X;
  for (float& v : x3) v *= 3;
  const Tensor x = f32({3, 2, 3}, x3), w = f32({2, 8, 3}, l_W), rr = f32({2, 8, 2}, l_R), b = f32({2, 16}, l_B);
  const Tensor lens = Tensor::from_vector<int32_t>({2}, {3, 2}), h0 = f32({2, 2, 2}, l_h0), c0 = f32({2, 2, 2}, l_c0);
  const Tensor p = f32({2, 6}, l_P);
  ir::Node node;
  node.name = "lstm";
  node.op_type = "LSTM";
  node.opset = 14;
  node.attributes = {{"direction", attr_string("bidirectional")}, {"hidden_size", attr_int(2)}, {"clip", attr_float(0.9f)}};
  for (int i = 0; i < 8; ++i) node.inputs.push_back(i);
  for (int i = 0; i < 3; ++i) node.outputs.push_back(100 + i);
  const KernelDef* def = builtin_kernels().find("LSTM", "", 14);
  ASSERT_NE(def, nullptr);
  ASSERT_TRUE(def->factory_with_constants);
  const std::vector<const Tensor*> constants = {nullptr, &w, &rr, &b, nullptr, nullptr, nullptr, &p};
  auto kernel = def->factory_with_constants(node, [&](size_t i) { return i < constants.size() ? constants[i] : nullptr; });
  ASSERT_TRUE(kernel.ok()) << kernel.status().to_string();
  ThreadPool pool(2);
  auto run = [&](const std::vector<Tensor>& in) -> std::vector<RunValue> {
    std::vector<RunValue> values;
    for (const auto& t : in) values.push_back(RunValue::of(t));
    std::vector<const RunValue*> ptrs;
    for (auto& v : values) ptrs.push_back(&v);
    std::vector<RunValue> outs(3);
    KernelContext ctx(node, ptrs, outs, pool, nullptr);
    Status s = (*kernel)->compute(ctx);
    EXPECT_TRUE(s.ok()) << s.to_string();
    return outs;
  };
  // The prepared constants, twice (the second run reuses the per-thread buffers).
  for (int i = 0; i < 2; ++i) {
    auto outs = run({x, w, rr, b, lens, h0, c0, p});
    expect_near(outs[0].tensor, l_Y, 1e-5f);
    expect_near(outs[1].tensor, l_Yh, 1e-5f);
    expect_near(outs[2].tensor, l_Yc, 1e-5f);
  }
  // Other tensors holding the same values: the run prepares its own and agrees.
  auto same = run({x, f32({2, 8, 3}, l_W), f32({2, 8, 2}, l_R), f32({2, 16}, l_B), lens, h0, c0, f32({2, 6}, l_P)});
  expect_near(same[0].tensor, l_Y, 1e-5f);
  // Other weights: the answer must change (the prepared W is not used).
  std::vector<float> w2 = l_W;
  for (float& v : w2) v = -v;
  auto other = run({x, f32({2, 8, 3}, w2), rr, b, lens, h0, c0, p});
  auto direct = run_op("LSTM", {x, f32({2, 8, 3}, w2), rr, b, lens, h0, c0, p}, node.attributes, 3, 14);
  ASSERT_TRUE(direct.ok()) << direct.status().to_string();
  for (int64_t i = 0; i < other[0].tensor.size(); ++i)
    EXPECT_FLOAT_EQ(other[0].tensor.data<float>()[i], (*direct)[0].data<float>()[i]) << i;
}

TEST(RnnKernels, LstmBatchFirstInputForget) {
  std::vector<float> w(l_W.begin(), l_W.begin() + 24), rr(l_R.begin(), l_R.begin() + 16), b(l_B.begin(), l_B.begin() + 16),
      p(l_P.begin(), l_P.begin() + 6);
  // initial states for direction 0 reordered to [B, D, H] (D == 1 so the data is unchanged).
  std::vector<float> h0(l_h0.begin(), l_h0.begin() + 4), c0(l_c0.begin(), l_c0.begin() + 4);
  auto r = run_op("LSTM",
                  {f32({2, 3, 3}, to_batch_first(l_X, 3, 2, 3)), f32({1, 8, 3}, w), f32({1, 8, 2}, rr), f32({1, 16}, b),
                   Tensor(), f32({2, 1, 2}, h0), f32({2, 1, 2}, c0), f32({1, 6}, p)},
                  {{"hidden_size", attr_int(2)}, {"layout", attr_int(1)}, {"input_forget", attr_int(1)}}, 2, 14);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].shape(), (Shape{2, 3, 1, 2}));
  EXPECT_EQ((*r)[1].shape(), (Shape{2, 1, 2}));
  expect_near((*r)[0], lf_Y_bsdh, 1e-5f);
  expect_near((*r)[1], lf_Yh_bdh, 1e-5f);
}

TEST(RnnKernels, GruReverseBothResetModes) {
  for (int lbr = 0; lbr < 2; ++lbr) {
    auto r = run_op("GRU",
                    {f32({3, 2, 3}, l_X), f32({1, 6, 3}, g_W), f32({1, 6, 2}, g_R), f32({1, 12}, g_B),
                     Tensor::from_vector<int32_t>({2}, {2, 3}), f32({1, 2, 2}, g_h0)},
                    {{"direction", attr_string("reverse")}, {"linear_before_reset", attr_int(lbr)}}, 2, 7);
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    expect_near((*r)[0], lbr ? g1_Y : g0_Y, 1e-5f);
    expect_near((*r)[1], lbr ? g1_Yh : g0_Yh, 1e-5f);
  }
}

TEST(RnnKernels, RnnDefaultTanhAndLeakyRelu) {
  auto r = run_op("RNN", {f32({3, 2, 3}, l_X), f32({1, 2, 3}, r_W), f32({1, 2, 2}, r_R), f32({1, 4}, r_B)}, {}, 2, 14);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_near((*r)[0], r_Y_tanh, 1e-5f);
  expect_near((*r)[1], r_Yh_tanh, 1e-5f);
  auto l = run_op("RNN", {f32({3, 2, 3}, l_X), f32({1, 2, 3}, r_W), f32({1, 2, 2}, r_R), f32({1, 4}, r_B)},
                  {{"activations", attr_strings({"LeakyRelu"})}, {"activation_alpha", testing::attr_floats({0.5f})}}, 1,
                  14);
  ASSERT_TRUE(l.ok()) << l.status().to_string();
  expect_near((*l)[0], r_Y_leaky, 1e-5f);
}

TEST(RnnKernels, DoubleAndHalfMatchFloat) {
  std::vector<double> xd(l_X.begin(), l_X.end()), wd(r_W.begin(), r_W.end()), rd(r_R.begin(), r_R.end());
  auto r = run_op("RNN",
                  {Tensor::from_vector<double>({3, 2, 3}, xd), Tensor::from_vector<double>({1, 2, 3}, wd),
                   Tensor::from_vector<double>({1, 2, 2}, rd)},
                  {}, 2, 14);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  ASSERT_EQ((*r)[1].dtype(), DType::kFloat64);
  auto f = run_op("RNN", {f32({3, 2, 3}, l_X), f32({1, 2, 3}, r_W), f32({1, 2, 2}, r_R)}, {}, 2, 14);
  ASSERT_TRUE(f.ok());
  for (int i = 0; i < 4; ++i) EXPECT_NEAR((*r)[1].data<double>()[i], (*f)[1].data<float>()[i], 1e-5);

  std::vector<Float16> xh(l_X.begin(), l_X.end()), wh(r_W.begin(), r_W.end()), rh(r_R.begin(), r_R.end());
  auto h = run_op("RNN",
                  {Tensor::from_vector<Float16>({3, 2, 3}, xh), Tensor::from_vector<Float16>({1, 2, 3}, wh),
                   Tensor::from_vector<Float16>({1, 2, 2}, rh)},
                  {}, 2, 14);
  ASSERT_TRUE(h.ok()) << h.status().to_string();
  ASSERT_EQ((*h)[1].dtype(), DType::kFloat16);
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(static_cast<float>((*h)[1].data<Float16>()[i]), (*f)[1].data<float>()[i], 5e-3);
}

TEST(RnnKernels, BadInputsAreErrors) {
  // W with the wrong gate count for LSTM.
  auto r = run_op("LSTM", {f32({3, 2, 3}, l_X), f32({1, 6, 3}, g_W), f32({1, 6, 2}, g_R)}, {}, 1, 14);
  EXPECT_FALSE(r.ok());
  // hidden_size disagreeing with R.
  r = run_op("RNN", {f32({3, 2, 3}, l_X), f32({1, 2, 3}, r_W), f32({1, 2, 2}, r_R)}, {{"hidden_size", attr_int(3)}});
  EXPECT_FALSE(r.ok());
  // sequence_lens beyond the sequence.
  r = run_op("RNN", {f32({3, 2, 3}, l_X), f32({1, 2, 3}, r_W), f32({1, 2, 2}, r_R), Tensor(),
                     Tensor::from_vector<int32_t>({2}, {4, 1})});
  EXPECT_FALSE(r.ok());
  // Unknown activation and direction.
  r = run_op("RNN", {f32({3, 2, 3}, l_X), f32({1, 2, 3}, r_W), f32({1, 2, 2}, r_R)},
             {{"activations", attr_strings({"Swish"})}});
  EXPECT_FALSE(r.ok());
  r = run_op("RNN", {f32({3, 2, 3}, l_X), f32({1, 2, 3}, r_W), f32({1, 2, 2}, r_R)},
             {{"direction", attr_string("sideways")}});
  EXPECT_FALSE(r.ok());
  // Missing R.
  r = run_op("GRU", {f32({3, 2, 3}, l_X), f32({1, 6, 3}, g_W)});
  EXPECT_FALSE(r.ok());
}

// A bidirectional layer runs its two directions at once on 2 threads: LSTM
// and GRU (both reset modes), with sequence lengths, agree with 1 thread, for
// batches of 1, 3 and 6 rows (the AVX-512 step product's 1-, 3- and 4+2-row
// blocks) and H = 40 (a partial column block), and the portable loops
// (DLRT_CPU_ISA=generic) agree with both.
TEST(RnnKernels, BidirectionalOnTwoThreadsMatchesOne) {
  auto fill = [](size_t n, float a, float f) {
    std::vector<float> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = a * std::sin(f * static_cast<float>(i) + 0.3f);
    return v;
  };
  const std::vector<std::pair<const char*, int64_t>> ops = {{"LSTM", 0}, {"GRU", 0}, {"GRU", 1}};
  for (const int64_t B : {1, 3, 6})
  for (const auto& [op, linear_before_reset] : ops) {
    const int64_t S = 9, I = 12, H = B == 3 ? 16 : 40;
    const Tensor x = f32({S, B, I}, fill(S * B * I, 1.0f, 0.7f));
    std::vector<int32_t> len_values = {9, 4, 7, 9, 1, 8};
    len_values.resize(static_cast<size_t>(B));
    const Tensor lens = Tensor::from_vector<int32_t>({B}, len_values);
    const bool lstm = std::string(op) == "LSTM";
    const int64_t G = lstm ? 4 : 3;
    ir::Attributes attrs = {{"direction", attr_string("bidirectional")}, {"hidden_size", attr_int(H)}};
    if (linear_before_reset) attrs["linear_before_reset"] = attr_int(1);
    std::vector<Tensor> in = {x, f32({2, G * H, I}, fill(2 * G * H * I, 0.2f, 0.37f)),
                              f32({2, G * H, H}, fill(2 * G * H * H, 0.2f, 0.11f)),
                              f32({2, 2 * G * H}, fill(4 * G * H, 0.1f, 0.53f)), lens};
    SCOPED_TRACE(std::string(op) + (linear_before_reset ? " linear_before_reset" : "") + " batch " + std::to_string(B));
    auto one = run_op(op, in, attrs, 2, 14, "", 1);
    auto two = run_op(op, in, attrs, 2, 14, "", 2);
    Result<std::vector<Tensor>> portable = Status::Ok();
    {
      ScopedCpuIsa generic(CpuIsa::kGeneric);  // the tiled loops: the reference for the vector step product
      portable = run_op(op, in, attrs, 2, 14, "", 1);
    }
    ASSERT_TRUE(one.ok() && two.ok() && portable.ok());
    for (int k = 0; k < 2; ++k) {
      std::vector<float> want((*portable)[k].data<float>(), (*portable)[k].data<float>() + (*portable)[k].size());
      expect_near((*one)[k], want, 2e-5f);
      expect_near((*two)[k], want, 2e-5f);
    }
  }
}

// The fused LSTM cell covers only sigmoid/tanh/tanh: other activation lists
// (here h = sigmoid, or g = relu in one direction) take the per-gate path, so
// the vector build must agree with the portable one.
TEST(RnnKernels, LstmOtherActivationsAreNotFused) {
  auto fill = [](size_t n, float a, float f) {
    std::vector<float> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = a * std::sin(f * static_cast<float>(i) + 0.3f);
    return v;
  };
  const int64_t S = 5, B = 2, I = 7, H = 24, G = 4;
  const std::vector<Tensor> in = {f32({S, B, I}, fill(S * B * I, 1.0f, 0.7f)),
                                  f32({2, G * H, I}, fill(2 * G * H * I, 0.3f, 0.37f)),
                                  f32({2, G * H, H}, fill(2 * G * H * H, 0.3f, 0.11f))};
  for (const auto& acts : {std::vector<std::string>{"Sigmoid", "Tanh", "Sigmoid"},
                           std::vector<std::string>{"Sigmoid", "Tanh", "Tanh", "Sigmoid", "Relu", "Tanh"}}) {
    ir::Attributes attrs = {{"direction", attr_string("bidirectional")}, {"hidden_size", attr_int(H)},
                            {"activations", attr_strings(acts)}};
    auto vec = run_op("LSTM", in, attrs, 3, 14, "", 1);
    Result<std::vector<Tensor>> portable = Status::Ok();
    {
      ScopedCpuIsa generic(CpuIsa::kGeneric);
      portable = run_op("LSTM", in, attrs, 3, 14, "", 1);
    }
    ASSERT_TRUE(vec.ok() && portable.ok());
    for (int k = 0; k < 3; ++k) {
      std::vector<float> want((*portable)[k].data<float>(), (*portable)[k].data<float>() + (*portable)[k].size());
      expect_near((*vec)[k], want, 2e-5f);
    }
  }
}

TEST(RnnKernels, LargerBatchUsesThreadsAndMatchesSmallRuns) {
  // A batch of 64 identical rows must give 64 identical answers equal to a batch of one.
  const int64_t S = 5, B = 64, I = 40, H = 48;
  std::vector<float> x1(S * I), w(4 * H * I), rr(4 * H * H);
  for (size_t i = 0; i < x1.size(); ++i) x1[i] = std::sin(0.1f * i);
  for (size_t i = 0; i < w.size(); ++i) w[i] = 0.05f * std::cos(0.37f * i);
  for (size_t i = 0; i < rr.size(); ++i) rr[i] = 0.05f * std::sin(0.11f * i);
  std::vector<float> xb(S * B * I);
  for (int64_t t = 0; t < S; ++t)
    for (int64_t b = 0; b < B; ++b)
      for (int64_t i = 0; i < I; ++i) xb[(t * B + b) * I + i] = x1[t * I + i];
  auto one = run_op("LSTM", {f32({S, 1, I}, x1), f32({1, 4 * H, I}, w), f32({1, 4 * H, H}, rr)}, {}, 2, 14);
  auto many = run_op("LSTM", {f32({S, B, I}, xb), f32({1, 4 * H, I}, w), f32({1, 4 * H, H}, rr)}, {}, 2, 14);
  ASSERT_TRUE(one.ok() && many.ok());
  for (int64_t b = 0; b < B; ++b)
    for (int64_t j = 0; j < H; ++j)
      ASSERT_NEAR((*many)[1].data<float>()[b * H + j], (*one)[1].data<float>()[j], 1e-5f);
}

}  // namespace
}  // namespace dlrt::cpu
