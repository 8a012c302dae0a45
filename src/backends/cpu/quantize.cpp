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
#include <string>
#include <type_traits>
#include <vector>

#include "backends/cpu/depthwise_int8.h"
#include "backends/cpu/gemm_int8.h"
#include "backends/cpu/kernel_families.h"
#include "backends/cpu/kernel_util.h"
#include "backends/cpu/quantize_rows.h"
#include "backends/cpu/scratch.h"
#include "backends/cpu/simple_gemm_impl.h"

namespace dlrt::cpu {
namespace {

bool is_8bit(DType t) { return t == DType::kUInt8 || t == DType::kInt8; }

bool is_quant_type(DType t) {
  return t == DType::kUInt8 || t == DType::kInt8 || t == DType::kUInt16 || t == DType::kInt16;
}

// Reads element i of an 8/16/32-bit integer tensor.
inline int32_t int_at(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DType::kUInt8: return t.data<uint8_t>()[i];
    case DType::kInt8: return t.data<int8_t>()[i];
    case DType::kUInt16: return t.data<uint16_t>()[i];
    case DType::kInt16: return t.data<int16_t>()[i];
    case DType::kInt32: return t.data<int32_t>()[i];
    default: return 0;
  }
}

inline float float_at(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DType::kFloat32: return t.data<float>()[i];
    case DType::kFloat16: return static_cast<float>(t.data<Float16>()[i]);
    case DType::kBFloat16: return static_cast<float>(t.data<BFloat16>()[i]);
    case DType::kFloat64: return static_cast<float>(t.data<double>()[i]);
    default: return 0;
  }
}

template <typename Q>
Q saturate_round(double v) {
  // nearbyint rounds half to even in the default rounding mode.
  const double r = std::nearbyint(v);
  constexpr double lo = static_cast<double>(std::numeric_limits<Q>::lowest());
  constexpr double hi = static_cast<double>(std::numeric_limits<Q>::max());
  if (!(r >= lo)) return std::isnan(r) ? Q(0) : std::numeric_limits<Q>::lowest();
  if (r > hi) return std::numeric_limits<Q>::max();
  return static_cast<Q>(r);
}

// Calls f(std::type_identity<Q>{}) for a quantized storage type.
template <typename F>
Status dispatch_quant(DType t, const KernelContext& ctx, F&& f) {
  switch (t) {
    case DType::kUInt8: return f(std::type_identity<uint8_t>{});
    case DType::kInt8: return f(std::type_identity<int8_t>{});
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
  if (zp && zp->shape() != scale.shape()) return ctx.invalid("zero point and scale must have the same shape");
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
  p.scale_axis = (p.axis_dim + block - 1) / block;
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
  if (!is_quant_type(out)) return ctx.unsupported(std::string("output type ") + dtype_name(out) + " is not supported");
  DLRT_ASSIGN_OR_RETURN(QuantParams p, quant_params(ctx, *x, *scale, zp));
  DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, out, x->shape()));
  const bool int_input = x->dtype() == DType::kInt32;
  return dispatch_quant(out, ctx, [&](auto tag) -> Status {
    using Q = typename decltype(tag)::type;
    Q* dst = y->data<Q>();
    if constexpr (sizeof(Q) == 1) {
      if (p.per_tensor && x->dtype() == DType::kFloat32) {
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
      dst[e] = saturate_round<Q>(std::nearbyint(q) + z);
    });
    return Status::Ok();
  });
}

