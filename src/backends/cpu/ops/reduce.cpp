// Reductions: Reduce{Sum,Mean,Max,Min,Prod,L1,L2,LogSum,LogSumExp,SumSquare}, ArgMax, ArgMin.
//
// Every reduction is computed on an [outer, reduced, inner] view of the input.
// Reduced axes that are not adjacent are first made adjacent by a transpose
// (kept axes first, reduced axes last), so the inner loop always walks memory
// contiguously.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <vector>

#include "backends/cpu/kernel_families.h"
#include "backends/cpu/kernel_util.h"
#include "backends/cpu/kernels/reduce_rows.h"
#include "backends/cpu/scratch.h"

namespace dlrt::cpu {
namespace {

enum class ReduceOp { kSum, kMean, kMax, kMin, kProd, kL1, kL2, kLogSum, kLogSumExp, kSumSquare };

// Accumulates floats in double and integers in 64-bit unsigned arithmetic,
// which wraps like the narrow type would (no signed-overflow UB).
template <typename T>
struct AccOf {
  using type = std::conditional_t<std::is_floating_point_v<T> || std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>,
                                  double, uint64_t>;
};

template <typename T>
constexpr bool kIsFloatLike = std::is_floating_point_v<T> || std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>;

// Converts a double to T without UB for out-of-range integers (saturates; NaN -> 0).
template <typename T>
T saturate_cast(double v) {
  if constexpr (kIsFloatLike<T>) {
    return static_cast<T>(static_cast<float>(v));
  } else {
    if (std::isnan(v)) return T(0);
    constexpr double lo = static_cast<double>(std::numeric_limits<T>::lowest());
    constexpr double hi = static_cast<double>(std::numeric_limits<T>::max());
    if (v <= lo) return std::numeric_limits<T>::lowest();
    if (v >= hi) return std::numeric_limits<T>::max();
    return static_cast<T>(v);
  }
}

// Reads element x as the accumulator type.
template <typename T, typename A>
inline A to_acc(T x) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    return static_cast<A>(x);
  } else if constexpr (std::is_same_v<A, double>) {
    return static_cast<double>(static_cast<float>(x));
  } else {
    return static_cast<A>(static_cast<std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>>(x));
  }
}

template <typename T, typename A>
inline T from_acc(A a) {
  if constexpr (std::is_same_v<A, double>) {
    return saturate_cast<T>(a);
  } else {
    // Modular narrowing (well defined since C++20).
    return static_cast<T>(a);
  }
}

// Absolute value of an integer reinterpreted in unsigned arithmetic.
template <typename T>
inline uint64_t uabs(T x) {
  if constexpr (std::is_signed_v<T>) {
    int64_t v = x;
    return v < 0 ? uint64_t(0) - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  } else {
    return static_cast<uint64_t>(x);
  }
}

// The value a reduction over zero elements yields.
template <typename T>
T empty_result(ReduceOp op) {
  switch (op) {
    case ReduceOp::kProd: return T(1);
    case ReduceOp::kMax:
      if constexpr (kIsFloatLike<T>) return T(-std::numeric_limits<float>::infinity());
      else return std::numeric_limits<T>::lowest();
    case ReduceOp::kMin:
      if constexpr (kIsFloatLike<T>) return T(std::numeric_limits<float>::infinity());
      else return std::numeric_limits<T>::max();
    case ReduceOp::kLogSum:
    case ReduceOp::kLogSumExp:
      if constexpr (kIsFloatLike<T>) return T(-std::numeric_limits<float>::infinity());
      else return std::numeric_limits<T>::lowest();
    default: return T(0);  // Sum, Mean (as ONNX Runtime: 0, not 0/0), L1, L2, SumSquare
  }
}

template <typename T>
inline bool is_nan_value(T x) {
  if constexpr (kIsFloatLike<T>) return std::isnan(static_cast<double>(static_cast<float>(x)));
  else return false;
}

