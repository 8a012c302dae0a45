// Quantized operators of the com.microsoft domain (opset 1) that ONNX
// Runtime's quantize_static(quant_format=QOperator) emits: QLinearAdd,
// QLinearMul, QLinearSigmoid, QLinearLeakyRelu, QLinearGlobalAveragePool,
// QLinearAveragePool, QLinearConcat and QGemm (quantize_qgemm.cpp), on uint8 and int8 tensors.
//
// The integer outputs follow ONNX Runtime's x86 CPU kernels (MLAS) bit for
// bit, so the float steps are done in the same order and precision (checked
// against onnxruntime 1.30 on random single-op models; its ARM kernels differ):
//  - QLinearAdd (MLAS's AVX2 kernel): ra = sa / sc, rb = sb / sc,
//    fixed = zc - fma(ra, za, rb * zb), c = rne(fma(a, ra, fma(b, rb, fixed))).
//    ONNX Runtime passes MLAS the operand that runs along the innermost
//    broadcast dimension first, so where A is one value along it the roles
//    swap: fixed = zc - fma(rb, zb, ra * za), c = rne(fma(b, rb, fma(a, ra, fixed))).
//  - QLinearMul: c = rne(float((a - za) * (b - zb)) * ((sa * sb) / sc) + zc),
//    the product and the sum rounded separately (no fma).
//  - QLinearSigmoid / QLinearLeakyRelu / QLinearConcat: a 256-entry table
//    indexed by the input byte: x = xs * (q - zx), y = f(x) (sigmoid: MLAS's
//    rational approximation with fused multiply-adds, as its FMA3 kernel;
//    Concat: the identity), then MLAS's quantization rne(y / ys) + zy.
//  - QLinearGlobalAveragePool: acc = sum(q) - zx * HW (int32), scale =
//    xs / (ys * HW), y = rne(float(acc) * scale) + zy.
//  - QLinearAveragePool: see qlinear_average_pool (float sums, and the zero
//    point added before rounding).
//  - QGemm: acc = C + sum (a - za)(b - zb) in int32, scale = (alpha * sa) *
//    sb[j] (then / ys when quantized); y = float(acc) * scale, or
//    rne(float(acc) * scale) + zy.
// rne is round-half-to-even as x86's cvtps2dq does (a value outside int32, or
// NaN, becomes INT32_MIN), then saturation to the output type. The AVX2 paths
// and the portable ones (std::fma) give identical results.
//
// Nothing here allocates on the heap per run: the tables live on the stack
// and QGemm accumulates blocks of a row in a stack buffer.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <string>

#include "backends/cpu/kernel_families.h"
#include "backends/cpu/kernel_util.h"
#include "backends/cpu/kernels/gemm_int8.h"
#include "backends/cpu/kernels/isa.h"
#include "backends/cpu/kernels/isa_target.h"
#include "backends/cpu/kernels/quantize_rows.h"
#include "backends/cpu/ops/broadcast.h"
#include "backends/cpu/ops/qlinear_util.h"
#include "backends/cpu/scratch.h"
#include "core/checked_math.h"

#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>
#define DLRT_QOP_X86 1
#endif

namespace dlrt::cpu {
namespace {

using namespace qlinear;

// ---------------------------------------------------------------------------
// QLinearAdd, QLinearMul.

// One run of QLinearAdd: out[i] = rne(fma(x[i], rx, fma(y[i], ry, fixed)))
// (y == nullptr: fma(x[i], rx, fixed)), saturated.
template <typename Q>
void qadd_run_generic(const Q* x, float rx, const Q* y, float ry, float fixed, Q* out, int64_t n) {
  if (y) {
    for (int64_t i = 0; i < n; ++i)
      out[i] = saturate<Q>(cvt_rne(std::fma(static_cast<float>(x[i]), rx, std::fma(static_cast<float>(y[i]), ry, fixed))));
  } else {
    for (int64_t i = 0; i < n; ++i) out[i] = saturate<Q>(cvt_rne(std::fma(static_cast<float>(x[i]), rx, fixed)));
  }
}

#ifdef DLRT_QOP_X86
template <typename Q>
DLRT_AVX2 inline __m256 load8_as_float(const Q* p) {
  const __m128i v = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
  if constexpr (std::is_same_v<Q, uint8_t>) return _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(v));
  else return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(v));
}

