// Linear quantization: QuantizeLinear, DequantizeLinear (per tensor, per axis,
// blocked), DynamicQuantizeLinear, and the integer products MatMulInteger,
// ConvInteger, QLinearMatMul, QLinearConv.
//
// Integer products subtract zero points while widening to 32 bits and then
// run the shared blocked GEMM in uint32 arithmetic: the low 32 bits equal the
// int32 result, and wrap-around on overflow is defined behaviour.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "backends/cpu/kernel_families.h"
#include "backends/cpu/kernel_util.h"
#include "backends/cpu/kernels/gemm_int8.h"
#include "backends/cpu/kernels/quantize_rows.h"
#include "backends/cpu/kernels/simple_gemm_impl.h"
#include "backends/cpu/ops/item_quantize.h"
#include "backends/cpu/ops/quantize_util.h"
#include "backends/cpu/scratch.h"
#include "core/checked_math.h"
#include "core/narrow_types.h"

namespace dlrt::cpu {
namespace {


bool is_quant_type(DType t) {
  return t == DType::kUInt8 || t == DType::kInt8 || t == DType::kUInt16 || t == DType::kInt16 || dtype_is_4bit(t) ||
         t == DType::kInt2 || t == DType::kUInt2;
}

// The float quantized types (opsets 19, 21, 23): float8 and float4e2m1.
bool is_float_quant_type(DType t) {
  return t == DType::kFloat8E4M3FN || t == DType::kFloat8E4M3FNUZ || t == DType::kFloat8E5M2 ||
         t == DType::kFloat8E5M2FNUZ || t == DType::kFloat4E2M1;
}

// The range of a quantized type: its storage type's, or 4 or 2 bits' for
// int4/uint4/int2/uint2.
struct QuantRange {
  double lo, hi;
};
template <typename Q>
QuantRange quant_range(DType t) {
  if (t == DType::kInt4) return {-8, 7};
  if (t == DType::kUInt4) return {0, 15};
  if (t == DType::kInt2) return {-2, 1};
  if (t == DType::kUInt2) return {0, 3};
  return {static_cast<double>(std::numeric_limits<Q>::lowest()), static_cast<double>(std::numeric_limits<Q>::max())};
}

template <typename Q>
Q saturate_round(double v, QuantRange range = {static_cast<double>(std::numeric_limits<Q>::lowest()),
                                               static_cast<double>(std::numeric_limits<Q>::max())}) {
  // nearbyint rounds half to even in the default rounding mode.
  const double r = std::nearbyint(v);
  if (!(r >= range.lo)) return std::isnan(r) ? Q(0) : static_cast<Q>(range.lo);
  if (r > range.hi) return static_cast<Q>(range.hi);
  return static_cast<Q>(r);
}

// Calls f(std::type_identity<Q>{}) for a quantized type's storage type Q
// (int4/uint4: int8_t/uint8_t, see quant_range).
template <typename F>
Status dispatch_quant(DType t, const KernelContext& ctx, F&& f) {
  switch (t) {
    case DType::kUInt8: case DType::kUInt4: case DType::kUInt2: return f(std::type_identity<uint8_t>{});
    case DType::kInt8: case DType::kInt4: case DType::kInt2: return f(std::type_identity<int8_t>{});
    case DType::kUInt16: return f(std::type_identity<uint16_t>{});
    case DType::kInt16: return f(std::type_identity<int16_t>{});
    default: return ctx.unsupported(std::string("quantized type ") + dtype_name(t) + " is not supported");
  }
}

// How a scale/zero-point pair maps onto the elements of x.
struct QuantParams {
  int64_t outer = 1, axis_dim = 1, inner = 1;
  int64_t block = 0;        // 0: per tensor or per axis
  bool per_tensor = true;
  int64_t scale_axis = 1;   // scale's extent along the axis (blocked case)
};

Result<QuantParams> quant_params(const KernelContext& ctx, const Tensor& x, const Tensor& scale, const Tensor* zp) {
  QuantParams p;
  // A one-element zero point goes with a one-element scale of another rank
  // ([] and [1]: ONNX's own int4 test cases mix them).
  if (zp && zp->shape() != scale.shape() && !(zp->size() == 1 && scale.size() == 1))
    return ctx.invalid("zero point and scale must have the same shape");
  const int64_t block = ctx.opset() >= 21 ? ctx.node().attr_int("block_size", 0) : 0;
  if (block < 0) return ctx.invalid("block_size must be non-negative");
  if (block == 0 && scale.size() == 1 && scale.rank() <= 1) return p;
  if (scale.rank() == 0) return p;
  if (ctx.opset() < 13) return ctx.invalid("scale must be a scalar before opset 13");
  const int64_t rank = static_cast<int64_t>(x.rank());
  DLRT_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx.node().attr_int("axis", 1), rank, ctx));
  p.per_tensor = false;
  p.axis_dim = x.dim(axis);
  for (int64_t i = 0; i < axis; ++i) p.outer *= x.dim(i);
  for (int64_t i = axis + 1; i < rank; ++i) p.inner *= x.dim(i);
  if (block == 0) {
    if (scale.rank() != 1 || scale.dim(0) != p.axis_dim)
      return ctx.invalid("per-axis scale has shape " + shape_to_string(scale.shape()) + ", expected [" +
                         std::to_string(p.axis_dim) + "]");
    return p;
  }
  p.block = block;
  p.scale_axis = ceil_div_exact(p.axis_dim, block);
  Shape want = x.shape();
  want[axis] = p.scale_axis;
  if (scale.shape() != want)
    return ctx.invalid("blocked scale has shape " + shape_to_string(scale.shape()) + ", expected " +
                       shape_to_string(want));
  return p;
}

