// Time per node of one run (`dlrt bench --profile`).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "dlrt/export.h"
#include "dlrt/session.h"

namespace dlrt {

struct NodeProfile {
  std::string node;     // the node's name, or "#INDEX" where the model names none
  std::string op_type;  // with its domain ("com.microsoft.QAttention") when not ai.onnx
  double ms = 0;        // wall time of this node in the run
};

// Runs `session` once as Session::run does and returns the time of every node
// of the graph it runs (after optimisation and fusion; an accelerator
// partition is one com.dlrt.Partition node), in execution order. Errors as
// Session::run. Thread-safe as Session::run.
DLRT_API Result<std::vector<NodeProfile>> run_profiled(const Session& session,
                                                       const std::map<std::string, Tensor>& inputs,
                                                       RunReport* report = nullptr);

}  // namespace dlrt
