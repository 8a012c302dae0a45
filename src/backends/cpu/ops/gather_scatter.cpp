// Indexed reads and writes: Gather, GatherElements, GatherND, ScatterND,
// ScatterElements (and its deprecated alias Scatter), OneHot, NonZero. Every
// index is bounds-checked before any element moves; an out-of-range index is a
// kOutOfRange Status naming the index, its position and the valid range.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>

#include "backends/cpu/kernel_families.h"
#include "backends/cpu/ops/layout_impl.h"

namespace dlrt::cpu {
namespace {

using layout::contiguous_strides;
using layout::copy_elements;
using layout::kCopyGrain;

// Wraps a negative index and checks it against [0, dim).
Status check_index(int64_t& idx, int64_t dim, int64_t position, const char* what, const KernelContext& ctx) {
  const int64_t orig = idx;
  if (idx < 0) idx += dim;
  if (idx < 0 || idx >= dim)
    return ctx.error(StatusCode::kOutOfRange, std::string(what) + " index " + std::to_string(orig) + " at position " +
                                                  std::to_string(position) + " is out of range [" +
                                                  std::to_string(-dim) + ", " + std::to_string(dim - 1) + "]");
  return Status::Ok();
}

int64_t product(const Shape& s, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end && i < s.size(); ++i) p *= s[i];
  return p;
}

template <typename Fn>
void for_range(KernelContext& ctx, int64_t n, int64_t per_item, Fn&& fn) {
  if (n <= 0) return;
  const int64_t grain = std::max<int64_t>(1, kCopyGrain / std::max<int64_t>(per_item, 1));
  if (n <= grain) fn(int64_t{0}, n);
  else ctx.pool().parallel_for(n, ctx.pool().balanced_grain(n, grain), fn);
}

Status gather(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* data, required_input(ctx, 0));
  DLRT_ASSIGN_OR_RETURN(const Tensor* ind_t, required_input(ctx, 1));
  const int64_t r = static_cast<int64_t>(data->rank());
  if (r == 0) return ctx.invalid("cannot gather from a scalar");
  DLRT_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx.node().attr_int("axis", 0), r, ctx));
  // The indices are read in place (a copy of a long list would allocate on every run).
  if (ind_t->dtype() != DType::kInt64 && ind_t->dtype() != DType::kInt32)
    return ctx.invalid(std::string("expected an int32 or int64 tensor, got ") + dtype_name(ind_t->dtype()));
  const bool i64 = ind_t->dtype() == DType::kInt64;
  const int64_t dim = data->dim(axis);
  auto raw = [&](int64_t j) -> int64_t { return i64 ? ind_t->data<int64_t>()[j] : ind_t->data<int32_t>()[j]; };
  for (int64_t j = 0; j < ind_t->size(); ++j) {
    int64_t v = raw(j);
    DLRT_RETURN_IF_ERROR(check_index(v, dim, j, "Gather", ctx));
  }
  auto index = [&](int64_t j) {  // in [0, dim), as checked above
    const int64_t v = raw(j);
    return v < 0 ? v + dim : v;
  };
  Shape out(data->shape().begin(), data->shape().begin() + axis);
  out.insert(out.end(), ind_t->shape().begin(), ind_t->shape().end());
  out.insert(out.end(), data->shape().begin() + axis + 1, data->shape().end());
  const int64_t outer = product(data->shape(), 0, axis);
  const int64_t inner = product(data->shape(), axis + 1, r);
  const int64_t n = ind_t->size();
  // Every element is written below: no zero fill.
  DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, data->dtype(), out));
  if (y->size() == 0) return Status::Ok();
  for_range(ctx, outer * n, inner, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      const int64_t o = i / n, j = i % n;
      copy_elements(*data, (o * dim + index(j)) * inner, *y, i * inner, inner);
    }
  });
  return Status::Ok();
}

