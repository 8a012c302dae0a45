// MatMul (numpy semantics: 1-D operands, broadcast batch dims) and Gemm.
// Float work goes through the blocked GEMM in gemm.cpp; float16/bfloat16
// compute in float32; integer MatMul wraps like numpy.
#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>

#include "backends/cpu/kernel_families.h"
#include "backends/cpu/kernel_util.h"
#include "backends/cpu/kernels/gemm.h"
#include "backends/cpu/kernels/isa.h"
#include "backends/cpu/ops/matmul_impl.h"
#include "backends/cpu/ops/nn_util.h"
#include "core/first_error.h"
#include "core/run_limits.h"
#include "exec/kernel_build_options.h"
#include "ir/onnxruntime_order.h"

namespace dlrt::cpu {
namespace {

template <typename T>
void gemm_typed(bool ta, bool tb, int64_t M, int64_t N, int64_t K, T alpha, const T* A, int64_t lda, const T* B,
                int64_t ldb, T beta, T* C, int64_t ldc, ThreadPool* pool) {
  if constexpr (std::is_same_v<T, float>) {
    sgemm(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, pool);
  } else {
    dgemm(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, pool);
  }
}

// Calls f(b, e) over [0, n) on the pool through a one-pointer closure (no
// std::function heap allocation per call).
template <typename F>
void par_for(ThreadPool& pool, int64_t n, int64_t grain, const F& f) {
  pool.parallel_for(n, grain, [pf = &f](int64_t b, int64_t e) { (*pf)(b, e); });
}


// The batch of one MatMul: numpy's 1-D operands (a 1-D A is a row vector, a
// 1-D B a column vector) and broadcast batch dims, and how a path runs its
// per-batch products.
struct MatMulBatch {
  const Shape* a_shape = nullptr;
  const Shape* b_shape = nullptr;
  bool a_vec = false, b_vec = false;
  size_t ar = 0, br = 0;  // ranks, 1-D operands counted as 2-D
  size_t ab = 0, bb = 0, rb = 0;  // batch ranks of A, B and the result
  int64_t M = 0, K = 0, N = 0, nbatch = 1;
  bool fold = false;  // one (nbatch*M) x K by K x N product (B shared, A's batches contiguous)

  int64_t adim(size_t i) const { return a_vec ? (i == 0 ? 1 : (*a_shape)[0]) : (*a_shape)[i]; }
  int64_t bdim(size_t i) const { return b_vec ? (i == 0 ? (*b_shape)[0] : 1) : (*b_shape)[i]; }
  // Whether every product reads the same A (A has no batch dims other than 1).
  bool a_shared() const {
    for (size_t i = 0; i < ab; ++i)
      if (adim(i) != 1) return false;
    return true;
  }

  // Element offset of batch t's A and B matrix (0 along broadcast dims).
  void offsets(int64_t t, int64_t& ao, int64_t& bo) const {
    ao = 0;
    bo = 0;
    int64_t astride = M * K, bstride = K * N;
    for (size_t d = rb; d-- > 0;) {
      const int64_t extent = std::max(d + ab >= rb ? adim(d + ab - rb) : 1, d + bb >= rb ? bdim(d + bb - rb) : 1);
      const int64_t idx = t % extent;
      t /= extent;
      if (d + ab >= rb) {
        const int64_t da = adim(d + ab - rb);
        if (da != 1) ao += idx * astride;
        astride *= da;
      }
      if (d + bb >= rb) {
        const int64_t db = bdim(d + bb - rb);
        if (db != 1) bo += idx * bstride;
        bstride *= db;
      }
    }
  }

  // Whether for_each runs the products one per task (many, each under `small_work` multiply-adds).
  bool one_per_task(const ThreadPool& pool, int64_t small_work) const {
    return nbatch > 1 && !fold && nbatch >= 2 * pool.num_threads() && M * N * K < small_work;
  }

