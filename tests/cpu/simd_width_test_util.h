// Running a test at each SIMD width (128, 256, 512 bits) this CPU and build run.
#pragma once

#include <gtest/gtest.h>

#include <cstdio>

#include "backends/cpu/kernels/simd/width.h"

namespace dlrt::cpu::testing {

// The fixture of a suite instantiated over SimdWidth: skipped, with the
// reason, at a width this CPU cannot run. A derived SetUp calls this one
// first and returns when IsSkipped().
class SimdWidthTest : public ::testing::TestWithParam<SimdWidth> {
 protected:
  void SetUp() override {
    if (!simd_width_runs(GetParam()))
      GTEST_SKIP() << "this CPU cannot run the " << simd_width_name(GetParam()) << "-bit instantiation";
  }
};

// Calls fn(w) for each width this CPU (or build) runs, printing a line for
// each other one; stops after a fatal failure, as an ASSERT in the loop
// would. Returns how many widths ran.
template <class Fn>
int for_each_runnable_width(Fn&& fn) {
  int ran = 0;
  for (SimdWidth w : {SimdWidth::k128, SimdWidth::k256, SimdWidth::k512}) {
    if (!simd_width_runs(w)) {
      std::printf("skipped: this CPU (or build) cannot run the %s-bit instantiation\n", simd_width_name(w));
      continue;
    }
    ++ran;
    fn(w);
    if (::testing::Test::HasFatalFailure()) break;
  }
  return ran;
}

}  // namespace dlrt::cpu::testing
