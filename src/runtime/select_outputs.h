// SessionOptions::outputs: a session that computes only some of the model's
// outputs (e.g. one tower of a two-tower model exported as one graph).
#pragma once

#include <string>
#include <vector>

#include "dlrt/status.h"
#include "ir/graph.h"

namespace dlrt {

// Keeps the graph outputs `names` lists (in the model's order) and drops the
// nodes only the others need, the inputs only those nodes read (a run then
// need not feed them) and the constants nothing reads any more. Empty
// `names`: the graph is left as it is. kInvalidArgument for a name that is
// not one of the model's outputs.
Status select_outputs(ir::Graph& g, const std::vector<std::string>& names);

}  // namespace dlrt
