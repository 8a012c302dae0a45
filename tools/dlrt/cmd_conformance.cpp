// dlrt conformance DIR...: run ONNX backend-test cases and compare outputs.
//
// Cases run in this process, one after the other, so a crash in one of them
// ends the run loudly (the signal handler names the case) instead of being
// counted as an ordinary failure.
#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "cli_args.h"
#include "commands.h"
#include "compare.h"
#include "dlrt/model_info.h"
#include "dlrt/onnx_data.h"
#include "dlrt/session.h"
#include "json_out.h"

namespace fs = std::filesystem;

namespace dlrt::cli {
namespace {

constexpr const char* kConformanceHelp =
    "usage: dlrt conformance DIR... [options]\n"
    "\n"
    "Each DIR is an ONNX backend-test case (model.onnx + test_data_set_*/input_N.pb,\n"
    "output_N.pb) or a folder of such cases. Every case runs through dlrt::Session and its\n"
    "outputs are compared with the expected ones (float: rtol 1e-3, atol 1e-5; integers,\n"
    "bools and strings exact; NaN equals NaN). One line per case:\n"
    "  PASS name | FAIL name: reason | UNSUPPORTED name: reason | SKIP name: training-only\n"
    "then 'conformance: N passed, M failed, K unsupported'. Case names are\n"
    "<parent folder>/<case folder>, e.g. node/test_relu. Training cases (adam, adagrad,\n"
    "momentum, nesterov, _training, and the Gradient op of ai.onnx.preview.training)\n"
    "are skipped and not counted.\n"
    "\n"
    "options:\n"
    "  --device SPEC         device spec for the sessions (default: $DLRT_DEVICE, else auto)\n"
    "  --strict              fail instead of falling back to another device\n"
    "  --threads N           intra-op threads (default 0: one per core)\n"
    "  --json                print one JSON object instead of lines\n"
    "  --list-passing FILE   write the names of the passing cases to FILE\n"
    "  --expect FILE         FILE lists cases that must pass (one per line, # comments); exit 1\n"
    "                        and name them when any of them does not pass now\n"
    "  --verbose             print each case's name on stderr before it runs\n"
    "  -h, --help            this help\n"
    "\n"
    "exit code: with --expect, 1 when an expected case does not pass, else 0; without it,\n"
    "1 when any case failed (unsupported cases do not count), else 0; 2 on usage errors.\n";

enum class Outcome { kPass, kFail, kUnsupported, kSkip };

const char* outcome_name(Outcome o) {
  switch (o) {
    case Outcome::kPass: return "PASS";
    case Outcome::kFail: return "FAIL";
    case Outcome::kUnsupported: return "UNSUPPORTED";
    case Outcome::kSkip: return "SKIP";
  }
  return "?";
}

struct CaseResult {
  std::string name;
  Outcome outcome = Outcome::kFail;
  std::string reason;
  double ms = 0;
};

// Name of the running case for the crash handler (async-signal-safe to read).
char g_current_case[512] = "";

extern "C" void on_fatal_signal(int sig) {
  const char* head = "\ndlrt conformance: CRASH (fatal signal) while running case ";
  ssize_t ignored = ::write(STDERR_FILENO, head, std::strlen(head));
  ignored = ::write(STDERR_FILENO, g_current_case, std::strlen(g_current_case));
  ignored = ::write(STDERR_FILENO, "\n", 1);
  (void)ignored;
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

void install_crash_handler() {
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
  // Sanitizers print their own reports; keep their handlers.
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) std::signal(sig, on_fatal_signal);
#endif
}

bool is_training_case(const std::string& case_dir_name) {
  std::string n = case_dir_name;
  std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (const char* w : {"adam", "adagrad", "momentum", "nesterov", "_training", "test_gradient_of"})
    if (n.find(w) != std::string::npos) return true;
  return false;
}

std::string case_name(const fs::path& dir) {
  fs::path p = dir.lexically_normal();
  if (p.filename().empty()) p = p.parent_path();
  std::string parent = p.parent_path().filename().string();
  return parent.empty() ? p.filename().string() : parent + "/" + p.filename().string();
}

// Numbered files "<prefix><N>.pb" of a data set folder, in N order.
std::vector<fs::path> numbered_files(const fs::path& dir, const std::string& prefix) {
  std::vector<std::pair<long, fs::path>> found;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    std::string f = e.path().filename().string();
    if (f.rfind(prefix, 0) != 0 || f.size() < prefix.size() + 4 || f.substr(f.size() - 3) != ".pb") continue;
    std::string num = f.substr(prefix.size(), f.size() - prefix.size() - 3);
    if (num.empty() || num.find_first_not_of("0123456789") != std::string::npos || num.size() > 6) continue;
    found.emplace_back(std::stol(num), e.path());
  }
  std::sort(found.begin(), found.end());
  std::vector<fs::path> out;
  for (auto& [n, p] : found) out.push_back(p);
  return out;
}

// ONNX 1.12's test data stores bfloat16 tensors as uint16 (numpy has no
// bfloat16): take the bits as bfloat16 where the model declares bfloat16.
void fix_bfloat16(Value& v, DType declared) {
  if (declared != DType::kBFloat16 || v.kind != Value::Kind::kTensor || v.tensor.dtype() != DType::kUInt16) return;
  auto t = Tensor::allocate(DType::kBFloat16, v.tensor.shape());
  if (!t.ok()) return;
  std::memcpy(t->raw_data(), v.tensor.raw_data(), v.tensor.nbytes());
  v = Value::of(std::move(t).value());
}

// The file kind of a declared value: sequences and optionals have their own
// messages, everything else is a TensorProto.
std::string file_kind(const ModelValueInfo& v) {
  return v.kind == "sequence" || v.kind == "optional" ? v.kind : "tensor";
}

CaseResult unsupported_or_fail(CaseResult r, const Status& s, const std::string& where) {
  r.outcome = s.code() == StatusCode::kUnsupported ? Outcome::kUnsupported : Outcome::kFail;
  r.reason = where + ": " + s.to_string();
  return r;
}

CaseResult run_case(const fs::path& dir, const SessionOptions& options) {
  CaseResult r;
  r.name = case_name(dir);
  std::string model_path = (dir / "model.onnx").string();

  auto session_r = Session::create(model_path, options);
  if (!session_r.ok()) return unsupported_or_fail(r, session_r.status(), "session create");
  const Session& session = **session_r;
  // The model says which inputs/outputs are sequences or optionals.
  const ModelInfo& g = model_info(session);

  std::vector<fs::path> sets;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0) sets.push_back(e.path());
  std::sort(sets.begin(), sets.end());
  if (sets.empty()) {
    r.reason = "no test_data_set_* folder";
    return r;
  }