// Rounds (cvtps2dq) and saturates 8 floats to Q, as packs_epi32 + packus/packs_epi16 do.
template <typename Q>
DLRT_AVX2 inline void store8_saturated(__m256 v, Q* p) {
  const __m256i i32 = _mm256_cvtps_epi32(v);
  const __m128i i16 = _mm_packs_epi32(_mm256_castsi256_si128(i32), _mm256_extracti128_si256(i32, 1));
  __m128i q;
  if constexpr (std::is_same_v<Q, uint8_t>) q = _mm_packus_epi16(i16, i16);
  else q = _mm_packs_epi16(i16, i16);
  _mm_storel_epi64(reinterpret_cast<__m128i*>(p), q);
}

template <typename Q>
DLRT_AVX2 void qadd_run_avx2(const Q* x, float rx, const Q* y, float ry, float fixed, Q* out, int64_t n) {
  const __m256 vrx = _mm256_set1_ps(rx), vry = _mm256_set1_ps(ry), vfixed = _mm256_set1_ps(fixed);
  int64_t i = 0;
  if (y) {
    for (; i + 8 <= n; i += 8)
      store8_saturated<Q>(_mm256_fmadd_ps(load8_as_float(x + i), vrx, _mm256_fmadd_ps(load8_as_float(y + i), vry, vfixed)),
                          out + i);
  } else {
    for (; i + 8 <= n; i += 8) store8_saturated<Q>(_mm256_fmadd_ps(load8_as_float(x + i), vrx, vfixed), out + i);
  }
  qadd_run_generic<Q>(x + i, rx, y ? y + i : nullptr, ry, fixed, out + i, n - i);
}
#endif

template <typename Q>
void qadd_run(const Q* x, float rx, const Q* y, float ry, float fixed, Q* out, int64_t n) {
#ifdef DLRT_QOP_X86
  if (cpu_has_avx2()) return qadd_run_avx2<Q>(x, rx, y, ry, fixed, out, n);
#endif
  qadd_run_generic<Q>(x, rx, y, ry, fixed, out, n);
}

struct QBinaryParams {
  float sa = 1, sb = 1, sc = 1;
  int32_t za = 0, zb = 0, zc = 0;
};

// MLAS's constant part of QLinearAdd with `x` the operand multiplied last.
inline float qadd_fixed(float rx, int32_t zx, float ry, int32_t zy, int32_t zc) {
  return static_cast<float>(zc) - std::fma(rx, static_cast<float>(zx), ry * static_cast<float>(zy));
}

template <typename Q>
void qlinear_add_typed(const BroadcastPlan<2>& plan, const Q* a, const Q* b, Q* c, const QBinaryParams& p,
                       bool a_scalar_everywhere, ThreadPool* pool) {
  const float ra = p.sa / p.sc, rb = p.sb / p.sc;
  const float fixed_ab = qadd_fixed(ra, p.za, rb, p.zb, p.zc);  // A multiplied last
  const float fixed_ba = qadd_fixed(rb, p.zb, ra, p.za, p.zc);  // B multiplied last
  for_each_run(plan, pool, [&](int64_t oo, const std::array<int64_t, 2>& off, int64_t n, const std::array<int64_t, 2>& st) {
    const Q* pa = a + off[0];
    const Q* pb = b + off[1];
    if (a_scalar_everywhere || (st[0] == 0 && st[1] != 0)) {
      // A is one value along the run: ONNX Runtime runs B first, A folded in.
      qadd_run<Q>(pb, rb, nullptr, 0.0f, std::fma(static_cast<float>(pa[0]), ra, fixed_ba), c + oo, n);
    } else if (st[1] == 0) {
      qadd_run<Q>(pa, ra, nullptr, 0.0f, std::fma(static_cast<float>(pb[0]), rb, fixed_ab), c + oo, n);
    } else {
      qadd_run<Q>(pa, ra, pb, rb, fixed_ab, c + oo, n);
    }
  });
}

// One run of QLinearMul: out[i] = rne(float((x[i] - zx) * (y[i] - zy)) * ratio + zc)
// (y == nullptr: y[i] is yv), the product and the sum rounded separately.
template <typename Q>
void qmul_run_generic(const Q* x, int32_t zx, const Q* y, int32_t yv, int32_t zy, float ratio, float zc, Q* out,
                      int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const int32_t prod = (static_cast<int32_t>(x[i]) - zx) * ((y ? static_cast<int32_t>(y[i]) : yv) - zy);
    const float scaled = static_cast<float>(prod) * ratio;
    out[i] = saturate<Q>(cvt_rne(scaled + zc));
  }
}

