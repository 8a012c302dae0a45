// The CUDA backend on a machine without a GPU, driven against the fake NVIDIA
// stack (tests/cuda_double/cuda_double.cpp, built as libcuda.so.1,
// libnvrtc.so.13 and libcublas.so.13 into build/tests/cuda_double/): the
// library search and its reasons, discovery and metadata, `gpu` choosing CUDA,
// fallback to the CPU when the driver, NVRTC, memory or a launch fails, and
// strict mode turning each into an error.
//
// The fake's kernels do nothing, so a run that stays on the fake GPU has
// meaningless numbers: only runs that fell back are compared with the expected
// outputs. Most tests run the dlrt binary; the in-process ones (refresh after
// fixing the environment, Session) re-run this test binary with one
// CudaDoubleChild test selected, since the libraries stay loaded for the life
// of a process.
#include <gtest/gtest.h>

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "../device/fake_sysfs.h"
#include "../backends/double_test_util.h"
#include "../tools/cli_test_util.h"
#include "backend/registry.h"
#include "backends/cuda/cuda_executable.h"
#include "backends/cuda/cuda_runtime.h"
#include "core/npy.h"
#include "dlrt/session.h"
#include "runtime/backends.h"

namespace dlrt {
namespace {

namespace fs = std::filesystem;
using testing::quote;
using testing::check_mlp_run;
using testing::close_to;
using testing::json_in_output;
using testing::run_command;

const std::string kDoubleDir = DLRT_CUDA_DOUBLE_DIR;

fs::path temp_dir(const std::string& tag) {
  fs::path p = fs::temp_directory_path() / ("dlrt_cudad_" + tag + "_" + std::to_string(::getpid()));
  fs::remove_all(p);
  fs::create_directories(p);
  return p;
}

// A folder holding links to some of the fake's three libraries.
std::string fake_folder(const fs::path& tmp, const std::string& name, const std::vector<std::string>& libs) {
  fs::path dir = tmp / name;
  fs::create_directories(dir);
  for (const auto& lib : libs) fs::create_symlink(fs::path(kDoubleDir) / lib, dir / lib);
  return dir.string();
}

// An environment where only `lib_path` can provide CUDA (empty: DLRT_CUDA_LIB_PATH unset), the blob
// cache is off and no device or strict setting leaks in from the caller's.
std::string cuda_env(const std::string& lib_path, const fs::path& home, const std::string& extra = "") {
  std::string e = "env -u DLRT_DEVICE -u DLRT_STRICT -u LD_LIBRARY_PATH -u CUDA_VISIBLE_DEVICES -u DLRT_CUDA_LIB_PATH "
                  "-u DLRT_FAKE_CUDA_FAIL HOME=" +
                  quote(home.string()) + " DLRT_CACHE=0 ";
  if (!lib_path.empty()) e += "DLRT_CUDA_LIB_PATH=" + quote(lib_path) + " ";
  return e + extra + " ";
}

std::map<std::string, long> read_stats(const fs::path& file) {
  std::map<std::string, long> m;
  std::ifstream f(file);
  std::string line;
  while (std::getline(f, line)) {
    auto eq = line.find('=');
    if (eq != std::string::npos) m[line.substr(0, eq)] += std::atol(line.c_str() + eq + 1);
  }
  return m;
}

bool have_cuda_backend() { return dlrt::global_backends().find("cuda") != nullptr; }

class CudaDouble : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(kDoubleDir + "/libcuda.so.1")) GTEST_SKIP() << "the fake driver was not built: " << kDoubleDir;
    if (!fs::exists(testing::dlrt_binary())) GTEST_SKIP() << testing::dlrt_binary() << " is missing";
    if (!have_cuda_backend()) GTEST_SKIP() << "this build has no cuda backend";
    std::string err;
    models_ = testing::test_models_dir(&err);
    if (models_.empty()) GTEST_SKIP() << err;
    tmp_ = temp_dir(::testing::UnitTest::GetInstance()->current_test_info()->name());
  }
  void TearDown() override {
    std::error_code ec;
    if (!tmp_.empty()) fs::remove_all(tmp_, ec);
  }
  std::string model(const std::string& name) const { return (fs::path(models_) / name).string(); }
  std::string dlrt(const std::string& lib_path, const std::string& extra, const std::string& args) const {
    return cuda_env(lib_path, tmp_, extra) + quote(testing::dlrt_binary()) + " " + args;
  }
  // `dlrt devices --json`'s entry for the cuda backend (and the whole answer in `all`).
  nlohmann::json cuda_backend(const std::string& lib_path, const std::string& extra, nlohmann::json* all = nullptr,
                              const std::string& more_args = "") {
    auto r = run_command(dlrt(lib_path, extra, "devices --json " + more_args));
    EXPECT_EQ(r.exit_code, 0) << r.output;
    last_output_ = r.output;
    nlohmann::json j = json_in_output(r.output);
    if (all) *all = j;
    if (!j.is_object()) return nlohmann::json();
    for (const auto& b : j["backends"])
      if (b["name"] == "cuda") return b;
    ADD_FAILURE() << "no cuda backend in " << r.output;
    return nlohmann::json();
  }
  std::string tried(const nlohmann::json& b) const {
    std::string s;
    for (const auto& t : b["tried"]) s += t.get<std::string>() + "\n";
    return s;
  }
  // dlrt run of mlp.onnx with its sample input. When the run exits 0 and
  // `expect_cpu`, checks the output against the expected one.
  nlohmann::json run_mlp(const std::string& lib_path, const std::string& extra, const std::string& device,
                         int expect_exit = 0, bool expect_cpu = true) {
    const std::string out = (tmp_ / ("o" + std::to_string(runs_++))).string();
    auto r = run_command(dlrt(lib_path, extra,
                              "run " + quote(model("mlp.onnx")) + " --device " + device + " --json --input x=" +
                                  quote(model("mlp_input.npy")) + " --output-dir " + quote(out)));
    last_output_ = r.output;
    return check_mlp_run(r, out, models_, expect_exit, expect_cpu);
  }

  std::string models_;
  fs::path tmp_;
  int runs_ = 0;
  std::string last_output_;
};

