// select_outputs (select_outputs.h).
#include "runtime/select_outputs.h"

#include <algorithm>
#include <set>

namespace dlrt {

Status select_outputs(ir::Graph& g, const std::vector<std::string>& names) {
  if (names.empty()) return Status::Ok();
  std::set<std::string> wanted(names.begin(), names.end());
  std::vector<ir::ValueId> outputs;
  std::string all;
  for (ir::ValueId v : g.outputs) {
    const std::string& name = g.values[v].name;
    all += (all.empty() ? "" : ", ") + name;
    if (wanted.erase(name)) outputs.push_back(v);
  }
  if (!wanted.empty())
    return InvalidArgument("the outputs selected include \"" + *wanted.begin() +
                           "\", which is not an output of the model (its outputs: " + all + ")");
  g.outputs = std::move(outputs);

  // Backwards over the (topologically sorted) nodes: a node is kept when a
  // kept node or a selected output reads one of its outputs.
  std::vector<bool> needed(g.values.size(), false);
  for (ir::ValueId v : g.outputs) needed[v] = true;
  std::vector<bool> keep(g.nodes.size(), false);
  for (size_t k = g.nodes.size(); k-- > 0;) {
    const ir::Node& n = g.nodes[k];
    keep[k] = std::any_of(n.outputs.begin(), n.outputs.end(), [&](ir::ValueId o) { return o >= 0 && needed[o]; });
    if (!keep[k]) continue;
    for (ir::ValueId in : n.inputs)
      if (in >= 0) needed[in] = true;
    for (ir::ValueId c : g.implicit_inputs(n)) needed[c] = true;
  }
  std::vector<ir::Node> kept;
  for (size_t k = 0; k < g.nodes.size(); ++k)
    if (keep[k]) kept.push_back(std::move(g.nodes[k]));
  g.nodes = std::move(kept);
  std::erase_if(g.inputs, [&](ir::ValueId v) { return !needed[v]; });
  // The dropped nodes' weights free their memory.
  for (size_t v = 0; v < g.values.size(); ++v)
    if (!needed[v] && g.values[v].constant) g.values[v].constant.reset();
  return g.topological_sort();
}

}  // namespace dlrt
