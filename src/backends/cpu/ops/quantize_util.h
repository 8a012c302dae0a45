// Helpers shared by the quantized kernels (quantize.cpp, quantize_conv.cpp,
// quantize_conv_nhwc.cpp).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "backends/cpu/kernel.h"
#include "backends/cpu/kernel_util.h"

namespace dlrt::cpu {

inline bool is_8bit(DType t) { return t == DType::kUInt8 || t == DType::kInt8; }

// Reads element i of a 2/4/8/16/32-bit integer tensor.
inline int32_t int_at(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DType::kUInt8:
    case DType::kUInt4:
    case DType::kUInt2:
      return t.data<uint8_t>()[i];
    case DType::kInt8:
    case DType::kInt4:  // held unpacked, sign-extended
    case DType::kInt2:
      return t.data<int8_t>()[i];
    case DType::kUInt16:
      return t.data<uint16_t>()[i];
    case DType::kInt16:
      return t.data<int16_t>()[i];
    case DType::kInt32:
      return t.data<int32_t>()[i];
    default:
      return 0;
  }
}

inline float float_at(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DType::kFloat32:
      return t.data<float>()[i];
    case DType::kFloat16:
      return static_cast<float>(t.data<Float16>()[i]);
    case DType::kBFloat16:
      return static_cast<float>(t.data<BFloat16>()[i]);
    case DType::kFloat64:
      return static_cast<float>(t.data<double>()[i]);
    default:
      return 0;
  }
}

// The output type of a QLinear* op: y_zero_point's, else `fallback` (x's); 8 bits only.
Result<DType> qlinear_out_type(const KernelContext& ctx, const Tensor* y_zp, DType fallback);

template <typename Pre>
KernelDef prepacked_def(const char* op, typename PrepackedKernel<Pre>::Fn fn, size_t weight_input,
                        std::shared_ptr<const Pre> (*prepack)(const ir::Node&, const Tensor*), const char* domain = "",
                        int min_opset = 10) {
  KernelDef d;
  d.op_type = op;
  d.domain = domain;
  d.min_opset = min_opset;
  d.factory = [fn](const ir::Node&) -> Result<std::unique_ptr<OpKernel>> {
    return std::unique_ptr<OpKernel>(new PrepackedKernel<Pre>(fn, nullptr));
  };
  d.factory_with_constants = [fn, weight_input, prepack](
                                 const ir::Node& node,
                                 const ConstantInputs& constants) -> Result<std::unique_ptr<OpKernel>> {
    return std::unique_ptr<OpKernel>(new PrepackedKernel<Pre>(fn, prepack(node, constants(weight_input))));
  };
  return d;
}

}  // namespace dlrt::cpu
