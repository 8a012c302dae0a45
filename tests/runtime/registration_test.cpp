// Kernel and backend registration failures are fatal at start-up, by name
// (issue 36): a kernel family that fails to register names itself, and a
// backend that fails to register (DLRT_PLUGINS) makes Session::create fail.
#include <gtest/gtest.h>

#include "../tools/cli_test_util.h"
#include "backend/registry.h"
#include "backends/cpu/kernel.h"

namespace dlrt {
namespace {

Status add_relu(cpu::KernelRegistry& r) {
  return r.add_fn("Relu", [](cpu::KernelContext&) { return Status::Ok(); });
}
Status add_relu_again(cpu::KernelRegistry& r) { return add_relu(r); }
Status add_sigmoid(cpu::KernelRegistry& r) {
  return r.add_fn("Sigmoid", [](cpu::KernelContext&) { return Status::Ok(); });
}

TEST(Registration, KernelFamilyFailureNamesTheFamily) {
  cpu::KernelRegistry r;
  const cpu::KernelRegistry::Family families[] = {
      {"add_relu", add_relu}, {"add_relu_again", add_relu_again}, {"add_sigmoid", add_sigmoid}};
  Status s = r.add_families(families);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kInternal);
  EXPECT_NE(s.message().find("kernel family add_relu_again"), std::string::npos) << s.to_string();
  EXPECT_NE(s.message().find("Relu"), std::string::npos) << s.to_string();
  // Every family is still tried: the one after the failure is registered.
  EXPECT_NE(r.find("Sigmoid", "", 13), nullptr);
}

TEST(Registration, BuiltinsRegisterCleanly) {
  EXPECT_TRUE(cpu::builtin_kernels_status().ok()) << cpu::builtin_kernels_status().to_string();
  EXPECT_FALSE(cpu::builtin_kernels().op_types().empty());
}

// The global backend registry is built once per process, so a bad plugin list
// is tried in a child: `dlrt run` must fail at start-up and say why.
TEST(Registration, BackendRegistrationFailureFailsSessionCreate) {
  std::string why;
  const std::string models = testing::test_models_dir(&why);
  if (models.empty()) GTEST_SKIP() << why;
  const std::string cmd = "env -u DLRT_CONFIG -u DLRT_DEVICE DLRT_PLUGINS='good,Not-A-Name' " +
                          testing::quote(testing::dlrt_binary()) + " run " + testing::quote(models + "/mlp.onnx");
  const testing::CommandResult r = testing::run_command(cmd);
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("registering backends"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("'Not-A-Name' is not a plugin name"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace dlrt
