// `dlrt devices` as a user runs it, on a fake sysfs tree (--root) so the GPU
// and NPU show up on any machine.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "../tools/cli_test_util.h"
#include "fake_sysfs.h"

namespace dlrt {
namespace {

using testing::CommandResult;
using testing::quote;
using testing::run_command;

CommandResult dlrt_devices(const std::string& args) {
  return run_command(quote(testing::dlrt_binary()) + " devices " + args + " 2>/dev/null");
}

class DevicesCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(testing::dlrt_binary()))
      GTEST_FAIL() << testing::dlrt_binary() << " is missing: build the dlrt_cli target (ninja dlrt_cli)";
    ASSERT_FALSE(tree_.root().empty());
    testing::build_machine(tree_);
  }
  testing::FakeTree tree_;
};

TEST_F(DevicesCliTest, JsonListsHardwareBackendsAndBackendDevices) {
  CommandResult r = dlrt_devices("--json --root " + quote(tree_.root()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  nlohmann::json j = nlohmann::json::parse(r.output, nullptr, /*allow_exceptions=*/false);
  ASSERT_TRUE(j.is_object()) << r.output;
  ASSERT_TRUE(j["hardware"].is_array());
  ASSERT_TRUE(j["backends"].is_array());
  ASSERT_TRUE(j["backend_devices"].is_array());

  const auto& hw = j["hardware"];
  ASSERT_EQ(hw.size(), 4u) << r.output;
  EXPECT_EQ(hw[0]["id"], "cpu:0");
  EXPECT_EQ(hw[0]["type"], "cpu");
  EXPECT_EQ(hw[0]["metadata"]["discovered_by"].is_string(), true);
  EXPECT_EQ(hw[1]["id"], "gpu:0");
  EXPECT_EQ(hw[1]["vendor"], "Intel");
  EXPECT_EQ(hw[1]["vendor_id"], "0x8086");
  EXPECT_EQ(hw[1]["device_id"], "0x56a0");
  EXPECT_EQ(hw[1]["metadata"]["driver"], "i915");
  EXPECT_EQ(hw[1]["metadata"]["pci_bus_id"], "0000:03:00.0");
  EXPECT_EQ(hw[2]["id"], "npu:0");
  EXPECT_EQ(hw[2]["type"], "npu");
  EXPECT_EQ(hw[2]["name"], "Intel Meteor Lake NPU");
  EXPECT_EQ(hw[2]["metadata"]["driver"], "intel_vpu");
  EXPECT_EQ(hw[3]["id"], "gpu:1");
  EXPECT_EQ(hw[3]["vendor"], "NVIDIA");
  EXPECT_EQ(hw[3]["metadata"]["driver_version"], "550.54.14");

  // The CPU backend is always there and drives cpu:0.
  bool cpu_backend = false;
  for (const auto& b : j["backends"]) {
    ASSERT_TRUE(b["name"].is_string());
    ASSERT_TRUE(b["available"].is_boolean());
    if (b["available"]) {
      EXPECT_TRUE(b.contains("library_path"));
      EXPECT_TRUE(b.contains("version"));
    } else {
      EXPECT_TRUE(b["reason"].is_string());
      EXPECT_FALSE(b["reason"].get<std::string>().empty()) << b.dump();
      EXPECT_TRUE(b["fix"].is_string());
    }
    if (b["name"] == "cpu") cpu_backend = b["available"].get<bool>();
  }
  EXPECT_TRUE(cpu_backend) << r.output;
  bool cpu_device = false;
  for (const auto& d : j["backend_devices"]) {
    ASSERT_TRUE(d["spec"].is_string());
    ASSERT_TRUE(d["is_virtual"].is_boolean());
    if (d["backend"] == "cpu") {
      cpu_device = true;
      EXPECT_EQ(d["type"], "cpu");
      EXPECT_EQ(d["is_virtual"], false);
      EXPECT_EQ(d["hardware"], "cpu:0");
      // The 8-bit GEMM's kernel and, unless it is amx, why not (docs/devices.md).
      const std::string int8 = d["metadata"].value("int8_gemm", "");
      EXPECT_TRUE(int8 == "amx" || int8.find(" (amx: ") != std::string::npos) << d.dump();
    }
    if (d["is_virtual"] == false && !d["hardware"].is_null()) {
      bool known = false;
      for (const auto& h : hw) known = known || h["id"] == d["hardware"];
      EXPECT_TRUE(known) << "backend device " << d["spec"] << " names unknown hardware " << d["hardware"];
    }
  }
  EXPECT_TRUE(cpu_device) << r.output;
}

TEST_F(DevicesCliTest, TextShowsEverySection) {
  CommandResult r = dlrt_devices("--root " + quote(tree_.root()));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const char* want : {"Hardware", "Backends", "Backend devices", "cpu:0", "gpu:0", "npu:0", "gpu:1",
                           "Intel Meteor Lake NPU", "driver=intel_vpu", "pci_bus_id=0000:00:0b.0",
                           "driver_version=550.54.14", "memory_bytes=17163091968 (16.0 GiB)"})
    EXPECT_NE(r.output.find(want), std::string::npos) << "missing '" << want << "' in:\n" << r.output;
}

TEST_F(DevicesCliTest, UsageErrors) {
  EXPECT_EQ(dlrt_devices("--no-such-flag").exit_code, 2);
  EXPECT_EQ(dlrt_devices("extra").exit_code, 2);
  CommandResult help = dlrt_devices("--help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.output.find("--json"), std::string::npos);
}

}  // namespace
}  // namespace dlrt
