// Broadcasting binary ops, variadic ops, logic, Where and Cast.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "backends/cpu/ops/broadcast.h"
#include "kernel_test_util.h"

namespace dlrt::cpu {
namespace {

using testing::attr_int;
using testing::attr_string;
using testing::expect_near;
using testing::run_op;

template <typename T>
std::vector<T> values(const Tensor& t) {
  return std::vector<T>(t.data<T>(), t.data<T>() + t.size());
}

Tensor f32(Shape s, std::vector<float> v) { return Tensor::from_vector<float>(std::move(s), v); }

TEST(Broadcast, Shapes) {
  EXPECT_EQ(*broadcast_shapes({2, 3}, {3}), (Shape{2, 3}));
  EXPECT_EQ(*broadcast_shapes({2, 1, 4}, {3, 1}), (Shape{2, 3, 4}));
  EXPECT_EQ(*broadcast_shapes({}, {5}), (Shape{5}));
  EXPECT_EQ(*broadcast_shapes({0, 3}, {1, 3}), (Shape{0, 3}));
  auto bad = broadcast_shapes({2, 3}, {4});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("cannot be broadcast"), std::string::npos) << bad.status().message();
  EXPECT_NE(bad.status().message().find("[2, 3]"), std::string::npos);
}

TEST(Broadcast, PlanCollapsesDims) {
  Shape out{4, 5, 6}, a{4, 5, 6}, b{6};
  auto p = make_broadcast_plan<2>(out, {&a, &b});
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->dims, (std::vector<int64_t>{20, 6}));  // [N, C] + [C] -> rows of C
  EXPECT_EQ(p->strides[1], (std::vector<int64_t>{0, 1}));
  Shape s{};
  auto q = make_broadcast_plan<2>(out, {&a, &s});
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(q->dims, (std::vector<int64_t>{120}));  // scalar operand -> one flat loop
  Shape wrong{5};
  EXPECT_FALSE((make_broadcast_plan<2>(out, {&a, &wrong})).ok());
}

TEST(Elementwise, AddBroadcastCases) {
  auto r = run_op("Add", {f32({2, 3}, {1, 2, 3, 4, 5, 6}), f32({3}, {10, 20, 30})});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].shape(), (Shape{2, 3}));
  expect_near((*r)[0], {11, 22, 33, 14, 25, 36});

  r = run_op("Add", {f32({2, 1}, {1, 2}), f32({1, 3}, {10, 20, 30})});  // outer sum
  ASSERT_TRUE(r.ok());
  expect_near((*r)[0], {11, 21, 31, 12, 22, 32});

  r = run_op("Sub", {Tensor::scalar<float>(1), f32({3}, {1, 2, 3})});
  ASSERT_TRUE(r.ok());
  expect_near((*r)[0], {0, -1, -2});

  r = run_op("Mul", {f32({2, 3}, {1, 2, 3, 4, 5, 6}), f32({2, 1}, {2, 3})});  // inner broadcast
  ASSERT_TRUE(r.ok());
  expect_near((*r)[0], {2, 4, 6, 12, 15, 18});

  r = run_op("Add", {f32({2, 0}, {}), f32({1}, {1})});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].shape(), (Shape{2, 0}));
}

TEST(Elementwise, IncompatibleShapesAreAnError) {
  auto r = run_op("Add", {f32({2, 3}, std::vector<float>(6)), f32({2}, {1, 2})});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("test_Add"), std::string::npos) << r.status().message();
  auto m = run_op("Add", {f32({1}, {1}), Tensor::from_vector<int32_t>({1}, {1})});
  EXPECT_FALSE(m.ok());  // mixed dtypes
  auto s = run_op("Add", {Tensor::from_vector<bool>({1}, {true}), Tensor::from_vector<bool>({1}, {true})});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kUnsupported);
}

