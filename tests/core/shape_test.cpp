// dlrt::Shape: std::vector<int64_t>'s behaviour, with 8 dims inline and more
// on the heap.
#include <gtest/gtest.h>

#include <span>
#include <utility>
#include <vector>

#include "dlrt/shape.h"
#include "dlrt/tensor.h"

namespace dlrt {
namespace {

std::vector<int64_t> v(const Shape& s) { return std::vector<int64_t>(s.begin(), s.end()); }

TEST(Shape, BuildsLikeAVector) {
  EXPECT_TRUE(Shape().empty());
  EXPECT_EQ(v(Shape{1, 3, 224, 224}), (std::vector<int64_t>{1, 3, 224, 224}));
  EXPECT_EQ(v(Shape(3)), (std::vector<int64_t>{0, 0, 0}));
  EXPECT_EQ(v(Shape(2, 7)), (std::vector<int64_t>{7, 7}));
  const std::vector<int64_t> dims = {4, 5, 6};
  EXPECT_EQ(v(Shape(dims)), dims);
  EXPECT_EQ(v(Shape(dims.begin() + 1, dims.end())), (std::vector<int64_t>{5, 6}));
  const std::vector<int64_t> back = Shape{9, 8};
  EXPECT_EQ(back, (std::vector<int64_t>{9, 8}));
  std::span<const int64_t> sp = Shape{2, 3};  // a temporary: only its size is read below
  EXPECT_EQ(sp.size(), 2u);
}

TEST(Shape, SpillsPastEightDimsAndKeepsValues) {
  Shape s;
  for (int64_t i = 0; i < 20; ++i) {
    s.push_back(i * 3);
    ASSERT_EQ(s.size(), static_cast<size_t>(i + 1));
    for (int64_t j = 0; j <= i; ++j) ASSERT_EQ(s[j], j * 3) << "after " << i + 1 << " dims";
  }
  EXPECT_GE(s.capacity(), 20u);
  Shape copy = s;  // a heap copy
  EXPECT_EQ(copy, s);
  copy[19] = -1;
  EXPECT_EQ(s[19], 57) << "a copy shares no storage";
  Shape moved = std::move(copy);
  EXPECT_EQ(moved[19], -1);
  EXPECT_TRUE(copy.empty());  // NOLINT(bugprone-use-after-move): a moved-from Shape is empty
  moved = Shape{1, 2};        // back to few dims
  EXPECT_EQ(v(moved), (std::vector<int64_t>{1, 2}));
}

TEST(Shape, InlineCopiesAndMovesAreIndependent) {
  Shape a{1, 2, 3};
  Shape b = a;
  b[0] = 10;
  EXPECT_EQ(a[0], 1);
  Shape c = std::move(b);
  EXPECT_EQ(v(c), (std::vector<int64_t>{10, 2, 3}));
  EXPECT_TRUE(b.empty());  // NOLINT(bugprone-use-after-move)
  a = c;
  EXPECT_EQ(a, c);
  a = a;  // self-assignment keeps the dims
  EXPECT_EQ(v(a), (std::vector<int64_t>{10, 2, 3}));
}

TEST(Shape, InsertEraseResize) {
  Shape s{1, 2, 3};
  s.insert(s.begin(), 0);
  s.insert(s.end(), {4, 5});
  EXPECT_EQ(v(s), (std::vector<int64_t>{0, 1, 2, 3, 4, 5}));
  s.insert(s.begin() + 2, 2, 9);
  EXPECT_EQ(v(s), (std::vector<int64_t>{0, 1, 9, 9, 2, 3, 4, 5}));
  // Inserting a range of itself past the inline capacity.
  s.insert(s.begin() + 1, s.begin(), s.begin() + 3);
  EXPECT_EQ(v(s), (std::vector<int64_t>{0, 0, 1, 9, 1, 9, 9, 2, 3, 4, 5}));
  s.erase(s.begin() + 1, s.begin() + 4);
  EXPECT_EQ(v(s), (std::vector<int64_t>{0, 1, 9, 9, 2, 3, 4, 5}));
  s.erase(s.begin());
  s.pop_back();
  EXPECT_EQ(v(s), (std::vector<int64_t>{1, 9, 9, 2, 3, 4}));
  s.resize(8, 6);
  EXPECT_EQ(v(s), (std::vector<int64_t>{1, 9, 9, 2, 3, 4, 6, 6}));
  s.resize(2);
  EXPECT_EQ(v(s), (std::vector<int64_t>{1, 9}));
  s.assign(3, 4);
  EXPECT_EQ(v(s), (std::vector<int64_t>{4, 4, 4}));
  EXPECT_EQ(s.front(), 4);
  s.back() = 5;
  EXPECT_EQ(*s.rbegin(), 5);
  s.clear();
  EXPECT_TRUE(s.empty());
}

TEST(Shape, ComparesByDims) {
  EXPECT_EQ((Shape{1, 2}), (Shape{1, 2}));
  EXPECT_NE((Shape{1, 2}), (Shape{1, 2, 1}));
  EXPECT_LT((Shape{1, 2}), (Shape{1, 3}));
  EXPECT_LT((Shape{1}), (Shape{1, 0}));
  EXPECT_TRUE((Shape{3, 4}) == (std::vector<int64_t>{3, 4}));
  EXPECT_TRUE((std::vector<int64_t>{3, 4}) == (Shape{3, 4}));
  EXPECT_FALSE((Shape{3, 4}) == (std::vector<int64_t>{3}));
}

TEST(Shape, TensorsKeepTheirShape) {
  auto t = Tensor::allocate(DType::kFloat32, Shape{2, 3, 4, 5, 6, 7, 8, 9, 2});  // rank 9: on the heap
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->rank(), 9u);
  EXPECT_EQ(t->size(), 2 * 3 * 4 * 5 * 6 * 7 * 8 * 9 * 2);
  Tensor u = *t;
  EXPECT_EQ(u.shape(), t->shape());
  auto r = t->reshaped({720, 1008});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->shape(), (Shape{720, 1008}));
  EXPECT_EQ(shape_to_string(r->shape()), "[720, 1008]");
}

}  // namespace
}  // namespace dlrt
