// RNN, GRU and LSTM with hidden sizes over several chunks of units
// (ops/rnn_loop.h) against a plain double-precision reference, on 1 to 5
// threads: the step split over threads, the two directions on two threads,
// one thread, and a batch past the few-rows kernel must all agree. Without
// an override these layers' R fit a core's L2 (one chunk; but
// LstmRLargerThanL2); the ctest entry rnn.split_steps_small_l2 runs them with
// DLRT_CACHE_SIZES=l2:64K, so every one is in chunks (64 to 256 units) and takes
// the split path (at 2+ threads; 3+ for two directions).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <random>

#include "device/cpu_caches.h"
#include "kernel_test_util.h"

namespace dlrt::cpu {
namespace {

using testing::attr_int;
using testing::attr_string;

struct Case {
  std::string op;  // RNN, GRU, LSTM
  int64_t S, B, I, H, D;
  bool lbr = false;         // GRU linear_before_reset
  bool lens = false;        // sequence_lens with shorter rows
  bool states = false;      // initial_h / initial_c
  bool peep = false;        // LSTM peepholes
};

std::vector<float> randv(size_t n, float scale, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(-scale, scale);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

double sigm(double x) { return 1 / (1 + std::exp(-x)); }

// The ONNX equations, one row and one step at a time, in double.
// Returns Y [S, D, B, H], Y_h and Y_c [D, B, H].
std::vector<std::vector<double>> reference(const Case& c, int64_t G, const std::vector<float>& X,
                                           const std::vector<float>& W, const std::vector<float>& R,
                                           const std::vector<float>& Bv, const std::vector<int32_t>& lens,
                                           const std::vector<float>& h0, const std::vector<float>& c0,
                                           const std::vector<float>& P) {
  const int64_t S = c.S, B = c.B, I = c.I, H = c.H, D = c.D, GH = G * H;
  std::vector<double> Y(S * D * B * H, 0.0), Yh(D * B * H), Yc(D * B * H);
  for (int64_t d = 0; d < D; ++d)
    for (int64_t b = 0; b < B; ++b) {
      std::vector<double> h(H), cs(H), g(GH), hr(H);
      for (int64_t j = 0; j < H; ++j) {
        h[j] = h0.empty() ? 0 : h0[(d * B + b) * H + j];
        cs[j] = c0.empty() ? 0 : c0[(d * B + b) * H + j];
      }
      for (int64_t s = 0; s < lens[b]; ++s) {
        const int64_t t = d == 1 ? lens[b] - 1 - s : s;
        const float* x = &X[(t * B + b) * I];
        auto wx = [&](int64_t row) {
          double v = Bv[d * 2 * GH + row];
          for (int64_t i = 0; i < I; ++i) v += double(W[(d * GH + row) * I + i]) * x[i];
          return v;
        };
        auto rh = [&](int64_t row, const std::vector<double>& hv) {
          double v = 0;
          for (int64_t k = 0; k < H; ++k) v += double(R[(d * GH + row) * H + k]) * hv[k];
          return v;
        };
        const double* rb = nullptr;
        std::vector<double> rbias(GH);
        for (int64_t k = 0; k < GH; ++k) rbias[k] = Bv[d * 2 * GH + GH + k];
        rb = rbias.data();
        std::vector<double> hn(H);
        if (c.op == "RNN") {
          for (int64_t j = 0; j < H; ++j) hn[j] = std::tanh(wx(j) + rh(j, h) + rb[j]);
        } else if (c.op == "GRU") {
          std::vector<double> z(H), r(H);
          for (int64_t j = 0; j < H; ++j) {
            z[j] = sigm(wx(j) + rh(j, h) + rb[j]);
            r[j] = sigm(wx(H + j) + rh(H + j, h) + rb[H + j]);
          }
          std::vector<double> rhv(H);
          for (int64_t j = 0; j < H; ++j) rhv[j] = r[j] * h[j];
          for (int64_t j = 0; j < H; ++j) {
            const double cand = c.lbr ? std::tanh(wx(2 * H + j) + r[j] * (rh(2 * H + j, h) + rb[2 * H + j]))
                                      : std::tanh(wx(2 * H + j) + rh(2 * H + j, rhv) + rb[2 * H + j]);
            hn[j] = (1 - z[j]) * cand + z[j] * h[j];
          }
        } else {
          for (int64_t j = 0; j < H; ++j) {
            auto pre = [&](int64_t gi) { return wx(gi * H + j) + rh(gi * H + j, h) + rb[gi * H + j]; };
            const double pi = P.empty() ? 0 : P[d * 3 * H + j], po = P.empty() ? 0 : P[d * 3 * H + H + j],
                         pf = P.empty() ? 0 : P[d * 3 * H + 2 * H + j];
            const double ig = sigm(pre(0) + pi * cs[j]), fg = sigm(pre(2) + pf * cs[j]), cg = std::tanh(pre(3));
            const double cn = fg * cs[j] + ig * cg;
            const double og = sigm(pre(1) + po * cn);
            hn[j] = og * std::tanh(cn);
            g[j] = cn;
          }
          for (int64_t j = 0; j < H; ++j) cs[j] = g[j];
        }
        h = hn;
        for (int64_t j = 0; j < H; ++j) Y[((t * D + d) * B + b) * H + j] = h[j];
      }
      for (int64_t j = 0; j < H; ++j) {
        Yh[(d * B + b) * H + j] = h[j];
        Yc[(d * B + b) * H + j] = cs[j];
      }
    }
  return {Y, Yh, Yc};
}

std::vector<std::vector<float>> run_kernel(const Case& c, const std::vector<Tensor>& inputs, ThreadPool& pool) {
  ir::Node node;
  node.name = "rnn";
  node.op_type = c.op;
  node.opset = 14;
  node.attributes = {{"hidden_size", attr_int(c.H)},
                     {"direction", attr_string(c.D == 2 ? "bidirectional" : "forward")}};
  if (c.lbr) node.attributes["linear_before_reset"] = attr_int(1);
  const int nout = c.op == "LSTM" ? 3 : 2;
  for (size_t i = 0; i < inputs.size(); ++i)
    node.inputs.push_back(inputs[i].valid() ? static_cast<ir::ValueId>(i) : ir::kNoValue);
  for (int i = 0; i < nout; ++i) node.outputs.push_back(static_cast<ir::ValueId>(100 + i));
  const KernelDef* def = builtin_kernels().find(c.op, "", 14);
  EXPECT_NE(def, nullptr);
  if (!def) return {};
  auto kernel = def->factory(node);
  EXPECT_TRUE(kernel.ok());
  if (!kernel.ok()) return {};
  std::vector<RunValue> values;
  for (const auto& t : inputs) values.push_back(t.valid() ? RunValue::of(t) : RunValue{});
  std::vector<const RunValue*> ptrs;
  for (auto& v : values) ptrs.push_back(v.kind == RunValue::Kind::kNone ? nullptr : &v);
  std::vector<RunValue> outs(static_cast<size_t>(nout));
  KernelContext ctx(node, ptrs, outs, pool, nullptr);
  Status s = (*kernel)->compute(ctx);
  EXPECT_TRUE(s.ok()) << s.to_string();
  std::vector<std::vector<float>> r;
  for (auto& o : outs) {
    if (!o.tensor.valid()) return {};
    r.emplace_back(o.tensor.data<float>(), o.tensor.data<float>() + o.tensor.size());
  }
  return r;
}

void check_case(const Case& c) {
  SCOPED_TRACE(c.op + " S" + std::to_string(c.S) + " B" + std::to_string(c.B) + " H" + std::to_string(c.H) + " D" +
               std::to_string(c.D));
  const int64_t G = c.op == "RNN" ? 1 : c.op == "GRU" ? 3 : 4, GH = G * c.H;
  std::mt19937 rng(static_cast<unsigned>(c.H * 131 + c.B * 7 + c.D + G));
  const float ws = 1.0f / std::sqrt(static_cast<float>(c.H));
  const auto X = randv(c.S * c.B * c.I, 1.0f, rng), W = randv(c.D * GH * c.I, 0.5f, rng),
             R = randv(c.D * GH * c.H, ws, rng), Bv = randv(c.D * 2 * GH, 0.3f, rng);
  std::vector<int32_t> lens(c.B, static_cast<int32_t>(c.S));
  if (c.lens)
    for (int64_t b = 0; b < c.B; ++b) lens[b] = static_cast<int32_t>((c.S * (b + 1)) % (c.S + 1));
  std::vector<float> h0, c0, P;
  if (c.states) {
    h0 = randv(c.D * c.B * c.H, 0.5f, rng);
    c0 = randv(c.D * c.B * c.H, 0.5f, rng);
  }
  if (c.peep) P = randv(c.D * 3 * c.H, 0.3f, rng);
  std::vector<Tensor> in = {Tensor::from_vector<float>({c.S, c.B, c.I}, X),
                            Tensor::from_vector<float>({c.D, GH, c.I}, W),
                            Tensor::from_vector<float>({c.D, GH, c.H}, R),
                            Tensor::from_vector<float>({c.D, 2 * GH}, Bv),
                            c.lens ? Tensor::from_vector<int32_t>({c.B}, lens) : Tensor(),
                            c.states ? Tensor::from_vector<float>({c.D, c.B, c.H}, h0) : Tensor()};
  if (c.op == "LSTM") {
    in.push_back(c.states ? Tensor::from_vector<float>({c.D, c.B, c.H}, c0) : Tensor());
    in.push_back(c.peep ? Tensor::from_vector<float>({c.D, 3 * c.H}, P) : Tensor());
  }
  if (std::getenv("DLRT_TEST_EXPECT_SPLIT_STEPS")) {  // rnn.split_steps_small_l2: the split path is taken
    EXPECT_LT(device::cpu_caches().l2, c.D * GH * c.H * 4);
  }
  const auto want = reference(c, G, X, W, R, Bv, lens, h0, c0, P);
  std::vector<std::vector<float>> one;
  for (int threads = 1; threads <= 5; ++threads) {
    SCOPED_TRACE("threads " + std::to_string(threads));
    ThreadPool pool(threads);
    for (int rep = 0; rep < 2; ++rep) {  // the second run reuses the thread's buffers
      const auto got = run_kernel(c, in, pool);
      ASSERT_EQ(got.size(), c.op == "LSTM" ? 3u : 2u);
      for (size_t o = 0; o < got.size(); ++o) {
        ASSERT_EQ(got[o].size(), want[o].size()) << "output " << o;
        for (size_t i = 0; i < got[o].size(); ++i)
          ASSERT_NEAR(got[o][i], want[o][i], 2e-5 + 2e-5 * std::abs(want[o][i])) << "output " << o << " at " << i;
      }
      if (one.empty()) one = got;
      for (size_t o = 0; o < got.size(); ++o)
        for (size_t i = 0; i < got[o].size(); ++i)
          ASSERT_NEAR(got[o][i], one[o][i], 1e-6 + 1e-6 * std::abs(one[o][i])) << "vs 1 thread, output " << o;
    }
  }
}

TEST(RnnThreads, LstmBidirectionalPanelsStatesPeepholesLens) {
  check_case({"LSTM", 5, 3, 7, 130, 2, false, true, true, true});
}
TEST(RnnThreads, LstmForwardBatchPastFewRows) { check_case({"LSTM", 4, 11, 5, 150, 1, false, true, true, false}); }
TEST(RnnThreads, LstmRLargerThanL2) {
  // 4 x 600 x 600 floats: 5.5 MiB per direction, past a core's L2.
  check_case({"LSTM", 3, 1, 4, 600, 1, false, false, true, false});
}
TEST(RnnThreads, GruBothResetForms) {
  check_case({"GRU", 5, 2, 6, 200, 2, false, true, true});
  check_case({"GRU", 5, 2, 6, 200, 2, true, true, true});
  check_case({"GRU", 4, 9, 3, 129, 1, false, false, false});
}
TEST(RnnThreads, RnnPanels) { check_case({"RNN", 6, 2, 5, 257, 2, false, true, true}); }

// Hidden size 0: empty outputs, no chunk of zero width to divide by.
TEST(RnnThreads, ZeroHiddenSize) {
  for (int threads : {1, 2}) {
    auto r = testing::run_op("LSTM",
                             {Tensor::from_vector<float>({2, 1, 3}, {1, 2, 3, 4, 5, 6}),
                              Tensor::from_vector<float>({1, 0, 3}, {}), Tensor::from_vector<float>({1, 0, 0}, {})},
                             {}, 2, 14, "", threads);
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    EXPECT_EQ((*r)[0].shape(), (Shape{2, 1, 1, 0}));
    EXPECT_EQ((*r)[1].shape(), (Shape{1, 1, 0}));
  }
}

}  // namespace
}  // namespace dlrt::cpu