// Columns one reduce_block call handles; its accumulators live on the stack.
constexpr int64_t kReduceBlock = 512;

// Reduces a [outer, n, inner] block into out[outer, inner]. `ib..ie` (at most
// kReduceBlock wide) selects a column range, so large inner extents split across threads.
template <typename T>
void reduce_block(ReduceOp op, const T* in, T* out, int64_t n, int64_t inner, int64_t o, int64_t ib, int64_t ie) {
  using A = typename AccOf<T>::type;
  const T* base = in + o * n * inner;
  T* dst = out + o * inner;
  const int64_t w = ie - ib;
  if (n == 0) {
    for (int64_t i = ib; i < ie; ++i) dst[i] = empty_result<T>(op);
    return;
  }
  if (op == ReduceOp::kMax || op == ReduceOp::kMin) {
    const bool is_max = op == ReduceOp::kMax;
    std::array<T, kReduceBlock> m;
    std::copy(base + ib, base + ie, m.begin());
    for (int64_t r = 1; r < n; ++r) {
      const T* row = base + r * inner + ib;
      for (int64_t i = 0; i < w; ++i) {
        T x = row[i];
        bool take = is_max ? (x > m[i]) : (x < m[i]);
        if ((take || is_nan_value(x)) && !is_nan_value(m[i])) m[i] = x;
      }
    }
    std::copy(m.begin(), m.begin() + w, dst + ib);
    return;
  }
  {
    std::array<A, kReduceBlock> acc;
    if (op == ReduceOp::kLogSumExp) {
      // max-shifted so large inputs do not overflow exp().
      std::array<double, kReduceBlock> mx;
      std::fill(mx.begin(), mx.begin() + w, -std::numeric_limits<double>::infinity());
      for (int64_t r = 0; r < n; ++r) {
        const T* row = base + r * inner + ib;
        for (int64_t i = 0; i < w; ++i) mx[i] = std::max(mx[i], static_cast<double>(to_acc<T, double>(row[i])));
      }
      std::array<double, kReduceBlock> s;
      std::fill(s.begin(), s.begin() + w, 0.0);
      for (int64_t r = 0; r < n; ++r) {
        const T* row = base + r * inner + ib;
        for (int64_t i = 0; i < w; ++i) {
          if (std::isinf(mx[i])) continue;
          s[i] += std::exp(static_cast<double>(to_acc<T, double>(row[i])) - mx[i]);
        }
      }
      for (int64_t i = 0; i < w; ++i) {
        double v = std::isinf(mx[i]) ? mx[i] : mx[i] + std::log(s[i]);
        dst[ib + i] = saturate_cast<T>(v);
      }
      return;
    }
    const A init = op == ReduceOp::kProd ? A(1) : A(0);
    std::fill(acc.begin(), acc.begin() + w, init);
    for (int64_t r = 0; r < n; ++r) {
      const T* row = base + r * inner + ib;
      switch (op) {
        case ReduceOp::kSum:
        case ReduceOp::kMean:
        case ReduceOp::kLogSum:
          for (int64_t i = 0; i < w; ++i) acc[i] += to_acc<T, A>(row[i]);
          break;
        case ReduceOp::kProd:
          for (int64_t i = 0; i < w; ++i) acc[i] *= to_acc<T, A>(row[i]);
          break;
        case ReduceOp::kSumSquare:
        case ReduceOp::kL2:
          for (int64_t i = 0; i < w; ++i) {
            A x = to_acc<T, A>(row[i]);
            acc[i] += x * x;
          }
          break;
        case ReduceOp::kL1:
          for (int64_t i = 0; i < w; ++i) {
            if constexpr (std::is_same_v<A, double>) acc[i] += std::fabs(to_acc<T, A>(row[i]));
            else acc[i] += uabs(row[i]);
          }
          break;
        default: break;
      }
    }
    for (int64_t i = 0; i < w; ++i) {
      T v;
      switch (op) {
        case ReduceOp::kMean:
          if constexpr (std::is_same_v<A, double>) {
            v = from_acc<T, A>(acc[i] / static_cast<double>(n));
          } else if constexpr (std::is_signed_v<T>) {
            v = static_cast<T>(static_cast<int64_t>(acc[i]) / n);
          } else {
            v = static_cast<T>(acc[i] / static_cast<uint64_t>(n));
          }
          break;
        case ReduceOp::kL2: {
          double d;
          if constexpr (std::is_same_v<A, double>) d = acc[i];
          else d = static_cast<double>(acc[i]);
          v = saturate_cast<T>(std::sqrt(d));
          break;
        }
        case ReduceOp::kLogSum: {
          double d;
          if constexpr (std::is_same_v<A, double>) d = acc[i];
          else if constexpr (std::is_signed_v<T>) d = static_cast<double>(static_cast<int64_t>(acc[i]));
          else d = static_cast<double>(acc[i]);
          v = saturate_cast<T>(std::log(d));
          break;
        }
        default: v = from_acc<T, A>(acc[i]); break;
      }
      dst[ib + i] = v;
    }
  }
}

