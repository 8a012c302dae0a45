// Broadcasting binary and variadic ops: arithmetic, comparison, logic, bit
// ops and Where. Integer arithmetic wraps (two's complement) and integer
// division or modulo by zero gives 0 (numpy's result), so no input is UB.
#include <cmath>
#include <type_traits>

#include "backends/cpu/kernel_families.h"
#include "backends/cpu/kernel_util.h"
#include "backends/cpu/ops/broadcast.h"
#include "backends/cpu/ops/convert.h"

namespace dlrt::cpu {
namespace {

// Truncates toward zero (ONNX); x / 0 is 0 and MIN / -1 wraps to MIN.
template <typename T>
T safe_div(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    if (b == 0) return 0;
    if constexpr (std::is_signed_v<T>) {
      if (b == -1) return wrap_sub<T>(0, a);
    }
    return static_cast<T>(a / b);
  } else {
    return static_cast<compute_t<T>>(a) / static_cast<compute_t<T>>(b);
  }
}

// fmod: the remainder has the dividend's sign (C); otherwise the divisor's (Python).
template <typename T>
T safe_mod(T a, T b, bool fmod) {
  if constexpr (std::is_integral_v<T>) {
    if (b == 0) return 0;
    if constexpr (std::is_signed_v<T>) {
      if (b == -1) return 0;
      T r = static_cast<T>(a % b);
      if (!fmod && r != 0 && ((r < 0) != (b < 0))) r = static_cast<T>(r + b);
      return r;
    } else {
      return static_cast<T>(a % b);
    }
  } else {
    using C = compute_t<T>;
    C x = static_cast<C>(a), y = static_cast<C>(b);
    C r = std::fmod(x, y);
    if (!fmod && r != 0 && ((r < 0) != (y < 0))) r += y;
    return r;
  }
}

// Integer power by squaring, wrapping; negative exponents truncate 1/x^n.
template <typename T>
T int_pow(T base, int64_t e) {
  if (e < 0) {
    if (base == 1) return 1;
    if constexpr (std::is_signed_v<T>) {
      if (base == -1) return (e & 1) ? T(-1) : T(1);
    }
    return 0;
  }
  using U = std::conditional_t<(sizeof(T) < sizeof(uint64_t)), uint64_t, wrap_t<T>>;
  U r = 1, b = static_cast<U>(base);
  for (uint64_t n = static_cast<uint64_t>(e); n; n >>= 1) {
    if (n & 1) r *= b;
    b *= b;
  }
  return static_cast<T>(r);
}

// NaN-propagating min/max (numpy's minimum/maximum).
template <typename T>
T min_of(T a, T b) {
  if constexpr (is_float_v<T>) {
    using C = compute_t<T>;
    C x = static_cast<C>(a), y = static_cast<C>(b);
    if (std::isnan(x)) return a;
    if (std::isnan(y)) return b;
    return y < x ? b : a;
  } else {
    return b < a ? b : a;
  }
}
template <typename T>
T max_of(T a, T b) {
  if constexpr (is_float_v<T>) {
    using C = compute_t<T>;
    C x = static_cast<C>(a), y = static_cast<C>(b);
    if (std::isnan(x)) return a;
    if (std::isnan(y)) return b;
    return x < y ? b : a;
  } else {
    return a < b ? b : a;
  }
}

Status bad(const KernelContext& ctx, const Status& s) { return ctx.invalid(s.message()); }

// B's shape as the broadcast sees it. Before opset 7 broadcasting was opt-in
// (attribute broadcast=1) and `axis` said where B's dims start in A.
Shape legacy_b_shape(const KernelContext& ctx, const Tensor& a, const Tensor& b) {
  const ir::Node& n = ctx.node();
  if (ctx.opset() >= 7 || n.attr_int("broadcast", 0) == 0 || !n.has_attr("axis")) return b.shape();
  int64_t ra = static_cast<int64_t>(a.rank()), rb = static_cast<int64_t>(b.rank());
  int64_t axis = n.attr_int("axis", 0);
  if (axis < 0) axis += ra;
  Shape s = b.shape();
  for (int64_t i = axis + rb; i < ra; ++i) s.push_back(1);
  return s;
}

// Runs out = op(a, b) elementwise over the broadcast of a and b.
template <typename A, typename B, typename O, typename Op>
Status run_binary(KernelContext& ctx, const Tensor& a, const Tensor& b, Op op) {
  Shape bs = legacy_b_shape(ctx, a, b);
  auto out_shape = broadcast_shapes(a.shape(), bs);
  if (!out_shape.ok()) return bad(ctx, out_shape.status());
  auto plan = make_broadcast_plan<2>(*out_shape, {&a.shape(), &bs});
  if (!plan.ok()) return bad(ctx, plan.status());
  DLRT_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output_uninitialized(0, dtype_of<O>, *out_shape));
  binary_broadcast(*plan, a.data<A>(), b.data<B>(), out->data<O>(), &ctx.pool(), op);
  return Status::Ok();
}

