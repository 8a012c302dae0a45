// Channel Concats on the blocked layout whose inputs are not whole blocks
// (com.dlrt ConcatBlocked, kernels/concat_blocked.cpp, and blocked_layout's
// choice of it): the result is the NCHW Concat bit for bit, with batch > 1,
// blocks 8 and 16, at each vector width this CPU runs and in portable code; PP-HGNet's stem (a MaxPool and a
// conv branch of 24 channels each, concatenated) joins the blocked region;
// Concats on other axes or of whole blocks do not become ConcatBlocked.
#include <gtest/gtest.h>

#include "blocked_test_net.h"
#include <cstdio>
#include <tuple>

#include "backends/cpu/kernels/isa.h"
#include "backends/cpu/kernels/simd/width.h"
#include "ir/passes/passes.h"

namespace dlrt::testing {
namespace {

namespace p = ir::passes;
using cpu::testing::attr_int;
using cpu::testing::attr_ints;
using cpu::testing::attr_string;
using cpu::testing::run_op;
using ir::ValueId;

const std::vector<std::vector<int64_t>> kChannelLists = {
    {24, 24}, {5, 16, 3}, {16, 40}, {3, 0, 7, 9}, {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, {40, 16},
    {13, 7, 20, 2, 11}};

std::string list_name(const std::vector<int64_t>& cs) {
  std::string s;
  for (int64_t c : cs) s += (s.empty() ? "" : "+") + std::to_string(c);
  return s;
}

Tensor blocked_of(const Tensor& x, int64_t b) {
  auto r = run_op("ToBlocked", {x}, {{"block", attr_int(b)}}, 1, 1, "com.dlrt");
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  return r.ok() ? (*r)[0] : Tensor();
}

// ConcatBlocked of the blocked inputs == ToBlocked of the NCHW Concat, pad
// lanes included (zero), for 1 to 4 threads, at each vector width (the
// lane permutes of concat_blocked_simd.h) and in portable code.
TEST(BlockedConcat, MatchesNchwConcatBitForBit) {
  const std::tuple<cpu::CpuIsa, cpu::SimdWidth, const char*> isas[] = {
      {cpu::CpuIsa::kAvx512, cpu::SimdWidth::k512, "avx512"},
      {cpu::CpuIsa::kAvx2, cpu::SimdWidth::k256, "avx2"},
      {cpu::CpuIsa::kNeon, cpu::SimdWidth::k128, "neon"},
      {cpu::CpuIsa::kGeneric, cpu::SimdWidth::k128, "generic"}};
  for (const auto& [isa, width, name] : isas) {
    if (!cpu::simd_width_runs(width)) {
      std::printf("skipped %s: this CPU cannot run the %s-bit instantiation\n", name, cpu::simd_width_name(width));
      continue;
    }
    cpu::ScopedCpuIsa cap(isa);
    const uint64_t calls0 = cpu::simd_calls("concat_assemble16", width);
    for (int64_t b : {8, 16})
      for (const auto& cs : kChannelLists)
        for (int threads : {1, 3}) {
          SCOPED_TRACE(list_name(cs) + " block " + std::to_string(b) + " " + name + " threads " +
                       std::to_string(threads));
          std::vector<Tensor> nchw, blocked;
          for (size_t j = 0; j < cs.size(); ++j) {
            nchw.push_back(random_tensor({2, cs[j], 5, 7}, static_cast<uint32_t>(10 + j)));
            blocked.push_back(blocked_of(nchw.back(), b));
          }
          auto want = run_op("Concat", nchw, {{"axis", ai(1)}}, 1, 13);
          ASSERT_TRUE(want.ok()) << want.status().to_string();
          auto got = run_op("ConcatBlocked", blocked, {{"block", attr_int(b)}, {"channels", attr_ints(cs)}}, 1, 1,
                            "com.dlrt", threads);
          ASSERT_TRUE(got.ok()) << got.status().to_string();
          expect_close((*got)[0], blocked_of((*want)[0], b), 0.0f);
        }
    if (isa != cpu::CpuIsa::kGeneric) {  // the assembled blocks of 16 went through the vector layer
      EXPECT_GT(cpu::simd_calls("concat_assemble16", width), calls0) << name;
    }
  }
}

// A wrong input count, block count or block width is an error.
TEST(BlockedConcat, BadInputsAreErrors) {
  const Tensor a = random_tensor({1, 2, 3, 3, 16}, 1), c = random_tensor({1, 1, 3, 3, 16}, 2);
  auto cat = [](std::vector<Tensor> in, std::vector<int64_t> cs, int64_t b = 16) {
    return run_op("ConcatBlocked", std::move(in), {{"block", attr_int(b)}, {"channels", attr_ints(std::move(cs))}}, 1,
                  1, "com.dlrt");
  };
  EXPECT_TRUE(cat({a, c}, {24, 5}).ok());
  EXPECT_FALSE(cat({a, c}, {24}).ok());
  auto r = cat({a, c}, {24, 17});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("17 channels"), std::string::npos) << r.status().to_string();
  EXPECT_FALSE(cat({a, random_tensor({1, 1, 3, 4, 16}, 3)}, {24, 5}).ok());  // another plane
  EXPECT_FALSE(cat({a, random_tensor({2, 1, 3, 3, 16}, 3)}, {24, 5}).ok());  // another batch
  EXPECT_FALSE(cat({a, c}, {24, 5}, 8).ok());
  EXPECT_FALSE(cat({a, c}, {24, -5}).ok());
  EXPECT_FALSE(run_op("ConcatBlocked", {a, c}, {{"block", attr_int(16)}}, 1, 1, "com.dlrt").ok());
}

using Net = BlockedNet;

// g converted with blocked_layout(block) (the outputs checked), and its outputs.
std::pair<std::shared_ptr<ir::Graph>, std::vector<Tensor>> convert(std::shared_ptr<ir::Graph> g,
                                                                   const std::vector<Tensor>& in, int block = 16) {
  std::vector<Tensor> got;
  auto blocked = convert_blocked(g, in, block, &got);
  return {blocked, got};
}

// Branches of conv chains concatenated on channels, the branch outputs graph
// outputs too: inside the converted region the Concat becomes ConcatBlocked,
// and its output is exactly the NCHW Concat of the branches' outputs.
TEST(BlockedConcat, RegionConcatIsExact) {
  for (int64_t block : {16, 8})
    for (const auto& cs : kChannelLists) {
      if (cs.size() > 4) continue;
      SCOPED_TRACE(list_name(cs) + " block " + std::to_string(block));
      Net n;
      ValueId x = n.b.input("x", {2, 3, 9, 11});  // read by the stems as it is
      std::vector<ValueId> branches;
      int64_t total = 0;
      for (int64_t c : cs) {
        if (c == 0) {  // an empty branch: a Slice of no channels would not be blocked; skip the list
          total = -1;
          break;
        }
        branches.push_back(n.conv_relu(n.conv_relu(n.conv_relu(x, 3, c, 3), c, c, 3), c, c, 1));
        total += c;
      }
      if (total < 0) continue;
      ValueId cat = n.b.node("Concat", branches, {{"axis", ai(cs.size() == 2 ? -3 : 1)}});
      n.b.output(cat);
      for (ValueId v : branches) n.b.output(v);
      n.b.output(n.conv_relu(n.conv_relu(n.conv_relu(cat, total, 16, 3, 2), 16, 16, 3), 16, 8, 1));
      std::vector<Tensor> in{random_tensor({2, 3, 9, 11}, 4)};
      auto [blocked, got] = convert(n.b.graph(), in, static_cast<int>(block));
      bool whole = true;
      for (size_t j = 0; j + 1 < cs.size(); ++j) whole = whole && cs[j] % block == 0;
      EXPECT_EQ(count_ops(*blocked, "ConcatBlocked"), whole ? 0 : 1);
      EXPECT_EQ(count_ops(*blocked, "Conv"), 0);
      ASSERT_EQ(got.size(), 2 + cs.size());
      std::vector<Tensor> parts(got.begin() + 1, got.begin() + 1 + static_cast<int64_t>(cs.size()));
      auto want = run_op("Concat", parts, {{"axis", ai(1)}}, 1, 13);
      ASSERT_TRUE(want.ok()) << want.status().to_string();
      expect_close(got[0], (*want)[0], 0.0f);
    }
}

// PP-HGNet's stem: conv 3->24 stride 2; a 2x2 MaxPool (SAME_UPPER) of it and
// 2x2 convs 24->12->24 (SAME_UPPER) concatenated (48 channels), then a
// stride-2 conv. With ConcatBlocked the whole stem is one blocked region:
// the stem reads the image, no reorder until the output.
TEST(BlockedConcat, HgnetStemJoinsTheRegion) {
  Net n;
  ValueId x = n.b.input("x", {2, 3, 22, 30});
  ValueId s = n.conv_relu(x, 3, 24, 3, 2);
  ValueId pool = n.b.node("MaxPool", {s},
                          {{"kernel_shape", ais({2, 2})}, {"strides", ais({1, 1})}, {"auto_pad", attr_string("SAME_UPPER")}});
  ValueId c = n.conv_relu(n.conv_relu(s, 24, 12, 2, 1, true), 12, 24, 2, 1, true);
  ValueId cat = n.b.node("Concat", {pool, c}, {{"axis", ai(1)}});
  n.b.output(n.conv_relu(n.conv_relu(cat, 48, 24, 3, 2), 24, 48, 1));
  std::vector<Tensor> in{random_tensor({2, 3, 22, 30}, 8)};
  auto g = n.b.graph();
  auto blocked = convert(g, in).first;
  EXPECT_EQ(count_ops(*blocked, "ConcatBlocked"), 1);
  EXPECT_EQ(count_ops(*blocked, "MaxPoolBlocked"), 1);
  EXPECT_EQ(count_ops(*blocked, "ConvBlocked"), 5);
  EXPECT_EQ(count_ops(*blocked, "ToBlocked"), 0);
  EXPECT_EQ(count_ops(*blocked, "FromBlocked"), 1);
  cpu::ScopedCpuIsa generic(cpu::CpuIsa::kGeneric);
  convert(g, in);
}

// Near misses: a Concat on the height or width axis of blocked values, and
// one with an input from outside the regions, stay NCHW Concats between
// blocked regions (and compute the same).
TEST(BlockedConcat, OtherAxesAndOutsideInputsStayConcat) {
  auto after = [](Net& n, ValueId cat, int64_t c) {
    n.b.output(n.conv_relu(n.conv_relu(n.conv_relu(n.conv_relu(cat, c, 24, 3), 24, 24, 3), 24, 24, 3), 24, 8, 3));
  };
  for (int64_t axis : {2, -2, 3}) {
    Net n;
    ValueId x = n.b.input("x", {2, 3, 9, 9});
    ValueId a = n.conv_relu(n.conv_relu(x, 3, 24, 3), 24, 24, 3), b = n.conv_relu(n.conv_relu(x, 3, 24, 3), 24, 24, 3);
    after(n, n.b.node("Concat", {a, b}, {{"axis", ai(axis)}}), 24);
    auto blocked = convert(n.b.graph(), {random_tensor({2, 3, 9, 9}, 5)}).first;
    EXPECT_EQ(count_ops(*blocked, "ConcatBlocked"), 0);
    EXPECT_EQ(count_ops(*blocked, "Concat"), 1);
    EXPECT_EQ(count_ops(*blocked, "ConvBlocked"), 8);  // the regions on either side
    EXPECT_EQ(count_ops(*blocked, "FromBlocked"), 3);
  }
  Net n;
  ValueId x = n.b.input("x", {2, 3, 9, 9});
  ValueId a = n.conv_relu(n.conv_relu(x, 3, 24, 3), 24, 24, 3);
  after(n, n.b.node("Concat", {a, n.b.node("Softmax", {x}, {{"axis", ai(1)}})}, {{"axis", ai(1)}}), 27);
  auto blocked = convert(n.b.graph(), {random_tensor({2, 3, 9, 9}, 6)}).first;
  EXPECT_EQ(count_ops(*blocked, "ConcatBlocked"), 0);
  EXPECT_EQ(count_ops(*blocked, "Concat"), 1);
  EXPECT_EQ(count_ops(*blocked, "ConvBlocked"), 6);
}

}  // namespace
}  // namespace dlrt::testing
