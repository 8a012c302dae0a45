// Float32 reductions over one contiguous run (a reduction whose inner extent
// is 1: ReduceMean over the last axes, a full ReduceSum). The generic
// reduce_block walks such a run as one scalar chain; these keep several
// vector accumulators instead. Sums accumulate in double, as reduce_block
// does, so results stay within rounding of the scalar path.
#pragma once

#include <cstdint>

#include "backends/cpu/kernels/simd/width.h"

namespace dlrt::cpu {

enum class RowReduce : uint8_t {
  kSum,        // sum of x
  kSumSquare,  // sum of x * x
  kAbsSum,     // sum of |x|
  kMax,        // largest x; NaN if any x is NaN
  kMin,        // smallest x; NaN if any x is NaN
};

// The reduction of x[0, n) (n >= 1): on the vector layer at simd_width()
// where it is selected (cpu_has_simd_kernels), else portable code.
double reduce_row_f32(RowReduce op, const float* x, int64_t n);

// out[r] = the reduction of the row x[r * n, (r + 1) * n), r < rows (n >= 1),
// as reduce_row_f32, one call for all of them.
void reduce_rows_f32(RowReduce op, const float* x, int64_t n, int64_t rows, double* out);

// The same at `width` (one simd_width_runs), for the tests.
void reduce_rows_f32(SimdWidth width, RowReduce op, const float* x, int64_t n, int64_t rows, double* out);

// The portable reduction of x[0, n) (the vector paths' tails, and the reference).
namespace reduce_rows_detail {
double reduce_generic(RowReduce op, const float* x, int64_t n);
}

// Combines two partial results of consecutive runs (a before b).
double reduce_row_combine(RowReduce op, double a, double b);

}  // namespace dlrt::cpu