#ifdef DLRT_QOP_X86
template <typename Q>
DLRT_AVX2 inline __m256i load8_as_int(const Q* p) {
  const __m128i v = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
  if constexpr (std::is_same_v<Q, uint8_t>) return _mm256_cvtepu8_epi32(v);
  else return _mm256_cvtepi8_epi32(v);
}

template <typename Q>
DLRT_AVX2 void qmul_run_avx2(const Q* x, int32_t zx, const Q* y, int32_t yv, int32_t zy, float ratio, float zc,
                                 Q* out, int64_t n) {
  const __m256i vzx = _mm256_set1_epi32(zx), vzy = _mm256_set1_epi32(zy), vyv = _mm256_set1_epi32(yv - zy);
  const __m256 vratio = _mm256_set1_ps(ratio), vzc = _mm256_set1_ps(zc);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256i xa = _mm256_sub_epi32(load8_as_int(x + i), vzx);
    const __m256i ya = y ? _mm256_sub_epi32(load8_as_int(y + i), vzy) : vyv;
    // Multiply, then add: two roundings, as MLAS does (no fma).
    const __m256 scaled = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_mullo_epi32(xa, ya)), vratio);
    store8_saturated<Q>(_mm256_add_ps(scaled, vzc), out + i);
  }
  qmul_run_generic<Q>(x + i, zx, y ? y + i : nullptr, yv, zy, ratio, zc, out + i, n - i);
}
#endif

template <typename Q>
void qmul_run(const Q* x, int32_t zx, const Q* y, int32_t yv, int32_t zy, float ratio, float zc, Q* out, int64_t n) {
#ifdef DLRT_QOP_X86
  if (cpu_has_avx2()) return qmul_run_avx2<Q>(x, zx, y, yv, zy, ratio, zc, out, n);
#endif
  qmul_run_generic<Q>(x, zx, y, yv, zy, ratio, zc, out, n);
}

template <typename Q>
void qlinear_mul_typed(const BroadcastPlan<2>& plan, const Q* a, const Q* b, Q* c, const QBinaryParams& p,
                       ThreadPool* pool) {
  const float ratio = p.sa * p.sb / p.sc;
  const float zc = static_cast<float>(p.zc);
  for_each_run(plan, pool, [&](int64_t oo, const std::array<int64_t, 2>& off, int64_t n, const std::array<int64_t, 2>& st) {
    const Q* pa = a + off[0];
    const Q* pb = b + off[1];
    // The integer product commutes, so either operand may be the single value.
    if (st[0] && st[1]) qmul_run<Q>(pa, p.za, pb, 0, p.zb, ratio, zc, c + oo, n);
    else if (st[0]) qmul_run<Q>(pa, p.za, nullptr, pb[0], p.zb, ratio, zc, c + oo, n);
    else qmul_run<Q>(pb, p.zb, nullptr, pa[0], p.za, ratio, zc, c + oo, n);
  });
}

template <bool kAdd>
Status qlinear_binary(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* a, required_input(ctx, 0));
  DLRT_ASSIGN_OR_RETURN(const Tensor* b, required_input(ctx, 3));
  if (!is_8bit(a->dtype())) return ctx.unsupported(std::string("A has dtype ") + dtype_name(a->dtype()) + " (uint8 or int8 expected)");
  if (b->dtype() != a->dtype()) return ctx.invalid("A and B must have the same dtype");
  QBinaryParams p;
  DLRT_ASSIGN_OR_RETURN(p.sa, scale_input(ctx, 1, "A_scale"));
  DLRT_ASSIGN_OR_RETURN(p.za, zero_point_input(ctx, 2, a->dtype(), "A_zero_point"));
  DLRT_ASSIGN_OR_RETURN(p.sb, scale_input(ctx, 4, "B_scale"));
  DLRT_ASSIGN_OR_RETURN(p.zb, zero_point_input(ctx, 5, a->dtype(), "B_zero_point"));
  DLRT_ASSIGN_OR_RETURN(p.sc, scale_input(ctx, 6, "C_scale"));
  DLRT_ASSIGN_OR_RETURN(p.zc, zero_point_input(ctx, 7, a->dtype(), "C_zero_point"));
  DLRT_ASSIGN_OR_RETURN(Shape out_shape, broadcast_shapes(a->shape(), b->shape()));
  DLRT_ASSIGN_OR_RETURN(auto plan, make_broadcast_plan<2>(out_shape, {&a->shape(), &b->shape()}));
  DLRT_ASSIGN_OR_RETURN(Tensor * c, ctx.allocate_output_uninitialized(0, a->dtype(), out_shape));
  // A single-element A is the scalar operand even when B has one element too.
  const bool a_scalar = a->size() == 1;
  return dispatch_8bit(a->dtype(), ctx, [&](auto tag) -> Status {
    using Q = typename decltype(tag)::type;
    if constexpr (kAdd) qlinear_add_typed<Q>(plan, a->data<Q>(), b->data<Q>(), c->data<Q>(), p, a_scalar, &ctx.pool());
    else qlinear_mul_typed<Q>(plan, a->data<Q>(), b->data<Q>(), c->data<Q>(), p, &ctx.pool());
    return Status::Ok();
  });
}

