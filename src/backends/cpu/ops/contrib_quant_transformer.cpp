// Quantized com.microsoft ops that ONNX Runtime's quantizers write, with the
// semantics of ONNX Runtime's CPU kernels:
//   MatMulNBits: Y = A · dequant(B)^T (+ bias), B [N, k_blocks, blob] of 2-,
//     4- or 8-bit values packed low bits first, per-block scales, zero points
//     packed uint8 (default 2^(bits-1)) or of A's type, g_idx (block of each
//     k; 4-bit, not with uint8 zero points, which ONNX Runtime ignores then),
//     A float32 or float16. B is dequantized once when the kernel is made
//     (constant weights; per run otherwise) and packed for the float GEMM:
//     ONNX Runtime's own accuracy_level 0/1 path (dequantize, then SGEMM).
//     At accuracy_level 4 A is first rounded to int8 per block, as ONNX
//     Runtime's int8 path does on x86-64 (see int8_activations).
//   QAttention: uint8 input (int8 too) times uint8/int8 weights on the int8
//     GEMM, float(acc) * input_scale * weight_scale + bias, then the float
//     attention of com.microsoft Attention (ms_attention.h). past is refused.
//   QEmbedLayerNormalization: EmbedLayerNormalization over dequantized
//     uint8/int8 tables, gamma and beta, in ONNX Runtime's float order;
//     mask_index counts the mask's ones.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

#include "backends/cpu/kernel_families.h"
#include "backends/cpu/kernel_util.h"
#include "backends/cpu/kernels/gemm.h"
#include "backends/cpu/ops/quantize_util.h"
#include "backends/cpu/kernels/gemm_int8.h"
#include "backends/cpu/ops/ms_attention.h"
#include "backends/cpu/scratch.h"
#include "backends/cpu/scratch_check.h"