Status dequantize_linear(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
  DLRT_ASSIGN_OR_RETURN(const Tensor* scale, required_input(ctx, 1));
  const Tensor* zp = ctx.input(2);
  if (!is_quant_type(x->dtype()) && x->dtype() != DType::kInt32)
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
  return dispatch_float(out, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    T* dst = y->data<T>();
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
  float lo = 0, hi = 0;
  if (!min_max(xs, x->size(), lo, hi)) return ctx.invalid("input contains NaN");
  lo = std::min(lo, 0.0f);  // the range always includes 0
  hi = std::max(hi, 0.0f);
  // An all-zero input has no range; its scale is 1, as ONNX Runtime's.
  const float scale = hi == lo ? 1.0f : (hi - lo) / 255.0f;
  const float zp_f = std::min(255.0f, std::max(0.0f, 0.0f - lo / scale));
  const uint8_t zp = saturate_round<uint8_t>(zp_f);
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
  g.batch = element_count(batch);
  g.a_batch = element_count(ab);
  g.b_batch = element_count(bb);
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
  g.out_shape = batch;
  if (!a_vec) g.out_shape.push_back(g.M);
  if (!b_vec) g.out_shape.push_back(g.N);
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
Result<DType> qlinear_out_type(const KernelContext& ctx, const Tensor* y_zp, DType fallback) {
  const DType t = y_zp ? y_zp->dtype() : fallback;
  if (!is_8bit(t)) return ctx.unsupported(std::string("output type ") + dtype_name(t) + " is not supported");
  if (y_zp && y_zp->size() != 1) return ctx.invalid("y_zero_point must be a scalar");
  return t;
}

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

struct ConvGeometry {
  int64_t N = 0, C = 0, M = 0, group = 1;
  Shape in, kernel, out, stride, dilation, pad_begin;
  int64_t in_size = 1, kernel_size = 1, out_size = 1;
};

Result<ConvGeometry> conv_geometry(const KernelContext& ctx, const Tensor& x, const Tensor& w) {
  const ir::Node& n = ctx.node();
  if (x.rank() < 3 || w.rank() != x.rank()) return ctx.invalid("x and w must have the same rank >= 3");
  ConvGeometry g;
  const size_t sd = x.rank() - 2;
  g.N = x.dim(0);
  g.C = x.dim(1);
  g.M = w.dim(0);
  g.group = n.attr_int("group", 1);
  if (g.group <= 0 || g.C % g.group != 0 || g.M % g.group != 0 || w.dim(1) * g.group != g.C)
    return ctx.invalid("channels do not match: x " + shape_to_string(x.shape()) + ", w " + shape_to_string(w.shape()) +
                       ", group " + std::to_string(g.group));
  g.in.assign(x.shape().begin() + 2, x.shape().end());
  g.kernel.assign(w.shape().begin() + 2, w.shape().end());
  // (ints_attr: no heap copies on the run path.)
  const IntList ks = ints_attr(n, "kernel_shape", 0, 0);
  if (!ks.empty() && ks != g.kernel) return ctx.invalid("kernel_shape does not match w's shape");
  g.stride = ints_attr(n, "strides", sd, 1);
  g.dilation = ints_attr(n, "dilations", sd, 1);
  Shape pads = ints_attr(n, "pads", 2 * sd, 0);
  if (g.stride.size() != sd || g.dilation.size() != sd || pads.size() != 2 * sd)
    return ctx.invalid("strides, dilations or pads have the wrong length");
  const std::string auto_pad = n.attr_string("auto_pad", "NOTSET");
  g.out.resize(sd);
  g.pad_begin.resize(sd);
  for (size_t i = 0; i < sd; ++i) {
    if (g.stride[i] <= 0 || g.dilation[i] <= 0 || pads[i] < 0 || pads[i + sd] < 0)
      return ctx.invalid("strides and dilations must be positive and pads non-negative");
    const int64_t span = (g.kernel[i] - 1) * g.dilation[i] + 1;
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      const int64_t o = (g.in[i] + g.stride[i] - 1) / g.stride[i];
      const int64_t total = std::max<int64_t>(0, (o - 1) * g.stride[i] + span - g.in[i]);
      pads[i] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      pads[i + sd] = total - pads[i];
    } else if (auto_pad == "VALID") {
      pads[i] = pads[i + sd] = 0;
    } else if (auto_pad != "NOTSET") {
      return ctx.invalid("unknown auto_pad '" + auto_pad + "'");
    }
    const int64_t padded = g.in[i] + pads[i] + pads[i + sd];
    if (padded < span) return ctx.invalid("kernel is larger than the padded input");
    g.out[i] = (padded - span) / g.stride[i] + 1;
    g.pad_begin[i] = pads[i];
    g.in_size *= g.in[i];
    g.kernel_size *= g.kernel[i];
    g.out_size *= g.out[i];
  }
  return g;
}

// col[(c*K + k) * out_size + o] = x[c, in(o, k)] as raw bytes, or x_zp in the padding.
void im2col(const ConvGeometry& g, const uint8_t* x, int64_t channels, uint8_t pad, uint8_t* col) {
  const size_t sd = g.in.size();
  int64_t kidx[8], oidx[8];
  for (int64_t c = 0; c < channels; ++c) {
    const uint8_t* xc = x + c * g.in_size;
    for (int64_t k = 0; k < g.kernel_size; ++k) {
      int64_t rem = k;
      for (size_t d = sd; d-- > 0;) {
        kidx[d] = rem % g.kernel[d];
        rem /= g.kernel[d];
      }
      uint8_t* dst = col + (c * g.kernel_size + k) * g.out_size;
      std::fill(oidx, oidx + sd, 0);
      for (int64_t o = 0; o < g.out_size; ++o) {
        int64_t off = 0;
        bool inside = true;
        for (size_t d = 0; d < sd; ++d) {
          const int64_t pos = oidx[d] * g.stride[d] - g.pad_begin[d] + kidx[d] * g.dilation[d];
          if (pos < 0 || pos >= g.in[d]) {
            inside = false;
            break;
          }
          off = off * g.in[d] + pos;
        }
        dst[o] = inside ? xc[off] : pad;
        for (size_t d = sd; d-- > 0;) {
          if (++oidx[d] < g.out[d]) break;
          oidx[d] = 0;
        }
      }
    }
  }
}

// Columns [j0, j1) of row k = (c, kh, kw) of a 2-D conv's im2col matrix
// (column j = output position oh * OW + ow): x[c, ih, iw] or `pad` outside.
void im2col_row_2d(const ConvGeometry& g, const uint8_t* x, int64_t k, int64_t j0, int64_t j1, uint8_t pad,
                   uint8_t* dst) {
  const int64_t KH = g.kernel[0], KW = g.kernel[1], H = g.in[0], W = g.in[1], OW = g.out[1];
  const int64_t c = k / (KH * KW), kh = (k / KW) % KH, kw = k % KW;
  const int64_t sh = g.stride[0], sw = g.stride[1];
  const uint8_t* xc = x + c * g.in_size;
  if (sh == 1 && sw == 1 && OW == W) {
    // Stride 1 and "same" width: column j reads x[c] at the flat position
    // j + dr * W + dc, so the row is one copy, then its padding.
    const int64_t dr = kh * g.dilation[0] - g.pad_begin[0], dc = kw * g.dilation[1] - g.pad_begin[1];
    const int64_t shift = dr * W + dc;
    const int64_t r0 = std::clamp<int64_t>(-dr, 0, g.out[0]), r1 = std::clamp<int64_t>(H - dr, r0, g.out[0]);
    const int64_t c0 = std::clamp<int64_t>(-dc, 0, OW), c1 = std::clamp<int64_t>(W - dc, c0, OW);
    // Inside rows [r0, r1) and inside x's plane.
    const int64_t a = std::max({j0, r0 * OW, -shift}), b = std::min({j1, r1 * OW, g.in_size - shift});
    if (a < b) std::memcpy(dst + (a - j0), xc + a + shift, static_cast<size_t>(b - a));
    if (a > j0) std::memset(dst, pad, static_cast<size_t>(std::min(a, j1) - j0));
    if (b < j1) {
      const int64_t from = std::max(b, j0);
      std::memset(dst + (from - j0), pad, static_cast<size_t>(j1 - from));
    }
    // Columns outside x in the copied rows: one strided pass per such column.
    auto patch = [&](int64_t col) {
      // Output rows oh in [r0, r1) with oh * OW + col in [j0, j1) (j0 - col > -OW).
      const int64_t first = std::max(r0, (j0 - col + OW - 1) / OW);
      const int64_t last = j1 - 1 - col < 0 ? 0 : std::min(r1, (j1 - 1 - col) / OW + 1);
      for (int64_t j = first * OW + col; j < last * OW + col; j += OW) dst[j - j0] = pad;
    };
    for (int64_t col = 0; col < c0; ++col) patch(col);
    for (int64_t col = c1; col < OW; ++col) patch(col);
    return;
  }
  const int64_t off = kw * g.dilation[1] - g.pad_begin[1];
  // Output columns whose input column is inside the row: [lo, hi).
  const int64_t lo = off >= 0 ? 0 : (-off + sw - 1) / sw;
  const int64_t hi = W - 1 - off >= 0 ? std::min(OW, (W - 1 - off) / sw + 1) : 0;
  int64_t j = j0;
  while (j < j1) {
    const int64_t oh = j / OW, ow0 = j % OW, ow1 = std::min(OW, ow0 + (j1 - j));
    uint8_t* d = dst + (j - j0);
    const int64_t ih = oh * sh - g.pad_begin[0] + kh * g.dilation[0];
    if (ih < 0 || ih >= H || lo >= hi) {
      std::memset(d, pad, static_cast<size_t>(ow1 - ow0));
    } else {
      const uint8_t* row = xc + ih * W + off;
      const int64_t a = std::max(ow0, lo), b = std::min(ow1, hi);
      if (a > ow0) std::memset(d, pad, static_cast<size_t>(std::min(a, ow1) - ow0));
      if (a < b) copy_strided_bytes(row + a * sw, sw, b - a, d + (a - ow0));
      if (b < ow1) {
        const int64_t from = std::max(b, ow0);
        std::memset(d + (from - ow0), pad, static_cast<size_t>(ow1 - from));
      }
    }
    j += ow1 - ow0;
  }
}

// True when the im2col matrix of a group is x itself: 1 x ... x 1 kernel, stride 1, no padding.
bool is_pointwise(const ConvGeometry& g) {
  for (size_t d = 0; d < g.in.size(); ++d)
    if (g.kernel[d] != 1 || g.stride[d] != 1 || g.pad_begin[d] != 0 || g.out[d] != g.in[d]) return false;
  return true;
}

// A constant 8-bit conv weight packed once as gemm_u8s8's A, one per group.
struct PrepackedW {
  const void* data = nullptr;  // the tensor it was packed from
  DType dtype = DType::kUndefined;
  Shape shape;
  int64_t group = 0;
  std::vector<std::shared_ptr<const PackedInt8A>> groups;

  const PackedInt8A* find(const Tensor& w, int64_t grp, int64_t groups_now) const {
    if (w.raw_data() != data || w.dtype() != dtype || w.shape() != shape || groups_now != group) return nullptr;
    return groups[static_cast<size_t>(grp)].get();
  }
};

// Packs W (M x C/group x kernel...) per group, unless it is depthwise (direct loops, nothing to pack).
std::shared_ptr<const PrepackedW> prepack_w(const ir::Node& node, const Tensor* w) {
  if (!w || !is_8bit(w->dtype()) || w->rank() < 3 || w->size() == 0) return nullptr;
  const int64_t group = node.attr_int("group", 1), M = w->dim(0);
  if (group <= 0 || M % group != 0 || M / group == 1) return nullptr;
  auto pre = std::make_shared<PrepackedW>();
  pre->data = w->raw_data();
  pre->dtype = w->dtype();
  pre->shape = w->shape();
  pre->group = group;
  const int64_t Mg = M / group, CK = w->size() / M;
  const auto* base = static_cast<const uint8_t*>(w->raw_data());
  for (int64_t grp = 0; grp < group; ++grp)
    pre->groups.push_back(PackedInt8A::pack(Mg, CK, base + grp * Mg * CK, CK, w->dtype() == DType::kInt8));
  return pre;
}

// The sums of integer_conv, per image n, output channel m and position:
// int32 to acc[N][M][out] (ConvInteger), or requantized straight to y
// (QLinearConv: requant->out is y, requant->mult and bias per channel).
struct ConvSums {
  int32_t* acc = nullptr;
  const Int8RequantOutput* requant = nullptr;
};

// Output planes up to this size run channels-last (depthwise_int8_channels).
constexpr int64_t kChannelsLastDepthwise = 16384;

// A 2-D depthwise conv (one input and one output channel per group), plane by
// plane, or channels-last in blocks of channels for small planes.
void depthwise_conv(const ConvGeometry& g, const uint8_t* x, bool x_signed, int32_t xz, const uint8_t* w,
                    bool w_signed, const int32_t* wz, const ConvSums& out, ThreadPool& pool) {
  DepthwiseInt8Geometry d;
  d.H = g.in[0];
  d.W = g.in[1];
  d.OH = g.out[0];
  d.OW = g.out[1];
  d.KH = g.kernel[0];
  d.KW = g.kernel[1];
  d.sh = g.stride[0];
  d.sw = g.stride[1];
  d.dh = g.dilation[0];
  d.dw = g.dilation[1];
  d.ph = g.pad_begin[0];
  d.pw = g.pad_begin[1];
  const int64_t taps = d.KH * d.KW;
  auto kernel_of = [&](int64_t c, int32_t* wc) {  // channel c's kernel minus its zero point
    for (int64_t t = 0; t < taps; ++t) {
      const uint8_t b = w[c * taps + t];
      wc[t] = (w_signed ? static_cast<int32_t>(static_cast<int8_t>(b)) : static_cast<int32_t>(b)) - wz[c];
    }
  };
  if (out.requant && g.out_size <= kChannelsLastDepthwise && depthwise_int8_channels_available()) {
    // Small planes: blocks of 64 channels at a time, channels in the vector lanes.
    thread_local AlignedScratch all_w;
    int32_t* wall = all_w.get<int32_t>(static_cast<size_t>(g.M * taps), AlignedScratch::Growth::kByHalf);
    for (int64_t c = 0; c < g.M; ++c) kernel_of(c, wall + c * taps);
    const Int8RequantOutput& q = *out.requant;
    constexpr int64_t kBlock = 64;
    const int64_t blocks = (g.M + kBlock - 1) / kBlock;
    // Bands of output rows too, so that every thread has work (each band
    // re-reads the input rows its windows overlap with the next one's).
    const int64_t threads = pool.num_threads();
    const int64_t bands = std::clamp<int64_t>((2 * threads + g.N * blocks - 1) / (g.N * blocks), 1,
                                              std::max<int64_t>(1, d.OH / 4));
    const int64_t band_rows = (d.OH + bands - 1) / bands;
    auto run = [&](int64_t t0, int64_t t1) {
      for (int64_t t = t0; t < t1; ++t) {
        const int64_t band = t % bands, nb = t / bands;
        const int64_t n = nb / blocks, c0 = (nb % blocks) * kBlock, cb = std::min(kBlock, g.M - c0);
        const int64_t oh0 = band * band_rows, oh1 = std::min(d.OH, oh0 + band_rows);
        if (oh0 >= oh1) continue;
        // The band as a conv of its own: input rows [ih0, ih1), what is above them as padding.
        const int64_t top = oh0 * d.sh - d.ph;
        const int64_t ih0 = std::max<int64_t>(0, top);
        const int64_t ih1 = std::min(d.H, (oh1 - 1) * d.sh - d.ph + (d.KH - 1) * d.dh + 1);
        DepthwiseInt8Geometry b = d;
        b.OH = oh1 - oh0;
        b.H = std::max<int64_t>(0, ih1 - ih0);
        b.ph = ih0 - top;
        DepthwiseInt8Requant r;
        r.mult = q.mult + c0;
        r.bias = q.bias ? q.bias + c0 : nullptr;
        r.zero_point = q.zero_point;
        r.out_signed = q.out_signed;
        depthwise_int8_channels(b, cb, x + (n * g.M + c0) * g.in_size + ih0 * d.W, g.in_size, x_signed, xz,
                                wall + c0 * taps, r, static_cast<uint8_t*>(q.out) + (n * g.M + c0) * g.out_size + oh0 * d.OW,
                                g.out_size);
      }
    };
    const int64_t tasks = g.N * blocks * bands;
    pool.parallel_for(tasks, pool.balanced_grain(tasks, 1), run);
    return;
  }
  auto planes = [&](int64_t p0, int64_t p1) {
    thread_local AlignedScratch w_scratch;
    int32_t* wc = w_scratch.get<int32_t>(static_cast<size_t>(taps), AlignedScratch::Growth::kByHalf);
    for (int64_t p = p0; p < p1; ++p) {
      const int64_t c = p % g.M;
      kernel_of(c, wc);
      const uint8_t* xc = x + p * g.in_size;
      if (const Int8RequantOutput* q = out.requant) {
        const int32_t bias = q->bias ? q->bias[c] : 0;
        const float mult = q->mult[c];
        auto* y = static_cast<uint8_t*>(q->out) + p * g.out_size;
        auto requant = [&](const int32_t* sums, int64_t n, uint8_t* dst) {
          if (q->out_signed) requantize_s8(sums, n, bias, mult, q->zero_point, reinterpret_cast<int8_t*>(dst));
          else requantize_u8(sums, n, bias, mult, q->zero_point, dst);
        };
        depthwise_int8_plane(d, xc, x_signed, xz, wc, [&](int64_t oh0, int64_t oh1, const int32_t* sums, int64_t pitch) {
          if (pitch == d.OW) return requant(sums, (oh1 - oh0) * d.OW, y + oh0 * d.OW);
          // All rows in one call (the unused columns too), then each row's OW bytes.
          const int64_t n = (oh1 - oh0 - 1) * pitch + d.OW;
          thread_local AlignedScratch row_scratch;
          uint8_t* rows = row_scratch.get<uint8_t>(static_cast<size_t>(n), AlignedScratch::Growth::kByHalf);
          requant(sums, n, rows);
          for (int64_t oh = oh0; oh < oh1; ++oh)
            std::memcpy(y + oh * d.OW, rows + (oh - oh0) * pitch, static_cast<size_t>(d.OW));
        });
      } else {
        int32_t* acc = out.acc + p * g.out_size;
        depthwise_int8_plane(d, xc, x_signed, xz, wc, [&](int64_t oh0, int64_t oh1, const int32_t* sums, int64_t pitch) {
          for (int64_t oh = oh0; oh < oh1; ++oh)
            std::memcpy(acc + oh * d.OW, sums + (oh - oh0) * pitch, sizeof(int32_t) * static_cast<size_t>(d.OW));
        });
      }
    }
  };
  const int64_t n = g.N * g.M;
  pool.parallel_for(n, pool.balanced_grain(n, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, g.out_size * taps))),
                    planes);
}

