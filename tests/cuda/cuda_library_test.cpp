// The CUDA library search's places (src/backends/cuda/cuda_library.h): the pip
// wheel layouts in the site-packages found without starting Python, and the
// order of the candidates. Loads copies of the fake NVRTC/cuBLAS
// (tests/cuda_double) into this process; a real toolkit's libraries found
// earlier in the order are loaded and passed over by the test's check.
#include <gtest/gtest.h>

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "backends/cuda/cuda_library.h"

namespace dlrt {
namespace {

namespace fs = std::filesystem;

const std::string kDoubleDir = DLRT_CUDA_DOUBLE_DIR;

// Sets environment variables for one test and puts them back after.
class ScopedEnv {
 public:
  void set(const char* name, const std::string& value) {
    const char* old = std::getenv(name);
    saved_.push_back({name, old ? std::optional<std::string>(old) : std::nullopt});
    ::setenv(name, value.c_str(), 1);
  }
  void unset(const char* name) {
    const char* old = std::getenv(name);
    saved_.push_back({name, old ? std::optional<std::string>(old) : std::nullopt});
    ::unsetenv(name);
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

class CudaLibrarySearch : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(kDoubleDir + "/libnvrtc.so.13")) GTEST_SKIP() << "the fake NVRTC was not built: " << kDoubleDir;
    tmp_ = fs::temp_directory_path() / ("dlrt_cudalib_" + std::to_string(::getpid()));
    fs::remove_all(tmp_);
    fs::create_directories(tmp_);
    env_.unset("DLRT_CUDA_LIB_PATH");
    env_.unset("PYTHONPATH");
    env_.unset("CONDA_PREFIX");
  }
  void TearDown() override {
    std::error_code ec;
    if (!tmp_.empty()) fs::remove_all(tmp_, ec);
  }
  // Copies the fake `lib` into `folder` (a copy, not a link: the loader would
  // hand back a file already loaded under another name).
  void place(const fs::path& folder, const std::string& lib) {
    fs::create_directories(folder);
    fs::copy_file(fs::path(kDoubleDir) / lib, folder / lib);
  }
  // Searches for `lib`, accepting only files under tmp_.
  std::string find(cuda::CudaLib lib, std::vector<std::string>& tried) {
    const std::string root = fs::weakly_canonical(tmp_).string();
    auto r = cuda::find_library(
        cuda::cuda_lib_spec(lib),
        [&](const backend::DynamicLibrary& l) {
          return l.path().rfind(tmp_.string(), 0) == 0 || l.path().rfind(root, 0) == 0
                     ? Status::Ok()
                     : Status(StatusCode::kDeviceUnavailable, "not the test's copy");
        },
        tried);
    return r.ok() ? (*r)->path() : "";
  }
  fs::path tmp_;
  ScopedEnv env_;
};

TEST_F(CudaLibrarySearch, FindsCuda13WheelsInAVirtualEnv) {
  const fs::path site = tmp_ / "venv/lib/python3.12/site-packages";
  place(site / "nvidia/cu13/lib", "libnvrtc.so.13");
  place(site / "nvidia/cu13/lib", "libcublas.so.13");
  env_.set("VIRTUAL_ENV", (tmp_ / "venv").string());
  std::vector<std::string> tried;
  EXPECT_EQ(find(cuda::CudaLib::kNvrtc, tried), (site / "nvidia/cu13/lib/libnvrtc.so.13").string());
  EXPECT_EQ(find(cuda::CudaLib::kCublas, tried), (site / "nvidia/cu13/lib/libcublas.so.13").string());
  std::string all;
  for (const auto& t : tried) all += t + "\n";
  EXPECT_NE(all.find("NVRTC (libnvrtc.so): loader: "), std::string::npos) << all;
  EXPECT_NE(all.find("/usr/local/cuda"), std::string::npos) << "toolkit folders come before the wheels:\n" << all;
}

TEST_F(CudaLibrarySearch, FindsCuda12WheelsBesideAPython3OnPath) {
  // <prefix>/bin/python3 on PATH -> <prefix>/lib/python3.X/site-packages, without running it.
  const fs::path prefix = tmp_ / "conda";
  fs::create_directories(prefix / "bin");
  { std::ofstream(prefix / "bin/python3") << "#!/bin/sh\nexit 1\n"; }
  fs::permissions(prefix / "bin/python3", fs::perms::owner_all);
  const fs::path site = prefix / "lib/python3.11/site-packages";
  place(site / "nvidia/cuda_nvrtc/lib", "libnvrtc.so.13");
  place(site / "nvidia/cublas/lib", "libcublas.so.13");
  env_.unset("VIRTUAL_ENV");
  env_.set("PATH", (prefix / "bin").string() + ":" + std::string(std::getenv("PATH") ? std::getenv("PATH") : "/usr/bin"));
  std::vector<std::string> tried;
  EXPECT_EQ(find(cuda::CudaLib::kNvrtc, tried), (site / "nvidia/cuda_nvrtc/lib/libnvrtc.so.13").string());
  EXPECT_EQ(find(cuda::CudaLib::kCublas, tried), (site / "nvidia/cublas/lib/libcublas.so.13").string());
}

TEST_F(CudaLibrarySearch, LibPathListIsTheOnlyPlaceAndTakesFiles) {
  place(tmp_ / "a", "libnvrtc.so.13");
  place(tmp_ / "b", "libcublas.so.13");
  // A list of a folder and a file; each library comes from the entry that has it.
  env_.set("DLRT_CUDA_LIB_PATH", (tmp_ / "a").string() + ":" + (tmp_ / "b/libcublas.so.13").string());
  std::vector<std::string> tried;
  EXPECT_EQ(find(cuda::CudaLib::kNvrtc, tried), (tmp_ / "a/libnvrtc.so.13").string());
  EXPECT_EQ(find(cuda::CudaLib::kCublas, tried), (tmp_ / "b/libcublas.so.13").string());
  tried.clear();
  EXPECT_EQ(find(cuda::CudaLib::kDriver, tried), "");
  std::string all;
  for (const auto& t : tried) all += t + "\n";
  EXPECT_NE(all.find("$DLRT_CUDA_LIB_PATH"), std::string::npos) << all;
  EXPECT_EQ(all.find("loader:"), std::string::npos) << all;
}

TEST_F(CudaLibrarySearch, SiteFoldersComeFromTheEnvironmentNotPython) {
  env_.set("VIRTUAL_ENV", "/venv-x");
  env_.set("PYTHONPATH", "/pp1:/pp2");
  env_.set("HOME", "/home-x");
  auto sites = cuda::python_site_patterns();
  auto has = [&](const std::string& p) { return std::find(sites.begin(), sites.end(), p) != sites.end(); };
  EXPECT_TRUE(has("/venv-x/lib/python3*/site-packages"));
  EXPECT_TRUE(has("/pp1"));
  EXPECT_TRUE(has("/pp2"));
  EXPECT_TRUE(has("/home-x/.local/lib/python3*/site-packages"));
  EXPECT_TRUE(has("/usr/local/lib/python3*/dist-packages"));
  EXPECT_TRUE(has("/usr/lib/python3/dist-packages"));
  auto folders = cuda::cuda_lib_spec(cuda::CudaLib::kNvrtc).folders;
  auto pos = [&](const std::string& f) { return std::find(folders.begin(), folders.end(), f) - folders.begin(); };
  EXPECT_LT(pos("/usr/local/cuda/lib64"), pos("/venv-x/lib/python3*/site-packages/nvidia/cu13/lib"));
  EXPECT_LT(pos("/venv-x/lib/python3*/site-packages/nvidia/cu13/lib"),
            static_cast<long>(folders.size()));
  EXPECT_LT(pos("/venv-x/lib/python3*/site-packages/nvidia/cuda_nvrtc/lib"), static_cast<long>(folders.size()));
}

}  // namespace
}  // namespace dlrt