// Big enough to run in parallel; checked against a naive index computation.
TEST(Elementwise, LargeGeneralBroadcastMatchesNaive) {
  const int64_t A = 37, B = 29, C = 41;
  std::vector<float> x(A * 1 * C), y(B * 1);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 97);
  for (size_t i = 0; i < y.size(); ++i) y[i] = static_cast<float>(i) * 1000;
  auto r = run_op("Add", {f32({A, 1, C}, x), f32({B, 1}, y)});
  ASSERT_TRUE(r.ok());
  const Tensor& o = (*r)[0];
  ASSERT_EQ(o.shape(), (Shape{A, B, C}));
  for (int64_t a = 0; a < A; ++a)
    for (int64_t b = 0; b < B; ++b)
      for (int64_t c = 0; c < C; ++c)
        ASSERT_EQ(o.data<float>()[(a * B + b) * C + c], x[a * C + c] + y[b]) << a << "," << b << "," << c;

  // Long rows are split into blocks.
  const int64_t R = 3, L = 50001;
  std::vector<float> rows(R * L), col{1000, 2000, 3000};
  for (size_t i = 0; i < rows.size(); ++i) rows[i] = static_cast<float>(i % 1013);
  auto rr = run_op("Sub", {f32({R, L}, rows), f32({R, 1}, col)});
  ASSERT_TRUE(rr.ok());
  for (int64_t i = 0; i < R * L; ++i) ASSERT_EQ((*rr)[0].data<float>()[i], rows[i] - col[i / L]) << i;

  std::vector<int64_t> big(70000), one{3};
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<int64_t>(i);
  auto m = run_op("Mul", {Tensor::from_vector<int64_t>({70000}, big), Tensor::from_vector<int64_t>({1}, one)});
  ASSERT_TRUE(m.ok());
  for (int64_t i = 0; i < 70000; ++i) ASSERT_EQ((*m)[0].data<int64_t>()[i], 3 * i);
}

TEST(Elementwise, IntegerDivTruncatesAndNeverTraps) {
  auto a = Tensor::from_vector<int32_t>({6}, {7, -7, 7, -7, 5, std::numeric_limits<int32_t>::min()});
  auto b = Tensor::from_vector<int32_t>({6}, {2, 2, -2, -2, 0, -1});
  auto r = run_op("Div", {a, b});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(values<int32_t>((*r)[0]), (std::vector<int32_t>{3, -3, -3, 3, 0, std::numeric_limits<int32_t>::min()}));
  auto u = run_op("Div", {Tensor::from_vector<uint8_t>({2}, {200, 9}), Tensor::from_vector<uint8_t>({2}, {7, 0})});
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(values<uint8_t>((*u)[0]), (std::vector<uint8_t>{28, 0}));
  // Wrapping, not UB.
  auto w = run_op("Add", {Tensor::from_vector<int32_t>({1}, {std::numeric_limits<int32_t>::max()}),
                          Tensor::from_vector<int32_t>({1}, {1})});
  ASSERT_TRUE(w.ok());
  EXPECT_EQ((*w)[0].data<int32_t>()[0], std::numeric_limits<int32_t>::min());
}

TEST(Elementwise, ModSignSemantics) {
  auto a = Tensor::from_vector<int64_t>({5}, {7, -7, 7, -7, 3});
  auto b = Tensor::from_vector<int64_t>({5}, {3, 3, -3, -3, 0});
  auto py = run_op("Mod", {a, b});  // fmod=0: the divisor's sign (Python)
  ASSERT_TRUE(py.ok());
  EXPECT_EQ(values<int64_t>((*py)[0]), (std::vector<int64_t>{1, 2, -2, -1, 0}));
  auto c = run_op("Mod", {a, b}, {{"fmod", attr_int(1)}});  // fmod=1: the dividend's sign (C)
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(values<int64_t>((*c)[0]), (std::vector<int64_t>{1, -1, 1, -1, 0}));
  auto f = run_op("Mod", {f32({3}, {-4.3f, 4.3f, 5.0f}), f32({3}, {2.1f, -2.1f, 2.5f})}, {{"fmod", attr_int(1)}});
  ASSERT_TRUE(f.ok());
  expect_near((*f)[0], {std::fmod(-4.3f, 2.1f), std::fmod(4.3f, -2.1f), 0.0f});
  auto min = run_op("Mod", {Tensor::from_vector<int8_t>({1}, {-128}), Tensor::from_vector<int8_t>({1}, {-1})});
  ASSERT_TRUE(min.ok());
  EXPECT_EQ((*min)[0].data<int8_t>()[0], 0);
}

