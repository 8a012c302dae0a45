// com.microsoft MatMulNBits, QAttention and QEmbedLayerNormalization
// (contrib_quant_transformer.cpp): values on small cases worked out here, and
// the errors for inputs that do not fit the attributes. Agreement with ONNX
// Runtime on every variant is the quantized zoo's (contrib_quant_models.py).
#include <gtest/gtest.h>

#include <cmath>
#include <utility>
#include <vector>

#include <onnx/onnx_pb.h>

#include "../onnx_proto_util.h"
#include "dlrt/session.h"
#include "kernel_test_util.h"

namespace dlrt::cpu::testing {
namespace {

constexpr const char* kMs = "com.microsoft";

template <typename T>
Tensor make(DType dt, Shape s, std::vector<T> v) {
  auto t = Tensor::allocate(dt, s).value();
  EXPECT_EQ(t.size(), static_cast<int64_t>(v.size()));
  for (size_t i = 0; i < v.size(); ++i) t.data<T>()[i] = v[i];
  return t;
}

Tensor floats(Shape s, std::vector<float> v) { return make<float>(DType::kFloat32, std::move(s), std::move(v)); }
Tensor bytes(Shape s, std::vector<uint8_t> v) { return make<uint8_t>(DType::kUInt8, std::move(s), std::move(v)); }

ir::Attributes nbits_attrs(int64_t K, int64_t N, int64_t bits, int64_t block) {
  return {{"K", attr_int(K)}, {"N", attr_int(N)}, {"bits", attr_int(bits)}, {"block_size", attr_int(block)}};
}

// K = 16 (one block of 16), N = 2, 4 bits: column 0 holds q = k, column 1
// holds q = 15 - k; scales 0.5 and 0.25.
Tensor nbits_b() {
  std::vector<uint8_t> v(2 * 8);
  for (int k = 0; k < 16; k += 2) {
    v[k / 2] = static_cast<uint8_t>(k | ((k + 1) << 4));
    v[8 + k / 2] = static_cast<uint8_t>((15 - k) | ((14 - k) << 4));
  }
  return bytes({2, 1, 8}, v);
}

std::vector<float> ones(size_t n) { return std::vector<float>(n, 1.0f); }

TEST(ContribQuant, MatMulNBitsDefaultAndPackedZeroPoints) {
  const Tensor a = floats({1, 16}, ones(16));
  const Tensor scales = floats({2, 1}, {0.5f, 0.25f});
  // No zero points: 8. sum_k (k - 8) = -8; sum_k (15 - k - 8) = -8.
  auto r = run_op("MatMulNBits", {a, nbits_b(), scales}, nbits_attrs(16, 2, 4, 16), 1, 1, kMs);
  ASSERT_TRUE(r.ok()) << r.status().message();
  expect_near((*r)[0], {-8 * 0.5f, -8 * 0.25f});
  // Packed zero points, one 4-bit value per row (low nibble): 0 and 15; a bias.
  auto z = run_op("MatMulNBits", {a, nbits_b(), scales, bytes({2, 1}, {0x00, 0x0f}), Tensor(), floats({2}, {1, 2})},
                  nbits_attrs(16, 2, 4, 16), 1, 1, kMs);
  ASSERT_TRUE(z.ok()) << z.status().message();
  expect_near((*z)[0], {120 * 0.5f + 1, -120 * 0.25f + 2});
}

TEST(ContribQuant, MatMulNBitsAccuracyLevel4RoundsAToInt8PerBlock) {
  // A = [127, 0.4 x 15]: its block's scale is 1, so the 0.4s round to 0; B
  // all 9 (zero point 8: weight 1), scale 1.
  std::vector<float> av(16, 0.4f);
  av[0] = 127;
  const Tensor a = floats({1, 16}, av);
  const Tensor b = bytes({1, 1, 8}, std::vector<uint8_t>(8, 0x99));
  const Tensor scale = floats({1, 1}, {1.0f});
  auto at = nbits_attrs(16, 1, 4, 16);
  auto f = run_op("MatMulNBits", {a, b, scale}, at, 1, 1, kMs);
  ASSERT_TRUE(f.ok()) << f.status().message();
  expect_near((*f)[0], {127 + 0.4f * 15});
  at["accuracy_level"] = attr_int(4);
  auto q = run_op("MatMulNBits", {a, b, scale}, at, 1, 1, kMs);
  ASSERT_TRUE(q.ok()) << q.status().message();
  expect_near((*q)[0], {127});
  // 2-bit weights in blocks of 16 stay float (as in ONNX Runtime).
  auto at2 = nbits_attrs(16, 1, 2, 16);
  at2["accuracy_level"] = attr_int(4);
  auto t = run_op("MatMulNBits", {a, bytes({1, 1, 4}, std::vector<uint8_t>(4, 0xff)), scale}, at2, 1, 1, kMs);
  ASSERT_TRUE(t.ok()) << t.status().message();
  expect_near((*t)[0], {127 + 0.4f * 15});  // 3 - 2 = 1 each
}

TEST(ContribQuant, MatMulNBitsRejectsInputsThatDoNotFitTheAttributes) {
  const Tensor a = floats({1, 16}, ones(16));
  const Tensor scales = floats({2, 1}, {0.5f, 0.25f});
  auto code = [&](std::vector<Tensor> in, ir::Attributes at) {
    auto r = run_op("MatMulNBits", std::move(in), std::move(at), 1, 1, kMs);
    return r.ok() ? StatusCode::kOk : r.status().code();
  };
  // A's last dim is not K.
  EXPECT_EQ(code({floats({1, 8}, ones(8)), nbits_b(), scales}, nbits_attrs(16, 2, 4, 16)), StatusCode::kInvalidArgument);
  // B's shape does not match N / K / block_size.
  EXPECT_EQ(code({a, nbits_b(), scales}, nbits_attrs(16, 3, 4, 16)), StatusCode::kInvalidArgument);
  EXPECT_EQ(code({floats({1, 32}, ones(32)), nbits_b(), scales}, nbits_attrs(32, 2, 4, 16)),
            StatusCode::kInvalidArgument);
  // block_size not a power of two, or below 16; bits 3: refused when the kernel is made.
  EXPECT_EQ(code({a, nbits_b(), scales}, nbits_attrs(16, 2, 4, 24)), StatusCode::kInvalidModel);
  EXPECT_EQ(code({a, nbits_b(), scales}, nbits_attrs(16, 2, 4, 8)), StatusCode::kInvalidModel);
  EXPECT_EQ(code({a, nbits_b(), scales}, nbits_attrs(16, 2, 3, 16)), StatusCode::kInvalidModel);
  // scales of the wrong shape or type.
  EXPECT_EQ(code({a, nbits_b(), floats({3}, {1, 1, 1})}, nbits_attrs(16, 2, 4, 16)), StatusCode::kInvalidArgument);
  EXPECT_EQ(code({a, nbits_b(), bytes({2, 1}, {1, 1})}, nbits_attrs(16, 2, 4, 16)), StatusCode::kInvalidArgument);
  // zero points of the wrong shape; bias of the wrong size.
  EXPECT_EQ(code({a, nbits_b(), scales, bytes({3}, {0, 0, 0})}, nbits_attrs(16, 2, 4, 16)), StatusCode::kInvalidArgument);
  EXPECT_EQ(code({a, nbits_b(), scales, Tensor(), Tensor(), floats({3}, {0, 0, 0})}, nbits_attrs(16, 2, 4, 16)),
            StatusCode::kInvalidArgument);
  // g_idx out of range; g_idx with packed zero points (refused, see the kernel).
  const Tensor g_bad = make<int32_t>(DType::kInt32, {16}, std::vector<int32_t>(16, 1));
  EXPECT_EQ(code({a, nbits_b(), scales, Tensor(), g_bad}, nbits_attrs(16, 2, 4, 16)), StatusCode::kInvalidArgument);
  const Tensor g_ok = make<int32_t>(DType::kInt32, {16}, std::vector<int32_t>(16, 0));
  EXPECT_EQ(code({a, nbits_b(), scales, Tensor(), g_ok}, nbits_attrs(16, 2, 4, 16)), StatusCode::kOk);
  EXPECT_EQ(code({a, nbits_b(), scales, bytes({2, 1}, {0, 0}), g_ok}, nbits_attrs(16, 2, 4, 16)),
            StatusCode::kUnsupported);
}

// QAttention on one head of width 1, hidden 1: input [1, 2, 1].
struct QAttentionInputs {
  Tensor x = bytes({1, 2, 1}, {130, 126});
  Tensor w = bytes({1, 3}, {129, 129, 129});
  Tensor bias = floats({3}, {0, 0, 0});
  Tensor xs = floats({}, {0.5f});
  Tensor ws = floats({}, {2.0f});
  Tensor xz = bytes({}, {128});
  Tensor wz = bytes({}, {128});
  std::vector<Tensor> all() const { return {x, w, bias, xs, ws, Tensor(), xz, wz}; }
};

TEST(ContribQuant, MatMulNBitsBlockSizeIsOneOfOnnxRuntimes) {
  // block_size 2^61 with 8 bits (2^62 with 4) made blob = block * bits / 8
  // wrap to 0, so an empty B [N, 1, 0] passed the shape check and K values
  // were read past it. ONNX Runtime takes 16, 32, 64, 128 and 256 only.
  const Tensor a = floats({1, 16}, ones(16));
  const Tensor scales = floats({2, 1}, {0.5f, 0.25f});
  const Tensor empty_b = Tensor::allocate(DType::kUInt8, {2, 1, 0}).value();
  for (auto [bits, block] :
       {std::pair<int64_t, int64_t>{8, int64_t{1} << 61}, {4, int64_t{1} << 62}, {2, 512}, {4, 1024}}) {
    auto r = run_op("MatMulNBits", {a, empty_b, scales}, nbits_attrs(16, 2, bits, block), 1, 1, kMs);
    ASSERT_FALSE(r.ok()) << "bits " << bits << ", block_size " << block;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidModel) << r.status().to_string();
    EXPECT_NE(r.status().message().find("block_size must be 16, 32, 64, 128 or 256"), std::string::npos)
        << r.status().to_string();
  }
  // The same with B and scales as initializers (the kernel that prepares
  // constant weights at session creation): the session is refused.
  onnx::ModelProto m;
  auto* g = dlrt::testing::start_model(m, 21, "nbits");
  auto* ms = m.add_opset_import();
  ms->set_domain(kMs);
  ms->set_version(1);
  auto* n = dlrt::testing::add_onnx_node(g, "MatMulNBits", {"A", "B", "S"}, "Y");
  n->set_domain(kMs);
  for (auto [name, v] :
       {std::pair<const char*, int64_t>{"K", 16}, {"N", 2}, {"bits", 8}, {"block_size", int64_t{1} << 61}}) {
    auto* at = n->add_attribute();
    at->set_name(name);
    at->set_type(onnx::AttributeProto::INT);
    at->set_i(v);
  }
  dlrt::testing::add_value_info(g->add_input(), "A", onnx::TensorProto::FLOAT, {1, 16});
  dlrt::testing::add_unshaped_value_info(g->add_output(), "Y", onnx::TensorProto::FLOAT);
  auto* bi = g->add_initializer();
  bi->set_name("B");
  bi->set_data_type(onnx::TensorProto::UINT8);
  for (int64_t d : {2, 1, 0}) bi->add_dims(d);
  auto* si = g->add_initializer();
  si->set_name("S");
  si->set_data_type(onnx::TensorProto::FLOAT);
  si->add_dims(2);
  si->add_float_data(0.5f);
  si->add_float_data(0.25f);
  auto session = Session::create_from_bytes(m.SerializeAsString());
  ASSERT_FALSE(session.ok());
  EXPECT_EQ(session.status().code(), StatusCode::kInvalidModel) << session.status().to_string();
  EXPECT_NE(session.status().message().find("block_size"), std::string::npos) << session.status().to_string();
  // 256, the largest: K = 16 in one (partly used) block of 256.
  std::vector<uint8_t> b(2 * 128, 0x88);  // q = 8 = the default zero point: Y = 0
  auto r = run_op("MatMulNBits", {a, bytes({2, 1, 128}, b), scales}, nbits_attrs(16, 2, 4, 256), 1, 1, kMs);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_near((*r)[0], {0.0f, 0.0f});
}

TEST(ContribQuant, QAttentionValuesAndErrors) {
  ir::Attributes heads{{"num_heads", attr_int(1)}};
  QAttentionInputs in;
  // Q = K = V = (x - 128) * 1 * 0.5 * 2 = 2 and -2: V averaged with softmax of
  // the scores q * k (scale 1): row 0 weights e^4, e^-4.
  auto r = run_op("QAttention", in.all(), heads, 1, 1, kMs);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const double e4 = std::exp(4.0), em4 = std::exp(-4.0);
  const float y0 = static_cast<float>((2 * e4 - 2 * em4) / (e4 + em4));
  expect_near((*r)[0], {y0, -y0});

  auto code = [&](std::vector<Tensor> v, ir::Attributes at) {
    auto res = run_op("QAttention", std::move(v), std::move(at), 1, 1, kMs);
    return res.ok() ? StatusCode::kOk : res.status().code();
  };
  auto bad = in.all();
  bad[1] = bytes({1, 4}, {1, 2, 3, 4});  // 4 columns: not Q, K, V
  bad[2] = floats({4}, {0, 0, 0, 0});
  EXPECT_EQ(code(bad, heads), StatusCode::kInvalidArgument);
  bad = in.all();
  bad[4] = floats({2}, {1, 1});  // weight_scale neither one value nor one per column
  EXPECT_EQ(code(bad, heads), StatusCode::kInvalidArgument);
  bad = in.all();
  bad[3] = floats({2}, {1, 1});  // input_scale not a scalar
  EXPECT_EQ(code(bad, heads), StatusCode::kInvalidArgument);
  bad = in.all();
  bad[0] = floats({1, 2, 1}, {1, 2});  // float input
  EXPECT_EQ(code(bad, heads), StatusCode::kUnsupported);
  bad = in.all();
  bad.push_back(floats({2, 1, 1, 1, 1}, {0, 0}));  // past
  EXPECT_EQ(code(bad, heads), StatusCode::kUnsupported);
  EXPECT_EQ(code(in.all(), {{"num_heads", attr_int(0)}}), StatusCode::kInvalidArgument);
}

TEST(ContribQuant, QEmbedLayerNormalizationValuesAndErrors) {
  const Tensor ids = make<int32_t>(DType::kInt32, {1, 2}, {1, 0});
  const Tensor mask = make<int32_t>(DType::kInt32, {1, 2}, {1, 0});
  const Tensor word = bytes({2, 2}, {10, 12, 20, 30});
  const Tensor pos = bytes({2, 2}, {0, 0, 0, 0});
  const Tensor gamma = bytes({2}, {2, 2});
  const Tensor beta = bytes({2}, {0, 1});
  const Tensor one = floats({}, {1.0f});
  const Tensor zero = bytes({}, {0});
  std::vector<Tensor> in{ids,  Tensor(), word, pos, Tensor(), gamma, beta, mask, one, one,
                         Tensor(), one,  one,  zero, zero, Tensor(), zero, zero};
  auto r = run_op("QEmbedLayerNormalization", in, {{"epsilon", attr_float(0.0f)}}, 2, 1, kMs);
  ASSERT_TRUE(r.ok()) << r.status().message();
  // Each row of two distinct values normalises to -1, 1; times 2, plus (0, 1).
  expect_near((*r)[0], {-2, 3, -2, 3});
  ASSERT_EQ((*r)[1].size(), 1);
  EXPECT_EQ((*r)[1].data<int32_t>()[0], 1);

  auto bad = in;
  bad[0] = make<int32_t>(DType::kInt32, {1, 2}, {2, 0});  // id outside the table
  EXPECT_FALSE(run_op("QEmbedLayerNormalization", bad, {}, 2, 1, kMs).ok());
  bad = in;
  bad[8] = floats({2}, {1, 1});  // word scale not a scalar
  EXPECT_FALSE(run_op("QEmbedLayerNormalization", bad, {}, 2, 1, kMs).ok());
  bad = in;
  bad[13] = make<int8_t>(DType::kInt8, {}, {0});  // zero point of another type
  EXPECT_FALSE(run_op("QEmbedLayerNormalization", bad, {}, 2, 1, kMs).ok());
}

}  // namespace
}  // namespace dlrt::cpu::testing