  for (const auto& set : sets) {
    const std::string set_name = set.filename().string();
    auto in_files = numbered_files(set, "input_");
    auto out_files = numbered_files(set, "output_");
    if (in_files.size() > g.inputs.size()) {
      r.reason = set_name + ": " + std::to_string(in_files.size()) + " input files but the model has " +
                 std::to_string(g.inputs.size()) + " inputs";
      return r;
    }
    std::map<std::string, Value> feeds;
    for (size_t i = 0; i < in_files.size(); ++i) {
      const ModelValueInfo& v = g.inputs[i];
      auto val = read_onnx_value_file(in_files[i].string(), file_kind(v));
      if (!val.ok()) return unsupported_or_fail(r, val.status(), set_name + "/" + in_files[i].filename().string());
      fix_bfloat16(*val, v.dtype);
      feeds[v.name] = std::move(val).value();
    }
    auto outs = session.run_values(feeds);
    if (!outs.ok()) return unsupported_or_fail(r, outs.status(), set_name + ": run");
    if (out_files.size() > outs->size()) {
      r.reason = set_name + ": " + std::to_string(outs->size()) + " outputs, expected " + std::to_string(out_files.size());
      return r;
    }
    for (size_t i = 0; i < out_files.size(); ++i) {
      const ModelValueInfo& v = g.outputs[i];
      auto expected = read_onnx_value_file(out_files[i].string(), file_kind(v));
      if (!expected.ok()) {
        r.reason = set_name + "/" + out_files[i].filename().string() + ": " + expected.status().to_string();
        return r;
      }
      fix_bfloat16(*expected, v.dtype);
      if (auto diff = compare_values(*expected, (*outs)[i])) {
        r.reason = set_name + ": output '" + v.name + "': " + *diff;
        return r;
      }
    }
  }
  r.outcome = Outcome::kPass;
  return r;
}

bool is_case_dir(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p / "model.onnx", ec);
}

Result<std::vector<std::string>> read_name_list(const std::string& path) {
  std::ifstream f(path);
  if (!f) return IoError("cannot read " + path + ": " + std::strerror(errno));
  std::vector<std::string> names;
  std::string line;
  while (std::getline(f, line)) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) line.pop_back();
    size_t start = line.find_first_not_of(" \t");
    if (start == std::string::npos || line[start] == '#') continue;
    names.push_back(line.substr(start));
  }
  return names;
}

}  // namespace

