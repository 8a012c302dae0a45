// The device spec's grammar after "backend:" (issue 80): an index is a
// non-negative integer that fits, a name has a name's form, and a backend
// that numbers its devices takes only indexes, whether or not its vendor
// runtime is installed.
#include <gtest/gtest.h>

#include <string>

#include "runtime/backends.h"
#include "runtime/device_spec.h"
#include "runtime/placement.h"

namespace dlrt {
namespace {

TEST(DeviceSpec, IndexesAndNamesAfterTheColon) {
  auto spec = parse_device_spec("cuda:0, opencl:12,openvino:GPU.0,cpu:0,myplugin:npu_1");
  ASSERT_TRUE(spec.ok()) << spec.status().to_string();
  ASSERT_EQ(spec->choices.size(), 5u);
  EXPECT_EQ(spec->choices[0].device, "0");
  EXPECT_EQ(spec->choices[1].device, "12");
  EXPECT_EQ(spec->choices[2].device, "GPU.0");
  EXPECT_EQ(spec->choices[3].kind, DeviceChoice::Kind::kCpu);
  EXPECT_EQ(spec->choices[4].device, "npu_1");
  // An index is kept in canonical form: "cuda:007" names device "7".
  auto padded = parse_device_spec("cuda:007");
  ASSERT_TRUE(padded.ok());
  EXPECT_EQ(padded->choices[0].device, "7");
  auto top = parse_device_spec("cuda:" + std::to_string(kMaxDeviceIndex));
  ASSERT_TRUE(top.ok());
  EXPECT_EQ(top->choices[0].device, std::to_string(kMaxDeviceIndex));
}

TEST(DeviceSpec, MalformedDevicesAreRefused) {
  for (const char* text : {"cuda:-1", "cuda:+1", "cuda:1.5", "cuda:0x1", "cuda:2147483648",
                           "cuda:1180591620717411303424", "cuda:99999999999999999999999999999", "openvino:",
                           "cuda:", "cpu:", "auto:", "openvino:GPU cuda", "openvino:.GPU", "cuda:0:1", "cuda:0,,cpu"}) {
    auto spec = parse_device_spec(text);
    EXPECT_FALSE(spec.ok()) << text;
    if (!spec.ok()) {
      EXPECT_EQ(spec.status().code(), StatusCode::kInvalidArgument) << text;
    }
  }
  auto spec = parse_device_spec("cuda:-1");
  ASSERT_FALSE(spec.ok());
  EXPECT_NE(spec.status().message().find("malformed device 'cuda:-1'"), std::string::npos) << spec.status().message();
}

// "cuda:abc" is a name by its form, but CUDA (and OpenCL, and dlrt's CPU)
// number their devices: refused when the spec is resolved, before any vendor
// runtime is asked for devices, and whether one is installed or not.
TEST(DeviceSpec, IndexedBackendsRefuseDeviceNames) {
  ASSERT_TRUE(global_backends_status().ok());
  for (const char* text : {"cuda:abc", "opencl:GPU", "cpu:abc", "cuda:True"}) {
    auto spec = parse_device_spec(text);
    ASSERT_TRUE(spec.ok()) << text << ": " << spec.status().to_string();
    Resolution r = resolve_devices(*spec, global_backends(), {});
    ASSERT_EQ(r.malformed.size(), 1u) << text;
    EXPECT_NE(r.malformed[0].find("names its devices by index"), std::string::npos) << r.malformed[0];
    EXPECT_TRUE(r.candidates.empty()) << text;
  }
  // An index of a backend without that device is only unavailable (a fallback, or strict mode's error).
  auto spec = parse_device_spec("cuda:3");
  ASSERT_TRUE(spec.ok());
  Resolution r = resolve_devices(*spec, global_backends(), {});
  EXPECT_TRUE(r.malformed.empty());
}

}  // namespace
}  // namespace dlrt