// Calls f(element_index, param_index) over every element of x.
template <typename F>
void for_each_param(const QuantParams& p, int64_t n, F&& f) {
  if (p.per_tensor) {
    for (int64_t i = 0; i < n; ++i) f(i, 0);
    return;
  }
  int64_t e = 0;
  for (int64_t o = 0; o < p.outer; ++o)
    for (int64_t a = 0; a < p.axis_dim; ++a) {
      const int64_t base = p.block ? (o * p.scale_axis + a / p.block) * p.inner : a;
      for (int64_t in = 0; in < p.inner; ++in, ++e) f(e, p.block ? base + in : base);
    }
}

Status quantize_linear(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
  DLRT_ASSIGN_OR_RETURN(const Tensor* scale, required_input(ctx, 1));
  const Tensor* zp = ctx.input(2);
  if (!dtype_is_float(x->dtype()) && x->dtype() != DType::kInt32)
    return ctx.unsupported(std::string("input dtype ") + dtype_name(x->dtype()) + " is not supported");
  if (!dtype_is_float(scale->dtype())) return ctx.invalid("y_scale must be a float tensor");
  DType out = DType::kUInt8;
  if (zp) {
    out = zp->dtype();
  } else if (ctx.opset() >= 21 && ctx.node().has_attr("output_dtype")) {
    out = static_cast<DType>(ctx.node().attr_int("output_dtype", 2));
  }
  if (!is_quant_type(out) && !is_float_quant_type(out))
    return ctx.unsupported(std::string("output type ") + dtype_name(out) + " is not supported");
  DLRT_ASSIGN_OR_RETURN(QuantParams p, quant_params(ctx, *x, *scale, zp));
  DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, out, x->shape()));
  if (is_float_quant_type(out)) {
    // float8 / float4: x / scale + zero point, rounded to the type (saturating
    // unless saturate=0; float4 always saturates).
    const bool saturate = ctx.node().attr_int("saturate", 1) != 0;
    auto* dst = static_cast<uint8_t*>(y->raw_data());
    const auto* zs = zp ? static_cast<const uint8_t*>(zp->raw_data()) : nullptr;
    for_each_param(p, x->size(), [&](int64_t e, int64_t k) {
      const double z = zs ? narrow_to_double(out, zs[k]) : 0.0;
      const double v = static_cast<double>(float_at(*x, e) / float_at(*scale, k)) + z;
      dst[e] = narrow_from_double(out, v, saturate);
    });
    return Status::Ok();
  }
  const bool int_input = x->dtype() == DType::kInt32;
  return dispatch_quant(out, ctx, [&](auto tag) -> Status {
    using Q = typename decltype(tag)::type;
    Q* dst = y->data<Q>();
    const QuantRange range = quant_range<Q>(out);
    if constexpr (sizeof(Q) == 1) {
      if (p.per_tensor && x->dtype() == DType::kFloat32 && !dtype_is_4bit(out)) {
        // The common case: quantize_rows.h's loops, in parallel over chunks.
        const float s = float_at(*scale, 0);
        const int32_t z = zp ? int_at(*zp, 0) : 0;
        const float* xs = x->data<float>();
        auto chunk = [&](int64_t b, int64_t e) {
          if constexpr (std::is_same_v<Q, uint8_t>) quantize_linear_u8(xs + b, e - b, s, z, dst + b);
          else quantize_linear_s8(xs + b, e - b, s, z, dst + b);
        };
        const int64_t n = x->size();
        if (ctx.pool().num_threads() > 1 && n >= 65536) ctx.pool().parallel_for(n, ctx.pool().balanced_grain(n, 32768), chunk);
        else chunk(0, n);
        return Status::Ok();
      }
    }
    for_each_param(p, x->size(), [&](int64_t e, int64_t k) {
      const float s = float_at(*scale, k);
      const int32_t z = zp ? int_at(*zp, k) : 0;
      // Division in the input's precision, as the ONNX reference does.
      const double q = int_input ? static_cast<double>(x->data<int32_t>()[e]) / static_cast<double>(s)
                                 : static_cast<double>(float_at(*x, e) / s);
      dst[e] = saturate_round<Q>(std::nearbyint(q) + z, range);
    });
    return Status::Ok();
  });
}

