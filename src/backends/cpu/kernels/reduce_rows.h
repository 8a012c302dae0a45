// Float32 reductions over one contiguous run (a reduction whose inner extent
// is 1: ReduceMean over the last axes, a full ReduceSum). The generic
// reduce_block walks such a run as one scalar chain; these keep several
// vector accumulators instead. Sums accumulate in double, as reduce_block
// does, so results stay within rounding of the scalar path.
#pragma once

#include <cstdint>

namespace dlrt::cpu {

enum class RowReduce : uint8_t {
  kSum,        // sum of x
  kSumSquare,  // sum of x * x
  kAbsSum,     // sum of |x|
  kMax,        // largest x; NaN if any x is NaN
  kMin,        // smallest x; NaN if any x is NaN
};

// The reduction of x[0, n) (n >= 1). Uses AVX2 when cpu_isa() allows it.
double reduce_row_f32(RowReduce op, const float* x, int64_t n);

// Combines two partial results of consecutive runs (a before b).
double reduce_row_combine(RowReduce op, double a, double b);

}  // namespace dlrt::cpu
