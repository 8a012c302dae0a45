// The OpenVINO backend driven against the conformance double
// (tests/openvino_double/ov_double.cpp, built as libopenvino_c.so into
// build/tests/ov_double/): an NPU the machine does not have, fallbacks, strict
// mode, the infer-request pool under 8 callers, warm start during a slow
// compile, ahead-of-time compile for a virtual NPU, and the zoo models.
//
// Scenarios that need a process of their own (the backend loads its library
// once per process) re-run this binary with one OvDoubleChild test selected
// and the double's switches in the environment; the children skip otherwise.
#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "../backends/double_test_util.h"
#include "../tools/cli_test_util.h"
#include "backend/dynamic_library.h"
#include "backend/registry.h"
#include "backends/openvino/ov_api.h"
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

const std::string kDoubleDir = DLRT_OV_DOUBLE_DIR;
const std::string kNosymDir = DLRT_OV_DOUBLE_NOSYM_DIR;

bool have_openvino_backend() { return dlrt::global_backends().find("openvino") != nullptr; }

fs::path temp_dir(const std::string& tag) {
  fs::path p = fs::temp_directory_path() / ("dlrt_ovd_" + tag + "_" + std::to_string(::getpid()));
  fs::remove_all(p);
  fs::create_directories(p);
  return p;
}

// An environment in which only `lib_dir` can provide OpenVINO: no python3
// query, no venvs, a HOME without ~/.local, the blob cache off, and the double
// (whose version, 2025.1.0, dlrt was not tested with) trusted without the
// compatibility check, except where `extra` asks for it.
std::string ov_env(const std::string& lib_dir, const fs::path& home, const std::string& extra = "") {
  return "env -u VIRTUAL_ENV -u CONDA_PREFIX -u DLRT_DEVICE -u DLRT_STRICT -u LD_LIBRARY_PATH HOME=" + quote(home.string()) +
         " OPENVINO_LIB_PATH=" + quote(lib_dir) + " DLRT_OPENVINO_NO_PYTHON=1 DLRT_CACHE=0 DLRT_CANARY=skip " + extra +
         " ";
}

std::map<std::string, long> read_stats(const fs::path& file) {
  std::map<std::string, long> m;
  std::ifstream f(file);
  std::string line;
  while (std::getline(f, line)) {
    auto eq = line.find('=');
    if (eq != std::string::npos) m[line.substr(0, eq)] = std::atol(line.c_str() + eq + 1);
  }
  return m;
}

class OvDouble : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(kDoubleDir + "/libopenvino_c.so")) GTEST_SKIP() << "the double was not built: " << kDoubleDir;
    std::string err;
    models_ = testing::test_models_dir(&err);
    if (models_.empty()) GTEST_SKIP() << err;
    tmp_ = temp_dir(::testing::UnitTest::GetInstance()->current_test_info()->name());
  }
  void TearDown() override {
    std::error_code ec;
    if (!tmp_.empty()) fs::remove_all(tmp_, ec);
  }
  bool need_cli_and_backend() {
    if (!fs::exists(testing::dlrt_binary())) return false;
    return have_openvino_backend();
  }
  std::string model(const std::string& name) const { return (fs::path(models_) / name).string(); }
  std::string dlrt(const std::string& lib_dir, const std::string& extra, const std::string& args) const {
    return ov_env(lib_dir, tmp_, extra) + quote(testing::dlrt_binary()) + " " + args;
  }
  // dlrt run of mlp.onnx with its sample input; returns the JSON, checks the output.
  nlohmann::json run_mlp(const std::string& lib_dir, const std::string& extra, const std::string& device,
                         int expect_exit = 0, const std::string& model_file = "") {
    const std::string out = (tmp_ / ("o" + std::to_string(runs_++))).string();
    auto r = run_command(dlrt(lib_dir, extra,
                              "run " + quote(model_file.empty() ? model("mlp.onnx") : model_file) + " --device " + device +
                                  " --json --input x=" + quote(model("mlp_input.npy")) + " --output-dir " + quote(out)));
    last_output_ = r.output;
    return check_mlp_run(r, out, models_, expect_exit, /*check_values=*/true);
  }

  std::string models_;
  fs::path tmp_;
  int runs_ = 0;
  std::string last_output_;
};