const std::vector<std::string> kAll = {"libcuda.so.1", "libnvrtc.so.13", "libcublas.so.13"};

// ---- Finding the libraries ----

TEST_F(CudaDouble, NothingInstalledNamesEveryPlaceTriedAndTheFix) {
  auto b = cuda_backend("", "");
  ASSERT_TRUE(b.is_object()) << last_output_;
  if (b["available"].get<bool>()) GTEST_SKIP() << "this machine has a CUDA driver: " << b.dump();
  const std::string reason = b["reason"], fix = b["fix"], t = tried(b);
  EXPECT_NE(reason.find("libcuda.so.1"), std::string::npos) << reason;
  EXPECT_NE(t.find("loader: libcuda.so.1"), std::string::npos) << t;
  EXPECT_NE(t.find("/usr/lib/x86_64-linux-gnu"), std::string::npos) << t;
  EXPECT_NE(fix.find("install the NVIDIA driver"), std::string::npos) << fix;
  EXPECT_NE(fix.find("DLRT_CUDA_LIB_PATH"), std::string::npos) << fix;
}

TEST_F(CudaDouble, WrongLibPathIsTheOnlyPlaceSearched) {
  const fs::path empty = tmp_ / "empty";
  fs::create_directories(empty);
  for (const std::string& path : {(tmp_ / "absent").string(), empty.string()}) {
    SCOPED_TRACE(path);
    auto b = cuda_backend(path, "");
    ASSERT_TRUE(b.is_object()) << last_output_;
    EXPECT_FALSE(b["available"].get<bool>());
    const std::string reason = b["reason"], fix = b["fix"], t = tried(b);
    EXPECT_NE(reason.find("DLRT_CUDA_LIB_PATH"), std::string::npos) << reason;
    EXPECT_NE(t.find(path), std::string::npos) << t;
    EXPECT_EQ(t.find("loader:"), std::string::npos) << "nothing but DLRT_CUDA_LIB_PATH may be searched: " << t;
    EXPECT_NE(fix.find("DLRT_CUDA_LIB_PATH"), std::string::npos) << fix;
  }
}

