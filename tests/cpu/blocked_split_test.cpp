// Channel Splits inside blocked regions (ir/passes/blocked_layout.cpp): a
// YOLOv8-style C2f block (a 1x1 conv split in parts, a bottleneck on one
// part, the parts and the bottleneck concatenated) stays blocked end to end
// when the parts are whole blocks (but the last), for every way ONNX gives
// the sizes (attribute, input, equal parts, num_outputs); parts read outside
// the region get their own reorder; other splits stay NCHW. Every converted
// graph computes what the NCHW graph computes.
#include <gtest/gtest.h>

#include "blocked_test_net.h"
#include "backends/cpu/kernels/isa.h"
#include "ir/passes/passes.h"

namespace dlrt::testing {
namespace {

namespace p = ir::passes;
using ir::ValueId;

using Net = BlockedNet;

// How a Split gets its sizes.
enum class Sizes { kAttribute, kInput, kEqual, kNumOutputs };

struct SplitCase {
  std::string name;
  Sizes how;
  std::vector<int64_t> parts;  // channels of each part
  int axis = 1;
};

// The Split node of g (there is one) and whether its outputs are blocked twins.
bool split_blocked(const ir::Graph& g) {
  for (const auto& n : g.nodes)
    if (n.op_type == "Split") {
      const std::string& name = g.values[static_cast<size_t>(n.outputs[0])].name;
      return name.size() > 8 && name.compare(name.size() - 8, 8, "_blocked") == 0;
    }
  ADD_FAILURE() << "no Split";
  return false;
}

// x -> stem -> 1x1 conv to sum(parts) channels -> Split -> a 3x3 bottleneck
// on the last part (residual add) -> Concat of the parts and the bottleneck
// -> 1x1 conv -> strided conv. `part_out`: the first part is a graph output too.
std::shared_ptr<ir::Graph> c2f(const SplitCase& sc, bool part_out) {
  Net n;
  int64_t total = 0;
  for (int64_t c : sc.parts) total += c;
  ValueId x = n.b.input("x", {2, 3, 13, 11});
  ValueId y = n.conv_relu(n.conv_relu(x, 3, 16, 3, 2), 16, total, 1);
  const int opset = sc.how == Sizes::kAttribute ? 11 : sc.how == Sizes::kNumOutputs ? 18 : 13;
  ir::Attributes a{{"axis", ai(sc.axis)}};
  std::vector<ValueId> in{y};
  if (sc.how == Sizes::kAttribute) a["split"] = ais(sc.parts);
  if (sc.how == Sizes::kInput) in.push_back(n.b.ints("split", sc.parts));
  if (sc.how == Sizes::kNumOutputs) a["num_outputs"] = ai(static_cast<int64_t>(sc.parts.size()));
  std::vector<ValueId> parts = n.b.nodes("Split", in, sc.parts.size(), a, opset);
  const int64_t last = sc.parts.back();
  ValueId bott = n.b.node("Add", {parts.back(), n.conv_relu(n.conv_relu(parts.back(), last, last, 3), last, last, 3)});
  std::vector<ValueId> cat = parts;
  cat.push_back(bott);
  ValueId c = n.b.node("Concat", cat, {{"axis", ai(1)}});
  n.b.output(n.conv_relu(n.conv_relu(c, total + last, 24, 1), 24, 24, 3, 2));
  if (part_out) n.b.output(parts[0]);
  return n.b.graph();
}

// g converted with blocked_layout(block) on a random input (the outputs checked).
std::shared_ptr<ir::Graph> convert(std::shared_ptr<ir::Graph> g, int block) {
  return convert_blocked(g, {random_tensor({2, 3, 13, 11}, 7)}, block);
}

TEST(BlockedSplit, C2fBlockStaysBlocked) {
  const std::vector<SplitCase> cases = {
      {"attribute halves", Sizes::kAttribute, {16, 16}},
      {"input halves", Sizes::kInput, {16, 16}},
      {"equal thirds", Sizes::kEqual, {16, 16, 16}},
      {"num_outputs halves", Sizes::kNumOutputs, {32, 32}},
      {"input, short last part", Sizes::kInput, {16, 32, 8}},
      {"axis -3", Sizes::kInput, {16, 24}, -3},
  };
  for (bool generic : {false, true}) {
    std::unique_ptr<cpu::ScopedCpuIsa> cap;
    if (generic) cap = std::make_unique<cpu::ScopedCpuIsa>(cpu::CpuIsa::kGeneric);
    for (const SplitCase& sc : cases)
      for (int block : {16, 8})
        for (bool part_out : {false, true}) {
          SCOPED_TRACE(sc.name + " block " + std::to_string(block) + (part_out ? " part out" : "") +
                       (generic ? " generic" : ""));
          auto g = convert(c2f(sc, part_out), block);
          EXPECT_TRUE(split_blocked(*g));
          EXPECT_EQ(count_ops(*g, "Conv"), 0);
          EXPECT_EQ(count_ops(*g, "ToBlocked"), 0);  // the stem reads the image
          EXPECT_EQ(count_ops(*g, "FromBlocked"), part_out ? 2 : 1);
        }
  }
}

// Parts that are not whole blocks (but the last), uneven equal parts and
// splits on other axes stay NCHW Splits, and the graph computes the same.
TEST(BlockedSplit, OtherSplitsStayNchw) {
  struct Miss {
    SplitCase sc;
    int block;
    bool blocked;
  };
  const std::vector<Miss> misses = {
      {{"8 + 24", Sizes::kInput, {8, 24}}, 16, false},
      {{"8 + 24", Sizes::kInput, {8, 24}}, 8, true},
      {{"attribute 12 + 12", Sizes::kAttribute, {12, 12}}, 8, false},
      {{"num_outputs 3 of 40", Sizes::kNumOutputs, {14, 14, 12}}, 8, false},
  };
  for (const Miss& m : misses) {
    SCOPED_TRACE(m.sc.name + " block " + std::to_string(m.block));
    auto g = convert(c2f(m.sc, false), m.block);
    EXPECT_EQ(split_blocked(*g), m.blocked);
  }
  // A split of the height: the parts are not channel parts.
  Net n;
  ValueId x = n.b.input("x", {2, 3, 13, 11});
  ValueId y = n.conv_relu(n.conv_relu(x, 3, 16, 3, 2), 16, 16, 1);  // [2, 16, 7, 6]
  std::vector<ValueId> parts = n.b.nodes("Split", {y, n.b.ints("split", {3, 4})}, 2, {{"axis", ai(2)}}, 13);
  n.b.output(n.conv_relu(n.conv_relu(parts[0], 16, 16, 3), 16, 16, 1));
  n.b.output(n.conv_relu(n.conv_relu(parts[1], 16, 16, 3), 16, 16, 1));
  auto g = convert(n.b.graph(), 16);
  EXPECT_FALSE(split_blocked(*g));
}

}  // namespace
}  // namespace dlrt::testing