Result<std::pair<const Tensor*, const Tensor*>> two_inputs(const KernelContext& ctx, bool same_dtype = true) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* a, required_input(ctx, 0));
  DLRT_ASSIGN_OR_RETURN(const Tensor* b, required_input(ctx, 1));
  if (same_dtype && a->dtype() != b->dtype())
    return ctx.invalid(std::string("inputs must have the same dtype, got ") + dtype_name(a->dtype()) + " and " +
                       dtype_name(b->dtype()));
  return std::pair{a, b};
}

Status with_node(const KernelContext& ctx, Status s) {
  if (s.ok() || s.code() != StatusCode::kUnsupported) return s;
  return ctx.unsupported(s.message());
}

// Same-dtype binary op whose output has the input dtype. Dispatch names the
// dtype set (dispatch_numeric, dispatch_int, ...); Op is a functor template.
template <template <typename> class Op, typename Dispatch>
Status same_type_binary(KernelContext& ctx, Dispatch dispatch) {
  DLRT_ASSIGN_OR_RETURN(auto ab, two_inputs(ctx));
  const Tensor* a = ab.first;  // (not a structured binding: lambdas below capture them)
  const Tensor* b = ab.second;
  return with_node(ctx, dispatch(a->dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    return run_binary<T, T, T>(ctx, *a, *b, Op<T>{ctx});
  }));
}

// Same-dtype comparison with a bool output.
template <template <typename> class Op, typename Dispatch>
Status compare_binary(KernelContext& ctx, Dispatch dispatch) {
  DLRT_ASSIGN_OR_RETURN(auto ab, two_inputs(ctx));
  const Tensor* a = ab.first;  // (not a structured binding: lambdas below capture them)
  const Tensor* b = ab.second;
  return with_node(ctx, dispatch(a->dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    return run_binary<T, T, bool>(ctx, *a, *b, Op<T>{ctx});
  }));
}

constexpr auto kNumeric = [](DType t, auto&& f) { return dispatch_numeric(t, f); };
constexpr auto kInt = [](DType t, auto&& f) { return dispatch_int(t, f); };
constexpr auto kAll = [](DType t, auto&& f) { return dispatch_all(t, f); };
constexpr auto kBool = [](DType t, auto&& f) -> Status {
  if (t != DType::kBool) return Unsupported(std::string("dtype ") + dtype_name(t) + " is not supported here (expected bool)");
  return f(std::type_identity<bool>{});
};
constexpr auto kUnsigned = [](DType t, auto&& f) -> Status {
  if (!dtype_is_unsigned_int(t)) return Unsupported(std::string("dtype ") + dtype_name(t) + " is not supported here (expected an unsigned integer type)");
  return dispatch_int(t, f);
};
// Comparisons: everything but string (strings only for Equal).
constexpr auto kComparable = [](DType t, auto&& f) -> Status {
  if (t == DType::kBool) return f(std::type_identity<bool>{});
  return dispatch_numeric(t, f);
};

#define DLRT_BINARY_FUNCTOR(Name, expr)                             \
  template <typename T>                                             \
  struct Name {                                                     \
    explicit Name(const KernelContext&) {}                          \
    auto operator()(T a, T b) const { return expr; }                \
  };

