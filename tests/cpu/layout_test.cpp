// Unit tests for the layout family (src/backends/cpu/ops/layout.cpp). Expected
// values are computed by hand or with numpy (noted where non-obvious).
#include <gtest/gtest.h>

#include "backends/cpu/ops/layout_impl.h"
#include "kernel_test_util.h"

namespace dlrt::cpu::testing {
namespace {

template <typename T = float>
Tensor iota(Shape shape) {
  std::vector<T> v(static_cast<size_t>(element_count(shape)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<T>(i);
  return Tensor::from_vector<T>(std::move(shape), v);
}
Tensor i64(std::vector<int64_t> v) { return Tensor::from_vector<int64_t>({static_cast<int64_t>(v.size())}, v); }
Tensor i32(std::vector<int32_t> v) { return Tensor::from_vector<int32_t>({static_cast<int64_t>(v.size())}, v); }

template <typename T>
std::vector<T> values(const Tensor& t) {
  return std::vector<T>(t.data<T>(), t.data<T>() + t.size());
}

Tensor run1(const std::string& op, std::vector<Tensor> in, ir::Attributes attrs = {},
            int opset = 17) {
  auto r = run_op(op, std::move(in), std::move(attrs), 1, opset);
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  return r.ok() ? (*r)[0] : Tensor();
}

// Reference transpose by explicit index arithmetic.
std::vector<float> transpose_ref(const Shape& s, const std::vector<int64_t>& perm) {
  const size_t r = s.size();
  Shape out(r);
  for (size_t i = 0; i < r; ++i) out[i] = s[perm[i]];
  std::vector<int64_t> in_str(r, 1);
  for (size_t i = r - 1; i > 0; --i) in_str[i - 1] = in_str[i] * s[i];
  std::vector<float> res;
  std::vector<int64_t> idx(r, 0);
  for (int64_t n = 0; n < element_count(out); ++n) {
    int64_t off = 0;
    for (size_t i = 0; i < r; ++i) off += idx[i] * in_str[perm[i]];
    res.push_back(static_cast<float>(off));
    for (size_t i = r; i-- > 0;) {
      if (++idx[i] < out[i]) break;
      idx[i] = 0;
    }
  }
  return res;
}

TEST(LayoutOps, TransposeSmallAndLargeAllPaths) {
  Tensor y = run1("Transpose", {iota({2, 3})});
  EXPECT_EQ(y.shape(), (Shape{3, 2}));
  EXPECT_EQ(values<float>(y), (std::vector<float>{0, 3, 1, 4, 2, 5}));
  // Large enough for the tiled and parallel paths; each permutation type.
  const Shape s = {3, 40, 50, 7};
  for (auto perm : std::vector<std::vector<int64_t>>{{0, 2, 1, 3}, {0, 3, 1, 2}, {3, 2, 1, 0}, {1, 0, 2, 3}, {0, 1, 2, 3}}) {
    Tensor t = run1("Transpose", {iota(s)}, {{"perm", attr_ints(perm)}});
    EXPECT_EQ(values<float>(t), transpose_ref(s, perm)) << "perm " << shape_to_string(perm);
  }
  EXPECT_FALSE(run_op("Transpose", {iota({2, 3})}, {{"perm", attr_ints({0, 0})}}).ok());
}

TEST(LayoutOps, TransposeStrings) {
  Tensor s = Tensor::from_vector<std::string>({2, 2}, {"a", "b", "c", "d"});
  Tensor y = run1("Transpose", {s});
  EXPECT_EQ(values<std::string>(y), (std::vector<std::string>{"a", "c", "b", "d"}));
}

TEST(LayoutOps, Concat) {
  Tensor a = iota({2, 2});
  Tensor b = Tensor::from_vector<float>({2, 1}, {9, 8});
  Tensor y = run1("Concat", {a, b}, {{"axis", attr_int(-1)}});
  EXPECT_EQ(y.shape(), (Shape{2, 3}));
  EXPECT_EQ(values<float>(y), (std::vector<float>{0, 1, 9, 2, 3, 8}));
  Tensor e = Tensor::from_vector<float>({0, 2}, {});
  y = run1("Concat", {a, e, a}, {{"axis", attr_int(0)}});
  EXPECT_EQ(values<float>(y), (std::vector<float>{0, 1, 2, 3, 0, 1, 2, 3}));
  EXPECT_FALSE(run_op("Concat", {a, b}, {{"axis", attr_int(0)}}).ok());
  EXPECT_FALSE(run_op("Concat", {a, iota<int32_t>({2, 2})}, {{"axis", attr_int(0)}}).ok());
}

TEST(LayoutOps, SplitAllStyles) {
  Tensor x = iota({2, 6});
  auto r = run_op("Split", {x, i64({2, 4})}, {{"axis", attr_int(1)}}, 2, 13);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(values<float>((*r)[0]), (std::vector<float>{0, 1, 6, 7}));
  EXPECT_EQ(values<float>((*r)[1]), (std::vector<float>{2, 3, 4, 5, 8, 9, 10, 11}));
  r = run_op("Split", {x}, {{"axis", attr_int(1)}, {"split", attr_ints({1, 5})}}, 2, 11);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[1].shape(), (Shape{2, 5}));
  r = run_op("Split", {x}, {{"axis", attr_int(1)}}, 3, 13);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(values<float>((*r)[2]), (std::vector<float>{4, 5, 10, 11}));
  // Opset 18: 5 into 3 -> chunks of 2, 2, 1.
  r = run_op("Split", {iota({5})}, {{"num_outputs", attr_int(3)}}, 3, 18);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(values<float>((*r)[2]), (std::vector<float>{4}));
  EXPECT_FALSE(run_op("Split", {x, i64({2, 3})}, {{"axis", attr_int(1)}}, 2, 13).ok());
  EXPECT_FALSE(run_op("Split", {iota({5})}, {}, 2, 13).ok());
}

TEST(LayoutOps, SliceStepsAndClamping) {
  Tensor x = iota({3, 4});
  // x[0:2, 1:1000]
  Tensor y = run1("Slice", {x, i64({0, 1}), i64({2, 1000})});
  EXPECT_EQ(values<float>(y), (std::vector<float>{1, 2, 3, 5, 6, 7}));
  // x[::-1, -1:0:-2] with int32 indices
  y = run1("Slice", {x, i32({-1, -1}), i32({INT32_MIN, 0}), i32({0, 1}), i32({-1, -2})});
  EXPECT_EQ(y.shape(), (Shape{3, 2}));
  EXPECT_EQ(values<float>(y), (std::vector<float>{11, 9, 7, 5, 3, 1}));
  // axes only on dim 1, INT64_MAX end
  y = run1("Slice", {x, i64({2}), i64({INT64_MAX}), i64({-1})});
  EXPECT_EQ(values<float>(y), (std::vector<float>{2, 3, 6, 7, 10, 11}));
  // Opset 1 attributes.
  y = run1("Slice", {x}, {{"starts", attr_ints({1})}, {"ends", attr_ints({2})}, {"axes", attr_ints({0})}}, 1);
  EXPECT_EQ(values<float>(y), (std::vector<float>{4, 5, 6, 7}));
  // Empty result.
  y = run1("Slice", {x, i64({3}), i64({1}), i64({0})});
  EXPECT_EQ(y.shape(), (Shape{0, 4}));
  EXPECT_FALSE(run_op("Slice", {x, i64({0}), i64({1}), i64({0}), i64({0})}).ok());
  EXPECT_FALSE(run_op("Slice", {x, i64({0, 0}), i64({1, 1}), i64({1, 1})}).ok());
}

TEST(LayoutOps, ExpandAndTile) {
  Tensor x = Tensor::from_vector<float>({3, 1}, {1, 2, 3});
  Tensor y = run1("Expand", {x, i64({2, 1, 2})});
  EXPECT_EQ(y.shape(), (Shape{2, 3, 2}));
  EXPECT_EQ(values<float>(y), (std::vector<float>{1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3}));
  EXPECT_FALSE(run_op("Expand", {x, i64({2, 2})}).ok());

  // numpy.tile([[0,1],[2,3]], (2,3))
  y = run1("Tile", {iota({2, 2}), i64({2, 3})});
  EXPECT_EQ(y.shape(), (Shape{4, 6}));
  EXPECT_EQ(values<float>(y), (std::vector<float>{0, 1, 0, 1, 0, 1, 2, 3, 2, 3, 2, 3,
                                                  0, 1, 0, 1, 0, 1, 2, 3, 2, 3, 2, 3}));
  EXPECT_FALSE(run_op("Tile", {iota({2, 2}), i64({2})}).ok());
}

// Constant pads on inner axes with unpadded axes after them (the kernel
// joins those into the padded axis): padding and cropping, against
// element-by-element index arithmetic; edge mode on the same shape.
TEST(LayoutOps, PadTrailingUnpaddedAxes) {
  const Shape s = {2, 5, 3, 2};
  Tensor x = iota(s);
  for (const std::vector<int64_t>& pads : std::vector<std::vector<int64_t>>{
           {0, 0, 1, 0, 0, 0, 1, 0}, {0, 2, -1, 0, 1, 0, 2, 0}, {0, 0, 0, 0, 0, 0, 0, 0}, {1, -2, 0, 0, 0, 1, 0, 0}}) {
    SCOPED_TRACE(shape_to_string(pads));
    Shape out(4);
    for (size_t d = 0; d < 4; ++d) out[d] = s[d] + pads[d] + pads[d + 4];
    std::vector<float> want;
    for (int64_t a = 0; a < out[0]; ++a)
      for (int64_t b = 0; b < out[1]; ++b)
        for (int64_t c = 0; c < out[2]; ++c)
          for (int64_t d = 0; d < out[3]; ++d) {
            const int64_t i[4] = {a - pads[0], b - pads[1], c - pads[2], d - pads[3]};
            bool inside = true;
            for (size_t k = 0; k < 4; ++k) inside = inside && i[k] >= 0 && i[k] < s[k];
            want.push_back(inside ? static_cast<float>(((i[0] * s[1] + i[1]) * s[2] + i[2]) * s[3] + i[3]) : -5.0f);
          }
    Tensor y = run1("Pad", {x, i64(pads), Tensor::scalar<float>(-5)});
    EXPECT_EQ(y.shape(), out);
    EXPECT_EQ(values<float>(y), want);
  }
  // Edge mode keeps its per-axis indexing: numpy.pad(x, ((0,0),(1,0),(0,0),(0,0)), 'edge').
  Tensor y = run1("Pad", {x, i64({0, 1, 0, 0, 0, 0, 0, 0})}, {{"mode", attr_string("edge")}});
  std::vector<float> want;
  for (int64_t a = 0; a < 2; ++a)
    for (int64_t b = -1; b < 5; ++b)
      for (int64_t k = 0; k < 6; ++k) want.push_back(static_cast<float>((a * 5 + std::max<int64_t>(b, 0)) * 6 + k));
  EXPECT_EQ(values<float>(y), want);
}

TEST(LayoutOps, PadModes) {
  Tensor x = iota({2, 3});  // [[0,1,2],[3,4,5]]
  Tensor y = run1("Pad", {x, i64({0, 2, 0, 1}), Tensor::scalar<float>(9)});
  EXPECT_EQ(values<float>(y), (std::vector<float>{9, 9, 0, 1, 2, 9, 9, 9, 3, 4, 5, 9}));
  // numpy.pad(x, ((0,0),(2,1)), 'reflect')
  y = run1("Pad", {x, i64({0, 2, 0, 1})}, {{"mode", attr_string("reflect")}});
  EXPECT_EQ(values<float>(y), (std::vector<float>{2, 1, 0, 1, 2, 1, 5, 4, 3, 4, 5, 4}));
  y = run1("Pad", {x, i64({1, 1, 0, 0})}, {{"mode", attr_string("edge")}});
  EXPECT_EQ(values<float>(y), (std::vector<float>{0, 0, 1, 2, 0, 0, 1, 2, 3, 3, 4, 5}));
  // numpy.pad(x, ((0,0),(2,1)), 'wrap')
  y = run1("Pad", {x, i64({0, 2, 0, 1})}, {{"mode", attr_string("wrap")}}, 19);
  EXPECT_EQ(values<float>(y), (std::vector<float>{1, 2, 0, 1, 2, 0, 4, 5, 3, 4, 5, 3}));
  // Negative pads crop; opset 2 attributes.
  y = run1("Pad", {x}, {{"pads", attr_ints({0, -1, 1, 0})}, {"value", attr_float(7)}}, 2);
  EXPECT_EQ(values<float>(y), (std::vector<float>{1, 2, 4, 5, 7, 7}));
  // Opset 18 axes.
  y = run1("Pad", {x, i64({1, 1}), Tensor(), i64({-1})}, {}, 18);
  EXPECT_EQ(values<float>(y), (std::vector<float>{0, 0, 1, 2, 0, 0, 3, 4, 5, 0}));
  EXPECT_FALSE(run_op("Pad", {x, i64({0, 1})}).ok());
  EXPECT_FALSE(run_op("Pad", {x, i64({0, -4, 0, 0})}).ok());
  EXPECT_FALSE(run_op("Pad", {x, i64({0, 1, 0, 0})}, {{"mode", attr_string("mirror")}}).ok());
}

TEST(LayoutOps, DepthToSpaceAndBack) {
  // numpy: x = arange(8).reshape(1,8,1,1); DCR with b=2 -> (1,2,2,2)
  Tensor x = iota({1, 8, 1, 1});
  Tensor dcr = run1("DepthToSpace", {x}, {{"blocksize", attr_int(2)}});
  EXPECT_EQ(dcr.shape(), (Shape{1, 2, 2, 2}));
  EXPECT_EQ(values<float>(dcr), (std::vector<float>{0, 2, 4, 6, 1, 3, 5, 7}));
  Tensor crd = run1("DepthToSpace", {x}, {{"blocksize", attr_int(2)}, {"mode", attr_string("CRD")}});
  EXPECT_EQ(values<float>(crd), (std::vector<float>{0, 1, 2, 3, 4, 5, 6, 7}));
  // SpaceToDepth inverts DCR DepthToSpace.
  Tensor big = iota({2, 12, 3, 4});
  Tensor d2s = run1("DepthToSpace", {big}, {{"blocksize", attr_int(2)}});
  EXPECT_EQ(d2s.shape(), (Shape{2, 3, 6, 8}));
  Tensor back = run1("SpaceToDepth", {d2s}, {{"blocksize", attr_int(2)}});
  EXPECT_EQ(values<float>(back), values<float>(big));
  EXPECT_FALSE(run_op("DepthToSpace", {iota({1, 6, 1, 1})}, {{"blocksize", attr_int(2)}}).ok());
  EXPECT_FALSE(run_op("SpaceToDepth", {iota({1, 1, 3, 3})}, {{"blocksize", attr_int(2)}}).ok());
}

TEST(LayoutOps, Trilu) {
  Tensor x = iota({3, 3});
  Tensor y = run1("Trilu", {x});
  EXPECT_EQ(values<float>(y), (std::vector<float>{0, 1, 2, 0, 4, 5, 0, 0, 8}));
  y = run1("Trilu", {x, Tensor::scalar<int64_t>(-1)}, {{"upper", attr_int(0)}});
  EXPECT_EQ(values<float>(y), (std::vector<float>{0, 0, 0, 3, 0, 0, 6, 7, 0}));
  y = run1("Trilu", {x, Tensor::scalar<int64_t>(INT64_MAX)}, {{"upper", attr_int(0)}});
  EXPECT_EQ(values<float>(y), values<float>(x));
  y = run1("Trilu", {x, Tensor::scalar<int64_t>(INT64_MIN)});
  EXPECT_EQ(values<float>(y), values<float>(x));
}

TEST(LayoutOps, ReverseSequence) {
  // time-major [4 steps, 2 batch], lens [3, 1]
  Tensor x = iota({4, 2});
  Tensor y = run1("ReverseSequence", {x, i64({3, 1})});
  EXPECT_EQ(values<float>(y), (std::vector<float>{4, 1, 2, 3, 0, 5, 6, 7}));
  // batch-major
  y = run1("ReverseSequence", {iota({2, 3}), i64({2, 3})}, {{"batch_axis", attr_int(0)}, {"time_axis", attr_int(1)}});
  EXPECT_EQ(values<float>(y), (std::vector<float>{1, 0, 2, 5, 4, 3}));
  EXPECT_FALSE(run_op("ReverseSequence", {x, i64({5, 1})}).ok());
}

TEST(LayoutOps, Compress) {
  Tensor x = iota({3, 2});
  Tensor cond = Tensor::from_vector<bool>({2}, {false, true});
  Tensor y = run1("Compress", {x, cond}, {{"axis", attr_int(1)}});
  EXPECT_EQ(values<float>(y), (std::vector<float>{1, 3, 5}));
  Tensor c3 = Tensor::from_vector<bool>({3}, {true, false, true});
  y = run1("Compress", {x, c3});  // flattened
  EXPECT_EQ(values<float>(y), (std::vector<float>{0, 2}));
  y = run1("Compress", {x, c3}, {{"axis", attr_int(0)}});
  EXPECT_EQ(values<float>(y), (std::vector<float>{0, 1, 4, 5}));
  EXPECT_FALSE(run_op("Compress", {x, c3}, {{"axis", attr_int(1)}}).ok());
}

}  // namespace
}  // namespace dlrt::cpu::testing

namespace dlrt::cpu::testing {
namespace {

// Strings go through every copy path element-wise.
TEST(LayoutOps, StringsThroughEveryOp) {
  Tensor s = Tensor::from_vector<std::string>({2, 2}, {"a", "bb", "ccc", "dddd"});
  auto strs = [](const Tensor& t) { return std::vector<std::string>(t.data<std::string>(), t.data<std::string>() + t.size()); };
  Tensor y = run1("Concat", {s, s}, {{"axis", attr_int(1)}});
  EXPECT_EQ(strs(y), (std::vector<std::string>{"a", "bb", "a", "bb", "ccc", "dddd", "ccc", "dddd"}));
  y = run1("Slice", {s, i64({1}), i64({2}), i64({1})});
  EXPECT_EQ(strs(y), (std::vector<std::string>{"bb", "dddd"}));
  y = run1("Tile", {s, i64({1, 2})});
  EXPECT_EQ(strs(y)[2], "a");
  y = run1("Pad", {s, i64({0, 1, 0, 0}), Tensor::scalar<std::string>("x")});
  EXPECT_EQ(strs(y), (std::vector<std::string>{"x", "a", "bb", "x", "ccc", "dddd"}));
  y = run1("Expand", {Tensor::from_vector<std::string>({1}, {"q"}), i64({3})});
  EXPECT_EQ(strs(y), (std::vector<std::string>{"q", "q", "q"}));
  auto r = run_op("Split", {s}, {{"axis", attr_int(0)}}, 2, 13);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(strs((*r)[1]), (std::vector<std::string>{"ccc", "dddd"}));
}

TEST(LayoutOps, HostileParametersAreErrorsOrEmpty) {
  Tensor x = iota({3, 4});
  // Extreme steps and bounds must not overflow.
  Tensor y = run1("Slice", {x, i64({INT64_MAX}), i64({INT64_MIN}), i64({1}), i64({INT64_MIN})});
  EXPECT_EQ(y.shape(), (Shape{3, 1}));
  EXPECT_EQ(values<float>(y), (std::vector<float>{3, 7, 11}));
  y = run1("Slice", {x, i64({INT64_MIN}), i64({INT64_MAX}), i64({0}), i64({INT64_MAX})});
  EXPECT_EQ(y.shape(), (Shape{1, 4}));
  EXPECT_FALSE(run_op("Pad", {x, i64({0, INT64_MAX, 0, 0})}).ok());
  EXPECT_FALSE(run_op("Tile", {x, i64({-1, 1})}).ok());
  EXPECT_FALSE(run_op("Expand", {x, i64({-3, 4})}).ok());
  EXPECT_FALSE(run_op("Transpose", {x}, {{"perm", attr_ints({0, 5})}}).ok());
  EXPECT_FALSE(run_op("DepthToSpace", {x}, {{"blocksize", attr_int(2)}}).ok());
  EXPECT_FALSE(run_op("Pad", {Tensor::from_vector<float>({0}, {}), i64({1, 1})}, {{"mode", attr_string("edge")}}).ok());
  // Zero-size outputs.
  y = run1("Tile", {x, i64({0, 2})});
  EXPECT_EQ(y.shape(), (Shape{0, 8}));
  y = run1("Expand", {x, i64({0, 1, 1})});
  EXPECT_EQ(y.shape(), (Shape{0, 3, 4}));
  y = run1("Transpose", {Tensor::from_vector<float>({0, 5}, {})});
  EXPECT_EQ(y.shape(), (Shape{5, 0}));
}

TEST(LayoutOps, LargeCopiesUseThePoolCorrectly) {
  const Shape s = {64, 33, 65};
  Tensor x = iota(s);
  Tensor c = run1("Concat", {x, x}, {{"axis", attr_int(1)}});
  for (int64_t i = 0; i < 64; ++i)
    for (int64_t j = 0; j < 66; ++j)
      for (int64_t k = 0; k < 65; k += 16)
        ASSERT_EQ(c.data<float>()[(i * 66 + j) * 65 + k], static_cast<float>((i * 33 + j % 33) * 65 + k));
  auto r = run_op("Split", {c}, {{"axis", attr_int(1)}}, 2, 13);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(values<float>((*r)[1]), values<float>(x));
  Tensor p = run1("Pad", {x, i64({1, 0, 2, 0, 1, 0})}, {{"mode", attr_string("reflect")}});
  EXPECT_EQ(p.shape(), (Shape{65, 34, 67}));
  // p[0, 0, 0] reflects x[1, 0, 2]; p[64, 33, 66] reflects x[63, 31, 64]
  EXPECT_EQ(p.data<float>()[0], static_cast<float>((1 * 33 + 0) * 65 + 2));
  EXPECT_EQ(p.data<float>()[p.size() - 1], static_cast<float>((63 * 33 + 31) * 65 + 64));
}

// Concat and Split split their copies over the threads by element ranges that
// cut rows and input chunks anywhere (a batch-1 channel Concat is one row):
// against index arithmetic, on shapes large enough for the pool, with odd
// sizes, a zero-length input, 1-element axes and batch > 1, at 1..4 threads,
// for a 4-byte dtype and strings.
TEST(LayoutOps, ConcatSplitElementRangesOverThreads) {
  const std::vector<Shape> firsts = {{1, 24, 136, 184}, {3, 5, 1, 4099}, {2, 1, 70001}, {1, 1, 1, 1}};
  for (const Shape& s0 : firsts) {
    const int64_t rank = static_cast<int64_t>(s0.size());
    for (int64_t axis = 0; axis < rank; ++axis) {
      // Three inputs along `axis`: s0's extent, 0 and 3.
      Shape s1 = s0, s2 = s0;
      s1[axis] = 0;
      s2[axis] = 3;
      std::vector<Tensor> in = {iota<int32_t>(s0), iota<int32_t>(s1), iota<int32_t>(s2)};
      int64_t outer = 1, inner = 1;
      for (int64_t d = 0; d < axis; ++d) outer *= s0[d];
      for (int64_t d = axis + 1; d < rank; ++d) inner *= s0[d];
      const int64_t a0 = s0[axis], a2 = 3, row = (a0 + a2) * inner;
      for (int threads = 1; threads <= 4; ++threads) {
        auto r = run_op("Concat", in, {{"axis", attr_int(axis)}}, 1, 13, "", threads);
        ASSERT_TRUE(r.ok()) << r.status().to_string();
        const Tensor& y = (*r)[0];
        ASSERT_EQ(y.size(), outer * row);
        int bad = 0;
        for (int64_t o = 0; o < outer && bad < 3; ++o)
          for (int64_t q = 0; q < row && bad < 3; ++q) {
            const int32_t want = static_cast<int32_t>(q < a0 * inner ? o * a0 * inner + q : o * a2 * inner + q - a0 * inner);
            if (y.data<int32_t>()[o * row + q] != want) {
              ++bad;
              ADD_FAILURE() << shape_to_string(s0) << " axis " << axis << " threads " << threads << " at " << o << "," << q;
            }
          }
        // Split back into the three parts (sizes as an input, opset 13).
        auto sp = run_op("Split", {y, i64({a0, 0, a2})}, {{"axis", attr_int(axis)}}, 3, 13, "", threads);
        ASSERT_TRUE(sp.ok()) << sp.status().to_string();
        for (int k = 0; k < 3; ++k) {
          ASSERT_EQ((*sp)[k].shape(), in[k].shape());
          EXPECT_EQ(values<int32_t>((*sp)[k]), values<int32_t>(in[k])) << shape_to_string(s0) << " axis " << axis;
        }
      }
    }
  }
  // Strings go element by element through the same ranges.
  std::vector<std::string> sv(40000);
  for (size_t i = 0; i < sv.size(); ++i) sv[i] = std::to_string(i);
  const Tensor st = Tensor::from_vector<std::string>({1, 2, 20000}, sv);
  auto r = run_op("Concat", {st, st}, {{"axis", attr_int(1)}}, 1, 13, "", 2);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  for (int64_t i = 0; i < 80000; i += 777) EXPECT_EQ((*r)[0].data<std::string>()[i], sv[static_cast<size_t>(i % 40000)]);
}

}  // namespace
}  // namespace dlrt::cpu::testing

// 8-bit Transposes (quantized activations changing layout) go through 16 x
// 16 byte tiles, with the rows split over threads when one matrix is large:
// against the index formula, at sizes with partial tiles, on 1 and 2 threads.
namespace dlrt::cpu {
namespace {

TEST(Transpose, BytesEveryPermutationOfChannelsAndPixels) {
  struct Case {
    Shape shape;
    std::vector<int64_t> perm;
  };
  const Case cases[] = {{{2, 19, 7, 33}, {0, 2, 3, 1}}, {{2, 7, 33, 19}, {0, 3, 1, 2}},
                        {{1, 40, 60, 70}, {0, 2, 3, 1}}, {{1, 61, 57, 96}, {0, 3, 1, 2}}, {{35, 17}, {1, 0}}};
  for (const Case& c : cases) {
    std::vector<uint8_t> v(static_cast<size_t>(element_count(c.shape)));
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<uint8_t>(i * 131 + i / 7);
    const size_t r = c.shape.size();
    Shape out_shape(r);
    for (size_t d = 0; d < r; ++d) out_shape[d] = c.shape[static_cast<size_t>(c.perm[d])];
    const Shape in_strides = layout::contiguous_strides(c.shape);
    for (int threads : {1, 2}) {
      auto got = testing::run_op("Transpose", {Tensor::from_vector<uint8_t>(c.shape, v)},
                                 {{"perm", testing::attr_ints(c.perm)}}, 1, 13, "", threads);
      ASSERT_TRUE(got.ok()) << got.status().to_string();
      ASSERT_EQ((*got)[0].shape(), out_shape);
      const uint8_t* o = (*got)[0].data<uint8_t>();
      Shape idx(r, 0);
      for (int64_t e = 0; e < (*got)[0].size(); ++e) {
        int64_t src = 0;
        for (size_t d = 0; d < r; ++d) src += idx[d] * in_strides[static_cast<size_t>(c.perm[d])];
        ASSERT_EQ(o[e], v[static_cast<size_t>(src)]) << "element " << e << ", " << threads << " threads";
        for (size_t d = r; d-- > 0;) {
          if (++idx[d] < out_shape[d]) break;
          idx[d] = 0;
        }
      }
    }
  }
}

}  // namespace
}  // namespace dlrt::cpu