  // Runs one(rows, A_t, B_t, C_t, pool) over the batch: one folded product when
  // possible; many small products (under `small_work` multiply-adds) one per
  // task; few large ones one after the other, each parallel inside.
  template <typename TA, typename TB, typename TC, typename F>
  void for_each(ThreadPool& pool, const TA* A, const TB* B, TC* C, int64_t small_work, F&& one) const {
    if (nbatch == 1 || fold) {
      one(nbatch * M, A, B, C, &pool);
      return;
    }
    if (one_per_task(pool, small_work)) {
      par_for(pool, nbatch, 1, [&](int64_t b0, int64_t b1) {
        for (int64_t t = b0; t < b1; ++t) {
          int64_t ao, bo;
          offsets(t, ao, bo);
          one(M, A + ao, B + bo, C + t * M * N, nullptr);
        }
      });
      return;
    }
    for (int64_t t = 0; t < nbatch; ++t) {
      int64_t ao, bo;
      offsets(t, ao, bo);
      one(M, A + ao, B + bo, C + t * M * N, &pool);
    }
  }
};

// A MatMul's batch and output shape; the node's error when A and B do not fit.
Result<MatMulBatch> matmul_batch(const KernelContext& ctx, const Tensor& a, const Tensor& b, Shape* out) {
  MatMulBatch mb;
  const Shape& a_shape = a.shape();
  const Shape& b_shape = b.shape();
  mb.a_shape = &a_shape, mb.b_shape = &b_shape;
  mb.a_vec = a_shape.size() == 1, mb.b_vec = b_shape.size() == 1;
  mb.ar = mb.a_vec ? 2 : a_shape.size(), mb.br = mb.b_vec ? 2 : b_shape.size();
  mb.M = mb.adim(mb.ar - 2), mb.K = mb.adim(mb.ar - 1), mb.N = mb.bdim(mb.br - 1);
  if (mb.bdim(mb.br - 2) != mb.K)
    return ctx.invalid("inner dimensions differ: A " + shape_to_string(a_shape) + ", B " + shape_to_string(b_shape));

  // Broadcast the batch dims.
  mb.ab = mb.ar - 2, mb.bb = mb.br - 2, mb.rb = std::max(mb.ab, mb.bb);
  const size_t ab = mb.ab, bb = mb.bb, rb = mb.rb;
  Shape& out_shape = *out;
  out_shape.assign(rb, 0);
  for (size_t i = 0; i < rb; ++i) {
    const int64_t da = i + ab >= rb ? mb.adim(i + ab - rb) : 1;
    const int64_t db = i + bb >= rb ? mb.bdim(i + bb - rb) : 1;
    if (da != db && da != 1 && db != 1)
      return ctx.invalid("batch dims do not broadcast: A " + shape_to_string(a_shape) + ", B " +
                         shape_to_string(b_shape));
    out_shape[i] = da == 1 ? db : da;
    mb.nbatch *= out_shape[i];
  }
  if (!mb.a_vec) out_shape.push_back(mb.M);
  if (!mb.b_vec) out_shape.push_back(mb.N);

  // When B is shared by every batch and A's batches are contiguous, the whole
  // batch is one (nbatch*M) x K by K x N product: the common Linear layer case.
  bool b_shared = true, a_contig = true;
  for (size_t d = 0; d < rb && (b_shared || a_contig); ++d) {
    const int64_t da = d + ab >= rb ? mb.adim(d + ab - rb) : 1;
    const int64_t db = d + bb >= rb ? mb.bdim(d + bb - rb) : 1;
    const int64_t extent = std::max(da, db);
    if (db != 1 && extent > 1) b_shared = false;
    if (da != extent) a_contig = false;
  }
  mb.fold = mb.nbatch > 1 && b_shared && a_contig;
  return mb;
}

// float32: the blocked GEMM (B packed once when constant), bias, residual and
// activation in its epilogue.
Status matmul_f32(KernelContext& ctx, const MatMulBatch& mb, const Tensor* a, const Tensor* b, const Tensor* bias,
                  const Tensor* resid, Tensor* y, const PackedOperand* pre_b, const MatMulFusion& fuse) {
  const int64_t K = mb.K, N = mb.N;
  const float* A = a->data<float>();
  const float* B = b->data<float>();
  float* C = y->data<float>();
  GemmEpilogue ep;
  ep.col_bias = bias ? bias->data<float>() : nullptr;
  ep.act = fuse.act;
  const float* Z = resid ? resid->data<float>() : nullptr;
  // A per-item run (RunOptions::item_lengths): a text's columns (its keys in
  // attention) must not be summed differently when padding widens N. A node
  // tagged for ONNX Runtime's order (ir/onnxruntime_order.h): MLAS sums every
  // element in one chain, the edge columns too.
  const RunLimits* run = current_run_limits();
  const bool uniform = (run && run->item_lengths) || ir::in_onnxruntime_order(ctx.node());
  FirstError err;
  // An A that every one of many small products reads (a matrix times a
  // stack of matrices) is packed once here rather than once per product.
  const int64_t small_work = int64_t{1} << 21;
  std::shared_ptr<const PackedMatrix> shared_a;
  if (mb.one_per_task(ctx.pool(), small_work) && !mb.a_vec && mb.M > 1 && !pre_b && mb.a_shared())
    shared_a = PackedMatrix::pack_a(false, mb.M, K, A, K);
  auto one = [&](int64_t rows, const float* Ab, const float* Bb, float* Cb, ThreadPool* p) {
    SgemmOperand oa{Ab, K, false, shared_a.get(), nullptr};
    SgemmOperand ob{Bb, N, false, pre_b ? pre_b->packed.get() : nullptr, nullptr, uniform};
    GemmEpilogue e = ep;
    if (Z) {  // Z has C's layout: the same offset as this product's C
      e.residual = Z + (Cb - C);
      e.ldr = N;
    }
    err.record(sgemm_ex(rows, N, K, fuse.alpha, oa, ob, 0.0f, Cb, N, &e, p));
  };
  mb.for_each(ctx.pool(), A, B, C, small_work, one);
  return err.take();
}

// float64 and the integer types: the typed GEMMs (integers wrap like numpy),
// then the fused stage element-wise.
Status matmul_typed(KernelContext& ctx, const MatMulBatch& mb, const Tensor* a, const Tensor* b,
                    const Tensor* bias, const Tensor* resid, Tensor* y, const MatMulFusion& fuse) {
  const int64_t K = mb.K, N = mb.N;
  return dispatch_numeric(a->dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16> || std::is_same_v<T, int8_t> ||
                  std::is_same_v<T, uint8_t> || std::is_same_v<T, int16_t> || std::is_same_v<T, uint16_t> ||
                  std::is_same_v<T, float>) {
      return ctx.unsupported(std::string("MatMul on ") + dtype_name(a->dtype()) + " is not supported");
    } else {
      const T* A = a->data<T>();
      const T* B = b->data<T>();
      T* C = y->data<T>();
      const T alpha = static_cast<T>(fuse.alpha);
      auto one = [&](int64_t rows, const T* Ab, const T* Bb, T* Cb, ThreadPool* p) {
        if constexpr (std::is_floating_point_v<T>) {
          gemm_typed<T>(false, false, rows, N, K, alpha, Ab, K, Bb, N, T(0), Cb, N, p);
        } else {
          igemm<T>(rows, N, K, Ab, K, Bb, N, Cb, N, false, p);
        }
      };
      mb.for_each(ctx.pool(), A, B, C, int64_t{1} << 20, one);
      if constexpr (std::is_same_v<T, double>) {
        if (fuse.fused()) {
          const T* bv = bias ? bias->data<T>() : nullptr;
          const T* zv = resid ? resid->data<T>() : nullptr;
          for (int64_t i = 0; i < y->size(); ++i) {
            double v = C[i] + (bv ? bv[i % N] : 0.0) + (zv ? zv[i] : 0.0);
            C[i] = fuse.act.none() ? v : static_cast<double>(activate(fuse.act, static_cast<float>(v)));
          }
        }
      }
      return Status::Ok();
    }
  });
}

}  // namespace