int cmd_conformance(int argc, char** argv) {
  const std::vector<FlagSpec> specs = {{"device", true, false},       {"strict", false, false}, {"threads", true, false},
                                       {"json", false, false},        {"list-passing", true, false},
                                       {"expect", true, false},       {"verbose", false, false}};
  auto parsed = parse_args(argc, argv, 2, specs);
  if (!parsed.ok()) return usage_error("conformance", parsed.status().message());
  const Args& args = *parsed;
  if (args.has("help")) {
    std::fputs(kConformanceHelp, stdout);
    return kExitOk;
  }
  if (args.positional.empty()) return usage_error("conformance", "missing DIR");
  SessionOptions options;
  options.device = args.get("device");
  options.strict = args.has("strict");
  if (args.has("threads")) {
    auto n = parse_nonnegative_int(args.get("threads"), "--threads");
    if (!n.ok()) return usage_error("conformance", n.status().message());
    if (*n > kMaxThreads) return usage_error("conformance", "--threads must be at most " + std::to_string(kMaxThreads));
    options.threads = static_cast<int>(*n);
  }
  std::vector<std::string> expected;
  if (args.has("expect")) {
    auto names = read_name_list(args.get("expect"));
    if (!names.ok()) return usage_error("conformance", "--expect: " + names.status().message());
    expected = std::move(names).value();
  }

  // Collect case folders: each DIR is a case, or holds cases one level down.
  std::vector<fs::path> cases;
  for (const auto& d : args.positional) {
    fs::path p(d);
    std::error_code ec;
    if (!fs::is_directory(p, ec)) return usage_error("conformance", "'" + d + "' is not a folder");
    if (is_case_dir(p)) {
      cases.push_back(p);
      continue;
    }
    std::vector<fs::path> sub;
    for (const auto& e : fs::directory_iterator(p, ec))
      if (e.is_directory() && is_case_dir(e.path())) sub.push_back(e.path());
    if (sub.empty()) return usage_error("conformance", "'" + d + "' holds no test case (no model.onnx in it or its subfolders)");
    std::sort(sub.begin(), sub.end());
    cases.insert(cases.end(), sub.begin(), sub.end());
  }

  // The same case named twice (overlapping globs) runs once.
  {
    std::set<std::string> seen;
    std::vector<fs::path> unique;
    for (const auto& c : cases) {
      std::error_code ec;
      fs::path canon = fs::weakly_canonical(c, ec);
      if (seen.insert(ec ? c.lexically_normal().string() : canon.string()).second) unique.push_back(c);
    }
    cases.swap(unique);
  }

  install_crash_handler();
  const bool json = args.has("json");
  const bool verbose = args.has("verbose");
  std::vector<CaseResult> results;
  int passed = 0, failed = 0, unsupported = 0, skipped = 0;
  for (const auto& c : cases) {
    CaseResult r;
    std::string name = case_name(c);
    if (is_training_case(c.filename().string())) {
      r.name = name;
      r.outcome = Outcome::kSkip;
      r.reason = "training-only";
    } else {
      std::snprintf(g_current_case, sizeof g_current_case, "%s", c.string().c_str());
      if (verbose) std::fprintf(stderr, "RUN %s\n", name.c_str());
      auto t0 = std::chrono::steady_clock::now();
      r = run_case(c, options);
      r.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    }
    switch (r.outcome) {
      case Outcome::kPass: ++passed; break;
      case Outcome::kFail: ++failed; break;
      case Outcome::kUnsupported: ++unsupported; break;
      case Outcome::kSkip: ++skipped; break;
    }
    if (!json) {
      if (r.outcome == Outcome::kPass) std::printf("PASS %s\n", r.name.c_str());
      else std::printf("%s %s: %s\n", outcome_name(r.outcome), r.name.c_str(), r.reason.c_str());
      std::fflush(stdout);
    }
    results.push_back(std::move(r));
  }
  g_current_case[0] = '\0';

  std::set<std::string> passing;
  for (const auto& r : results)
    if (r.outcome == Outcome::kPass) passing.insert(r.name);
  if (args.has("list-passing")) {
    std::ofstream f(args.get("list-passing"), std::ios::trunc);
    for (const auto& n : passing) f << n << "\n";
    f.close();
    if (!f) {
      std::fprintf(stderr, "dlrt conformance: error: cannot write %s\n", args.get("list-passing").c_str());
      return kExitRuntimeError;
    }
  }

  // Regressions against --expect.
  std::map<std::string, const CaseResult*> by_name;
  for (const auto& r : results) by_name[r.name] = &r;
  std::vector<std::string> regressions;
  for (const auto& n : expected) {
    if (passing.count(n)) continue;
    auto it = by_name.find(n);
    regressions.push_back(it == by_name.end()
                              ? n + ": not run (no such case under the given folders)"
                              : n + ": " + outcome_name(it->second->outcome) + " " + it->second->reason);
  }

  if (json) {
    nlohmann::json j;
    j["cases"] = nlohmann::json::array();
    for (const auto& r : results)
      j["cases"].push_back({{"name", r.name}, {"result", outcome_name(r.outcome)}, {"reason", r.reason}, {"ms", r.ms}});
    j["passed"] = passed;
    j["failed"] = failed;
    j["unsupported"] = unsupported;
    j["skipped"] = skipped;
    if (args.has("expect")) j["regressions"] = regressions;
    print_json(j);
  } else {
    std::printf("conformance: %d passed, %d failed, %d unsupported\n", passed, failed, unsupported);
  }
  if (args.has("expect")) {
    if (!regressions.empty()) {
      std::fprintf(stderr, "dlrt conformance: %zu of %zu expected cases do not pass now:\n", regressions.size(), expected.size());
      for (const auto& s : regressions) std::fprintf(stderr, "  REGRESSION %s\n", s.c_str());
      return kExitRuntimeError;
    }
    std::fprintf(stderr, "dlrt conformance: all %zu expected cases pass (%zu passing in total)\n", expected.size(), passing.size());
    return kExitOk;
  }
  return failed ? kExitRuntimeError : kExitOk;
}

}  // namespace dlrt::cli
