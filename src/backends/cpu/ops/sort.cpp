// Ordering ops: TopK, CumSum, Unique.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <numeric>
#include <vector>

#include "backends/cpu/kernel_families.h"
#include "backends/cpu/kernel_util.h"

namespace dlrt::cpu {
namespace {

template <typename T>
inline bool is_nan_value(const T& x) {
  if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) return std::isnan(static_cast<float>(x));
  else if constexpr (std::is_floating_point_v<T>) return std::isnan(x);
  else return false;
}

// A strict weak order on values in which NaN is larger than every number
// (numpy's convention), so sorting never sees an inconsistent comparator.
template <typename T>
inline bool value_less(const T& a, const T& b) {
  if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
    return value_less(static_cast<float>(a), static_cast<float>(b));
  } else if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a)) return false;
    if (std::isnan(b)) return true;
    return a < b;
  } else {
    return a < b;
  }
}

template <typename T>
inline bool value_equal(const T& a, const T& b) {
  return !value_less(a, b) && !value_less(b, a);
}

// ---- TopK ----

Status topk_kernel(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
  const auto& node = ctx.node();
  const int64_t rank = static_cast<int64_t>(x->rank());
  if (rank == 0) return ctx.invalid("input must have rank >= 1");
  DLRT_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(node.attr_int("axis", -1), rank, ctx));
  int64_t k;
  if (ctx.opset() < 10) {
    if (!node.has_attr("k")) return ctx.invalid("attribute k is required");
    k = node.attr_int("k", 0);
  } else {
    DLRT_ASSIGN_OR_RETURN(const Tensor* kt, required_input(ctx, 1));
    DLRT_ASSIGN_OR_RETURN(auto kv, read_int_tensor(*kt, ctx));
    if (kv.size() != 1) return ctx.invalid("K must hold exactly one value");
    k = kv[0];
  }
  const bool largest = node.attr_int("largest", 1) != 0;
  const int64_t n = x->dim(axis);
  if (k < 0 || k > n)
    return ctx.invalid("k = " + std::to_string(k) + " is out of range for axis of size " + std::to_string(n));
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < rank; ++d) {
    if (d < axis) outer *= x->dim(d);
    if (d > axis) inner *= x->dim(d);
  }
  Shape out_shape = x->shape();
  out_shape[axis] = k;
  DLRT_ASSIGN_OR_RETURN(Tensor * vals, ctx.allocate_output(0, x->dtype(), out_shape));
  Tensor* idx = nullptr;
  if (ctx.num_outputs() > 1) {
    DLRT_ASSIGN_OR_RETURN(idx, ctx.allocate_output(1, DType::kInt64, out_shape));
  }
  if (vals->size() == 0) return Status::Ok();
  Status s = dispatch_numeric(x->dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    const T* src = x->data<T>();
    T* vout = vals->data<T>();
    int64_t* iout = idx ? idx->data<int64_t>() : nullptr;
    const int64_t grain = std::max<int64_t>(1, 4096 / std::max<int64_t>(1, n));
    ctx.pool().parallel_for(outer * inner, grain, [&](int64_t b, int64_t e) {
      std::vector<int64_t> order(static_cast<size_t>(n));
      for (int64_t u = b; u < e; ++u) {
        const int64_t o = u / inner, i = u % inner;
        const T* base = src + o * n * inner + i;
        std::iota(order.begin(), order.end(), 0);
        // Ties go to the lower index, whatever the direction.
        auto cmp = [&](int64_t a, int64_t c) {
          const T& va = base[a * inner];
          const T& vc = base[c * inner];
          if (largest) {
            if (value_less(vc, va)) return true;
            if (value_less(va, vc)) return false;
          } else {
            if (value_less(va, vc)) return true;
            if (value_less(vc, va)) return false;
          }
          return a < c;
        };
        if (k < n) std::partial_sort(order.begin(), order.begin() + k, order.end(), cmp);
        else std::sort(order.begin(), order.end(), cmp);
        T* vdst = vout + o * k * inner + i;
        for (int64_t j = 0; j < k; ++j) vdst[j * inner] = base[order[j] * inner];
        if (iout) {
          int64_t* idst = iout + o * k * inner + i;
          for (int64_t j = 0; j < k; ++j) idst[j * inner] = order[j];
        }
      }
    });
    return Status::Ok();
  });
  if (!s.ok() && s.code() == StatusCode::kUnsupported) return ctx.unsupported(s.message());
  return s;
}