Status matmul_run(KernelContext& ctx, const PackedOperand* pre_b, const MatMulFusion& fuse) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* a, required_input(ctx, 0));
  DLRT_ASSIGN_OR_RETURN(const Tensor* b, required_input(ctx, 1));
  const Tensor* bias = fuse.bias_input >= 0 ? ctx.input(static_cast<size_t>(fuse.bias_input)) : nullptr;
  const Tensor* resid = fuse.residual_input >= 0 ? ctx.input(static_cast<size_t>(fuse.residual_input)) : nullptr;
  if (a->dtype() != b->dtype() || (bias && bias->dtype() != a->dtype()) || (resid && resid->dtype() != a->dtype()))
    return ctx.invalid("A and B (and the bias and residual) must have the same dtype");
  if (nn::is_half(a->dtype()))
    return nn::run_as_float32(ctx, [&](KernelContext& c) { return matmul_run(c, nullptr, fuse); });
  if (a->rank() == 0 || b->rank() == 0) return ctx.invalid("MatMul operands must have rank >= 1");
  if (fuse.fused() && a->dtype() != DType::kFloat32 && a->dtype() != DType::kFloat64)
    return ctx.unsupported(std::string("FusedMatMul on ") + dtype_name(a->dtype()) + " is not supported");

  Shape out_shape;
  DLRT_ASSIGN_OR_RETURN(const MatMulBatch mb, matmul_batch(ctx, *a, *b, &out_shape));
  const int64_t K = mb.K, N = mb.N;
  if (bias) {
    if (bias->size() != N || (bias->rank() > 0 && bias->dim(bias->rank() - 1) != N))
      return ctx.invalid("the bias must have N = " + std::to_string(N) + " elements along the last dim, got " +
                         shape_to_string(bias->shape()));
  }
  if (resid && resid->shape() != out_shape)
    return ctx.invalid("the residual must have the output's shape " + shape_to_string(out_shape) + ", got " +
                       shape_to_string(resid->shape()));
  // The float32 GEMM writes every element; integer paths accumulate into zeros.
  DLRT_ASSIGN_OR_RETURN(Tensor * y, a->dtype() == DType::kFloat32
                                        ? ctx.allocate_output_uninitialized(0, a->dtype(), std::move(out_shape))
                                        : ctx.allocate_output(0, a->dtype(), std::move(out_shape)));
  if (y->size() == 0) return Status::Ok();
  if (pre_b && (a->dtype() != DType::kFloat32 || !pre_b->packed_from(*b) || mb.b_vec || pre_b->packed->rows() != K ||
                pre_b->packed->cols() != N))
    pre_b = nullptr;
  if (!pre_b && is_freed_constant(*b)) return Internal("B was freed for a packing that does not apply to this run");

  if (a->dtype() == DType::kFloat32) return matmul_f32(ctx, mb, a, b, bias, resid, y, pre_b, fuse);
  return matmul_typed(ctx, mb, a, b, bias, resid, y, fuse);
}