TEST(Elementwise, PowMixedTypes) {
  auto r = run_op("Pow", {Tensor::from_vector<int32_t>({3}, {1, 2, 3}), f32({3}, {4, 5, 6})});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].dtype(), DType::kInt32);
  EXPECT_EQ(values<int32_t>((*r)[0]), (std::vector<int32_t>{1, 32, 729}));
  r = run_op("Pow", {f32({2}, {2, 3}), Tensor::from_vector<int64_t>({2}, {3, -1})});
  ASSERT_TRUE(r.ok());
  expect_near((*r)[0], {8, 1.0f / 3});
  r = run_op("Pow", {Tensor::from_vector<int64_t>({3}, {3, -2, 5}), Tensor::from_vector<int32_t>({1}, {3})});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(values<int64_t>((*r)[0]), (std::vector<int64_t>{27, -8, 125}));
  r = run_op("Pow", {f32({2, 1}, {2, 4}), f32({2}, {0.5f, 2})});
  ASSERT_TRUE(r.ok());
  expect_near((*r)[0], {std::sqrt(2.0f), 4, 2, 16});
}

TEST(Elementwise, VariadicBroadcast) {
  std::vector<Tensor> in = {f32({3}, {1, 2, 3}), f32({1}, {4}), f32({2, 1}, {1, 2})};
  auto s = run_op("Sum", in);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ((*s)[0].shape(), (Shape{2, 3}));
  expect_near((*s)[0], {6, 7, 8, 7, 8, 9});
  auto m = run_op("Mean", in);
  ASSERT_TRUE(m.ok());
  expect_near((*m)[0], {2, 7.0f / 3, 8.0f / 3, 7.0f / 3, 8.0f / 3, 3});
  auto mx = run_op("Max", {f32({3}, {1, 5, NAN}), f32({3}, {3, 2, 1})});
  ASSERT_TRUE(mx.ok());
  EXPECT_EQ((*mx)[0].data<float>()[0], 3);
  EXPECT_EQ((*mx)[0].data<float>()[1], 5);
  EXPECT_TRUE(std::isnan((*mx)[0].data<float>()[2]));
  auto mn = run_op("Min", {Tensor::from_vector<int32_t>({2}, {4, -1})});
  ASSERT_TRUE(mn.ok());
  EXPECT_EQ(values<int32_t>((*mn)[0]), (std::vector<int32_t>{4, -1}));
  EXPECT_FALSE(run_op("Sum", {f32({2}, {1, 2}), f32({3}, {1, 2, 3})}).ok());
}

TEST(Elementwise, ComparisonsAndLogic) {
  auto a = f32({4}, {1, 2, 3, NAN});
  auto b = f32({1}, {2});
  auto eq = run_op("Equal", {a, b});
  ASSERT_TRUE(eq.ok());
  EXPECT_EQ(values<bool>((*eq)[0]), (std::vector<bool>{false, true, false, false}));
  auto lt = run_op("Less", {a, b});
  ASSERT_TRUE(lt.ok());
  EXPECT_EQ(values<bool>((*lt)[0]), (std::vector<bool>{true, false, false, false}));
  auto ge = run_op("GreaterOrEqual", {a, b});
  ASSERT_TRUE(ge.ok());
  EXPECT_EQ(values<bool>((*ge)[0]), (std::vector<bool>{false, true, true, false}));
  auto s = run_op("Equal", {Tensor::from_vector<std::string>({2}, {"a", "bc"}), Tensor::scalar<std::string>("bc")}, {}, 1, 19);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(values<bool>((*s)[0]), (std::vector<bool>{false, true}));

  auto t = Tensor::from_vector<bool>({4}, {true, true, false, false});
  auto u = Tensor::from_vector<bool>({4}, {true, false, true, false});
  EXPECT_EQ(values<bool>((*run_op("And", {t, u}))[0]), (std::vector<bool>{true, false, false, false}));
  EXPECT_EQ(values<bool>((*run_op("Or", {t, u}))[0]), (std::vector<bool>{true, true, true, false}));
  EXPECT_EQ(values<bool>((*run_op("Xor", {t, u}))[0]), (std::vector<bool>{false, true, true, false}));
  EXPECT_EQ(values<bool>((*run_op("Not", {t}))[0]), (std::vector<bool>{false, false, true, true}));
  EXPECT_FALSE(run_op("And", {f32({1}, {1}), f32({1}, {1})}).ok());
}

