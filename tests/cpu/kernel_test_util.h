// Runs one CPU kernel on tensors, without a model: for op-family unit tests.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>
#include <vector>

#include "backends/cpu/kernel.h"

namespace dlrt::cpu::testing {

// n floats drawn uniformly from [lo, hi) by `rng`, which the next call goes on from.
inline std::vector<float> random_floats(size_t n, std::mt19937& rng, float lo = -1.0f, float hi = 1.0f) {
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

// n floats drawn uniformly from [lo, hi) by a generator seeded with `seed`.
inline std::vector<float> random_floats(size_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 rng(seed);
  return random_floats(n, rng, lo, hi);
}

inline ir::Attribute attr_int(int64_t v) { ir::Attribute a; a.kind = ir::Attribute::Kind::kInt; a.i = v; return a; }
inline ir::Attribute attr_float(float v) { ir::Attribute a; a.kind = ir::Attribute::Kind::kFloat; a.f = v; return a; }
inline ir::Attribute attr_string(std::string v) { ir::Attribute a; a.kind = ir::Attribute::Kind::kString; a.s = std::move(v); return a; }
inline ir::Attribute attr_ints(std::vector<int64_t> v) { ir::Attribute a; a.kind = ir::Attribute::Kind::kInts; a.ints = std::move(v); return a; }
inline ir::Attribute attr_floats(std::vector<float> v) { ir::Attribute a; a.kind = ir::Attribute::Kind::kFloats; a.floats = std::move(v); return a; }

// Runs `op_type` at `opset` on `inputs` (an invalid Tensor means "omitted").
// Returns the outputs, or the kernel's Status. `threads` (1..4) sizes the pool.
inline Result<std::vector<Tensor>> run_op(const std::string& op_type, std::vector<Tensor> inputs,
                                          ir::Attributes attrs = {}, int num_outputs = 1,
                                          int opset = 17, const std::string& domain = "", int threads = 2) {
  ir::Node node;
  node.name = "test_" + op_type;
  node.op_type = op_type;
  node.domain = domain;
  node.opset = opset;
  node.attributes = std::move(attrs);
  for (size_t i = 0; i < inputs.size(); ++i) node.inputs.push_back(inputs[i].valid() ? static_cast<ir::ValueId>(i) : ir::kNoValue);
  for (int i = 0; i < num_outputs; ++i) node.outputs.push_back(static_cast<ir::ValueId>(100 + i));
  const KernelDef* def = builtin_kernels().find(op_type, domain, opset);
  if (!def) return Unsupported("no CPU kernel for " + op_type + " at opset " + std::to_string(opset));
  DLRT_ASSIGN_OR_RETURN(auto kernel, def->factory(node));
  std::vector<RunValue> in_values;
  in_values.reserve(inputs.size());
  for (auto& t : inputs) in_values.push_back(t.valid() ? RunValue::of(t) : RunValue{});
  std::vector<const RunValue*> in_ptrs;
  for (auto& v : in_values) in_ptrs.push_back(v.kind == RunValue::Kind::kNone ? nullptr : &v);
  std::vector<RunValue> outs(static_cast<size_t>(num_outputs));
  static ThreadPool pool1(1), pool2(2), pool3(3), pool4(4);
  ThreadPool& pool = threads <= 1 ? pool1 : threads == 2 ? pool2 : threads == 3 ? pool3 : pool4;
  KernelContext ctx(node, in_ptrs, outs, pool, nullptr);
  DLRT_RETURN_IF_ERROR(kernel->compute(ctx));
  std::vector<Tensor> result;
  for (auto& o : outs) result.push_back(o.tensor);
  return result;
}

// Element-wise comparison with a relative/absolute tolerance.
inline void expect_near(const Tensor& got, const std::vector<float>& want, float tol = 1e-5f) {
  ASSERT_EQ(got.dtype(), DType::kFloat32);
  ASSERT_EQ(got.size(), static_cast<int64_t>(want.size()));
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_NEAR(got.data<float>()[i], want[i], tol * (1 + std::abs(want[i]))) << "at index " << i;
}

}  // namespace dlrt::cpu::testing
