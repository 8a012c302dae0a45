// Reading single elements of a tensor of any numeric dtype as a double (for
// tools, attribute-like constants and comparisons; not for kernels' hot loops).
#pragma once

#include <cstdint>

#include "dlrt/tensor.h"

namespace dlrt {

// Element `i` (flat, C order) of a numeric or bool tensor as double; 0 for
// strings and undefined dtypes. The caller checks 0 <= i < t.size().
double element_as_double(const Tensor& t, int64_t i = 0);

// The same as int64: integers exactly (uint64 above INT64_MAX saturates),
// floats truncated toward zero and saturated to the int64 range, NaN as 0.
int64_t element_as_int64(const Tensor& t, int64_t i = 0);

// Stores `v` into element `i`: floats rounded to the dtype, integers by C++
// conversion of the value truncated toward zero (the caller keeps it in range),
// bool as v != 0. False for dtypes it cannot store (strings, narrow floats).
bool set_element_from_double(Tensor& t, int64_t i, double v);

}  // namespace dlrt