// integer_conv's sums for x, w with a per-tensor x zero point and a per-tensor
// or per-channel w zero point: depthwise directly, else per image and group W
// (M/group x C/group*kernel) times the im2col matrix on the 8-bit GEMM.
Status integer_conv(KernelContext& ctx, const Tensor& x, const Tensor* x_zp, const Tensor& w, const Tensor* w_zp,
                    const ConvGeometry& g, const PrepackedW* pre, const ConvSums& out) {
  if (x_zp && (x_zp->size() != 1 || x_zp->dtype() != x.dtype()))
    return ctx.invalid("x_zero_point must be a scalar of x's dtype");
  if (w_zp && ((w_zp->size() != 1 && w_zp->size() != g.M) || w_zp->dtype() != w.dtype()))
    return ctx.invalid("w_zero_point must be a scalar or have one value per output channel, in w's dtype");
  if (g.in.size() > 8) return ctx.unsupported("more than 8 spatial dimensions");
  const int32_t xz = x_zp ? int_at(*x_zp, 0) : 0;
  const int64_t Cg = g.C / g.group, Mg = g.M / g.group, CK = Cg * g.kernel_size;
  thread_local AlignedScratch zp_scratch, col_scratch, pack_scratch;
  int32_t* wz = zp_scratch.get<int32_t>(static_cast<size_t>(g.M), AlignedScratch::Growth::kByHalf);
  for (int64_t m = 0; m < g.M; ++m) wz[m] = w_zp ? int_at(*w_zp, w_zp->size() == 1 ? 0 : m) : 0;
  const auto* xb = static_cast<const uint8_t*>(x.raw_data());
  const auto* wb = static_cast<const uint8_t*>(w.raw_data());
  const bool x_signed = x.dtype() == DType::kInt8, w_signed = w.dtype() == DType::kInt8;
  if (g.in.size() == 2 && Cg == 1 && Mg == 1) {
    depthwise_conv(g, xb, x_signed, xz, wb, w_signed, wz, out, ctx.pool());
    return Status::Ok();
  }
  const bool pointwise = is_pointwise(g), planar = g.in.size() == 2;
  uint8_t* col = pointwise || planar ? nullptr
                                     : col_scratch.get<uint8_t>(static_cast<size_t>(CK * g.out_size),
                                                                AlignedScratch::Growth::kByHalf);
  void* packed = pack_scratch.bytes(PackedInt8B::bytes(CK, g.out_size), AlignedScratch::Growth::kByHalf);
  const uint8_t pad = static_cast<uint8_t>(xz);  // x's zero point as a raw byte
  for (int64_t n = 0; n < g.N; ++n)
    for (int64_t grp = 0; grp < g.group; ++grp) {
      const uint8_t* xg = xb + (n * g.C + grp * Cg) * g.in_size;
      const uint8_t* dense = pointwise ? xg : col;  // B as a K x out_size matrix, when it exists
      if (!pointwise && !planar) im2col(g, xg, Cg, pad, col);
      auto rows = [&](int64_t k, int64_t j0, int64_t j1, uint8_t* dst) {
        if (dense) std::memcpy(dst, dense + k * g.out_size + j0, static_cast<size_t>(j1 - j0));
        else im2col_row_2d(g, xg, k, j0, j1, pad, dst);
      };
      const PackedInt8B pb = PackedInt8B::pack_rows_into(packed, CK, g.out_size, rows, x_signed, &ctx.pool());
      const int64_t plane0 = n * g.M + grp * Mg;  // the group's first output plane
      Int8RequantOutput rq;
      if (out.requant) {
        rq = *out.requant;
        rq.mult += grp * Mg;
        if (rq.bias) rq.bias += grp * Mg;
        rq.out = static_cast<uint8_t*>(rq.out) + plane0 * g.out_size;
        rq.ldo = g.out_size;
      }
      gemm_u8s8(Mg, g.out_size, CK, wb + grp * Mg * CK, CK, w_signed, wz + grp * Mg, 1, pb, &xz, 0,
                out.acc ? out.acc + plane0 * g.out_size : nullptr, g.out_size, &ctx.pool(),
                pre ? pre->find(w, grp, g.group) : nullptr, nullptr, out.requant ? &rq : nullptr);
    }
  return Status::Ok();
}