DLRT_BINARY_FUNCTOR(AddOp, wrap_add<T>(a, b))
DLRT_BINARY_FUNCTOR(SubOp, wrap_sub<T>(a, b))
DLRT_BINARY_FUNCTOR(MulOp, wrap_mul<T>(a, b))
DLRT_BINARY_FUNCTOR(DivOp, safe_div<T>(a, b))
DLRT_BINARY_FUNCTOR(MinOp, min_of<T>(a, b))
DLRT_BINARY_FUNCTOR(MaxOp, max_of<T>(a, b))
DLRT_BINARY_FUNCTOR(EqualOp, static_cast<bool>(a == b))
DLRT_BINARY_FUNCTOR(LessOp, static_cast<bool>(a < b))
DLRT_BINARY_FUNCTOR(GreaterOp, static_cast<bool>(b < a))
DLRT_BINARY_FUNCTOR(LessEqOp, static_cast<bool>(a <= b))
DLRT_BINARY_FUNCTOR(GreaterEqOp, static_cast<bool>(b <= a))
DLRT_BINARY_FUNCTOR(AndOp, static_cast<bool>(a && b))
DLRT_BINARY_FUNCTOR(OrOp, static_cast<bool>(a || b))
DLRT_BINARY_FUNCTOR(XorOp, static_cast<bool>(a != b))
DLRT_BINARY_FUNCTOR(BitAndOp, static_cast<T>(a & b))
DLRT_BINARY_FUNCTOR(BitOrOp, static_cast<T>(a | b))
DLRT_BINARY_FUNCTOR(BitXorOp, static_cast<T>(a ^ b))
#undef DLRT_BINARY_FUNCTOR

template <typename T>
struct ModOp {
  bool fmod;
  explicit ModOp(const KernelContext& ctx) : fmod(ctx.node().attr_int("fmod", 0) != 0) {}
  T operator()(T a, T b) const { return safe_mod<T>(a, b, fmod); }
};

template <typename T>
struct ShiftOp {
  bool left;
  explicit ShiftOp(const KernelContext& ctx) : left(ctx.node().attr_string("direction", "") == "LEFT") {}
  T operator()(T a, T b) const {
    constexpr int64_t kBits = sizeof(T) * 8;
    if constexpr (std::is_signed_v<T>) {
      // Signed types (opset 28): an arithmetic right shift; a left shift
      // drops the bits moved past the sign bit; a shift by a negative amount
      // or by the width or more gives what the sign extension alone gives.
      if (b < 0 || b >= kBits) return (!left && a < 0) ? static_cast<T>(-1) : static_cast<T>(0);
      using U = std::make_unsigned_t<T>;
      return left ? static_cast<T>(static_cast<wrap_t<U>>(static_cast<U>(a)) << b) : static_cast<T>(a >> b);
    } else {
      if (b >= kBits) return 0;  // shifting by the width or more is UB in C++
      return left ? static_cast<T>(static_cast<wrap_t<T>>(a) << b) : static_cast<T>(a >> b);
    }
  }
};

Status Add(KernelContext& ctx) { return same_type_binary<AddOp>(ctx, kNumeric); }
Status Sub(KernelContext& ctx) { return same_type_binary<SubOp>(ctx, kNumeric); }
Status Mul(KernelContext& ctx) { return same_type_binary<MulOp>(ctx, kNumeric); }
Status Div(KernelContext& ctx) { return same_type_binary<DivOp>(ctx, kNumeric); }
Status Mod(KernelContext& ctx) {
  if (ctx.node().attr_int("fmod", 0) != 0 && ctx.node().attr_int("fmod", 0) != 1)
    return ctx.invalid("attribute fmod must be 0 or 1");
  return same_type_binary<ModOp>(ctx, kNumeric);
}
Status Equal(KernelContext& ctx) { return compare_binary<EqualOp>(ctx, kAll); }
Status Less(KernelContext& ctx) { return compare_binary<LessOp>(ctx, kComparable); }
Status Greater(KernelContext& ctx) { return compare_binary<GreaterOp>(ctx, kComparable); }
Status LessOrEqual(KernelContext& ctx) { return compare_binary<LessEqOp>(ctx, kComparable); }
Status GreaterOrEqual(KernelContext& ctx) { return compare_binary<GreaterEqOp>(ctx, kComparable); }
Status And(KernelContext& ctx) { return compare_binary<AndOp>(ctx, kBool); }
Status Or(KernelContext& ctx) { return compare_binary<OrOp>(ctx, kBool); }
Status Xor(KernelContext& ctx) { return compare_binary<XorOp>(ctx, kBool); }
Status BitwiseAnd(KernelContext& ctx) { return same_type_binary<BitAndOp>(ctx, kInt); }
Status BitwiseOr(KernelContext& ctx) { return same_type_binary<BitOrOp>(ctx, kInt); }
Status BitwiseXor(KernelContext& ctx) { return same_type_binary<BitXorOp>(ctx, kInt); }
Status BitShift(KernelContext& ctx) {
  std::string dir = ctx.node().attr_string("direction", "");
  if (dir != "LEFT" && dir != "RIGHT") return ctx.invalid("attribute direction must be \"LEFT\" or \"RIGHT\", got \"" + dir + "\"");
  // Signed integer types are defined from opset 28.
  if (ctx.node().opset >= 28) return same_type_binary<ShiftOp>(ctx, kInt);
  return same_type_binary<ShiftOp>(ctx, kUnsigned);
}

