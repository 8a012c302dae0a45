// dlrt canary BACKEND: the compatibility check of the backend's vendor
// runtime (backend/canary.h), in this process. A backend meeting a release
// dlrt was not tested with runs this command as a child process and reads
// its last line; a person can run it too.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_args.h"
#include "commands.h"
#include "compare.h"
#include "dlrt/backends.h"
#include "dlrt/session.h"
#include "json_out.h"

namespace dlrt::cli {
namespace {

constexpr const char* kCanaryHelp =
    "usage: dlrt canary BACKEND\n"
    "\n"
    "Runs dlrt's built-in check model (a 2 MiB constant weight, a dynamic batch run at\n"
    "two sizes, inputs and outputs of every element type the backends map) on BACKEND\n"
    "in strict mode and on dlrt's CPU backend, and compares the outputs. Prints one JSON\n"
    "line {\"canary\", \"version\", \"ok\", \"detail\"}; exits 0 when they match, 1 when not.\n"
    "\n"
    "dlrt runs this in a child process, with DLRT_CANARY_CHILD=1, the first time a\n"
    "backend loads a vendor release it was not tested with, so that a crash or hang\n"
    "there cannot take the calling process down (see docs/openvino.md).\n"
    "\n"
    "options:\n"
    "  -h, --help      this help\n";

// The answer line, and the exit code that goes with it.
int answer(const std::string& backend, const std::string& version, bool ok, const std::string& detail) {
  nlohmann::json j;
  j["canary"] = backend;
  j["version"] = version;
  j["ok"] = ok;
  j["detail"] = detail;
  print_json(j, -1);
  std::fflush(stdout);
  return ok ? kExitOk : kExitRuntimeError;
}

}  // namespace

int cmd_canary(int argc, char** argv) {
  std::string name;
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      std::fputs(kCanaryHelp, stdout);
      return kExitOk;
    }
    if (!a.empty() && a[0] == '-') return usage_error("canary", "unknown option '" + a + "'");
    if (!name.empty()) return usage_error("canary", "one BACKEND only");
    name = a;
  }
  if (name.empty()) return usage_error("canary", "name a BACKEND (dlrt devices lists them)");
  // This process is the check: the backend must not start another one.
  setenv("DLRT_CANARY_CHILD", "1", 1);
  BackendsOptions query;
  query.only = name;
  const std::vector<BackendInfo> found = dlrt::backends(query);
  if (found.empty()) return answer(name, "", false, "no backend named '" + name + "'");
  const BackendInfo& a = found.front();
  if (!a.available) return answer(name, a.version, false, name + " is unavailable: " + a.reason);

  auto model = backend_check_model();
  if (!model.ok()) return answer(name, a.version, false, "building the check model: " + model.status().to_string());
  SessionOptions on_backend;
  on_backend.device = name;
  on_backend.strict = true;
  SessionOptions on_cpu;
  on_cpu.device = "cpu";
  auto accel = Session::create_from_bytes(model->onnx, on_backend);
  if (!accel.ok()) return answer(name, a.version, false, "session on " + name + ": " + accel.status().to_string());
  auto cpu = Session::create_from_bytes(model->onnx, on_cpu);
  if (!cpu.ok()) return answer(name, a.version, false, "session on cpu: " + cpu.status().to_string());
  const auto& outs = (*cpu)->outputs();
  int on_accel = 0;
  for (const auto& feeds : model->feeds) {
    RunReport report;
    auto got = (*accel)->run(feeds, &report);
    if (!got.ok()) return answer(name, a.version, false, "run on " + name + ": " + got.status().to_string());
    auto want = (*cpu)->run(feeds);
    if (!want.ok()) return answer(name, a.version, false, "run on cpu: " + want.status().to_string());
    for (const auto& p : report.partitions)
      if (p.backend == name) on_accel += p.node_count;
    for (size_t i = 0; i < want->size() && i < got->size(); ++i) {
      auto diff = compare_tensors((*want)[i], (*got)[i], tolerance_for((*want)[i].dtype()));
      if (diff)
        return answer(name, a.version, false,
                      "output '" + (i < outs.size() ? outs[i].name : std::to_string(i)) + "' at batch " +
                          std::to_string(feeds.begin()->second.dim(0)) + " differs from dlrt's CPU backend: " + *diff);
    }
    if (got->size() != want->size())
      return answer(name, a.version, false, "the backend returned " + std::to_string(got->size()) + " outputs, not " +
                                                std::to_string(want->size()));
  }
  if (on_accel == 0) return answer(name, a.version, false, name + " took no node of the check model");
  return answer(name, a.version, true,
                std::to_string(model->feeds.size()) + " runs match dlrt's CPU backend (" + std::to_string(on_accel) +
                    " node runs on " + name + ")");
}

}  // namespace dlrt::cli
