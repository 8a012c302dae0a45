// Ops that change a tensor's shape but not its elements (Reshape, Flatten,
// Squeeze, Unsqueeze, Identity, Dropout at inference: zero-copy views), ops
// that describe a shape (Shape, Size), and ops that create tensors from a
// shape or attributes (ConstantOfShape, Range, EyeLike, Constant).
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "backends/cpu/kernel_families.h"
#include "backends/cpu/ops/layout_impl.h"

namespace dlrt::cpu {
namespace {

using layout::copy_elements;
using layout::dispatch_copyable;

// Output 0 becomes `in` viewed with `shape` (shares storage).
Status set_view(KernelContext& ctx, const Tensor& in, Shape shape) {
  auto r = in.reshaped(std::move(shape));
  if (!r.ok()) return ctx.invalid(r.status().message());
  ctx.set_output(0, std::move(r).value());
  return Status::Ok();
}

// Reshape's target shape: 0 copies the input dim (unless allow_zero), -1 is inferred.
Result<Shape> resolve_reshape(const Shape& in, const IntList& spec, bool allow_zero,
                              const KernelContext& ctx) {
  Shape out(spec.size());
  int64_t infer_at = -1;
  int64_t known = 1;
  bool has_zero = false;
  for (size_t i = 0; i < spec.size(); ++i) {
    int64_t d = spec[i];
    if (d == -1) {
      if (infer_at >= 0) return ctx.invalid("reshape target " + shape_to_string(spec) + " has more than one -1");
      infer_at = static_cast<int64_t>(i);
      continue;
    }
    if (d == 0 && !allow_zero) {
      if (i >= in.size())
        return ctx.invalid("reshape target " + shape_to_string(spec) + " copies dim " + std::to_string(i) +
                           " (0) but the input " + shape_to_string(in) + " has rank " + std::to_string(in.size()));
      d = in[i];
    }
    if (d < 0) return ctx.invalid("reshape target " + shape_to_string(spec) + " has invalid dim " + std::to_string(d));
    if (d == 0) has_zero = true;
    if (d != 0 && known > std::numeric_limits<int64_t>::max() / d)
      return ctx.invalid("reshape target " + shape_to_string(spec) + " overflows");
    known *= d;
    out[i] = d;
  }
  const int64_t total = element_count(in);
  if (infer_at >= 0) {
    if (has_zero) {
      if (total != 0)
        return ctx.invalid("cannot infer -1 in reshape target " + shape_to_string(spec) + " for input " +
                           shape_to_string(in) + ": the other dims multiply to 0");
      return ctx.invalid("cannot infer -1 in reshape target " + shape_to_string(spec) +
                         " for an empty input: the dim is ambiguous");
    }
    if (total % known != 0)
      return ctx.invalid("cannot reshape " + shape_to_string(in) + " (" + std::to_string(total) + " elements) to " +
                         shape_to_string(spec));
    out[infer_at] = total / known;
  } else if (known != total) {
    return ctx.invalid("cannot reshape " + shape_to_string(in) + " (" + std::to_string(total) + " elements) to " +
                       shape_to_string(out) + " (" + std::to_string(known) + " elements)");
  }
  return out;
}

Status reshape(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
  IntList spec;
  if (ctx.opset() < 5) {
    spec = ctx.node().attr_ints("shape");
  } else {
    DLRT_ASSIGN_OR_RETURN(const Tensor* s, required_input(ctx, 1));
    if (s->rank() != 1) return ctx.invalid("shape input must be 1-D, got " + shape_to_string(s->shape()));
    DLRT_ASSIGN_OR_RETURN(spec, read_int_tensor(*s, ctx));
  }
  const bool allow_zero = ctx.opset() >= 14 && ctx.node().attr_int("allowzero", 0) != 0;
  DLRT_ASSIGN_OR_RETURN(Shape out, resolve_reshape(x->shape(), spec, allow_zero, ctx));
  return set_view(ctx, *x, std::move(out));
}

Status flatten(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
  const int64_t r = static_cast<int64_t>(x->rank());
  int64_t axis = ctx.node().attr_int("axis", 1);
  if (axis < 0) axis += r;
  if (axis < 0 || axis > r)
    return ctx.invalid("axis " + std::to_string(ctx.node().attr_int("axis", 1)) + " is out of range for rank " +
                       std::to_string(r));
  int64_t outer = 1;
  for (int64_t i = 0; i < axis; ++i) outer *= x->dim(i);
  int64_t inner = 1;
  for (int64_t i = axis; i < r; ++i) inner *= x->dim(i);
  return set_view(ctx, *x, {outer, inner});
}

// Squeeze/Unsqueeze axes: the attribute before opset 13, the optional input from 13.
Result<std::optional<IntList>> axes_of(const KernelContext& ctx) {
  if (ctx.opset() < 13) {
    if (!ctx.node().has_attr("axes")) return std::optional<IntList>();
    return std::optional<IntList>(ctx.node().attr_ints("axes"));
  }
  const Tensor* a = ctx.input(1);
  if (!a) return std::optional<IntList>();
  DLRT_ASSIGN_OR_RETURN(auto v, read_int_tensor(*a, ctx));
  return std::optional<IntList>(std::move(v));
}

Status squeeze(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
  DLRT_ASSIGN_OR_RETURN(auto axes, axes_of(ctx));
  const int64_t r = static_cast<int64_t>(x->rank());
  IntList drop(r, 0);  // flags
  if (!axes || axes->empty()) {  // empty axes squeeze every size-1 dim, as onnxruntime does
    for (int64_t i = 0; i < r; ++i) drop[i] = x->dim(i) == 1;
  } else {
    for (int64_t a : *axes) {
      DLRT_ASSIGN_OR_RETURN(int64_t n, normalize_axis(a, r, ctx));
      if (x->dim(n) != 1)
        return ctx.invalid("cannot squeeze axis " + std::to_string(a) + " of shape " + shape_to_string(x->shape()) +
                           ": its size is not 1");
      drop[n] = 1;
    }
  }
  Shape out;
  for (int64_t i = 0; i < r; ++i)
    if (!drop[i]) out.push_back(x->dim(i));
  return set_view(ctx, *x, std::move(out));
}

Status unsqueeze(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
  DLRT_ASSIGN_OR_RETURN(auto axes, axes_of(ctx));
  if (!axes) return ctx.invalid("axes are required");
  const int64_t r = static_cast<int64_t>(x->rank() + axes->size());
  IntList inserted(r, 0);  // flags
  for (int64_t a : *axes) {
    DLRT_ASSIGN_OR_RETURN(int64_t n, normalize_axis(a, r, ctx));
    if (inserted[n]) return ctx.invalid("axis " + std::to_string(a) + " is repeated in axes");
    inserted[n] = 1;
  }
  Shape out(r);
  for (int64_t i = 0, j = 0; i < r; ++i) out[i] = inserted[i] ? 1 : x->dim(j++);
  return set_view(ctx, *x, std::move(out));
}

Status shape_op(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
  const int64_t r = static_cast<int64_t>(x->rank());
  int64_t start = 0, end = r;
  if (ctx.opset() >= 15) {
    start = ctx.node().attr_int("start", 0);
    end = ctx.node().attr_int("end", r);
    if (start < 0) start += r;
    if (end < 0) end += r;
    start = std::clamp<int64_t>(start, 0, r);
    end = std::clamp<int64_t>(end, 0, r);
  }
  const int64_t n = std::max<int64_t>(0, end - start);
  DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DType::kInt64, {n}));
  for (int64_t i = 0; i < n; ++i) y->data<int64_t>()[i] = x->dim(start + i);
  return Status::Ok();
}