TEST(Elementwise, BitOps) {
  auto x = Tensor::from_vector<uint8_t>({3}, {16, 4, 1});
  auto y = Tensor::from_vector<uint8_t>({3}, {1, 2, 9});
  auto r = run_op("BitShift", {x, y}, {{"direction", attr_string("RIGHT")}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(values<uint8_t>((*r)[0]), (std::vector<uint8_t>{8, 1, 0}));
  r = run_op("BitShift", {x, y}, {{"direction", attr_string("LEFT")}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(values<uint8_t>((*r)[0]), (std::vector<uint8_t>{32, 16, 0}));
  EXPECT_FALSE(run_op("BitShift", {x, y}, {{"direction", attr_string("UP")}}).ok());
  auto i = Tensor::from_vector<int32_t>({2}, {12, -1});
  auto j = Tensor::from_vector<int32_t>({2}, {10, 5});
  EXPECT_EQ(values<int32_t>((*run_op("BitwiseAnd", {i, j}, {}, 1, 18))[0]), (std::vector<int32_t>{8, 5}));
  EXPECT_EQ(values<int32_t>((*run_op("BitwiseOr", {i, j}, {}, 1, 18))[0]), (std::vector<int32_t>{14, -1}));
  EXPECT_EQ(values<int32_t>((*run_op("BitwiseXor", {i, j}, {}, 1, 18))[0]), (std::vector<int32_t>{6, -6}));
  EXPECT_EQ(values<int32_t>((*run_op("BitwiseNot", {i}, {}, 1, 18))[0]), (std::vector<int32_t>{-13, 0}));
}

TEST(Elementwise, WhereThreeWayBroadcast) {
  auto c = Tensor::from_vector<bool>({2, 1}, {true, false});
  auto x = Tensor::from_vector<std::string>({3}, {"a", "b", "c"});
  auto y = Tensor::scalar<std::string>("z");
  auto r = run_op("Where", {c, x, y});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].shape(), (Shape{2, 3}));
  EXPECT_EQ(values<std::string>((*r)[0]), (std::vector<std::string>{"a", "b", "c", "z", "z", "z"}));
  auto f = run_op("Where", {Tensor::from_vector<bool>({3}, {true, false, true}), f32({3}, {1, 2, 3}), f32({3}, {-1, -2, -3})});
  ASSERT_TRUE(f.ok());
  expect_near((*f)[0], {1, -2, 3});
  EXPECT_FALSE(run_op("Where", {Tensor::from_vector<bool>({2}, {true, false}), f32({3}, {1, 2, 3}), f32({1}, {0})}).ok());
}

TEST(Elementwise, LegacyBroadcastAxis) {
  // Opset 6: B of shape [3] aligned at axis 0 of A [3, 2].
  auto r = run_op("Add", {f32({3, 2}, {1, 2, 3, 4, 5, 6}), f32({3}, {10, 20, 30})},
                  {{"broadcast", attr_int(1)}, {"axis", attr_int(0)}}, 1, 6);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_near((*r)[0], {11, 12, 23, 24, 35, 36});
}

// ---- Cast ----

TEST(Cast, FloatToHalfAndBack) {
  auto x = f32({4}, {0.1f, 65504.0f, 65520.0f, -2.5f});
  auto h = run_op("Cast", {x}, {{"to", attr_int(static_cast<int>(DType::kFloat16))}});
  ASSERT_TRUE(h.ok());
  EXPECT_EQ((*h)[0].dtype(), DType::kFloat16);
  auto back = run_op("Cast", {(*h)[0]}, {{"to", attr_int(1)}});
  ASSERT_TRUE(back.ok());
  const float* v = (*back)[0].data<float>();
  EXPECT_EQ(v[0], 0.0999755859375f);
  EXPECT_EQ(v[1], 65504.0f);
  EXPECT_TRUE(std::isinf(v[2]));
  EXPECT_EQ(v[3], -2.5f);
  auto bf = run_op("Cast", {f32({2}, {1.0f, 3.0f})}, {{"to", attr_int(static_cast<int>(DType::kBFloat16))}});
  ASSERT_TRUE(bf.ok());
  EXPECT_EQ((*bf)[0].data<BFloat16>()[0].bits, 0x3f80);
  EXPECT_EQ((*bf)[0].data<BFloat16>()[1].bits, 0x4040);
}

TEST(Cast, NumericConversions) {
  auto x = f32({5}, {-1.7f, 2.9f, 300.0f, NAN, 0.0f});
  auto i = run_op("Cast", {x}, {{"to", attr_int(static_cast<int>(DType::kInt32))}});
  ASSERT_TRUE(i.ok());
  EXPECT_EQ((*i)[0].data<int32_t>()[0], -1);
  EXPECT_EQ((*i)[0].data<int32_t>()[1], 2);
  EXPECT_EQ((*i)[0].data<int32_t>()[2], 300);
  auto b = run_op("Cast", {x}, {{"to", attr_int(static_cast<int>(DType::kBool))}});
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(values<bool>((*b)[0]), (std::vector<bool>{true, true, true, true, false}));
  auto big = run_op("Cast", {f32({2}, {1e30f, -1e30f})}, {{"to", attr_int(static_cast<int>(DType::kInt8))}});
  ASSERT_TRUE(big.ok());  // out of range: defined, not UB
  auto like = run_op("CastLike", {Tensor::from_vector<int64_t>({2}, {3, -4}), Tensor::from_vector<double>({1}, {0})}, {}, 1, 15);
  ASSERT_TRUE(like.ok());
  EXPECT_EQ(values<double>((*like)[0]), (std::vector<double>{3, -4}));
  EXPECT_FALSE(run_op("Cast", {x}, {{"to", attr_int(99)}}).ok());
}

TEST(Cast, ToStringLikeNumpy) {
  auto x = f32({9}, {1.0f, 0.1f, 1e-5f, 1e16f, NAN, -INFINITY, 0.039187793f, 123456.0f, -2.5e-7f});
  auto r = run_op("Cast", {x}, {{"to", attr_int(static_cast<int>(DType::kString))}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(values<std::string>((*r)[0]), (std::vector<std::string>{"1.0", "0.1", "1e-05", "1e+16", "nan", "-inf",
                                                                    "0.039187793", "123456.0", "-2.5e-07"}));
  auto h = Tensor::from_vector<Float16>({2}, {Float16(0.1f), Float16(65504.0f)});
  auto hs = run_op("Cast", {h}, {{"to", attr_int(static_cast<int>(DType::kString))}});
  ASSERT_TRUE(hs.ok());
  EXPECT_EQ(values<std::string>((*hs)[0]), (std::vector<std::string>{"0.1", "65500.0"}));
  auto i = run_op("Cast", {Tensor::from_vector<int64_t>({2}, {-42, 7})}, {{"to", attr_int(static_cast<int>(DType::kString))}});
  ASSERT_TRUE(i.ok());
  EXPECT_EQ(values<std::string>((*i)[0]), (std::vector<std::string>{"-42", "7"}));
}

TEST(Cast, FromString) {
  auto s = Tensor::from_vector<std::string>({6}, {"0.5", "NaN", "INF", "+INF", "-INF", " -3e2 "});
  auto r = run_op("Cast", {s}, {{"to", attr_int(1)}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  const float* v = (*r)[0].data<float>();
  EXPECT_EQ(v[0], 0.5f);
  EXPECT_TRUE(std::isnan(v[1]));
  EXPECT_TRUE(std::isinf(v[2]) && v[2] > 0);
  EXPECT_TRUE(std::isinf(v[3]) && v[3] > 0);
  EXPECT_TRUE(std::isinf(v[4]) && v[4] < 0);
  EXPECT_EQ(v[5], -300.0f);
  auto i = run_op("Cast", {Tensor::from_vector<std::string>({2}, {"9007199254740993", "-5"})},
                  {{"to", attr_int(static_cast<int>(DType::kInt64))}});
  ASSERT_TRUE(i.ok());
  EXPECT_EQ(values<int64_t>((*i)[0]), (std::vector<int64_t>{9007199254740993LL, -5}));
  auto bad = run_op("Cast", {Tensor::from_vector<std::string>({1}, {"abc"})}, {{"to", attr_int(1)}});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("abc"), std::string::npos);
}

// float32 to a constant power of 2 or 3 multiplies instead of calling powf: the values are
// within about an ulp of powf's, NaN, zeros and infinities included, and the output
// shape still follows broadcasting when the exponent has the higher rank.
TEST(Elementwise, PowBySquareOrCubeMatchesPowf) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> x = {0.0f, -0.0f, 1.5f, -2.25f, 1e-20f, 3e12f, -3e13f, inf, -inf, nan};
  for (int i = 0; i < 40000; ++i) x.push_back(std::sin(0.1f * static_cast<float>(i)) * 50.0f);
  const int64_t n = static_cast<int64_t>(x.size());
  for (float e : {2.0f, 3.0f}) {
    auto r = run_op("Pow", {Tensor::from_vector<float>({n}, x), Tensor::from_vector<float>({1}, {e})});
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    ASSERT_EQ((*r)[0].shape(), (Shape{n}));
    const float* y = (*r)[0].data<float>();
    for (int64_t i = 0; i < n; ++i) {
      const float want = std::pow(x[i], e);
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(y[i])) << x[i];
      } else if (std::isinf(want) || want == 0.0f) {
        EXPECT_EQ(y[i], want) << x[i] << "^" << e;
      } else {
        EXPECT_NEAR(y[i], want, std::fabs(want) * 2.5e-7f) << x[i] << "^" << e;
      }
    }
  }
  // An exponent of higher rank broadcasts the output up: [3] ^ [1, 1] is [1, 3].
  auto r = run_op("Pow", {Tensor::from_vector<float>({3}, {1, 2, 3}), Tensor::from_vector<float>({1, 1}, {2.0f})});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].shape(), (Shape{1, 3}));
  expect_near((*r)[0], {1, 4, 9});
}