// ---- CumSum, CumProd ----

template <typename T>
inline T add_wrap(T a, T b) {
  if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
  } else if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(a + b);
  } else if constexpr (std::is_floating_point_v<T>) {
    return a + b;
  } else {
    return T(static_cast<float>(a) + static_cast<float>(b));
  }
}

template <typename T>
inline T mul_wrap(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    // Unsigned arithmetic wraps; small types promote to unsigned (not int).
    using U = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) * static_cast<U>(b)));
  } else if constexpr (std::is_floating_point_v<T>) {
    return a * b;
  } else {
    return T(static_cast<float>(a) * static_cast<float>(b));
  }
}

template <bool kProduct>
Status cumulative_kernel(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
  DLRT_ASSIGN_OR_RETURN(const Tensor* at, required_input(ctx, 1));
  DLRT_ASSIGN_OR_RETURN(auto av, read_int_tensor(*at, ctx));
  if (av.size() != 1) return ctx.invalid("axis must be a scalar");
  const int64_t rank = static_cast<int64_t>(x->rank());
  if (rank == 0) return ctx.invalid("input must have rank >= 1");
  DLRT_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(av[0], rank, ctx));
  const bool exclusive = ctx.node().attr_int("exclusive", 0) != 0;
  const bool reverse = ctx.node().attr_int("reverse", 0) != 0;
  int64_t outer = 1, inner = 1;
  const int64_t n = x->dim(axis);
  for (int64_t d = 0; d < rank; ++d) {
    if (d < axis) outer *= x->dim(d);
    if (d > axis) inner *= x->dim(d);
  }
  DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), x->shape()));
  if (x->size() == 0) return Status::Ok();
  Status s = dispatch_numeric(x->dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    const T* src = x->data<T>();
    T* dst = y->data<T>();
    const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(1, n * inner));
    ctx.pool().parallel_for(outer, grain, [&](int64_t b, int64_t e) {
      for (int64_t o = b; o < e; ++o) {
        const T* in = src + o * n * inner;
        T* out = dst + o * n * inner;
        // Row by row along the axis; each row is contiguous over `inner`.
        std::vector<T> acc(static_cast<size_t>(inner), kProduct ? T(1) : T(0));
        auto step_acc = [](T a, T b) { return kProduct ? mul_wrap(a, b) : add_wrap(a, b); };
        for (int64_t step = 0; step < n; ++step) {
          const int64_t r = reverse ? n - 1 - step : step;
          const T* row = in + r * inner;
          T* orow = out + r * inner;
          if (exclusive) {
            for (int64_t i = 0; i < inner; ++i) {
              orow[i] = acc[i];
              acc[i] = step_acc(acc[i], row[i]);
            }
          } else {
            for (int64_t i = 0; i < inner; ++i) {
              acc[i] = step_acc(acc[i], row[i]);
              orow[i] = acc[i];
            }
          }
        }
      }
    });
    return Status::Ok();
  });
  if (!s.ok() && s.code() == StatusCode::kUnsupported) return ctx.unsupported(s.message());
  return s;
}

// ---- Unique ----

template <typename T>
bool slice_less(const T* a, const T* b, int64_t n, int64_t inner) {
  // Slices are [n_before... ] laid out as (outer, inner) blocks; compare in memory order.
  for (int64_t j = 0; j < n; ++j) {
    if (value_less(a[j], b[j])) return true;
    if (value_less(b[j], a[j])) return false;
  }
  return false;
}