Status size_op(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
  DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DType::kInt64, {}));
  y->data<int64_t>()[0] = x->size();
  return Status::Ok();
}

// Identity passes tensors, sequences and optionals through unchanged.
Status identity(KernelContext& ctx) {
  const RunValue* v = ctx.input_value(0);
  if (!v) return ctx.invalid("required input 0 is missing");
  ctx.set_output_value(0, *v);
  return Status::Ok();
}

// Inference-only Dropout: output = input, mask all true.
Status dropout(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
  if (ctx.opset() >= 12) {
    bool training = false;
    if (const Tensor* t = ctx.input(2)) {
      if (t->dtype() != DType::kBool || t->size() != 1) return ctx.invalid("training_mode must be a bool scalar");
      training = t->data<bool>()[0];
    }
    if (training) {
      double ratio = 0.5;
      if (const Tensor* rt = ctx.input(1)) {
        if (rt->size() != 1) return ctx.invalid("ratio must be a scalar");
        Status s = dispatch_float(rt->dtype(), [&](auto tag) {
          using T = typename decltype(tag)::type;
          ratio = static_cast<float>(rt->data<T>()[0]);
          return Status::Ok();
        });
        if (!s.ok()) return ctx.invalid(s.message());
      }
      if (ratio > 0)
        return ctx.unsupported("Dropout in training mode (training_mode=true, ratio=" + std::to_string(ratio) +
                               ") is not supported by this inference runtime");
    }
  }
  ctx.set_output(0, *x);
  if (ctx.num_outputs() > 1 && ctx.output_requested(1)) {
    const DType mask_type = ctx.opset() >= 10 ? DType::kBool : x->dtype();
    DLRT_ASSIGN_OR_RETURN(Tensor * m, ctx.allocate_output(1, mask_type, x->shape()));
    Status s = dispatch_all(mask_type, [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (std::is_same_v<T, std::string>) {
        return Unsupported("a string mask");
      } else {
        std::fill_n(m->data<T>(), m->size(), layout::value_from_double<T>(1.0));
        return Status::Ok();
      }
    });
    if (!s.ok()) return ctx.unsupported(s.message());
  }
  return Status::Ok();
}