// Offsets into `data` of every element of an ElementsOp (GatherElements,
// ScatterElements): indices has data's rank; its value replaces the axis coordinate.
Result<std::vector<int64_t>> element_offsets(const Tensor& data, const Tensor& ind_t, int64_t axis,
                                             const char* what, const KernelContext& ctx) {
  const int64_t r = static_cast<int64_t>(data.rank());
  if (static_cast<int64_t>(ind_t.rank()) != r)
    return ctx.invalid("indices " + shape_to_string(ind_t.shape()) + " must have the data's rank " + std::to_string(r));
  for (int64_t d = 0; d < r; ++d)
    if (d != axis && ind_t.dim(d) > data.dim(d))
      return ctx.invalid("indices " + shape_to_string(ind_t.shape()) + " exceed the data " +
                         shape_to_string(data.shape()) + " on axis " + std::to_string(d));
  DLRT_ASSIGN_OR_RETURN(std::vector<int64_t> idx, read_int_tensor(ind_t, ctx));
  const auto ds = contiguous_strides(data.shape());
  const int64_t dim = data.dim(axis);
  std::vector<int64_t> coord(r, 0);
  int64_t base = 0;  // offset of coord with the axis coordinate left at 0
  for (size_t i = 0; i < idx.size(); ++i) {
    DLRT_RETURN_IF_ERROR(check_index(idx[i], dim, i, what, ctx));
    const int64_t off = base + idx[i] * ds[axis];
    // Advance coord over the indices' shape.
    for (int64_t d = r - 1; d >= 0; --d) {
      if (d != axis) base += ds[d];
      if (++coord[d] < ind_t.dim(d)) break;
      if (d != axis) base -= coord[d] * ds[d];
      coord[d] = 0;
    }
    idx[i] = off;
  }
  return idx;
}

Status gather_elements(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* data, required_input(ctx, 0));
  DLRT_ASSIGN_OR_RETURN(const Tensor* ind_t, required_input(ctx, 1));
  const int64_t r = static_cast<int64_t>(data->rank());
  if (r == 0) return ctx.invalid("cannot gather from a scalar");
  DLRT_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx.node().attr_int("axis", 0), r, ctx));
  DLRT_ASSIGN_OR_RETURN(auto offs, element_offsets(*data, *ind_t, axis, "GatherElements", ctx));
  DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, data->dtype(), ind_t->shape()));
  return layout::dispatch_copyable(data->dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* in = data->data<T>();
    T* o = y->data<T>();
    for_range(ctx, static_cast<int64_t>(offs.size()), 1, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) o[i] = in[offs[i]];
    });
    return Status::Ok();
  });
}

// Offsets of the slices that a GatherND/ScatterND index tuple addresses.
// `batch_dims` leading dims are shared by data and indices.
Result<std::vector<int64_t>> nd_offsets(const Tensor& data, const Tensor& ind_t, int64_t batch_dims, const char* what,
                                        const KernelContext& ctx) {
  const int64_t r = static_cast<int64_t>(data.rank()), q = static_cast<int64_t>(ind_t.rank());
  if (q < 1) return ctx.invalid("indices must have rank >= 1");
  if (batch_dims < 0 || batch_dims >= std::min(q, r))
    return ctx.invalid("batch_dims " + std::to_string(batch_dims) + " must be in [0, min(data rank, indices rank))");
  const int64_t k = ind_t.dim(q - 1);
  if (k < 1 || k > r - batch_dims)
    return ctx.invalid("the last dim of indices " + shape_to_string(ind_t.shape()) + " must be in [1, " +
                       std::to_string(r - batch_dims) + "]");
  for (int64_t d = 0; d < batch_dims; ++d)
    if (ind_t.dim(d) != data.dim(d))
      return ctx.invalid("batch dims of indices " + shape_to_string(ind_t.shape()) + " and data " +
                         shape_to_string(data.shape()) + " differ");
  DLRT_ASSIGN_OR_RETURN(auto idx, read_int_tensor(ind_t, ctx));
  const auto ds = contiguous_strides(data.shape());
  const int64_t tuples = ind_t.size() / k;
  const int64_t per_batch = product(ind_t.shape(), batch_dims, q - 1);
  const int64_t batch_stride = product(data.shape(), batch_dims, r);
  std::vector<int64_t> offs(tuples);
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t off = per_batch > 0 ? (t / per_batch) * batch_stride : 0;
    for (int64_t j = 0; j < k; ++j) {
      int64_t v = idx[t * k + j];
      DLRT_RETURN_IF_ERROR(check_index(v, data.dim(batch_dims + j), t * k + j, what, ctx));
      off += v * ds[batch_dims + j];
    }
    offs[t] = off;
  }
  return offs;
}

