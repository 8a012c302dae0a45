#include <cmath>
#include <limits>
#include <random>

#include "backends/cpu/kernels/isa.h"
#include "kernel_test_util.h"

namespace dlrt::cpu::testing {
namespace {

Tensor iota_f(Shape s) {
  std::vector<float> v(static_cast<size_t>(element_count(s)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i + 1);
  return Tensor::from_vector<float>(s, v);
}

TEST(Reduce, SumAxesAttributeKeepdims) {
  // [[1,2,3],[4,5,6]] summed over axis 1 -> [[6],[15]]
  auto r = run_op("ReduceSum", {iota_f({2, 3})}, {{"axes", attr_ints({1})}}, 1, 11);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].shape(), (Shape{2, 1}));
  expect_near((*r)[0], {6, 15});
}

TEST(Reduce, SumAxesInputOpset13NoKeepdims) {
  auto r = run_op("ReduceSum", {iota_f({2, 3}), Tensor::from_vector<int64_t>({1}, {0})}, {{"keepdims", attr_int(0)}}, 1, 13);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].shape(), (Shape{3}));
  expect_near((*r)[0], {5, 7, 9});
}

TEST(Reduce, NoopWithEmptyAxes) {
  auto r = run_op("ReduceSum", {iota_f({2, 2}), Tensor::from_vector<int64_t>({0}, {})}, {{"noop_with_empty_axes", attr_int(1)}}, 1, 13);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_near((*r)[0], {1, 2, 3, 4});
  // Without noop: everything is reduced.
  auto all = run_op("ReduceSum", {iota_f({2, 2})}, {}, 1, 13);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ((*all)[0].shape(), (Shape{1, 1}));
  expect_near((*all)[0], {10});
}

TEST(Reduce, NonAdjacentAxes) {
  // shape [2,3,2]; reduce axes 0 and 2 -> [3]: values x[a,b,c] = 1 + a*6 + b*2 + c
  auto r = run_op("ReduceSum", {iota_f({2, 3, 2})}, {{"axes", attr_ints({0, -1})}, {"keepdims", attr_int(0)}}, 1, 11);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  // b=0: 1+2+7+8 = 18, b=1: 3+4+9+10 = 26, b=2: 5+6+11+12 = 34
  expect_near((*r)[0], {18, 26, 34});
  auto mx = run_op("ReduceMax", {iota_f({2, 3, 2})}, {{"axes", attr_ints({0, 2})}, {"keepdims", attr_int(0)}}, 1, 13);
  ASSERT_TRUE(mx.ok());
  expect_near((*mx)[0], {8, 10, 12});
}

TEST(Reduce, AllOps) {
  Tensor x = Tensor::from_vector<float>({2, 2}, {1, -2, 3, 4});
  auto run = [&](const char* op) {
    auto r = run_op(op, {x}, {{"axes", attr_ints({1})}, {"keepdims", attr_int(0)}}, 1, 13);
    EXPECT_TRUE(r.ok()) << op << ": " << r.status().to_string();
    return r.ok() ? (*r)[0] : Tensor();
  };
  expect_near(run("ReduceMean"), {-0.5f, 3.5f});
  expect_near(run("ReduceMin"), {-2, 3});
  expect_near(run("ReduceProd"), {-2, 12});
  expect_near(run("ReduceL1"), {3, 7});
  expect_near(run("ReduceL2"), {std::sqrt(5.f), 5});
  expect_near(run("ReduceSumSquare"), {5, 25});
  expect_near(run("ReduceLogSumExp"), {std::log(std::exp(1.f) + std::exp(-2.f)), std::log(std::exp(3.f) + std::exp(4.f))});
  auto ls = run_op("ReduceLogSum", {Tensor::from_vector<float>({2}, {1, 2})}, {}, 1, 13);
  ASSERT_TRUE(ls.ok());
  expect_near((*ls)[0], {std::log(3.f)});
}