Status gemm_run(KernelContext& ctx, const PackedOperand* pre_b, const Activation& act) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* a, required_input(ctx, 0));
  DLRT_ASSIGN_OR_RETURN(const Tensor* b, required_input(ctx, 1));
  const Tensor* c = ctx.input(2);
  if (nn::is_half(a->dtype()))
    return nn::run_as_float32(ctx, [&](KernelContext& k) { return gemm_run(k, pre_b, act); });  // a float32 B stays
  if (a->dtype() != b->dtype() || (c && c->dtype() != a->dtype()))
    return ctx.invalid("A, B and C must have the same dtype");
  if (!c && ctx.opset() < 11 && ctx.node().domain.empty()) return ctx.invalid("input C is required before opset 11");
  if (a->rank() != 2 || b->rank() != 2) return ctx.invalid("A and B must be 2-D");
  const ir::Node& n = ctx.node();
  const bool ta = n.attr_int("transA", 0) != 0, tb = n.attr_int("transB", 0) != 0;
  const float alpha = n.attr_float("alpha", 1.0f), beta = n.attr_float("beta", 1.0f);
  const int64_t M = ta ? a->dim(1) : a->dim(0), K = ta ? a->dim(0) : a->dim(1);
  const int64_t N = tb ? b->dim(0) : b->dim(1), Kb = tb ? b->dim(1) : b->dim(0);
  if (K != Kb)
    return ctx.invalid("inner dimensions differ: A " + shape_to_string(a->shape()) + ", B " + shape_to_string(b->shape()) +
                       (ta ? " (transA)" : "") + (tb ? " (transB)" : ""));
  // C broadcasts unidirectionally to [M, N].
  int64_t c_rows = 1, c_cols = 1;
  if (c) {
    if (c->rank() > 2) return ctx.invalid("C must have rank <= 2");
    if (c->rank() == 2) c_rows = c->dim(0);
    if (c->rank() >= 1) c_cols = c->dim(c->rank() - 1);
    if ((c_rows != 1 && c_rows != M) || (c_cols != 1 && c_cols != N))
      return ctx.invalid("C of shape " + shape_to_string(c->shape()) + " does not broadcast to [" + std::to_string(M) +
                         ", " + std::to_string(N) + "]");
  }
  DLRT_ASSIGN_OR_RETURN(Tensor * y, a->dtype() == DType::kFloat32
                                        ? ctx.allocate_output_uninitialized(0, a->dtype(), {M, N})
                                        : ctx.allocate_output(0, a->dtype(), {M, N}));
  if (y->size() == 0) return Status::Ok();
  if (pre_b && (a->dtype() != DType::kFloat32 || !pre_b->packed_from(*b) || pre_b->packed->rows() != K ||
                pre_b->packed->cols() != N))
    pre_b = nullptr;
  if (!pre_b && is_freed_constant(*b)) return Internal("B was freed for a packing that does not apply to this run");
  const bool use_c = c && beta != 0.0f;
  auto fill_c = [&](auto* Y, const auto* C) {
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) Y[i * N + j] = C[(c_rows == 1 ? 0 : i) * c_cols + (c_cols == 1 ? 0 : j)];
  };
  if (a->dtype() == DType::kFloat32) {
    float* Y = y->data<float>();
    GemmEpilogue ep;
    ep.act = act;
    float beta_eff = 0.0f;
    if (use_c) {
      const float* C = c->data<float>();
      if (beta == 1.0f && c_cols == N && c_rows == M && c->size() == M * N && M > 1) {
        ep.residual = C;
        ep.ldr = N;
      } else if (beta == 1.0f && c_cols == N && c_rows == 1) {
        ep.col_bias = C;
      } else if (beta == 1.0f && c_cols == 1 && c_rows == M && M > 1) {
        ep.row_bias = C;
      } else {
        fill_c(Y, C);
        beta_eff = beta;
      }
    }
    SgemmOperand oa{a->data<float>(), a->dim(1), ta, nullptr, nullptr};
    SgemmOperand ob{b->data<float>(), b->dim(1), tb, pre_b ? pre_b->packed.get() : nullptr, nullptr};
    return sgemm_ex(M, N, K, alpha, oa, ob, beta_eff, Y, N, &ep, &ctx.pool());
  }
  if (a->dtype() == DType::kFloat64) {
    double* Y = y->data<double>();
    if (use_c) fill_c(Y, c->data<double>());
    gemm_typed<double>(ta, tb, M, N, K, alpha, a->data<double>(), a->dim(1), b->data<double>(), b->dim(1),
                       use_c ? static_cast<double>(beta) : 0.0, Y, N, &ctx.pool());
    if (!act.none())
      for (int64_t i = 0; i < y->size(); ++i) Y[i] = static_cast<double>(activate(act, static_cast<float>(Y[i])));
    return Status::Ok();
  }
  return ctx.unsupported(std::string("Gemm on ") + dtype_name(a->dtype()) + " is not supported");
}

