// The OpenVINO backend against the real library (the pinned PyPI wheel, installed at test time
// by scripts/setup_venv.sh into <build>/venv), plus the parts that need no library: the version
// gate, the element numberings, the search order and `dlrt devices` on a machine without it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "backends/openvino/openvino_backend.h"
#include "backends/openvino/ov_api.h"
#include "core/npy.h"
#include "dlrt/device.h"
#include "ir/onnx_import.h"
#include "ov_wheel_util.h"

namespace dlrt {
namespace {

namespace fs = std::filesystem;
namespace ov = backend::openvino;
using testing::quote;

// Sets (or unsets, for nullptr) environment variables for one scope.
class ScopedEnv {
 public:
  ScopedEnv& set(const char* name, const char* value) {
    const char* old = std::getenv(name);
    saved_.push_back({name, old ? std::optional<std::string>(old) : std::nullopt});
    if (value) ::setenv(name, value, 1);
    else ::unsetenv(name);
    return *this;
  }
  ~ScopedEnv() {
    for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) {
      if (it->second) ::setenv(it->first.c_str(), it->second->c_str(), 1);
      else ::unsetenv(it->first.c_str());
    }
  }

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

backend::BackendDevice ov_device(const std::string& name, DeviceType type = DeviceType::kCpu, bool is_virtual = false) {
  backend::BackendDevice d;
  d.backend = "openvino";
  d.name = name;
  d.type = type;
  d.is_virtual = is_virtual;
  return d;
}

// ---- no library needed ----

TEST(OpenVinoApi, ElementNumberingsAgreeWithTheReleases) {
  using ov::OvNumbering;
  // 2024.2 .. 2025.0: UNDEFINED, DYNAMIC, BOOLEAN, BF16, F16, F32, ... U8 = 17.
  EXPECT_EQ(ov::to_ov_element(OvNumbering::k2024, DType::kBool), 2u);
  EXPECT_EQ(ov::to_ov_element(OvNumbering::k2024, DType::kFloat32), 5u);
  EXPECT_EQ(ov::to_ov_element(OvNumbering::k2024, DType::kInt64), 11u);
  EXPECT_EQ(ov::to_ov_element(OvNumbering::k2024, DType::kUInt8), 17u);
  // 2025.1+: DYNAMIC, BOOLEAN, BF16, F16, F32, ... U8 = 16.
  EXPECT_EQ(ov::to_ov_element(OvNumbering::k2025, DType::kBool), 1u);
  EXPECT_EQ(ov::to_ov_element(OvNumbering::k2025, DType::kFloat32), 4u);
  EXPECT_EQ(ov::to_ov_element(OvNumbering::k2025, DType::kInt64), 10u);
  EXPECT_EQ(ov::to_ov_element(OvNumbering::k2025, DType::kUInt8), 16u);
  EXPECT_FALSE(ov::to_ov_element(OvNumbering::k2025, DType::kString));
  for (auto n : {OvNumbering::k2024, OvNumbering::k2025})
    for (DType t : {DType::kBool, DType::kBFloat16, DType::kFloat16, DType::kFloat32, DType::kFloat64, DType::kInt8,
                    DType::kInt16, DType::kInt32, DType::kInt64, DType::kUInt8, DType::kUInt16, DType::kUInt32,
                    DType::kUInt64})
      EXPECT_EQ(ov::from_ov_element(n, *ov::to_ov_element(n, t)), t) << dtype_name(t);
  EXPECT_FALSE(ov::from_ov_element(OvNumbering::k2025, 0));  // dynamic
  EXPECT_FALSE(ov::from_ov_element(OvNumbering::k2024, 1));  // dynamic
}

TEST(OpenVinoApi, VersionGateRefusesWhatItDoesNotKnow) {
  ScopedEnv env;
  env.set("DLRT_OPENVINO_ELEMENT_NUMBERING", nullptr);
  auto v = ov::parse_ov_version("2025.4.1-20426-82bbf0292c5-releases/2025/4");
  ASSERT_TRUE(v);
  EXPECT_EQ(v->major, 2025);
  EXPECT_EQ(v->minor, 4);
  EXPECT_EQ(v->patch, 1);
  EXPECT_FALSE(ov::parse_ov_version("custom_build"));
  EXPECT_FALSE(ov::parse_ov_version("2025"));
  EXPECT_FALSE(ov::parse_ov_version(""));
  auto at = [](const char* s) { return ov::numbering_for(*ov::parse_ov_version(s)); };
  EXPECT_EQ(*at("2024.2.0-1"), ov::OvNumbering::k2024);
  EXPECT_EQ(*at("2024.6.0-17404"), ov::OvNumbering::k2024);
  EXPECT_EQ(*at("2025.0.0-17942"), ov::OvNumbering::k2024);
  EXPECT_EQ(*at("2025.1.0-18503"), ov::OvNumbering::k2025);
  EXPECT_EQ(*at("2026.4.1-1"), ov::OvNumbering::k2025);
  auto old = at("2024.1.0-15008");
  ASSERT_FALSE(old.ok());
  EXPECT_EQ(old.status().code(), StatusCode::kDeviceUnavailable);
  EXPECT_NE(old.status().message().find("older than 2024.2"), std::string::npos) << old.status().message();
  EXPECT_FALSE(at("2023.3.0-1").ok());
  auto future = at("2031.0.0-1");
  ASSERT_FALSE(future.ok());
  EXPECT_NE(future.status().message().find("will not guess"), std::string::npos) << future.status().message();
  env.set("DLRT_OPENVINO_ELEMENT_NUMBERING", "2025");
  EXPECT_EQ(*at("2031.0.0-1"), ov::OvNumbering::k2025);
  env.set("DLRT_OPENVINO_ELEMENT_NUMBERING", "1999");
  EXPECT_FALSE(at("2025.4.1-1").ok());
}

TEST(OpenVinoApi, SearchOrder) {
  ScopedEnv env;
  env.set("LD_LIBRARY_PATH", "/a/lib:/b/lib").set("VIRTUAL_ENV", "/my/venv").set("CONDA_PREFIX", nullptr);
  backend::LibrarySearch s = ov::openvino_library_search(false);
  EXPECT_EQ(s.env_var, "OPENVINO_LIB_PATH");
  ASSERT_FALSE(s.names.empty());
  EXPECT_EQ(s.names[0], "libopenvino_c.so");
  auto pos = [&](const std::string& f) {
    auto it = std::find(s.folders.begin(), s.folders.end(), f);
    return it == s.folders.end() ? -1 : static_cast<int>(it - s.folders.begin());
  };
  int ld = pos("/a/lib"), venv = pos("/my/venv/lib/python3*/site-packages/openvino/libs");
  int opt = pos("/opt/intel/openvino*/runtime/lib/intel64"), usr = pos("/usr/lib/x86_64-linux-gnu");
  EXPECT_EQ(ld, 0);
  EXPECT_EQ(pos("/b/lib"), 1);
  EXPECT_GT(venv, 1);
  EXPECT_GT(opt, venv);
  EXPECT_GT(usr, opt);
  EXPECT_NE(s.fix.find("OPENVINO_LIB_PATH"), std::string::npos);
}

// `dlrt devices` on a machine (environment) without OpenVINO says why in one line, and lists
// every path tried under "tried" (and, in text, with --verbose).
TEST(OpenVinoDevices, CliExplainsWhyOpenVinoIsUnavailable) {
  ASSERT_TRUE(fs::exists(testing::dlrt_binary())) << "build the dlrt_cli target";
  const std::string env =
      "cd / && env -u OPENVINO_LIB_PATH -u VIRTUAL_ENV -u CONDA_PREFIX LD_LIBRARY_PATH= HOME=/nonexistent "
      "DLRT_OPENVINO_NO_PYTHON=1 ";
  auto r = testing::run_command(env + quote(testing::dlrt_binary()) + " devices --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto j = nlohmann::json::parse(r.output, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.output;
  nlohmann::json entry;
  for (const auto& b : j["backends"])
    if (b.value("name", "") == "openvino") entry = b;
  ASSERT_FALSE(entry.is_null()) << "no openvino backend in: " << r.output;
  if (entry.value("available", false))
    GTEST_SKIP() << "OpenVINO is installed system-wide here (" << entry.dump() << "); nothing to explain";
  std::string reason = entry.value("reason", "");
  EXPECT_NE(reason.find("libopenvino_c.so"), std::string::npos) << reason;
  EXPECT_NE(reason.find("places searched; `dlrt devices --verbose` lists them"), std::string::npos) << reason;
  EXPECT_NE(entry.value("fix", "").find("pip install openvino"), std::string::npos) << entry.dump();
  ASSERT_FALSE(entry["tried"].empty());
  std::string tried;
  for (const auto& t : entry["tried"]) tried += t.get<std::string>() + "\n";
  EXPECT_NE(tried.find("$OPENVINO_LIB_PATH: not set"), std::string::npos) << tried;
  EXPECT_NE(tried.find("/opt/intel/openvino*/runtime/lib/intel64"), std::string::npos) << tried;
  EXPECT_NE(tried.find("/usr/lib/x86_64-linux-gnu"), std::string::npos) << tried;
  EXPECT_NE(tried.find("site-packages/openvino/libs"), std::string::npos) << tried;

  auto text = testing::run_command(env + quote(testing::dlrt_binary()) + " devices --verbose");
  EXPECT_NE(text.output.find("openvino"), std::string::npos) << text.output;
  EXPECT_NE(text.output.find("unavailable"), std::string::npos) << text.output;
  EXPECT_NE(text.output.find("/opt/intel/openvino*/runtime/lib/intel64: no such folder\n"), std::string::npos)
      << text.output;
}

// A library that is not OpenVINO: loaded, then refused with the reason.
TEST(OpenVinoDevices, ForeignLibraryIsRefusedWithTheMissingSymbol) {
  ScopedEnv env;
  env.set("OPENVINO_LIB_PATH", "libm.so.6").set("LD_LIBRARY_PATH", "").set("VIRTUAL_ENV", nullptr);
  env.set("DLRT_OPENVINO_NO_PYTHON", "1").set("HOME", "/nonexistent");
  auto be = ov::make_openvino_backend();
  auto a = be->is_available();
  ASSERT_FALSE(a.available);
  EXPECT_NE(a.reason.find("ov_get_openvino_version"), std::string::npos) << a.reason;
  EXPECT_TRUE(be->devices(discover_devices()).empty());
  ir::Graph g;
  auto blob = be->compile(g, ov_device("CPU"), {});
  ASSERT_FALSE(blob.ok());
  EXPECT_EQ(blob.status().code(), StatusCode::kDeviceUnavailable);
}

// ---- the real library ----

class RealOpenVino : public ::testing::Test {
 protected:
  void SetUp() override {
#if defined(__SANITIZE_ADDRESS__)
    GTEST_SKIP() << "under AddressSanitizer: the OpenVINO wheel loads its TBB library with RTLD_DEEPBIND, which the "
                    "sanitizer runtime refuses (it aborts the process); the Release build (make test) runs these tests";
#endif
    const auto& w = testing::openvino_wheel();
    if (!w.error.empty()) GTEST_SKIP() << "OpenVINO wheel unavailable: " << w.error;
    libs_ = w.libs;
    venv_ = w.venv;
  }

  // A backend loaded from the wheel through OPENVINO_LIB_PATH.
  std::shared_ptr<backend::Backend> loaded_backend() {
    ScopedEnv env;
    env.set("OPENVINO_LIB_PATH", libs_.c_str());
    auto be = ov::make_openvino_backend();
    auto a = be->is_available();
    EXPECT_TRUE(a.available) << a.reason;
    return be;
  }

  static ir::Model load_model(const std::string& name) {
    std::string err;
    std::string dir = testing::test_models_dir(&err);
    EXPECT_FALSE(dir.empty()) << err;
    auto m = ir::import_onnx_file(dir + "/" + name);
    EXPECT_TRUE(m.ok()) << m.status().to_string();
    return m.ok() ? std::move(m).value() : ir::Model{};
  }

  static backend::BackendDevice cpu_device(backend::Backend& be) {
    for (auto& d : be.devices(discover_devices()))
      if (d.name == "CPU") return d;
    ADD_FAILURE() << "OpenVINO offers no CPU device";
    return ov_device("CPU");
  }

  std::string libs_, venv_;
};

void expect_close(const Tensor& got, const Tensor& want, double rtol = 1e-3, double atol = 1e-5) {
  ASSERT_EQ(got.dtype(), DType::kFloat32);
  ASSERT_EQ(got.shape(), want.shape());
  for (int64_t i = 0; i < want.size(); ++i) {
    float a = got.data<float>()[i], e = want.data<float>()[i];
    ASSERT_LE(std::fabs(a - e), atol + rtol * std::fabs(e)) << "element " << i;
  }
}

TEST_F(RealOpenVino, DiscoveryFindsTheWheelsVersionedSonameThroughTheVenvLayout) {
  ScopedEnv env;
  env.set("OPENVINO_LIB_PATH", nullptr).set("LD_LIBRARY_PATH", "").set("CONDA_PREFIX", nullptr);
  env.set("VIRTUAL_ENV", venv_.c_str()).set("DLRT_OPENVINO_NO_PYTHON", "1");
  auto a = ov::make_openvino_backend()->is_available();
  ASSERT_TRUE(a.available) << a.reason;
  EXPECT_NE(a.library_path.find("site-packages/openvino/libs/libopenvino_c.so."), std::string::npos)
      << a.library_path;
  ASSERT_FALSE(a.tried.empty());
  EXPECT_EQ(a.tried.front(), "$OPENVINO_LIB_PATH: not set");
}

TEST_F(RealOpenVino, DiscoveryAsksThePython3OnPath) {
  ScopedEnv env;
  std::string path = venv_ + "/bin:" + (std::getenv("PATH") ? std::getenv("PATH") : "/usr/bin:/bin");
  env.set("OPENVINO_LIB_PATH", nullptr).set("LD_LIBRARY_PATH", "").set("CONDA_PREFIX", nullptr);
  env.set("VIRTUAL_ENV", nullptr).set("DLRT_OPENVINO_NO_PYTHON", nullptr).set("PATH", path.c_str());
  auto sites = ov::python_site_packages();
  ASSERT_FALSE(sites.empty()) << "python3 on PATH gave no site-packages";
  auto a = ov::make_openvino_backend()->is_available();
  ASSERT_TRUE(a.available) << a.reason;
  EXPECT_NE(a.library_path.find(venv_), std::string::npos) << a.library_path;
  EXPECT_NE(a.library_path.find("/openvino/libs/libopenvino_c.so."), std::string::npos) << a.library_path;
}

TEST_F(RealOpenVino, VersionGateReadsTheRealVersion) {
  auto be = loaded_backend();
  auto a = be->is_available();
  ASSERT_TRUE(a.available) << a.reason;
  EXPECT_EQ(a.version.rfind(testing::openvino_test_version(), 0), 0u) << a.version;
  EXPECT_NE(a.library_path.find(libs_), std::string::npos) << a.library_path;
  // Cheap after the first call: the same answer, no new load.
  EXPECT_EQ(be->is_available().checked_at, a.checked_at);
}

TEST_F(RealOpenVino, DevicesHaveFullNamesAndVirtualAotTargets) {
  auto be = loaded_backend();
  auto hw = discover_devices();
  auto devs = be->devices(hw);
  bool cpu = false, npu = false;
  for (const auto& d : devs) {
    SCOPED_TRACE(d.spec());
    if (d.name == "CPU") {
      cpu = true;
      EXPECT_FALSE(d.is_virtual);
      EXPECT_EQ(d.type, DeviceType::kCpu);
      EXPECT_FALSE(d.metadata.at("full_device_name").empty());
      ASSERT_TRUE(d.hardware);
      EXPECT_EQ(d.hardware->type, DeviceType::kCpu);
    }
    if (d.name.rfind("NPU", 0) == 0) {
      npu = true;
      if (d.is_virtual) {
        EXPECT_EQ(d.metadata.at("is_virtual"), "1");
      }
    }
  }
  EXPECT_TRUE(cpu);
  EXPECT_TRUE(npu);  // the real one, or the virtual ahead-of-time target
}

TEST_F(RealOpenVino, CompileExportImportRoundTrip) {
  auto be = loaded_backend();
  ir::Model m = load_model("mlp.onnx");
  ASSERT_TRUE(m.graph);
  auto dev = cpu_device(*be);
  backend::CompileOptions opts;
  auto blob = be->compile(*m.graph, dev, opts);
  ASSERT_TRUE(blob.ok()) << blob.status().to_string();
  EXPECT_EQ(blob->format, "openvino-export-v1");
  EXPECT_GT(blob->data.size(), 64u);

  std::string dir = testing::test_models_dir();
  auto x = read_npy_file(dir + "/mlp_input.npy");
  auto want = read_npy_file(dir + "/mlp_expected.npy");
  ASSERT_TRUE(x.ok() && want.ok());

  // Two executables from the one blob: init imports, it does not recompile.
  for (int round = 0; round < 2; ++round) {
    auto exe = be->init(*blob, opts, dev);
    ASSERT_TRUE(exe.ok()) << exe.status().to_string();
    auto before = ov::openvino_stats();
    auto out = be->execute(*exe, std::span<const Tensor>(&*x, 1));
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    ASSERT_EQ(out->size(), 1u);
    expect_close((*out)[0], *want);
    EXPECT_EQ(ov::openvino_stats().zero_copy_inputs, before.zero_copy_inputs + 1);  // 64-byte aligned storage

    // A misaligned view is copied, with the same result.
    std::vector<uint8_t> raw(x->nbytes() + 64 + 4);
    uint8_t* base = raw.data() + (64 - reinterpret_cast<uintptr_t>(raw.data()) % 64) % 64 + 4;
    std::memcpy(base, x->raw_data(), x->nbytes());
    Tensor view = Tensor::view(DType::kFloat32, x->shape(), base);
    before = ov::openvino_stats();
    auto out2 = be->execute(*exe, std::span<const Tensor>(&view, 1));
    ASSERT_TRUE(out2.ok()) << out2.status().to_string();
    expect_close((*out2)[0], *want);
    EXPECT_EQ(ov::openvino_stats().copied_inputs, before.copied_inputs + 1);

    // Wrong input dtype: a clear error, not a crash.
    Tensor ints = Tensor::from_vector<int32_t>({2, 4}, std::vector<int32_t>(8, 1));
    auto bad = be->execute(*exe, std::span<const Tensor>(&ints, 1));
    EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
    be->destroy(*exe);
  }

  // Blobs init must refuse: truncated, foreign format, other device; virtual devices never run.
  backend::Blob cut = *blob;
  cut.data.resize(10);
  EXPECT_EQ(be->init(cut, opts, dev).status().code(), StatusCode::kBackendError);
  backend::Blob foreign = *blob;
  foreign.format = "something-else";
  EXPECT_EQ(be->init(foreign, opts, dev).status().code(), StatusCode::kBackendError);
  backend::Blob garbage = *blob;
  for (size_t i = 40; i < garbage.data.size(); ++i) garbage.data[i] = static_cast<uint8_t>(i * 7);
  auto g = be->init(garbage, opts, dev);
  EXPECT_FALSE(g.ok());
  if (g.ok()) be->destroy(*g);
  backend::BackendDevice virt = ov_device("NPU", DeviceType::kNpu, true);
  auto v = be->init(*blob, opts, virt);
  EXPECT_EQ(v.status().code(), StatusCode::kDeviceUnavailable);
  EXPECT_NE(v.status().message().find("virtual"), std::string::npos);
}

TEST_F(RealOpenVino, EightCallersShareAPoolOfTwoRequests) {
  auto be = loaded_backend();
  ir::Model m = load_model("mlp.onnx");
  ASSERT_TRUE(m.graph);
  auto dev = cpu_device(*be);
  backend::CompileOptions opts;
  opts.values["infer_requests"] = "2";
  // LATENCY: with THROUGHPUT, importing the exported blob aborts inside OpenVINO 2025.4.1
  // (free(): invalid pointer in the IR frontend) in this process; see docs/openvino.md.
  opts.values["performance_hint"] = "LATENCY";
  auto blob = be->compile(*m.graph, dev, opts);
  ASSERT_TRUE(blob.ok()) << blob.status().to_string();
  auto exe = be->init(*blob, opts, dev);
  ASSERT_TRUE(exe.ok()) << exe.status().to_string();
  std::string dir = testing::test_models_dir();
  auto x = read_npy_file(dir + "/mlp_input.npy");
  auto want = read_npy_file(dir + "/mlp_expected.npy");
  ASSERT_TRUE(x.ok() && want.ok());
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 25; ++i) {
        auto out = be->execute(*exe, std::span<const Tensor>(&*x, 1));
        if (!out.ok() || (*out)[0].shape() != want->shape()) {
          ++failures;
          continue;
        }
        for (int64_t k = 0; k < want->size(); ++k)
          if (std::fabs((*out)[0].data<float>()[k] - want->data<float>()[k]) > 1e-4f) {
            ++failures;
            break;
          }
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  be->destroy(*exe);
}

// A throughput hint on the CPU is refused with a clear error (docs/openvino.md, Known problem),
// never handed to OpenVINO, whose import of such a blob aborts the process.
TEST_F(RealOpenVino, ThroughputHintOnCpuIsRefusedClearly) {
  auto be = loaded_backend();
  ir::Model m = load_model("mlp.onnx");
  ASSERT_TRUE(m.graph);
  backend::CompileOptions opts;
  opts.values["performance_hint"] = "THROUGHPUT";
  auto blob = be->compile(*m.graph, cpu_device(*be), opts);
  ASSERT_FALSE(blob.ok());
  EXPECT_EQ(blob.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(blob.status().message().find("refused"), std::string::npos) << blob.status().message();
}

// `dlrt run --device openvino:CPU` (strict) runs the whole model through OpenVINO and says so.
TEST_F(RealOpenVino, CliRunReportsOpenVino) {
  std::string dir = testing::test_models_dir();
  ASSERT_FALSE(dir.empty());
  fs::path out = fs::temp_directory_path() / ("dlrt_ov_run_" + std::to_string(::getpid()));
  std::string cmd = "OPENVINO_LIB_PATH=" + quote(libs_) + " DLRT_STRICT=1 DLRT_CACHE_DIR=" + quote((out / "cache").string()) +
                    " " + quote(testing::dlrt_binary()) + " run " + quote(dir + "/mlp.onnx") +
                    " --device openvino:CPU --json --input x=" + quote(dir + "/mlp_input.npy") + " --output-dir " +
                    quote(out.string());
  auto r = testing::run_command(cmd);
  ASSERT_EQ(r.exit_code, 0) << cmd << "\n" << r.output;
  auto j = nlohmann::json::parse(r.output, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.output;
  std::string report = j["report"].dump();
  EXPECT_NE(report.find("openvino:CPU"), std::string::npos) << report;
  EXPECT_EQ(report.find("\"degraded\":true"), std::string::npos) << report;
  auto got = read_npy_file((out / "probs.npy").string());
  auto want = read_npy_file(dir + "/mlp_expected.npy");
  ASSERT_TRUE(got.ok() && want.ok());
  expect_close(*got, *want);
  // The exported model is in dlrt's blob cache; a second run imports it and gives the same outputs.
  int blobs = 0;
  for (const auto& e : fs::directory_iterator(out / "cache")) blobs += e.path().extension() == ".blob";
  EXPECT_EQ(blobs, 1);
  fs::remove(out / "probs.npy");
  auto again = testing::run_command(cmd);
  ASSERT_EQ(again.exit_code, 0) << again.output;
  auto got2 = read_npy_file((out / "probs.npy").string());
  ASSERT_TRUE(got2.ok());
  expect_close(*got2, *want);
  std::error_code ec;
  fs::remove_all(out, ec);
}

// A program that copies the C++ runtime's type information into itself (it
// uses <regex> and a locale facet directly) runs a model on OpenVINO: dlrt
// loads OpenVINO without RTLD_DEEPBIND there (2026.4.1 crashed with it).
TEST_F(RealOpenVino, ProgramThatCopiesTypeinfo) {
  const fs::path host = fs::path(DLRT_BINARY_DIR) / "tests" / "dlrt_copied_typeinfo_host";
  if (!fs::exists(host)) GTEST_SKIP() << host << " was not built";
  std::string dir = testing::test_models_dir();
  ASSERT_FALSE(dir.empty());
  fs::path cache = fs::temp_directory_path() / ("dlrt_ov_typeinfo_" + std::to_string(::getpid()));
  auto r = testing::run_command("OPENVINO_LIB_PATH=" + quote(libs_) + " DLRT_CACHE_DIR=" + quote(cache.string()) +
                                " " + quote(host.string()) + " " + quote(dir + "/mlp.onnx"));
  std::error_code ec;
  fs::remove_all(cache, ec);
  EXPECT_FALSE(r.signaled) << "signal " << r.signal << "\n" << r.output;
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("copies typeinfo: _ZTI"), std::string::npos)
      << "the host no longer copy-relocates typeinfo, so this test checks nothing: " << r.output;
  EXPECT_NE(r.output.find("run: ok"), std::string::npos) << r.output;
}

// Every zoo model through --device openvino:CPU matches --device cpu (and the expected outputs).
TEST_F(RealOpenVino, ZooModelsMatchCpu) {
  const char* zoo = std::getenv("DLRT_ZOO_DIR");
  if (!zoo || !*zoo) GTEST_SKIP() << "DLRT_ZOO_DIR is not set (see tests/tools/zoo_test.cpp)";
  fs::path root(zoo);
  std::ifstream mf(root / "manifest.json");
  auto manifest = nlohmann::json::parse(mf, nullptr, false);
  ASSERT_FALSE(manifest.is_discarded()) << root / "manifest.json";
  fs::path tmp = fs::temp_directory_path() / ("dlrt_ov_zoo_" + std::to_string(::getpid()));
  int compared = 0;
  for (const auto& [model, m] : manifest["models"].items()) {
    fs::path onnx = root / (m.contains("file") ? m["file"].get<std::string>() : model + ".onnx");
    // One case per model keeps the test within its time budget (the largest input case).
    for (const auto& [cname, c] : m["cases"].items()) {
      SCOPED_TRACE(model + "/" + cname);
      std::string inputs;
      for (const auto& [k, v] : c["inputs"].items()) inputs += " --input " + quote(k + "=" + (root / v.get<std::string>()).string());
      std::map<std::string, fs::path> outs;
      for (const char* device : {"openvino:CPU", "cpu"}) {
        fs::path od = tmp / model / cname / (std::string(device) == "cpu" ? "cpu" : "ov");
        std::string cmd = "OPENVINO_LIB_PATH=" + quote(libs_) + " DLRT_STRICT=1 DLRT_CACHE_DIR=" +
                          quote((tmp / "cache").string()) + " " + quote(testing::dlrt_binary()) + " run " +
                          quote(onnx.string()) + " --device " + device + " --json --output-dir " + quote(od.string()) +
                          inputs;
        auto r = testing::run_command(cmd);
        ASSERT_EQ(r.exit_code, 0) << cmd << "\n" << r.output.substr(0, 4000);
        if (std::string(device) != "cpu") {
          auto j = nlohmann::json::parse(r.output, nullptr, false);
          ASSERT_FALSE(j.is_discarded());
          EXPECT_NE(j["report"].dump().find("openvino:CPU"), std::string::npos) << j["report"].dump();
        }
        outs[device] = od;
      }
      for (const auto& [oname, path] : c["expected"].items()) {
        auto want = read_npy_file((root / path.get<std::string>()).string());
        auto ovr = read_npy_file((outs["openvino:CPU"] / (oname + ".npy")).string());
        auto cpur = read_npy_file((outs["cpu"] / (oname + ".npy")).string());
        ASSERT_TRUE(want.ok() && ovr.ok() && cpur.ok()) << oname;
        if (want->dtype() != DType::kFloat32) continue;
        double max_rel = 0;
        for (int64_t i = 0; i < want->size(); ++i) {
          double a = ovr->data<float>()[i], b = cpur->data<float>()[i];
          max_rel = std::max(max_rel, std::fabs(a - b) / (std::fabs(b) + 1e-3));
        }
        std::printf("openvino zoo: %s/%s %s max rel diff vs cpu %.3g\n", model.c_str(), cname.c_str(), oname.c_str(),
                    max_rel);
        expect_close(*ovr, *cpur, 1e-3, 1e-4);
        expect_close(*ovr, *want, 1e-3, 1e-4);
        ++compared;
      }
    }
  }
  EXPECT_GT(compared, 0);
  std::error_code ec;
  fs::remove_all(tmp, ec);
}

}  // namespace
}  // namespace dlrt
