// Shared plumbing for one-input, same-shape ops (unary.cpp, activation.cpp).
#pragma once

#include <string>

#include "backends/cpu/kernel_util.h"
#include "backends/cpu/ops/broadcast.h"
#include "backends/cpu/ops/convert.h"

namespace dlrt::cpu {

// Re-labels a dispatch's "dtype not supported" Status with the node's name.
inline Status node_status(const KernelContext& ctx, Status s) {
  if (s.ok() || s.code() != StatusCode::kUnsupported) return s;
  return ctx.unsupported(s.message());
}

// out = f(x) for a float input; f gets and returns the compute type
// (float for float16/bfloat16/float32, double for float64).
template <typename F>
Status float_unary(KernelContext& ctx, F f) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
  return node_status(ctx, dispatch_float(x->dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    DLRT_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output_uninitialized(0, x->dtype(), x->shape()));
    parallel_map(&ctx.pool(), x->data<T>(), out->data<T>(), x->size(), [&f](T v) { return T(f(static_cast<C>(v))); });
    return Status::Ok();
  }));
}

// out = f(x) for any numeric input; f gets and returns compute_t<T> (ints as themselves).
template <typename F>
Status numeric_unary(KernelContext& ctx, F f) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
  return node_status(ctx, dispatch_numeric(x->dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    DLRT_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output_uninitialized(0, x->dtype(), x->shape()));
    parallel_map(&ctx.pool(), x->data<T>(), out->data<T>(), x->size(),
                 [&f](T v) { return static_cast<T>(f(static_cast<C>(v))); });
    return Status::Ok();
  }));
}

}  // namespace dlrt::cpu