template <typename T>
Status unique_typed(KernelContext& ctx, const Tensor& x, bool has_axis, int64_t axis, bool sorted) {
  // View X as [outer, m, inner] with m slices along `axis` (flattened: outer = inner = 1).
  int64_t outer = 1, m = x.size(), inner = 1;
  if (has_axis) {
    m = x.dim(axis);
    for (int64_t d = 0; d < static_cast<int64_t>(x.rank()); ++d) {
      if (d < axis) outer *= x.dim(d);
      if (d > axis) inner *= x.dim(d);
    }
  }
  const int64_t slice_len = outer * inner;
  // Gather each slice contiguously so slices compare with one loop.
  const T* src = x.data<T>();
  std::vector<T> slices(static_cast<size_t>(m * slice_len));
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < m; ++j)
      for (int64_t i = 0; i < inner; ++i) slices[j * slice_len + o * inner + i] = src[(o * m + j) * inner + i];
  auto sl = [&](int64_t j) { return slices.data() + j * slice_len; };
  auto less = [&](int64_t a, int64_t b) { return slice_less(sl(a), sl(b), slice_len, inner); };
  std::vector<int64_t> order(static_cast<size_t>(m));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), less);  // stable: the first occurrence leads each group
  // Groups of equal slices in sorted order.
  std::vector<int64_t> group_of(static_cast<size_t>(m));
  std::vector<int64_t> first;   // first occurrence (index in X) of each group
  std::vector<int64_t> counts;
  for (int64_t p = 0; p < m; ++p) {
    if (p == 0 || less(order[p - 1], order[p])) {
      first.push_back(order[p]);
      counts.push_back(0);
    }
    group_of[order[p]] = static_cast<int64_t>(first.size()) - 1;
    counts.back()++;
  }
  const int64_t u = static_cast<int64_t>(first.size());
  // Output order of the groups: sorted, or by first occurrence.
  std::vector<int64_t> out_order(static_cast<size_t>(u));
  std::iota(out_order.begin(), out_order.end(), 0);
  if (!sorted) std::sort(out_order.begin(), out_order.end(), [&](int64_t a, int64_t b) { return first[a] < first[b]; });
  std::vector<int64_t> rank_of(static_cast<size_t>(u));
  for (int64_t q = 0; q < u; ++q) rank_of[out_order[q]] = q;

  Shape y_shape;
  if (has_axis) {
    y_shape = x.shape();
    y_shape[axis] = u;
  } else {
    y_shape = {u};
  }
  DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), y_shape));
  T* yd = y->data<T>();
  for (int64_t q = 0; q < u; ++q) {
    const T* s = sl(first[out_order[q]]);
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) yd[(o * u + q) * inner + i] = s[o * inner + i];
  }
  if (ctx.num_outputs() > 1 && ctx.output_requested(1)) {
    DLRT_ASSIGN_OR_RETURN(Tensor * t, ctx.allocate_output(1, DType::kInt64, {u}));
    for (int64_t q = 0; q < u; ++q) t->data<int64_t>()[q] = first[out_order[q]];
  }
  if (ctx.num_outputs() > 2 && ctx.output_requested(2)) {
    DLRT_ASSIGN_OR_RETURN(Tensor * t, ctx.allocate_output(2, DType::kInt64, {m}));
    for (int64_t j = 0; j < m; ++j) t->data<int64_t>()[j] = rank_of[group_of[j]];
  }
  if (ctx.num_outputs() > 3 && ctx.output_requested(3)) {
    DLRT_ASSIGN_OR_RETURN(Tensor * t, ctx.allocate_output(3, DType::kInt64, {u}));
    for (int64_t q = 0; q < u; ++q) t->data<int64_t>()[q] = counts[out_order[q]];
  }
  return Status::Ok();
}

Status unique_kernel(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
  const auto& node = ctx.node();
  const bool sorted = node.attr_int("sorted", 1) != 0;
  const bool has_axis = node.has_attr("axis");
  int64_t axis = 0;
  if (has_axis) {
    if (x->rank() == 0) return ctx.invalid("axis given for a scalar input");
    DLRT_ASSIGN_OR_RETURN(axis, normalize_axis(node.attr_int("axis", 0), static_cast<int64_t>(x->rank()), ctx));
  }
  // bool is stored as one byte holding 0 or 1, so it sorts as uint8.
  if (x->dtype() == DType::kBool) return unique_typed<uint8_t>(ctx, *x, has_axis, axis, sorted);
  Status s = dispatch_all(x->dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool>) return Status::Ok();
    else return unique_typed<T>(ctx, *x, has_axis, axis, sorted);
  });
  if (!s.ok() && s.code() == StatusCode::kUnsupported) return ctx.unsupported(s.message());
  return s;
}

}  // namespace

Status register_sort_kernels(KernelRegistry& r) {
  DLRT_RETURN_IF_ERROR(r.add_fn("TopK", topk_kernel, 1));
  DLRT_RETURN_IF_ERROR(r.add_fn("CumSum", cumulative_kernel<false>, 11));
  DLRT_RETURN_IF_ERROR(r.add_fn("CumProd", cumulative_kernel<true>, 26));
  DLRT_RETURN_IF_ERROR(r.add_fn("Unique", unique_kernel, 11));
  return Status::Ok();
}

}  // namespace dlrt::cpu