namespace dlrt::cpu {
namespace {

bool is_half_or_float(DType t) { return t == DType::kFloat32 || t == DType::kFloat16; }

float fval(const Tensor& t, int64_t i) {
  return t.dtype() == DType::kFloat16 ? static_cast<float>(t.data<Float16>()[i]) : t.data<float>()[i];
}

// ---------------------------------------------------------------------------
// MatMulNBits

struct NBitsShape {
  int64_t K = 0, N = 0, bits = 0, block = 0, k_blocks = 0, blob = 0;
};

// The attributes, checked when the kernel is made as ONNX Runtime checks
// them: K and N positive, bits 2, 4 or 8, block_size 16, 32, 64, 128 or 256
// (so that blob = block_size * bits / 8 and k_blocks * block_size cannot
// wrap into shapes that fit an empty B).
Result<NBitsShape> nbits_attributes(const ir::Node& n) {
  NBitsShape s;
  s.K = n.attr_int("K", 0);
  s.N = n.attr_int("N", 0);
  s.bits = n.attr_int("bits", 4);
  s.block = n.attr_int("block_size", 0);
  if (s.K <= 0 || s.N <= 0) return InvalidModel(n.describe() + ": attributes K and N must be positive");
  if (s.bits != 2 && s.bits != 4 && s.bits != 8)
    return InvalidModel(n.describe() + ": bits must be 2, 4 or 8, got " + std::to_string(s.bits));
  if (s.block < 16 || s.block > 256 || (s.block & (s.block - 1)) != 0)
    return InvalidModel(n.describe() + ": block_size must be 16, 32, 64, 128 or 256, got " + std::to_string(s.block));
  s.k_blocks = s.K / s.block + (s.K % s.block != 0);
  s.blob = s.block * s.bits / 8;
  return s;
}

bool shape_is(const Tensor& t, std::initializer_list<int64_t> dims) { return t.shape() == Shape(dims); }

// Checks B, scales, zero_points, g_idx and bias against the attributes and
// A's float type (as ONNX Runtime's MatMulNBits does).
Status check_nbits_inputs(const KernelContext& ctx, const NBitsShape& s, DType t1, const Tensor& b,
                          const Tensor& scales, const Tensor* zp, const Tensor* g_idx, const Tensor* bias) {
  if (b.dtype() != DType::kUInt8 || !shape_is(b, {s.N, s.k_blocks, s.blob}))
    return ctx.invalid("B must be uint8 [N, k_blocks, blob_size] = [" + std::to_string(s.N) + ", " +
                       std::to_string(s.k_blocks) + ", " + std::to_string(s.blob) + "], got " +
                       dtype_name(b.dtype()) + " " + shape_to_string(b.shape()));
  if (scales.dtype() != t1 || !(shape_is(scales, {s.N * s.k_blocks}) || shape_is(scales, {s.N, s.k_blocks})))
    return ctx.invalid("scales must be " + std::string(dtype_name(t1)) + " [N, k_blocks] = [" + std::to_string(s.N) +
                       ", " + std::to_string(s.k_blocks) + "], got " + dtype_name(scales.dtype()) + " " +
                       shape_to_string(scales.shape()));
  if (zp) {
    if (zp->dtype() == DType::kUInt8) {
      const int64_t zb = (s.k_blocks * s.bits + 7) / 8;
      if (!(shape_is(*zp, {s.N * zb}) || shape_is(*zp, {s.N, zb})))
        return ctx.invalid("uint8 zero_points must be [N, " + std::to_string(zb) + "], got " +
                           shape_to_string(zp->shape()));
    } else if (zp->dtype() == t1) {
      if (s.bits != 4) return ctx.unsupported("float zero_points need bits 4 (as in ONNX Runtime)");
      if (!(shape_is(*zp, {s.N * s.k_blocks}) || shape_is(*zp, {s.N, s.k_blocks})))
        return ctx.invalid("zero_points must have the scales' shape [N, k_blocks], got " + shape_to_string(zp->shape()));
    } else {
      return ctx.invalid("zero_points must be uint8 or of the scales' type, got " + std::string(dtype_name(zp->dtype())));
    }
  }
  if (g_idx) {
    if (g_idx->dtype() != DType::kInt32 || g_idx->rank() != 1 ||
        (g_idx->dim(0) != s.K && g_idx->dim(0) != s.k_blocks * s.block))
      return ctx.invalid("g_idx must be int32 [K], got " + std::string(dtype_name(g_idx->dtype())) + " " +
                         shape_to_string(g_idx->shape()));
    if (s.bits != 4) return ctx.unsupported("g_idx needs bits 4 (as in ONNX Runtime)");
    // ONNX Runtime 1.30's CPU kernel then dequantizes with zero point 8
    // whatever the zero_points say; refused rather than guess which is meant.
    if (zp && zp->dtype() == DType::kUInt8)
      return ctx.unsupported("g_idx with uint8 zero_points (ONNX Runtime ignores those zero points there)");
    for (int64_t i = 0; i < g_idx->size(); ++i) {
      const int32_t v = g_idx->data<int32_t>()[i];
      if (v < 0 || v >= s.k_blocks)
        return ctx.invalid("g_idx[" + std::to_string(i) + "] = " + std::to_string(v) + " is outside [0, " +
                           std::to_string(s.k_blocks) + ")");
    }
  }
  if (bias && (bias->dtype() != t1 || !shape_is(*bias, {s.N})))
    return ctx.invalid("bias must be " + std::string(dtype_name(t1)) + " [N], got " + shape_to_string(bias->shape()));
  return Status::Ok();
}

// dst[n * K + k] = (q(n, k) - zero point) * scale of (n, block of k).
void dequantize_nbits(const NBitsShape& s, const Tensor& b, const Tensor& scales, const Tensor* zp,
                      const Tensor* g_idx, float* dst, ThreadPool* pool) {
  const uint8_t* B = b.data<uint8_t>();
  const int64_t mask = (1 << s.bits) - 1;
  const int64_t zb = (s.k_blocks * s.bits + 7) / 8;
  const float default_zp = static_cast<float>(1 << (s.bits - 1));
  const bool float_zp = zp && zp->dtype() != DType::kUInt8;
  const int32_t* gi = g_idx ? g_idx->data<int32_t>() : nullptr;
  auto rows = [&](int64_t lo, int64_t hi) {
    for (int64_t n = lo; n < hi; ++n) {
      const uint8_t* row = B + n * s.k_blocks * s.blob;
      float* out = dst + n * s.K;
      for (int64_t k = 0; k < s.K; ++k) {
        const int64_t blk = gi ? gi[k] : k / s.block;
        const int64_t bit = (k % s.block) * s.bits;  // within the block of k's storage
        const int64_t q = (row[(k / s.block) * s.blob + bit / 8] >> (bit % 8)) & mask;
        const float scale = fval(scales, n * s.k_blocks + blk);
        float z = default_zp;
        if (float_zp) {
          z = fval(*zp, n * s.k_blocks + blk);
        } else if (zp) {
          const int64_t zbit = blk * s.bits;
          z = static_cast<float>((zp->data<uint8_t>()[n * zb + zbit / 8] >> (zbit % 8)) & mask);
        }
        out[k] = (static_cast<float>(q) - z) * scale;
      }
    }
  };
  if (pool)
    pool->parallel_for(s.N, std::max<int64_t>(1, 65536 / std::max<int64_t>(s.K, 1)), rows);
  else
    rows(0, s.N);
}

// accuracy_level 4: ONNX Runtime 1.30 on x86-64 (MLAS's CompInt8 kernels,
// AVX2 and up) then rounds A to int8 per block of block_size along K, for 4-
// and 8-bit weights and for 2-bit ones in blocks of 32 or more; elsewhere it
// computes in float.
bool int8_activations(const ir::Node& node, const NBitsShape& s) {
  return node.attr_int("accuracy_level", 0) == 4 && (s.bits != 2 || s.block >= 32);
}

// Each row's blocks of `block` values (the last may be shorter) rounded as
// ONNX Runtime quantizes A there: scale = max|a| / 127, q = round(a * (1 /
// scale)) to nearest even, a = q * scale. The product with the dequantized B
// then equals ONNX Runtime's int32 block sums times the two scales up to
// float rounding.
void round_to_int8_blocks(float* a, int64_t M, int64_t K, int64_t block, ThreadPool& pool) {
  pool.parallel_for(M, std::max<int64_t>(1, 16384 / std::max<int64_t>(K, 1)), [&](int64_t lo, int64_t hi) {
    for (int64_t r = lo; r < hi; ++r)
      for (int64_t k0 = 0; k0 < K; k0 += block) {
        float* v = a + r * K + k0;
        const int64_t n = std::min(block, K - k0);
        float amax = 0;
        for (int64_t i = 0; i < n; ++i) amax = std::max(amax, std::fabs(v[i]));
        const float scale = amax / 127.0f;
        const float inv = scale != 0.0f ? 1.0f / scale : 0.0f;
        for (int64_t i = 0; i < n; ++i) v[i] = std::nearbyint(v[i] * inv) * scale;
      }
  });
}

// B dequantized and packed when the kernel was made, with the tensors it came from.
struct NBitsPrepared {
  const void *b = nullptr, *scales = nullptr, *zp = nullptr, *g_idx = nullptr;
  std::vector<float> deq;  // [N, K]; emptied once packed (the GEMM reads the packed copy)
  std::shared_ptr<const PackedMatrix> packed;
  bool matches(const Tensor& b_, const Tensor& s_, const Tensor* z_, const Tensor* g_) const {
    return b_.raw_data() == b && s_.raw_data() == scales && (z_ ? z_->raw_data() : nullptr) == zp &&
           (g_ ? g_->raw_data() : nullptr) == g_idx;
  }
};

Status matmul_nbits(KernelContext& ctx, const NBitsPrepared* pre) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* a, required_input(ctx, 0));
  DLRT_ASSIGN_OR_RETURN(const Tensor* b, required_input(ctx, 1));
  DLRT_ASSIGN_OR_RETURN(const Tensor* scales, required_input(ctx, 2));
  const Tensor* zp = ctx.input(3);
  const Tensor* g_idx = ctx.input(4);
  const Tensor* bias = ctx.input(5);
  DLRT_ASSIGN_OR_RETURN(NBitsShape s, nbits_attributes(ctx.node()));
  if (!is_half_or_float(a->dtype())) return ctx.unsupported("A of dtype " + std::string(dtype_name(a->dtype())) + ": only float32 and float16");
  if (a->rank() < 1 || a->shape().back() != s.K)
    return ctx.invalid("A's last dimension must be K = " + std::to_string(s.K) + ", got " + shape_to_string(a->shape()));
  DLRT_RETURN_IF_ERROR(check_nbits_inputs(ctx, s, a->dtype(), *b, *scales, zp, g_idx, bias));
  Shape out_shape = a->shape();
  out_shape.back() = s.N;
  const int64_t M = a->size() / s.K;
  DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, a->dtype(), out_shape));
  if (y->size() == 0) return Status::Ok();
  const bool half = a->dtype() == DType::kFloat16;
  thread_local AlignedScratch b_scratch, a_scratch, y_scratch, bias_scratch;
  const float* deq = nullptr;
  const PackedMatrix* packed = nullptr;
  if (pre && pre->matches(*b, *scales, zp, g_idx)) {
    deq = pre->deq.empty() ? nullptr : pre->deq.data();
    packed = pre->packed.get();
  } else {
    // (B's shape matched [N, k_blocks, blob]: N * K is within 4 times its bytes.)
    DLRT_RETURN_IF_ERROR(check_scratch(ctx, {s.N, s.K}, sizeof(float), "the dequantized B [N, K]"));
    float* d = b_scratch.get<float>(static_cast<size_t>(s.N * s.K), AlignedScratch::Growth::kByHalf);
    dequantize_nbits(s, *b, *scales, zp, g_idx, d, &ctx.pool());
    deq = d;
  }
  const float* A = half ? nullptr : a->data<float>();
  float* Y = half ? y_scratch.get<float>(static_cast<size_t>(y->size()), AlignedScratch::Growth::kByHalf)
                  : y->data<float>();
  const bool int8_a = int8_activations(ctx.node(), s);
  if (half || int8_a) {
    float* af = a_scratch.get<float>(static_cast<size_t>(a->size()), AlignedScratch::Growth::kByHalf);
    if (half)
      for (int64_t i = 0; i < a->size(); ++i) af[i] = static_cast<float>(a->data<Float16>()[i]);
    else
      std::memcpy(af, a->data<float>(), static_cast<size_t>(a->size()) * sizeof(float));
    if (int8_a) round_to_int8_blocks(af, M, s.K, s.block, ctx.pool());
    A = af;
  }
  GemmEpilogue ep;
  if (bias) {
    if (half) {
      float* bf = bias_scratch.get<float>(static_cast<size_t>(s.N), AlignedScratch::Growth::kByHalf);
      for (int64_t j = 0; j < s.N; ++j) bf[j] = fval(*bias, j);
      ep.col_bias = bf;
    } else {
      ep.col_bias = bias->data<float>();
    }
  }
  const SgemmOperand oa{A, s.K, false, nullptr, nullptr};
  const SgemmOperand ob{deq, s.K, true, packed, nullptr};
  DLRT_RETURN_IF_ERROR(sgemm_ex(M, s.N, s.K, 1.0f, oa, ob, 0.0f, Y, s.N, &ep, &ctx.pool()));
  if (half)
    for (int64_t i = 0; i < y->size(); ++i) y->data<Float16>()[i] = Float16(Y[i]);
  return Status::Ok();
}