#define REQUIRE_BACKEND()                                                                                   \
  do {                                                                                                      \
    if (!fs::exists(testing::dlrt_binary())) GTEST_SKIP() << testing::dlrt_binary() << " is missing";      \
    if (!have_openvino_backend()) GTEST_SKIP() << "this build has no openvino backend (src/backends/openvino)"; \
  } while (0)

// ---- The library itself ----

TEST_F(OvDouble, ExportsEveryBackendSymbolAndNothingElse) {
  auto lib = backend::DynamicLibrary::open_file(kDoubleDir + "/libopenvino_c.so");
  ASSERT_TRUE(lib.ok()) << lib.status().to_string();
  backend::openvino::OvVersionSymbols v;
  backend::openvino::OvSymbols s;
  backend::openvino::OvOptionalSymbols o;
  EXPECT_TRUE(v.resolve(**lib).ok());
  EXPECT_TRUE(s.resolve(**lib).ok());
  EXPECT_TRUE(o.resolve(**lib).ok());

  auto nm = run_command("nm -D --defined-only " + quote(kDoubleDir + "/libopenvino_c.so"));
  ASSERT_EQ(nm.exit_code, 0) << nm.output;
  std::istringstream lines(nm.output);
  int exported = 0;
  for (std::string line; std::getline(lines, line);) {
    std::string sym = line.substr(line.find_last_of(' ') + 1);
    if (sym.empty() || line.find(" T ") == std::string::npos) continue;
    EXPECT_EQ(sym.rfind("ov_", 0), 0u) << "the double exports " << sym;
    ++exported;
  }
  EXPECT_EQ(exported, static_cast<int>(backend::openvino::OvVersionSymbols::symbol_names().size() +
                                       backend::openvino::OvSymbols::symbol_names().size() +
                                       backend::openvino::OvOptionalSymbols::symbol_names().size()))
      << nm.output;

  auto nosym = backend::DynamicLibrary::open_file(kNosymDir + "/libopenvino_c.so");
  ASSERT_TRUE(nosym.ok()) << nosym.status().to_string();
  backend::openvino::OvSymbols s2;
  Status st = s2.resolve(**nosym);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("ov_core_import_model"), std::string::npos) << st.to_string();
}