TEST_F(CudaDouble, DriverWithoutNvrtcIsUnavailableAndSaysWhichWheel) {
  const std::string dir = fake_folder(tmp_, "driver_only", {"libcuda.so.1", "libcublas.so.13"});
  auto b = cuda_backend(dir, "");
  ASSERT_TRUE(b.is_object()) << last_output_;
  EXPECT_FALSE(b["available"].get<bool>());
  std::string reason = b["reason"], fix = b["fix"];
  EXPECT_NE(reason.find("NVRTC"), std::string::npos) << reason;
  EXPECT_NE(reason.find("CUDA 13.0"), std::string::npos) << reason;
  EXPECT_NE(fix.find("pip install nvidia-cuda-nvrtc==13.0"), std::string::npos) << fix;
  // A CUDA 12 driver asks for the cu12 wheel.
  b = cuda_backend(dir, "DLRT_FAKE_CUDA_DRIVER_VERSION=12040");
  fix = b["fix"];
  EXPECT_NE(fix.find("nvidia-cuda-nvrtc-cu12==12.4"), std::string::npos) << fix;
}

TEST_F(CudaDouble, NvrtcNewerThanTheDriverIsNotUsed) {
  const std::string dir = fake_folder(tmp_, "all", kAll);
  auto b = cuda_backend(dir, "DLRT_FAKE_CUDA_DRIVER_VERSION=12080");
  ASSERT_TRUE(b.is_object()) << last_output_;
  EXPECT_FALSE(b["available"].get<bool>());
  const std::string reason = b["reason"];
  EXPECT_NE(reason.find("NVRTC 13.0 is newer than the driver (CUDA 12.8)"), std::string::npos) << reason;
}

TEST_F(CudaDouble, WithoutCublasTheBackendStaysAvailable) {
  const std::string dir = fake_folder(tmp_, "no_cublas", {"libcuda.so.1", "libnvrtc.so.13"});
  auto b = cuda_backend(dir, "");
  ASSERT_TRUE(b.is_object()) << last_output_;
  ASSERT_TRUE(b["available"].get<bool>()) << b.dump();
  const std::string version = b["version"], t = tried(b);
  EXPECT_NE(version.find("no cuBLAS"), std::string::npos) << version;
  EXPECT_NE(version.find("pip install nvidia-cublas"), std::string::npos) << version;
  EXPECT_NE(t.find("no libcublas.so* there"), std::string::npos) << t;

  // A cuBLAS newer than the driver is passed over the same way.
  const std::string all = fake_folder(tmp_, "all", kAll);
  b = cuda_backend(all, "DLRT_FAKE_CUDA_DRIVER_VERSION=12080 DLRT_FAKE_NVRTC_VERSION=12.8");
  ASSERT_TRUE(b["available"].get<bool>()) << b.dump();
  EXPECT_NE(b["version"].get<std::string>().find("no cuBLAS"), std::string::npos) << b.dump();
  EXPECT_NE(tried(b).find("cuBLAS 13 needs a CUDA 13 driver"), std::string::npos) << tried(b);
}

TEST_F(CudaDouble, DriverFailuresAreReasons) {
  const std::string dir = fake_folder(tmp_, "all", kAll);
  auto b = cuda_backend(dir, "DLRT_FAKE_CUDA_FAIL=init");
  ASSERT_TRUE(b.is_object()) << last_output_;
  EXPECT_FALSE(b["available"].get<bool>());
  EXPECT_NE(b["reason"].get<std::string>().find("cuInit(0)"), std::string::npos) << b.dump();
  EXPECT_NE(b["reason"].get<std::string>().find("CUDA_ERROR_SYSTEM_DRIVER_MISMATCH"), std::string::npos) << b.dump();
  EXPECT_NE(b["fix"].get<std::string>().find("reinstall the driver"), std::string::npos) << b.dump();

  b = cuda_backend(dir, "DLRT_FAKE_CUDA_DEVICES=0");
  EXPECT_FALSE(b["available"].get<bool>());
  EXPECT_NE(b["reason"].get<std::string>().find("reports no device"), std::string::npos) << b.dump();
  EXPECT_NE(b["fix"].get<std::string>().find("nvidia-smi"), std::string::npos) << b.dump();
}

