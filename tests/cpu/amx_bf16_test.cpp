// Precision bf16 on AMX tiles (gemm_amx.h): the tile model's TDPBF16PS
// (amx_tiles.h) against the SDM's pseudo-code, the derived tolerance against
// other summation orders, the scalar and AVX-512 conversions bit for bit, the
// one-pass tile GEMM on the model (both sides: weights packed as B or as A)
// against a scalar bf16 reference, bf16x3 on the model, and a Conv graph
// under precision bf16 on the model tiles. The real tiles are compared with
// the model where the CPU and OS have them (a skip says why elsewhere).
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "backends/cpu/kernels/amx_tiles.h"
#include "backends/cpu/kernels/gemm.h"
#include "backends/cpu/kernels/gemm_amx.h"
#include "backends/cpu/kernels/gemm_amx_convert.h"
#include "backends/cpu/kernels/gemm_bf16.h"
#include "backends/cpu/kernels/isa.h"
#include "backends/cpu/ops/conv_impl.h"
#include "core/thread_pool.h"
#include "dlrt/session.h"
#include "gemm_amx_cases.h"
#include "kernel_test_util.h"

namespace dlrt::cpu {
namespace {

float rb(float x) { return bf16_widen(bf16_round(x)); }
float bits(uint32_t u) { return std::bit_cast<float>(u); }
uint16_t h(float x) { return static_cast<uint16_t>(std::bit_cast<uint32_t>(x) >> 16); }  // x is a bf16 value

// ---- The model's TDPBF16PS ----

// A 1 x 1 tile product of one pair: C[0][0] after TDPBF16PS from c, A's pair
// (a0, a1) and B's pair (b0, b1), on a 1-row, 4-byte configuration.
float one_pair(float c, float a0, float a1, float b0, float b1) {
  amx::TileConfig cfg;
  for (int t = 0; t < 3; ++t) cfg.rows[t] = 1, cfg.colsb[t] = 4;
  amx::TileModel m;
  m.configure(cfg);
  const uint16_t a[2] = {h(a0), h(a1)}, b[2] = {h(b0), h(b1)};
  m.load(0, &c, 4);
  m.load(1, a, 4);
  m.load(2, b, 4);
  m.dpbf16ps(0, 1, 2);
  float out = 0;
  m.store(0, &out, 4);
  return out;
}

// The SDM's order, not the intrinsics guide's: the pair's two products are
// summed first (each into its own zeroed partial sum), then added to C.
TEST(AmxTileModel, Bf16PairSummedBeforeC) {
  const float tiny = std::ldexp(1.0f, -24);  // half an ulp of 1
  // SDM: 1 + (2^-24 + 2^-24) = 1 + 2^-23. Guide: (1 + 2^-24) + 2^-24 = 1 (ties to even, twice).
  EXPECT_EQ(one_pair(1.0f, tiny, tiny, 1.0f, 1.0f), 1.0f + std::ldexp(1.0f, -23));
  // Products are exact (8-bit significands): 1.5 * 1.5 = 2.25.
  EXPECT_EQ(one_pair(0.0f, 1.5f, 0.0f, 1.5f, 0.0f), 2.25f);
  // A denormal bf16 input counts as zero; so does a denormal C.
  EXPECT_EQ(one_pair(1.0f, bits(0x00010000u), 0.0f, bits(0x7f000000u), 0.0f), 1.0f);
  EXPECT_EQ(std::bit_cast<uint32_t>(one_pair(bits(0x00000005u), 0.0f, 0.0f, 0.0f, 0.0f)), 0u);
  // A denormal product, and a denormal sum, are flushed to zero:
  // -2^-63 * 2^-64 = -2^-127, and 1.5 * 2^-126 - 2^-126 = 2^-127.
  EXPECT_EQ(one_pair(0.0f, -bits(0x20000000u), 0.0f, bits(0x1f800000u), 0.0f), 0.0f);
  EXPECT_EQ(one_pair(bits(0x00c00000u), -bits(0x00800000u), 0.0f, 1.0f, 0.0f), 0.0f);
  EXPECT_TRUE(std::isinf(one_pair(0.0f, 1e38f, 0.0f, 1e38f, 0.0f)));
  EXPECT_TRUE(std::isnan(one_pair(0.0f, std::nanf(""), 0.0f, 1.0f, 0.0f)));
}

// TDPBF16PS by the SDM's pseudo-code, written out here: per row, 2N partial
// sums from 0, an FMA per bf16 product (flushing), then C + (t0 + t1).
std::vector<float> sdm_reference(const std::vector<uint16_t>& a, const std::vector<uint16_t>& b,
                                 const std::vector<float>& c, int M, int N, int K) {
  auto daz = [](float x) { return std::fpclassify(x) == FP_SUBNORMAL ? std::copysign(0.0f, x) : x; };
  std::vector<float> out(c);
  for (int m = 0; m < M; ++m) {
    std::vector<float> t(static_cast<size_t>(2 * N), 0.0f);
    for (int k = 0; k < K; ++k)
      for (int n = 0; n < N; ++n)
        for (int e = 0; e < 2; ++e)
          t[2 * n + e] = daz(std::fma(daz(bf16_widen(a[m * 2 * K + 2 * k + e])),
                                      daz(bf16_widen(b[k * 2 * N + 2 * n + e])), t[2 * n + e]));
    for (int n = 0; n < N; ++n) out[m * N + n] = daz(daz(out[m * N + n]) + daz(t[2 * n] + t[2 * n + 1]));
  }
  return out;
}

// Partial shapes, operands in memory with wide row strides: the model gives
// the pseudo-code's bits, and lies within tdpbf16ps_tolerance of the exact
// sum and of the intrinsics guide's order (each product added to C in turn).
TEST(AmxTileModel, Bf16DotAsDefinedAndWithinToleranceOfOtherOrders) {
  std::mt19937 rng(8);
  std::uniform_real_distribution<float> u(-4, 4);
  const int shapes[][3] = {{16, 16, 16}, {3, 5, 7}, {16, 1, 16}, {1, 16, 1}, {9, 12, 16}};
  for (const auto& [M, K, N] : shapes) {
    SCOPED_TRACE("M " + std::to_string(M) + " K " + std::to_string(K) + " N " + std::to_string(N));
    amx::TileConfig cfg;
    cfg.rows[0] = static_cast<uint8_t>(M), cfg.colsb[0] = static_cast<uint16_t>(4 * N);
    cfg.rows[3] = static_cast<uint8_t>(M), cfg.colsb[3] = static_cast<uint16_t>(4 * K);
    cfg.rows[5] = static_cast<uint8_t>(K), cfg.colsb[5] = static_cast<uint16_t>(4 * N);
    std::vector<uint16_t> a(static_cast<size_t>(M * 2 * K)), b(static_cast<size_t>(K * 2 * N));
    std::vector<float> c(static_cast<size_t>(M * N));
    for (auto& v : a) v = bf16_round(u(rng));
    for (auto& v : b) v = bf16_round(u(rng));
    for (auto& v : c) v = u(rng) * 8;
    const int64_t lda = 4 * K + 6, ldb = 4 * N + 10, ldc = 4 * N + 4;  // bytes
    std::vector<uint8_t> am(static_cast<size_t>(M * lda), 0x77), bm(static_cast<size_t>(K * ldb), 0x77),
        cm(static_cast<size_t>(M * ldc), 0x77);
    for (int m = 0; m < M; ++m) std::memcpy(am.data() + m * lda, a.data() + m * 2 * K, 4 * K);
    for (int k = 0; k < K; ++k) std::memcpy(bm.data() + k * ldb, b.data() + k * 2 * N, 4 * N);
    for (int m = 0; m < M; ++m) std::memcpy(cm.data() + m * ldc, c.data() + m * N, 4 * N);
    amx::TileModel t;
    t.configure(cfg);
    t.load(0, cm.data(), ldc);
    t.load(3, am.data(), lda);
    t.load(5, bm.data(), ldb);
    t.dpbf16ps(0, 3, 5);
    std::vector<uint8_t> out(static_cast<size_t>(M * ldc), 0xEE);
    t.store(0, out.data(), ldc);
    const std::vector<float> want = sdm_reference(a, b, c, M, N, K);
    for (int m = 0; m < M; ++m)
      for (int n = 0; n < N; ++n) {
        float got;
        std::memcpy(&got, out.data() + m * ldc + 4 * n, 4);
        ASSERT_EQ(std::bit_cast<uint32_t>(got), std::bit_cast<uint32_t>(want[m * N + n])) << m << "," << n;
        double exact = c[m * N + n], mag = std::fabs(c[m * N + n]);
        float guide = c[m * N + n];
        for (int k = 0; k < K; ++k)
          for (int e = 0; e < 2; ++e) {
            const float x = bf16_widen(a[m * 2 * K + 2 * k + e]), y = bf16_widen(b[k * 2 * N + 2 * n + e]);
            exact += double(x) * y;
            mag += std::fabs(double(x) * y);
            guide = std::fma(x, y, guide);
          }
        const double tol = amx::tdpbf16ps_tolerance(K, mag);
        EXPECT_LE(std::fabs(got - exact), tol / 2) << m << "," << n;
        EXPECT_LE(std::fabs(double(got) - guide), tol) << m << "," << n;
      }
    for (int m = 0; m < M; ++m)
      for (int64_t j = 4 * N; j < ldc; ++j) ASSERT_EQ(out[m * ldc + j], 0xEE) << "stored past colsb";
  }
}

// ---- The conversions ----

// The AVX-512 conversions give the scalar ones' bits, for both precisions,
// on blocks with tails and on the values the rounding treats specially.
TEST(AmxBf16, ConversionsSameBitsInBothForms) {
#if !defined(__x86_64__)
  GTEST_SKIP() << "the AVX-512 conversions are x86 code: only the scalar ones are built here";
#endif
  if (!bf16_dot_available())
    GTEST_SKIP() << "no AVX512-BF16 here (or DLRT_CPU_ISA below avx512): only the scalar conversions run";
  const amx_float::Convert s = amx_float::convert_scalar(), v = amx_float::convert_best();
  ASSERT_NE(s.a_block, v.a_block);
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-3, 3);
  const float specials[] = {0.0f, -0.0f, bits(0x00000003u), bits(0x80400000u), std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(), std::nanf(""), bits(0x7f7fffffu),
                            bits(0x3f808000u), bits(0x3f818000u), 1e-40f, 65504.0f};
  const int64_t K = 70, KS = 3, ld = 75;
  std::vector<float> src(static_cast<size_t>(80 * ld));
  for (size_t i = 0; i < src.size(); ++i) src[i] = (i % 7 == 0) ? specials[(i / 7) % 12] : u(rng);
  // Tiles are 64-byte aligned (the kernels' scratch and packings are).
  auto aligned = [](std::vector<uint16_t>& buf, size_t n) {
    buf.assign(n + 32, 1);
    return reinterpret_cast<uint16_t*>((reinterpret_cast<uintptr_t>(buf.data()) + 63) & ~uintptr_t{63});
  };
  std::vector<uint16_t> bx, by;
  for (bool lo : {false, true}) {
    for (int64_t rows : {16, 5}) {
      const size_t n = static_cast<size_t>(KS * amx_float::a_set(lo));
      uint16_t *x = aligned(bx, n), *y = aligned(by, n);
      std::vector<float> row(K);
      s.a_block(src.data(), ld, false, 3, rows, K, KS, x, row.data(), amx_float::a_set(lo), lo);
      v.a_block(src.data(), ld, false, 3, rows, K, KS, y, row.data(), amx_float::a_set(lo), lo);
      EXPECT_EQ(std::vector<uint16_t>(x, x + n), std::vector<uint16_t>(y, y + n))
          << "A block, rows " << rows << (lo ? " bf16x3" : " bf16");
    }
    for (int64_t cols : {32, 19}) {
      const size_t n = static_cast<size_t>(KS * amx_float::b_set(lo));
      uint16_t *x = aligned(bx, n), *y = aligned(by, n);
      s.b_block(src.data() + 2, ld, K, KS, cols, x, lo);
      v.b_block(src.data() + 2, ld, K, KS, cols, y, lo);
      EXPECT_EQ(std::vector<uint16_t>(x, x + n), std::vector<uint16_t>(y, y + n))
          << "B block, cols " << cols << (lo ? " bf16x3" : " bf16");
    }
  }
}

// ---- The tile GEMM on the model ----

using testing::random_floats;

using amx_cases::Case;
using amx_cases::check_packed_a;
using amx_cases::check_packed_b;

// Rows around the 16-row blocks and 32-row pairs, columns around the
// 32-column blocks, K around the 32-deep step (the K tail) and, on the
// Conv side, past one pass over converted B (36 steps); 1-3 threads.
TEST(AmxBf16, ModelPackedBMatchesBf16Reference) {
  ScopedAmxTileModel model;
  ASSERT_EQ(amx_engine(), AmxEngine::kModel);
  std::mt19937 rng(31);
  std::vector<Case> cases;
  for (int64_t M : {2, 15, 17, 33})
    for (int64_t N : {1, 31, 33})
      for (int64_t K : {1, 31, 33, 70}) cases.push_back({M, N, K, false, false, 1.0f, 0.0f, 1});
  cases.push_back({70, 65, 100, true, false, 0.5f, 1.0f, 2});
  cases.push_back({37, 40, 90, false, true, 2.0f, -0.5f, 3});
  cases.push_back({100, 96, 64, false, false, 1.0f, 0.0f, 2});
  for (const Case& cs : cases) {
    check_packed_b(GemmPrecision::kBf16, cs, rng);
    if (HasFatalFailure()) return;
  }
}

TEST(AmxBf16, ModelPackedAMatchesBf16Reference) {
  ScopedAmxTileModel model;
  std::mt19937 rng(32);
  std::vector<Case> cases;
  for (int64_t M : {1, 16, 17, 33})
    for (int64_t N : {1, 31, 33})
      for (int64_t K : {1, 33, 100}) cases.push_back({M, N, K, false, false, 1.0f, 0.0f, 1});
  cases.push_back({33, 40, 1200, false, false, 1.0f, 0.0f, 2});  // two passes over converted B
  cases.push_back({70, 100, 90, false, false, 0.5f, 1.0f, 3});
  cases.push_back({20, 200, 50, false, false, -1.0f, 0.25f, 2});  // split over columns
  for (size_t i = 0; i < cases.size(); ++i) {
    check_packed_a(GemmPrecision::kBf16, cases[i], i % 2 == 1, rng);
    if (HasFatalFailure()) return;
  }
}

// bf16x3's three products per step run the same drivers on the model.
TEST(AmxBf16, ModelRunsBf16x3Too) {
  ScopedAmxTileModel model;
  std::mt19937 rng(33);
  for (const Case& cs : {Case{17, 33, 70, false, false, 1.0f, 0.0f, 1}, Case{40, 70, 45, true, true, 0.5f, 1.0f, 2}}) {
    check_packed_b(GemmPrecision::kBf16x3, cs, rng);
    if (HasFatalFailure()) return;
  }
  check_packed_a(GemmPrecision::kBf16x3, Case{33, 50, 1200, false, false, 1.0f, 0.0f, 2}, true, rng);
}

// Where the real tiles run: the same GEMMs on them and on the model agree
// within the tolerance (not bit for bit: the hardware's order of sums is
// not documented).
TEST(AmxBf16, RealTilesAgreeWithModel) {
  if (const char* why = amx_tiles_unavailable())
    GTEST_SKIP() << "the real AMX tiles do not run here: " << why << " (the model runs in the tests above)";
  std::mt19937 rng(34);
  const int64_t M = 70, N = 50, K = 300;
  const auto a = random_floats(M * K, rng), b = random_floats(K * N, rng);
  auto run = [&](bool on_model, bool packed_a) {
    std::vector<float> c(M * N);
    std::optional<ScopedAmxTileModel> scope;
    if (on_model) scope.emplace();
    if (packed_a) {
      auto pa = PackedMatrix::pack_a(false, M, K, a.data(), K, GemmPrecision::kBf16);
      EXPECT_TRUE(sgemm_ex(M, N, K, 1.0f, SgemmOperand{nullptr, 0, false, pa.get(), nullptr},
                           SgemmOperand{b.data(), N, false, nullptr, nullptr}, 0.0f, c.data(), N, nullptr, nullptr)
                      .ok());
    } else {
      auto pb = PackedMatrix::pack_b(false, K, N, b.data(), N, GemmPrecision::kBf16);
      EXPECT_TRUE(sgemm_ex(M, N, K, 1.0f, SgemmOperand{a.data(), K, false, nullptr, nullptr},
                           SgemmOperand{nullptr, 0, false, pb.get(), nullptr}, 0.0f, c.data(), N, nullptr, nullptr)
                      .ok());
    }
    return c;
  };
  for (bool packed_a : {false, true}) {
    const auto got = run(false, packed_a), want = run(true, packed_a);
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        double mag = 0;
        for (int64_t p = 0; p < K; ++p) mag += std::fabs(double(rb(a[i * K + p])) * rb(b[p * N + j]));
        // Zero-padded to whole steps: the padding's products add exact zeros.
        const int pairs = static_cast<int>((K + 31) / 32 * 16);
        ASSERT_LE(std::fabs(double(got[i * N + j]) - want[i * N + j]), amx::tdpbf16ps_tolerance(pairs, mag))
            << (packed_a ? "packed A" : "packed B") << " (" << i << "," << j << ")";
      }
  }
}

