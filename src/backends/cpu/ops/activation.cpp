// Activations. Float inputs compute in float (float16, bfloat16, float32) or
// double; attributes are read once per call. Relu, PRelu, Shrink and Clip
// also take integers.
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "backends/cpu/kernel_families.h"
#include "backends/cpu/kernels/activation_epilogue.h"
#include "backends/cpu/ops/broadcast.h"
#include "backends/cpu/ops/unary_impl.h"

namespace dlrt::cpu {
namespace {

float attr_f(const KernelContext& ctx, const char* name, float def) { return ctx.node().attr_float(name, def); }

Status Relu(KernelContext& ctx) {
  return numeric_unary(ctx, [](auto v) {
    using C = decltype(v);
    if constexpr (std::is_unsigned_v<C>) return v;
    else return v < C(0) ? C(0) : v;  // keeps NaN
  });
}

Status Elu(KernelContext& ctx) {
  const float alpha = attr_f(ctx, "alpha", 1.0f);
  return float_unary(ctx, [alpha](auto x) { using C = decltype(x); return x >= C(0) ? x : C(alpha) * std::expm1(x); });
}

Status Selu(KernelContext& ctx) {
  const float alpha = attr_f(ctx, "alpha", 1.67326319217681884765625f);
  const float gamma = attr_f(ctx, "gamma", 1.05070102214813232421875f);
  return float_unary(ctx, [alpha, gamma](auto x) {
    using C = decltype(x);
    return x > C(0) ? C(gamma) * x : C(gamma) * (C(alpha) * std::exp(x) - C(alpha));
  });
}

Status Celu(KernelContext& ctx) {
  const float alpha = attr_f(ctx, "alpha", 1.0f);
  if (alpha == 0) return ctx.invalid("attribute alpha must not be 0");
  return float_unary(ctx, [alpha](auto x) {
    using C = decltype(x);
    return x > C(0) ? x : C(alpha) * std::expm1(x / C(alpha));
  });
}

// float32 input through the vectorised activation of the GEMM epilogue
// (apply_activation: AVX-512/AVX2 where the CPU has them, within a few ulps
// of <cmath>), in chunks over the pool; other types through `scalar`.
template <typename F>
Status vectorised_or(KernelContext& ctx, const Activation& act, F scalar) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
  if (x->dtype() != DType::kFloat32) return float_unary(ctx, scalar);
  DLRT_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output_uninitialized(0, x->dtype(), x->shape()));
  const float* in = x->data<float>();
  float* y = out->data<float>();
  auto body = [&](int64_t b, int64_t e) {
    if (y != in) std::copy(in + b, in + e, y + b);  // (the plan may put the output over the input)
    apply_activation(act, y + b, e - b);
  };
  const int64_t n = x->size();
  ThreadPool& pool = ctx.pool();
  if (pool.num_threads() > 1 && n >= kParallelElements) pool.parallel_for(n, pool.balanced_grain(n, kParallelGrain), body);
  else body(0, n);
  return Status::Ok();
}

// float32 through the epilogue's LeakyRelu (x < 0 ? alpha * x : x: the same
// value for every input, NaN and -0 included).
Status LeakyRelu(KernelContext& ctx) {
  const float alpha = attr_f(ctx, "alpha", 0.01f);
  Activation act;
  act.kind = ActKind::kLeakyRelu;
  act.p0 = alpha;
  return vectorised_or(ctx, act, [alpha](auto x) { using C = decltype(x); return x >= C(0) ? x : C(alpha) * x; });
}

template <typename C>
C sigmoid(C x) {
  if (x >= C(0)) return C(1) / (C(1) + std::exp(-x));
  C e = std::exp(x);
  return e / (C(1) + e);
}

// log(1 + exp(x)) without overflow.
template <typename C>
C softplus(C x) {
  return x > C(0) ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
}

Status Sigmoid(KernelContext& ctx) {
  return vectorised_or(ctx, Activation{ActKind::kSigmoid}, [](auto x) { return sigmoid(x); });
}

