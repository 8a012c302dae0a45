#include "backends/cuda/cuda_library.h"

#include <glob.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <set>

#include "backend/search_summary.h"
#include "core/env.h"

namespace dlrt::cuda {

namespace {

std::string env_str(const char* name) {
  const char* v = env::get(name);
  return v ? std::string(v) : std::string();
}

bool is_folder(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}
bool exists(const std::string& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0;
}
std::string real_path(const std::string& p) {
  char buf[PATH_MAX];
  return ::realpath(p.c_str(), buf) ? std::string(buf) : p;
}
std::string base_name(const std::string& p) {
  size_t slash = p.rfind('/');
  return slash == std::string::npos ? p : p.substr(slash + 1);
}
std::string dir_name(const std::string& p) {
  size_t slash = p.rfind('/');
  return slash == std::string::npos ? std::string() : p.substr(0, slash);
}

const char* arch_dir() {
#if defined(__aarch64__)
  return "sbsa-linux";
#else
  return "x86_64-linux";
#endif
}

std::vector<std::string> toolkit_folders() {
  std::vector<std::string> f;
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"}) {
    std::string v = env_str(var);
    if (!v.empty()) {
      f.push_back(v + "/lib64");
      f.push_back(v + "/lib");
    }
  }
  const std::string arch = arch_dir();
  for (const char* root : {"/usr/local/cuda", "/usr/local/cuda-*"}) {
    f.push_back(std::string(root) + "/lib64");
    f.push_back(std::string(root) + "/targets/" + arch + "/lib");
  }
  return f;
}

// Dependencies NVIDIA's libraries find through RUNPATH=$ORIGIN, which not every
// wheel sets: loaded from the candidate's own folder first, so that the
// loader's lookup by soname finds them already there.
void preload_neighbours(CudaLib lib, const std::string& path) {
  const std::string folder = dir_name(path), base = base_name(path);
  if (folder.empty()) return;
  std::vector<std::string> deps;
  if (lib == CudaLib::kCublas && base.rfind("libcublas.so", 0) == 0) {
    deps.push_back(folder + "/libcublasLt" + base.substr(std::string("libcublas").size()));
  } else if (lib == CudaLib::kNvrtc && base.rfind("libnvrtc.so.", 0) == 0) {
    std::string major = base.substr(std::string("libnvrtc.so.").size());
    major = major.substr(0, major.find('.'));
    auto builtins = backend::glob_newest_first(folder + "/libnvrtc-builtins.so." + major + ".*");
    if (!builtins.empty()) deps.push_back(builtins.front());
  }
  for (const auto& d : deps)
    if (exists(d)) (void)backend::DynamicLibrary::open_file(d);
}

class Searcher {
 public:
  Searcher(const CudaLibSpec& spec, const AcceptFn& accept) : spec_(spec), accept_(accept) {}

  // One file, or a bare soname for the system loader. True when it loaded and was accepted.
  bool try_file(const std::string& path, const std::string& prefix) {
    const bool bare = path.find('/') == std::string::npos;
    if (!bare) {
      std::string real = real_path(path);
      if (!seen_.insert(real).second) return false;  // the same file by another name
      preload_neighbours(spec_.lib, path);
    }
    auto r = backend::DynamicLibrary::open_file(path);
    if (!r.ok()) {
      record(prefix, outcome(path, r.status().message()));
      return false;
    }
    auto lib = std::move(r).value();
    if (bare && !seen_.insert(real_path(lib->path())).second) return false;
    Status ok = accept_ ? accept_(*lib) : Status::Ok();
    if (!ok.ok()) {
      record(prefix, lib->path() + ": loaded but not usable: " + ok.message());
      return false;
    }
    record(prefix, lib->path() + ": loaded");
    found = std::move(lib);
    return true;
  }

  // stem and stem.* in `folder`, newest version first.
  bool try_folder(const std::string& folder, const std::string& prefix) {
    std::vector<std::string> candidates;
    if (exists(folder + "/" + spec_.stem)) candidates.push_back(folder + "/" + spec_.stem);
    for (auto& v : backend::glob_newest_first(folder + "/" + spec_.stem + ".*")) candidates.push_back(std::move(v));
    for (const auto& c : candidates)
      if (try_file(c, prefix)) return true;
    if (candidates.empty()) record(prefix, folder + ": no " + spec_.stem + "* there");
    return false;
  }

  void record(const std::string& prefix, const std::string& what) { tried.push_back(prefix + what); }

  std::vector<std::string> tried;
  std::vector<std::string> no_folder;  // patterns that matched no folder
  std::shared_ptr<backend::DynamicLibrary> found;

 private:
  static std::string outcome(const std::string& path, const std::string& reason) {
    return reason.rfind(path, 0) == 0 ? reason : path + ": " + reason;
  }
  const CudaLibSpec& spec_;
  const AcceptFn& accept_;
  std::set<std::string> seen_;
};

}  // namespace

std::vector<std::string> cuda_lib_path_entries() { return backend::split_list(env_str("DLRT_CUDA_LIB_PATH"), ':'); }