Shape conv_out_shape(const ConvGeometry& g) {
  Shape s{g.N, g.M};
  s.insert(s.end(), g.out.begin(), g.out.end());
  return s;
}

Status conv_integer(KernelContext& ctx, const PrepackedW* pre) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
  DLRT_ASSIGN_OR_RETURN(const Tensor* w, required_input(ctx, 1));
  if (!is_8bit(x->dtype()) || !is_8bit(w->dtype())) return ctx.unsupported("x and w must be uint8 or int8");
  DLRT_ASSIGN_OR_RETURN(ConvGeometry g, conv_geometry(ctx, *x, *w));
  DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, DType::kInt32, conv_out_shape(g)));
  ConvSums sums;
  sums.acc = y->data<int32_t>();
  return integer_conv(ctx, *x, ctx.input(2), *w, ctx.input(3), g, pre, sums);
}

Status qlinear_conv(KernelContext& ctx, const PrepackedW* pre) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
  DLRT_ASSIGN_OR_RETURN(const Tensor* x_scale, required_input(ctx, 1));
  DLRT_ASSIGN_OR_RETURN(const Tensor* w, required_input(ctx, 3));
  DLRT_ASSIGN_OR_RETURN(const Tensor* w_scale, required_input(ctx, 4));
  DLRT_ASSIGN_OR_RETURN(const Tensor* y_scale, required_input(ctx, 6));
  const Tensor* y_zp = ctx.input(7);
  const Tensor* bias = ctx.input(8);
  if (!is_8bit(x->dtype()) || !is_8bit(w->dtype())) return ctx.unsupported("x and w must be uint8 or int8");
  for (const Tensor* s : {x_scale, w_scale, y_scale})
    if (!dtype_is_float(s->dtype())) return ctx.invalid("scales must be float tensors");
  if (x_scale->size() != 1 || y_scale->size() != 1) return ctx.invalid("x_scale and y_scale must be scalars");
  DLRT_ASSIGN_OR_RETURN(DType out, qlinear_out_type(ctx, y_zp, x->dtype()));
  DLRT_ASSIGN_OR_RETURN(ConvGeometry g, conv_geometry(ctx, *x, *w));
  if (w_scale->size() != 1 && w_scale->size() != g.M)
    return ctx.invalid("w_scale must be a scalar or have one value per output channel");
  if (bias && (bias->dtype() != DType::kInt32 || bias->size() != g.M))
    return ctx.invalid("B must be an int32 vector with one value per output channel");
  if (out != DType::kUInt8 && out != DType::kInt8) return ctx.unsupported("only 8-bit outputs are supported");
  DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, out, conv_out_shape(g)));
  // Per output channel, the multiplier of its sums: x_scale * w_scale / y_scale.
  thread_local AlignedScratch mult_scratch;
  float* mult = mult_scratch.get<float>(static_cast<size_t>(g.M), AlignedScratch::Growth::kByHalf);
  const float xs = float_at(*x_scale, 0), ys = float_at(*y_scale, 0);
  for (int64_t m = 0; m < g.M; ++m) mult[m] = xs * float_at(*w_scale, w_scale->size() == 1 ? 0 : m) / ys;
  Int8RequantOutput rq;
  rq.mult = mult;
  rq.bias = bias ? bias->data<int32_t>() : nullptr;
  rq.zero_point = y_zp ? int_at(*y_zp, 0) : 0;
  rq.out = y->raw_data();
  rq.ldo = g.out_size;
  rq.out_signed = out == DType::kInt8;
  ConvSums sums;
  sums.requant = &rq;
  return integer_conv(ctx, *x, ctx.input(2), *w, ctx.input(5), g, pre, sums);
}

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

