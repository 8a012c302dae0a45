// What the ai.onnx.ml kernels share (ml.cpp, ml_trees.cpp).
#pragma once

#include <cstdint>
#include <string>

#include "dlrt/status.h"

namespace dlrt::cpu {

// post_transform of the linear and tree models on one row of n scores, in
// place: NONE, LOGISTIC, SOFTMAX, SOFTMAX_ZERO (zeros stay out of the sum) or
// PROBIT. InvalidArgument for another name.
Status ml_post_transform(const std::string& how, float* s, int64_t n);

}  // namespace dlrt::cpu