std::vector<std::string> python_site_patterns() {
  std::vector<std::string> out;
  auto add_prefix = [&](const std::string& prefix) {
    if (prefix.empty()) return;
    out.push_back(prefix + "/lib/python3*/site-packages");
    out.push_back(prefix + "/lib/python3*/dist-packages");
  };
  add_prefix(env_str("VIRTUAL_ENV"));
  add_prefix(env_str("CONDA_PREFIX"));
  for (const auto& p : backend::split_list(env_str("PYTHONPATH"), ':')) out.push_back(p);
  // The environment of every python3 on PATH: <prefix>/bin/python3 -> <prefix>/lib/python3.X/.
  for (const auto& dir : backend::split_list(env_str("PATH"), ':'))
    if (::access((dir + "/python3").c_str(), X_OK) == 0 && dir_name(dir) != "") add_prefix(dir_name(dir));
  if (std::string home = env_str("HOME"); !home.empty()) {
    out.push_back(home + "/.local/lib/python3*/site-packages");
    out.push_back(home + "/.pyenv/versions/*/lib/python3*/site-packages");
  }
  out.push_back("/usr/local/lib/python3*/dist-packages");
  out.push_back("/usr/local/lib/python3*/site-packages");
  out.push_back("/usr/lib/python3/dist-packages");
  out.push_back("/usr/lib/python3*/site-packages");
  out.push_back("/usr/lib64/python3*/site-packages");
  std::vector<std::string> unique;
  std::set<std::string> seen;
  for (auto& p : out)
    if (seen.insert(p).second) unique.push_back(std::move(p));
  return unique;
}

CudaLibSpec cuda_lib_spec(CudaLib lib) {
  CudaLibSpec s;
  s.lib = lib;
  switch (lib) {
    case CudaLib::kDriver:
      s.label = "CUDA driver (libcuda.so.1)";
      s.stem = "libcuda.so";
      s.sonames = {"libcuda.so.1"};
      // Where distributions and container runtimes put the driver's user-space library;
      // never the toolkit's lib64/stubs, whose libcuda.so only fails.
      s.folders = {"/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib/wsl/lib",
                   "/usr/local/nvidia/lib64", "/usr/local/nvidia/lib"};
      break;
    case CudaLib::kNvrtc:
      s.label = "NVRTC (libnvrtc.so)";
      s.stem = "libnvrtc.so";
      s.sonames = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"};
      s.folders = toolkit_folders();
      for (const auto& site : python_site_patterns()) {
        s.folders.push_back(site + "/nvidia/cu13/lib");
        s.folders.push_back(site + "/nvidia/cuda_nvrtc/lib");
      }
      break;
    case CudaLib::kCublas:
      s.label = "cuBLAS (libcublas.so)";
      s.stem = "libcublas.so";
      s.sonames = {"libcublas.so.13", "libcublas.so.12", "libcublas.so"};
      s.folders = toolkit_folders();
      for (const auto& site : python_site_patterns()) {
        s.folders.push_back(site + "/nvidia/cu13/lib");
        s.folders.push_back(site + "/nvidia/cublas/lib");
      }
      break;
  }
  return s;
}

Result<std::shared_ptr<backend::DynamicLibrary>> find_library(const CudaLibSpec& spec, const AcceptFn& accept,
                                                              std::vector<std::string>& tried) {
  Searcher s(spec, accept);
  const std::string label = spec.label + ": ";
  const std::vector<std::string> entries = cuda_lib_path_entries();
  bool ok = false;
  if (!entries.empty()) {
    // Authoritative: only the listed files and folders.
    const std::string prefix = label + "$DLRT_CUDA_LIB_PATH -> ";
    bool any = false;
    for (size_t i = 0; !ok && i < entries.size(); ++i) {
      const std::string& e = entries[i];
      if (is_folder(e)) {
        any = true;
        ok = s.try_folder(e, prefix);
      } else if (exists(e)) {
        if (base_name(e).rfind(spec.stem, 0) != 0) continue;  // a file of another library
        any = true;
        ok = s.try_file(e, prefix);
      } else {
        s.record(prefix, e + ": no such file or folder");
      }
    }
    if (!ok && !any) s.record(prefix, "no " + spec.stem + "* among the files listed");
  } else {
    for (size_t i = 0; !ok && i < spec.sonames.size(); ++i) ok = s.try_file(spec.sonames[i], label + "loader: ");
    std::set<std::string> seen_folders;
    for (size_t i = 0; !ok && i < spec.folders.size(); ++i) {
      bool matched = false;
      for (const auto& folder : backend::glob_newest_first(spec.folders[i])) {
        if (!is_folder(folder)) continue;
        matched = true;
        if (!seen_folders.insert(real_path(folder)).second) continue;
        if ((ok = s.try_folder(folder, label))) break;
      }
      if (!matched) s.no_folder.push_back(spec.folders[i]);
    }
  }
  if (!s.no_folder.empty()) {
    std::string list;
    for (const auto& f : s.no_folder) list += (list.empty() ? "" : ", ") + f;
    s.record(label, "no such folder: " + list);
  }
  tried.insert(tried.end(), s.tried.begin(), s.tried.end());
  if (ok) return s.found;
  std::vector<std::string> attempts;
  for (const auto& t : s.tried) attempts.push_back(t.substr(std::min(label.size(), t.size())));
  const std::string what =
      spec.label + (entries.empty() ? std::string() : " in $DLRT_CUDA_LIB_PATH (the only place searched when it is set)");
  return Status(StatusCode::kDeviceUnavailable, backend::search_failure_summary(what, attempts));
}

}  // namespace dlrt::cuda