Status gather_nd(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* data, required_input(ctx, 0));
  DLRT_ASSIGN_OR_RETURN(const Tensor* ind_t, required_input(ctx, 1));
  const int64_t b = ctx.opset() >= 12 ? ctx.node().attr_int("batch_dims", 0) : 0;
  DLRT_ASSIGN_OR_RETURN(auto offs, nd_offsets(*data, *ind_t, b, "GatherND", ctx));
  const int64_t q = static_cast<int64_t>(ind_t->rank());
  const int64_t k = ind_t->dim(q - 1);
  Shape out(ind_t->shape().begin(), ind_t->shape().end() - 1);
  out.insert(out.end(), data->shape().begin() + b + k, data->shape().end());
  const int64_t slice = product(data->shape(), b + k, data->rank());
  DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, data->dtype(), out));
  for_range(ctx, static_cast<int64_t>(offs.size()), slice, [&](int64_t s, int64_t e) {
    for (int64_t t = s; t < e; ++t) copy_elements(*data, offs[t], *y, t * slice, slice);
  });
  return Status::Ok();
}

enum class Reduction { kNone, kAdd, kMul, kMax, kMin };

Result<Reduction> reduction_of(const KernelContext& ctx) {
  const std::string s = ctx.node().attr_string("reduction", "none");
  if (s == "none") return Reduction::kNone;
  if (s == "add") return Reduction::kAdd;
  if (s == "mul") return Reduction::kMul;
  if (s == "max") return Reduction::kMax;
  if (s == "min") return Reduction::kMin;
  return ctx.invalid("unknown reduction '" + s + "' (expected none, add, mul, max or min)");
}

// dst = reduce(dst, src). Integers wrap instead of overflowing; half types compute in float.
template <typename T>
void reduce_into(T& dst, const T& src, Reduction red) {
  if constexpr (std::is_same_v<T, std::string>) {
    dst = src;  // only kNone reaches here for strings
  } else if constexpr (std::is_same_v<T, bool>) {
    switch (red) {
      case Reduction::kNone: dst = src; break;
      case Reduction::kAdd: case Reduction::kMax: dst = dst || src; break;
      case Reduction::kMul: case Reduction::kMin: dst = dst && src; break;
    }
  } else {
    using W = std::conditional_t<std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>, float, T>;
    const W a = static_cast<W>(dst), b = static_cast<W>(src);
    switch (red) {
      case Reduction::kNone: dst = src; break;
      case Reduction::kAdd:
        if constexpr (std::is_integral_v<W>) {
          using U = std::make_unsigned_t<W>;
          dst = static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
        } else {
          dst = T(a + b);
        }
        break;
      case Reduction::kMul:
        if constexpr (std::is_integral_v<W>) {
          using U = std::make_unsigned_t<W>;
          using P = std::conditional_t<(sizeof(U) < sizeof(unsigned)), unsigned, U>;  // avoid int promotion
          dst = static_cast<T>(static_cast<U>(static_cast<P>(static_cast<U>(a)) * static_cast<P>(static_cast<U>(b))));
        } else {
          dst = T(a * b);
        }
        break;
      case Reduction::kMax: if (b > a) dst = src; break;
      case Reduction::kMin: if (b < a) dst = src; break;
    }
  }
}