// Copies `in` into `out` with axes permuted by `perm` (out axis j = in axis perm[j]).
template <typename T>
void transpose_copy(const T* in, T* out, const Shape& shape, const IntList& perm) {
  const size_t rank = shape.size();
  IntList in_strides(rank, 1);
  for (size_t i = rank; i-- > 1;) in_strides[i - 1] = in_strides[i] * shape[i];
  IntList out_shape(rank), strides(rank);
  for (size_t j = 0; j < rank; ++j) {
    out_shape[j] = shape[perm[j]];
    strides[j] = in_strides[perm[j]];
  }
  const int64_t total = element_count(shape);
  if (total == 0) return;
  const int64_t last = rank ? out_shape[rank - 1] : 1;
  const int64_t last_stride = rank ? strides[rank - 1] : 0;
  IntList idx(rank, 0);
  int64_t off = 0;
  for (int64_t done = 0; done < total; done += last) {
    for (int64_t k = 0; k < last; ++k) *out++ = in[off + k * last_stride];
    // advance the index over all but the last axis
    for (size_t d = rank >= 1 ? rank - 1 : 0; d-- > 0;) {
      if (++idx[d] < out_shape[d]) {
        off += strides[d];
        break;
      }
      off -= strides[d] * (out_shape[d] - 1);
      idx[d] = 0;
    }
  }
}

// The contiguous-run reduction that computes `op` (then finish_row), if any.
bool row_reduce_of(ReduceOp op, RowReduce* r) {
  switch (op) {
    case ReduceOp::kSum:
    case ReduceOp::kMean:
    case ReduceOp::kLogSum: *r = RowReduce::kSum; return true;
    case ReduceOp::kSumSquare:
    case ReduceOp::kL2: *r = RowReduce::kSumSquare; return true;
    case ReduceOp::kL1: *r = RowReduce::kAbsSum; return true;
    case ReduceOp::kMax: *r = RowReduce::kMax; return true;
    case ReduceOp::kMin: *r = RowReduce::kMin; return true;
    default: return false;
  }
}

float finish_row(ReduceOp op, double v, int64_t n) {
  switch (op) {
    case ReduceOp::kMean: return static_cast<float>(v / static_cast<double>(n));
    case ReduceOp::kL2: return static_cast<float>(std::sqrt(v));
    case ReduceOp::kLogSum: return static_cast<float>(std::log(v));
    default: return static_cast<float>(v);
  }
}