Status dequantize_linear(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
  DLRT_ASSIGN_OR_RETURN(const Tensor* scale, required_input(ctx, 1));
  const Tensor* zp = ctx.input(2);
  if (!is_quant_type(x->dtype()) && !is_float_quant_type(x->dtype()) && x->dtype() != DType::kInt32)
    return ctx.unsupported(std::string("input dtype ") + dtype_name(x->dtype()) + " is not supported");
  if (zp && zp->dtype() != x->dtype()) return ctx.invalid("x_zero_point must have x's dtype");
  if (!dtype_is_float(scale->dtype()) || scale->dtype() == DType::kFloat64)
    return ctx.invalid("x_scale must be float32, float16 or bfloat16");
  DLRT_ASSIGN_OR_RETURN(QuantParams p, quant_params(ctx, *x, *scale, zp));
  const DType out = ctx.opset() >= 19 ? scale->dtype() : DType::kFloat32;
  DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, out, x->shape()));
  if (p.per_tensor && out == DType::kFloat32 && is_8bit(x->dtype())) {
    // The common case, one loop the compiler vectorises: (x - zp) * scale in float.
    const float z = zp ? static_cast<float>(int_at(*zp, 0)) : 0.0f, sc = float_at(*scale, 0);
    float* dst = y->data<float>();
    const int64_t n = x->size();
    if (x->dtype() == DType::kUInt8) {
      const uint8_t* src = x->data<uint8_t>();
      for (int64_t i = 0; i < n; ++i) dst[i] = (static_cast<float>(src[i]) - z) * sc;
    } else {
      const int8_t* src = x->data<int8_t>();
      for (int64_t i = 0; i < n; ++i) dst[i] = (static_cast<float>(src[i]) - z) * sc;
    }
    return Status::Ok();
  }
  const bool float_x = is_float_quant_type(x->dtype());
  return dispatch_float(out, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    T* dst = y->data<T>();
    if (float_x) {
      // float8 / float4: (x - zero point) * scale, the elements decoded.
      const auto* xs = static_cast<const uint8_t*>(x->raw_data());
      const auto* zs = zp ? static_cast<const uint8_t*>(zp->raw_data()) : nullptr;
      for_each_param(p, x->size(), [&](int64_t e, int64_t k) {
        const float z = zs ? static_cast<float>(narrow_to_double(x->dtype(), zs[k])) : 0.0f;
        dst[e] = T((static_cast<float>(narrow_to_double(x->dtype(), xs[e])) - z) * float_at(*scale, k));
      });
      return Status::Ok();
    }
    for_each_param(p, x->size(), [&](int64_t e, int64_t k) {
      const float z = zp ? static_cast<float>(int_at(*zp, k)) : 0.0f;
      dst[e] = T((static_cast<float>(int_at(*x, e)) - z) * float_at(*scale, k));
    });
    return Status::Ok();
  });
}

Status dynamic_quantize_linear(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
  if (x->dtype() != DType::kFloat32) return ctx.unsupported("only float32 input is supported");
  const float* xs = x->data<float>();
  float scale = 1;
  uint8_t zp = 0;
  // Per item (RunOptions::item_lengths): one item's valid rows give the
  // scalar scale; several items would need one each, which this op's
  // outputs cannot carry (the fused DynamicQuantizeMatMul can).
  DLRT_ASSIGN_OR_RETURN(std::optional<ItemRows> items, current_item_rows(ctx, *x));
  if (items && items->valid.size() > 1)
    return ctx.unsupported("per-item quantization of " + std::to_string(items->valid.size()) +
                           " items: this DynamicQuantizeLinear's scale and zero point go to ops that take one per "
                           "tensor (only DynamicQuantizeLinear -> MatMulInteger products, fused, quantize per item)");
  const int64_t n = items ? items->valid[0] * (x->size() / std::max<int64_t>(items->rows_per_item, 1)) : x->size();
  if (!dynamic_quant_params(xs, n, scale, zp)) return ctx.invalid("input contains NaN");
  DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, DType::kUInt8, x->shape()));
  quantize_u8(xs, x->size(), scale, zp, y->data<uint8_t>());
  if (ctx.output_requested(1)) {
    DLRT_ASSIGN_OR_RETURN(Tensor * s, ctx.allocate_output(1, DType::kFloat32, {}));
    s->data<float>()[0] = scale;
  }
  if (ctx.output_requested(2)) {
    DLRT_ASSIGN_OR_RETURN(Tensor * z, ctx.allocate_output(2, DType::kUInt8, {}));
    z->data<uint8_t>()[0] = zp;
  }
  return Status::Ok();
}

// ---------------------------------------------------------------------------
// Integer matrix products.

// Broadcast geometry of a numpy-style matmul.
struct MatMulGeometry {
  int64_t M = 1, K = 1, N = 1;
  Shape out_shape;
  int64_t batch = 1;
  Shape a_offsets, b_offsets;  // per output batch, in matrices (inline up to 8 batches: no allocation)
  int64_t a_batch = 1, b_batch = 1;           // number of matrices in each input
};

