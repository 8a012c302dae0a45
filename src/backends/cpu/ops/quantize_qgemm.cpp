// QGemm (com.microsoft, opset 1): acc = C + sum (a - za)(b - zb) in int32,
// y = float(acc) * scale or rne(float(acc) * scale) + zy, as ONNX Runtime's
// MLAS computes it (quantize_contrib.cpp says how). A and B not transposed
// run on the 8-bit GEMM (B packed once when it is a constant), transA on
// direct loops.
#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <string>

#include "backends/cpu/kernel_util.h"
#include "backends/cpu/kernels/gemm_int8.h"
#include "backends/cpu/ops/qlinear_util.h"
#include "backends/cpu/scratch.h"

namespace dlrt::cpu::qlinear {
namespace {

// B (input 3) packed for gemm_u8s8 when the kernel is created, if it is a constant.
struct QGemmPackedB {
  const void* data = nullptr;  // the tensor it was packed from
  DType dtype = DType::kUndefined;
  Shape shape;
  bool trans_b = false;
  std::shared_ptr<const PackedInt8B> packed;
};

// One QGemm after its checks: the operands, the output, and how an int32
// sum becomes an output element.
struct QGemmRun {
  const Tensor* a = nullptr;
  const Tensor* b = nullptr;
  const Tensor* b_zp = nullptr;
  const Tensor* bias = nullptr;
  Tensor* y = nullptr;
  bool trans_a = false, trans_b = false, quantized = false, scale_per_col = false, zp_per_col = false;
  int64_t M = 0, K = 0, N = 0, bias_row_stride = 0, bias_col_stride = 0;
  float alpha = 1, sa = 1, ys = 1;
  int32_t za = 0, zb0 = 0, yz = 0;
  DType out_type = DType::kFloat32;
  const float* bsc = nullptr;

