// ONNX Runtime's order (ir/onnxruntime_order.h): which nodes are tagged, and
// that the tagged kernels give ONNX Runtime 1.31.1's bits. The expected
// hashes are FNV-1a 64 of ONNX Runtime's float outputs (CPU provider, 1
// thread, optimisations off, an AVX-512 Xeon) on the inputs below, which are
// exact in float; dlrt's tagged kernels give the same bits on every CPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include <onnx/onnx_pb.h>

#include "ir/onnx_export.h"
#include "ir/onnxruntime_order.h"
#include "kernel_test_util.h"

namespace dlrt::cpu {
namespace {

using testing::attr_float;
using testing::attr_int;
using testing::run_op;

// ((r * a + i * b) mod m - off) / scale for row r, column i: exact floats.
Tensor pattern(int64_t rows, int64_t n, int64_t a, int64_t b, int64_t m, int64_t off, float scale) {
  Tensor t = Tensor::allocate(DType::kFloat32, Shape{rows, n}).value();
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t i = 0; i < n; ++i)
      t.data<float>()[r * n + i] = static_cast<float>((r * a + i * b) % m - off) / scale;
  return t;
}

Tensor column_pattern(int64_t n, int64_t a, int64_t m, int64_t off, float scale, float base) {
  Tensor t = Tensor::allocate(DType::kFloat32, Shape{n}).value();
  for (int64_t i = 0; i < n; ++i) t.data<float>()[i] = base + static_cast<float>((i * a) % m - off) / scale;
  return t;
}

uint64_t fnv1a(const Tensor& t) {
  uint64_t h = 0xcbf29ce484222325ull;
  const auto* p = static_cast<const unsigned char*>(t.raw_data());
  for (size_t i = 0; i < t.size() * sizeof(float); ++i) {
    h ^= p[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

ir::Attributes tagged(ir::Attributes a = {}) {
  a[ir::kOnnxRuntimeOrderAttr] = attr_int(1);
  return a;
}

uint64_t run_hash(const std::string& op, std::vector<Tensor> in, ir::Attributes attrs, const std::string& domain = "") {
  auto out = run_op(op, std::move(in), std::move(attrs), 1, 17, domain, 2);
  EXPECT_TRUE(out.ok()) << out.status().to_string();
  return out.ok() ? fnv1a((*out)[0]) : 0;
}

TEST(OnnxRuntimeOrder, TaggedKernelsGiveOnnxRuntimeBits) {
  const int64_t n = 384;
  const Tensor x = pattern(3, n, 131, 7919, 2001, 1000, 256.0f);
  const Tensor skip = pattern(3, n, 17, 104729, 1001, 500, 512.0f);
  const Tensor g = column_pattern(n, 37, 17, 8, 64.0f, 1.0f);
  const Tensor b = column_pattern(n, 53, 13, 6, 32.0f, 0.0f);
  const Tensor bias = column_pattern(n, 29, 11, 5, 16.0f, 0.0f);
  ir::Attributes eps;
  eps["epsilon"] = attr_float(1e-12f);
  EXPECT_EQ(run_hash("LayerNormalization", {x, g, b}, tagged(eps)), 0x92adac810aba80f4ull);
  EXPECT_EQ(run_hash("SkipLayerNormalization", {x, skip, g, b, bias}, tagged(eps), "com.microsoft"),
            0x78ff2cffbfe99f22ull);
  EXPECT_EQ(run_hash("BiasGelu", {x, bias}, tagged(), "com.microsoft"), 0x6281a6ff45e3dfcbull);
  ir::Attributes axis;
  axis["axis"] = attr_int(-1);
  // Rows shorter than one 16-lane vector, past 48 (MLAS's three-vector steps) and with a masked tail.
  const std::pair<int64_t, uint64_t> softmax[] = {
      {7, 0xf1294927747dfe0aull}, {53, 0x5a953cb2bfebfc3cull}, {100, 0x73664f6517cef524ull}};
  for (const auto& [len, want] : softmax)
    EXPECT_EQ(run_hash("Softmax", {pattern(4, len, 97, 7919, 3001, 1500, 100.0f)}, tagged(axis)), want) << len;
}

// x -> LayerNormalization -> DynamicQuantizeLinear, with or without a
// com.microsoft node beside; a second LayerNormalization feeds no quantizer.
ir::Graph small_graph(bool contrib) {
  ir::Graph g;
  auto v = [&](const char* name) { return g.add_value(name); };
  const ir::ValueId x = v("x"), s = v("s"), b = v("b"), ln = v("ln"), q = v("q"), qs = v("qs"), qz = v("qz");
  const ir::ValueId ln2 = v("ln2"), gelu = v("gelu");
  g.inputs = {x};
  auto node = [&](const char* op, const char* domain, std::vector<ir::ValueId> in, std::vector<ir::ValueId> out) {
    ir::Node n;
    n.name = std::string(op) + std::to_string(g.nodes.size());
    n.op_type = op;
    n.domain = domain;
    n.opset = domain[0] ? 1 : 17;
    n.inputs = std::move(in);
    n.outputs = std::move(out);
    g.nodes.push_back(std::move(n));
  };
  node("LayerNormalization", "", {x, s, b}, {ln});
  node("DynamicQuantizeLinear", "", {ln}, {q, qs, qz});
  node("LayerNormalization", "", {x, s, b}, {ln2});
  if (contrib) node("BiasGelu", "com.microsoft", {ln2, b}, {gelu});
  g.outputs = {q, contrib ? gelu : ln2};
  EXPECT_TRUE(g.topological_sort().ok());
  return g;
}

bool is_tagged(const ir::Graph& g, const char* output) {
  for (const ir::Node& n : g.nodes)
    if (!n.outputs.empty() && g.values[n.outputs[0]].name == output) return ir::in_onnxruntime_order(n);
  return false;
}

TEST(OnnxRuntimeOrder, TagsWhatFeedsAQuantizerInContribGraphsOnly) {
  ir::Graph contrib = small_graph(true);
  EXPECT_EQ(ir::mark_onnxruntime_order(contrib), 1);
  EXPECT_TRUE(is_tagged(contrib, "ln"));
  EXPECT_FALSE(is_tagged(contrib, "ln2"));   // feeds no quantizer
  EXPECT_FALSE(is_tagged(contrib, "gelu"));  // nor does this
  ir::Graph plain = small_graph(false);
  EXPECT_EQ(ir::mark_onnxruntime_order(plain), 0);  // no contrib ops: dlrt's own order everywhere
  EXPECT_FALSE(is_tagged(plain, "ln"));
}

// The CPU backend reads its partitions back from ONNX, so the tag survives
// that export; OpenVINO and plugins get the graph without it.
TEST(OnnxRuntimeOrder, TagSurvivesDlrtsOwnExportOnly) {
  ir::Graph g = small_graph(true);
  ASSERT_EQ(ir::mark_onnxruntime_order(g), 1);
  for (auto internal : {ir::InternalAttributes::kKeep, ir::InternalAttributes::kDrop}) {
    auto bytes = ir::export_onnx(g, 8, internal);
    ASSERT_TRUE(bytes.ok()) << bytes.status().to_string();
    onnx::ModelProto m;
    ASSERT_TRUE(m.ParseFromString(*bytes));
    int tags = 0;
    for (const auto& n : m.graph().node())
      for (const auto& a : n.attribute()) tags += a.name() == ir::kOnnxRuntimeOrderAttr;
    EXPECT_EQ(tags, internal == ir::InternalAttributes::kKeep ? 1 : 0);
  }
}

}  // namespace
}  // namespace dlrt::cpu