// ---- Devices ----

TEST_F(CudaDouble, DevicesListEachGpuWithItsMetadata) {
  const std::string dir = fake_folder(tmp_, "all", kAll);
  nlohmann::json all;
  auto b = cuda_backend(dir, "DLRT_FAKE_CUDA_DEVICES=2 DLRT_FAKE_CUDA_CC=8.6 DLRT_FAKE_CUDA_MEMORY_MB=24576", &all);
  ASSERT_TRUE(b.is_object()) << last_output_;
  ASSERT_TRUE(b["available"].get<bool>()) << b.dump();
  EXPECT_NE(b["library_path"].get<std::string>().find("libcuda.so.1"), std::string::npos) << b.dump();
  EXPECT_NE(b["version"].get<std::string>().find("CUDA 13.0 driver, NVRTC 13.0, cuBLAS 13"), std::string::npos)
      << b.dump();
  std::vector<nlohmann::json> devs;
  for (const auto& d : all["backend_devices"])
    if (d["backend"] == "cuda") devs.push_back(d);
  ASSERT_EQ(devs.size(), 2u) << all.dump(1);
  EXPECT_EQ(devs[0]["spec"], "cuda:0");
  EXPECT_EQ(devs[1]["spec"], "cuda:1");
  EXPECT_EQ(devs[0]["type"], "gpu");
  const auto& m = devs[0]["metadata"];
  EXPECT_EQ(m["device_name"], "NVIDIA Fake GPU");
  EXPECT_EQ(devs[1]["metadata"]["device_name"], "NVIDIA Fake GPU #1");
  EXPECT_EQ(m["compute_capability"], "8.6");
  EXPECT_EQ(m["memory_bytes"], std::to_string(24576ull << 20));
  EXPECT_EQ(m["driver_version"], "13.0");
  EXPECT_EQ(m["driver_version_int"], "13000");
  EXPECT_EQ(m["multiprocessors"], "132");
  EXPECT_EQ(m["pci_bus_id"], "0000:41:00.0") << "the driver's upper-case id, spelled as sysfs does";
  EXPECT_EQ(devs[1]["metadata"]["pci_bus_id"], "0000:42:00.0");
  EXPECT_EQ(m["uuid"], "GPU-01020304-0506-0708-090a-0b0c0d0e0f10");
  EXPECT_EQ(m["discovered_by"], "cuda") << "no PCI device of this machine has that bus id";

  // The text listing shows the same device.
  auto r = run_command(dlrt(dir, "", "devices"));
  EXPECT_NE(r.output.find("cuda:0"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("compute_capability=9.0"), std::string::npos) << r.output;
}

TEST_F(CudaDouble, DevicesAreMatchedToSysfsByPciBusId) {
  testing::FakeTree tree;
  ASSERT_FALSE(tree.root().empty());
  tree.add_pci("0000:41:00.0", "0x10de", "0x2330", "0x030200", "nvidia");
  tree.write("sys/module/nvidia/version", "580.65.06\n");
  const std::string dir = fake_folder(tmp_, "all", kAll);
  nlohmann::json all;
  cuda_backend(dir, "", &all, "--root " + quote(tree.root()));
  ASSERT_TRUE(all.is_object()) << last_output_;
  std::string hw_id;
  for (const auto& h : all["hardware"])
    if (h["metadata"].value("pci_bus_id", "") == "0000:41:00.0") hw_id = h["id"];
  ASSERT_FALSE(hw_id.empty()) << all.dump(1);
  bool found = false;
  for (const auto& d : all["backend_devices"]) {
    if (d["spec"] != "cuda:0") continue;
    found = true;
    EXPECT_EQ(d["hardware"], hw_id) << d.dump();
    EXPECT_EQ(d["metadata"]["discovered_by"], "sysfs") << d.dump();
    EXPECT_EQ(d["metadata"]["kernel_driver_version"], "580.65.06") << d.dump();
    EXPECT_EQ(d["metadata"]["driver_version"], "13.0") << d.dump();
  }
  EXPECT_TRUE(found) << all.dump(1);
}

TEST_F(CudaDouble, GpuSpecPrefersCudaAndOpenClStaysSelectable) {
  const std::string dir = fake_folder(tmp_, "all", kAll);
  auto plan = [&](const std::string& device) {
    auto r = run_command(dlrt(dir, "", "inspect " + quote(model("mlp.onnx")) + " --device " + device + " --json"));
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return json_in_output(r.output);
  };
  auto j = plan("gpu");
  ASSERT_TRUE(j.is_object() && j.contains("placement")) << last_output_;
  ASSERT_GE(j["placement"].size(), 1u) << j.dump(1);
  EXPECT_EQ(j["placement"][0]["backend"], "cuda") << j.dump(1);
  EXPECT_EQ(j["placement"][0]["device"], "cuda:0") << j.dump(1);
  j = plan("cuda:0");
  EXPECT_EQ(j["placement"][0]["device"], "cuda:0") << j.dump(1);
  // opencl stays selectable by name where this machine has an OpenCL device.
  auto b = run_command(dlrt(dir, "", "devices --json"));
  auto dj = json_in_output(b.output);
  bool have_opencl = false;
  for (const auto& d : dj["backend_devices"]) have_opencl |= d["spec"] == "opencl:0";
  if (have_opencl) {
    j = plan("opencl:0");
    EXPECT_EQ(j["placement"][0]["device"], "opencl:0") << j.dump(1);
  }
}

// ---- Fallback and strict mode ----

TEST_F(CudaDouble, FallsBackToCpuWithTheReason) {
  const std::string dir = fake_folder(tmp_, "all", kAll);
  struct Case {
    std::string extra, reason_has;
  };
  for (const Case& c : {Case{"DLRT_FAKE_CUDA_FAIL=init", "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH"},
                        Case{"DLRT_FAKE_CUDA_DEVICES=0", "no device"},
                        Case{"DLRT_FAKE_CUDA_FAIL=context", "CUDA_ERROR_INVALID_CONTEXT"},
                        Case{"DLRT_FAKE_CUDA_FAIL=nvrtc", "NVRTC_ERROR_COMPILATION"},
                        Case{"DLRT_FAKE_CUDA_FAIL=module", "CUDA_ERROR_INVALID_IMAGE"},
                        Case{"DLRT_FAKE_CUDA_FAIL=oom", "CUDA_ERROR_OUT_OF_MEMORY"},
                        Case{"DLRT_FAKE_CUDA_FAIL=launch", "CUDA_ERROR_LAUNCH_FAILED"},
                        Case{"DLRT_FAKE_CUDA_FAIL=sync", "CUDA_ERROR_LAUNCH_FAILED"}}) {
    SCOPED_TRACE(c.extra);
    auto j = run_mlp(dir, c.extra, "cuda");
    ASSERT_TRUE(j.is_object()) << last_output_;
    ASSERT_GE(j["report"].size(), 1u) << last_output_;
    EXPECT_EQ(j["report"][0]["backend"], "cpu") << last_output_;
    EXPECT_TRUE(j["report"][0]["degraded"].get<bool>()) << last_output_;
    const std::string reason = j["report"][0]["reason"].get<std::string>();
    EXPECT_NE(reason.find(c.reason_has), std::string::npos) << reason;
  }
}

TEST_F(CudaDouble, StrictModeTurnsEachFailureIntoAnError) {
  const std::string dir = fake_folder(tmp_, "all", kAll);
  // Failures before the first run: session create fails, exit 4 (device unavailable).
  for (const std::string extra : {"DLRT_FAKE_CUDA_FAIL=init", "DLRT_FAKE_CUDA_DEVICES=0", "DLRT_FAKE_CUDA_FAIL=context",
                                  "DLRT_FAKE_CUDA_FAIL=nvrtc", "DLRT_FAKE_CUDA_FAIL=module"}) {
    SCOPED_TRACE(extra);
    run_mlp(dir, extra, "cuda --strict", 4);
    EXPECT_NE(last_output_.find("strict"), std::string::npos) << last_output_;
  }
  {
    auto r = run_command(dlrt((tmp_ / "absent").string(), "", "run " + quote(model("mlp.onnx")) +
                                                                  " --device cuda --strict --input x=" +
                                                                  quote(model("mlp_input.npy"))));
    EXPECT_EQ(r.exit_code, 4) << r.output;
  }
  // Failures inside a run fail that run (a BackendError: exit 1), never a CPU
  // result. Memory runs out at init (exit 4) or when a run plans its buffers
  // (exit 1), depending on what the executable allocates up front.
  struct Case {
    std::string extra;
    std::vector<int> exits;
  };
  for (const Case& c : {Case{"DLRT_FAKE_CUDA_FAIL=launch", {1}}, Case{"DLRT_FAKE_CUDA_FAIL=sync", {1}},
                        Case{"DLRT_FAKE_CUDA_FAIL=oom", {1, 4}}}) {
    SCOPED_TRACE(c.extra);
    auto r = run_command(dlrt(dir, c.extra, "run " + quote(model("mlp.onnx")) + " --device cuda --strict --input x=" +
                                                quote(model("mlp_input.npy"))));
    EXPECT_FALSE(r.signaled) << r.output;
    EXPECT_NE(std::find(c.exits.begin(), c.exits.end(), r.exit_code), c.exits.end()) << r.exit_code << "\n" << r.output;
    EXPECT_NE(r.output.find("strict"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("CUDA_ERROR_"), std::string::npos) << r.output;
  }
}

TEST_F(CudaDouble, ARunOnTheFakeGpuIsReportedAndFreesWhatItMade) {
  const std::string dir = fake_folder(tmp_, "all", kAll);
  const fs::path stats = tmp_ / "stats";
  auto j = run_mlp(dir, "DLRT_FAKE_CUDA_STATS=" + quote(stats.string()), "cuda --strict", 0, /*expect_cpu=*/false);
  ASSERT_TRUE(j.is_object()) << last_output_;
  ASSERT_GE(j["report"].size(), 1u) << last_output_;
  EXPECT_EQ(j["report"][0]["backend"], "cuda") << last_output_;
  EXPECT_EQ(j["report"][0]["device"], "cuda:0") << last_output_;
  EXPECT_FALSE(j["report"][0]["degraded"].get<bool>()) << last_output_;
  auto st = read_stats(stats);
  EXPECT_EQ(st["driver.loaded"], 1) << "stats file: " << stats;
  EXPECT_GE(st["contexts_retained"], 1);
  EXPECT_GE(st["module_loads"], 1);
  EXPECT_GE(st["compiles"], 1) << "NVRTC compiled the kernels";
  EXPECT_GT(st["launches"] + st["gemms"], 0) << "the partition ran something on the device";
  EXPECT_EQ(st["allocs"], st["frees"]) << "every device buffer was freed by session end";
  EXPECT_EQ(st["streams_created"], st["streams_destroyed"]);
  EXPECT_EQ(st["cublas_handles"], st["cublas_handles_destroyed"]);
}

// ---- In a child process ----

testing::CommandResult run_child(const std::string& test, const std::string& env) {
  char self[4096];
  ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return {};
  self[n] = '\0';
  return run_command(env + " DLRT_CUDA_DOUBLE_CHILD=1 " + quote(self) + " --gtest_filter=" + quote("CudaDoubleChild." + test));
}

bool in_child() {
  const char* c = std::getenv("DLRT_CUDA_DOUBLE_CHILD");
  return c && std::string(c) == "1";
}

// Set by the parent: CHILD_EMPTY (a folder without libraries) and CHILD_FAKE (the fake's folder).
std::string child_var(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

TEST(CudaDoubleChild, RefreshAfterFixingThePath) {
  if (!in_child()) GTEST_SKIP() << "runs in a child process of CudaDouble.RefreshAfterFixingThePath";
  ASSERT_EQ(::setenv("DLRT_CUDA_LIB_PATH", child_var("CHILD_EMPTY").c_str(), 1), 0);
  cuda::CudaRuntime rt;
  backend::Availability a = rt.availability();
  ASSERT_FALSE(a.available);
  EXPECT_NE(a.reason.find("libcuda"), std::string::npos) << a.reason;
  EXPECT_TRUE(rt.devices().empty());
  EXPECT_FALSE(rt.context(0).ok());
  // Fixed, but the failure is kept until asked to look again.
  ASSERT_EQ(::setenv("DLRT_CUDA_LIB_PATH", child_var("CHILD_FAKE").c_str(), 1), 0);
  EXPECT_FALSE(rt.availability().available);
  a = rt.availability(/*refresh=*/true);
  ASSERT_TRUE(a.available) << a.reason;
  EXPECT_EQ(rt.devices().size(), 1u);
  EXPECT_TRUE(rt.api().has_cublas);
  EXPECT_EQ(rt.api().driver_version, 13000);
  // A success is final: pointing elsewhere changes nothing.
  ASSERT_EQ(::setenv("DLRT_CUDA_LIB_PATH", child_var("CHILD_EMPTY").c_str(), 1), 0);
  EXPECT_TRUE(rt.availability(/*refresh=*/true).available);
  auto ctx = rt.context(0);
  ASSERT_TRUE(ctx.ok()) << ctx.status().to_string();
  EXPECT_NE((*ctx)->context, nullptr);
  EXPECT_NE((*ctx)->module, nullptr);
  EXPECT_EQ((*ctx)->info.pci_bus_id, "0000:41:00.0");
  auto again = rt.context(0);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(ctx->get(), again->get()) << "one context per device per process";
  EXPECT_FALSE(rt.context(1).ok());
  std::string err = cuda::cu_error(rt.api(), cuda::CUDA_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(err, "CUDA_ERROR_OUT_OF_MEMORY (2): out of memory");
}

TEST_F(CudaDouble, RefreshAfterFixingThePath) {
  const fs::path empty = tmp_ / "empty";
  fs::create_directories(empty);
  const std::string fake = fake_folder(tmp_, "all", kAll);
  auto r = run_child("RefreshAfterFixingThePath", cuda_env("", tmp_, "CHILD_EMPTY=" + quote(empty.string()) +
                                                                        " CHILD_FAKE=" + quote(fake)));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("[  PASSED  ] 1 test"), std::string::npos) << r.output;
}

// A Session through the public API: not strict, a failing launch gives the CPU's
// outputs and a report that says why; strict, the same run is an error.
TEST(CudaDoubleChild, SessionFallsBackOrFailsWhenStrict) {
  if (!in_child()) GTEST_SKIP() << "runs in a child process of CudaDouble.SessionFallsBackOrFailsWhenStrict";
  std::string err;
  const std::string models = testing::test_models_dir(&err);
  ASSERT_FALSE(models.empty()) << err;
  auto x = read_npy_file(models + "/mlp_input.npy");
  auto want = read_npy_file(models + "/mlp_expected.npy");
  ASSERT_TRUE(x.ok() && want.ok());
  std::map<std::string, Tensor> feeds{{"x", *x}};
  {
    SessionOptions o;
    o.device = "cuda";
    auto s = Session::create(models + "/mlp.onnx", o);
    ASSERT_TRUE(s.ok()) << s.status().to_string();
    for (int i = 0; i < 3; ++i) {
      RunReport rep;
      auto y = (*s)->run(feeds, &rep);
      ASSERT_TRUE(y.ok()) << y.status().to_string();
      EXPECT_TRUE(close_to((*y)[0], *want));
      ASSERT_FALSE(rep.partitions.empty());
      EXPECT_EQ(rep.partitions[0].backend, "cpu");
      EXPECT_TRUE(rep.partitions[0].degraded);
      EXPECT_NE(rep.partitions[0].reason.find("CUDA_ERROR_LAUNCH_FAILED"), std::string::npos) << rep.partitions[0].reason;
    }
  }
  {
    SessionOptions o;
    o.device = "cuda";
    o.strict = true;
    auto s = Session::create(models + "/mlp.onnx", o);
    ASSERT_TRUE(s.ok()) << s.status().to_string();
    auto y = (*s)->run(feeds, nullptr);
    ASSERT_FALSE(y.ok());
    EXPECT_NE(y.status().message().find("strict"), std::string::npos) << y.status().to_string();
    EXPECT_NE(y.status().message().find("CUDA_ERROR_LAUNCH_FAILED"), std::string::npos) << y.status().to_string();
  }
}

// Concurrent callers of one session each get a stream of their own (up to the
// backend's limit) and share the model's constants on the device.
TEST(CudaDoubleChild, ConcurrentCallersGetStreamsOfTheirOwn) {
  if (!in_child()) GTEST_SKIP() << "runs in a child process of CudaDouble.ConcurrentCallersGetStreamsOfTheirOwn";
  std::string err;
  const std::string models = testing::test_models_dir(&err);
  ASSERT_FALSE(models.empty()) << err;
  auto x = read_npy_file(models + "/mlp_input.npy");
  ASSERT_TRUE(x.ok());
  {
    SessionOptions o;
    o.device = "cuda";
    o.strict = true;
    auto s = Session::create(models + "/mlp.onnx", o);
    ASSERT_TRUE(s.ok()) << s.status().to_string();
    constexpr int kThreads = 6, kRuns = 5;
    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back([&] {
        std::map<std::string, Tensor> feeds{{"x", *x}};
        for (int i = 0; i < kRuns; ++i) {
          RunReport rep;
          auto y = (*s)->run(feeds, &rep);
          if (!y.ok() || rep.partitions.empty() || rep.partitions[0].backend != "cuda") ++failures;
        }
      });
    for (auto& t : threads) t.join();
    EXPECT_EQ(failures.load(), 0);
  }
}

TEST_F(CudaDouble, ConcurrentCallersGetStreamsOfTheirOwn) {
  const std::string fake = fake_folder(tmp_, "all", kAll);
  const fs::path stats = tmp_ / "stats";
  auto r = run_child("ConcurrentCallersGetStreamsOfTheirOwn",
                     cuda_env(fake, tmp_, "DLRT_FAKE_CUDA_SYNC_US=20000 DLRT_FAKE_CUDA_STATS=" + quote(stats.string())));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("[  PASSED  ] 1 test"), std::string::npos) << r.output;
  auto st = read_stats(stats);
  // Six callers, each run holding its stream ~40 ms (two synchronisations):
  // more than one executor, never more than the limit of four.
  EXPECT_GE(st["cublas_handles"], 2) << "callers overlapped but shared one stream";
  EXPECT_LE(st["cublas_handles"], cuda::CudaExecutable::kMaxStreams);
  EXPECT_EQ(st["streams_created"], st["streams_destroyed"]);
  EXPECT_EQ(st["cublas_handles"], st["cublas_handles_destroyed"]);
  EXPECT_EQ(st["allocs"], st["frees"]) << "every device buffer, the shared constants included, was freed";
}

TEST_F(CudaDouble, SessionFallsBackOrFailsWhenStrict) {
  const std::string fake = fake_folder(tmp_, "all", kAll);
  auto r = run_child("SessionFallsBackOrFailsWhenStrict", cuda_env(fake, tmp_, "DLRT_FAKE_CUDA_FAIL=launch"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("[  PASSED  ] 1 test"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace dlrt
