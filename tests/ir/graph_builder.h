// Builds small ir::Graphs by hand and runs them on the CPU executor, for the
// optimiser tests (tests/ir/passes_test.cpp, tests/runtime/optimize_test.cpp).
#pragma once

#include <cmath>
#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "backends/cpu/kernel.h"
#include "core/thread_pool.h"
#include "exec/executor.h"
#include "ir/graph.h"
#include "ir/passes/passes.h"

namespace dlrt::testing {

// Attribute makers: integer and integer-list attributes.
inline ir::Attribute ai(int64_t v) {
  ir::Attribute a;
  a.kind = ir::Attribute::Kind::kInt;
  a.i = v;
  return a;
}
inline ir::Attribute ais(std::vector<int64_t> v) {
  ir::Attribute a;
  a.kind = ir::Attribute::Kind::kInts;
  a.ints = std::move(v);
  return a;
}
// Float, string and float-list attributes.
inline ir::Attribute af(float v) {
  ir::Attribute a;
  a.kind = ir::Attribute::Kind::kFloat;
  a.f = v;
  return a;
}
inline ir::Attribute as(std::string v) {
  ir::Attribute a;
  a.kind = ir::Attribute::Kind::kString;
  a.s = std::move(v);
  return a;
}
inline ir::Attribute afs(std::vector<float> v) {
  ir::Attribute a;
  a.kind = ir::Attribute::Kind::kFloats;
  a.floats = std::move(v);
  return a;
}

// A pass context whose target is the CPU backend: fusions emit only ops it has a kernel for.
inline ir::passes::PassContext cpu_kernels_context() {
  ir::passes::PassContext ctx;
  ctx.supports = [](const std::string& op, const std::string& domain, int opset) {
    return cpu::builtin_kernels().find(op, domain, opset) != nullptr;
  };
  return ctx;
}

class GraphBuilder {
 public:
  GraphBuilder() : g_(std::make_shared<ir::Graph>()) {
    g_->name = "test";
    g_->opsets[""] = 17;
    g_->opsets["com.dlrt"] = 1;
  }

  // dims: >= 0 static, -1 symbolic (named sym<i>).
  ir::ValueId input(const std::string& name, std::vector<int64_t> dims, DType dt = DType::kFloat32,
                    std::vector<std::string> syms = {}) {
    ir::TypeInfo t;
    t.dtype = dt;
    std::vector<ir::Dim> d;
    for (size_t i = 0; i < dims.size(); ++i) d.push_back(ir::Dim{dims[i], i < syms.size() ? syms[i] : std::string()});
    t.shape = d;
    ir::ValueId v = g_->add_value(name, t);
    g_->inputs.push_back(v);
    return v;
  }
  ir::ValueId constant(const std::string& name, Tensor t) {
    ir::TypeInfo type;
    type.dtype = t.dtype();
    std::vector<ir::Dim> d;
    for (int64_t x : t.shape()) d.push_back(ir::Dim{x, ""});
    type.shape = d;
    ir::ValueId v = g_->add_value(name, type);
    g_->values[v].constant = std::move(t);
    return v;
  }
  ir::ValueId scalar(const std::string& name, float f) { return constant(name, Tensor::scalar<float>(f)); }
  ir::ValueId ints(const std::string& name, std::vector<int64_t> v) {
    return constant(name, Tensor::from_vector<int64_t>({static_cast<int64_t>(v.size())}, v));
  }
  ir::ValueId node(const std::string& op, std::vector<ir::ValueId> inputs,
                   ir::Attributes attrs = {}, int opset = 17, const std::string& domain = "") {
    ir::Node n;
    n.name = op + "_" + std::to_string(g_->nodes.size());
    n.op_type = op;
    n.domain = domain;
    n.opset = opset;
    n.inputs = std::move(inputs);
    n.attributes = std::move(attrs);
    ir::ValueId out = g_->add_value(n.name + "_out");
    n.outputs = {out};
    g_->nodes.push_back(std::move(n));
    return out;
  }
  // A node of `outputs` outputs (Split and the like): their values.
  std::vector<ir::ValueId> nodes(const std::string& op, std::vector<ir::ValueId> inputs, size_t outputs,
                                 ir::Attributes attrs = {}, int opset = 17) {
    const ir::ValueId first = node(op, std::move(inputs), std::move(attrs), opset);
    ir::Node& n = g_->nodes.back();
    for (size_t j = 1; j < outputs; ++j) n.outputs.push_back(g_->add_value(n.name + "_out" + std::to_string(j)));
    std::vector<ir::ValueId> outs = n.outputs;
    outs[0] = first;
    return outs;
  }
  void output(ir::ValueId v) { g_->outputs.push_back(v); }
  // An output with a declared type (what an exported model needs).
  void output(ir::ValueId v, DType dt, std::vector<int64_t> dims, std::vector<std::string> syms = {}) {
    ir::TypeInfo t;
    t.dtype = dt;
    std::vector<ir::Dim> d;
    for (size_t i = 0; i < dims.size(); ++i) d.push_back(ir::Dim{dims[i], i < syms.size() ? syms[i] : std::string()});
    t.shape = d;
    g_->values[v].type = t;
    g_->outputs.push_back(v);
  }
  std::shared_ptr<ir::Graph> graph() {
    EXPECT_TRUE(g_->topological_sort().ok());
    return g_;
  }

 private:
  std::shared_ptr<ir::Graph> g_;
};

inline Tensor random_tensor(Shape shape, uint32_t seed, float lo = -1, float hi = 1) {
  auto t = Tensor::allocate(DType::kFloat32, shape).value();
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  for (int64_t i = 0; i < t.size(); ++i) t.data<float>()[i] = d(rng);
  return t;
}

// Runs `graph` on the CPU executor.
inline std::vector<Tensor> run_graph(std::shared_ptr<ir::Graph> graph, const std::vector<Tensor>& inputs,
                                     int threads = 2) {
  static ThreadPool pool(threads);
  auto ex = Executor::create(graph, pool, cpu::builtin_kernels());
  EXPECT_TRUE(ex.ok()) << ex.status().to_string();
  if (!ex.ok()) return {};
  std::vector<RunValue> in;
  for (const auto& t : inputs) in.push_back(RunValue::of(t));
  auto out = (*ex)->run(std::move(in));
  EXPECT_TRUE(out.ok()) << out.status().to_string();
  std::vector<Tensor> r;
  if (out.ok())
    for (auto& v : *out) r.push_back(v.tensor);
  return r;
}

inline void expect_close(const Tensor& got, const Tensor& want, float tol = 1e-5f) {
  ASSERT_EQ(got.dtype(), want.dtype());
  ASSERT_EQ(got.shape(), want.shape());
  if (got.dtype() != DType::kFloat32) return;
  for (int64_t i = 0; i < got.size(); ++i) {
    const float g = got.data<float>()[i], w = want.data<float>()[i];
    if (std::isinf(w)) {  // an infinity must be met exactly (a tolerance of inf would take anything)
      ASSERT_EQ(g, w) << "at " << i;
      continue;
    }
    ASSERT_NEAR(g, w, tol * (1 + std::abs(w))) << "at " << i;
  }
}

inline int count_ops(const ir::Graph& g, const std::string& op) {
  int n = 0;
  for (const auto& node : g.nodes) n += node.op_type == op;
  return n;
}

}  // namespace dlrt::testing