TEST_F(OvDouble, VersionSwitchChangesTheElementNumbering) {
  auto lib = backend::DynamicLibrary::open_file(kDoubleDir + "/libopenvino_c.so");
  ASSERT_TRUE(lib.ok());
  backend::openvino::OvVersionSymbols v;
  backend::openvino::OvSymbols s;
  ASSERT_TRUE(v.resolve(**lib).ok() && s.resolve(**lib).ok());
  using backend::openvino::OvNumbering;
  using backend::openvino::OvType;
  using backend::openvino::ov_element_code;
  auto version = [&] {
    ov_version_t ver{};
    EXPECT_EQ(v.ov_get_openvino_version(&ver), OV_STATUS_OK);
    std::string b = ver.buildNumber ? ver.buildNumber : "";
    v.ov_version_free(&ver);
    return b;
  };
  auto bytes_of = [&](ov_element_type_e code) -> long {  // byte size of a [3] tensor, -1 when refused
    int64_t dims[1] = {3};
    ov_shape_t shape{};
    EXPECT_EQ(s.ov_shape_create(1, dims, &shape), OV_STATUS_OK);
    ov_tensor_t* t = nullptr;
    long n = -1;
    if (s.ov_tensor_create(code, shape, &t) == OV_STATUS_OK) {
      size_t b = 0;
      EXPECT_EQ(s.ov_tensor_get_byte_size(t, &b), OV_STATUS_OK);
      n = static_cast<long>(b);
      s.ov_tensor_free(t);
    }
    s.ov_shape_free(&shape);
    return n;
  };
  unsetenv("OV_DOUBLE_VERSION");
  EXPECT_EQ(version().rfind("2025.", 0), 0u);
  EXPECT_EQ(bytes_of(ov_element_code(OvNumbering::k2025, OvType::kF32)), 12);
  EXPECT_EQ(bytes_of(ov_element_code(OvNumbering::k2025, OvType::kI64)), 24);
  setenv("OV_DOUBLE_VERSION", "2024", 1);
  EXPECT_EQ(version().rfind("2024.", 0), 0u);
  EXPECT_EQ(bytes_of(ov_element_code(OvNumbering::k2024, OvType::kF32)), 12);
  EXPECT_EQ(bytes_of(ov_element_code(OvNumbering::k2024, OvType::kF16)), 6);
  EXPECT_EQ(bytes_of(ov_element_code(OvNumbering::k2025, OvType::kF32)), 6) << "2025's F32 code is F16 in 2024";
  unsetenv("OV_DOUBLE_VERSION");

  // Devices and properties the backend asks for.
  ov_core_t* core = nullptr;
  ASSERT_EQ(s.ov_core_create(&core), OV_STATUS_OK);
  ov_available_devices_t devs{};
  ASSERT_EQ(s.ov_core_get_available_devices(core, &devs), OV_STATUS_OK);
  std::vector<std::string> names;
  for (size_t i = 0; i < devs.size; ++i) names.push_back(devs.devices[i]);
  s.ov_available_devices_free(&devs);
  EXPECT_EQ(names, (std::vector<std::string>{"CPU", "NPU"}));
  char* value = nullptr;
  ASSERT_EQ(s.ov_core_get_property(core, "NPU", "FULL_DEVICE_NAME", &value), OV_STATUS_OK);
  EXPECT_NE(std::string(value).find("AI Boost"), std::string::npos);
  s.ov_free(value);
  EXPECT_EQ(s.ov_core_get_property(core, "NPU", "NO_SUCH_PROPERTY", &value), OV_STATUS_NOT_FOUND);
  setenv("OV_DOUBLE_NO_NPU", "1", 1);
  ASSERT_EQ(s.ov_core_get_available_devices(core, &devs), OV_STATUS_OK);
  EXPECT_EQ(devs.size, 1u);
  s.ov_available_devices_free(&devs);
  unsetenv("OV_DOUBLE_NO_NPU");
  s.ov_core_free(core);
}

// ---- The backend through the CLI ----

TEST_F(OvDouble, RunOnTheNpuThroughTheBackend) {
  REQUIRE_BACKEND();
  const fs::path stats = tmp_ / "stats";
  auto j = run_mlp(kDoubleDir, "OV_DOUBLE_STATS=" + quote(stats.string()), "openvino:NPU");
  ASSERT_TRUE(j.is_object()) << last_output_;
  ASSERT_EQ(j["report"].size(), 1u) << last_output_;
  EXPECT_EQ(j["report"][0]["backend"], "openvino") << last_output_;
  EXPECT_EQ(j["report"][0]["device"], "openvino:NPU") << last_output_;
  EXPECT_FALSE(j["report"][0]["degraded"].get<bool>()) << last_output_;
  auto st = read_stats(stats);
  EXPECT_EQ(st["cores"], 1);
  EXPECT_GE(st["compiles"], 1);
  EXPECT_GE(st["infers"], 1);

  // The 2024 numbering: the double refuses tensors of the wrong element type, so this only
  // passes when the backend picked the 2024 table.
  j = run_mlp(kDoubleDir, "OV_DOUBLE_VERSION=2024", "openvino:NPU");
  ASSERT_TRUE(j.is_object()) << last_output_;
  EXPECT_EQ(j["report"][0]["backend"], "openvino") << last_output_;
  EXPECT_FALSE(j["report"][0]["degraded"].get<bool>()) << last_output_;
}