// Pow: the output has the base's dtype; the exponent may be any numeric type.
// A mixed exponent is first widened to int64 (integer base and exponent) or
// double, so only base dtype x {same, int64, double} is instantiated.
Status Pow(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(auto ab, two_inputs(ctx, /*same_dtype=*/false));
  const Tensor* a = ab.first;  // (not a structured binding: lambdas below capture them)
  const Tensor* b = ab.second;
  if (!dtype_is_float(a->dtype()) && !dtype_is_int(a->dtype()))
    return ctx.unsupported(std::string("Pow: base dtype ") + dtype_name(a->dtype()) + " is not supported");
  if (!dtype_is_float(b->dtype()) && !dtype_is_int(b->dtype()))
    return ctx.unsupported(std::string("Pow: exponent dtype ") + dtype_name(b->dtype()) + " is not supported");
  // float32 to the constant power 2 or 3 (GELU's x^3, variances' x^2): multiplications, not
  // powf per element (within about an ulp of powf; x * x is the correctly rounded square).
  if (a->dtype() == DType::kFloat32 && b->dtype() == DType::kFloat32 && b->size() == 1 && b->rank() <= a->rank()) {
    const float e = b->data<float>()[0];
    if (e == 2.0f || e == 3.0f) {
      DLRT_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output_uninitialized(0, DType::kFloat32, a->shape()));
      if (e == 2.0f) parallel_map(&ctx.pool(), a->data<float>(), out->data<float>(), a->size(), [](float x) { return x * x; });
      else parallel_map(&ctx.pool(), a->data<float>(), out->data<float>(), a->size(), [](float x) { return x * x * x; });
      return Status::Ok();
    }
  }
  Tensor exp = *b;
  if (a->dtype() != b->dtype()) {
    DType wide = dtype_is_int(a->dtype()) && dtype_is_int(b->dtype()) ? DType::kInt64 : DType::kFloat64;
    if (b->dtype() != wide) {
      DLRT_ASSIGN_OR_RETURN(exp, Tensor::allocate(wide, b->shape()));
      Status s = dispatch_numeric(b->dtype(), [&](auto tag) -> Status {
        using E = typename decltype(tag)::type;
        const E* src = b->data<E>();
        if (wide == DType::kInt64) {
          int64_t* dst = exp.data<int64_t>();
          for (int64_t i = 0; i < b->size(); ++i) dst[i] = convert_value<int64_t>(src[i]);
        } else {
          double* dst = exp.data<double>();
          for (int64_t i = 0; i < b->size(); ++i) dst[i] = convert_value<double>(src[i]);
        }
        return Status::Ok();
      });
      DLRT_RETURN_IF_ERROR(s);
    }
  }
  return with_node(ctx, dispatch_numeric(a->dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    if (exp.dtype() == a->dtype()) {
      if constexpr (std::is_integral_v<T>) {
        return run_binary<T, T, T>(ctx, *a, exp, [](T x, T y) { return int_pow<T>(x, convert_value<int64_t>(y)); });
      } else {
        using C = compute_t<T>;
        return run_binary<T, T, T>(ctx, *a, exp, [](T x, T y) { return T(std::pow(static_cast<C>(x), static_cast<C>(y))); });
      }
    }
    if (exp.dtype() == DType::kInt64) {
      if constexpr (std::is_integral_v<T>)
        return run_binary<T, int64_t, T>(ctx, *a, exp, [](T x, int64_t y) { return int_pow<T>(x, y); });
    }
    return run_binary<T, double, T>(ctx, *a, exp, [](T x, double y) {
      return convert_value<T>(std::pow(convert_value<double>(x), y));
    });
  }));
}

