// cpu_precision = "auto" (dlrt/precision_choice.h): build the session in f32
// and in each precision the CPU runs, run them on canary inputs, and keep the
// fastest whose outputs stay within the bound of f32's; f32 otherwise.
//
// Thread-safety: free of shared state.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "dlrt/precision_choice.h"
#include "dlrt/session.h"
#include "dlrt/status.h"
#include "dlrt/tensor.h"

namespace dlrt {

// How far one precision's outputs are from f32's over the canary inputs.
struct CanaryError {
  double min_cosine = 1;
  double max_rel_error = 0;
  std::string mismatch;  // an output that differs in a way rows cannot measure (dtype, shape, non-finite, integers)
};

// Adds the rows of `candidate` against `reference` (one run's outputs, in
// the model's output order; `names` for messages) to `err`, as PrecisionBound defines them.
void compare_canary_outputs(const std::vector<Tensor>& reference, const std::vector<Tensor>& candidate,
                            const std::vector<TensorInfo>& names, CanaryError& err);

// One input set from the inputs' declared types and shapes: dynamic dims 2
// for dim 0, else 8, one size per named dim; floats uniform in [-1, 1),
// integers and bools 0 or 1, from a fixed seed. kUnsupported for inputs that
// are not tensors or are strings.
Result<std::map<std::string, Tensor>> generate_canary_inputs(const std::vector<TensorInfo>& inputs);

// The choice over measured trials: trials[0] is f32's (the reference); a
// candidate that ran with an empty verdict is within the bound when both its
// figures are, faster when its median is below (1 - speed_margin) x f32's.
// The fastest candidate that is both wins (the first of equals); else f32.
// Fills each trial's within_bound, faster and verdict, and chosen and reason.
void decide_precision(PrecisionChoice& choice);

// Builds a session in `precision` ("f32", "bf16", "bf16x3").
using PrecisionSessionMaker = std::function<Result<std::unique_ptr<Session>>(const std::string& precision)>;

struct AutoPrecision {
  std::unique_ptr<Session> session;
  PrecisionChoice choice;
};

// The whole of "auto": f32's session, the candidates the CPU can run, the
// canary runs (`given`, else generated), `rounds` timed rounds interleaved
// across the sessions, decide_precision. Errors: those of building f32's session.
Result<AutoPrecision> choose_cpu_precision(const PrecisionSessionMaker& make,
                                           const std::vector<std::map<std::string, Tensor>>& given, int rounds = 5);

}  // namespace dlrt