// OpenVINO 2026.x imports without copying: the compiled model reads the bytes it was imported
// from on every infer. The backend must keep them for the executable's lifetime, so that runs
// after session create (which frees the blob) still see them. The double fails an infer whose
// imported bytes changed, and glibc's MALLOC_PERTURB_ fills freed memory (blocks past the
// per-thread cache's 1 KiB: conv_net's blob is about 7 KiB), so bytes freed too early change;
// in strict mode the run would then exit 4.
TEST_F(OvDouble, ImportedBytesLiveAsLongAsTheCompiledModel) {
  REQUIRE_BACKEND();
  for (const char* device : {"openvino:NPU", "openvino:CPU"}) {
    SCOPED_TRACE(device);
    auto r = run_command(dlrt(kDoubleDir, "OV_DOUBLE_IMPORT_ZERO_COPY=1 MALLOC_PERTURB_=165 DLRT_STRICT=1",
                              "run " + quote(model("conv_net.onnx")) + " --device " + device + " --json"));
    EXPECT_FALSE(r.signaled) << r.output;
    ASSERT_EQ(r.exit_code, 0) << r.output;
    auto j = json_in_output(r.output);
    ASSERT_TRUE(j.is_object()) << r.output;
    EXPECT_EQ(j["report"][0]["backend"], "openvino") << r.output;
    EXPECT_FALSE(j["report"][0]["degraded"].get<bool>()) << r.output;
  }
}

// ---- The compatibility check of a release dlrt was not tested with ----

// `dlrt devices --json`'s entry for the openvino backend.
nlohmann::json openvino_entry(const std::string& output) {
  auto j = json_in_output(output);
  if (!j.is_object()) return nlohmann::json();
  for (const auto& b : j["backends"])
    if (b["name"] == "openvino") return b;
  return nlohmann::json();
}

constexpr const char* kUntested = "OV_DOUBLE_VERSION_STRING=2026.9.0-double DLRT_CANARY=auto";

// A release that crashes, hangs or computes wrong values in the check is unavailable with the
// reason; the parent survives, runs on the cpu and says why, and strict mode exits 4.
TEST_F(OvDouble, CanaryRejectsAReleaseThatCrashesHangsOrIsWrong) {
  REQUIRE_BACKEND();
  struct Case {
    std::string mode, reason_has;
  };
  for (const Case& c : {Case{"OV_DOUBLE_INFER_CRASH=1", "SEGV"}, Case{"OV_DOUBLE_INFER_HANG=1", "hung"},
                        Case{"OV_DOUBLE_INFER_WRONG=1", "differs from dlrt's CPU backend"}}) {
    SCOPED_TRACE(c.mode);
    const std::string extra = std::string(kUntested) + " DLRT_CANARY_TIMEOUT_S=3 " + c.mode;
    auto r = run_command(dlrt(kDoubleDir, extra, "devices --json"));
    EXPECT_FALSE(r.signaled) << r.output;
    ASSERT_EQ(r.exit_code, 0) << r.output;
    auto e = openvino_entry(r.output);
    ASSERT_TRUE(e.is_object()) << r.output;
    EXPECT_FALSE(e["available"].get<bool>()) << e.dump();
    const std::string reason = e.value("reason", "");
    EXPECT_NE(reason.find("OpenVINO 2026.9.0-double failed dlrt's compatibility check"), std::string::npos) << reason;
    EXPECT_NE(reason.find(c.reason_has), std::string::npos) << reason;
    EXPECT_NE(e.value("fix", "").find("DLRT_CANARY=recheck"), std::string::npos) << e.dump();

    // A run falls back to the cpu with the reason; strict mode exits 4.
    auto j = run_mlp(kDoubleDir, extra, "openvino:NPU");
    ASSERT_TRUE(j.is_object()) << last_output_;
    EXPECT_EQ(j["report"][0]["backend"], "cpu") << last_output_;
    EXPECT_TRUE(j["report"][0]["degraded"].get<bool>()) << last_output_;
    EXPECT_NE(j["report"][0]["reason"].get<std::string>().find("compatibility check"), std::string::npos)
        << last_output_;
    run_mlp(kDoubleDir, extra + " DLRT_STRICT=1", "openvino:NPU", 4);
  }
}