// Dequantizes and packs constant weights; null when they are not constant
// or do not fit (compute() then reports the error).
std::shared_ptr<const NBitsPrepared> prepare_nbits(const ir::Node& node, const ConstantInputs& k) {
  const Tensor* b = k(1);
  const Tensor* scales = k(2);
  const bool has_zp = node.inputs.size() > 3 && node.inputs[3] != ir::kNoValue;
  const bool has_g = node.inputs.size() > 4 && node.inputs[4] != ir::kNoValue;
  const Tensor* zp = has_zp ? k(3) : nullptr;
  const Tensor* g = has_g ? k(4) : nullptr;
  if (!b || !scales || (has_zp && !zp) || (has_g && !g) || !is_half_or_float(scales->dtype())) return nullptr;
  auto attrs = nbits_attributes(node);
  if (!attrs.ok()) return nullptr;
  const NBitsShape s = *attrs;
  // The same checks as at run time, without a context to report through.
  if (b->dtype() != DType::kUInt8 || !shape_is(*b, {s.N, s.k_blocks, s.blob}) || scales->size() != s.N * s.k_blocks)
    return nullptr;
  // The float copy is a tensor the model implies: over the limit, compute()
  // reports it (its scratch copy is checked).
  if (static_cast<uint64_t>(s.N) * static_cast<uint64_t>(s.K) * sizeof(float) > max_tensor_bytes()) return nullptr;
  if (zp && (zp->dtype() == DType::kUInt8 ? zp->size() != s.N * ((s.k_blocks * s.bits + 7) / 8)
                                          : (zp->dtype() != scales->dtype() || zp->size() != s.N * s.k_blocks || s.bits != 4)))
    return nullptr;
  if (g) {
    if (g->dtype() != DType::kInt32 || (g->size() != s.K && g->size() != s.k_blocks * s.block) || s.bits != 4 ||
        (zp && zp->dtype() == DType::kUInt8))
      return nullptr;
    for (int64_t i = 0; i < g->size(); ++i)
      if (g->data<int32_t>()[i] < 0 || g->data<int32_t>()[i] >= s.k_blocks) return nullptr;
  }
  auto pre = std::make_shared<NBitsPrepared>();
  pre->b = b->raw_data(), pre->scales = scales->raw_data();
  pre->zp = zp ? zp->raw_data() : nullptr, pre->g_idx = g ? g->raw_data() : nullptr;
  pre->deq.resize(static_cast<size_t>(s.N * s.K));
  dequantize_nbits(s, *b, *scales, zp, g, pre->deq.data(), nullptr);
  pre->packed = PackedMatrix::pack_b(true, s.K, s.N, pre->deq.data(), s.K);
  // Only the packed floats stay: the weights' memory is then the float
  // model's, not twice it (a one-row A runs on the packed panels too).
  if (pre->packed) std::vector<float>().swap(pre->deq);
  return pre;
}

