// An allocation failing inside a kernel (std::bad_alloc from operator new, in
// its compute or while it is built, packing weights) is an OutOfMemory Status
// naming the node, and the executor stays usable: never an exception that
// escapes, never an abort (issue 53).
#include <gtest/gtest.h>

#include <new>

#include "../ir/graph_builder.h"

namespace dlrt::cpu {
namespace {

using dlrt::testing::GraphBuilder;

// Throws std::bad_alloc from its compute while `fail` is set, else copies its input.
class FailingKernel : public exec::OpKernel {
 public:
  explicit FailingKernel(const bool* fail) : fail_(fail) {}
  Status compute(exec::KernelContext& ctx) const override {
    if (*fail_) throw std::bad_alloc();
    DLRT_ASSIGN_OR_RETURN(Tensor copy, ctx.input(0)->clone());
    ctx.set_output(0, std::move(copy));
    return Status::Ok();
  }

 private:
  const bool* fail_;
};

std::shared_ptr<ir::Graph> relu_graph() {
  GraphBuilder b;
  const ir::ValueId x = b.input("x", {4});
  b.output(b.node("Relu", {x}));
  return b.graph();
}

TEST(AllocationFailure, BadAllocInAKernelsComputeIsOutOfMemoryNamingTheNode) {
  ThreadPool pool(1);
  bool fail = true;
  auto custom = [&fail](const ir::Node& n) -> Result<std::unique_ptr<exec::OpKernel>> {
    if (n.op_type != "Relu") return std::unique_ptr<exec::OpKernel>();
    return std::unique_ptr<exec::OpKernel>(std::make_unique<FailingKernel>(&fail));
  };
  auto graph = relu_graph();
  auto ex = Executor::create(graph, pool, cpu::builtin_kernels(), custom);
  ASSERT_TRUE(ex.ok()) << ex.status().to_string();
  Tensor x = Tensor::allocate(DType::kFloat32, {4}).value();
  auto out = (*ex)->run({RunValue::of(x)});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kOutOfMemory);
  EXPECT_NE(out.status().message().find(graph->nodes[0].describe() + ": out of memory in its compute"), std::string::npos)
      << out.status().message();
  fail = false;  // the next run works
  auto again = (*ex)->run({RunValue::of(x)});
  EXPECT_TRUE(again.ok()) << again.status().to_string();
}

TEST(AllocationFailure, BadAllocBuildingAKernelIsOutOfMemory) {
  ThreadPool pool(1);
  auto custom = [](const ir::Node& n) -> Result<std::unique_ptr<exec::OpKernel>> { throw std::bad_alloc(); };
  auto graph = relu_graph();
  auto ex = Executor::create(graph, pool, cpu::builtin_kernels(), custom);
  ASSERT_FALSE(ex.ok());
  EXPECT_EQ(ex.status().code(), StatusCode::kOutOfMemory);
  EXPECT_NE(ex.status().message().find(graph->nodes[0].describe()), std::string::npos) << ex.status().message();
}

}  // namespace
}  // namespace dlrt::cpu