// A release that passes is used, and the verdict is kept per version in the cache folder:
// read back by the next process, checked again on DLRT_CANARY=recheck, not checked on skip;
// a tested release is never checked.
TEST_F(OvDouble, CanaryVerdictIsCachedPerRelease) {
  REQUIRE_BACKEND();
  const fs::path cache = tmp_ / "canary_cache";
  const std::string with_cache = std::string(kUntested) + " DLRT_CACHE=1 DLRT_CACHE_DIR=" + quote(cache.string());
  auto compatibility = [&](const std::string& extra) {
    auto r = run_command(dlrt(kDoubleDir, extra, "devices --json"));
    EXPECT_EQ(r.exit_code, 0) << r.output;
    auto e = openvino_entry(r.output);
    EXPECT_TRUE(e.is_object() && e["available"].get<bool>()) << r.output;
    return e.is_object() ? e.value("compatibility", "") : std::string();
  };
  std::string first = compatibility(with_cache);
  EXPECT_EQ(first.rfind("passed dlrt's compatibility check", 0), 0u) << first;
  EXPECT_EQ(first.find("cached"), std::string::npos) << first;
  int verdicts = 0;
  for (const auto& f : fs::directory_iterator(cache / "canary")) verdicts += f.path().extension() == ".verdict";
  EXPECT_EQ(verdicts, 1);
  std::string second = compatibility(with_cache);
  EXPECT_NE(second.find("cached"), std::string::npos) << second;
  // A cached pass is trusted as it is: a now-crashing library is not checked again...
  EXPECT_NE(compatibility(with_cache + " OV_DOUBLE_INFER_CRASH=1").find("cached"), std::string::npos);
  // ... unless asked to.
  auto r = run_command(dlrt(kDoubleDir, with_cache + " DLRT_CANARY=recheck OV_DOUBLE_INFER_CRASH=1", "devices --json"));
  auto e = openvino_entry(r.output);
  ASSERT_TRUE(e.is_object()) << r.output;
  EXPECT_FALSE(e["available"].get<bool>()) << r.output;
  EXPECT_EQ(compatibility(std::string(kUntested) + " DLRT_CANARY=skip"), "not checked (DLRT_CANARY=skip)");
  EXPECT_EQ(compatibility("OV_DOUBLE_VERSION_STRING=2025.4.1-double DLRT_CANARY=auto"), "tested release");
  // The run itself goes to the device once the check passed.
  auto j = run_mlp(kDoubleDir, std::string(kUntested) + " DLRT_STRICT=1", "openvino:NPU");
  ASSERT_TRUE(j.is_object()) << last_output_;
  EXPECT_EQ(j["report"][0]["backend"], "openvino") << last_output_;
}

TEST_F(OvDouble, FallsBackToCpuWithTheReason) {
  REQUIRE_BACKEND();
  struct Case {
    std::string lib, extra, reason_has;
  };
  for (const Case& c : {Case{(tmp_ / "absent").string(), "", "openvino"},
                        Case{kNosymDir, "", "ov_core_import_model"},
                        Case{kDoubleDir, "OV_DOUBLE_NO_NPU=1", "NPU"},
                        Case{kDoubleDir, "OV_DOUBLE_COMPILE_FAIL=1", "OV_DOUBLE_COMPILE_FAIL"},
                        Case{kDoubleDir, "OV_DOUBLE_IMPORT_INCOMPATIBLE=1", "incompatible"},
                        Case{kDoubleDir, "OV_DOUBLE_INFER_FAIL_AT=1", "device lost"}}) {
    SCOPED_TRACE(c.lib + " " + c.extra);
    auto j = run_mlp(c.lib, c.extra, "openvino:NPU");
    ASSERT_TRUE(j.is_object()) << last_output_;
    ASSERT_GE(j["report"].size(), 1u) << last_output_;
    EXPECT_EQ(j["report"][0]["backend"], "cpu") << last_output_;
    EXPECT_TRUE(j["report"][0]["degraded"].get<bool>()) << last_output_;
    std::string reason = j["report"][0]["reason"].get<std::string>();
    EXPECT_NE(reason.find(c.reason_has), std::string::npos) << reason;
  }
}