// ---------------------------------------------------------------------------
// QAttention


int32_t zp_at(const Tensor& t, int64_t i) {
  return t.dtype() == DType::kInt8 ? t.data<int8_t>()[i] : t.data<uint8_t>()[i];
}

// The weights packed for the int8 GEMM when the kernel was made.
struct QAttentionPrepared {
  const void* source = nullptr;
  std::shared_ptr<const PackedInt8B> packed;
};

Status qattention(KernelContext& ctx, const QAttentionPrepared* pre) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
  DLRT_ASSIGN_OR_RETURN(const Tensor* w, required_input(ctx, 1));
  DLRT_ASSIGN_OR_RETURN(const Tensor* bias, required_input(ctx, 2));
  DLRT_ASSIGN_OR_RETURN(const Tensor* x_scale, required_input(ctx, 3));
  DLRT_ASSIGN_OR_RETURN(const Tensor* w_scale, required_input(ctx, 4));
  const Tensor* mi = ctx.input(5);
  const Tensor* x_zp = ctx.input(6);
  const Tensor* w_zp = ctx.input(7);
  const ir::Node& n = ctx.node();
  if (ctx.input(8) || (ctx.num_outputs() > 1 && ctx.output_requested(1)))
    return ctx.unsupported("past/present state (incremental decoding) is not supported by dlrt's com.microsoft QAttention");
  if (!is_8bit(x->dtype()) || !is_8bit(w->dtype()))
    return ctx.unsupported("input and weight must be uint8 or int8, got " + std::string(dtype_name(x->dtype())) + " and " +
                           dtype_name(w->dtype()));
  if (x->rank() != 3 || w->rank() != 2 || w->dim(0) != x->dim(2))
    return ctx.invalid("input must be [B, S, in_hidden] and weight [in_hidden, 3 * hidden], got " +
                       shape_to_string(x->shape()) + " and " + shape_to_string(w->shape()));
  const int64_t H = n.attr_int("num_heads", 0);
  if (H <= 0) return ctx.invalid("attribute num_heads must be positive");
  const int64_t B = x->dim(0), S = x->dim(1), D = x->dim(2), N = w->dim(1), h = N / 3;
  if (h <= 0 || N != 3 * h || h % H != 0)
    return ctx.invalid("weight's " + std::to_string(N) + " columns do not split into Q, K, V of num_heads " +
                       std::to_string(H));
  if (n.attr_int("do_rotary", 0) != 0) return ctx.unsupported("do_rotary is not supported");
  if (!n.ints_of("qkv_hidden_sizes").empty()) return ctx.unsupported("qkv_hidden_sizes (QAttention takes equal Q, K, V)");
  if (bias->dtype() != DType::kFloat32 || bias->size() != N)
    return ctx.invalid("bias must be float32 with " + std::to_string(N) + " values");
  if (x_scale->dtype() != DType::kFloat32 || x_scale->size() != 1) return ctx.invalid("input_scale must be one float32");
  if (w_scale->dtype() != DType::kFloat32 || (w_scale->size() != 1 && w_scale->size() != N))
    return ctx.invalid("weight_scale must be float32 with one value or " + std::to_string(N));
  if (x_zp && (x_zp->dtype() != x->dtype() || x_zp->size() != 1))
    return ctx.invalid("input_zero_point must be one value of the input's type");
  if (w_zp && (w_zp->dtype() != w->dtype() || (w_zp->size() != 1 && w_zp->size() != N)))
    return ctx.invalid("weight_zero_point must have the weight's type and one value or " + std::to_string(N));
  thread_local AlignedScratch qkv_scratch, scale_scratch, zp_scratch, b_scratch;
  // float(acc) * (input_scale * weight_scale[j]) + bias[j], ONNX Runtime's order.
  float* scales = scale_scratch.get<float>(static_cast<size_t>(w_scale->size()), AlignedScratch::Growth::kByHalf);
  for (int64_t j = 0; j < w_scale->size(); ++j) scales[j] = w_scale->data<float>()[j] * x_scale->data<float>()[0];
  Int8FloatOutput fo;
  fo.scale = scales;
  fo.scale_stride = w_scale->size() == 1 ? 0 : 1;
  fo.bias = bias->data<float>();
  int32_t* zps = zp_scratch.get<int32_t>(static_cast<size_t>(1 + N), AlignedScratch::Growth::kByHalf);
  zps[0] = x_zp ? zp_at(*x_zp, 0) : 0;
  const int64_t wz_n = w_zp ? w_zp->size() : 0;
  for (int64_t j = 0; j < wz_n; ++j) zps[1 + j] = zp_at(*w_zp, j);
  const PackedInt8B* pb = pre && pre->packed && pre->source == w->raw_data() ? pre->packed.get() : nullptr;
  PackedInt8B local;
  if (!pb) {
    void* storage = b_scratch.bytes(PackedInt8B::bytes(D, N), AlignedScratch::Growth::kByHalf);
    local = PackedInt8B::pack_into(storage, false, D, N, w->raw_data(), N, w->dtype() == DType::kInt8);
    pb = &local;
  }
  DLRT_RETURN_IF_ERROR(check_scratch(ctx, {B, S, N}, sizeof(float), "Q, K and V [B, S, 3 hidden]"));
  float* qkv = qkv_scratch.get<float>(static_cast<size_t>(B * S * N), AlignedScratch::Growth::kByHalf);
  if (B * S > 0)
    gemm_u8s8(B * S, N, D, x->raw_data(), D, x->dtype() == DType::kInt8, zps, 0, *pb, w_zp ? zps + 1 : nullptr,
              wz_n == 1 ? 0 : 1, reinterpret_cast<int32_t*>(qkv), N, &ctx.pool(), nullptr, &fo);
  return ms_attention_from_qkv(ctx, qkv, B, S, H, h, h, mi, nullptr);
}

