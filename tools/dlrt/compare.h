// Comparing computed values with expected ones (conformance and zoo checks).
#pragma once

#include <optional>
#include <string>

#include "dlrt/session.h"
#include "dlrt/tensor.h"

namespace dlrt::cli {

struct Tolerance {
  double rtol = 1e-3;
  double atol = 1e-5;
};

// The tolerance conformance uses for a dtype: float32/float64 rtol 1e-3 atol
// 1e-5; float16 rtol 4e-3 atol 1e-3; bfloat16 rtol 2e-2 atol 1e-2; exact otherwise.
Tolerance tolerance_for(DType dtype);

// nullopt when `actual` matches `expected` (same dtype and shape; floats
// within |a - e| <= atol + rtol * |e|, NaN matches NaN, infinities must be
// equal; everything else exact). Otherwise a one-line reason.
std::optional<std::string> compare_tensors(const Tensor& expected, const Tensor& actual, Tolerance tol);

// As above for tensors, sequences (element-wise), maps and absent optionals.
std::optional<std::string> compare_values(const Value& expected, const Value& actual);

}  // namespace dlrt::cli
