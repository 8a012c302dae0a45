// Per-item dynamic quantization (RunOptions::item_lengths): the quantizing
// kernel against a scalar model of DynamicQuantizeLinear per item, and whole
// sessions whose batched, padded items get the bits each gets alone.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "backends/cpu/ops/item_quantize.h"
#include "dlrt/session.h"
#include "ir/onnx_export.h"
#include "../ir/graph_builder.h"

namespace dlrt::testing {
namespace {

// DynamicQuantizeLinear's definition, one value at a time in double where
// the spec's arithmetic is exact, float where it rounds.
void reference_params(const std::vector<float>& v, float& scale, uint8_t& zp) {
  float lo = 0, hi = 0;
  for (float x : v) {
    lo = std::min(lo, x);
    hi = std::max(hi, x);
  }
  scale = hi == lo ? 1.0f : (hi - lo) / 255.0f;
  const float z = std::nearbyint(std::min(255.0f, std::max(0.0f, -lo / scale)));
  zp = static_cast<uint8_t>(z);
}
uint8_t reference_quantize(float x, float scale, uint8_t zp) {
  const double r = std::nearbyint(static_cast<double>(x / scale)) + zp;
  return static_cast<uint8_t>(std::min(255.0, std::max(0.0, r)));
}

TEST(ItemQuantize, MatchesAScalarModelPerItem) {
  std::mt19937 rng(76);
  for (int64_t k : {1, 7, 16, 37, 384}) {
    cpu::ItemRows items;
    items.rows_per_item = 6;
    items.valid = {6, 1, 0, 3, 5};
    const int64_t rows = items.rows_per_item * static_cast<int64_t>(items.valid.size());
    std::vector<float> x(static_cast<size_t>(rows * k));
    // Item 1 all positive (zero point 0), item 3 all negative (255), the others mixed;
    // padding rows hold large values that must not move any scale.
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t item = r / items.rows_per_item;
      const bool pad = r % items.rows_per_item >= items.valid[static_cast<size_t>(item)];
      std::uniform_real_distribution<float> d(item == 1 ? 0.1f : -3.0f, item == 3 ? -0.2f : 5.0f);
      for (int64_t c = 0; c < k; ++c) x[static_cast<size_t>(r * k + c)] = pad ? 1e6f : d(rng);
    }
    std::vector<uint8_t> q(x.size(), 77);
    std::vector<float> row_scale(static_cast<size_t>(rows));
    std::vector<int32_t> row_zp(static_cast<size_t>(rows));
    ASSERT_TRUE(cpu::dynamic_quantize_items(x.data(), k, items, q.data(), row_scale.data(), row_zp.data()));
    for (size_t i = 0; i < items.valid.size(); ++i) {
      const int64_t row0 = static_cast<int64_t>(i) * items.rows_per_item, valid = items.valid[i];
      const std::vector<float> mine(x.begin() + row0 * k, x.begin() + (row0 + valid) * k);
      float scale = 0;
      uint8_t zp = 0;
      reference_params(mine, scale, zp);
      for (int64_t r = row0; r < row0 + items.rows_per_item; ++r) {
        EXPECT_EQ(row_scale[static_cast<size_t>(r)], scale) << "k " << k << " item " << i;
        EXPECT_EQ(row_zp[static_cast<size_t>(r)], zp) << "k " << k << " item " << i;
        const bool pad = r >= row0 + valid;
        for (int64_t c = 0; c < k; ++c) {
          const size_t e = static_cast<size_t>(r * k + c);
          ASSERT_EQ(q[e], pad ? zp : reference_quantize(x[e], scale, zp)) << "k " << k << " row " << r << " col " << c;
        }
      }
    }
    // A NaN in a valid row is an error; in padding it is not read.
    x[static_cast<size_t>((items.rows_per_item * 4 + 5) * k)] = std::nanf("");
    EXPECT_TRUE(cpu::dynamic_quantize_items(x.data(), k, items, q.data(), row_scale.data(), row_zp.data()));
    x[static_cast<size_t>(items.rows_per_item * 3 * k)] = std::nanf("");
    EXPECT_FALSE(cpu::dynamic_quantize_items(x.data(), k, items, q.data(), row_scale.data(), row_zp.data()));
  }
}

// Two quantize_dynamic layers (DynamicQuantizeLinear -> MatMulInteger -> Cast
// -> Mul(a_scale * b_scale) -> Add bias) around a Relu: the form ONNX
// Runtime's quantize_dynamic writes; the second with per-column B scales and
// zero points (int8 weights), the first with one (uint8 weights).
std::string two_layer_model(bool tail_dequantize) {
  GraphBuilder b;
  const int64_t k = 16, n = 24;
  auto x = b.input("x", {-1, -1, k}, DType::kFloat32, {"batch", "seq"});
  auto layer = [&](ir::ValueId in, int64_t kin, int64_t nout, bool per_column, uint32_t seed) {
    std::mt19937 rng(seed);
    Tensor w = per_column ? Tensor::allocate(DType::kInt8, {kin, nout}).value()
                          : Tensor::allocate(DType::kUInt8, {kin, nout}).value();
    auto* wb = static_cast<uint8_t*>(w.raw_data());
    for (int64_t i = 0; i < kin * nout; ++i) wb[i] = static_cast<uint8_t>(rng());
    Tensor wzp = per_column ? Tensor::allocate(DType::kInt8, {nout}).value() : Tensor::scalar<uint8_t>(131);
    if (per_column)
      for (int64_t j = 0; j < nout; ++j) wzp.data<int8_t>()[j] = static_cast<int8_t>(j % 5 - 2);
    auto q = b.nodes("DynamicQuantizeLinear", {in}, 3);
    auto mm = b.node("MatMulInteger", {q[0], b.constant("w" + std::to_string(seed), std::move(w)), q[2],
                                       b.constant("wzp" + std::to_string(seed), std::move(wzp))});
    auto ws = per_column ? b.constant("ws" + std::to_string(seed), random_tensor({nout}, seed, 0.001f, 0.01f))
                         : b.scalar("ws" + std::to_string(seed), 0.0037f);
    auto f = b.node("Mul", {b.node("Cast", {mm}, {{"to", ai(static_cast<int64_t>(DType::kFloat32))}}),
                            b.node("Mul", {q[1], ws})});
    return b.node("Add", {f, b.constant("bias" + std::to_string(seed), random_tensor({nout}, seed + 1))});
  };
  auto h = b.node("Relu", {layer(x, k, n, false, 3)});
  auto y = layer(h, n, k, true, 5);
  if (tail_dequantize) {
    auto q = b.nodes("DynamicQuantizeLinear", {y}, 3);
    y = b.node("DequantizeLinear", {q[0], q[1], q[2]});
  }
  b.output(y, DType::kFloat32, {-1, -1, k}, {"batch", "seq"});
  auto bytes = ir::export_onnx(*b.graph());
  EXPECT_TRUE(bytes.ok()) << bytes.status().to_string();
  return bytes.ok() ? *bytes : std::string();
}

std::unique_ptr<Session> open(const std::string& bytes) {
  SessionOptions o;
  o.device = "cpu";
  o.threads = 2;
  auto s = Session::create_from_bytes(bytes, o);
  EXPECT_TRUE(s.ok()) << s.status().to_string();
  return s.ok() ? std::move(*s) : nullptr;
}

TEST(ItemQuantize, BatchedItemsGetTheirAloneBits) {
  auto s = open(two_layer_model(false));
  ASSERT_TRUE(s);
  const std::vector<int64_t> lengths = {3, 7, 1, 5};
  const int64_t items = static_cast<int64_t>(lengths.size()), len = 7, k = 16;
  Tensor x = random_tensor({items, len, k}, 11, -2.0f, 3.0f);
  for (int64_t i = 0; i < items; ++i)  // padding far outside every text's range
    for (int64_t t = lengths[static_cast<size_t>(i)]; t < len; ++t)
      for (int64_t c = 0; c < k; ++c) x.data<float>()[(i * len + t) * k + c] = 50.0f;
  RunOptions per_item;
  per_item.item_lengths = lengths;
  auto batched = s->run({{"x", x}}, per_item);
  ASSERT_TRUE(batched.ok()) << batched.status().to_string();
  auto per_tensor = s->run({{"x", x}});
  ASSERT_TRUE(per_tensor.ok()) << per_tensor.status().to_string();
  int differ_per_tensor = 0;
  for (int64_t i = 0; i < items; ++i) {
    const int64_t n = lengths[static_cast<size_t>(i)];
    Tensor one = Tensor::allocate(DType::kFloat32, {1, n, k}).value();
    std::memcpy(one.data<float>(), x.data<float>() + i * len * k, static_cast<size_t>(n * k) * sizeof(float));
    auto alone = s->run({{"x", one}});
    ASSERT_TRUE(alone.ok()) << alone.status().to_string();
    const float* want = (*alone)[0].data<float>();
    EXPECT_EQ(std::memcmp((*batched)[0].data<float>() + i * len * k, want, static_cast<size_t>(n * k) * sizeof(float)), 0)
        << "item " << i << " (" << n << " rows) differs from its alone run";
    differ_per_tensor +=
        std::memcmp((*per_tensor)[0].data<float>() + i * len * k, want, static_cast<size_t>(n * k) * sizeof(float)) != 0;
  }
  // Per tensor (no item_lengths) the padding's 50s move every scale.
  EXPECT_EQ(differ_per_tensor, items);
}

TEST(ItemQuantize, RefusedWhereAQuantizerCannotTakeScalesPerItem) {
  auto s = open(two_layer_model(true));
  ASSERT_TRUE(s);
  Tensor x = random_tensor({2, 4, 16}, 12);
  RunOptions o;
  o.item_lengths = {4, 2};
  auto r = s->run({{"x", x}}, o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnsupported) << r.status().to_string();
  EXPECT_NE(r.status().message().find("DynamicQuantizeLinear"), std::string::npos) << r.status().message();
  // One item is fine: its valid rows give the one scale.
  o.item_lengths = {3};
  EXPECT_TRUE(s->run({{"x", random_tensor({1, 4, 16}, 13)}}, o).ok());
  // Lengths that do not fit the rows, or negative ones, are refused.
  o.item_lengths = {5, 2};
  EXPECT_EQ(s->run({{"x", x}}, o).status().code(), StatusCode::kUnsupported);
  o.item_lengths = {-1, 2};
  EXPECT_EQ(s->run({{"x", x}}, o).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace dlrt::testing