Status qlinear_add(KernelContext& ctx) { return qlinear_binary<true>(ctx); }
Status qlinear_mul(KernelContext& ctx) { return qlinear_binary<false>(ctx); }

// ---------------------------------------------------------------------------
// Lookup-table activations: QLinearSigmoid, QLinearLeakyRelu.

// MLAS's logistic: Eigen's rational approximation on x clamped to [-18, 18],
// its multiply-adds fused (the FMA3 kernel), clamped to [0, 1].
float mlas_logistic(float x) {
  constexpr float kAlpha[] = {4.37031012579801e-11f, 1.15627324459942e-07f, 6.08574864600143e-05f,
                              8.51377133304701e-03f, 2.48287947061529e-01f};
  constexpr float kBeta[] = {6.10247389755681e-13f, 5.76102136993427e-09f, 6.29106785017040e-06f,
                             1.70198817374094e-03f, 1.16817656904453e-01f, 9.93151921023180e-01f};
  if (std::isnan(x)) return x;
  const float v = std::min(18.0f, std::max(-18.0f, x));
  const float v2 = v * v;
  float p = std::fma(v2, kAlpha[0], kAlpha[1]);
  for (int i = 2; i < 5; ++i) p = std::fma(p, v2, kAlpha[i]);
  p = p * v;
  float q = std::fma(v2, kBeta[0], kBeta[1]);
  for (int i = 2; i < 6; ++i) q = std::fma(q, v2, kBeta[i]);
  return std::min(1.0f, std::max(0.0f, p / q + 0.5f));
}

enum class LookupOp { kSigmoid, kLeakyRelu };

template <LookupOp kOp>
Status qlinear_lookup(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
  if (!is_8bit(x->dtype())) return ctx.unsupported(std::string("X has dtype ") + dtype_name(x->dtype()) + " (uint8 or int8 expected)");
  DLRT_ASSIGN_OR_RETURN(float xs, scale_input(ctx, 1, "X_scale"));
  DLRT_ASSIGN_OR_RETURN(int32_t xz, zero_point_input(ctx, 2, x->dtype(), "X_zero_point"));
  DLRT_ASSIGN_OR_RETURN(float ys, scale_input(ctx, 3, "Y_scale"));
  DLRT_ASSIGN_OR_RETURN(int32_t yz, zero_point_input(ctx, 4, x->dtype(), "Y_zero_point"));
  const float alpha = ctx.node().attr_float("alpha", 0.01f);
  DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, x->dtype(), x->shape()));
  return dispatch_8bit(x->dtype(), ctx, [&](auto tag) -> Status {
    using Q = typename decltype(tag)::type;
    // table[byte]: the output for the input whose storage byte is `byte`.
    std::array<Q, 256> table;
    for (int i = 0; i < 256; ++i) {
      const Q q = static_cast<Q>(static_cast<uint8_t>(i));
      const float v = xs * static_cast<float>(static_cast<int32_t>(q) - xz);
      float f;
      if constexpr (kOp == LookupOp::kSigmoid) f = mlas_logistic(v);
      else f = v >= 0.0f ? v : alpha * v;
      table[static_cast<size_t>(i)] = requantize<Q>(f / ys, yz);
    }
    const uint8_t* src = reinterpret_cast<const uint8_t*>(x->data<Q>());
    auto* dst = reinterpret_cast<uint8_t*>(y->data<Q>());
    const auto* bytes = reinterpret_cast<const uint8_t*>(table.data());
    auto body = [&](int64_t b, int64_t e) { lookup_bytes(bytes, src + b, e - b, dst + b); };
    const int64_t n = x->size();
    if (ctx.pool().num_threads() > 1 && n >= kParallelElements)
      ctx.pool().parallel_for(n, ctx.pool().balanced_grain(n, kParallelGrain), body);
    else
      body(0, n);
    return Status::Ok();
  });
}

// ---------------------------------------------------------------------------
// QLinearGlobalAveragePool.