// Float32 reductions of `outer` contiguous runs of n: runs of up to kChunk
// whole, longer ones cut into kChunk pieces whose partial results are
// combined in order, so the result does not depend on the thread count.
void reduce_contiguous(ThreadPool& pool, ReduceOp op, RowReduce rop, const float* src, float* dst, int64_t outer,
                       int64_t n) {
  constexpr int64_t kChunk = int64_t{1} << 15;
  const int64_t chunks = (n + kChunk - 1) / kChunk;
  if (chunks == 1) {
    const int64_t grain = std::max<int64_t>(1, kChunk / n);
    pool.parallel_for(outer, grain, [&](int64_t b, int64_t e) {
      double r[64];  // up to 64 rows a call
      for (int64_t o = b; o < e; o += 64) {
        const int64_t m = std::min<int64_t>(64, e - o);
        reduce_rows_f32(rop, src + o * n, n, m, r);
        for (int64_t i = 0; i < m; ++i) dst[o + i] = finish_row(op, r[i], n);
      }
    });
    return;
  }
  thread_local AlignedScratch partial_buf;
  double* partial = partial_buf.get<double>(static_cast<size_t>(outer * chunks));
  pool.parallel_for(outer * chunks, 1, [&](int64_t b, int64_t e) {
    for (int64_t u = b; u < e; ++u) {
      const int64_t o = u / chunks, c = u % chunks;
      const int64_t begin = c * kChunk, len = std::min(kChunk, n - begin);
      partial[u] = reduce_row_f32(rop, src + o * n + begin, len);
    }
  });
  for (int64_t o = 0; o < outer; ++o) {
    double v = partial[o * chunks];
    for (int64_t c = 1; c < chunks; ++c) v = reduce_row_combine(rop, v, partial[o * chunks + c]);
    dst[o] = finish_row(op, v, n);
  }
}

struct ReducePlan {
  Shape out_shape;
  bool identity = false;          // noop_with_empty_axes with no axes
  IntList reduced;                // per input axis: 1 when reduced (inline up to rank 8: no allocation)
};

Result<ReducePlan> plan_reduce(KernelContext& ctx, const Tensor& x, bool axes_from_input) {
  const auto& node = ctx.node();
  const int64_t rank = static_cast<int64_t>(x.rank());
  IntList axes;
  bool have_axes = false;
  if (axes_from_input) {
    if (const Tensor* a = ctx.input(1)) {
      DLRT_ASSIGN_OR_RETURN(axes, read_int_tensor(*a, ctx));
      have_axes = true;
    }
  } else if (node.has_attr("axes")) {
    axes = ints_attr(node, "axes", 0, 0);
    have_axes = true;
  }
  const bool keepdims = node.attr_int("keepdims", 1) != 0;
  const bool noop = node.attr_int("noop_with_empty_axes", 0) != 0;
  ReducePlan p;
  p.reduced.assign(static_cast<size_t>(rank), 0);
  if (!have_axes || axes.empty()) {
    if (noop && axes_from_input) {
      p.identity = true;
      p.out_shape = x.shape();
      return p;
    }
    std::fill(p.reduced.begin(), p.reduced.end(), 1);
  } else {
    for (int64_t a : axes) {
      DLRT_ASSIGN_OR_RETURN(int64_t na, normalize_axis(a, rank, ctx));
      p.reduced[na] = 1;  // an axis listed twice (1 and -1 on rank 2) is reduced once, as ONNX Runtime does
    }
  }
  for (int64_t d = 0; d < rank; ++d) {
    if (!p.reduced[d]) p.out_shape.push_back(x.dim(d));
    else if (keepdims) p.out_shape.push_back(1);
  }
  return p;
}