// ---------------------------------------------------------------------------
// QEmbedLayerNormalization

struct Dequant {
  const Tensor* t = nullptr;
  float scale = 1;
  int32_t zp = 0;
  float operator()(int64_t i) const {
    const int32_t q = t->dtype() == DType::kInt8 ? t->data<int8_t>()[i] : t->data<uint8_t>()[i];
    return static_cast<float>(q - zp) * scale;
  }
};

Result<Dequant> dequant_of(KernelContext& ctx, const Tensor* t, size_t scale_i, size_t zp_i, const char* what,
                           DType q) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* s, required_input(ctx, scale_i));
  DLRT_ASSIGN_OR_RETURN(const Tensor* z, required_input(ctx, zp_i));
  if (t->dtype() != q) return ctx.invalid(std::string(what) + " must have the word embedding's type " + dtype_name(q));
  if (s->dtype() != DType::kFloat32 || s->size() != 1) return ctx.invalid(std::string(what) + "'s scale must be one float32");
  if (z->dtype() != q || z->size() != 1) return ctx.invalid(std::string(what) + "'s zero point must be one value of its type");
  return Dequant{t, s->data<float>()[0], zp_at(*z, 0)};
}

int64_t index_at(const Tensor& t, int64_t i) {
  return t.dtype() == DType::kInt32 ? t.data<int32_t>()[i] : t.data<int64_t>()[i];
}

