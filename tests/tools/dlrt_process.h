// The built `dlrt` as a child process that runs beside the test: its output
// read as it comes, its exit awaited with a timeout, the port of its
// "listening on http://HOST:PORT" line. Optionally under an address-space
// limit (as `ulimit -v` sets it) or in a given cgroup. For a command that
// simply runs to its end, run_command (cli_test_util.h) is shorter.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "cli_test_util.h"

extern char** environ;

namespace dlrt::testing {

struct DlrtProcessOptions {
  std::vector<std::string> args;           // after the binary's path
  std::map<std::string, std::string> env;  // set over this process's environment
  bool merge_stderr = true;                // stderr into output() too; else to the test's stderr
  uint64_t address_space = 0;              // RLIMIT_AS in bytes; 0: none
  std::string cgroup_procs;                // a cgroup.procs file the child joins; "": none
};

// The child's exit code when it could not set itself up before the exec.
constexpr int kChildCgroupFailed = 97, kChildRlimitFailed = 98, kChildExecFailed = 99;

class DlrtProcess {
 public:
  explicit DlrtProcess(const DlrtProcessOptions& o) {
    // Everything the child needs is made here: between fork and exec it
    // only makes async-signal-safe calls.
    std::vector<std::string> argv_s = {dlrt_binary()};
    argv_s.insert(argv_s.end(), o.args.begin(), o.args.end());
    std::vector<char*> argv;
    for (auto& a : argv_s) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::map<std::string, std::string> all;
    for (char** e = environ; *e; ++e) {
      const std::string kv = *e;
      const auto eq = kv.find('=');
      if (eq != std::string::npos) all[kv.substr(0, eq)] = kv.substr(eq + 1);
    }
    for (const auto& [k, v] : o.env) all[k] = v;
    std::vector<std::string> env_s;
    for (const auto& [k, v] : all) env_s.push_back(k + "=" + v);
    std::vector<char*> envp;
    for (auto& e : env_s) envp.push_back(e.data());
    envp.push_back(nullptr);

    int fds[2];
    if (::pipe(fds) != 0) return;
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(fds[1], 1);
      if (o.merge_stderr) ::dup2(fds[1], 2);
      ::close(fds[0]);
      if (fds[1] > 2) ::close(fds[1]);
      if (!o.cgroup_procs.empty() && !join_cgroup(o.cgroup_procs.c_str())) ::_exit(kChildCgroupFailed);
      if (o.address_space) {
        struct rlimit rl{o.address_space, o.address_space};
        if (::setrlimit(RLIMIT_AS, &rl) != 0) ::_exit(kChildRlimitFailed);
      }
      ::execve(argv[0], argv.data(), envp.data());
      ::_exit(kChildExecFailed);
    }
    ::close(fds[1]);
    if (pid_ < 0) {
      ::close(fds[0]);
      return;
    }
    out_ = fds[0];
  }
  ~DlrtProcess() {
    if (pid_ > 0 && !exited_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, &status_, 0);
    }
    if (out_ >= 0) ::close(out_);
  }
  DlrtProcess(const DlrtProcess&) = delete;
  DlrtProcess& operator=(const DlrtProcess&) = delete;

  bool started() const { return pid_ > 0; }
  void signal(int sig) {
    if (pid_ > 0) ::kill(pid_, sig);
  }
  bool exited() {
    if (exited_) return true;
    if (pid_ <= 0) return exited_ = true;
    if (::waitpid(pid_, &status_, WNOHANG) == pid_) exited_ = true;
    return exited_;
  }
  // Waits for the exit, reading the output meanwhile: the exit code, 128 +
  // the signal, or -1 when it did not exit in time.
  int wait_exit(int timeout_ms = 60000) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    while (std::chrono::steady_clock::now() < until) {
      read_some(20);
      if (exited()) {
        read_some(0);
        return WIFEXITED(status_) ? WEXITSTATUS(status_) : 128 + WTERMSIG(status_);
      }
    }
    return -1;
  }
  // Reads the output until the "listening on http://HOST:PORT" line: the
  // port (also port() from then on), or -1 on an exit or the timeout.
  int wait_port(int timeout_ms = 30000) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    while (std::chrono::steady_clock::now() < until) {
      read_some(100);
      const auto p = output_.find("listening on http://");
      if (p != std::string::npos) {
        const auto colon = output_.find(':', p + 20);
        const auto end = output_.find(' ', colon);
        if (colon != std::string::npos && end != std::string::npos)
          return port_ = std::atoi(output_.substr(colon + 1, end - colon - 1).c_str());
      }
      if (exited()) return -1;
    }
    return -1;
  }
  int port() const { return port_; }
  // All the output so far.
  const std::string& output() {
    read_some(0);
    return output_;
  }

 private:
  // Writes the calling process's pid into `procs`, async-signal-safely.
  static bool join_cgroup(const char* procs) {
    char digits[24], *p = digits + sizeof digits;
    pid_t pid = ::getpid();
    do {
      *--p = char('0' + pid % 10);
      pid /= 10;
    } while (pid > 0);
    const ssize_t n = digits + sizeof digits - p;
    const int fd = ::open(procs, O_WRONLY);
    if (fd < 0) return false;
    const bool ok = ::write(fd, p, static_cast<size_t>(n)) == n;
    ::close(fd);
    return ok;
  }
  void read_some(int timeout_ms) {
    pollfd p{out_, POLLIN, 0};
    while (out_ >= 0 && ::poll(&p, 1, timeout_ms) > 0 && (p.revents & (POLLIN | POLLHUP))) {
      char buf[4096];
      const ssize_t n = ::read(out_, buf, sizeof buf);
      if (n <= 0) break;
      output_.append(buf, static_cast<size_t>(n));
      timeout_ms = 0;
    }
  }
  pid_t pid_ = -1;
  int out_ = -1;
  int port_ = -1;
  int status_ = 0;
  bool exited_ = false;
  std::string output_;
};

}  // namespace dlrt::testing
