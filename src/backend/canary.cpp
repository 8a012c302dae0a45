#include "backend/canary.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>

#include "core/env.h"
#include "core/logging.h"

extern char** environ;

namespace dlrt::backend {

namespace {

namespace fs = std::filesystem;

std::string env_or(const char* name, const char* def) {
  const char* v = env::get(name);
  return v && *v ? v : def;
}

std::string utc_now() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// "2026.4.1-22982-e213a147257-releases/2026/4" -> a file name.
std::string file_safe(const std::string& s) {
  std::string out;
  for (char c : s) out.push_back(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' ? c : '_');
  return out.substr(0, 160);
}

std::string verdict_path(const CanaryRequest& r) {
  return r.cache_dir + "/canary/" + file_safe(r.backend) + "-" + file_safe(r.version) + ".verdict";
}

// One line of a message: newlines would break the key=value file.
std::string one_line(std::string s) {
  for (char& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  return s;
}

std::optional<CanaryVerdict> read_cached(const CanaryRequest& r) {
  std::ifstream f(verdict_path(r));
  if (!f) return std::nullopt;
  std::map<std::string, std::string> kv;
  std::string line;
  while (std::getline(f, line)) {
    auto eq = line.find('=');
    if (eq != std::string::npos) kv[line.substr(0, eq)] = line.substr(eq + 1);
  }
  // A verdict for another version (a hash collision of the file name) or a torn file is not one.
  if (kv["version"] != r.version || (kv["verdict"] != "passed" && kv["verdict"] != "failed")) return std::nullopt;
  CanaryVerdict v;
  v.kind = kv["verdict"] == "passed" ? CanaryVerdict::Kind::kPassed : CanaryVerdict::Kind::kFailed;
  v.reason = kv["reason"];
  v.checked_at = kv["checked_at"];
  v.cached = true;
  return v;
}

void write_cached(const CanaryRequest& r, const CanaryVerdict& v) {
  std::error_code ec;
  fs::create_directories(r.cache_dir + "/canary", ec);
  const std::string path = verdict_path(r);
  const std::string tmp = path + ".tmp" + std::to_string(::getpid());
  {
    std::ofstream f(tmp, std::ios::trunc);
    f << "backend=" << r.backend << "\nversion=" << r.version
      << "\nverdict=" << (v.kind == CanaryVerdict::Kind::kPassed ? "passed" : "failed")
      << "\nreason=" << one_line(v.reason) << "\nchecked_at=" << v.checked_at << "\n";
    if (!f) {
      DLRT_LOG(kWarn, "canary: cannot write " + tmp + "; the verdict is not kept");
      fs::remove(tmp, ec);
      return;
    }
  }
  fs::rename(tmp, path, ec);  // atomic: readers see the old verdict or the new one
  if (ec) {
    DLRT_LOG(kWarn, "canary: cannot write " + path + ": " + ec.message());
    fs::remove(tmp, ec);
  }
}

bool executable(const std::string& p) { return !p.empty() && ::access(p.c_str(), X_OK) == 0 && !fs::is_directory(p); }

std::string signal_name(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return abbrev ? std::string("SIG") + abbrev : "signal " + std::to_string(sig);
}

// The last non-empty line of the child's output that is not its JSON answer.
std::string last_lines(const std::string& out, size_t max_chars = 600) {
  std::string s = out;
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  if (s.size() > max_chars) s = "..." + s.substr(s.size() - max_chars);
  return one_line(s);
}

// The child's answer: its last line is {"ok": true|false, "detail": "..."}.
bool parse_answer(const std::string& out, bool* ok, std::string* detail) {
  auto start = out.rfind("{\"canary\"");
  if (start == std::string::npos) return false;
  std::string line = out.substr(start, out.find('\n', start) - start);
  *ok = line.find("\"ok\":true") != std::string::npos;
  auto d = line.find("\"detail\":\"");
  if (d != std::string::npos) {
    d += 10;
    std::string v;
    for (size_t i = d; i < line.size() && line[i] != '"'; ++i) {
      if (line[i] == '\\' && i + 1 < line.size()) ++i;
      v.push_back(line[i]);
    }
    *detail = v;
  }
  return true;
}

// Runs `exe canary BACKEND` with DLRT_CANARY_CHILD=1 and waits for it at most
// `timeout`; the verdict from how it ended and what it printed.
CanaryVerdict run_child(const std::string& exe, const CanaryRequest& r, std::chrono::seconds timeout) {
  CanaryVerdict v;
  v.checked_at = utc_now();
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    v.reason = std::string("the check could not start: pipe: ") + std::strerror(errno);
    return v;
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
  // The environment as it is, with DLRT_CANARY_CHILD=1.
  std::vector<std::string> env_strings;
  for (char** e = environ; e && *e; ++e)
    if (std::strncmp(*e, "DLRT_CANARY_CHILD=", 18) != 0) env_strings.emplace_back(*e);
  env_strings.emplace_back("DLRT_CANARY_CHILD=1");
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::string a0 = exe, a1 = "canary", a2 = r.backend;
  char* argv[] = {a0.data(), a1.data(), a2.data(), nullptr};
  pid_t pid = -1;
  int rc = posix_spawn(&pid, exe.c_str(), &fa, nullptr, argv, envp.data());
  posix_spawn_file_actions_destroy(&fa);
  ::close(fds[1]);
  if (rc != 0) {
    ::close(fds[0]);
    v.reason = "the check could not start " + exe + ": " + std::strerror(rc);
    return v;
  }
  // Read until the child closes its end or the time is up.
  std::string out;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  bool timed_out = false;
  char buf[4096];
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    int n = ::poll(&p, 1, static_cast<int>(std::min<long>(left.count(), 1000)));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) continue;
    ssize_t got = ::read(fds[0], buf, sizeof buf);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;  // EOF: the child exited (or closed its output)
    if (out.size() < (1u << 20)) out.append(buf, static_cast<size_t>(got));
  }
  ::close(fds[0]);
  if (timed_out) ::kill(pid, SIGKILL);
  int status = 0;
  pid_t w;
  do {
    w = ::waitpid(pid, &status, 0);
  } while (w < 0 && errno == EINTR);
  if (timed_out) {
    v.reason = "the child hung: no answer within " + std::to_string(timeout.count()) + " s (killed)";
    return v;
  }
  bool ok = false;
  std::string detail;
  const bool answered = parse_answer(out, &ok, &detail);
  if (w == pid && WIFSIGNALED(status)) {
    v.reason = "the child died with " + signal_name(WTERMSIG(status)) + (out.empty() ? "" : "; its last output: " + last_lines(out));
    return v;
  }
  // (w != pid: the host reaps its children itself, SIGCHLD ignored; the answer is all there is.)
  const int code = w == pid && WIFEXITED(status) ? WEXITSTATUS(status) : (answered && ok ? 0 : -1);
  if (answered && ok && code == 0) {
    v.kind = CanaryVerdict::Kind::kPassed;
    return v;
  }
  if (answered && !detail.empty()) v.reason = detail;
  else v.reason = "the child exited with status " + std::to_string(code) + " without an answer" +
                  (out.empty() ? "" : "; its last output: " + last_lines(out));
  return v;
}

}  // namespace

std::string CanaryVerdict::summary() const {
  std::string when = checked_at.empty() ? "" : " (" + checked_at + (cached ? ", cached" : "") + ")";
  switch (kind) {
    case Kind::kPassed: return "passed dlrt's compatibility check" + when;
    case Kind::kSkipped: return "not checked (DLRT_CANARY=skip)";
    case Kind::kFailed: break;
  }
  return "failed dlrt's compatibility check" + when + ": " + reason;
}

bool in_canary_child() { return env_or("DLRT_CANARY_CHILD", "") == "1"; }

std::vector<std::string> canary_exe_candidates() {
  std::vector<std::string> out;
  if (const char* e = env::get("DLRT_CANARY_EXE"); e && *e) return {e};
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec && self.filename() == "dlrt") out.push_back(self.string());
  // The folder of the file holding this code: the dlrt executable, libdlrt.so
  // or a program that links dlrt statically.
  Dl_info info{};
  std::vector<fs::path> dirs;
  if (::dladdr(reinterpret_cast<void*>(&canary_exe_candidates), &info) != 0 && info.dli_fname) {
    fs::path module = fs::weakly_canonical(info.dli_fname, ec);
    if (!ec) dirs.push_back(module.parent_path());
  }
  if (!self.empty()) dirs.push_back(self.parent_path());
  for (const auto& d : dirs)
    for (const fs::path& c : {d / "dlrt", d.parent_path() / "dlrt", d.parent_path() / "bin" / "dlrt"})
      if (std::find(out.begin(), out.end(), c.string()) == out.end()) out.push_back(c.string());
  return out;
}

