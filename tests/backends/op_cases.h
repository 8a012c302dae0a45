// One-node ONNX models for checking a backend's kernels against the CPU
// backend: the case table (op_cases()), the model builder, the comparison and
// a one-call session run. Used by the all-backend differential test
// (tests/backends/differential_test.cpp) and the OpenCL tests.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "dlrt/session.h"
#include "dlrt/tensor.h"

namespace dlrt::testing::ops {

using AttrFn = std::function<void(onnx::AttributeProto*)>;

// One input of the node: a graph input (fed random data, or int_values for
// int64) or an initializer (random floats unless float_values is given).
struct OpInput {
  std::string name;  // empty: an omitted optional input
  Shape shape;
  int dtype = onnx::TensorProto::FLOAT;
  bool initializer = false;
  std::vector<int64_t> int_values;
  std::vector<float> float_values;
};

struct OpCase {
  std::string label;
  std::string op;
  std::vector<OpInput> inputs;
  std::map<std::string, AttrFn> attrs;
  int opset = 17;
  int outputs = 1;
};

// Attribute values.
AttrFn ai(int64_t v);
AttrFn af(float v);
AttrFn as(std::string v);
AttrFn ais(std::vector<int64_t> v);

// Inputs: a float graph input, a float initializer, an int64 initializer and
// a float initializer with the given values.
OpInput f(std::string name, Shape s);
OpInput w(std::string name, Shape s);
OpInput ints(std::string name, std::vector<int64_t> v);
OpInput fconst(std::string name, std::vector<float> v, Shape s = {});

int64_t numel(const Shape& s);

// The serialized one-node model of `c`; its graph inputs' tensors go to `feeds`.
// Random values (graph inputs, initializers without float_values) are drawn
// from [-2, 2) by `rng` (kernel_test_util.h's random_floats).
std::string one_node_model(const OpCase& c, std::mt19937& rng, std::map<std::string, Tensor>& feeds);

// Largest |a - b| over max|b| (as the runtime's warm-start check); +inf on a
// shape or dtype mismatch, a NaN in only one of them, or any non-float difference.
double max_rel_error(const Tensor& a, const Tensor& b);

// Runs `model` once on `device` with one CPU thread and no graph optimisation
// unless `optimize`; strict mode on every device but the CPU when `strict`.
Result<std::vector<Tensor>> run_on(const std::string& model, const std::map<std::string, Tensor>& feeds,
                                   const std::string& device, RunReport* report, bool strict = true,
                                   bool optimize = true);

// Every kernel family a GPU-like backend implements, with odd sizes,
// broadcasting and the attribute variants: about 100 cases.
std::vector<OpCase> op_cases();

}  // namespace dlrt::testing::ops