// ---- A Conv graph under precision bf16 on the model tiles ----

void add_io(onnx::ValueInfoProto* vi, const std::string& name, std::vector<int64_t> dims) {
  vi->set_name(name);
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
}

void add_weight(onnx::GraphProto* g, const std::string& name, std::vector<int64_t> dims, std::mt19937& rng) {
  auto* w = g->add_initializer();
  w->set_name(name);
  w->set_data_type(onnx::TensorProto::FLOAT);
  int64_t n = 1;
  for (int64_t d : dims) w->add_dims(d), n *= d;
  std::uniform_real_distribution<float> u(-0.3f, 0.3f);
  for (int64_t i = 0; i < n; ++i) w->add_float_data(u(rng));
}

onnx::NodeProto* add_conv(onnx::GraphProto* g, const std::string& x, const std::string& w, const std::string& b,
                          const std::string& y, int64_t k, int64_t stride, int64_t group) {
  auto* n = g->add_node();
  n->set_op_type("Conv");
  n->set_name("conv_" + y);
  n->add_input(x), n->add_input(w), n->add_input(b), n->add_output(y);
  auto ints = [&](const char* name, std::vector<int64_t> v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t val : v) a->add_ints(val);
  };
  ints("kernel_shape", {k, k});
  ints("strides", {stride, stride});
  ints("pads", {k / 2, k / 2, k / 2, k / 2});
  auto* a = n->add_attribute();
  a->set_name("group");
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(group);
  return n;
}