Result<MatMulGeometry> matmul_geometry(const KernelContext& ctx, const Tensor& a, const Tensor& b) {
  if (a.rank() < 1 || b.rank() < 1) return ctx.invalid("MatMul inputs must have rank >= 1");
  MatMulGeometry g;
  Shape as = a.shape(), bs = b.shape();
  const bool a_vec = as.size() == 1, b_vec = bs.size() == 1;
  if (a_vec) as.insert(as.begin(), 1);
  if (b_vec) bs.push_back(1);
  g.M = as[as.size() - 2];
  g.K = as.back();
  g.N = bs.back();
  if (bs[bs.size() - 2] != g.K)
    return ctx.invalid("inner dimensions differ: " + shape_to_string(a.shape()) + " x " + shape_to_string(b.shape()));
  const Shape ab(as.begin(), as.end() - 2), bb(bs.begin(), bs.end() - 2);
  const size_t r = std::max(ab.size(), bb.size());
  Shape batch(r);
  for (size_t i = 0; i < r; ++i) {
    const int64_t da = i + ab.size() >= r ? ab[i + ab.size() - r] : 1;
    const int64_t db = i + bb.size() >= r ? bb[i + bb.size() - r] : 1;
    if (da != db && da != 1 && db != 1)
      return ctx.invalid("batch dimensions do not broadcast: " + shape_to_string(a.shape()) + " x " +
                         shape_to_string(b.shape()));
    batch[i] = da == 1 ? db : da;
  }
  g.out_shape = batch;
  if (!a_vec) g.out_shape.push_back(g.M);
  if (!b_vec) g.out_shape.push_back(g.N);
  // Empty inputs may carry batch dims whose product does not fit: an empty
  // output has no products to compute, so no offsets to list either.
  const Result<int64_t> out_count = checked_element_count(g.out_shape);
  if (!out_count.ok()) return ctx.invalid(out_count.status().message());
  const Result<int64_t> a_batch = checked_element_count(ab), b_batch = checked_element_count(bb);
  g.a_batch = a_batch.ok() ? *a_batch : -1;  // -1: no zero point's shape matches
  g.b_batch = b_batch.ok() ? *b_batch : -1;
  if (*out_count == 0) {
    g.batch = 0;
    return g;
  }
  g.batch = element_count(batch);
  g.a_offsets.resize(static_cast<size_t>(g.batch));
  g.b_offsets.resize(static_cast<size_t>(g.batch));
  for (int64_t idx = 0; idx < g.batch; ++idx) {
    int64_t rem = idx, ao = 0, bo = 0, astride = 1, bstride = 1;
    for (size_t i = r; i-- > 0;) {
      const int64_t coord = rem % batch[i];
      rem /= batch[i];
      if (i + ab.size() >= r) {
        const int64_t d = ab[i + ab.size() - r];
        if (d != 1) ao += coord * astride;
        astride *= d;
      }
      if (i + bb.size() >= r) {
        const int64_t d = bb[i + bb.size() - r];
        if (d != 1) bo += coord * bstride;
        bstride *= d;
      }
    }
    g.a_offsets[idx] = ao;
    g.b_offsets[idx] = bo;
  }
  return g;
}

// Where zero points (or scales) of A live: one, per row of every A matrix, or per row shared by all.
enum class RowMode { kTensor, kRow, kBatchRow };

Result<RowMode> row_mode(const KernelContext& ctx, const Tensor& t, const MatMulGeometry& g, const char* what) {
  if (t.size() == 1 && t.rank() <= 1) return RowMode::kTensor;
  if (t.rank() == 1 && t.dim(0) == g.M) return RowMode::kRow;
  if (t.size() == g.a_batch * g.M && t.rank() >= 2 && t.shape().back() == 1) return RowMode::kBatchRow;
  return ctx.invalid(std::string(what) + " has unsupported shape " + shape_to_string(t.shape()));
}
Result<RowMode> col_mode(const KernelContext& ctx, const Tensor& t, const MatMulGeometry& g, const char* what) {
  if (t.size() == 1 && t.rank() <= 1) return RowMode::kTensor;
  if (t.rank() == 1 && t.dim(0) == g.N) return RowMode::kRow;
  if (t.size() == g.b_batch * g.N && t.rank() >= 2 && t.dim(t.rank() - 2) == 1) return RowMode::kBatchRow;
  return ctx.invalid(std::string(what) + " has unsupported shape " + shape_to_string(t.shape()));
}
inline int64_t mode_index(RowMode m, int64_t matrix, int64_t i, int64_t extent) {
  return m == RowMode::kTensor ? 0 : (m == RowMode::kRow ? i : matrix * extent + i);
}

// Zero points as int32, one per row/column of each matrix (or one for all).
struct ZeroPoints {
  const int32_t* values = nullptr;  // null: all zero
  int64_t stride = 0;               // 0: one value for all
  int64_t per_matrix = 0;           // offset between matrices (kBatchRow)
};

ZeroPoints widen_zero_points(const Tensor* zp, RowMode mode, int64_t extent, int32_t* storage) {
  ZeroPoints z;
  if (!zp) return z;
  for (int64_t i = 0; i < zp->size(); ++i) storage[i] = int_at(*zp, i);
  z.values = storage;
  z.stride = mode == RowMode::kTensor ? 0 : 1;
  z.per_matrix = mode == RowMode::kBatchRow ? extent : 0;
  return z;
}

// A constant B (a weight) packed once for gemm_u8s8, one per matrix of B.
struct PrepackedB {
  const void* data = nullptr;  // the tensor it was packed from
  DType dtype = DType::kUndefined;
  Shape shape;
  std::vector<std::shared_ptr<const PackedInt8B>> matrices;

