// MatMul (numpy semantics: 1-D operands, broadcast batch dims) and Gemm.
// Float work goes through the blocked GEMM in gemm.cpp; float16/bfloat16
// compute in float32; integer MatMul wraps like numpy.
#include <algorithm>

#include "backends/cpu/gemm.h"
#include "backends/cpu/kernel_families.h"
#include "backends/cpu/kernel_util.h"
#include "backends/cpu/nn_util.h"

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

// One M x K by K x N product of the batch, for every supported element type.
template <typename T>
void matmul_one(int64_t M, int64_t N, int64_t K, const T* A, const T* B, T* C, ThreadPool* pool) {
  if constexpr (std::is_floating_point_v<T>) {
    gemm_typed<T>(false, false, M, N, K, T(1), A, K, B, N, T(0), C, N, pool);
  } else {
    igemm<T>(M, N, K, A, K, B, N, C, N, false, pool);
  }
}

Status matmul_compute(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* a, required_input(ctx, 0));
  DLRT_ASSIGN_OR_RETURN(const Tensor* b, required_input(ctx, 1));
  if (a->dtype() != b->dtype()) return ctx.invalid("A and B must have the same dtype");
  if (nn::is_half(a->dtype())) return nn::run_as_float32(ctx, matmul_compute);
  if (a->rank() == 0 || b->rank() == 0) return ctx.invalid("MatMul operands must have rank >= 1");

  // numpy: a 1-D A is a row vector, a 1-D B a column vector; the added dim is dropped from the result.
  Shape as = a->shape(), bs = b->shape();
  const bool a_vec = as.size() == 1, b_vec = bs.size() == 1;
  if (a_vec) as.insert(as.begin(), 1);
  if (b_vec) bs.push_back(1);
  const int64_t M = as[as.size() - 2], K = as.back(), N = bs.back();
  if (bs[bs.size() - 2] != K)
    return ctx.invalid("inner dimensions differ: A " + shape_to_string(a->shape()) + ", B " + shape_to_string(b->shape()));

  // Broadcast the batch dims.
  const size_t ab = as.size() - 2, bb = bs.size() - 2, rb = std::max(ab, bb);
  Shape batch(rb);
  for (size_t i = 0; i < rb; ++i) {
    const int64_t da = i + ab >= rb ? as[i + ab - rb] : 1;
    const int64_t db = i + bb >= rb ? bs[i + bb - rb] : 1;
    if (da != db && da != 1 && db != 1)
      return ctx.invalid("batch dims do not broadcast: A " + shape_to_string(a->shape()) + ", B " +
                         shape_to_string(b->shape()));
    batch[i] = da == 1 ? db : da;
  }
  Shape out_shape = batch;
  if (!a_vec) out_shape.push_back(M);
  if (!b_vec) out_shape.push_back(N);
  DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, a->dtype(), out_shape));
  const int64_t nbatch = element_count(batch);
  if (y->size() == 0) return Status::Ok();

  // Element offsets of each batch's A and B matrix (0 along broadcast dims).
  std::vector<int64_t> a_off(nbatch), b_off(nbatch);
  {
    std::vector<int64_t> idx(rb, 0);
    for (int64_t t = 0; t < nbatch; ++t) {
      int64_t ao = 0, bo = 0, astride = M * K, bstride = K * N;
      for (size_t d = rb; d-- > 0;) {
        if (d + ab >= rb) {
          const int64_t da = as[d + ab - rb];
          if (da != 1) ao += idx[d] * astride;
          astride *= da;
        }
        if (d + bb >= rb) {
          const int64_t db = bs[d + bb - rb];
          if (db != 1) bo += idx[d] * bstride;
          bstride *= db;
        }
      }
      a_off[t] = ao;
      b_off[t] = bo;
      for (size_t d = rb; d-- > 0;) {
        if (++idx[d] < batch[d]) break;
        idx[d] = 0;
      }
    }
  }
  // When B is shared by every batch and A's batches are contiguous, the whole
  // batch is one (nbatch*M) x K by K x N product: the common Linear layer case.
  bool fold = nbatch > 1;
  for (int64_t t = 0; t < nbatch && fold; ++t) fold = b_off[t] == 0 && a_off[t] == t * M * K;

  return dispatch_numeric(a->dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16> || std::is_same_v<T, int8_t> ||
                  std::is_same_v<T, uint8_t> || std::is_same_v<T, int16_t> || std::is_same_v<T, uint16_t>) {
      return ctx.unsupported(std::string("MatMul on ") + dtype_name(a->dtype()) + " is not supported");
    } else {
      const T* A = a->data<T>();
      const T* B = b->data<T>();
      T* C = y->data<T>();
      if (fold) {
        matmul_one<T>(nbatch * M, N, K, A, B, C, &ctx.pool());
        return Status::Ok();
      }
      // Many small products: one per task. Few large ones: parallelise inside each.
      const bool per_batch = nbatch >= 2 * ctx.pool().num_threads() && M * N * K < (1 << 20);
      if (per_batch) {
        ctx.pool().parallel_for(nbatch, 1, [&](int64_t b0, int64_t b1) {
          for (int64_t t = b0; t < b1; ++t) matmul_one<T>(M, N, K, A + a_off[t], B + b_off[t], C + t * M * N, nullptr);
        });
      } else {
        for (int64_t t = 0; t < nbatch; ++t)
          matmul_one<T>(M, N, K, A + a_off[t], B + b_off[t], C + t * M * N, &ctx.pool());
      }
      return Status::Ok();
    }
  });
}

Status gemm_compute(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* a, required_input(ctx, 0));
  DLRT_ASSIGN_OR_RETURN(const Tensor* b, required_input(ctx, 1));
  const Tensor* c = ctx.input(2);
  if (nn::is_half(a->dtype())) return nn::run_as_float32(ctx, gemm_compute);
  if (a->dtype() != b->dtype() || (c && c->dtype() != a->dtype()))
    return ctx.invalid("A, B and C must have the same dtype");
  if (!c && ctx.opset() < 11) return ctx.invalid("input C is required before opset 11");
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
  DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, a->dtype(), {M, N}));
  if (y->size() == 0) return Status::Ok();
  auto run = [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    T* Y = y->data<T>();
    const bool use_c = c && beta != 0.0f;
    if (use_c) {
      const T* C = c->data<T>();
      for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) Y[i * N + j] = C[(c_rows == 1 ? 0 : i) * c_cols + (c_cols == 1 ? 0 : j)];
    }
    gemm_typed<T>(ta, tb, M, N, K, static_cast<T>(alpha), a->data<T>(), a->dim(1), b->data<T>(), b->dim(1),
                  use_c ? static_cast<T>(beta) : T(0), Y, N, &ctx.pool());
    return Status::Ok();
  };
  switch (a->dtype()) {
    case DType::kFloat32: return run(std::type_identity<float>{});
    case DType::kFloat64: return run(std::type_identity<double>{});
    default: return ctx.unsupported(std::string("Gemm on ") + dtype_name(a->dtype()) + " is not supported");
  }
}

}  // namespace

Status register_matmul_kernels(KernelRegistry& r) {
  DLRT_RETURN_IF_ERROR(r.add_fn("MatMul", matmul_compute, 1));
  DLRT_RETURN_IF_ERROR(r.add_fn("Gemm", gemm_compute, 1));
  return Status::Ok();
}

}  // namespace dlrt::cpu
