// What the ai.onnx.ml kernels share (ml*.cpp): their domain and kernel
// definitions, the post transforms and the two-column scores of a binary classifier with one
// score column, with ONNX Runtime's formulas (float arithmetic, its erfinv
// approximation for PROBIT), since its results are what users compare with.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "dlrt/status.h"
#include "exec/kernel.h"

namespace dlrt::cpu {

inline constexpr const char* kMl = "ai.onnx.ml";

// The ai.onnx.ml kernel `op` made by K::create(node).
template <typename K>
KernelDef ml_kernel_def(const char* op) {
  KernelDef d;
  d.op_type = op;
  d.domain = kMl;
  d.factory = [](const ir::Node& n) { return K::create(n); };
  return d;
}

enum class MlPost { kNone, kLogistic, kSoftmax, kSoftmaxZero, kProbit };

// post_transform by name: NONE, LOGISTIC, SOFTMAX, SOFTMAX_ZERO or PROBIT;
// InvalidArgument for another name.
Result<MlPost> ml_parse_post(const std::string& how);

inline float ml_logistic(float v) {
  const float e = 1.0f / (1.0f + std::exp(-std::fabs(v)));
  return v < 0 ? 1.0f - e : e;
}

// sqrt(2) * erfinv(2p - 1), erfinv by Winitzki's approximation (a = 0.147) as
// ONNX Runtime computes it.
inline float ml_probit(float p) {
  float x = 2.0f * p - 1.0f;
  const float sgn = x < 0 ? -1.0f : 1.0f;
  x = (1.0f - x) * (1.0f + x);
  const float lg = std::log(x);
  const float v = 2.0f / (static_cast<float>(M_PI) * 0.147f) + 0.5f * lg;
  const float v2 = 1.0f / 0.147f * lg;
  return static_cast<float>(M_SQRT2) * sgn * std::sqrt(-v + std::sqrt(v * v - v2));
}

// The post transform of one row of n scores, in place.
void ml_post_apply(MlPost post, float* s, int64_t n);

// ml_post_apply by name (InvalidArgument for an unknown one).
Status ml_post_transform(const std::string& how, float* s, int64_t n);

// How a binary classifier with one score s writes its two columns, as ONNX
// Runtime 1.31 does (measured): with LOGISTIC [logistic(-s), logistic(s)],
// else kComplement [1 - s, s] or kNegate [-s, s]. (PROBIT leaves ONNX
// Runtime's second column unwritten: the callers refuse it.)
enum class MlSecond { kComplement, kNegate };
inline void ml_write_two(MlSecond how, MlPost post, float s, float* out) {
  if (post == MlPost::kLogistic) out[0] = ml_logistic(-s), out[1] = ml_logistic(s);
  else if (how == MlSecond::kComplement) out[0] = 1.0f - s, out[1] = s;
  else out[0] = -s, out[1] = s;
}

}  // namespace dlrt::cpu