TEST_F(OvDouble, StrictModeExits4) {
  REQUIRE_BACKEND();
  for (const auto& [lib, extra] : std::vector<std::pair<std::string, std::string>>{
           {(tmp_ / "absent").string(), ""},
           {kNosymDir, ""},
           {kDoubleDir, "OV_DOUBLE_NO_NPU=1"},
           {kDoubleDir, "OV_DOUBLE_COMPILE_FAIL=NPU"}}) {
    SCOPED_TRACE(lib + " " + extra);
    run_mlp(lib, extra + " DLRT_STRICT=1", "openvino:NPU", 4);
  }
}

TEST_F(OvDouble, CompileForAVirtualNpuThenRunWhereThereIsOne) {
  REQUIRE_BACKEND();
  const std::string out = (tmp_ / "mlp.npu.onnx").string();
  auto c = run_command(dlrt(kDoubleDir, "OV_DOUBLE_NO_NPU=1",
                            "compile " + quote(model("mlp.onnx")) + " --device openvino:NPU --json -o " + quote(out)));
  ASSERT_EQ(c.exit_code, 0) << c.output;
  auto j = json_in_output(c.output);
  ASSERT_TRUE(j.is_object()) << c.output;
  ASSERT_EQ(j["partitions"].size(), 1u) << c.output;
  EXPECT_EQ(j["partitions"][0]["device"], "openvino:NPU");
  EXPECT_TRUE(j["partitions"][0]["virtual"].get<bool>()) << c.output;
  EXPECT_TRUE(j["partitions"][0]["compiled"].get<bool>()) << c.output;

  // A device OpenVINO does not have (not even virtually): exit 4.
  auto none = run_command(dlrt(kDoubleDir, "", "compile " + quote(model("mlp.onnx")) + " --device openvino:GPU.7 -o " +
                                                   quote((tmp_ / "none.onnx").string())));
  EXPECT_EQ(none.exit_code, 4) << none.output;
  EXPECT_FALSE(fs::exists(tmp_ / "none.onnx"));

  // On a machine with an NPU and the same OpenVINO: the blob is imported, not recompiled.
  const fs::path stats = tmp_ / "stats";
  auto r = run_mlp(kDoubleDir, "OV_DOUBLE_STATS=" + quote(stats.string()), "openvino:NPU", 0, out);
  ASSERT_TRUE(r.is_object()) << last_output_;
  EXPECT_EQ(r["report"][0]["device"], "openvino:NPU") << last_output_;
  EXPECT_NE(r["report"][0]["reason"].get<std::string>().find("compiled blob used"), std::string::npos) << last_output_;
  auto st = read_stats(stats);
  EXPECT_EQ(st["compiles"], 0) << "the compiled blob must be imported";
  EXPECT_EQ(st["imports"], 1);

  // Another OpenVINO build: recompiled from the kept subgraph, and the report says why.
  r = run_mlp(kDoubleDir, "OV_DOUBLE_VERSION_STRING=2025.2.0-99999-other", "openvino:NPU", 0, out);
  ASSERT_TRUE(r.is_object()) << last_output_;
  EXPECT_EQ(r["report"][0]["backend"], "openvino") << last_output_;
  std::string reason = r["report"][0]["reason"].get<std::string>();
  EXPECT_NE(reason.find("2025.2.0-99999-other"), std::string::npos) << reason;
  EXPECT_NE(reason.find("recompiled"), std::string::npos) << reason;

  // The runtime refuses the blob at import: recompiled as well.
  r = run_mlp(kDoubleDir, "OV_DOUBLE_IMPORT_INCOMPATIBLE=1", "openvino:NPU", 0, out);
  ASSERT_TRUE(r.is_object()) << last_output_;
  reason = r["report"][0]["reason"].get<std::string>();
  EXPECT_NE(reason.find("incompatible"), std::string::npos) << reason;

  // Still no NPU: the kept subgraph runs on the CPU.
  r = run_mlp(kDoubleDir, "OV_DOUBLE_NO_NPU=1", "openvino:NPU", 0, out);
  ASSERT_TRUE(r.is_object()) << last_output_;
  EXPECT_EQ(r["report"][0]["backend"], "cpu") << last_output_;
  EXPECT_TRUE(r["report"][0]["degraded"].get<bool>()) << last_output_;
}

