#include "backends/openvino/ov_library.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <mutex>
#include <set>

#include "core/env.h"

namespace dlrt::backend::openvino {

namespace {

// Runs `cmd` through /bin/sh and returns its stdout lines (empty on any failure). The
// command bounds its own run time: python_site_packages runs python3 under timeout(1),
// which kills it (SIGKILL a second after SIGTERM) so the read below always ends.
std::vector<std::string> command_lines(const std::string& cmd) {
  std::vector<std::string> out;
  FILE* f = ::popen(cmd.c_str(), "r");
  if (f == nullptr) return out;
  std::string text;
  char buf[1024];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0 && text.size() < 65536) text.append(buf, n);
  int rc = ::pclose(f);
  if (rc != 0) return out;
  for (auto& l : split_list(text, '\n'))
    if (!l.empty() && l[0] == '/') out.push_back(l);
  return out;
}

}  // namespace

std::string env_or(const char* name, const std::string& def) {
  const char* v = env::get(name);
  return v && *v ? std::string(v) : def;
}

std::vector<std::string> python_site_packages() {
  if (env_or("DLRT_OPENVINO_NO_PYTHON") == "1") return {};
  // Asked once per (PATH, VIRTUAL_ENV): a failed load is retried at every session create.
  static std::mutex mu;
  static std::map<std::string, std::vector<std::string>> answers;
  std::string key = env_or("PATH") + "\n" + env_or("VIRTUAL_ENV");
  std::lock_guard<std::mutex> lk(mu);
  if (auto it = answers.find(key); it != answers.end()) return it->second;
  return answers[key] = command_lines(
             "command -v python3 >/dev/null 2>&1 && timeout -k 1 5 python3 -c "
             "'import site, sysconfig; p = sysconfig.get_paths(); print(p[\"purelib\"]); print(p[\"platlib\"]); "
             "print(site.getusersitepackages())' </dev/null 2>/dev/null");
}

LibrarySearch openvino_library_search(bool with_python) {
  LibrarySearch s;
  s.what = "OpenVINO runtime (libopenvino_c.so)";
  s.env_var = "OPENVINO_LIB_PATH";
  s.names = {"libopenvino_c.so"};
  // OpenVINO's C++ core must bind its C++ runtime symbols to its own libstdc++, never to copies
  // a host program exports: with 2025.4.1, binding std::string members that the dlrt executable
  // exports aborted its IR frontend (free(): invalid pointer) while importing some models.
  s.own_symbols_first = true;
  // Versioned sonames (libopenvino_c.so.2541) in the loader's folders.
  for (const auto& d : split_list(env_or("LD_LIBRARY_PATH"), ':')) s.folders.push_back(d);
  auto add_site = [&](const std::string& site) { s.folders.push_back(site + "/openvino/libs"); };
  if (with_python)
    for (const auto& site : python_site_packages()) add_site(site);
  const std::string py = "/lib/python3*/site-packages";
  for (const char* var : {"VIRTUAL_ENV", "CONDA_PREFIX"})
    if (std::string v = env_or(var); !v.empty()) add_site(v + py);
  if (std::string home = env_or("HOME"); !home.empty()) {
    add_site(home + "/.local" + py);
    add_site(home + "/venv" + py);
    add_site(home + "/.venv" + py);
    add_site(home + "/.pyenv/versions/*" + py);
  }
  add_site("/usr/local" + py);
  add_site("/usr/local/lib/python3*/dist-packages");
  add_site("/usr/lib/python3/dist-packages");
  s.folders.push_back("/opt/intel/openvino*/runtime/lib/intel64");
  s.folders.push_back("/usr/lib/x86_64-linux-gnu");
  s.folders.push_back("/usr/local/lib");
  s.fix =
      "install OpenVINO (pip install openvino, or Intel's apt/yum packages or archive), or set "
      "OPENVINO_LIB_PATH to libopenvino_c.so or the folder holding it (a pip wheel's "
      "site-packages/openvino/libs)";
  return s;
}

std::shared_ptr<DynamicLibrary> open_openvino_library(std::vector<std::string>* tried) {
  // Cheap places first; the python3 query only when they fail.
  for (bool with_python : {false, true}) {
    LibrarySearch search = openvino_library_search(with_python);
    if (with_python) {
      search.env_var.clear();
      // Only the folders the first pass did not already try (names stay: folders are searched for them).
      LibrarySearch first = openvino_library_search(false);
      std::set<std::string> seen(first.folders.begin(), first.folders.end());
      std::vector<std::string> rest;
      for (auto& f : search.folders)
        if (seen.insert(f).second) rest.push_back(f);
      search.folders = rest;
      if (search.folders.empty()) break;
    }
    std::vector<std::string> t;
    auto r = DynamicLibrary::open(search, &t);
    for (auto& entry : t)
      if (std::find(tried->begin(), tried->end(), entry) == tried->end()) tried->push_back(std::move(entry));
    if (r.ok()) return std::move(r).value();
  }
  return nullptr;
}

}  // namespace dlrt::backend::openvino
