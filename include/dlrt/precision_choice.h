// What SessionOptions::cpu_precision = "auto" measured at create and chose
// (docs/performance-precision.md, "Choosing the precision: auto"): each precision the
// CPU can run, run on the canary inputs and compared with f32.
#pragma once

#include <string>
#include <vector>

#include "dlrt/export.h"

namespace dlrt {

class Session;

// The bound a candidate's outputs must stay within, against f32's on the same
// canary inputs. Each float output is read as rows (its last dim; a scalar or
// 1-D output is one row), per canary input set: every row's cosine similarity
// to f32's row must be >= min_cosine, and every row's relative error
// (max |candidate - f32| over the row / max |f32| over the row) <= max_rel_error.
// Non-finite values must sit where f32 has the same value; integer and bool
// outputs must be equal.
struct PrecisionBound {
  double min_cosine = 0.9999;
  double max_rel_error = 1e-2;
  // A candidate must take at most (1 - speed_margin) x f32's median time.
  double speed_margin = 0.05;
};

// One precision tried (or skipped) by "auto".
struct PrecisionTrial {
  std::string precision;  // "f32", "bf16", "bf16x3"
  bool ran = false;       // false: skipped (`verdict` says why)
  double median_ms = 0;   // median over the timed canary rounds (each round runs every canary input once)
  double min_cosine = 1;  // the worst row's cosine against f32
  double max_rel_error = 0;  // the worst row's relative error against f32
  bool within_bound = false;
  bool faster = false;  // median_ms <= (1 - speed_margin) x f32's
  std::string verdict;  // "chosen", "reference", "over the bound: ...", "not faster: ...", "not available: ..."
};

struct PrecisionChoice {
  bool automatic = false;  // false: the session's precision was named, nothing was measured
  std::string chosen;      // the precision the session runs: "f32", "bf16", "bf16x3"
  std::string reason;      // one line: why `chosen`
  std::string canary;      // where the canary inputs came from: "given" or "generated from the inputs' shapes"
  int canary_sets = 0;     // input sets run per round
  int rounds = 0;          // timed rounds per precision
  PrecisionBound bound;
  std::vector<PrecisionTrial> trials;  // f32 first, then each candidate
};

// What "auto" chose for `session` (automatic == false when the precision was
// named); valid as long as the session.
DLRT_API const PrecisionChoice& precision_choice(const Session& session);

}  // namespace dlrt