  // ONNX Runtime's output scale: (alpha * a_scale) * b_scale[j], then / y_scale.
  float out_scale(int64_t j) const {
    float s = alpha * sa * bsc[scale_per_col ? j : 0];
    if (quantized) s /= ys;
    return s;
  }
  // The output of row m, column col from its int32 sum (bias included).
  void store(int64_t m, int64_t col, uint32_t acc) const {
    const float v = static_cast<float>(static_cast<int32_t>(acc)) * out_scale(col);
    if (!quantized) {
      y->data<float>()[m * N + col] = v;
    } else if (out_type == DType::kUInt8) {
      y->data<uint8_t>()[m * N + col] = requantize<uint8_t>(v, yz);
    } else {
      y->data<int8_t>()[m * N + col] = requantize<int8_t>(v, yz);
    }
  }
  uint32_t bias_at(int64_t m, int64_t col) const {
    return bias ? static_cast<uint32_t>(bias->data<int32_t>()[m * bias_row_stride + col * bias_col_stride]) : 0u;
  }
};

// The 8-bit GEMM (B packed once when constant), then bias and scales per element.
Status qgemm_packed(KernelContext& ctx, const QGemmRun& q, const QGemmPackedB* pre) {
  const Tensor* a = q.a;
  const Tensor* b = q.b;
  const Tensor* b_zp = q.b_zp;
  const int64_t M = q.M, K = q.K, N = q.N;
  const bool trans_b = q.trans_b, zp_per_col = q.zp_per_col;
  const int32_t za = q.za;
  const bool b_signed = b->dtype() == DType::kInt8;
  thread_local AlignedScratch acc_scratch, zp_scratch, b_scratch;
  int32_t* acc = acc_scratch.get<int32_t>(static_cast<size_t>(M * N), AlignedScratch::Growth::kByHalf);
  int32_t* bz = zp_scratch.get<int32_t>(static_cast<size_t>(N), AlignedScratch::Growth::kByHalf);
  for (int64_t j = 0; j < (zp_per_col ? N : 1); ++j) bz[j] = b_zp ? int8_at(*b_zp, j) : 0;
  PackedInt8B scratch_b;
  const PackedInt8B* pb = nullptr;
  if (pre && pre->packed && pre->data == b->raw_data() && pre->dtype == b->dtype() && pre->shape == b->shape() &&
      pre->trans_b == trans_b) {
    pb = pre->packed.get();
  } else {
    void* storage = b_scratch.bytes(PackedInt8B::bytes(K, N), AlignedScratch::Growth::kByHalf);
    scratch_b = PackedInt8B::pack_into(storage, trans_b, K, N, b->raw_data(), trans_b ? K : N, b_signed);
    pb = &scratch_b;
  }
  gemm_u8s8(M, N, K, a->raw_data(), K, a->dtype() == DType::kInt8, &za, 0, *pb, bz, zp_per_col ? 1 : 0, acc, N,
            &ctx.pool());
  auto rows = [&](int64_t m0, int64_t m1) {
    for (int64_t m = m0; m < m1; ++m)
      for (int64_t col = 0; col < N; ++col)
        q.store(m, col, static_cast<uint32_t>(acc[m * N + col]) + q.bias_at(m, col));
  };
  ctx.pool().parallel_for(M, ctx.pool().balanced_grain(M, std::max<int64_t>(1, 16384 / N)), rows);
  return Status::Ok();
}

// transA: direct loops.
Status qgemm_direct(KernelContext& ctx, const QGemmRun& q) {
  const Tensor* a = q.a;
  const Tensor* b = q.b;
  const Tensor* b_zp = q.b_zp;
  const int64_t M = q.M, K = q.K, N = q.N;
  const bool trans_a = q.trans_a, trans_b = q.trans_b, zp_per_col = q.zp_per_col;
  const int32_t za = q.za, zb0 = q.zb0;
  const int64_t a_row = trans_a ? 1 : K, a_k = trans_a ? M : 1;  // element strides of A's row m / step k
  const int64_t b_col = trans_b ? K : 1, b_k = trans_b ? 1 : N;

  auto gemm_rows = [&](auto a_tag, auto b_tag, int64_t m0, int64_t m1) {
    using TA = typename decltype(a_tag)::type;
    using TB = typename decltype(b_tag)::type;
    const TA* ap = a->data<TA>();
    const TB* bp = b->data<TB>();
    const TB* bzp = b_zp ? b_zp->data<TB>() : nullptr;
    constexpr int64_t kBlock = 256;
    std::array<uint32_t, kBlock> acc;
    for (int64_t m = m0; m < m1; ++m) {
      for (int64_t j0 = 0; j0 < N; j0 += kBlock) {
        const int64_t jn = std::min(kBlock, N - j0);
        for (int64_t j = 0; j < jn; ++j) {
          const int64_t col = j0 + j;
          acc[static_cast<size_t>(j)] = q.bias_at(m, col);
        }
        if (trans_b) {
          // Rows of B are contiguous: one dot product per output.
          for (int64_t j = 0; j < jn; ++j) {
            const int64_t col = j0 + j;
            const int32_t zb = zp_per_col ? static_cast<int32_t>(bzp[col]) : zb0;
            const TB* brow = bp + col * b_col;
            int32_t s = 0;
            if (!trans_a) {
              const TA* arow = ap + m * a_row;
              for (int64_t k = 0; k < K; ++k) s += (static_cast<int32_t>(arow[k]) - za) * (static_cast<int32_t>(brow[k]) - zb);
            } else {
              for (int64_t k = 0; k < K; ++k)
                s += (static_cast<int32_t>(ap[m + k * a_k]) - za) * (static_cast<int32_t>(brow[k]) - zb);
            }
            acc[static_cast<size_t>(j)] += static_cast<uint32_t>(s);
          }
        } else {
          // Rows of B along k: accumulate a block of the output row.
          for (int64_t k = 0; k < K; ++k) {
            const int32_t av = static_cast<int32_t>(ap[m * a_row + k * a_k]) - za;
            const TB* brow = bp + k * b_k + j0;
            if (zp_per_col) {
              for (int64_t j = 0; j < jn; ++j)
                acc[static_cast<size_t>(j)] += static_cast<uint32_t>(av * (static_cast<int32_t>(brow[j]) - static_cast<int32_t>(bzp[j0 + j])));
            } else {
              for (int64_t j = 0; j < jn; ++j)
                acc[static_cast<size_t>(j)] += static_cast<uint32_t>(av * (static_cast<int32_t>(brow[j]) - zb0));
            }
          }
        }
        for (int64_t j = 0; j < jn; ++j) q.store(m, j0 + j, acc[static_cast<size_t>(j)]);
      }
    }
  };
  const int64_t grain = ctx.pool().balanced_grain(M, std::max<int64_t>(1, (int64_t{1} << 16) / std::max<int64_t>(1, N * K)));
  auto run_typed = [&](auto a_tag, auto b_tag) {
    ctx.pool().parallel_for(M, grain, [&](int64_t m0, int64_t m1) { gemm_rows(a_tag, b_tag, m0, m1); });
  };
  const bool au = a->dtype() == DType::kUInt8, bu = b->dtype() == DType::kUInt8;
  if (au && bu) run_typed(std::type_identity<uint8_t>{}, std::type_identity<uint8_t>{});
  else if (au) run_typed(std::type_identity<uint8_t>{}, std::type_identity<int8_t>{});
  else if (bu) run_typed(std::type_identity<int8_t>{}, std::type_identity<uint8_t>{});
  else run_typed(std::type_identity<int8_t>{}, std::type_identity<int8_t>{});
  return Status::Ok();
}

Status qgemm(KernelContext& ctx, const QGemmPackedB* pre) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* a, required_input(ctx, 0));
  DLRT_ASSIGN_OR_RETURN(const Tensor* b, required_input(ctx, 3));
  if (!is_8bit(a->dtype()) || !is_8bit(b->dtype())) return ctx.unsupported("A and B must be uint8 or int8");
  if (a->rank() != 2 || b->rank() != 2)
    return ctx.invalid("A and B must be matrices, got " + shape_to_string(a->shape()) + " and " + shape_to_string(b->shape()));
  const bool trans_a = ctx.node().attr_int("transA", 0) != 0;
  const bool trans_b = ctx.node().attr_int("transB", 0) != 0;
  const float alpha = ctx.node().attr_float("alpha", 1.0f);
  const int64_t M = trans_a ? a->dim(1) : a->dim(0);
  const int64_t K = trans_a ? a->dim(0) : a->dim(1);
  const int64_t N = trans_b ? b->dim(0) : b->dim(1);
  if ((trans_b ? b->dim(1) : b->dim(0)) != K)
    return ctx.invalid("inner dimensions differ: A " + shape_to_string(a->shape()) + ", B " + shape_to_string(b->shape()));
  DLRT_ASSIGN_OR_RETURN(float sa, scale_input(ctx, 1, "a_scale"));
  DLRT_ASSIGN_OR_RETURN(int32_t za, zero_point_input(ctx, 2, a->dtype(), "a_zero_point"));
  // b_scale / b_zero_point: one value or one per column of the output.
  const Tensor* b_scale = ctx.input(4);
  const Tensor* b_zp = ctx.input(5);
  if (!b_scale || b_scale->dtype() != DType::kFloat32) return ctx.invalid("b_scale must be a float32 tensor");
  auto per_column_ok = [&](const Tensor& t) { return t.size() == 1 || (t.rank() == 1 && t.dim(0) == N); };
  if (!per_column_ok(*b_scale)) return ctx.invalid("b_scale must be a scalar or have N = " + std::to_string(N) + " values");
  if (b_zp && (b_zp->dtype() != b->dtype() || !per_column_ok(*b_zp)))
    return ctx.invalid("b_zero_point must have B's dtype and be a scalar or have N values");
  const Tensor* bias = ctx.input(6);
  int64_t bias_row_stride = 0, bias_col_stride = 0;
  if (bias) {
    if (bias->dtype() != DType::kInt32) return ctx.invalid("C must be int32");
    const Shape& cs = bias->shape();
    if (bias->size() == 1) {
    } else if (cs.size() == 1 && cs[0] == N) {
      bias_col_stride = 1;
    } else if (cs.size() == 2 && cs[0] == 1 && cs[1] == N) {
      bias_col_stride = 1;
    } else if (cs.size() == 2 && cs[0] == M && cs[1] == 1) {
      bias_row_stride = 1;
    } else if (cs.size() == 2 && cs[0] == M && cs[1] == N) {
      bias_row_stride = N;
      bias_col_stride = 1;
    } else {
      return ctx.invalid("C of shape " + shape_to_string(cs) + " does not broadcast to [" + std::to_string(M) + ", " +
                         std::to_string(N) + "]");
    }
  }
  const bool quantized = ctx.input(7) != nullptr;
  float ys = 1.0f;
  int32_t yz = 0;
  DType out_type = DType::kFloat32;
  if (quantized) {
    DLRT_ASSIGN_OR_RETURN(ys, scale_input(ctx, 7, "y_scale"));
    const Tensor* yzt = ctx.input(8);
    out_type = yzt ? yzt->dtype() : a->dtype();
    if (!is_8bit(out_type)) return ctx.invalid("y_zero_point must be uint8 or int8");
    DLRT_ASSIGN_OR_RETURN(yz, zero_point_input(ctx, 8, out_type, "y_zero_point"));
  } else if (ctx.input(8)) {
    return ctx.invalid("y_zero_point is given without y_scale");
  }
  DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, out_type, {M, N}));
  if (M == 0 || N == 0) return Status::Ok();

  QGemmRun q;
  q.a = a, q.b = b, q.b_zp = b_zp, q.bias = bias, q.y = y;
  q.trans_a = trans_a, q.trans_b = trans_b, q.quantized = quantized;
  q.scale_per_col = b_scale->size() > 1;
  q.zp_per_col = b_zp && b_zp->size() > 1;
  q.M = M, q.K = K, q.N = N, q.bias_row_stride = bias_row_stride, q.bias_col_stride = bias_col_stride;
  q.alpha = alpha, q.sa = sa, q.ys = ys;
  q.za = za, q.zb0 = b_zp ? int8_at(*b_zp, 0) : 0, q.yz = yz;
  q.out_type = out_type;
  q.bsc = b_scale->data<float>();
  if (!trans_a) return qgemm_packed(ctx, q, pre);
  return qgemm_direct(ctx, q);
}

