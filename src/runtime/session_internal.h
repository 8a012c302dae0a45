// Internal access to a Session for dlrt's own tools (conformance runner,
// inspect): runs with RunValues, so sequence and optional inputs/outputs work.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/run_value.h"
#include "dlrt/session.h"
#include "ir/graph.h"

namespace dlrt {

// Like Session::run, with inputs and outputs that may be sequences/optionals.
Result<std::vector<RunValue>> run_session_values(const Session& session, const std::map<std::string, RunValue>& inputs,
                                                 RunReport* report = nullptr);

// The imported graph the session runs.
const ir::Graph& session_graph(const Session& session);

}  // namespace dlrt