Status qlinear_global_average_pool(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
  if (!is_8bit(x->dtype())) return ctx.unsupported(std::string("X has dtype ") + dtype_name(x->dtype()) + " (uint8 or int8 expected)");
  if (x->rank() < 3) return ctx.invalid("X must have rank >= 3, got shape " + shape_to_string(x->shape()));
  DLRT_ASSIGN_OR_RETURN(float xs, scale_input(ctx, 1, "x_scale"));
  DLRT_ASSIGN_OR_RETURN(int32_t xz, zero_point_input(ctx, 2, x->dtype(), "x_zero_point"));
  DLRT_ASSIGN_OR_RETURN(float ys, scale_input(ctx, 3, "y_scale"));
  DLRT_ASSIGN_OR_RETURN(int32_t yz, zero_point_input(ctx, 4, x->dtype(), "y_zero_point"));
  const bool channels_last = ctx.node().attr_int("channels_last", 0) != 0;
  const size_t rank = x->rank();
  const int64_t N = x->dim(0);
  const int64_t C = channels_last ? x->dim(rank - 1) : x->dim(1);
  const size_t sp_begin = channels_last ? 1 : 2;
  Shape out_shape = x->shape();
  int64_t image = 1;
  for (size_t d = sp_begin; d < sp_begin + rank - 2; ++d) {
    image = checked_mul(image, x->dim(d)).value_or(INT64_MAX);  // an empty x's dims may not multiply
    out_shape[d] = 1;
  }
  if (image <= 0 || image >= (int64_t{1} << 24))
    return ctx.invalid("the image size " + std::to_string(image) + " is out of range (1 to 2^24 - 1)");
  const float scale = xs / (ys * static_cast<float>(image));
  DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, x->dtype(), out_shape));
  return dispatch_8bit(x->dtype(), ctx, [&](auto tag) -> Status {
    using Q = typename decltype(tag)::type;
    const Q* src = x->data<Q>();
    Q* dst = y->data<Q>();
    const uint32_t bias = static_cast<uint32_t>(-xz) * static_cast<uint32_t>(image);
    auto requant = [&](uint32_t acc) {
      return requantize<Q>(static_cast<float>(static_cast<int32_t>(acc)) * scale, yz);
    };
    if (!channels_last) {
      ctx.pool().parallel_for(N * C, ctx.pool().balanced_grain(N * C, std::max<int64_t>(1, 65536 / image)),
                              [&](int64_t b, int64_t e) {
                                for (int64_t nc = b; nc < e; ++nc) {
                                  const Q* p = src + nc * image;
                                  int32_t s = 0;
                                  for (int64_t i = 0; i < image; ++i) s += p[i];
                                  dst[nc] = requant(bias + static_cast<uint32_t>(s));
                                }
                              });
    } else {
      // Channel blocks on the stack, summed over the image.
      constexpr int64_t kBlock = 256;
      const int64_t blocks = (C + kBlock - 1) / kBlock;
      ctx.pool().parallel_for(N * blocks, 1, [&](int64_t b, int64_t e) {
        for (int64_t u = b; u < e; ++u) {
          const int64_t n = u / blocks, c0 = (u % blocks) * kBlock, cn = std::min(kBlock, C - c0);
          std::array<int32_t, kBlock> acc{};
          const Q* base = src + n * image * C + c0;
          for (int64_t i = 0; i < image; ++i)
            for (int64_t c = 0; c < cn; ++c) acc[static_cast<size_t>(c)] += base[i * C + c];
          for (int64_t c = 0; c < cn; ++c)
            dst[n * C + c0 + c] = requant(bias + static_cast<uint32_t>(acc[static_cast<size_t>(c)]));
        }
      });
    }
    return Status::Ok();
  });
}

// ---------------------------------------------------------------------------
// QLinearConcat: each input requantized through a 256-entry table
// (rne(xs * (q - zx) / ys) + zy, MLAS's quantization), then concatenated.