// Applies updates[i * slice + j] to out[offs[i] + j] in index order.
Status scatter_apply(KernelContext& ctx, Tensor& out, const Tensor& updates, const std::vector<int64_t>& offs,
                     int64_t slice, Reduction red) {
  if (updates.dtype() != out.dtype())
    return ctx.invalid(std::string("updates dtype ") + dtype_name(updates.dtype()) + " differs from data dtype " +
                       dtype_name(out.dtype()));
  if (red != Reduction::kNone && out.dtype() == DType::kString)
    return ctx.unsupported("reductions on string tensors");
  return dispatch_all(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* o = out.data<T>();
    const T* u = updates.data<T>();
    for (size_t i = 0; i < offs.size(); ++i)
      for (int64_t j = 0; j < slice; ++j) reduce_into<T>(o[offs[i] + j], u[i * slice + j], red);
    return Status::Ok();
  });
}

Status scatter_nd(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* data, required_input(ctx, 0));
  DLRT_ASSIGN_OR_RETURN(const Tensor* ind_t, required_input(ctx, 1));
  DLRT_ASSIGN_OR_RETURN(const Tensor* upd, required_input(ctx, 2));
  DLRT_ASSIGN_OR_RETURN(Reduction red, reduction_of(ctx));
  if (data->rank() == 0) return ctx.invalid("cannot scatter into a scalar");
  DLRT_ASSIGN_OR_RETURN(auto offs, nd_offsets(*data, *ind_t, 0, "ScatterND", ctx));
  const int64_t q = static_cast<int64_t>(ind_t->rank());
  const int64_t k = ind_t->dim(q - 1);
  Shape want(ind_t->shape().begin(), ind_t->shape().end() - 1);
  want.insert(want.end(), data->shape().begin() + k, data->shape().end());
  if (upd->shape() != want)
    return ctx.invalid("updates shape " + shape_to_string(upd->shape()) + " must be " + shape_to_string(want));
  DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, data->dtype(), data->shape()));
  DLRT_RETURN_IF_ERROR(y->copy_from(*data));
  return scatter_apply(ctx, *y, *upd, offs, product(data->shape(), k, data->rank()), red);
}

Status scatter_elements(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* data, required_input(ctx, 0));
  DLRT_ASSIGN_OR_RETURN(const Tensor* ind_t, required_input(ctx, 1));
  DLRT_ASSIGN_OR_RETURN(const Tensor* upd, required_input(ctx, 2));
  DLRT_ASSIGN_OR_RETURN(Reduction red, reduction_of(ctx));
  const int64_t r = static_cast<int64_t>(data->rank());
  if (r == 0) return ctx.invalid("cannot scatter into a scalar");
  if (upd->shape() != ind_t->shape())
    return ctx.invalid("updates " + shape_to_string(upd->shape()) + " must have the indices' shape " +
                       shape_to_string(ind_t->shape()));
  DLRT_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx.node().attr_int("axis", 0), r, ctx));
  DLRT_ASSIGN_OR_RETURN(auto offs, element_offsets(*data, *ind_t, axis, ctx.node().op_type.c_str(), ctx));
  DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, data->dtype(), data->shape()));
  DLRT_RETURN_IF_ERROR(y->copy_from(*data));
  return scatter_apply(ctx, *y, *upd, offs, 1, red);
}

// A numeric element as int64; `fallback` for NaN or values beyond int64.
template <typename T>
int64_t to_int64(T v, int64_t fallback) {
  if constexpr (std::is_integral_v<T>) {
    if constexpr (std::is_unsigned_v<T> && sizeof(T) == 8) {
      if (v > static_cast<T>(INT64_MAX)) return fallback;
    }
    return static_cast<int64_t>(v);
  } else {
    const double d = static_cast<double>(v);
    if (!std::isfinite(d) || d >= 9.2e18 || d <= -9.2e18) return fallback;
    return static_cast<int64_t>(d);
  }
}

Result<std::vector<int64_t>> read_numeric_as_int64(const Tensor& t, int64_t fallback, const KernelContext& ctx) {
  std::vector<int64_t> v(static_cast<size_t>(t.size()));
  Status s = dispatch_numeric(t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    for (int64_t i = 0; i < t.size(); ++i) v[i] = to_int64<T>(t.data<T>()[i], fallback);
    return Status::Ok();
  });
  if (!s.ok()) return ctx.invalid(s.message());
  return v;
}