  // The packed matrix bo of b, or null when b is not the tensor packed here.
  const PackedInt8B* find(const Tensor& b, int64_t bo) const {
    if (b.raw_data() != data || b.dtype() != dtype || b.shape() != shape) return nullptr;
    return matrices[static_cast<size_t>(bo)].get();
  }
};

// Packs a constant 8-bit B of rank >= 2 (null for anything else).
std::shared_ptr<const PrepackedB> prepack_b(const ir::Node&, const Tensor* b) {
  if (!b || !is_8bit(b->dtype()) || b->rank() < 2 || b->size() == 0) return nullptr;
  auto pre = std::make_shared<PrepackedB>();
  pre->data = b->raw_data();
  pre->dtype = b->dtype();
  pre->shape = b->shape();
  const int64_t K = b->dim(b->rank() - 2), N = b->dim(b->rank() - 1);
  const int64_t count = b->size() / (K * N);
  const auto* base = static_cast<const uint8_t*>(b->raw_data());
  for (int64_t m = 0; m < count; ++m)
    pre->matrices.push_back(PackedInt8B::pack(false, K, N, base + m * K * N, N, b->dtype() == DType::kInt8));
  return pre;
}

// acc[batch][M][N] = sum_k (A - a_zp)(B - b_zp), with zero points per tensor/row/column
// (gemm_int8.h: exact in int32 with wrap-around). `pre`: B packed in advance, if any.
Status integer_matmul(KernelContext& ctx, const Tensor& a, const Tensor* a_zp, const Tensor& b, const Tensor* b_zp,
                      const MatMulGeometry& g, const PrepackedB* pre, int32_t* acc,
                      const Int8FloatOutput* float_output = nullptr) {
  RowMode am = RowMode::kTensor, bm = RowMode::kTensor;
  if (a_zp) {
    if (a_zp->dtype() != a.dtype()) return ctx.invalid("a_zero_point must have A's dtype");
    DLRT_ASSIGN_OR_RETURN(am, row_mode(ctx, *a_zp, g, "a_zero_point"));
  }
  if (b_zp) {
    if (b_zp->dtype() != b.dtype()) return ctx.invalid("b_zero_point must have B's dtype");
    DLRT_ASSIGN_OR_RETURN(bm, col_mode(ctx, *b_zp, g, "b_zero_point"));
  }
  const int64_t M = g.M, K = g.K, N = g.N;
  thread_local AlignedScratch zp_scratch, b_scratch;
  int32_t* zps = zp_scratch.get<int32_t>(static_cast<size_t>((a_zp ? a_zp->size() : 0) + (b_zp ? b_zp->size() : 0)),
                                         AlignedScratch::Growth::kByHalf);
  const ZeroPoints az = widen_zero_points(a_zp, am, M, zps);
  const ZeroPoints bz = widen_zero_points(b_zp, bm, N, zps + (a_zp ? a_zp->size() : 0));
  const bool a_signed = a.dtype() == DType::kInt8, b_signed = b.dtype() == DType::kInt8;
  const auto* a_base = static_cast<const uint8_t*>(a.raw_data());
  const auto* b_base = static_cast<const uint8_t*>(b.raw_data());
  int64_t packed_matrix = -1;
  PackedInt8B scratch_b;
  for (int64_t bi = 0; bi < g.batch; ++bi) {
    const int64_t bo = g.b_offsets[bi], ao = g.a_offsets[bi];
    const PackedInt8B* pb = pre ? pre->find(b, bo) : nullptr;
    if (!pb) {
      if (bo != packed_matrix) {
        void* storage = b_scratch.bytes(PackedInt8B::bytes(K, N), AlignedScratch::Growth::kByHalf);
        scratch_b = PackedInt8B::pack_into(storage, false, K, N, b_base + bo * K * N, N, b_signed);
        packed_matrix = bo;
      }
      pb = &scratch_b;
    }
    gemm_u8s8(M, N, K, a_base + ao * M * K, K, a_signed, az.values ? az.values + ao * az.per_matrix : nullptr,
              az.stride, *pb, bz.values ? bz.values + bo * bz.per_matrix : nullptr, bz.stride, acc + bi * M * N, N,
              &ctx.pool(), nullptr, float_output);
  }
  return Status::Ok();
}

Status matmul_integer(KernelContext& ctx, const PrepackedB* pre) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* a, required_input(ctx, 0));
  DLRT_ASSIGN_OR_RETURN(const Tensor* b, required_input(ctx, 1));
  if (!is_8bit(a->dtype()) || !is_8bit(b->dtype())) return ctx.unsupported("A and B must be uint8 or int8");
  DLRT_ASSIGN_OR_RETURN(MatMulGeometry g, matmul_geometry(ctx, *a, *b));
  DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, DType::kInt32, g.out_shape));
  return integer_matmul(ctx, *a, ctx.input(2), *b, ctx.input(3), g, pre, y->data<int32_t>());
}

// Output zero point / dtype of the QLinear ops.