template <typename T>
Status run_reduce(KernelContext& ctx, ReduceOp op, const Tensor& x, const ReducePlan& p, Tensor& y) {
  const int64_t rank = static_cast<int64_t>(x.rank());
  // Merge the input into runs of kept / reduced axes: run k is reduced when
  // run_reduced[k] is 1 and spans run_extent[k] elements.
  IntList run_reduced, run_extent;
  for (int64_t d = 0; d < rank; ++d) {
    const int64_t r = p.reduced[d];
    if (x.dim(d) == 1 && !run_reduced.empty()) continue;  // size-1 axes never matter for layout
    if (!run_reduced.empty() && run_reduced.back() == r) {
      run_extent.back() *= x.dim(d);
    } else {
      run_reduced.push_back(r);
      run_extent.push_back(x.dim(d));
    }
  }
  int64_t n_reduced_runs = 0;
  for (int64_t r : run_reduced) n_reduced_runs += r;
  const T* src = x.data<T>();
  int64_t outer = 1, n = 1, inner = 1;
  if (n_reduced_runs <= 1) {
    bool seen = false;
    for (size_t k = 0; k < run_reduced.size(); ++k) {
      if (run_reduced[k]) { n = run_extent[k]; seen = true; }
      else if (!seen) outer *= run_extent[k];
      else inner *= run_extent[k];
    }
    // A reduced size-1 axis that was merged away still counts (n==1 is fine).
  } else {
    // Make the reduced axes trailing: kept axes first, then reduced axes,
    // in a per-thread buffer that is reused from run to run.
    IntList perm;
    for (int64_t d = 0; d < rank; ++d) if (!p.reduced[d]) { perm.push_back(d); outer *= x.dim(d); }
    for (int64_t d = 0; d < rank; ++d) if (p.reduced[d]) { perm.push_back(d); n *= x.dim(d); }
    static thread_local AlignedScratch tmp;
    T* t = tmp.get<T>(static_cast<size_t>(x.size()));
    transpose_copy(src, t, x.shape(), perm);
    src = t;
  }
  T* dst = y.data<T>();
  if (outer * inner == 0) return Status::Ok();
  if constexpr (std::is_same_v<T, float>) {
    RowReduce rop;
    if (inner == 1 && n >= 1 && row_reduce_of(op, &rop)) {
      reduce_contiguous(ctx.pool(), op, rop, src, dst, outer, n);
      return Status::Ok();
    }
  }
  constexpr int64_t kBlock = kReduceBlock;
  const int64_t blocks = (inner + kBlock - 1) / kBlock;
  const int64_t units = outer * blocks;
  const int64_t work_per_unit = std::max<int64_t>(1, n * std::min(inner, kBlock));
  const int64_t grain = std::max<int64_t>(1, 32768 / work_per_unit);
  ctx.pool().parallel_for(units, grain, [&](int64_t b, int64_t e) {
    for (int64_t u = b; u < e; ++u) {
      int64_t o = u / blocks, blk = u % blocks;
      int64_t ib = blk * kBlock, ie = std::min(inner, ib + kBlock);
      reduce_block<T>(op, src, dst, n, inner, o, ib, ie);
    }
  });
  return Status::Ok();
}

template <ReduceOp kOp>
Status reduce_kernel(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
  const std::string& op_type = ctx.node().op_type;
  const int axes_input_opset = op_type == "ReduceSum" ? 13 : 18;
  const bool axes_from_input = ctx.opset() >= axes_input_opset;
  DLRT_ASSIGN_OR_RETURN(ReducePlan p, plan_reduce(ctx, *x, axes_from_input));
  if (p.identity) {
    ctx.set_output(0, *x);
    return Status::Ok();
  }
  DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), p.out_shape));
  if (x->dtype() == DType::kBool && (kOp == ReduceOp::kMax || kOp == ReduceOp::kMin))
    return run_reduce<uint8_t>(ctx, kOp, *x, p, *y);  // bytes holding 0/1: max is "any", min is "all"
  Status s = dispatch_numeric(x->dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    return run_reduce<T>(ctx, kOp, *x, p, *y);
  });
  if (!s.ok() && s.code() == StatusCode::kUnsupported) return ctx.unsupported(s.message());
  return s;
}

// ---- ArgMax / ArgMin ----