namespace {

// The packed copies alive in this process, by what they were packed from:
// nodes that share one constant B (an unrolled RNN's 20 steps of one weight)
// share one packed copy instead of holding one each. An entry lives as long
// as some kernel holds its PackedOperand, whose `source` keeps the constant's
// storage alive, so a key's address cannot be reused for other data while
// the entry can still be found. The ISA and precision are in the key: the
// packed layout depends on them (and tests switch the ISA).
struct PackKey {
  const void* data;
  int64_t rows, cols;
  bool trans;
  GemmPrecision precision;
  CpuIsa isa;
  bool operator<(const PackKey& o) const {
    return std::tie(data, rows, cols, trans, precision, isa) <
           std::tie(o.data, o.rows, o.cols, o.trans, o.precision, o.isa);
  }
};

class PackedOperandCache {
 public:
  std::shared_ptr<const PackedOperand> find(const PackKey& k) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = entries_.find(k);
    return it == entries_.end() ? nullptr : it->second.lock();
  }
  void add(const PackKey& k, const std::shared_ptr<const PackedOperand>& p) {
    std::lock_guard<std::mutex> lock(mu_);
    if (++adds_ % 64 == 0) std::erase_if(entries_, [](const auto& e) { return e.second.expired(); });
    entries_[k] = p;
  }