// MatMulInteger, QLinearMatMul, MatMulIntegerToFloat (Pre = PrepackedB) and
// ConvInteger, QLinearConv (Pre = PrepackedW): the weight input packed once
// when it is a graph constant (null otherwise, or when it does not apply).
template <typename Pre>
class PrepackedKernel final : public OpKernel {
 public:
  using Fn = Status (*)(KernelContext&, const Pre*);
  PrepackedKernel(Fn fn, std::shared_ptr<const Pre> pre) : fn_(fn), pre_(std::move(pre)) {}
  Status compute(KernelContext& ctx) const override { return fn_(ctx, pre_.get()); }

 private:
  Fn fn_;
  std::shared_ptr<const Pre> pre_;
};

template <typename Pre>
KernelDef prepacked_def(const char* op, typename PrepackedKernel<Pre>::Fn fn, size_t weight_input,
                        std::shared_ptr<const Pre> (*prepack)(const ir::Node&, const Tensor*),
                        const char* domain = "", int min_opset = 10) {
  KernelDef d;
  d.op_type = op;
  d.domain = domain;
  d.min_opset = min_opset;
  d.factory = [fn](const ir::Node&) -> Result<std::unique_ptr<OpKernel>> {
    return std::unique_ptr<OpKernel>(new PrepackedKernel<Pre>(fn, nullptr));
  };
  d.factory_with_constants = [fn, weight_input, prepack](
                                 const ir::Node& node, const ConstantInputs& constants) -> Result<std::unique_ptr<OpKernel>> {
    return std::unique_ptr<OpKernel>(new PrepackedKernel<Pre>(fn, prepack(node, constants(weight_input))));
  };
  return d;
}

}  // namespace