TEST(Reduce, AxesInputOpset18) {
  auto r = run_op("ReduceMax", {iota_f({2, 3}), Tensor::from_vector<int64_t>({1}, {1})}, {{"keepdims", attr_int(0)}}, 1, 18);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_near((*r)[0], {3, 6});
}

TEST(Reduce, LogSumExpLargeValues) {
  auto r = run_op("ReduceLogSumExp", {Tensor::from_vector<float>({2}, {1000, 1000})}, {}, 1, 13);
  ASSERT_TRUE(r.ok());
  expect_near((*r)[0], {1000 + std::log(2.f)});
}

TEST(Reduce, EmptySet) {
  Tensor x = Tensor::from_vector<float>({2, 0, 4}, {});
  auto ax = Tensor::from_vector<int64_t>({1}, {1});
  auto sum = run_op("ReduceSum", {x, ax}, {}, 1, 18);
  ASSERT_TRUE(sum.ok()) << sum.status().to_string();
  EXPECT_EQ((*sum)[0].shape(), (Shape{2, 1, 4}));
  expect_near((*sum)[0], std::vector<float>(8, 0.f));
  auto prod = run_op("ReduceProd", {x, ax}, {}, 1, 18);
  ASSERT_TRUE(prod.ok());
  expect_near((*prod)[0], std::vector<float>(8, 1.f));
  auto mx = run_op("ReduceMax", {x, ax}, {}, 1, 18);
  ASSERT_TRUE(mx.ok());
  EXPECT_EQ((*mx)[0].data<float>()[0], -std::numeric_limits<float>::infinity());
  auto lse = run_op("ReduceLogSumExp", {x, ax}, {}, 1, 18);
  ASSERT_TRUE(lse.ok());
  EXPECT_EQ((*lse)[0].data<float>()[0], -std::numeric_limits<float>::infinity());
  // The mean of nothing is 0 as ONNX Runtime gives it (not 0/0 = NaN).
  auto mean = run_op("ReduceMean", {x, ax}, {}, 1, 18);
  ASSERT_TRUE(mean.ok()) << mean.status().to_string();
  EXPECT_EQ((*mean)[0].shape(), (Shape{2, 1, 4}));
  expect_near((*mean)[0], std::vector<float>(8, 0.f));
}

// An axis named twice (1 and -1 of a rank-2 tensor, or 1 twice) is reduced
// once, as ONNX Runtime does.
TEST(Reduce, RepeatedAxesAreReducedOnce) {
  for (const std::vector<int64_t>& axes : {std::vector<int64_t>{1, -1}, std::vector<int64_t>{1, 1}}) {
    auto r = run_op("ReduceMean", {iota_f({2, 3}), Tensor::from_vector<int64_t>({2}, axes)}, {}, 1, 18);
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    EXPECT_EQ((*r)[0].shape(), (Shape{2, 1}));
    expect_near((*r)[0], {2, 5});
  }
  auto a = run_op("ReduceSum", {iota_f({2, 3})}, {{"axes", attr_ints({1, -1})}}, 1, 11);
  ASSERT_TRUE(a.ok()) << a.status().to_string();
  expect_near((*a)[0], {6, 15});
}

TEST(Reduce, IntegerTypes) {
  auto r = run_op("ReduceSum", {Tensor::from_vector<int32_t>({3}, {1, 2, 3})}, {{"keepdims", attr_int(0)}}, 1, 13);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].data<int32_t>()[0], 6);
  auto m = run_op("ReduceMean", {Tensor::from_vector<int64_t>({2}, {3, 4})}, {}, 1, 13);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ((*m)[0].data<int64_t>()[0], 3);
}

TEST(Reduce, Errors) {
  auto r = run_op("ReduceSum", {iota_f({2, 3})}, {{"axes", attr_ints({2})}}, 1, 11);
  EXPECT_FALSE(r.ok());
  auto s = run_op("ReduceSum", {Tensor::from_vector<std::string>({1}, {"a"})}, {}, 1, 13);
  EXPECT_FALSE(s.ok());
}