template <typename T, bool kMax>
void arg_block(const T* in, int64_t* out, int64_t n, int64_t inner, int64_t o, bool last) {
  const T* base = in + o * n * inner;
  int64_t* dst = out + o * inner;
  std::vector<T> best(base, base + inner);
  std::fill(dst, dst + inner, 0);
  for (int64_t r = 1; r < n; ++r) {
    const T* row = base + r * inner;
    for (int64_t i = 0; i < inner; ++i) {
      T x = row[i];
      if (is_nan_value(best[i])) continue;  // the first NaN wins, like numpy
      bool better = kMax ? (x > best[i]) : (x < best[i]);
      bool tie = !better && x == best[i];
      if (better || is_nan_value(x) || (last && tie)) {
        best[i] = x;
        dst[i] = r;
      }
    }
  }
}

template <bool kMax>
Status arg_kernel(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
  const auto& node = ctx.node();
  const int64_t rank = static_cast<int64_t>(x->rank());
  if (rank == 0) return ctx.invalid("input must have rank >= 1");
  DLRT_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(node.attr_int("axis", 0), rank, ctx));
  const bool keepdims = node.attr_int("keepdims", 1) != 0;
  const bool last = node.attr_int("select_last_index", 0) != 0;
  if (x->dim(axis) == 0) return ctx.invalid("cannot take Arg" + std::string(kMax ? "Max" : "Min") + " over an empty axis");
  Shape out_shape;
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < rank; ++d) {
    if (d < axis) outer *= x->dim(d);
    if (d > axis) inner *= x->dim(d);
    if (d != axis) out_shape.push_back(x->dim(d));
    else if (keepdims) out_shape.push_back(1);
  }
  const int64_t n = x->dim(axis);
  DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DType::kInt64, out_shape));
  Status s = dispatch_numeric(x->dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    const T* src = x->data<T>();
    int64_t* dst = y->data<int64_t>();
    const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(1, n * inner));
    ctx.pool().parallel_for(outer, grain, [&](int64_t b, int64_t e) {
      for (int64_t o = b; o < e; ++o) arg_block<T, kMax>(src, dst, n, inner, o, last);
    });
    return Status::Ok();
  });
  if (!s.ok() && s.code() == StatusCode::kUnsupported) return ctx.unsupported(s.message());
  return s;
}

}  // namespace

Status register_reduce_kernels(KernelRegistry& r) {
  DLRT_RETURN_IF_ERROR(r.add_fn("ReduceSum", reduce_kernel<ReduceOp::kSum>, 1));
  DLRT_RETURN_IF_ERROR(r.add_fn("ReduceMean", reduce_kernel<ReduceOp::kMean>, 1));
  DLRT_RETURN_IF_ERROR(r.add_fn("ReduceMax", reduce_kernel<ReduceOp::kMax>, 1));
  DLRT_RETURN_IF_ERROR(r.add_fn("ReduceMin", reduce_kernel<ReduceOp::kMin>, 1));
  DLRT_RETURN_IF_ERROR(r.add_fn("ReduceProd", reduce_kernel<ReduceOp::kProd>, 1));
  DLRT_RETURN_IF_ERROR(r.add_fn("ReduceL1", reduce_kernel<ReduceOp::kL1>, 1));
  DLRT_RETURN_IF_ERROR(r.add_fn("ReduceL2", reduce_kernel<ReduceOp::kL2>, 1));
  DLRT_RETURN_IF_ERROR(r.add_fn("ReduceLogSum", reduce_kernel<ReduceOp::kLogSum>, 1));
  DLRT_RETURN_IF_ERROR(r.add_fn("ReduceLogSumExp", reduce_kernel<ReduceOp::kLogSumExp>, 1));
  DLRT_RETURN_IF_ERROR(r.add_fn("ReduceSumSquare", reduce_kernel<ReduceOp::kSumSquare>, 1));
  DLRT_RETURN_IF_ERROR(r.add_fn("ArgMax", arg_kernel<true>, 1));
  DLRT_RETURN_IF_ERROR(r.add_fn("ArgMin", arg_kernel<false>, 1));
  return Status::Ok();
}

}  // namespace dlrt::cpu