Status qlinear_concat(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(float ys, scale_input(ctx, 0, "Y_scale"));
  const Tensor* yzt = ctx.input(1);
  if (!yzt) return ctx.invalid("Y_zero_point is missing");
  const DType dt = yzt->dtype();
  if (!is_8bit(dt)) return ctx.unsupported(std::string("Y_zero_point has dtype ") + dtype_name(dt) + " (uint8 or int8 expected)");
  DLRT_ASSIGN_OR_RETURN(int32_t yz, zero_point_input(ctx, 1, dt, "Y_zero_point"));
  if (ctx.num_inputs() < 5 || (ctx.num_inputs() - 2) % 3 != 0)
    return ctx.invalid("inputs must be Y_scale, Y_zero_point and (X, X_scale, X_zero_point) triples");
  const size_t count = (ctx.num_inputs() - 2) / 3;
  const Tensor* first = nullptr;
  for (size_t k = 0; k < count; ++k) {
    const Tensor* x = ctx.input(2 + 3 * k);
    if (!x) return ctx.invalid("input " + std::to_string(k) + " is missing");
    if (x->dtype() != dt) return ctx.invalid("every input must have Y_zero_point's dtype");
    if (!first) first = x;
  }
  const int64_t rank = static_cast<int64_t>(first->rank());
  if (rank == 0) return ctx.invalid("inputs must have rank >= 1");
  DLRT_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx.node().attr_int("axis", 0), rank, ctx));
  Shape out_shape = first->shape();
  out_shape[static_cast<size_t>(axis)] = 0;
  for (size_t k = 0; k < count; ++k) {
    const Tensor* x = ctx.input(2 + 3 * k);
    if (static_cast<int64_t>(x->rank()) != rank) return ctx.invalid("inputs must have the same rank");
    for (int64_t d = 0; d < rank; ++d)
      if (d != axis && x->dim(static_cast<size_t>(d)) != first->dim(static_cast<size_t>(d)))
        return ctx.invalid("input shapes " + shape_to_string(first->shape()) + " and " + shape_to_string(x->shape()) +
                           " differ outside the axis");
    // Empty inputs can hold any extent: their sum is checked.
    const std::optional<int64_t> extent =
        checked_add(out_shape[static_cast<size_t>(axis)], x->dim(static_cast<size_t>(axis)));
    if (!extent) return ctx.invalid("the concatenated axis overflows 64 bits");
    out_shape[static_cast<size_t>(axis)] = *extent;
  }
  DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, dt, out_shape));
  int64_t outer = 0, inner = 1;  // an empty y copies nothing (its dims' product may not fit)
  if (y->size() != 0) {
    outer = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= out_shape[static_cast<size_t>(d)];
    for (int64_t d = axis + 1; d < rank; ++d) inner *= out_shape[static_cast<size_t>(d)];
  }
  const int64_t out_pitch = out_shape[static_cast<size_t>(axis)] * inner;
  return dispatch_8bit(dt, ctx, [&](auto tag) -> Status {
    using Q = typename decltype(tag)::type;
    Q* dst = y->data<Q>();
    int64_t offset = 0;  // of this input's slab within an output row
    for (size_t k = 0; k < count; ++k) {
      const Tensor* x = ctx.input(2 + 3 * k);
      DLRT_ASSIGN_OR_RETURN(float xs, scale_input(ctx, 3 + 3 * k, "X_scale"));
      DLRT_ASSIGN_OR_RETURN(int32_t xz, zero_point_input(ctx, 4 + 3 * k, dt, "X_zero_point"));
      std::array<Q, 256> table;
      for (int i = 0; i < 256; ++i) {
        const Q q = static_cast<Q>(static_cast<uint8_t>(i));
        table[static_cast<size_t>(i)] = requantize<Q>(xs * static_cast<float>(static_cast<int32_t>(q) - xz) / ys, yz);
      }
      const int64_t pitch = x->dim(static_cast<size_t>(axis)) * inner;
      const uint8_t* src = reinterpret_cast<const uint8_t*>(x->data<Q>());
      for (int64_t o = 0; o < outer; ++o) {
        const uint8_t* s = src + o * pitch;
        Q* d = dst + o * out_pitch + offset;
        lookup_bytes(reinterpret_cast<const uint8_t*>(table.data()), s, pitch, reinterpret_cast<uint8_t*>(d));
      }
      offset += pitch;
    }
    return Status::Ok();
  });
}

// ---------------------------------------------------------------------------
// QLinearAveragePool. A window that covers the whole image without padding
// is QLinearGlobalAveragePool (ONNX Runtime switches to it); otherwise the
// window's dequantized values xs * (q - zx) are summed in float in h, w, d
// order, divided by the count, and y = nearbyint(avg / ys + zy) saturated
// (the zero point added before rounding, unlike MLAS's kernels).

