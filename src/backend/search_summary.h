// The one-line reason given when a vendor library is not found: what was
// looked for and how many places were searched, with the one attempt worth
// reading (a set environment variable, or a file that exists but did not
// load) when there is one. The full list stays in Availability::tried
// (`dlrt devices --verbose`) and is logged at DLRT_LOG_LEVEL=debug.
#pragma once

#include <string>
#include <vector>

namespace dlrt::backend {

// "OpenVINO runtime (libopenvino_c.so) not found (14 places searched; `dlrt devices --verbose`
// lists them)"; `what` names the library, `tried` holds one "path: outcome" per attempt.
std::string search_failure_summary(const std::string& what, const std::vector<std::string>& tried);

}  // namespace dlrt::backend