Status qlinear_matmul(KernelContext& ctx, const PrepackedB* pre) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* a, required_input(ctx, 0));
  DLRT_ASSIGN_OR_RETURN(const Tensor* a_scale, required_input(ctx, 1));
  DLRT_ASSIGN_OR_RETURN(const Tensor* b, required_input(ctx, 3));
  DLRT_ASSIGN_OR_RETURN(const Tensor* b_scale, required_input(ctx, 4));
  DLRT_ASSIGN_OR_RETURN(const Tensor* y_scale, required_input(ctx, 6));
  const Tensor* y_zp = ctx.input(7);
  if (!is_8bit(a->dtype()) || !is_8bit(b->dtype())) return ctx.unsupported("a and b must be uint8 or int8");
  for (const Tensor* s : {a_scale, b_scale, y_scale})
    if (!dtype_is_float(s->dtype())) return ctx.invalid("scales must be float tensors");
  if (y_scale->size() != 1) return ctx.invalid("y_scale must be a scalar");
  DLRT_ASSIGN_OR_RETURN(DType out, qlinear_out_type(ctx, y_zp, a->dtype()));
  DLRT_ASSIGN_OR_RETURN(MatMulGeometry g, matmul_geometry(ctx, *a, *b));
  DLRT_ASSIGN_OR_RETURN(RowMode asm_, row_mode(ctx, *a_scale, g, "a_scale"));
  DLRT_ASSIGN_OR_RETURN(RowMode bsm, col_mode(ctx, *b_scale, g, "b_scale"));
  thread_local AlignedScratch acc_scratch;
  int32_t* acc = acc_scratch.get<int32_t>(static_cast<size_t>(g.batch * g.M * g.N), AlignedScratch::Growth::kByHalf);
  DLRT_RETURN_IF_ERROR(integer_matmul(ctx, *a, ctx.input(2), *b, ctx.input(5), g, pre, acc));
  DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, out, g.out_shape));
  const float ys = float_at(*y_scale, 0);
  const int32_t yz = y_zp ? int_at(*y_zp, 0) : 0;
  return dispatch_quant(out, ctx, [&](auto tag) -> Status {
    using Q = typename decltype(tag)::type;
    Q* dst = y->data<Q>();
    for (int64_t bi = 0; bi < g.batch; ++bi)
      for (int64_t i = 0; i < g.M; ++i) {
        const float as = float_at(*a_scale, mode_index(asm_, g.a_offsets[bi], i, g.M));
        for (int64_t j = 0; j < g.N; ++j) {
          const float bs = float_at(*b_scale, mode_index(bsm, g.b_offsets[bi], j, g.N));
          const int64_t e = (bi * g.M + i) * g.N + j;
          dst[e] = saturate_round<Q>(std::nearbyint(static_cast<float>(acc[e]) * (as * bs / ys)) + yz);
        }
      }
    return Status::Ok();
  });
}

// ---------------------------------------------------------------------------
// Integer convolution (im2col + GEMM).

// com.dlrt MatMulIntegerToFloat (A, B, a_zero_point, b_zero_point, scale,
// bias?): MatMulInteger, then per element float(acc) * scale (one value or
// one per column), then + bias[column]: the float operations of the Cast,
// Mul and Add it replaces, in their order (ir/passes/quant_fusions.cpp).
Status matmul_integer_to_float(KernelContext& ctx, const PrepackedB* pre) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* a, required_input(ctx, 0));
  DLRT_ASSIGN_OR_RETURN(const Tensor* b, required_input(ctx, 1));
  DLRT_ASSIGN_OR_RETURN(const Tensor* scale, required_input(ctx, 4));
  const Tensor* bias = ctx.input(5);
  if (!is_8bit(a->dtype()) || !is_8bit(b->dtype())) return ctx.unsupported("A and B must be uint8 or int8");
  DLRT_ASSIGN_OR_RETURN(MatMulGeometry g, matmul_geometry(ctx, *a, *b));
  if (scale->dtype() != DType::kFloat32 || (scale->size() != 1 && scale->size() != g.N))
    return ctx.invalid("scale must be float32 with one value or one per column");
  if (bias && (bias->dtype() != DType::kFloat32 || bias->size() != g.N))
    return ctx.invalid("bias must be float32 with one value per column");
  DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, DType::kFloat32, g.out_shape));
  // The int32 products go to the output's own memory (same size); each tile
  // becomes floats in place while it is in cache.
  Int8FloatOutput fo;
  fo.scale = scale->data<float>();
  fo.scale_stride = scale->size() != 1 ? 1 : 0;
  fo.bias = bias ? bias->data<float>() : nullptr;
  return integer_matmul(ctx, *a, ctx.input(2), *b, ctx.input(3), g, pre, static_cast<int32_t*>(y->raw_data()), &fo);
}

