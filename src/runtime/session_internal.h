// Internal access to a Session for the runtime's own files (dlrt::run_profiled)
// and its tests: runs with RunValues, the graphs it imported and runs. Tools,
// apps and bindings use the public headers instead (check_layers.py).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/run_value.h"
#include "dlrt/placement.h"
#include "dlrt/session.h"
#include "ir/graph.h"

namespace dlrt {

// Like Session::run, with inputs and outputs that may be sequences/optionals.
Result<std::vector<RunValue>> run_session_values(const Session& session, const std::map<std::string, RunValue>& inputs,
                                                 RunReport* report = nullptr);

// The imported graph the session runs.
const ir::Graph& session_graph(const Session& session);

// The graph the executor actually runs: after optimisation and fusion, with
// each accelerator partition as one com.dlrt.Partition node.
const ir::Graph& session_run_graph(const Session& session);

// Like run_session_values, also returning the wall time of every node of
// session_run_graph() (for `dlrt bench --profile`).
Result<std::vector<RunValue>> run_session_profiled(const Session& session, const std::map<std::string, RunValue>& inputs,
                                                   std::vector<double>& node_ms, RunReport* report = nullptr);

}  // namespace dlrt
