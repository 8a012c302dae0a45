// The compatibility check ("canary") of a vendor runtime release that dlrt
// was not tested with. A crash inside a vendor library cannot be caught in
// the process, so before a backend trusts such a release it runs `dlrt canary
// BACKEND` in a child process: the child compiles and runs a small built-in
// model on the backend and compares it with dlrt's CPU backend. A crash, a
// hang (no answer within the timeout) or a mismatch there makes the backend
// unavailable in the parent, with the reason; the parent never runs the
// release's code on a model before the check passed.
//
// The verdict is cached per backend and vendor version string under
// <cache folder>/canary/, so the check runs once per release and machine.
//
// Settings (environment):
//   DLRT_CANARY=auto|recheck|skip  auto (default): use the cached verdict or
//                     check; recheck: check again and replace the cached
//                     verdict; skip: trust the release unchecked
//   DLRT_CANARY_TIMEOUT_S=N  how long the child may take (default 120 s)
//   DLRT_CANARY_EXE=PATH     the dlrt executable to run as the child (default:
//                     `dlrt` beside this process's executable or library, or in
//                     ../bin)
//
// Thread-safety: check_release may be called from several threads; each call
// runs (or reads) the check on its own.
#pragma once

#include <string>
#include <vector>

namespace dlrt::backend {

struct CanaryRequest {
  std::string backend;    // "openvino": the child runs `dlrt canary openvino`
  std::string vendor;     // "OpenVINO", for messages
  std::string version;    // the vendor runtime's full version string (the cache key)
  std::string cache_dir;  // dlrt's cache folder; empty when the cache is off (nothing is kept)
};

struct CanaryVerdict {
  enum class Kind { kPassed, kFailed, kSkipped };
  Kind kind = Kind::kFailed;
  bool cached = false;   // read from the cache, not checked now
  std::string reason;    // kFailed: what happened ("the child died with SIGSEGV ...")
  std::string checked_at;  // UTC time of the check, "2026-11-25T23:50:00Z"

  // One line for `dlrt devices`: "passed dlrt's compatibility check (2026-...; cached)".
  std::string summary() const;
};

// True in the child that runs a check (DLRT_CANARY_CHILD=1): there the
// backend under test is trusted, or the check would recurse.
bool in_canary_child();

// The cached verdict, or a new check in a child process.
CanaryVerdict check_release(const CanaryRequest& request);

// Where check_release looks for the dlrt executable, in order.
std::vector<std::string> canary_exe_candidates();

}  // namespace dlrt::backend
