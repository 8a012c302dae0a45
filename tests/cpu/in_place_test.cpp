// Outputs written in place over an input (KernelDef::in_place_inputs,
// ArenaPlan::build): the planned runs place them over the input they
// overwrite, and give the same results as the first run, whose values are
// all on the heap. Also: kernels that skip the output's zero fill write all of
// it (in a planned run its slot holds an earlier value's data).
#include <gtest/gtest.h>

#include <cstring>

#include "../ir/graph_builder.h"
#include "kernel_test_util.h"

namespace dlrt::cpu {
namespace {

using dlrt::testing::GraphBuilder;
using dlrt::testing::random_tensor;
using testing::attr_float;
using testing::attr_int;
using testing::attr_ints;

struct Planned {
  size_t in_place = 0;
  bool planned = false;
};

// Runs `graph` four times on `threads` threads (the first records the arena
// plan, the others run in it) and expects every planned run's outputs to be
// bit-identical to the first's. Returns the plan's in-place count.
Planned run_four_times(std::shared_ptr<ir::Graph> graph, const std::vector<Tensor>& inputs, int threads) {
  ThreadPool pool(threads);
  auto ex = Executor::create(graph, pool, cpu::builtin_kernels());
  EXPECT_TRUE(ex.ok()) << ex.status().to_string();
  if (!ex.ok()) return {};
  std::vector<RunValue> in;
  for (const auto& t : inputs) in.push_back(RunValue::of(t));
  std::vector<Tensor> first;
  for (int rep = 0; rep < 4; ++rep) {
    auto out = (*ex)->run(in);
    EXPECT_TRUE(out.ok()) << out.status().to_string();
    if (!out.ok()) return {};
    for (size_t k = 0; k < out->size(); ++k) {
      const Tensor& t = (*out)[k].tensor;
      if (rep == 0) {
        first.push_back(t.clone().value());
        continue;
      }
      EXPECT_EQ(t.shape(), first[k].shape());
      EXPECT_EQ(0, std::memcmp(t.raw_data(), first[k].raw_data(), t.nbytes()))
          << "output " << k << " of planned run " << rep << " differs from the first run's";
    }
  }
  Planned p;
  if (auto st = (*ex)->memory_stats()) {
    p.planned = true;
    p.in_place = st->in_place;
  }
  return p;
}

ir::Attributes ln_attrs() { return {{"axis", attr_int(-1)}, {"epsilon", attr_float(1e-5f)}}; }

// A chain of elementwise ops and a LayerNormalization: each intermediate
// output is written over the one before (64 x 1024 floats: split over the
// threads), and the results match the unplanned run.
TEST(InPlace, ElementwiseChainAndLayerNormTakeTheirInputsBuffer) {
  for (int threads : {1, 2}) {
    GraphBuilder b;
    const ir::ValueId x = b.input("x", {64, 1024});
    const ir::ValueId c = b.constant("c", random_tensor({1024}, 2));
    const ir::ValueId t1 = b.node("Mul", {x, c});                      // planned
    const ir::ValueId t2 = b.node("Add", {t1, c});                     // over t1
    const ir::ValueId t3 = b.node("Relu", {t2});                       // over t2
    const ir::ValueId t4 = b.node("LayerNormalization", {t3, c, c}, ln_attrs());  // over t3
    const ir::ValueId t5 = b.node("Sigmoid", {t4});                    // over t4
    const ir::ValueId t6 = b.node("Sub", {c, t5});                     // over t5 (its second input)
    b.output(b.node("Mul", {t6, c}));                                  // a graph output: on the heap
    Planned p = run_four_times(b.graph(), {random_tensor({64, 1024}, 1)}, threads);
    ASSERT_TRUE(p.planned);
    EXPECT_EQ(p.in_place, 5u) << threads << " threads";
  }
}

// An input read again later is not overwritten; of two inputs that both die
// at the node, the output takes one.
TEST(InPlace, InputStillNeededLaterKeepsItsBuffer) {
  GraphBuilder b;
  const ir::ValueId x = b.input("x", {64, 1024});
  const ir::ValueId t1 = b.node("Neg", {x});
  const ir::ValueId t2 = b.node("Tanh", {t1});      // t1 is read again below: not over it
  const ir::ValueId t3 = b.node("Add", {t2, t1});   // over t2 or t1
  b.output(b.node("Abs", {t3}));
  Planned p = run_four_times(b.graph(), {random_tensor({64, 1024}, 3)}, 2);
  ASSERT_TRUE(p.planned);
  EXPECT_EQ(p.in_place, 1u);
}

// The same value as both operands may be overwritten (each element is read
// before it is written); a view of it in the other operand keeps it.
TEST(InPlace, SameValueTwiceButNotThroughAView) {
  for (bool view : {false, true}) {
    GraphBuilder b;
    const ir::ValueId x = b.input("x", {64, 1024});
    const ir::ValueId t1 = b.node("Exp", {x});
    // t1 itself, or a Reshape of it (a view of t1's buffer)
    const ir::ValueId other = view ? b.node("Reshape", {t1, b.ints("shape", {64, 1024})}) : t1;
    b.output(b.node("Sqrt", {b.node("Mul", {t1, other})}));
    Planned p = run_four_times(b.graph(), {random_tensor({64, 1024}, 4)}, 2);
    ASSERT_TRUE(p.planned);
    EXPECT_EQ(p.in_place, view ? 0u : 1u) << (view ? "t1 read through a view too" : "t1 read twice");
  }
}

// An input of another size (broadcast into the output), a graph input, or
// an op without the capability (Transpose) never gives its buffer.
TEST(InPlace, OnlySameSizePlannedInputsOfCapableOps) {
  GraphBuilder b;
  const ir::ValueId x = b.input("x", {64, 1024});
  const ir::ValueId row = b.input("row", {1, 1024});
  const ir::ValueId t1 = b.node("Relu", {row});     // 1 x 1024
  const ir::ValueId t2 = b.node("Add", {t1, x});    // 64 x 1024: t1 is smaller, x is the caller's
  const ir::ValueId t3 = b.node("Transpose", {t2}, {{"perm", attr_ints({1, 0})}});
  b.output(b.node("Tanh", {t3}));
  Planned p = run_four_times(b.graph(), {random_tensor({64, 1024}, 6), random_tensor({1, 1024}, 7)}, 2);
  ASSERT_TRUE(p.planned);
  EXPECT_EQ(p.in_place, 0u);
}

// Attention's masked-softmax chain as exported graphs write it: scores + mask,
// Softmax, NaN rows replaced by Where. Each step overwrites the one before
// (Add, Softmax, Where over its Y), so the scores are held once, not thrice.
TEST(InPlace, SoftmaxAndWhereOverwriteTheScores) {
  for (int64_t axis : {-1, 0}) {
    GraphBuilder b;
    const ir::ValueId x = b.input("x", {64, 1024});
    const ir::ValueId mask = b.input("mask", {1, 1024});
    const ir::ValueId zero = b.input("zero", {1, 1});
    const ir::ValueId scores = b.node("Exp", {x});  // planned, unlike the graph input
    const ir::ValueId masked = b.node("Add", {scores, mask});
    const ir::ValueId probs = b.node("Softmax", {masked}, {{"axis", attr_int(axis)}});
    const ir::ValueId nan = b.node("IsNaN", {probs});
    b.output(b.node("Relu", {b.node("Where", {nan, zero, probs})}));  // a graph output is not planned
    Tensor m = random_tensor({1, 1024}, 9);
    m.data<float>()[3] = -std::numeric_limits<float>::infinity();
    Planned p = run_four_times(b.graph(), {random_tensor({64, 1024}, 8), m, random_tensor({1, 1}, 10)}, 2);
    ASSERT_TRUE(p.planned);
    EXPECT_EQ(p.in_place, 3u) << "Add, Softmax and Where in place (axis " << axis << ")";
  }
}

// Transpose, Concat and Gather allocate their outputs without the zero fill:
// in planned runs the arena slot holds data of earlier nodes, so an element
// they did not write would differ from the first run's.
TEST(InPlace, OutputsWithoutZeroFillAreWrittenWhole) {
  GraphBuilder b;
  const ir::ValueId x = b.input("x", {8, 64, 32});
  const ir::ValueId r = b.node("Relu", {x});
  const ir::ValueId e = b.node("Exp", {r});
  const ir::ValueId t = b.node("Transpose", {e}, {{"perm", attr_ints({2, 0, 1})}});  // 32 x 8 x 64
  const ir::ValueId c = b.node("Concat", {t, t}, {{"axis", attr_int(1)}});         // 32 x 16 x 64
  const ir::ValueId g = b.node("Gather", {c, b.ints("idx", {5, 0, 31, 3})}, {{"axis", attr_int(0)}});
  b.output(b.node("Neg", {g}));
  Planned p = run_four_times(b.graph(), {random_tensor({8, 64, 32}, 8)}, 2);
  EXPECT_TRUE(p.planned);
}

}  // namespace
}  // namespace dlrt::cpu