// Sum, Mean, Min, Max: any number of inputs, all broadcast together. The
// first two combine into the output, the rest fold into it in place.
template <template <typename> class Op>
Status variadic(KernelContext& ctx, bool mean) {
  std::vector<const Tensor*> ins;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    DLRT_ASSIGN_OR_RETURN(const Tensor* t, required_input(ctx, i));
    if (!ins.empty() && t->dtype() != ins[0]->dtype())
      return ctx.invalid(std::string("all inputs must have the same dtype, got ") + dtype_name(ins[0]->dtype()) +
                         " and " + dtype_name(t->dtype()));
    ins.push_back(t);
  }
  if (ins.empty()) return ctx.invalid("needs at least one input");
  std::vector<const Shape*> shapes;
  for (const Tensor* t : ins) shapes.push_back(&t->shape());
  auto out_shape = broadcast_shapes(shapes);
  if (!out_shape.ok()) return bad(ctx, out_shape.status());
  auto dispatch = [&](auto&& f) { return mean ? dispatch_float(ins[0]->dtype(), f) : dispatch_numeric(ins[0]->dtype(), f); };
  return with_node(ctx, dispatch([&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    DLRT_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output_uninitialized(0, dtype_of<T>, *out_shape));
    Op<T> op{ctx};
    T* o = out->data<T>();
    const Tensor* first = ins[0];
    const Tensor* second = ins.size() > 1 ? ins[1] : ins[0];
    auto plan = make_broadcast_plan<2>(*out_shape, {&first->shape(), &second->shape()});
    if (!plan.ok()) return bad(ctx, plan.status());
    if (ins.size() == 1) {
      binary_broadcast(*plan, first->data<T>(), first->data<T>(), o, &ctx.pool(), [](T x, T) { return x; });
    } else {
      binary_broadcast(*plan, first->data<T>(), second->data<T>(), o, &ctx.pool(), op);
    }
    for (size_t k = 2; k < ins.size(); ++k) {
      auto p = make_broadcast_plan<2>(*out_shape, {&out->shape(), &ins[k]->shape()});
      if (!p.ok()) return bad(ctx, p.status());
      binary_broadcast(*p, static_cast<const T*>(o), ins[k]->data<T>(), o, &ctx.pool(), op);
    }
    if (mean && ins.size() > 1) {
      if constexpr (is_float_v<T>) {
        using C = compute_t<T>;
        const C n = static_cast<C>(ins.size());
        parallel_map(&ctx.pool(), static_cast<const T*>(o), o, out->size(), [n](T x) { return T(static_cast<C>(x) / n); });
      }
    }
    return Status::Ok();
  }));
}

Status Sum(KernelContext& ctx) { return variadic<AddOp>(ctx, false); }
Status Mean(KernelContext& ctx) { return variadic<AddOp>(ctx, true); }
Status Min(KernelContext& ctx) { return variadic<MinOp>(ctx, false); }
Status Max(KernelContext& ctx) { return variadic<MaxOp>(ctx, false); }

Status Not(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
  if (x->dtype() != DType::kBool) return ctx.unsupported(std::string("Not expects bool, got ") + dtype_name(x->dtype()));
  DLRT_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output_uninitialized(0, DType::kBool, x->shape()));
  parallel_map(&ctx.pool(), x->data<bool>(), out->data<bool>(), x->size(), [](bool v) { return !v; });
  return Status::Ok();
}

Status BitwiseNot(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
  return with_node(ctx, dispatch_int(x->dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    DLRT_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output_uninitialized(0, x->dtype(), x->shape()));
    parallel_map(&ctx.pool(), x->data<T>(), out->data<T>(), x->size(), [](T v) { return static_cast<T>(~v); });
    return Status::Ok();
  }));
}

