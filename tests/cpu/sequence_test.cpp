// Sequence and optional kernels, run on RunValues directly (run_op only takes tensors).
#include <gtest/gtest.h>

#include "kernel_test_util.h"

namespace dlrt::cpu {
namespace {

using testing::attr_int;

Result<std::vector<RunValue>> run_values(const std::string& op, std::vector<RunValue> inputs,
                                         ir::Attributes attrs = {}, int opset = 18) {
  ir::Node node;
  node.name = "test_" + op;
  node.op_type = op;
  node.opset = opset;
  node.attributes = std::move(attrs);
  for (size_t i = 0; i < inputs.size(); ++i)
    node.inputs.push_back(inputs[i].kind == RunValue::Kind::kNone ? ir::kNoValue : static_cast<ir::ValueId>(i));
  node.outputs.push_back(100);
  const KernelDef* def = builtin_kernels().find(op, "", opset);
  if (!def) return Unsupported("no kernel for " + op);
  DLRT_ASSIGN_OR_RETURN(auto kernel, def->factory(node));
  std::vector<const RunValue*> ptrs;
  for (auto& v : inputs) ptrs.push_back(v.kind == RunValue::Kind::kNone ? nullptr : &v);
  std::vector<RunValue> outs(1);
  static ThreadPool pool(1);
  KernelContext ctx(node, ptrs, outs, pool, nullptr);
  DLRT_RETURN_IF_ERROR(kernel->compute(ctx));
  return outs;
}

RunValue t64(Shape s, std::vector<int64_t> v) { return RunValue::of(Tensor::from_vector<int64_t>(std::move(s), v)); }
RunValue f32(Shape s, std::vector<float> v) { return RunValue::of(Tensor::from_vector<float>(std::move(s), v)); }
RunValue pos(int64_t p) { return RunValue::of(Tensor::scalar<int64_t>(p)); }

std::vector<float> floats(const Tensor& t) { return {t.data<float>(), t.data<float>() + t.size()}; }

TEST(SequenceKernels, ConstructInsertAtEraseLength) {
  auto s = run_values("SequenceConstruct", {f32({1}, {1}), f32({2}, {2, 3})});
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  RunValue seq = (*s)[0];
  ASSERT_EQ(seq.kind, RunValue::Kind::kSequence);
  ASSERT_EQ(seq.sequence.size(), 2u);

  // Insert at the front, then at the back (position omitted).
  s = run_values("SequenceInsert", {seq, f32({1}, {0}), pos(0)});
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  s = run_values("SequenceInsert", {(*s)[0], f32({1}, {9})});
  ASSERT_TRUE(s.ok());
  seq = (*s)[0];
  ASSERT_EQ(seq.sequence.size(), 4u);
  EXPECT_EQ(floats(seq.sequence[0]), std::vector<float>{0});
  EXPECT_EQ(floats(seq.sequence[3]), std::vector<float>{9});

  auto at = run_values("SequenceAt", {seq, pos(-3)});
  ASSERT_TRUE(at.ok());
  EXPECT_EQ(floats((*at)[0].tensor), std::vector<float>{1});
  EXPECT_FALSE(run_values("SequenceAt", {seq, pos(4)}).ok());
  EXPECT_FALSE(run_values("SequenceAt", {seq, pos(-5)}).ok());

  auto er = run_values("SequenceErase", {seq});  // removes the last
  ASSERT_TRUE(er.ok());
  ASSERT_EQ((*er)[0].sequence.size(), 3u);
  EXPECT_EQ(floats((*er)[0].sequence[2]), (std::vector<float>{2, 3}));
  er = run_values("SequenceErase", {seq, pos(0)});
  ASSERT_TRUE(er.ok());
  EXPECT_EQ(floats((*er)[0].sequence[0]), std::vector<float>{1});

  auto len = run_values("SequenceLength", {seq});
  ASSERT_TRUE(len.ok());
  EXPECT_EQ((*len)[0].tensor.data<int64_t>()[0], 4);

  // Wrong dtype, out-of-range insert, non-sequence input.
  EXPECT_FALSE(run_values("SequenceInsert", {seq, t64({1}, {1})}).ok());
  EXPECT_FALSE(run_values("SequenceInsert", {seq, f32({1}, {1}), pos(6)}).ok());
  EXPECT_FALSE(run_values("SequenceLength", {f32({1}, {1})}).ok());
}

TEST(SequenceKernels, EmptySequence) {
  auto s = run_values("SequenceEmpty", {}, {{"dtype", attr_int(7)}});
  ASSERT_TRUE(s.ok());
  EXPECT_EQ((*s)[0].kind, RunValue::Kind::kSequence);
  EXPECT_EQ((*s)[0].elem_dtype, DType::kInt64);
  EXPECT_TRUE((*s)[0].sequence.empty());
  EXPECT_FALSE(run_values("SequenceErase", {(*s)[0]}).ok());
  EXPECT_FALSE(run_values("ConcatFromSequence", {(*s)[0]}, {{"axis", attr_int(0)}}).ok());
}

TEST(SequenceKernels, SplitToSequence) {
  RunValue x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  // Scalar split: chunks of 2 along axis 1, the last one shorter.
  auto s = run_values("SplitToSequence", {x, t64({}, {2})}, {{"axis", attr_int(1)}});
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  ASSERT_EQ((*s)[0].sequence.size(), 2u);
  EXPECT_EQ((*s)[0].sequence[0].shape(), (Shape{2, 2}));
  EXPECT_EQ(floats((*s)[0].sequence[0]), (std::vector<float>{1, 2, 4, 5}));
  EXPECT_EQ(floats((*s)[0].sequence[1]), (std::vector<float>{3, 6}));
  // Explicit lengths.
  s = run_values("SplitToSequence", {x, t64({2}, {1, 2})}, {{"axis", attr_int(-1)}});
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(floats((*s)[0].sequence[1]), (std::vector<float>{2, 3, 5, 6}));
  // No split, keepdims 0: squeezed rows.
  s = run_values("SplitToSequence", {x}, {{"keepdims", attr_int(0)}});
  ASSERT_TRUE(s.ok());
  ASSERT_EQ((*s)[0].sequence.size(), 2u);
  EXPECT_EQ((*s)[0].sequence[1].shape(), (Shape{3}));
  EXPECT_EQ(floats((*s)[0].sequence[1]), (std::vector<float>{4, 5, 6}));
  // Lengths that do not add up.
  EXPECT_FALSE(run_values("SplitToSequence", {x, t64({2}, {1, 1})}, {{"axis", attr_int(1)}}).ok());
  EXPECT_FALSE(run_values("SplitToSequence", {x, t64({}, {0})}).ok());
}

TEST(SequenceKernels, ConcatFromSequence) {
  auto s = run_values("SequenceConstruct", {f32({2, 1}, {1, 2}), f32({2, 2}, {3, 4, 5, 6})});
  ASSERT_TRUE(s.ok());
  auto c = run_values("ConcatFromSequence", {(*s)[0]}, {{"axis", attr_int(1)}});
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  EXPECT_EQ((*c)[0].tensor.shape(), (Shape{2, 3}));
  EXPECT_EQ(floats((*c)[0].tensor), (std::vector<float>{1, 3, 4, 2, 5, 6}));
  // Mismatched shapes cannot be stacked.
  EXPECT_FALSE(run_values("ConcatFromSequence", {(*s)[0]}, {{"axis", attr_int(0)}, {"new_axis", attr_int(1)}}).ok());

  s = run_values("SequenceConstruct", {f32({2}, {1, 2}), f32({2}, {3, 4})});
  c = run_values("ConcatFromSequence", {(*s)[0]}, {{"axis", attr_int(-1)}, {"new_axis", attr_int(1)}});
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  EXPECT_EQ((*c)[0].tensor.shape(), (Shape{2, 2}));
  EXPECT_EQ(floats((*c)[0].tensor), (std::vector<float>{1, 3, 2, 4}));
}

TEST(SequenceKernels, StringsSplitAndConcat) {
  Tensor x = Tensor::from_vector<std::string>({3}, {"a", "bb", "ccc"});
  auto s = run_values("SplitToSequence", {RunValue::of(x), t64({2}, {2, 1})});
  ASSERT_TRUE(s.ok());
  auto c = run_values("ConcatFromSequence", {(*s)[0]}, {{"axis", attr_int(0)}});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ((*c)[0].tensor.data<std::string>()[2], "ccc");
}

TEST(SequenceKernels, Optionals) {
  ir::Attribute type;
  type.kind = ir::Attribute::Kind::kTypeProto;
  type.type.kind = ir::ValueKind::kTensor;
  type.type.dtype = DType::kFloat32;
  auto none = run_values("Optional", {}, {{"type", type}});
  ASSERT_TRUE(none.ok()) << none.status().to_string();
  EXPECT_EQ((*none)[0].kind, RunValue::Kind::kOptionalNone);
  auto has = run_values("OptionalHasElement", {(*none)[0]});
  ASSERT_TRUE(has.ok());
  EXPECT_FALSE((*has)[0].tensor.data<bool>()[0]);
  EXPECT_FALSE(run_values("OptionalGetElement", {(*none)[0]}).ok());
  // Omitted input (opset 18) means "no element".
  has = run_values("OptionalHasElement", {});
  ASSERT_TRUE(has.ok());
  EXPECT_FALSE((*has)[0].tensor.data<bool>()[0]);

  auto some = run_values("Optional", {f32({1}, {7})});
  ASSERT_TRUE(some.ok());
  has = run_values("OptionalHasElement", {(*some)[0]});
  EXPECT_TRUE((*has)[0].tensor.data<bool>()[0]);
  auto got = run_values("OptionalGetElement", {(*some)[0]});
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(floats((*got)[0].tensor), std::vector<float>{7});
  // A sequence passes through too.
  auto seq = run_values("SequenceConstruct", {f32({1}, {1})});
  got = run_values("OptionalGetElement", {(*seq)[0]});
  ASSERT_TRUE(got.ok());
  EXPECT_EQ((*got)[0].kind, RunValue::Kind::kSequence);
}

}  // namespace
}  // namespace dlrt::cpu
