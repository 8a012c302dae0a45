// Progress of a long CLI job on stderr: "embedding 1200/5000 texts (24%)"
// redrawn in place at most a few times a second, then a one-line summary.
// On when stderr is a terminal; --quiet turns it off, and --progress (or
// DLRT_PROGRESS=1) turns it on where stderr is not a terminal (logs, tests).
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

namespace dlrt::cli {

// Whether to show progress: `quiet` wins, then `forced` or DLRT_PROGRESS=1 / 0,
// else whether stderr is a terminal.
bool progress_wanted(bool quiet, bool forced);

class Progress {
 public:
  // `what`: "embedding"; `unit`: "texts"; nothing is printed when !enabled.
  Progress(bool enabled, std::string what, std::string unit, size_t total);
  // `done` of the total are finished; redraws when enough time passed.
  void update(size_t done);
  // Ends the progress line and prints `summary` on its own line.
  void finish(const std::string& summary);
  bool enabled() const { return enabled_; }
  double seconds() const;  // since construction

 private:
  bool enabled_;
  bool drawn_ = false;
  std::string what_, unit_;
  size_t total_;
  std::chrono::steady_clock::time_point start_, last_;
};

}  // namespace dlrt::cli