Status Where(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* c, required_input(ctx, 0));
  DLRT_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 1));
  DLRT_ASSIGN_OR_RETURN(const Tensor* y, required_input(ctx, 2));
  if (c->dtype() != DType::kBool) return ctx.invalid(std::string("condition must be bool, got ") + dtype_name(c->dtype()));
  if (x->dtype() != y->dtype())
    return ctx.invalid(std::string("X and Y must have the same dtype, got ") + dtype_name(x->dtype()) + " and " + dtype_name(y->dtype()));
  const Shape* shapes[] = {&c->shape(), &x->shape(), &y->shape()};
  auto out_shape = broadcast_shapes(std::span<const Shape* const>(shapes, 3));
  if (!out_shape.ok()) return bad(ctx, out_shape.status());
  auto plan = make_broadcast_plan<3>(*out_shape, {&c->shape(), &x->shape(), &y->shape()});
  if (!plan.ok()) return bad(ctx, plan.status());
  return with_node(ctx, dispatch_all(x->dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    DLRT_ASSIGN_OR_RETURN(Tensor * out, ctx.allocate_output_uninitialized(0, x->dtype(), *out_shape));
    ternary_broadcast(*plan, c->data<bool>(), x->data<T>(), y->data<T>(), out->data<T>(), &ctx.pool(),
                      [](bool k, const T& a, const T& b) -> const T& { return k ? a : b; });
    return Status::Ok();
  }));
}

}  // namespace

Status register_elementwise_kernels(KernelRegistry& r) {
  DLRT_RETURN_IF_ERROR(r.add_fn("Add", Add));
  DLRT_RETURN_IF_ERROR(r.add_fn("Sub", Sub));
  DLRT_RETURN_IF_ERROR(r.add_fn("Mul", Mul));
  DLRT_RETURN_IF_ERROR(r.add_fn("Div", Div));
  // run_binary reads a[i] and b[i] before it writes out[i] (binary_broadcast),
  // so the output may take either operand's buffer when it has the output's
  // size (then its index is the output's).
  for (const char* op : {"Add", "Sub", "Mul", "Div"}) DLRT_RETURN_IF_ERROR(r.set_in_place_inputs(op, 0b11));
  DLRT_RETURN_IF_ERROR(r.add_fn("Pow", Pow));
  DLRT_RETURN_IF_ERROR(r.add_fn("Mod", Mod));
  DLRT_RETURN_IF_ERROR(r.add_fn("Sum", Sum));
  DLRT_RETURN_IF_ERROR(r.add_fn("Mean", Mean));
  DLRT_RETURN_IF_ERROR(r.add_fn("Min", Min));
  DLRT_RETURN_IF_ERROR(r.add_fn("Max", Max));
  DLRT_RETURN_IF_ERROR(r.add_fn("Equal", Equal));
  DLRT_RETURN_IF_ERROR(r.add_fn("Less", Less));
  DLRT_RETURN_IF_ERROR(r.add_fn("Greater", Greater));
  DLRT_RETURN_IF_ERROR(r.add_fn("LessOrEqual", LessOrEqual));
  DLRT_RETURN_IF_ERROR(r.add_fn("GreaterOrEqual", GreaterOrEqual));
  DLRT_RETURN_IF_ERROR(r.add_fn("And", And));
  DLRT_RETURN_IF_ERROR(r.add_fn("Or", Or));
  DLRT_RETURN_IF_ERROR(r.add_fn("Xor", Xor));
  DLRT_RETURN_IF_ERROR(r.add_fn("Not", Not));
  DLRT_RETURN_IF_ERROR(r.add_fn("BitShift", BitShift));
  DLRT_RETURN_IF_ERROR(r.add_fn("BitwiseAnd", BitwiseAnd));
  DLRT_RETURN_IF_ERROR(r.add_fn("BitwiseOr", BitwiseOr));
  DLRT_RETURN_IF_ERROR(r.add_fn("BitwiseXor", BitwiseXor));
  DLRT_RETURN_IF_ERROR(r.add_fn("BitwiseNot", BitwiseNot));
  DLRT_RETURN_IF_ERROR(r.add_fn("Where", Where));
  // ternary_broadcast reads X[i] and Y[i] before it writes out[i]: the output
  // may take X's or Y's buffer when it has the output's size.
  DLRT_RETURN_IF_ERROR(r.set_in_place_inputs("Where", 0b110));
  return Status::Ok();
}

}  // namespace dlrt::cpu