// x [1, 16, 20, 20] -> 3x3 conv (16 -> 32) -> Relu -> 3x3 stride-2 conv (->
// 48) -> 1x1 conv (-> 40) -> 3x3 conv (40 -> 40) -> grouped 3x3 conv (2
// groups) -> y [1, 40, 10, 10]. In f32 the blocked-layout pass takes the
// first four convs (ConvBlocked).
onnx::ModelProto conv_model() {
  std::mt19937 rng(9);
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name("convs");
  add_io(g->add_input(), "x", {1, 16, 20, 20});
  add_io(g->add_output(), "y", {1, 40, 10, 10});
  add_weight(g, "w1", {32, 16, 3, 3}, rng), add_weight(g, "b1", {32}, rng);
  add_weight(g, "w2", {48, 32, 3, 3}, rng), add_weight(g, "b2", {48}, rng);
  add_weight(g, "w3", {40, 48, 1, 1}, rng), add_weight(g, "b3", {40}, rng);
  add_weight(g, "w4", {40, 40, 3, 3}, rng), add_weight(g, "b4", {40}, rng);
  add_weight(g, "w5", {40, 20, 3, 3}, rng), add_weight(g, "b5", {40}, rng);
  add_conv(g, "x", "w1", "b1", "c1", 3, 1, 1);
  auto* relu = g->add_node();
  relu->set_op_type("Relu"), relu->set_name("relu"), relu->add_input("c1"), relu->add_output("r1");
  add_conv(g, "r1", "w2", "b2", "c2", 3, 2, 1);
  add_conv(g, "c2", "w3", "b3", "c3", 1, 1, 1);
  add_conv(g, "c3", "w4", "b4", "c4", 3, 1, 1);
  add_conv(g, "c4", "w5", "b5", "y", 3, 1, 2);
  return m;
}

