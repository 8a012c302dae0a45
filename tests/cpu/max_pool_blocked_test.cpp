// com.dlrt MaxPoolBlocked (kernels/conv_blocked*.cpp) against the NCHW
// MaxPool, bit for bit: 2x2 stride-1 SAME_UPPER (PP-HGNet's stem), strided,
// padded, dilated, ceil_mode and windows wider than the input, on a partial
// last block, batch 2, blocks 8 and 16, at every vector width the CPU runs
// and in the portable loops.
#include <gtest/gtest.h>

#include "../ir/graph_builder.h"
#include "kernel_test_util.h"
#include "backends/cpu/kernels/isa.h"
#include "isa_test_util.h"

namespace dlrt::testing {
namespace {

using cpu::testing::attr_int;
using cpu::testing::attr_ints;
using cpu::testing::attr_string;
using cpu::testing::run_op;

struct PoolCase {
  std::string name;
  ir::Attributes attrs;
  int64_t H, W;
};

TEST(MaxPoolBlocked, MatchesNchwMaxPool) {
  const std::vector<PoolCase> cases = {
      {"2x2 s1 same_upper",
       {{"kernel_shape", attr_ints({2, 2})}, {"strides", attr_ints({1, 1})}, {"auto_pad", attr_string("SAME_UPPER")}},
       9, 21},
      {"2x2 s1 same_lower",
       {{"kernel_shape", attr_ints({2, 2})}, {"strides", attr_ints({1, 1})}, {"auto_pad", attr_string("SAME_LOWER")}},
       9, 21},
      {"3x3 s2 pads 1",
       {{"kernel_shape", attr_ints({3, 3})}, {"strides", attr_ints({2, 2})}, {"pads", attr_ints({1, 1, 1, 1})}}, 10,
       23},
      {"3x2 s1 dilated pads",
       {{"kernel_shape", attr_ints({3, 2})}, {"dilations", attr_ints({2, 3})}, {"pads", attr_ints({2, 1, 0, 3})}}, 8,
       19},
      {"2x2 s2 ceil",
       {{"kernel_shape", attr_ints({2, 2})}, {"strides", attr_ints({2, 2})}, {"ceil_mode", attr_int(1)}}, 7, 17},
      {"5x5 wider than the input", {{"kernel_shape", attr_ints({5, 5})}, {"pads", attr_ints({2, 2, 2, 2})}}, 3, 4},
      {"1x1", {{"kernel_shape", attr_ints({1, 1})}}, 4, 6},
  };
  // Every ISA this CPU runs: 16-channel blocks at each vector width (w128 at
  // generic), 8-channel blocks in the portable loops.
  for (cpu::CpuIsa isa : cpu::testing::runnable_isas()) {
    cpu::ScopedCpuIsa cap(isa);
    for (int64_t b : {8, 16})
      for (const PoolCase& c : cases) {
        SCOPED_TRACE(c.name + " block " + std::to_string(b) + " " + cpu::cpu_isa_name(isa));
        const Tensor x = random_tensor({2, 24, c.H, c.W}, 3);
        auto want = run_op("MaxPool", {x}, c.attrs, 1, 12);
        ASSERT_TRUE(want.ok()) << want.status().to_string();
        auto xb = run_op("ToBlocked", {x}, {{"block", attr_int(b)}}, 1, 1, "com.dlrt");
        ASSERT_TRUE(xb.ok()) << xb.status().to_string();
        ir::Attributes a = c.attrs;
        a["block"] = attr_int(b);
        auto got = run_op("MaxPoolBlocked", {(*xb)[0]}, a, 1, 1, "com.dlrt");
        ASSERT_TRUE(got.ok()) << got.status().to_string();
        auto back = run_op("FromBlocked", {(*got)[0]}, {{"block", attr_int(b)}, {"channels", attr_int(24)}}, 1, 1,
                           "com.dlrt");
        ASSERT_TRUE(back.ok()) << back.status().to_string();
        expect_close((*back)[0], (*want)[0], 0.0f);
      }
  }
}

}  // namespace
}  // namespace dlrt::testing