Status qembed_layer_norm(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* ids, required_input(ctx, 0));
  const Tensor* seg = ctx.input(1);
  DLRT_ASSIGN_OR_RETURN(const Tensor* word, required_input(ctx, 2));
  DLRT_ASSIGN_OR_RETURN(const Tensor* pos, required_input(ctx, 3));
  const Tensor* seg_emb = ctx.input(4);
  DLRT_ASSIGN_OR_RETURN(const Tensor* gamma, required_input(ctx, 5));
  DLRT_ASSIGN_OR_RETURN(const Tensor* beta, required_input(ctx, 6));
  const Tensor* mask = ctx.input(7);
  if (!is_8bit(word->dtype())) return ctx.invalid("word_embedding must be uint8 or int8");
  const DType q = word->dtype();
  for (const Tensor* t : {ids, seg, mask})
    if (t && t->dtype() != DType::kInt32 && t->dtype() != DType::kInt64)
      return ctx.invalid("input_ids, segment_ids and mask must be int32");
  if (ids->rank() != 2) return ctx.invalid("input_ids must be [batch, sequence], got " + shape_to_string(ids->shape()));
  if (word->rank() != 2 || pos->rank() != 2) return ctx.invalid("embeddings must be 2-D [rows, hidden]");
  const int64_t B = ids->dim(0), S = ids->dim(1), h = word->dim(1);
  if ((seg == nullptr) != (seg_emb == nullptr)) return ctx.invalid("segment_ids and segment_embedding go together");
  if (pos->dim(1) != h || gamma->size() != h || beta->size() != h || (seg_emb && (seg_emb->rank() != 2 || seg_emb->dim(1) != h)))
    return ctx.invalid("embeddings, gamma and beta must share the hidden size " + std::to_string(h));
  if (seg && seg->shape() != ids->shape()) return ctx.invalid("segment_ids must have input_ids' shape");
  if (mask && mask->shape() != ids->shape()) return ctx.invalid("mask must have input_ids' shape");
  if (S > pos->dim(0))
    return ctx.invalid("sequence length " + std::to_string(S) + " exceeds the position embedding's " +
                       std::to_string(pos->dim(0)) + " rows");
  DLRT_ASSIGN_OR_RETURN(Dequant dw, dequant_of(ctx, word, 8, 13, "word_embedding", q));
  DLRT_ASSIGN_OR_RETURN(Dequant dp, dequant_of(ctx, pos, 9, 14, "position_embedding", q));
  Dequant ds;
  if (seg_emb) {
    DLRT_ASSIGN_OR_RETURN(ds, dequant_of(ctx, seg_emb, 10, 15, "segment_embedding", q));
  }
  DLRT_ASSIGN_OR_RETURN(Dequant dg, dequant_of(ctx, gamma, 11, 16, "gamma", q));
  DLRT_ASSIGN_OR_RETURN(Dequant db, dequant_of(ctx, beta, 12, 17, "beta", q));
  for (int64_t e = 0; e < B * S; ++e) {
    const int64_t w = index_at(*ids, e);
    if (w < 0 || w >= word->dim(0)) return ctx.invalid("input_ids value " + std::to_string(w) + " is out of range");
    if (seg) {
      const int64_t sg = index_at(*seg, e);
      if (sg < 0 || sg >= seg_emb->dim(0)) return ctx.invalid("segment_ids value " + std::to_string(sg) + " is out of range");
    }
  }
  DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, DType::kFloat32, {B, S, h}));
  const float eps = ctx.node().attr_float("epsilon", 1e-12f);
  const float hf = static_cast<float>(h);
  float* Y = y->data<float>();
  ctx.pool().parallel_for(B * S, std::max<int64_t>(1, 4096 / std::max<int64_t>(h, 1)), [&](int64_t lo, int64_t hi) {
    for (int64_t e = lo; e < hi; ++e) {
      const int64_t wr = index_at(*ids, e) * h, pr = (e % S) * h, sr = seg ? index_at(*seg, e) * h : 0;
      float* out = Y + e * h;
      float sum = 0;
      for (int64_t i = 0; i < h; ++i) {
        float v = dw(wr + i) + dp(pr + i);
        if (seg_emb) v += ds(sr + i);
        out[i] = v;
        sum += v;
      }
      const float mean = sum / hf;
      sum = 0;
      for (int64_t i = 0; i < h; ++i) {
        const float a = out[i] - mean;
        out[i] = a;
        sum += a * a;
      }
      const float sd = static_cast<float>(std::sqrt(static_cast<double>(sum / hf + eps)));
      for (int64_t i = 0; i < h; ++i) out[i] = out[i] / sd * dg(i) + db(i);
    }
  });
  if (ctx.num_outputs() > 1 && ctx.output_requested(1)) {
    DLRT_ASSIGN_OR_RETURN(Tensor * m, ctx.allocate_output(1, DType::kInt32, {B}));
    for (int64_t b = 0; b < B; ++b) {
      int32_t c = 0;  // ONNX Runtime counts the ones (zeros without a mask)
      for (int64_t t = 0; t < S && mask; ++t) c += index_at(*mask, b * S + t) == 1;
      m->data<int32_t>()[b] = c;
    }
  }
  return Status::Ok();
}

}  // namespace