// Every subset of axes of a 4-D tensor against a naive reference.
TEST(Reduce, AxisSubsetsMatchNaive) {
  const Shape shape{3, 1, 4, 5};
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-2, 2);
  std::vector<float> v(static_cast<size_t>(element_count(shape)));
  for (auto& e : v) e = dist(rng);
  Tensor x = Tensor::from_vector<float>(shape, v);
  for (int mask = 1; mask < 16; ++mask) {
    std::vector<int64_t> axes;
    for (int d = 0; d < 4; ++d)
      if (mask & (1 << d)) axes.push_back(d);
    Shape out_shape;
    for (int d = 0; d < 4; ++d) out_shape.push_back((mask & (1 << d)) ? 1 : shape[d]);
    std::vector<float> sum(static_cast<size_t>(element_count(out_shape)), 0.f);
    std::vector<float> mx(sum.size(), -1e30f);
    for (int64_t a = 0; a < shape[0]; ++a)
      for (int64_t b = 0; b < shape[1]; ++b)
        for (int64_t c = 0; c < shape[2]; ++c)
          for (int64_t d = 0; d < shape[3]; ++d) {
            int64_t idx[4] = {a, b, c, d};
            int64_t o = 0;
            for (int k = 0; k < 4; ++k) o = o * out_shape[k] + ((mask & (1 << k)) ? 0 : idx[k]);
            float e = v[((a * shape[1] + b) * shape[2] + c) * shape[3] + d];
            sum[o] += e;
            mx[o] = std::max(mx[o], e);
          }
    auto rs = run_op("ReduceSum", {x, Tensor::from_vector<int64_t>({static_cast<int64_t>(axes.size())}, axes)}, {}, 1, 13);
    ASSERT_TRUE(rs.ok()) << rs.status().to_string();
    EXPECT_EQ((*rs)[0].shape(), out_shape) << "mask " << mask;
    expect_near((*rs)[0], sum, 1e-5f);
    auto rm = run_op("ReduceMax", {x}, {{"axes", attr_ints(axes)}}, 1, 13);
    ASSERT_TRUE(rm.ok());
    expect_near((*rm)[0], mx);
  }
}

// Float32 runs with inner extent 1 take the vectorised contiguous path (whole
// runs per task, or 32K-element chunks combined in order when runs are few
// and long): every op it covers, on every runnable ISA, against a double
// reference, at lengths around its 16- and 32-float steps and the chunk size.
TEST(Reduce, LongContiguousRunsMatchDoubleReference) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> dist(0.1f, 2.0f);
  std::vector<CpuIsa> isas{CpuIsa::kGeneric};
  if (detected_cpu_isa() >= CpuIsa::kAvx2) isas.push_back(CpuIsa::kAvx2);
  for (CpuIsa isa : isas) {
    ScopedCpuIsa cap(isa);
    for (int64_t n : {1, 7, 16, 17, 31, 32, 33, 1000, 32768, 70001}) {
      for (int64_t outer : {1, 3}) {
        std::vector<float> v(static_cast<size_t>(outer * n));
        for (auto& e : v) e = dist(rng) * (rng() % 3 == 0 ? -1.f : 1.f);
        Tensor x = Tensor::from_vector<float>({outer, n}, v);
        for (const char* op : {"ReduceSum", "ReduceMean", "ReduceSumSquare", "ReduceL1", "ReduceL2", "ReduceMax",
                               "ReduceMin", "ReduceLogSum"}) {
          const std::string name = op;
          std::vector<float> want;
          for (int64_t o = 0; o < outer; ++o) {
            double sum = 0, sq = 0, l1 = 0, mx = -1e300, mn = 1e300;
            for (int64_t i = 0; i < n; ++i) {
              const double e = v[static_cast<size_t>(o * n + i)];
              sum += e, sq += e * e, l1 += std::fabs(e), mx = std::max(mx, e), mn = std::min(mn, e);
            }
            double r = name == "ReduceSum" ? sum : name == "ReduceMean" ? sum / static_cast<double>(n)
                     : name == "ReduceSumSquare" ? sq : name == "ReduceL1" ? l1 : name == "ReduceL2" ? std::sqrt(sq)
                     : name == "ReduceMax" ? mx : name == "ReduceMin" ? mn : std::log(l1);
            want.push_back(static_cast<float>(r));
          }
          // LogSum of the absolute values (log of a negative sum is NaN).
          Tensor in = name == "ReduceLogSum" ? Tensor::from_vector<float>({outer, n}, [&] {
            std::vector<float> a(v);
            for (auto& e : a) e = std::fabs(e);
            return a;
          }())
                                             : x;
          auto r = run_op(op, {in}, {{"axes", attr_ints({1})}, {"keepdims", attr_int(0)}}, 1, 11);  // axes attribute
          ASSERT_TRUE(r.ok()) << r.status().to_string();
          SCOPED_TRACE(name + " n=" + std::to_string(n) + " outer=" + std::to_string(outer) + " isa=" +
                       cpu_isa_name(isa));
          expect_near((*r)[0], want, 1e-6f);
        }
      }
    }
  }
}