Status qlinear_average_pool(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
  if (!is_8bit(x->dtype())) return ctx.unsupported(std::string("X has dtype ") + dtype_name(x->dtype()) + " (uint8 or int8 expected)");
  const size_t rank = x->rank();
  if (rank < 3 || rank > 5) return ctx.unsupported("X must have 1 to 3 spatial dimensions, got shape " + shape_to_string(x->shape()));
  DLRT_ASSIGN_OR_RETURN(float xs, scale_input(ctx, 1, "x_scale"));
  DLRT_ASSIGN_OR_RETURN(int32_t xz, zero_point_input(ctx, 2, x->dtype(), "x_zero_point"));
  DLRT_ASSIGN_OR_RETURN(float ys, scale_input(ctx, 3, "y_scale"));
  DLRT_ASSIGN_OR_RETURN(int32_t yz, zero_point_input(ctx, 4, x->dtype(), "y_zero_point"));
  const ir::Node& node = ctx.node();
  const bool channels_last = node.attr_int("channels_last", 0) != 0;
  const bool include_pad = node.attr_int("count_include_pad", 0) != 0;
  const bool ceil_mode = node.attr_int("ceil_mode", 0) != 0;
  const size_t sd = rank - 2;
  const IntList kernel = ints_attr(node, "kernel_shape", 0, 0);
  if (kernel.size() != sd) return ctx.invalid("kernel_shape must have one value per spatial dimension");
  const IntList strides = ints_attr(node, "strides", sd, 1);
  IntList pads = ints_attr(node, "pads", 2 * sd, 0);
  const IntList dil = ints_attr(node, "dilations", sd, 1);
  if (strides.size() != sd || pads.size() != 2 * sd || dil.size() != sd)
    return ctx.invalid("strides, pads or dilations have the wrong length");
  const std::string auto_pad = node.attr_string("auto_pad", "NOTSET");
  const int64_t N = x->dim(0);
  const int64_t C = channels_last ? x->dim(rank - 1) : x->dim(1);
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, k[3] = {1, 1, 1}, st[3] = {1, 1, 1}, pb[3] = {0, 0, 0};
  bool whole_image = true;
  auto overflow = [&] {
    return ctx.invalid("the pooling geometry overflows 64 bits (kernel_shape " + shape_to_string(kernel) +
                       ", strides " + shape_to_string(strides) + ", pads " + shape_to_string(pads) + ")");
  };
  for (size_t i = 0; i < sd; ++i) {
    in[i] = x->dim(channels_last ? 1 + i : 2 + i);
    k[i] = kernel[i];
    st[i] = strides[i];
    if (k[i] <= 0 || st[i] <= 0 || pads[i] < 0 || pads[i + sd] < 0) return ctx.invalid("kernel_shape and strides must be positive, pads non-negative");
    if (dil[i] != 1) return ctx.unsupported("dilations other than 1 are not supported");
    // Sizes from the attributes in checked arithmetic (docs/limits.md).
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      out[i] = ceil_div_exact(in[i], st[i]);
      const std::optional<int64_t> reach = checked_add(out[i] == 0 ? 0 : (out[i] - 1) * st[i], k[i]);
      if (!reach || *reach > INT64_MAX / 4) return overflow();
      const int64_t need = std::max<int64_t>(0, *reach - in[i]);
      pads[i] = auto_pad == "SAME_LOWER" ? need - need / 2 : need / 2;
      pads[i + sd] = need - pads[i];
    } else if (auto_pad == "VALID") {
      pads[i] = pads[i + sd] = 0;
      if (in[i] < k[i]) return ctx.invalid("the kernel is larger than the input");
      out[i] = (in[i] - k[i]) / st[i] + 1;
    } else if (auto_pad == "NOTSET") {
      std::optional<int64_t> padded = checked_add(in[i], pads[i]);
      if (padded) padded = checked_add(*padded, pads[i + sd]);
      // Past 2^61 the window positions (start + kernel) could wrap.
      if (!padded || *padded > INT64_MAX / 4) return overflow();
      const int64_t span = *padded - k[i];
      if (span < 0) return ctx.invalid("the kernel is larger than the padded input");
      out[i] = (ceil_mode ? ceil_div_exact(span, st[i]) : span / st[i]) + 1;
      if (ceil_mode && checked_mul(out[i] - 1, st[i]).value_or(INT64_MAX) >= in[i] + pads[i]) --out[i];
    } else {
      return ctx.invalid("unknown auto_pad '" + auto_pad + "'");
    }
    pb[i] = pads[i];
    if (k[i] != in[i] || pads[i] != 0 || pads[i + sd] != 0) whole_image = false;
  }
  Shape out_shape = x->shape();
  for (size_t i = 0; i < sd; ++i) out_shape[channels_last ? 1 + i : 2 + i] = out[i];
  if (whole_image) {
    // The global pool, with the output shape of this op (all spatial dims 1).
    return qlinear_global_average_pool(ctx);
  }
  DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, x->dtype(), out_shape));
  const std::optional<int64_t> window = checked_product({k[0], k[1], k[2]});
  const std::optional<int64_t> in_extent = checked_product({in[0], in[1], in[2]});
  const std::optional<int64_t> out_extent = checked_product({out[0], out[1], out[2]});
  if (!window || !in_extent || !out_extent) return overflow();
  if (y->size() == 0) return Status::Ok();
  const int64_t in_plane = *in_extent, out_plane = *out_extent, kernel_size = *window;
  return dispatch_8bit(x->dtype(), ctx, [&](auto tag) -> Status {
    using Q = typename decltype(tag)::type;
    std::array<float, 256> deq;
    for (int i = 0; i < 256; ++i)
      deq[static_cast<size_t>(i)] = xs * static_cast<float>(static_cast<int32_t>(static_cast<Q>(static_cast<uint8_t>(i))) - xz);
    const uint8_t* src = reinterpret_cast<const uint8_t*>(x->data<Q>());
    Q* dst = y->data<Q>();
    // Element (n, c, spatial p) lives at n*C*plane + c*plane + p (NCHW) or (n*plane + p)*C + c (NHWC).
    auto body = [&](int64_t b, int64_t e) {
      for (int64_t u = b; u < e; ++u) {  // u = (n * C + c) * out_plane + output position
        const int64_t nc = u / out_plane, op = u % out_plane, n = nc / C, c = nc % C;
        const int64_t o0 = op / (out[1] * out[2]), o1 = (op / out[2]) % out[1], o2 = op % out[2];
        int64_t lo[3], hi[3];
        const int64_t oi[3] = {o0, o1, o2};
        for (int d = 0; d < 3; ++d) {
          const int64_t start = oi[d] * st[d] - pb[d];
          hi[d] = std::min(start + k[d], in[d]);
          lo[d] = std::max<int64_t>(start, 0);
        }
        float sum = 0.0f;
        for (int64_t h = lo[0]; h < hi[0]; ++h)
          for (int64_t w = lo[1]; w < hi[1]; ++w)
            for (int64_t dd = lo[2]; dd < hi[2]; ++dd) {
              const int64_t p = (h * in[1] + w) * in[2] + dd;
              const int64_t idx = channels_last ? (n * in_plane + p) * C + c : nc * in_plane + p;
              sum += deq[src[idx]];
            }
        const int64_t cnt = include_pad ? kernel_size : (hi[0] - lo[0]) * (hi[1] - lo[1]) * (hi[2] - lo[2]);
        const float avg = sum / static_cast<float>(cnt);
        const float q = avg / ys + static_cast<float>(yz);
        const float clamped = std::min(std::max(q, static_cast<float>(std::numeric_limits<Q>::lowest())),
                                       static_cast<float>(std::numeric_limits<Q>::max()));
        const int64_t oidx = channels_last ? (n * out_plane + op) * C + c : u;
        dst[oidx] = saturate<Q>(cvt_rne(clamped));
      }
    };
    const int64_t total = N * C * out_plane;
    ctx.pool().parallel_for(total, ctx.pool().balanced_grain(total, std::max<int64_t>(1, 16384 / kernel_size)), body);
    return Status::Ok();
  });
}

}  // namespace