Status one_hot(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* ind_t, required_input(ctx, 0));
  DLRT_ASSIGN_OR_RETURN(const Tensor* depth_t, required_input(ctx, 1));
  DLRT_ASSIGN_OR_RETURN(const Tensor* values, required_input(ctx, 2));
  if (depth_t->size() != 1) return ctx.invalid("depth must be a scalar or a one-element tensor");
  if (values->size() != 2) return ctx.invalid("values must hold exactly two elements [off, on]");
  DLRT_ASSIGN_OR_RETURN(auto depth_v, read_numeric_as_int64(*depth_t, -1, ctx));
  const int64_t depth = depth_v[0];
  if (depth < 1) return ctx.invalid("depth must be >= 1, got " + std::to_string(depth));
  DLRT_ASSIGN_OR_RETURN(auto idx, read_numeric_as_int64(*ind_t, INT64_MIN, ctx));
  const int64_t r = static_cast<int64_t>(ind_t->rank());
  int64_t axis = ctx.node().attr_int("axis", -1);
  if (axis < 0) axis += r + 1;
  if (axis < 0 || axis > r)
    return ctx.invalid("axis " + std::to_string(ctx.node().attr_int("axis", -1)) + " is out of range for output rank " +
                       std::to_string(r + 1));
  Shape out = ind_t->shape();
  out.insert(out.begin() + axis, depth);
  const int64_t outer = product(ind_t->shape(), 0, axis);
  const int64_t inner = product(ind_t->shape(), axis, r);
  DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, values->dtype(), out));
  return layout::dispatch_copyable(values->dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T off = values->data<T>()[0], on = values->data<T>()[1];
    T* o = y->data<T>();
    std::fill_n(o, y->size(), off);
    for (int64_t a = 0; a < outer; ++a) {
      for (int64_t j = 0; j < inner; ++j) {
        int64_t v = idx[a * inner + j];
        if (v == INT64_MIN || v < -depth || v >= depth) continue;  // out of range: all off
        if (v < 0) v += depth;
        o[(a * depth + v) * inner + j] = on;
      }
    }
    return Status::Ok();
  });
}

template <typename T>
bool is_nonzero(const T& v) {
  if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) return static_cast<float>(v) != 0.0f;
  else return v != T{};
}

Status non_zero(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
  if (x->dtype() == DType::kString) return ctx.unsupported("NonZero of strings");
  std::vector<int64_t> hits;
  DLRT_RETURN_IF_ERROR(dispatch_all(x->dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* p = x->data<T>();
    for (int64_t i = 0; i < x->size(); ++i)
      if (is_nonzero<T>(p[i])) hits.push_back(i);
    return Status::Ok();
  }));
  // A scalar is treated as 1-D, as numpy does.
  const int64_t r = std::max<int64_t>(1, static_cast<int64_t>(x->rank()));
  const int64_t n = static_cast<int64_t>(hits.size());
  DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DType::kInt64, {r, n}));
  const auto strides = contiguous_strides(x->shape());
  int64_t* o = y->data<int64_t>();
  for (int64_t j = 0; j < n; ++j) {
    if (x->rank() == 0) {
      o[j] = 0;
      continue;
    }
    int64_t rem = hits[j];
    for (int64_t d = 0; d < r; ++d) {
      o[d * n + j] = rem / strides[d];
      rem %= strides[d];
    }
  }
  return Status::Ok();
}