// Packs a constant 8-bit matrix B of QGemm as op(B) per transB (null otherwise).
std::shared_ptr<const QGemmPackedB> prepack_qgemm_b(const ir::Node& node, const Tensor* b) {
  if (!b || (b->dtype() != DType::kUInt8 && b->dtype() != DType::kInt8) || b->rank() != 2 || b->size() == 0)
    return nullptr;
  auto pre = std::make_shared<QGemmPackedB>();
  pre->data = b->raw_data();
  pre->dtype = b->dtype();
  pre->shape = b->shape();
  pre->trans_b = node.attr_int("transB", 0) != 0;
  const int64_t K = pre->trans_b ? b->dim(1) : b->dim(0), N = pre->trans_b ? b->dim(0) : b->dim(1);
  pre->packed = PackedInt8B::pack(pre->trans_b, K, N, b->raw_data(), b->dim(1), b->dtype() == DType::kInt8);
  return pre;
}

class QGemmKernel final : public OpKernel {
 public:
  explicit QGemmKernel(std::shared_ptr<const QGemmPackedB> pre) : pre_(std::move(pre)) {}
  Status compute(KernelContext& ctx) const override { return qgemm(ctx, pre_.get()); }

 private:
  std::shared_ptr<const QGemmPackedB> pre_;
};

}  // namespace

KernelDef qgemm_kernel_def() {
  KernelDef d;
  d.op_type = "QGemm";
  d.domain = kMsDomain;
  d.min_opset = 1;
  d.max_opset = 1000;
  d.factory = [](const ir::Node&) -> Result<std::unique_ptr<OpKernel>> {
    return std::unique_ptr<OpKernel>(new QGemmKernel(nullptr));
  };
  d.factory_with_constants = [](const ir::Node& node,
                                const ConstantInputs& constants) -> Result<std::unique_ptr<OpKernel>> {
    return std::unique_ptr<OpKernel>(new QGemmKernel(prepack_qgemm_b(node, constants(3))));
  };
  return d;
}

}  // namespace dlrt::cpu::qlinear