Status HardSigmoid(KernelContext& ctx) {
  const float alpha = attr_f(ctx, "alpha", 0.2f), beta = attr_f(ctx, "beta", 0.5f);
  return float_unary(ctx, [alpha, beta](auto x) {
    using C = decltype(x);
    return std::max(std::min(C(alpha) * x + C(beta), C(1)), C(0));  // argument order keeps NaN
  });
}

Status HardSwish(KernelContext& ctx) {
  return float_unary(ctx, [](auto x) {
    using C = decltype(x);
    return x * std::max(C(0), std::min(C(1), x / C(6) + C(0.5)));
  });
}

Status Tanh(KernelContext& ctx) {
  return vectorised_or(ctx, Activation{ActKind::kTanh}, [](auto x) { return std::tanh(x); });
}

Status Softplus(KernelContext& ctx) {
  return float_unary(ctx, [](auto x) { return softplus(x); });
}

Status Softsign(KernelContext& ctx) {
  return float_unary(ctx, [](auto x) { using C = decltype(x); return x / (C(1) + std::abs(x)); });
}

Status ThresholdedRelu(KernelContext& ctx) {
  const float alpha = attr_f(ctx, "alpha", 1.0f);
  return float_unary(ctx, [alpha](auto x) { using C = decltype(x); return x > C(alpha) ? x : C(0); });
}

Status Mish(KernelContext& ctx) {
  return float_unary(ctx, [](auto x) { return x * std::tanh(softplus(x)); });
}

Status Gelu(KernelContext& ctx) {
  const std::string approx = ctx.node().attr_string("approximate", "none");
  if (approx == "none") {
    return vectorised_or(ctx, Activation{ActKind::kGelu}, [](auto x) {
      using C = decltype(x);
      return C(0.5) * x * (C(1) + std::erf(x * C(0.70710678118654752440)));
    });
  }
  if (approx == "tanh") {
    return float_unary(ctx, [](auto x) {
      using C = decltype(x);
      const C k = C(0.79788456080286535588);  // sqrt(2 / pi)
      return C(0.5) * x * (C(1) + std::tanh(k * (x + C(0.044715) * x * x * x)));
    });
  }
  return ctx.invalid("attribute approximate must be \"none\" or \"tanh\", got \"" + approx + "\"");
}

// Shrink takes every numeric type: integers compute in double and convert back.
Status Shrink(KernelContext& ctx) {
  const double lambd = attr_f(ctx, "lambd", 0.5f), bias = attr_f(ctx, "bias", 0.0f);
  return numeric_unary(ctx, [lambd, bias](auto v) {
    using C = decltype(v);
    double x = static_cast<double>(v);
    double y = x < -lambd ? x + bias : (x > lambd ? x - bias : 0.0);
    if constexpr (std::is_floating_point_v<C>) return static_cast<C>(y);
    else return convert_value<C>(y);
  });
}

// PRelu: slope broadcasts to X's shape (unidirectionally). Before opset 7 a
// 1-D slope of X's channel count (dim 1) is per channel, as exporters of that
// era (PyTorch) wrote it; it is viewed as [C, 1, ..., 1].
Status PRelu(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
  DLRT_ASSIGN_OR_RETURN(const Tensor* slope, required_input(ctx, 1));
  if (x->dtype() != slope->dtype())
    return ctx.invalid(std::string("X and slope must have the same dtype, got ") + dtype_name(x->dtype()) + " and " +
                       dtype_name(slope->dtype()));
  Tensor per_channel;
  if (ctx.opset() < 7 && slope->rank() == 1 && x->rank() >= 2 && slope->size() > 1 &&
      slope->shape()[0] == x->shape()[1]) {
    Shape dims(x->rank() - 1, 1);
    dims[0] = slope->shape()[0];
    DLRT_ASSIGN_OR_RETURN(per_channel, slope->reshaped(dims));
    slope = &per_channel;
  }
  auto plan = make_broadcast_plan<2>(x->shape(), {&x->shape(), &slope->shape()});
  if (!plan.ok()) return ctx.invalid("slope: " + plan.status().message());
  return node_status(ctx, dispatch_numeric(x->dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    DLRT_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output_uninitialized(0, x->dtype(), x->shape()));
    binary_broadcast(*plan, x->data<T>(), slope->data<T>(), out->data<T>(), &ctx.pool(), [](T a, T s) -> T {
      if constexpr (std::is_unsigned_v<T>) return a;
      else if constexpr (std::is_integral_v<T>) return a < 0 ? wrap_mul<T>(a, s) : a;
      else return static_cast<C>(a) < C(0) ? T(static_cast<C>(a) * static_cast<C>(s)) : a;
    });
    return Status::Ok();
  }));
}