// The float multipliers of the com.microsoft products: a_scale (one value)
// times b_scale (one value, or one per column of B) into `out`, as
// Int8FloatOutput takes them.
Result<Int8FloatOutput> ms_float_output(const KernelContext& ctx, const Tensor& a_scale, const Tensor& b_scale,
                                        const Tensor* bias, const MatMulGeometry& g, float* out) {
  for (const Tensor* t : {&a_scale, &b_scale})
    if (t->dtype() != DType::kFloat32)
      return ctx.unsupported(std::string("scales of type ") + dtype_name(t->dtype()) + " (only float32)");
  if (a_scale.size() != 1) return ctx.unsupported("a_scale with more than one value (only per-tensor A)");
  if (b_scale.size() != 1 && b_scale.size() != g.N)
    return ctx.unsupported("b_scale of shape " + shape_to_string(b_scale.shape()) +
                           ": only one value or one per column of B (" + std::to_string(g.N) + ")");
  if (bias && (bias->dtype() != DType::kFloat32 || bias->size() != g.N))
    return ctx.invalid("bias must be float32 with one value per column of B (" + std::to_string(g.N) + ")");
  const float as = a_scale.data<float>()[0];
  const float* bs = b_scale.data<float>();
  Int8FloatOutput fo;
  for (int64_t j = 0; j < b_scale.size(); ++j) out[j] = as * bs[j];
  fo.scale = out;
  fo.scale_stride = b_scale.size() == 1 ? 0 : 1;
  fo.bias = bias ? bias->data<float>() : nullptr;
  return fo;
}

// com.microsoft MatMulIntegerToFloat (A, B, a_scale, b_scale, a_zero_point?,
// b_zero_point?, bias?): the int32 product of MatMulInteger, then
// float(acc) * (a_scale * b_scale) + bias per column, in ONNX Runtime's order.
Status ms_matmul_integer_to_float(KernelContext& ctx, const PrepackedB* pre) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* a, required_input(ctx, 0));
  DLRT_ASSIGN_OR_RETURN(const Tensor* b, required_input(ctx, 1));
  DLRT_ASSIGN_OR_RETURN(const Tensor* a_scale, required_input(ctx, 2));
  DLRT_ASSIGN_OR_RETURN(const Tensor* b_scale, required_input(ctx, 3));
  if (!is_8bit(a->dtype()) || !is_8bit(b->dtype())) return ctx.unsupported("A and B must be uint8 or int8");
  DLRT_ASSIGN_OR_RETURN(MatMulGeometry g, matmul_geometry(ctx, *a, *b));
  thread_local AlignedScratch scale_scratch;
  float* scales = scale_scratch.get<float>(static_cast<size_t>(g.N), AlignedScratch::Growth::kByHalf);
  DLRT_ASSIGN_OR_RETURN(Int8FloatOutput fo, ms_float_output(ctx, *a_scale, *b_scale, ctx.input(6), g, scales));
  DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, DType::kFloat32, g.out_shape));
  return integer_matmul(ctx, *a, ctx.input(4), *b, ctx.input(5), g, pre, static_cast<int32_t*>(y->raw_data()), &fo);
}

// DynamicQuantizeMatMul with A quantized per batch item (item_quantize.h):
// one GEMM over all items' rows, A's zero point and scale per row. Each
// item's rows get the bits they get alone: integer products are exact, and
// the float stage multiplies by the same a_scale * b_scale product.
Status dynamic_quantize_matmul_items(KernelContext& ctx, const Tensor& a, const Tensor& b, const Tensor& b_scale,
                                     const ItemRows& items, const PrepackedB* pre) {
  const Tensor* b_zp = ctx.input(3);
  const Tensor* bias = ctx.input(4);
  if (b.rank() != 2) return ctx.unsupported("per-item quantization with a B of rank " + std::to_string(b.rank()));
  DLRT_ASSIGN_OR_RETURN(MatMulGeometry g, matmul_geometry(ctx, a, b));
  const int64_t K = g.K, N = g.N, rows = g.batch * g.M;
  if (b_scale.dtype() != DType::kFloat32 || (b_scale.size() != 1 && b_scale.size() != N))
    return ctx.unsupported("b_scale must be float32 with one value or one per column of B");
  if (bias && (bias->dtype() != DType::kFloat32 || bias->size() != N))
    return ctx.invalid("bias must be float32 with one value per column of B (" + std::to_string(N) + ")");
  if (b_zp && (b_zp->dtype() != b.dtype() || (b_zp->size() != 1 && b_zp->size() != N)))
    return ctx.invalid("b_zero_point must have B's dtype and one value or one per column");
  thread_local AlignedScratch a_scratch, row_scratch, b_scratch;
  auto* aq = a_scratch.get<uint8_t>(static_cast<size_t>(rows * K), AlignedScratch::Growth::kByHalf);
  auto* per_row = row_scratch.get<int32_t>(static_cast<size_t>(2 * rows + (b_zp ? b_zp->size() : 0)),
                                           AlignedScratch::Growth::kByHalf);
  int32_t* row_zp = per_row;
  auto* row_scale = reinterpret_cast<float*>(per_row + rows);
  if (!dynamic_quantize_items(a.data<float>(), K, items, aq, row_scale, row_zp)) return ctx.invalid("A contains NaN");
  int32_t* bz = b_zp ? per_row + 2 * rows : nullptr;
  for (int64_t j = 0; b_zp && j < b_zp->size(); ++j) bz[j] = int_at(*b_zp, j);
  const PackedInt8B* pb = pre ? pre->find(b, 0) : nullptr;
  PackedInt8B packed;
  if (!pb) {
    void* storage = b_scratch.bytes(PackedInt8B::bytes(K, N), AlignedScratch::Growth::kByHalf);
    packed = PackedInt8B::pack_into(storage, false, K, N, b.raw_data(), N, b.dtype() == DType::kInt8);
    pb = &packed;
  }
  Int8FloatOutput fo;
  fo.scale = b_scale.data<float>();
  fo.scale_stride = b_scale.size() == 1 ? 0 : 1;
  fo.bias = bias ? bias->data<float>() : nullptr;
  fo.row_scale = row_scale;
  DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, DType::kFloat32, g.out_shape));
  gemm_u8s8(rows, N, K, aq, K, false, row_zp, 1, *pb, bz, b_zp && b_zp->size() != 1 ? 1 : 0,
            static_cast<int32_t*>(y->raw_data()), N, &ctx.pool(), nullptr, &fo);
  return Status::Ok();
}