// Reads a 1-D shape input into a validated Shape.
Result<Shape> read_shape(const Tensor& t, const KernelContext& ctx) {
  if (t.rank() > 1) return ctx.invalid("shape input must be 1-D, got " + shape_to_string(t.shape()));
  DLRT_ASSIGN_OR_RETURN(auto v, read_int_tensor(t, ctx));
  for (int64_t d : v)
    if (d < 0) return ctx.invalid("shape " + shape_to_string(v) + " has a negative dim");
  return Shape(v.begin(), v.end());
}

// Fills `out` with copies of the single element of `value`.
Status fill_with(Tensor& out, const Tensor& value) {
  return dispatch_copyable(value.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    std::fill_n(out.data<T>(), out.size(), value.data<T>()[0]);
    return Status::Ok();
  });
}

Status constant_of_shape(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* s, required_input(ctx, 0));
  DLRT_ASSIGN_OR_RETURN(Shape shape, read_shape(*s, ctx));
  const ir::Attribute* a = ctx.node().attr("value");
  if (!a) {
    DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, DType::kFloat32, std::move(shape)));
    (void)y;  // zero-filled
    return Status::Ok();
  }
  if (a->kind != ir::Attribute::Kind::kTensor || !a->t.valid() || a->t.size() != 1)
    return ctx.invalid("attribute 'value' must be a one-element tensor");
  DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, a->t.dtype(), std::move(shape)));
  return fill_with(*y, a->t);
}

// Number of elements of Range(start, limit, delta), or an error.
template <typename T>
Result<int64_t> range_count(T start, T limit, T delta, const KernelContext& ctx) {
  if (delta == T(0)) return ctx.invalid("delta must not be 0");
  if constexpr (std::is_integral_v<T>) {
    const __int128 diff = static_cast<__int128>(limit) - static_cast<__int128>(start);
    const __int128 d = delta;
    __int128 n = diff / d;
    if (diff % d != 0 && ((diff > 0) == (d > 0))) ++n;
    return static_cast<int64_t>(n < 0 ? 0 : n);
  } else {
    const double n = std::ceil((static_cast<double>(limit) - static_cast<double>(start)) / static_cast<double>(delta));
    if (!std::isfinite(n) || n > 1e15) return ctx.invalid("Range would produce too many elements (" + std::to_string(n) + ")");
    return static_cast<int64_t>(n < 0 ? 0 : n);
  }
}

Status range(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* start, required_input(ctx, 0));
  DLRT_ASSIGN_OR_RETURN(const Tensor* limit, required_input(ctx, 1));
  DLRT_ASSIGN_OR_RETURN(const Tensor* delta, required_input(ctx, 2));
  if (start->dtype() != limit->dtype() || start->dtype() != delta->dtype())
    return ctx.invalid("start, limit and delta must have the same dtype");
  if (start->size() != 1 || limit->size() != 1 || delta->size() != 1)
    return ctx.invalid("start, limit and delta must be scalars");
  if (!dtype_is_float(start->dtype()) && !dtype_is_int(start->dtype()))
    return ctx.unsupported(std::string("Range of ") + dtype_name(start->dtype()));
  return dispatch_numeric(start->dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
      // float16 / bfloat16 (opset 27): computed in the stash type, float32
      // (the default) or double, then rounded.
      const int64_t stash = ctx.node().attr_int("stash_type", 1);
      if (stash != 1 && stash != 11) return ctx.invalid("stash_type must be 1 (float) or 11 (double)");
      auto fill = [&](auto zero) -> Status {
        using C = decltype(zero);
        const C s0 = static_cast<C>(static_cast<float>(start->data<T>()[0]));
        const C l = static_cast<C>(static_cast<float>(limit->data<T>()[0]));
        const C d = static_cast<C>(static_cast<float>(delta->data<T>()[0]));
        DLRT_ASSIGN_OR_RETURN(int64_t n, range_count<C>(s0, l, d, ctx));
        DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, dtype_of<T>, {n}));
        T* p = y->data<T>();
        for (int64_t i = 0; i < n; ++i) p[i] = T(static_cast<float>(s0 + static_cast<C>(i) * d));
        return Status::Ok();
      };
      return stash == 11 ? fill(0.0) : fill(0.0f);
    } else {
      const T s0 = start->data<T>()[0], l = limit->data<T>()[0], d = delta->data<T>()[0];
      DLRT_ASSIGN_OR_RETURN(int64_t n, range_count<T>(s0, l, d, ctx));
      DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, dtype_of<T>, {n}));
      T* p = y->data<T>();
      if constexpr (std::is_integral_v<T>) {
        // Every value lies in [start, limit), so only the products need 128 bits.
        for (int64_t i = 0; i < n; ++i) p[i] = static_cast<T>(static_cast<__int128>(s0) + static_cast<__int128>(i) * d);
      } else {
        for (int64_t i = 0; i < n; ++i) p[i] = static_cast<T>(s0 + static_cast<T>(i) * d);
      }
      return Status::Ok();
    }
  });
}