Status register_quantize_contrib_kernels(KernelRegistry& r) {
  DLRT_RETURN_IF_ERROR(r.add_fn("QLinearAdd", qlinear_add, 1, 1000, kMsDomain));
  DLRT_RETURN_IF_ERROR(r.add_fn("QLinearMul", qlinear_mul, 1, 1000, kMsDomain));
  DLRT_RETURN_IF_ERROR(r.add_fn("QLinearSigmoid", qlinear_lookup<LookupOp::kSigmoid>, 1, 1000, kMsDomain));
  DLRT_RETURN_IF_ERROR(r.add_fn("QLinearLeakyRelu", qlinear_lookup<LookupOp::kLeakyRelu>, 1, 1000, kMsDomain));
  DLRT_RETURN_IF_ERROR(r.add_fn("QLinearGlobalAveragePool", qlinear_global_average_pool, 1, 1000, kMsDomain));
  DLRT_RETURN_IF_ERROR(r.add(qlinear::qgemm_kernel_def()));
  DLRT_RETURN_IF_ERROR(r.add_fn("QLinearConcat", qlinear_concat, 1, 1000, kMsDomain));
  DLRT_RETURN_IF_ERROR(r.add_fn("QLinearAveragePool", qlinear_average_pool, 1, 1000, kMsDomain));
  return Status::Ok();
}

}  // namespace dlrt::cpu