 private:
  std::mutex mu_;
  std::map<PackKey, std::weak_ptr<const PackedOperand>> entries_;
  uint64_t adds_ = 0;
};

PackedOperandCache& packed_operands() {
  static PackedOperandCache* cache = new PackedOperandCache();  // never destroyed: kernels may outlive statics
  return *cache;
}

}  // namespace

Result<std::shared_ptr<const PackedOperand>> prepack_b(const Tensor* b, bool trans) {
  if (!b || b->dtype() != DType::kFloat32 || b->rank() != 2) return std::shared_ptr<const PackedOperand>();
  const GemmPrecision precision = kernel_build_options().precision;
  const PackKey key{b->raw_data(), b->dim(0), b->dim(1), trans, precision, cpu_isa()};
  // Only a constant whose storage the PackedOperand keeps alive is shared (a
  // view's memory could be freed and reused while the entry stays findable).
  const bool shareable = !b->is_view() && b->raw_data() != nullptr;
  if (shareable)
    if (auto hit = packed_operands().find(key)) return hit;
  auto p = std::make_shared<PackedOperand>();
  p->source = *b;
  p->source_data = b->raw_data();
  const int64_t K = trans ? b->dim(1) : b->dim(0), N = trans ? b->dim(0) : b->dim(1);
  p->packed = PackedMatrix::pack_b(trans, K, N, b->data<float>(), b->dim(1), precision);
  std::shared_ptr<const PackedOperand> shared(std::move(p));
  if (shareable) packed_operands().add(key, shared);
  return shared;
}

std::shared_ptr<const PackedOperand> without_source(const PackedOperand& pre) {
  if (!pre.packed || pre.packed->precision() != GemmPrecision::kF32) return nullptr;
  auto p = std::make_shared<PackedOperand>();
  p->source = freed_constant(pre.source);
  p->source_data = pre.source_data;
  p->packed = pre.packed;
  return p;
}

namespace {

Status matmul_compute(KernelContext& ctx) { return matmul_run(ctx, nullptr, MatMulFusion{}); }
Status gemm_compute(KernelContext& ctx) { return gemm_run(ctx, nullptr, Activation{}); }

}  // namespace

Status register_matmul_kernels(KernelRegistry& r) {
  KernelDef mm;
  mm.op_type = "MatMul";
  mm.factory = [](const ir::Node&) -> Result<std::unique_ptr<OpKernel>> {
    return std::unique_ptr<OpKernel>(new FnKernel(matmul_compute));
  };
  mm.factory_with_constants = [](const ir::Node&, const ConstantInputs& k) -> Result<std::unique_ptr<OpKernel>> {
    DLRT_ASSIGN_OR_RETURN(auto pre, prepack_b(k(1), false));
    return std::unique_ptr<OpKernel>(new MatMulKernel(std::move(pre), MatMulFusion{}));
  };
  DLRT_RETURN_IF_ERROR(r.add(std::move(mm)));
  KernelDef gemm;
  gemm.op_type = "Gemm";
  gemm.factory = [](const ir::Node&) -> Result<std::unique_ptr<OpKernel>> {
    return std::unique_ptr<OpKernel>(new FnKernel(gemm_compute));
  };
  gemm.factory_with_constants = [](const ir::Node& node, const ConstantInputs& k) -> Result<std::unique_ptr<OpKernel>> {
    DLRT_ASSIGN_OR_RETURN(auto pre, prepack_b(k(1), node.attr_int("transB", 0) != 0));
    return std::unique_ptr<OpKernel>(new GemmKernel(std::move(pre), Activation{}));
  };
  DLRT_RETURN_IF_ERROR(r.add(std::move(gemm)));
  return Status::Ok();
}

}  // namespace dlrt::cpu