// Clip: bounds are attributes before opset 11, optional scalar inputs after.
Status Clip(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
  if (ctx.opset() < 11) {
    const float lo = attr_f(ctx, "min", std::numeric_limits<float>::lowest());
    const float hi = attr_f(ctx, "max", std::numeric_limits<float>::max());
    return float_unary(ctx, [lo, hi](auto v) {
      using C = decltype(v);
      C r = v < C(lo) ? C(lo) : v;
      return r > C(hi) ? C(hi) : r;
    });
  }
  for (size_t i = 1; i <= 2; ++i) {
    const Tensor* b = ctx.input(i);
    if (!b) continue;
    if (b->dtype() != x->dtype())
      return ctx.invalid(std::string(i == 1 ? "min" : "max") + " must have the input's dtype " + dtype_name(x->dtype()) +
                         ", got " + dtype_name(b->dtype()));
    if (b->size() != 1) return ctx.invalid(std::string(i == 1 ? "min" : "max") + " must be a scalar, got shape " + shape_to_string(b->shape()));
  }
  return node_status(ctx, dispatch_numeric(x->dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    const Tensor* tl = ctx.input(1);
    const Tensor* th = ctx.input(2);
    const C lo = tl ? static_cast<C>(tl->data<T>()[0]) : std::numeric_limits<C>::lowest();
    const C hi = th ? static_cast<C>(th->data<T>()[0]) : std::numeric_limits<C>::max();
    DLRT_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output_uninitialized(0, x->dtype(), x->shape()));
    parallel_map(&ctx.pool(), x->data<T>(), out->data<T>(), x->size(), [lo, hi](T t) {
      C v = static_cast<C>(t);
      C r = v < lo ? lo : v;  // keeps NaN
      return static_cast<T>(r > hi ? hi : r);
    });
    return Status::Ok();
  }));
}

}  // namespace

Status register_activation_kernels(KernelRegistry& r) {
  struct Entry {
    const char* op;
    KernelFn fn;
    int min_opset;
  };
  const Entry entries[] = {
      {"Relu", Relu, 1},           {"LeakyRelu", LeakyRelu, 1}, {"PRelu", PRelu, 1},
      {"Elu", Elu, 1},             {"Selu", Selu, 1},           {"Celu", Celu, 12},
      {"Sigmoid", Sigmoid, 1},     {"HardSigmoid", HardSigmoid, 1}, {"HardSwish", HardSwish, 14},
      {"Tanh", Tanh, 1},           {"Softplus", Softplus, 1},   {"Softsign", Softsign, 1},
      {"ThresholdedRelu", ThresholdedRelu, 10}, {"Shrink", Shrink, 9}, {"Gelu", Gelu, 20},
      {"Mish", Mish, 18},          {"Clip", Clip, 1},
  };
  for (const Entry& e : entries) {
    DLRT_RETURN_IF_ERROR(r.add_fn(e.op, e.fn, e.min_opset));
    // out[i] from x[i] alone (parallel_map; PRelu's binary_broadcast reads x
    // with the output's index): the output may take X's buffer.
    DLRT_RETURN_IF_ERROR(r.set_in_place_inputs(e.op, 1));
  }
  return Status::Ok();
}

}  // namespace dlrt::cpu