// com.microsoft DynamicQuantizeMatMul (A, B, b_scale, b_zero_point?, bias?):
// A float32 quantized to uint8 as DynamicQuantizeLinear does (one scale and
// zero point for all of A, or per batch item: RunOptions::item_lengths),
// then MatMulIntegerToFloat.
Status ms_dynamic_quantize_matmul(KernelContext& ctx, const PrepackedB* pre) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* a, required_input(ctx, 0));
  DLRT_ASSIGN_OR_RETURN(const Tensor* b, required_input(ctx, 1));
  DLRT_ASSIGN_OR_RETURN(const Tensor* b_scale, required_input(ctx, 2));
  if (a->dtype() != DType::kFloat32) return ctx.unsupported("A must be float32");
  if (!is_8bit(b->dtype())) return ctx.unsupported("B must be uint8 or int8");
  DLRT_ASSIGN_OR_RETURN(std::optional<ItemRows> items, current_item_rows(ctx, *a));
  if (items && a->size() > 0) return dynamic_quantize_matmul_items(ctx, *a, *b, *b_scale, *items, pre);
  float a_scale = 1;
  uint8_t a_zp = 0;
  if (!dynamic_quant_params(a->data<float>(), a->size(), a_scale, a_zp)) return ctx.invalid("A contains NaN");
  thread_local AlignedScratch a_scratch;
  auto* aq = a_scratch.get<uint8_t>(static_cast<size_t>(a->size()), AlignedScratch::Growth::kByHalf);
  quantize_u8(a->data<float>(), a->size(), a_scale, a_zp, aq);
  const Tensor a_q = Tensor::view(DType::kUInt8, a->shape(), aq);
  const Tensor a_scale_t = Tensor::view(DType::kFloat32, {}, &a_scale);
  const Tensor a_zp_t = Tensor::view(DType::kUInt8, {}, &a_zp);
  DLRT_ASSIGN_OR_RETURN(MatMulGeometry g, matmul_geometry(ctx, a_q, *b));
  thread_local AlignedScratch scale_scratch;
  float* scales = scale_scratch.get<float>(static_cast<size_t>(g.N), AlignedScratch::Growth::kByHalf);
  DLRT_ASSIGN_OR_RETURN(Int8FloatOutput fo, ms_float_output(ctx, a_scale_t, *b_scale, ctx.input(4), g, scales));
  DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, DType::kFloat32, g.out_shape));
  return integer_matmul(ctx, a_q, &a_zp_t, *b, ctx.input(3), g, pre, static_cast<int32_t*>(y->raw_data()), &fo);
}

}  // namespace

Result<DType> qlinear_out_type(const KernelContext& ctx, const Tensor* y_zp, DType fallback) {
  const DType t = y_zp ? y_zp->dtype() : fallback;
  if (!is_8bit(t)) return ctx.unsupported(std::string("output type ") + dtype_name(t) + " is not supported");
  if (y_zp && y_zp->size() != 1) return ctx.invalid("y_zero_point must be a scalar");
  return t;
}

Status register_quantize_kernels(KernelRegistry& r) {
  DLRT_RETURN_IF_ERROR(r.add_fn("QuantizeLinear", quantize_linear, 10));
  DLRT_RETURN_IF_ERROR(r.add_fn("DequantizeLinear", dequantize_linear, 10));
  DLRT_RETURN_IF_ERROR(r.add_fn("DynamicQuantizeLinear", dynamic_quantize_linear, 11));
  DLRT_RETURN_IF_ERROR(r.add(prepacked_def<PrepackedB>("MatMulInteger", matmul_integer, 1, prepack_b)));
  DLRT_RETURN_IF_ERROR(r.add(prepacked_def<PrepackedB>("QLinearMatMul", qlinear_matmul, 3, prepack_b)));
  DLRT_RETURN_IF_ERROR(r.add(
      prepacked_def<PrepackedB>("MatMulIntegerToFloat", matmul_integer_to_float, 1, prepack_b, "com.dlrt", 1)));
  DLRT_RETURN_IF_ERROR(r.add(prepacked_def<PrepackedB>("MatMulIntegerToFloat", ms_matmul_integer_to_float, 1,
                                                       prepack_b, "com.microsoft", 1)));
  DLRT_RETURN_IF_ERROR(r.add(prepacked_def<PrepackedB>("DynamicQuantizeMatMul", ms_dynamic_quantize_matmul, 1,
                                                       prepack_b, "com.microsoft", 1)));
  return Status::Ok();
}

}  // namespace dlrt::cpu
