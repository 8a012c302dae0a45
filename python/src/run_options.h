// dlrt.RunOptions: ONNX Runtime's RunOptions for Session.run(output_names,
// feeds, run_options). `terminate` set from any thread stops the runs that
// use these options (dlrt::RunOptions::cancel: dlrt.Cancelled).
#pragma once

#include <atomic>
#include <map>
#include <string>

namespace dlrt::python {

struct PyRunOptions {
  std::atomic<bool> terminate{false};
  int log_severity_level = -1;
  int log_verbosity_level = 0;
  std::string logid;
  bool only_execute_path_to_fetches = false;
  std::map<std::string, std::string> config;  // add_run_config_entry (kept, not acted on)
};

}  // namespace dlrt::python
