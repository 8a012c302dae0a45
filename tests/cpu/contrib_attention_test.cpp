// com.microsoft FusedMatMul, RotaryEmbedding, MultiHeadAttention and
// GroupQueryAttention: small checks against hand-computed values, and the
// errors on invalid inputs (their numerics against ONNX Runtime are in the
// quantized zoo, tests/models/contrib_op_models.py).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "core/memory_limit.h"
#include "kernel_test_util.h"

namespace dlrt::cpu::testing {
namespace {

constexpr const char* kMs = "com.microsoft";

Tensor rnd(Shape s, uint32_t seed) {
  auto t = Tensor::allocate(DType::kFloat32, s).value();
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1, 1);
  for (int64_t i = 0; i < t.size(); ++i) t.data<float>()[i] = d(rng);
  return t;
}

template <typename T>
Tensor ints(DType dt, Shape s, std::vector<T> v) {
  auto t = Tensor::allocate(dt, s).value();
  for (size_t i = 0; i < v.size(); ++i) t.data<T>()[i] = v[i];
  return t;
}
Tensor i32(Shape s, std::vector<int32_t> v) { return ints<int32_t>(DType::kInt32, std::move(s), std::move(v)); }
Tensor i64(Shape s, std::vector<int64_t> v) { return ints<int64_t>(DType::kInt64, std::move(s), std::move(v)); }

Result<std::vector<Tensor>> ms(const std::string& op, std::vector<Tensor> in, ir::Attributes a, int outs = 1) {
  return run_op(op, std::move(in), std::move(a), outs, 1, kMs);
}

void expect_error(const Result<std::vector<Tensor>>& r, StatusCode code, const std::string& words) {
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), code) << r.status().to_string();
  EXPECT_NE(r.status().message().find(words), std::string::npos) << r.status().to_string();
}