Status eye_like(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
  if (x->rank() != 2) return ctx.invalid("input must be 2-D, got " + shape_to_string(x->shape()));
  DType dt = x->dtype();
  if (ctx.node().has_attr("dtype")) {
    const int64_t v = ctx.node().attr_int("dtype", 0);
    if (v < 0 || v > 1000 || !dtype_is_valid(static_cast<int>(v)) || v == 0)
      return ctx.invalid("attribute dtype " + std::to_string(v) + " is not a valid data type");
    dt = static_cast<DType>(v);
  }
  const int64_t k = ctx.node().attr_int("k", 0);
  const int64_t rows = x->dim(0), cols = x->dim(1);
  DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, dt, x->shape()));
  Status s = dispatch_all(dt, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, std::string>) {
      return Unsupported("EyeLike of strings");
    } else {
      T* p = y->data<T>();
      for (int64_t i = 0; i < rows; ++i) {
        // Guard k before adding so huge k cannot overflow.
        if (k >= cols || k <= -rows) break;
        const int64_t j = i + k;
        if (j >= 0 && j < cols) p[i * cols + j] = layout::value_from_double<T>(1.0);
      }
      return Status::Ok();
    }
  });
  if (!s.ok()) return ctx.unsupported(s.message());
  return Status::Ok();
}

Status constant(KernelContext& ctx) {
  const ir::Node& n = ctx.node();
  Tensor out;
  if (const ir::Attribute* a = n.attr("value")) {
    if (!a->t.valid()) return ctx.invalid("attribute 'value' holds no tensor");
    DLRT_ASSIGN_OR_RETURN(out, a->t.clone());
  } else if (n.has_attr("value_float")) {
    out = Tensor::scalar<float>(n.attr_float("value_float", 0));
  } else if (n.has_attr("value_floats")) {
    auto v = n.attr_floats("value_floats");
    out = Tensor::from_vector<float>({static_cast<int64_t>(v.size())}, v);
  } else if (n.has_attr("value_int")) {
    out = Tensor::scalar<int64_t>(n.attr_int("value_int", 0));
  } else if (n.has_attr("value_ints")) {
    auto v = n.attr_ints("value_ints");
    out = Tensor::from_vector<int64_t>({static_cast<int64_t>(v.size())}, v);
  } else if (n.has_attr("value_string")) {
    out = Tensor::scalar<std::string>(n.attr_string("value_string", ""));
  } else if (n.has_attr("value_strings")) {
    auto v = n.attr_strings("value_strings");
    out = Tensor::from_vector<std::string>({static_cast<int64_t>(v.size())}, v);
  } else if (n.has_attr("sparse_value")) {
    return ctx.unsupported("sparse_value constants are not supported");
  } else {
    return ctx.invalid("Constant has no value attribute");
  }
  if (!out.valid()) return ctx.error(StatusCode::kOutOfMemory, "could not allocate the constant");
  ctx.set_output(0, std::move(out));
  return Status::Ok();
}

}  // namespace

Status register_shape_kernels(KernelRegistry& r) {
  DLRT_RETURN_IF_ERROR(r.add_fn("Reshape", reshape, 1));
  DLRT_RETURN_IF_ERROR(r.add_fn("Flatten", flatten, 1));
  DLRT_RETURN_IF_ERROR(r.add_fn("Squeeze", squeeze, 1));
  DLRT_RETURN_IF_ERROR(r.add_fn("Unsqueeze", unsqueeze, 1));
  DLRT_RETURN_IF_ERROR(r.add_fn("Shape", shape_op, 1));
  DLRT_RETURN_IF_ERROR(r.add_fn("Size", size_op, 1));
  DLRT_RETURN_IF_ERROR(r.add_fn("Identity", identity, 1));
  DLRT_RETURN_IF_ERROR(r.add_fn("Dropout", dropout, 1));
  DLRT_RETURN_IF_ERROR(r.add_fn("ConstantOfShape", constant_of_shape, 9));
  DLRT_RETURN_IF_ERROR(r.add_fn("Range", range, 11));
  DLRT_RETURN_IF_ERROR(r.add_fn("EyeLike", eye_like, 9));
  DLRT_RETURN_IF_ERROR(r.add_fn("Constant", constant, 1));
  return Status::Ok();
}

}  // namespace dlrt::cpu