// TensorScatter (opset 24): present = past with update's `sequence_length`
// rows written along `axis` at write_indices[batch] (0 when absent), wrapping
// around max_sequence_length in "circular" mode.
Status tensor_scatter(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* past, required_input(ctx, 0));
  DLRT_ASSIGN_OR_RETURN(const Tensor* upd, required_input(ctx, 1));
  const Tensor* wi = ctx.input(2);
  if (past->dtype() != upd->dtype()) return ctx.invalid("past_cache and update must have the same type");
  if (past->dtype() == DType::kString) return ctx.unsupported("TensorScatter of strings is not supported by dlrt");
  const int64_t rank = static_cast<int64_t>(past->rank());
  if (rank < 2 || upd->rank() != past->rank())
    return ctx.invalid("past_cache and update must have the same rank >= 2, got " + shape_to_string(past->shape()) +
                       " and " + shape_to_string(upd->shape()));
  DLRT_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx.node().attr_int("axis", -2), rank, ctx));
  if (axis == 0) return ctx.invalid("axis cannot be the batch dimension 0");
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis && past->dim(d) != upd->dim(d))
      return ctx.invalid("update " + shape_to_string(upd->shape()) + " differs from past_cache " +
                         shape_to_string(past->shape()) + " outside the sequence axis");
  const std::string mode = ctx.node().attr_string("mode", "linear");
  if (mode != "linear" && mode != "circular") return ctx.invalid("mode must be \"linear\" or \"circular\"");
  const int64_t batch = past->dim(0), max_seq = past->dim(axis), seq = upd->dim(axis);
  if (seq > max_seq) return ctx.invalid("update is longer than the cache along the sequence axis");
  IntList starts(static_cast<size_t>(batch), 0);
  if (wi) {
    DLRT_ASSIGN_OR_RETURN(starts, read_int_tensor(*wi, ctx));
    if (static_cast<int64_t>(starts.size()) != batch) return ctx.invalid("write_indices must have batch_size values");
  }
  int64_t prefix = 1, inner = 1;
  for (int64_t d = 1; d < axis; ++d) prefix *= past->dim(d);
  for (int64_t d = axis + 1; d < rank; ++d) inner *= past->dim(d);
  DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, past->dtype(), past->shape()));
  if (past->nbytes() > 0) std::memcpy(y->raw_data(), past->raw_data(), past->nbytes());
  const size_t row = static_cast<size_t>(inner) * dtype_size(past->dtype());
  const auto* src = static_cast<const uint8_t*>(upd->raw_data());
  auto* dst = static_cast<uint8_t*>(y->raw_data());
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t w = starts[static_cast<size_t>(b)];
    if (w < 0 || (mode == "linear" && w + seq > max_seq))
      return ctx.invalid("write index " + std::to_string(w) + " of batch " + std::to_string(b) + " with " +
                         std::to_string(seq) + " new rows does not fit a cache of " + std::to_string(max_seq));
    for (int64_t p = 0; p < prefix; ++p)
      for (int64_t i = 0; i < seq; ++i) {
        const int64_t at = mode == "circular" ? (w + i) % max_seq : w + i;
        const int64_t outer = b * prefix + p;
        std::memcpy(dst + static_cast<size_t>(outer * max_seq + at) * row,
                    src + static_cast<size_t>(outer * seq + i) * row, row);
      }
  }
  return Status::Ok();
}

}  // namespace

Status register_gather_scatter_kernels(KernelRegistry& r) {
  DLRT_RETURN_IF_ERROR(r.add_fn("Gather", gather, 1));
  DLRT_RETURN_IF_ERROR(r.add_fn("GatherElements", gather_elements, 11));
  DLRT_RETURN_IF_ERROR(r.add_fn("GatherND", gather_nd, 11));
  DLRT_RETURN_IF_ERROR(r.add_fn("ScatterND", scatter_nd, 11));
  DLRT_RETURN_IF_ERROR(r.add_fn("ScatterElements", scatter_elements, 11));
  DLRT_RETURN_IF_ERROR(r.add_fn("Scatter", scatter_elements, 9));
  DLRT_RETURN_IF_ERROR(r.add_fn("OneHot", one_hot, 9));
  DLRT_RETURN_IF_ERROR(r.add_fn("NonZero", non_zero, 9));
  DLRT_RETURN_IF_ERROR(r.add_fn("TensorScatter", tensor_scatter, 24));
  return Status::Ok();
}

}  // namespace dlrt::cpu