Status register_quantize_kernels(KernelRegistry& r) {
  DLRT_RETURN_IF_ERROR(r.add_fn("QuantizeLinear", quantize_linear, 10));
  DLRT_RETURN_IF_ERROR(r.add_fn("DequantizeLinear", dequantize_linear, 10));
  DLRT_RETURN_IF_ERROR(r.add_fn("DynamicQuantizeLinear", dynamic_quantize_linear, 11));
  DLRT_RETURN_IF_ERROR(r.add(prepacked_def<PrepackedB>("MatMulInteger", matmul_integer, 1, prepack_b)));
  DLRT_RETURN_IF_ERROR(r.add(prepacked_def<PrepackedW>("ConvInteger", conv_integer, 1, prepack_w)));
  DLRT_RETURN_IF_ERROR(r.add(prepacked_def<PrepackedB>("QLinearMatMul", qlinear_matmul, 3, prepack_b)));
  DLRT_RETURN_IF_ERROR(r.add(
      prepacked_def<PrepackedB>("MatMulIntegerToFloat", matmul_integer_to_float, 1, prepack_b, "com.dlrt", 1)));
  DLRT_RETURN_IF_ERROR(r.add(prepacked_def<PrepackedW>("QLinearConv", qlinear_conv, 3, prepack_w)));
  return Status::Ok();
}

}  // namespace dlrt::cpu
