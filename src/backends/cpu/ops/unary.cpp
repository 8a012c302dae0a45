// Unary math: one input, same shape out. Floats compute in float (float16,
// bfloat16, float32) or double; Abs, Neg and Sign also take integers.
#include <cmath>
#include <type_traits>

#include "backends/cpu/kernel_families.h"
#include "backends/cpu/kernels/erf.h"
#include "backends/cpu/ops/broadcast.h"
#include "backends/cpu/ops/unary_impl.h"

namespace dlrt::cpu {
namespace {

Status Abs(KernelContext& ctx) {
  return numeric_unary(ctx, [](auto v) {
    using C = decltype(v);
    if constexpr (std::is_unsigned_v<C>) return v;
    else if constexpr (std::is_integral_v<C>) return v < 0 ? wrap_sub<C>(0, v) : v;  // abs(MIN) wraps to MIN
    else return std::abs(v);
  });
}

Status Neg(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
  if (dtype_is_unsigned_int(x->dtype()))
    return ctx.unsupported(std::string("Neg does not take unsigned ") + dtype_name(x->dtype()));
  return numeric_unary(ctx, [](auto v) {
    using C = decltype(v);
    if constexpr (std::is_integral_v<C>) return wrap_sub<C>(0, v);
    else return -v;
  });
}

Status Sign(KernelContext& ctx) {
  return numeric_unary(ctx, [](auto v) {
    using C = decltype(v);
    if constexpr (std::is_unsigned_v<C>) {
      return static_cast<C>(v != 0 ? 1 : 0);
    } else {
      if constexpr (std::is_floating_point_v<C>) {
        if (std::isnan(v)) return v;
      }
      return static_cast<C>(v > C(0) ? 1 : (v < C(0) ? -1 : 0));
    }
  });
}

#define DLRT_FLOAT_UNARY(Name, expr) \
  Status Name(KernelContext& ctx) { \
    return float_unary(ctx, [](auto x) { \
      using C = decltype(x);            \
      (void)sizeof(C);                  \
      return static_cast<C>(expr);      \
    });                                 \
  }

DLRT_FLOAT_UNARY(Sqrt, std::sqrt(x))
DLRT_FLOAT_UNARY(Exp, std::exp(x))
DLRT_FLOAT_UNARY(Log, std::log(x))
DLRT_FLOAT_UNARY(Reciprocal, C(1) / x)
DLRT_FLOAT_UNARY(Floor, std::floor(x))
DLRT_FLOAT_UNARY(Ceil, std::ceil(x))
DLRT_FLOAT_UNARY(Round, std::nearbyint(x))  // default rounding mode: half to even
DLRT_FLOAT_UNARY(Sin, std::sin(x))
DLRT_FLOAT_UNARY(Cos, std::cos(x))
DLRT_FLOAT_UNARY(Tan, std::tan(x))
DLRT_FLOAT_UNARY(Asin, std::asin(x))
DLRT_FLOAT_UNARY(Acos, std::acos(x))
DLRT_FLOAT_UNARY(Atan, std::atan(x))
DLRT_FLOAT_UNARY(Sinh, std::sinh(x))
DLRT_FLOAT_UNARY(Cosh, std::cosh(x))
DLRT_FLOAT_UNARY(Asinh, std::asinh(x))
DLRT_FLOAT_UNARY(Acosh, std::acosh(x))
DLRT_FLOAT_UNARY(Atanh, std::atanh(x))
#undef DLRT_FLOAT_UNARY

// float32 through the vector erf (kernels/erf.h: the same algorithm for every
// element, whichever chunk of the pool it falls in); other types std::erf.
Status Erf(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
  if (x->dtype() != DType::kFloat32) return float_unary(ctx, [](auto v) { return std::erf(v); });
  DLRT_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output_uninitialized(0, x->dtype(), x->shape()));
  const float* in = x->data<float>();
  float* y = out->data<float>();
  auto body = [&](int64_t b, int64_t e) { erf_f32(in + b, y + b, e - b); };
  const int64_t n = x->size();
  ThreadPool& pool = ctx.pool();
  if (pool.num_threads() > 1 && n >= kParallelElements) pool.parallel_for(n, pool.balanced_grain(n, kParallelGrain), body);
  else body(0, n);
  return Status::Ok();
}

// out (bool) = pred(x) for a float x.
template <typename Pred>
Status float_predicate(KernelContext& ctx, Pred pred) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
  return node_status(ctx, dispatch_float(x->dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    DLRT_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output_uninitialized(0, DType::kBool, x->shape()));
    parallel_map(&ctx.pool(), x->data<T>(), out->data<bool>(), x->size(), [&pred](T v) { return pred(static_cast<C>(v)); });
    return Status::Ok();
  }));
}

Status IsNaN(KernelContext& ctx) {
  return float_predicate(ctx, [](auto v) { return static_cast<bool>(std::isnan(v)); });
}

Status IsInf(KernelContext& ctx) {
  const bool neg = ctx.node().attr_int("detect_negative", 1) != 0;
  const bool pos = ctx.node().attr_int("detect_positive", 1) != 0;
  return float_predicate(ctx, [neg, pos](auto v) { return std::isinf(v) && (v > 0 ? pos : neg); });
}

}  // namespace

Status register_unary_kernels(KernelRegistry& r) {
  struct Entry {
    const char* op;
    KernelFn fn;
  };
  const Entry entries[] = {
      {"Abs", Abs},     {"Neg", Neg},       {"Sign", Sign},   {"Sqrt", Sqrt},   {"Exp", Exp},
      {"Log", Log},     {"Reciprocal", Reciprocal},           {"Floor", Floor}, {"Ceil", Ceil},
      {"Round", Round}, {"Sin", Sin},       {"Cos", Cos},     {"Tan", Tan},     {"Asin", Asin},
      {"Acos", Acos},   {"Atan", Atan},     {"Sinh", Sinh},   {"Cosh", Cosh},   {"Asinh", Asinh},
      {"Acosh", Acosh}, {"Atanh", Atanh},   {"Erf", Erf},     {"IsNaN", IsNaN}, {"IsInf", IsInf},
  };
  for (const Entry& e : entries) {
    DLRT_RETURN_IF_ERROR(r.add_fn(e.op, e.fn));
    // parallel_map: out[i] = f(x[i]); IsNaN/IsInf write bools (a different size).
    if (e.fn != IsNaN && e.fn != IsInf) DLRT_RETURN_IF_ERROR(r.set_in_place_inputs(e.op, 1));
  }
  return Status::Ok();
}

}  // namespace dlrt::cpu