// Sigmoid and Tanh on float32 run vectorised (apply_activation), split over the pool for
// large tensors: they must match <cmath> closely, keep NaN, and saturate at the infinities,
// at any length (vector tails) and on both threads' chunks.
TEST(Activations, VectorisedSigmoidAndTanhMatchTheScalarReference) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  for (int64_t n : {int64_t{1}, int64_t{15}, int64_t{17}, int64_t{100003}}) {
    std::vector<float> x(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) x[i] = std::sin(0.37f * static_cast<float>(i)) * 30.0f;
    const float specials[] = {0.0f, -0.0f, inf, -inf, nan, 88.0f, -88.0f, 1e-30f, -1e-30f, 0.25f, -0.25f};
    for (size_t i = 0; i < std::size(specials) && i < x.size(); ++i) x[i] = specials[i];
    for (const char* op : {"Sigmoid", "Tanh"}) {
      SCOPED_TRACE(std::string(op) + " n=" + std::to_string(n));
      auto r = run_op(op, {Tensor::from_vector<float>({n}, x)});
      ASSERT_TRUE(r.ok()) << r.status().to_string();
      const float* y = (*r)[0].data<float>();
      for (int64_t i = 0; i < n; ++i) {
        const double v = x[i];
        const double want = std::string(op) == "Sigmoid" ? 1.0 / (1.0 + std::exp(-v)) : std::tanh(v);
        if (std::isnan(v)) {
          EXPECT_TRUE(std::isnan(y[i])) << i;
          continue;
        }
        ASSERT_NEAR(y[i], want, 2e-6 * std::max(1.0, std::fabs(want))) << "x = " << x[i];
      }
    }
  }
}

}  // namespace
}  // namespace dlrt::cpu
