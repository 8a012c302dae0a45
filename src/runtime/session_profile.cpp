// dlrt::run_profiled (dlrt/profile.h): a run through the session's own
// executor with the wall time of every node of the graph it runs.
#include "dlrt/profile.h"

#include "runtime/session_internal.h"

namespace dlrt {

Result<std::vector<NodeProfile>> run_profiled(const Session& session, const std::map<std::string, Tensor>& inputs,
                                              RunReport* report) {
  const ir::Graph& graph = session_run_graph(session);
  std::map<std::string, RunValue> values;
  for (const auto& [name, t] : inputs) values[name] = RunValue::of(t);
  std::vector<double> node_ms;
  DLRT_ASSIGN_OR_RETURN(auto out, run_session_profiled(session, values, node_ms, report));
  (void)out;
  std::vector<NodeProfile> nodes;
  nodes.reserve(graph.nodes.size());
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const ir::Node& n = graph.nodes[i];
    NodeProfile p;
    p.node = n.name.empty() ? "#" + std::to_string(i) : n.name;
    p.op_type = n.domain.empty() || n.domain == "ai.onnx" ? n.op_type : n.domain + "." + n.op_type;
    p.ms = i < node_ms.size() ? node_ms[i] : 0.0;
    nodes.push_back(std::move(p));
  }
  return nodes;
}

}  // namespace dlrt
