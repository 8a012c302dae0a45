// Small helpers every CPU kernel family uses: dtype dispatch, axis handling, ceil_div.
#pragma once

#include <memory>
#include <string>
#include <type_traits>

#include "backends/cpu/kernel.h"

namespace dlrt::cpu {

// The domain of Microsoft's contrib operators (onnxruntime's com.microsoft ops).
inline constexpr const char* kMsDomain = "com.microsoft";
// The domain of dlrt's own operators (fused and blocked-layout kernels the passes introduce).
inline constexpr const char* kDlrtDomain = "com.dlrt";

// ceil(a / b) for a >= 0, b > 0.
inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Calls f(std::type_identity<T>{}) with the C++ type of `t`.
// Returns kUnsupported for dtypes outside the set.
template <typename F>
Status dispatch_float(DType t, F&& f) {
  switch (t) {
    case DType::kFloat32: return f(std::type_identity<float>{});
    case DType::kFloat64: return f(std::type_identity<double>{});
    case DType::kFloat16: return f(std::type_identity<Float16>{});
    case DType::kBFloat16: return f(std::type_identity<BFloat16>{});
    default: return Unsupported(std::string("dtype ") + dtype_name(t) + " is not supported here (expected a float type)");
  }
}

template <typename F>
Status dispatch_int(DType t, F&& f) {
  switch (t) {
    case DType::kInt8: return f(std::type_identity<int8_t>{});
    case DType::kInt16: return f(std::type_identity<int16_t>{});
    case DType::kInt32: return f(std::type_identity<int32_t>{});
    case DType::kInt64: return f(std::type_identity<int64_t>{});
    case DType::kUInt8: return f(std::type_identity<uint8_t>{});
    case DType::kUInt16: return f(std::type_identity<uint16_t>{});
    case DType::kUInt32: return f(std::type_identity<uint32_t>{});
    case DType::kUInt64: return f(std::type_identity<uint64_t>{});
    default: return Unsupported(std::string("dtype ") + dtype_name(t) + " is not supported here (expected an integer type)");
  }
}

// Floats and integers (not bool, not string).
template <typename F>
Status dispatch_numeric(DType t, F&& f) {
  if (dtype_is_float(t)) return dispatch_float(t, f);
  if (dtype_is_int(t)) return dispatch_int(t, f);
  return Unsupported(std::string("dtype ") + dtype_name(t) + " is not supported here (expected a numeric type)");
}

// Every dtype, bool and string included.
template <typename F>
Status dispatch_all(DType t, F&& f) {
  if (t == DType::kBool) return f(std::type_identity<bool>{});
  if (t == DType::kString) return f(std::type_identity<std::string>{});
  return dispatch_numeric(t, f);
}

// Maps a possibly negative axis into [0, rank); error when out of range.
inline Result<int64_t> normalize_axis(int64_t axis, int64_t rank, const KernelContext& ctx) {
  int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank)
    return ctx.invalid("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  return a;
}

// Fetches a required input or returns a clear error.
inline Result<const Tensor*> required_input(const KernelContext& ctx, size_t i) {
  const Tensor* t = ctx.input(i);
  if (!t) return ctx.invalid("required input " + std::to_string(i) + " is missing");
  return t;
}

// A short list of int64 values (axes, pads, a shape spec): Shape's inline
// storage holds up to 8 without a heap allocation.
using IntList = Shape;

// An ints attribute of `node`, or `n` copies of `def` when it has none,
// without the heap copies of Node::attr_ints (attribute and default).
inline IntList ints_attr(const ir::Node& node, std::string_view name, size_t n, int64_t def) {
  const ir::Attribute* a = node.attr(name);
  return a ? IntList(a->ints.begin(), a->ints.end()) : IntList(n, def);
}

// Reads an integer tensor (int32 or int64) into a list.
inline Result<IntList> read_int_tensor(const Tensor& t, const KernelContext& ctx) {
  IntList v(static_cast<size_t>(t.size()));
  if (t.dtype() == DType::kInt64) {
    for (int64_t i = 0; i < t.size(); ++i) v[i] = t.data<int64_t>()[i];
  } else if (t.dtype() == DType::kInt32) {
    for (int64_t i = 0; i < t.size(); ++i) v[i] = t.data<int32_t>()[i];
  } else {
    return ctx.invalid(std::string("expected an int32 or int64 tensor, got ") + dtype_name(t.dtype()));
  }
  return v;
}

// A kernel whose weight input is packed (or otherwise prepared) once when it
// is a graph constant, `pre` null otherwise or when that does not apply; its
// compute is fn(ctx, pre). MatMulInteger, QLinearMatMul, MatMulIntegerToFloat
// (quantize.cpp), ConvInteger, QLinearConv (quantize_conv*.cpp; see
// prepacked_def in ops/quantize_util.h), com.microsoft Attention, FusedMatMul,
// MatMulNBits, QAttention (contrib_*.cpp).
template <typename Pre>
class PrepackedKernel final : public OpKernel {
 public:
  using Fn = Status (*)(KernelContext&, const Pre*);
  PrepackedKernel(Fn fn, std::shared_ptr<const Pre> pre) : fn_(fn), pre_(std::move(pre)) {}
  Status compute(KernelContext& ctx) const override { return fn_(ctx, pre_.get()); }

 private:
  Fn fn_;
  std::shared_ptr<const Pre> pre_;
};

}  // namespace dlrt::cpu
