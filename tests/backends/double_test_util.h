// Helpers shared by the tests that run the dlrt binary against a fake vendor
// runtime (tests/cuda_double, tests/openvino_double): the JSON a `--json`
// command printed, element-wise closeness, and one checked run of the test
// models' mlp.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include <nlohmann/json.hpp>

#include "../tools/cli_test_util.h"
#include "core/npy.h"
#include "dlrt/tensor.h"

namespace dlrt::testing {

// The JSON object a `--json` command printed after any log lines; null when none.
inline nlohmann::json json_in_output(const std::string& out) {
  auto start = out.find('{');
  if (start == std::string::npos) return nlohmann::json();
  return nlohmann::json::parse(out.substr(start), nullptr, false);
}

inline double element_as_double(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DType::kFloat32: return t.data<float>()[i];
    case DType::kFloat64: return t.data<double>()[i];
    case DType::kInt64: return static_cast<double>(t.data<int64_t>()[i]);
    case DType::kInt32: return t.data<int32_t>()[i];
    default: return std::nan("");
  }
}

// |got - want| <= 1e-4 + 1e-3 |want| at every element, shapes equal.
inline ::testing::AssertionResult close_to(const Tensor& got, const Tensor& want) {
  if (got.shape() != want.shape())
    return ::testing::AssertionFailure() << "shape " << shape_to_string(got.shape()) << " vs " << shape_to_string(want.shape());
  for (int64_t i = 0; i < want.size(); ++i) {
    double a = element_as_double(got, i), e = element_as_double(want, i);
    if (!(std::fabs(a - e) <= 1e-4 + 1e-3 * std::fabs(e)))
      return ::testing::AssertionFailure() << "element " << i << ": " << a << " vs " << e;
  }
  return ::testing::AssertionSuccess();
}

// Checks `r`, a `dlrt run mlp.onnx --json --output-dir out_dir` of the test
// models (in models_dir): no crash, the exit code, and with `check_values` its
// probs.npy against mlp_expected.npy. Returns the printed JSON (null when the
// run failed as expected).
inline nlohmann::json check_mlp_run(const CommandResult& r, const std::string& out_dir, const std::string& models_dir,
                                    int expect_exit, bool check_values) {
  EXPECT_FALSE(r.signaled) << r.output;
  EXPECT_EQ(r.exit_code, expect_exit) << r.output;
  if (r.exit_code != 0) return nlohmann::json();
  if (check_values) {
    auto got = read_npy_file(out_dir + "/probs.npy");
    auto want = read_npy_file(models_dir + "/mlp_expected.npy");
    EXPECT_TRUE(got.ok() && want.ok()) << r.output;
    if (got.ok() && want.ok()) {
      EXPECT_TRUE(close_to(*got, *want));
    }
  }
  auto j = json_in_output(r.output);
  EXPECT_TRUE(j.is_object() && j.contains("report")) << r.output;
  return j;
}

}  // namespace dlrt::testing
