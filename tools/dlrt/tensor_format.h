// Presenting tensors to a user: value previews, summary statistics, JSON, and
// random inputs for `dlrt run` when none are given.
#pragma once

#include <cstdint>
#include <random>
#include <string>

#include <nlohmann/json.hpp>

#include "dlrt/status.h"
#include "dlrt/tensor.h"
#include "core/tensor_values.h"  // element_as_double

namespace dlrt::cli {

struct TensorStats {
  bool numeric = false;  // false for strings
  double min = 0, max = 0, mean = 0;
  int64_t nan_count = 0, inf_count = 0;
};

TensorStats tensor_stats(const Tensor& t);
// "[0.1, 0.2, ..., 0.9]": the first `n` values, then "..." when there are more.
std::string value_preview(const Tensor& t, int n = 6);
// {"name","dtype","shape","values" (first n),"min","max","mean","nan_count"}.
nlohmann::json tensor_summary_json(const std::string& name, const Tensor& t, int n = 6);

// A tensor of `dtype` and `shape` with random values: floats uniform in
// [-1, 1), integers in [0, 2), bools random. Strings are not supported.
Result<Tensor> random_tensor(DType dtype, const Shape& shape, std::mt19937_64& rng);

// "1x3x224x224" -> {1,3,224,224}; "" and "scalar" mean a 0-d shape.
Result<Shape> parse_shape(const std::string& text);

// File name for an output: characters outside [A-Za-z0-9._-] become '_'
// (and a name of only dots, which would be a folder reference, is prefixed).
std::string sanitize_file_name(const std::string& name);

// Formats milliseconds with 3 significant decimals ("12.345").
std::string format_ms(double ms);

}  // namespace dlrt::cli