CanaryVerdict check_release(const CanaryRequest& r) {
  const std::string mode = env_or("DLRT_CANARY", "auto");
  CanaryVerdict v;
  if (mode == "skip") {
    v.kind = CanaryVerdict::Kind::kSkipped;
    return v;
  }
  if (mode != "auto" && mode != "recheck") {
    v.reason = "DLRT_CANARY='" + mode + "' is not auto, recheck or skip";
    return v;
  }
  if (mode == "auto" && !r.cache_dir.empty())
    if (auto cached = read_cached(r)) return *cached;
  std::string exe;
  std::vector<std::string> looked;
  for (const auto& c : canary_exe_candidates()) {
    looked.push_back(c);
    if (executable(c)) {
      exe = c;
      break;
    }
  }
  if (exe.empty()) {
    v.checked_at = utc_now();
    std::string where;
    for (size_t i = 0; i < looked.size(); ++i) where += (i ? ", " : "") + looked[i];
    v.reason = "the check could not run: no dlrt executable found (looked for " + where +
               "); set DLRT_CANARY_EXE to one";
    return v;  // not kept: the next process may find one
  }
  long seconds = std::atol(env_or("DLRT_CANARY_TIMEOUT_S", "120").c_str());
  if (seconds <= 0) seconds = 120;
  DLRT_LOG(kInfo, r.vendor + " " + r.version + " is not a release dlrt was tested with: checking it in a child process (" +
                      exe + " canary " + r.backend + ")");
  v = run_child(exe, r, std::chrono::seconds(seconds));
  if (!r.cache_dir.empty()) write_cached(r, v);
  return v;
}

}  // namespace dlrt::backend