// ---- In a child process ----

// Re-runs this binary with one child test selected; returns its exit code and output.
testing::CommandResult run_child(const std::string& test, const std::string& env) {
  char self[4096];
  ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return {};
  self[n] = '\0';
  return run_command(env + " DLRT_OV_DOUBLE_CHILD=1 " + quote(self) + " --gtest_filter=" + quote("OvDoubleChild." + test));
}

bool in_child() {
  const char* c = std::getenv("DLRT_OV_DOUBLE_CHILD");
  return c && std::string(c) == "1";
}

std::map<std::string, Tensor> mlp_feeds(const std::string& models) {
  auto x = read_npy_file(models + "/mlp_input.npy");
  EXPECT_TRUE(x.ok());
  return {{"x", x.ok() ? *x : Tensor()}};
}

TEST(OvDoubleChild, EightCallersShareTwoRequests) {
  if (!in_child()) GTEST_SKIP() << "runs in a child process of OvDouble.EightCallersShareTwoRequests";
  std::string err;
  const std::string models = testing::test_models_dir(&err);
  ASSERT_FALSE(models.empty()) << err;
  SessionOptions o;
  o.device = "openvino:NPU";
  o.strict = true;
  auto s = Session::create(models + "/mlp.onnx", o);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  auto feeds = mlp_feeds(models);
  auto want = read_npy_file(models + "/mlp_expected.npy");
  ASSERT_TRUE(want.ok());
  std::atomic<int> failures{0}, on_npu{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 25; ++i) {
        RunReport rep;
        auto y = (*s)->run(feeds, &rep);
        if (!y.ok() || !close_to((*y)[0], *want)) ++failures;
        if (!rep.partitions.empty() && rep.partitions[0].device == "openvino:NPU") ++on_npu;
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(on_npu.load(), 200);
}

TEST_F(OvDouble, EightCallersShareTwoRequests) {
  REQUIRE_BACKEND();
  const fs::path stats = tmp_ / "stats";
  auto r = run_child("EightCallersShareTwoRequests",
                     ov_env(kDoubleDir, tmp_, "OV_DOUBLE_STATS=" + quote(stats.string()) + " OV_DOUBLE_OPTIMAL_REQUESTS=2"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("[  PASSED  ] 1 test"), std::string::npos) << r.output;
  auto st = read_stats(stats);
  EXPECT_GE(st["infers"], 200);
  EXPECT_GE(st["infer_requests"], 1);
  EXPECT_LE(st["infer_requests"], 2) << "one pool of OPTIMAL_NUMBER_OF_INFER_REQUESTS=2";
  EXPECT_LE(st["max_parallel_infers"], 2);
  EXPECT_EQ(st["busy_errors"], 0) << "a request was used by two callers at once";
}

TEST(OvDoubleChild, WarmStartServesOnCpuDuringASlowCompile) {
  if (!in_child()) GTEST_SKIP() << "runs in a child process of OvDouble.WarmStartServesOnCpuDuringASlowCompile";
  std::string err;
  const std::string models = testing::test_models_dir(&err);
  ASSERT_FALSE(models.empty()) << err;
  SessionOptions o;
  o.device = "openvino:NPU";
  o.warm_start = true;
  auto t0 = std::chrono::steady_clock::now();
  auto s = Session::create(models + "/mlp.onnx", o);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  double create_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(create_s, 2.0) << "session create waited for the 3 s compile";
  auto feeds = mlp_feeds(models);
  auto want = read_npy_file(models + "/mlp_expected.npy");
  ASSERT_TRUE(want.ok());
  RunReport rep;
  auto y = (*s)->run(feeds, &rep);
  ASSERT_TRUE(y.ok()) << y.status().to_string();
  EXPECT_TRUE(close_to((*y)[0], *want));
  ASSERT_EQ(rep.partitions.size(), 1u);
  EXPECT_EQ(rep.partitions[0].backend, "cpu");
  EXPECT_NE(rep.partitions[0].reason.find("warm start"), std::string::npos) << rep.partitions[0].reason;
  bool switched = false;
  for (int i = 0; i < 300 && !switched; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    y = (*s)->run(feeds, &rep);
    ASSERT_TRUE(y.ok()) << y.status().to_string();
    EXPECT_TRUE(close_to((*y)[0], *want));
    switched = rep.partitions[0].device == "openvino:NPU";
  }
  EXPECT_TRUE(switched) << "never switched to openvino:NPU: " << rep.partitions[0].reason;
  double total_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_GE(total_s, 3.0) << "switched before the slow compile could have finished";
}

TEST_F(OvDouble, WarmStartServesOnCpuDuringASlowCompile) {
  REQUIRE_BACKEND();
  auto r = run_child("WarmStartServesOnCpuDuringASlowCompile", ov_env(kDoubleDir, tmp_, "OV_DOUBLE_COMPILE_SECONDS=3"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("[  PASSED  ] 1 test"), std::string::npos) << r.output;
}

// ---- The zoo through the double ----

TEST_F(OvDouble, ZooModelsMatchThroughTheNpu) {
  REQUIRE_BACKEND();
  const char* env = std::getenv("DLRT_ZOO_DIR");
  if (!env || !*env)
    GTEST_SKIP() << "DLRT_ZOO_DIR is not set (a folder laid out like shared/models), so the zoo did not run through the double";
  const fs::path root(env);
  std::ifstream f(root / "manifest.json");
  auto m = nlohmann::json::parse(f, nullptr, false);
  ASSERT_TRUE(m.is_object() && m.contains("models")) << root / "manifest.json";
  int checked = 0;
  for (const auto& [name, spec] : m["models"].items()) {
    if (!spec.contains("cases") || spec["cases"].empty()) continue;
    // One case per model (the first): the suite's time budget.
    auto first = spec["cases"].begin();
    const std::string case_name = first.key();
    const nlohmann::json& c = first.value();
    SCOPED_TRACE(name + "/" + case_name);
    std::string file = spec.contains("file") ? spec["file"].get<std::string>() : name + ".onnx";
    const fs::path out = tmp_ / name;
    std::string cmd = "run " + quote((root / file).string()) + " --device openvino:NPU --json --output-dir " + quote(out.string());
    for (const auto& [in, path] : c["inputs"].items()) cmd += " --input " + quote(in + "=" + (root / path.get<std::string>()).string());
    auto r = run_command(dlrt(kDoubleDir, "", cmd));
    ASSERT_EQ(r.exit_code, 0) << r.output;
    auto j = json_in_output(r.output);
    ASSERT_TRUE(j.is_object()) << r.output;
    int npu_nodes = 0;
    for (const auto& p : j["report"])
      if (p["device"] == "openvino:NPU") npu_nodes += p["node_count"].get<int>();
    EXPECT_GT(npu_nodes, 0) << "nothing ran through the double: " << j["report"].dump();
    for (const auto& [oname, path] : c["expected"].items()) {
      auto want = read_npy_file((root / path.get<std::string>()).string());
      std::string safe;
      for (char ch : oname) safe += (std::isalnum(static_cast<unsigned char>(ch)) || ch == '.' || ch == '_' || ch == '-') ? ch : '_';
      auto got = read_npy_file((out / (safe + ".npy")).string());
      ASSERT_TRUE(want.ok() && got.ok()) << oname;
      EXPECT_TRUE(close_to(*got, *want)) << oname;
    }
    std::printf("ov double zoo: %s/%s ok, %d nodes on openvino:NPU\n", name.c_str(), case_name.c_str(), npu_nodes);
    ++checked;
  }
  EXPECT_GT(checked, 0);
}

}  // namespace
}  // namespace dlrt