Status register_contrib_quant_transformer_kernels(KernelRegistry& r) {
  KernelDef nb;
  nb.op_type = "MatMulNBits";
  nb.domain = kMsDomain;
  nb.factory = [](const ir::Node& node) -> Result<std::unique_ptr<OpKernel>> {
    DLRT_RETURN_IF_ERROR(nbits_attributes(node).status());
    return std::unique_ptr<OpKernel>(new PrepackedKernel<NBitsPrepared>(matmul_nbits, nullptr));
  };
  nb.factory_with_constants = [](const ir::Node& node, const ConstantInputs& k) -> Result<std::unique_ptr<OpKernel>> {
    DLRT_RETURN_IF_ERROR(nbits_attributes(node).status());
    return std::unique_ptr<OpKernel>(new PrepackedKernel<NBitsPrepared>(matmul_nbits, prepare_nbits(node, k)));
  };
  DLRT_RETURN_IF_ERROR(r.add(std::move(nb)));
  KernelDef qa;
  qa.op_type = "QAttention";
  qa.domain = kMsDomain;
  qa.factory = [](const ir::Node&) -> Result<std::unique_ptr<OpKernel>> {
    return std::unique_ptr<OpKernel>(new PrepackedKernel<QAttentionPrepared>(qattention, nullptr));
  };
  qa.factory_with_constants = [](const ir::Node&, const ConstantInputs& k) -> Result<std::unique_ptr<OpKernel>> {
    std::shared_ptr<QAttentionPrepared> pre;
    const Tensor* w = k(1);
    if (w && is_8bit(w->dtype()) && w->rank() == 2 && w->size() > 0) {
      pre = std::make_shared<QAttentionPrepared>();
      pre->source = w->raw_data();
      pre->packed = PackedInt8B::pack(false, w->dim(0), w->dim(1), w->raw_data(), w->dim(1), w->dtype() == DType::kInt8);
    }
    return std::unique_ptr<OpKernel>(new PrepackedKernel<QAttentionPrepared>(qattention, std::move(pre)));
  };
  DLRT_RETURN_IF_ERROR(r.add(std::move(qa)));
  return r.add_fn("QEmbedLayerNormalization", qembed_layer_norm, 1, 1000, kMsDomain);
}

}  // namespace dlrt::cpu