// Every Conv runs on the model's tiles under precision bf16 (the report says
// "bf16 (amx-model)"), within bf16's error of f32 but not f32's bits.
TEST(AmxBf16, ConvGraphOnModelTiles) {
  const std::string bytes = conv_model().SerializeAsString();
  std::vector<float> xv(16 * 20 * 20);
  std::mt19937 rng(10);
  std::uniform_real_distribution<float> u(-1, 1);
  for (auto& v : xv) v = u(rng);
  const Tensor x = Tensor::from_vector<float>({1, 16, 20, 20}, xv);
  SessionOptions opts;
  opts.threads = 2;
  auto f32 = Session::create_from_bytes(bytes, opts);
  ASSERT_TRUE(f32.ok()) << f32.status().to_string();
  auto want = (*f32)->run({{"x", x}});
  ASSERT_TRUE(want.ok()) << want.status().to_string();

  opts.cpu_precision = "bf16";
  if (amx_tiles_unavailable()) {
    // Without tiles Conv stays f32 under bf16 (VDPBF16PS is slower than FMAs).
    auto no_tiles = Session::create_from_bytes(bytes, opts);
    ASSERT_TRUE(no_tiles.ok()) << no_tiles.status().to_string();
    const uint64_t before = conv_amx_runs();
    auto ran = (*no_tiles)->run({{"x", x}});
    ASSERT_TRUE(ran.ok()) << ran.status().to_string();
    EXPECT_EQ(conv_amx_runs(), before);
    const float* w = (*want)[0].data<float>();
    const float* r = (*ran)[0].data<float>();
    for (int64_t i = 0; i < (*want)[0].size(); ++i) ASSERT_EQ(r[i], w[i]) << "element " << i;
  }
  ScopedAmxTileModel model;
  auto s = Session::create_from_bytes(bytes, opts);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  const uint64_t runs_before = conv_amx_runs();
  RunReport report;
  auto got = (*s)->run({{"x", x}}, &report);
  ASSERT_TRUE(got.ok()) << got.status().to_string();
  ASSERT_EQ(report.partitions.size(), 1u);
  EXPECT_EQ(report.partitions[0].precision, "bf16 (amx-model)");
  EXPECT_EQ(conv_amx_runs() - runs_before, 5u) << "every Conv on the tiles (none blocked, the 3x3 stride-1 ones too)";
  const float* w = (*want)[0].data<float>();
  const float* gv = (*got)[0].data<float>();
  const int64_t n = (*want)[0].size();
  double max_abs = 0, max_err = 0;
  for (int64_t i = 0; i < n; ++i) {
    max_abs = std::max(max_abs, double(std::fabs(w[i])));
    max_err = std::max(max_err, double(std::fabs(gv[i] - w[i])));
  }
  // Five layers of products of 8-bit operands: about 2^-8 of the largest output at most.
  EXPECT_LT(max_err, 1e-2 * max_abs);
  EXPECT_GT(max_err, 1e-6 * max_abs) << "bf16 as close as f32: did it run at all?";
}

}  // namespace
}  // namespace dlrt::cpu