TEST(MsFusedMatMul, BatchTransposesMatchReference) {
  // A [4, 2, 3] with transBatchA and transA reads as [2, 3, 4]: A'[j][m][k] = A[k][j][m];
  // B [5, 2, 4] with transBatchB and transB reads as [2, 4, 5]: B'[j][k][n] = B[n][j][k].
  auto a = rnd({4, 2, 3}, 1), b = rnd({5, 2, 4}, 2);
  auto r = ms("FusedMatMul", {a, b},
              {{"transA", attr_int(1)},
               {"transBatchA", attr_int(1)},
               {"transB", attr_int(1)},
               {"transBatchB", attr_int(1)},
               {"alpha", attr_float(0.5f)}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  ASSERT_EQ((*r)[0].shape(), (Shape{2, 3, 5}));
  std::vector<float> want(2 * 3 * 5);
  for (int j = 0; j < 2; ++j)
    for (int m = 0; m < 3; ++m)
      for (int n = 0; n < 5; ++n) {
        double acc = 0;
        for (int k = 0; k < 4; ++k)
          acc += double(a.data<float>()[(k * 2 + j) * 3 + m]) * b.data<float>()[(n * 2 + j) * 4 + k];
        want[(j * 3 + m) * 5 + n] = static_cast<float>(0.5 * acc);
      }
  expect_near((*r)[0], want);
}

TEST(MsFusedMatMul, MismatchedInnerDimsAreInvalid) {
  expect_error(ms("FusedMatMul", {rnd({2, 3, 4}, 1), rnd({2, 5, 4}, 2)}, {{"transA", attr_int(1)}}),
               StatusCode::kInvalidArgument, "do not multiply");
  expect_error(ms("FusedMatMul", {rnd({2, 4, 3}, 1), rnd({3, 4, 5}, 2)}, {{"transA", attr_int(1)}}),
               StatusCode::kInvalidArgument, "broadcast");
}

TEST(MsRotaryEmbedding, RotatesHalvesByThePositionsRow) {
  // One head of 4 at position 1: (x0, x1, x2, x3) -> (x0 c0 - x2 s0, x1 c1 - x3 s1, x2 c0 + x0 s0, x3 c1 + x1 s1).
  auto x = rnd({1, 1, 4}, 3), cs = rnd({2, 2}, 4), sn = rnd({2, 2}, 5);
  auto r = ms("RotaryEmbedding", {x, i64({1}, {1}), cs, sn}, {{"num_heads", attr_int(1)}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  const float* X = x.data<float>();
  const float c0 = cs.data<float>()[2], c1 = cs.data<float>()[3], s0 = sn.data<float>()[2], s1 = sn.data<float>()[3];
  expect_near((*r)[0], {X[0] * c0 - X[2] * s0, X[1] * c1 - X[3] * s1, X[2] * c0 + X[0] * s0, X[3] * c1 + X[1] * s1});
}

TEST(MsRotaryEmbedding, InvalidInputsAreRefused) {
  auto cs = rnd({8, 4}, 1), sn = rnd({8, 4}, 2);
  // 24 values do not split into 5 heads.
  expect_error(ms("RotaryEmbedding", {rnd({1, 2, 24}, 3), i64({1}, {0}), cs, sn}, {{"num_heads", attr_int(5)}}),
               StatusCode::kInvalidArgument, "does not split");
  // Head size 8 needs a cache 4 wide; a rotary dim wider than the head.
  expect_error(ms("RotaryEmbedding", {rnd({1, 2, 32}, 3), i64({1}, {0}), cs, sn}, {{"num_heads", attr_int(2)}}),
               StatusCode::kInvalidArgument, "cache width");
  expect_error(ms("RotaryEmbedding", {rnd({1, 2, 16}, 3), i64({1}, {0}), cs, sn},
                  {{"num_heads", attr_int(2)}, {"rotary_embedding_dim", attr_int(10)}}),
               StatusCode::kInvalidArgument, "rotary dim");
  // Positions 7 and 8 for an 8-row cache.
  expect_error(ms("RotaryEmbedding", {rnd({1, 2, 16}, 3), i64({1}, {7}), cs, sn}, {{"num_heads", attr_int(2)}}),
               StatusCode::kInvalidArgument, "outside the cos/sin cache");
  expect_error(ms("RotaryEmbedding", {rnd({1, 2, 16}, 3), i64({1, 2}, {0, 9}), cs, sn}, {{"num_heads", attr_int(2)}}),
               StatusCode::kInvalidArgument, "outside the cos/sin cache");
  expect_error(
      ms("RotaryEmbedding", {rnd({1, 2, 16}, 3), i64({2, 2}, {0, 1, 2, 3}), cs, sn}, {{"num_heads", attr_int(2)}}),
      StatusCode::kInvalidArgument, "position_ids");
  expect_error(ms("RotaryEmbedding", {rnd({1, 2, 16}, 3), i64({1}, {0}), cs, sn},
                  {{"num_heads", attr_int(2)}, {"is_packed_batching", attr_int(1)}}),
               StatusCode::kUnsupported, "is_packed_batching");
}

TEST(MsRotaryEmbedding, PositionsNearInt64MaxAreOutsideTheCache) {
  // P + span wrapped for P near INT64_MAX and passed the range check: the
  // rows were read far outside the cos/sin cache (garbage, or a crash).
  auto cs = rnd({4, 4}, 1), sn = rnd({4, 4}, 2), x = rnd({1, 2, 16}, 3);
  const int64_t max = std::numeric_limits<int64_t>::max();
  const ir::Attributes two = {{"num_heads", attr_int(2)}};
  expect_error(ms("RotaryEmbedding", {x, i64({1, 2}, {0, max}), cs, sn}, two), StatusCode::kInvalidArgument,
               "outside the cos/sin cache");
  for (int64_t p : {max, max - 1, int64_t{3}})  // offset form: rows p and p + 1
    expect_error(ms("RotaryEmbedding", {x, i64({1}, {p}), cs, sn}, two), StatusCode::kInvalidArgument,
                 "outside the cos/sin cache");
  ASSERT_TRUE(ms("RotaryEmbedding", {x, i64({1}, {2}), cs, sn}, two).ok());  // rows 2 and 3: the last ones
  ASSERT_TRUE(ms("RotaryEmbedding", {x, i64({1, 2}, {3, 0}), cs, sn}, two).ok());
}

TEST(MsMultiHeadAttention, InvalidInputsAreRefused) {
  auto q = rnd({2, 3, 16}, 1), k = rnd({2, 5, 16}, 2), v = rnd({2, 5, 16}, 3);
  const ir::Attributes two = {{"num_heads", attr_int(2)}};
  ASSERT_TRUE(ms("MultiHeadAttention", {q, k, v}, two).ok());
  expect_error(ms("MultiHeadAttention", {q, k, v}, {{"num_heads", attr_int(3)}}), StatusCode::kInvalidArgument,
               "not a multiple of num_heads");
  expect_error(ms("MultiHeadAttention", {rnd({2, 3, 0}, 1), rnd({2, 5, 0}, 2), rnd({2, 5, 0}, 3)}, two),
               StatusCode::kInvalidArgument, "head size is 0");
  expect_error(ms("MultiHeadAttention", {q, rnd({2, 5, 8}, 2), v}, two), StatusCode::kInvalidArgument, "key/value");
  expect_error(ms("MultiHeadAttention", {q, k, rnd({2, 4, 16}, 3)}, two), StatusCode::kInvalidArgument, "key/value");
  expect_error(ms("MultiHeadAttention", {q, k, v, rnd({40}, 4)}, two), StatusCode::kInvalidArgument, "bias");
  expect_error(ms("MultiHeadAttention", {rnd({2, 3, 2, 3, 8}, 1)}, two), StatusCode::kUnsupported, "packed QKV");
  expect_error(ms("MultiHeadAttention", {q, rnd({2, 5, 2, 2, 8}, 2)}, two), StatusCode::kUnsupported, "packed KV");
  // Masks: [B, L] only for the total length; a 4-D mask is not a format of the op.
  expect_error(ms("MultiHeadAttention", {q, k, v, Tensor(), i32({2, 4}, std::vector<int32_t>(8, 1))}, two),
               StatusCode::kUnsupported, "key_padding_mask");
  expect_error(ms("MultiHeadAttention", {q, k, v, Tensor(), Tensor(), rnd({1, 2, 3, 4}, 5)}, two),
               StatusCode::kInvalidArgument, "attention_bias");
  // Past of the wrong head size; past with only one of key/value.
  expect_error(ms("MultiHeadAttention",
                  {q, k, v, Tensor(), Tensor(), Tensor(), rnd({2, 2, 4, 4}, 6), rnd({2, 2, 4, 4}, 7)}, two, 3),
               StatusCode::kInvalidArgument, "past_key");
  expect_error(ms("MultiHeadAttention", {q, k, v, Tensor(), Tensor(), Tensor(), rnd({2, 2, 4, 8}, 6)}, two, 3),
               StatusCode::kInvalidArgument, "together");
}

TEST(MsMultiHeadAttention, PresentIsPastThenNewKeys) {
  auto q = rnd({1, 2, 8}, 1), k = rnd({1, 2, 8}, 2), v = rnd({1, 2, 8}, 3);
  auto pk = rnd({1, 2, 3, 4}, 4), pv = rnd({1, 2, 3, 4}, 5);
  auto r = ms("MultiHeadAttention", {q, k, v, Tensor(), Tensor(), Tensor(), pk, pv}, {{"num_heads", attr_int(2)}}, 3);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  const Tensor& present = (*r)[1];
  ASSERT_EQ(present.shape(), (Shape{1, 2, 5, 4}));
  for (int h = 0; h < 2; ++h)
    for (int t = 0; t < 5; ++t)
      for (int d = 0; d < 4; ++d) {
        const float want = t < 3 ? pk.data<float>()[(h * 3 + t) * 4 + d] : k.data<float>()[(t - 3) * 8 + h * 4 + d];
        EXPECT_EQ(present.data<float>()[(h * 5 + t) * 4 + d], want);
      }
}

TEST(MsGroupQueryAttention, InvalidInputsAreRefused) {
  auto q = rnd({2, 3, 64}, 1), k = rnd({2, 3, 32}, 2), v = rnd({2, 3, 32}, 3);
  const ir::Attributes heads = {{"num_heads", attr_int(4)}, {"kv_num_heads", attr_int(2)}};
  auto run = [&](std::vector<Tensor> in, ir::Attributes a = {}) {
    if (a.empty()) a = heads;
    return ms("GroupQueryAttention", std::move(in), a, 3);
  };
  ASSERT_TRUE(run({q, k, v, Tensor(), Tensor(), i32({2}, {2, 2}), i32({}, {3})}).ok());
  expect_error(run({q, k, v, Tensor(), Tensor(), i32({2}, {2, 2}), i32({}, {3})},
                   {{"num_heads", attr_int(4)}, {"kv_num_heads", attr_int(3)}}),
               StatusCode::kInvalidModel, "multiple of kv_num_heads");
  expect_error(run({q, rnd({2, 3, 48}, 2), v, Tensor(), Tensor(), i32({2}, {2, 2}), i32({}, {3})}),
               StatusCode::kInvalidArgument, "key and value");
  expect_error(run({rnd({2, 3, 0}, 1), rnd({2, 3, 0}, 2), rnd({2, 3, 0}, 3), Tensor(), Tensor(), i32({2}, {2, 2}),
                    i32({}, {3})}),
               StatusCode::kInvalidArgument, "head size is 0");
  // seqlens_k past the total length; int64 seqlens_k; one value for two batch entries.
  expect_error(run({q, k, v, Tensor(), Tensor(), i32({2}, {2, 5}), i32({}, {3})}), StatusCode::kInvalidArgument,
               "seqlens_k[1]");
  expect_error(run({q, k, v, Tensor(), Tensor(), i64({2}, {2, 2}), i32({}, {3})}), StatusCode::kInvalidArgument,
               "int32");
  expect_error(run({q, k, v, Tensor(), Tensor(), i32({1}, {2}), i32({}, {3})}), StatusCode::kInvalidArgument,
               "one value per batch");
  // A continued prompt (3 new tokens after a past) with batch 2.
  expect_error(run({q, k, v, rnd({2, 2, 8, 16}, 4), rnd({2, 2, 8, 16}, 5), i32({2}, {6, 6}), i32({}, {7})}),
               StatusCode::kInvalidArgument, "batch size must be 1");
  // attention_bias not [B or 1, N or 1, S, total]; head_sink not one value per head.
  expect_error(run({q, k, v, Tensor(), Tensor(), i32({2}, {2, 2}), i32({}, {3}), Tensor(), Tensor(), Tensor(),
                    rnd({1, 4, 3, 4}, 8)}),
               StatusCode::kInvalidArgument, "attention_bias");
  expect_error(run({q, k, v, Tensor(), Tensor(), i32({2}, {2, 2}), i32({}, {3}), Tensor(), Tensor(), Tensor(),
                    rnd({1, 3, 3, 3}, 8)}),
               StatusCode::kInvalidArgument, "attention_bias");
  expect_error(run({q, k, v, Tensor(), Tensor(), i32({2}, {2, 2}), i32({}, {3}), Tensor(), Tensor(), Tensor(), Tensor(),
                    rnd({2}, 9)}),
               StatusCode::kInvalidArgument, "head_sink");
  // Past of the wrong KV head count.
  expect_error(run({q, k, v, rnd({2, 4, 8, 16}, 4), rnd({2, 4, 8, 16}, 5), i32({2}, {6, 6}), i32({}, {7})}),
               StatusCode::kInvalidArgument, "past_key");
  // Rotary without caches; a cache too short for the positions.
  ir::Attributes rot = heads;
  rot["do_rotary"] = attr_int(1);
  expect_error(run({q, k, v, Tensor(), Tensor(), i32({2}, {2, 2}), i32({}, {3})}, rot), StatusCode::kInvalidArgument,
               "cos_cache");
  expect_error(run({q, k, v, Tensor(), Tensor(), i32({2}, {2, 2}), i32({}, {3}), rnd({2, 8}, 6), rnd({2, 8}, 7)}, rot),
               StatusCode::kInvalidArgument, "cos/sin cache");
  // position_ids of the wrong shape, or past the cache's rows.
  auto cs = rnd({8, 8}, 6), sn = rnd({8, 8}, 7);
  ASSERT_TRUE(
      run({q, k, v, Tensor(), Tensor(), i32({2}, {2, 2}), i32({}, {3}), cs, sn, i64({2, 3}, {0, 1, 2, 5, 6, 7})}, rot)
          .ok());
  expect_error(
      run({q, k, v, Tensor(), Tensor(), i32({2}, {2, 2}), i32({}, {3}), cs, sn, i64({2, 2}, {0, 1, 2, 3})}, rot),
      StatusCode::kInvalidArgument, "position_ids");
  expect_error(
      run({q, k, v, Tensor(), Tensor(), i32({2}, {2, 2}), i32({}, {3}), cs, sn, i64({2, 3}, {0, 1, 2, 5, 6, 8})}, rot),
      StatusCode::kInvalidArgument, "outside the cos/sin cache");
}

TEST(MsGroupQueryAttention, HeadCountsThatOverflowAreRefusedAtLoad) {
  // num_heads = kv_num_heads = 0x5555555555555555: N + 2 KV wrapped to -1, so
  // the packed width [1, 1, 6] "split" into heads of size -6 (SIGSEGV).
  const int64_t h = 0x5555555555555555;
  auto r = ms("GroupQueryAttention",
              {rnd({1, 1, 6}, 1), Tensor(), Tensor(), Tensor(), Tensor(), i32({1}, {0}), i32({}, {1})},
              {{"num_heads", attr_int(h)}, {"kv_num_heads", attr_int(h)}});
  expect_error(r, StatusCode::kInvalidModel, "overflows int64");
  // The largest that do not overflow still reach the shape check.
  const int64_t kv = int64_t{1} << 60;
  expect_error(ms("GroupQueryAttention",
                  {rnd({1, 1, 6}, 1), Tensor(), Tensor(), Tensor(), Tensor(), i32({1}, {0}), i32({}, {1})},
                  {{"num_heads", attr_int(2 * kv)}, {"kv_num_heads", attr_int(kv)}}),
               StatusCode::kInvalidArgument, "packed QKV width");
}

TEST(MsGroupQueryAttention, TotalSequenceLengthMustFitThePastAndNewTokens) {
  // One token, no past, total_sequence_length 2^24: the K/V and mask scratch
  // were sized by that bare number (2.1 GB for a 96-byte query, past any
  // tensor limit). ONNX Runtime requires total = past + S (or <= past).
  auto q = rnd({1, 1, 24}, 1);
  const ir::Attributes one = {{"num_heads", attr_int(1)}, {"kv_num_heads", attr_int(1)}};
  auto run = [&](std::vector<Tensor> in) { return ms("GroupQueryAttention", std::move(in), one, 1); };
  expect_error(run({q, Tensor(), Tensor(), Tensor(), Tensor(), i32({1}, {0}), i32({}, {1 << 24})}),
               StatusCode::kInvalidArgument, "total_sequence_length must equal");
  expect_error(run({q, Tensor(), Tensor(), Tensor(), Tensor(), i32({1}, {0}), i32({}, {2})}),
               StatusCode::kInvalidArgument, "total_sequence_length must equal");
  expect_error(run({q, Tensor(), Tensor(), Tensor(), Tensor(), i32({1}, {0}), i32({}, {0})}),
               StatusCode::kInvalidArgument, "total_sequence_length must equal");
  ASSERT_TRUE(run({q, Tensor(), Tensor(), Tensor(), Tensor(), i32({1}, {0}), i32({}, {1})}).ok());
  // With a past buffer of 6: total 7 (6 + 1) or up to 6 are taken, 8 is not.
  auto pk = rnd({1, 1, 6, 8}, 2), pv = rnd({1, 1, 6, 8}, 3);
  ASSERT_TRUE(run({q, Tensor(), Tensor(), pk, pv, i32({1}, {6}), i32({}, {7})}).ok());
  ASSERT_TRUE(run({q, Tensor(), Tensor(), pk, pv, i32({1}, {3}), i32({}, {5})}).ok());
  expect_error(run({q, Tensor(), Tensor(), pk, pv, i32({1}, {6}), i32({}, {8})}), StatusCode::kInvalidArgument,
               "total_sequence_length must equal");
}

TEST(MsGroupQueryAttention, ScratchIsCheckedAgainstTheTensorLimit) {
  // A valid prompt of 1024 tokens: its [B, S, total] mask is 4 MiB.
  auto q = rnd({1, 1024, 3}, 1);
  const ir::Attributes one = {{"num_heads", attr_int(1)}, {"kv_num_heads", attr_int(1)}};
  std::vector<Tensor> in = {q, Tensor(), Tensor(), Tensor(), Tensor(), i32({1}, {1023}), i32({}, {1024})};
  ASSERT_TRUE(ms("GroupQueryAttention", in, one).ok());
  TensorLimit small{1 << 20, "a test limit of 1 MiB"};
  ScopedTensorLimit scoped(&small);
  expect_error(ms("GroupQueryAttention", in, one), StatusCode::kOutOfMemory, "attention mask");
}

TEST(MsGroupQueryAttention, TokenStepSeesPastAndItself) {
  // One KV head shared by two query heads; a single new token after a past
  // of 2 (buffer 4): the present holds the past, the token, then zeros.
  auto q = rnd({1, 1, 8}, 1), k = rnd({1, 1, 4}, 2), v = rnd({1, 1, 4}, 3);
  auto pk = rnd({1, 1, 4, 4}, 4), pv = rnd({1, 1, 4, 4}, 5);
  auto r = ms("GroupQueryAttention", {q, k, v, pk, pv, i32({1}, {2}), i32({}, {3})},
              {{"num_heads", attr_int(2)}, {"kv_num_heads", attr_int(1)}}, 3);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  const Tensor& pres_k = (*r)[1];
  ASSERT_EQ(pres_k.shape(), (Shape{1, 1, 4, 4}));
  for (int d = 0; d < 4; ++d) {
    EXPECT_EQ(pres_k.data<float>()[d], pk.data<float>()[d]);
    EXPECT_EQ(pres_k.data<float>()[2 * 4 + d], k.data<float>()[d]);
    EXPECT_EQ(pres_k.data<float>()[3 * 4 + d], 0.0f);
  }
  const float* K = pres_k.data<float>();
  const float* V = (*r)[2].data<float>();
  std::vector<float> want(8);
  for (int h = 0; h < 2; ++h) {
    double s[3], mx = -1e300, sum = 0;
    for (int j = 0; j < 3; ++j) {
      s[j] = 0;
      for (int d = 0; d < 4; ++d) s[j] += double(q.data<float>()[h * 4 + d]) * K[j * 4 + d];
      s[j] *= 0.5;
      mx = std::max(mx, s[j]);
    }
    for (double& x : s) sum += (x = std::exp(x - mx));
    for (int d = 0; d < 4; ++d) {
      double acc = 0;
      for (int j = 0; j < 3; ++j) acc += s[j] / sum * V[j * 4 + d];
      want[h * 4 + d] = static_cast<float>(acc);
    }
  }
  expect_near((*r)[0], want);
}

TEST(MsAttentionPast, InvalidPastIsRefused) {
  auto x = rnd({2, 3, 16}, 1), w = rnd({16, 48}, 2);
  const ir::Attributes two = {{"num_heads", attr_int(2)}};
  ASSERT_TRUE(ms("Attention", {x, w, Tensor(), Tensor(), rnd({2, 2, 2, 4, 8}, 3)}, two, 2).ok());
  // Past of another batch, head count, head size; not 5-D.
  for (Shape s : {Shape{2, 1, 2, 4, 8}, Shape{2, 2, 4, 4, 4}, Shape{2, 2, 2, 4, 4}, Shape{2, 2, 4, 8}})
    expect_error(ms("Attention", {x, w, Tensor(), Tensor(), rnd(s, 3)}, two, 2), StatusCode::kInvalidArgument,
                 "past must be");
  // Past with attention_bias (ONNX Runtime refuses it too); V of another width.
  expect_error(ms("Attention", {x, w, Tensor(), Tensor(), rnd({2, 2, 2, 4, 8}, 3), rnd({1, 2, 3, 7}, 4)}, two, 2),
               StatusCode::kUnsupported, "attention_bias");
  expect_error(ms("Attention", {x, rnd({16, 40}, 2), Tensor(), Tensor(), rnd({2, 2, 2, 4, 8}, 3)},
                  {{"num_heads", attr_int(2)}, {"qkv_hidden_sizes", attr_ints({16, 16, 8})}}, 2),
               StatusCode::kInvalidArgument, "one hidden size");
}

TEST(MsAttentionPast, PresentIsPastThenNewKeysAndValues) {
  // With zero weights and a bias, the new K and V rows are the bias halves.
  auto x = rnd({1, 2, 4}, 1), past = rnd({2, 1, 2, 3, 2}, 2), bias = rnd({12}, 3);
  auto w = Tensor::allocate(DType::kFloat32, {4, 12}).value();
  auto r =
      ms("Attention", {x, w, bias, Tensor(), past}, {{"num_heads", attr_int(2)}, {"unidirectional", attr_int(1)}}, 2);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  const Tensor& present = (*r)[1];
  ASSERT_EQ(present.shape(), (Shape{2, 1, 2, 5, 2}));
  for (int kv = 0; kv < 2; ++kv)
    for (int h = 0; h < 2; ++h)
      for (int t = 0; t < 5; ++t)
        for (int d = 0; d < 2; ++d) {
          const float want =
              t < 3 ? past.data<float>()[((kv * 2 + h) * 3 + t) * 2 + d] : bias.data<float>()[(kv + 1) * 4 + h * 2 + d];
          EXPECT_EQ(present.data<float>()[((kv * 2 + h) * 5 + t) * 2 + d], want);
        }
}

TEST(MsAttention, NegativeMaskIndexIsRefused) {
  auto x = rnd({1, 3, 4}, 1), w = rnd({4, 12}, 2), b = rnd({12}, 3);
  const ir::Attributes two = {{"num_heads", attr_int(2)}};
  expect_error(ms("Attention", {x, w, b, i32({1}, {-3})}, two), StatusCode::kInvalidArgument, "mask_index[0] = -3");
  // As in ONNX Runtime: ends past the sequence and negative starts are clamped.
  ASSERT_TRUE(ms("Attention", {x, w, b, i32({1}, {5})}, two).ok());
  ASSERT_TRUE(ms("Attention", {x, w, b, i32({2}, {3, -1})}, two).ok());
}

TEST(MsAttention, QkvHiddenSizesThatWrapAreRefused) {
  // 2 (2^62 + 2^40) + (2^63 - 2^41 + 3) wraps to the 3 weight columns.
  auto x = rnd({1, 2, 4}, 1), w = rnd({4, 3}, 2);
  const int64_t a = (int64_t{1} << 62) + (int64_t{1} << 40);
  const int64_t c = std::numeric_limits<int64_t>::max() - (int64_t{1} << 41) + 4;
  expect_error(ms("Attention", {x, w}, {{"num_heads", attr_int(1)}, {"qkv_hidden_sizes", attr_ints({a, a, c})}}),
               StatusCode::kInvalidArgument, "do not split");
}

TEST(MsMultiHeadAttention, MaskScratchIsCheckedAgainstTheTensorLimit) {
  // A causal mask [B, 1, S, T] of 1024 x 1024 floats: 4 MiB.
  auto q = rnd({1, 1024, 2}, 1), k = rnd({1, 1024, 2}, 2), v = rnd({1, 1024, 2}, 3);
  const ir::Attributes causal = {{"num_heads", attr_int(1)}, {"unidirectional", attr_int(1)}};
  ASSERT_TRUE(ms("MultiHeadAttention", {q, k, v}, causal).ok());
  TensorLimit small{1 << 20, "a test limit of 1 MiB"};
  ScopedTensorLimit scoped(&small);
  expect_error(ms("MultiHeadAttention", {q, k, v}, causal), StatusCode::kOutOfMemory, "attention mask");
}

TEST(MsSkipLayerNormalization, ShapesAreOnnxRuntimes) {
  auto g = rnd({4}, 1), b = rnd({4}, 2);
  auto sln = [&](Tensor x, Tensor skip) { return ms("SkipLayerNormalization", {x, skip, g, b}, {}); };
  // The input's shape, or [1, S, H] / [S, H] for a [B, S, H] input.
  for (Shape skip : {Shape{2, 3, 4}, Shape{1, 3, 4}, Shape{3, 4}})
    ASSERT_TRUE(sln(rnd({2, 3, 4}, 3), rnd(skip, 4)).ok()) << shape_to_string(skip);
  ASSERT_TRUE(sln(rnd({6, 4}, 3), rnd({6, 4}, 4)).ok());
  // [3, 2, 4] for [2, 3, 4] was taken (its rows reused modulo 6); so were these.
  for (Shape skip : {Shape{3, 2, 4}, Shape{6, 4}, Shape{1, 1, 4}, Shape{2, 1, 4}, Shape{4}})
    expect_error(sln(rnd({2, 3, 4}, 3), rnd(skip, 4)), StatusCode::kInvalidArgument, "does not match input");
  for (Shape skip : {Shape{1, 4}, Shape{3, 4}})
    expect_error(sln(rnd({6, 4}, 3), rnd(skip, 4)), StatusCode::kInvalidArgument, "does not match input");
  // Input rank 2 or 3 only.
  expect_error(sln(rnd({1, 2, 3, 4}, 3), rnd({1, 2, 3, 4}, 4)), StatusCode::kInvalidArgument, "rank 2 or 3");
  expect_error(ms("SkipSimplifiedLayerNormalization", {rnd({1, 2, 3, 4}, 3), rnd({1, 2, 3, 4}, 4), g}, {}),
               StatusCode::kInvalidArgument, "rank 2 or 3");
}

// A hidden size of 0 (found by fuzz_ops: it divided by zero) gives an empty output.
TEST(MsSkipLayerNormalization, EmptyHiddenSizeGivesAnEmptyOutput) {
  for (const char* op : {"SkipLayerNormalization", "SkipSimplifiedLayerNormalization"}) {
    auto y = ms(op, {rnd({2, 3, 0}, 1), rnd({2, 3, 0}, 2), rnd({0}, 3)}, {});
    ASSERT_TRUE(y.ok()) << op << ": " << y.status().to_string();
    EXPECT_EQ((*y)[0].shape(), (Shape{2, 3, 0}));
  }
}

TEST(MsBiasGelu, ScalarInputIsRefused) {
  Tensor x = Tensor::from_vector<float>({}, {0.5f});
  expect_error(ms("BiasGelu", {x, rnd({1}, 1)}, {}), StatusCode::kInvalidArgument, "scalar");
  ASSERT_TRUE(ms("BiasGelu", {rnd({1}, 2), rnd({1}, 1)}, {}).ok());
}

}  // namespace
}  // namespace dlrt::cpu::testing