TEST(Reduce, LongRunsMaxMinPropagateNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<CpuIsa> isas{CpuIsa::kGeneric};
  if (detected_cpu_isa() >= CpuIsa::kAvx2) isas.push_back(CpuIsa::kAvx2);
  for (CpuIsa isa : isas) {
    ScopedCpuIsa cap(isa);
    for (int64_t at : {0, 517, 998, 50000}) {  // first vector, the body, the tail, a later chunk
      std::vector<float> v(70000, 1.5f);
      v[static_cast<size_t>(at)] = nan;
      Tensor x = Tensor::from_vector<float>({70000}, v);
      for (const char* op : {"ReduceMax", "ReduceMin", "ReduceSum"}) {
        auto r = run_op(op, {x}, {{"keepdims", attr_int(0)}}, 1, 13);
        ASSERT_TRUE(r.ok());
        EXPECT_TRUE(std::isnan((*r)[0].data<float>()[0])) << op << " NaN at " << at << " " << cpu_isa_name(isa);
      }
    }
  }
}

TEST(ArgMax, KeepdimsAndLastIndex) {
  Tensor x = Tensor::from_vector<float>({2, 3}, {1, 5, 5, 7, 2, 7});
  auto r = run_op("ArgMax", {x}, {{"axis", attr_int(1)}}, 1, 13);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].shape(), (Shape{2, 1}));
  EXPECT_EQ((*r)[0].data<int64_t>()[0], 1);
  EXPECT_EQ((*r)[0].data<int64_t>()[1], 0);
  auto l = run_op("ArgMax", {x}, {{"axis", attr_int(-1)}, {"keepdims", attr_int(0)}, {"select_last_index", attr_int(1)}}, 1, 13);
  ASSERT_TRUE(l.ok());
  EXPECT_EQ((*l)[0].shape(), (Shape{2}));
  EXPECT_EQ((*l)[0].data<int64_t>()[0], 2);
  EXPECT_EQ((*l)[0].data<int64_t>()[1], 2);
  auto mn = run_op("ArgMin", {x}, {{"axis", attr_int(0)}, {"keepdims", attr_int(0)}}, 1, 13);
  ASSERT_TRUE(mn.ok());
  EXPECT_EQ((*mn)[0].data<int64_t>()[0], 0);
  EXPECT_EQ((*mn)[0].data<int64_t>()[1], 1);
  EXPECT_EQ((*mn)[0].data<int64_t>()[2], 0);
  EXPECT_FALSE(run_op("ArgMax", {x}, {{"axis", attr_int(2)}}, 1, 13).ok());
}

}  // namespace
}  // namespace dlrt::cpu::testing
