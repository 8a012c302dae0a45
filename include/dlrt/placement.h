// Where each node of a session's model was placed and, when it stayed on the
// CPU although an accelerator was asked for, why (what `dlrt inspect
// --device` prints under "on cpu, and why").
#pragma once

#include <string>
#include <vector>

#include "dlrt/export.h"

namespace dlrt {

class Session;

struct NodePlacement {
  std::string node;        // the node's name (may be empty in the model)
  std::string op_type;     // with its domain ("com.microsoft.QAttention") when not ai.onnx
  int partition = 0;       // index into Session::placement().partitions
  std::string cpu_reason;  // empty when placed on an accelerator or when nothing else was asked for
};

// One entry per node of the model's graph as the session planned it (after
// optimisation), in plan order. Valid as long as the session.
DLRT_API const std::vector<NodePlacement>& node_placement(const Session& session);

}  // namespace dlrt
