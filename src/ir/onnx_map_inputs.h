// Map graph inputs (ai.onnx.ml DictVectorizer's): dlrt takes one where its
// type is one dlrt holds (int64 or string keys, tensor values) and only
// DictVectorizer reads it, in the main graph, since other ops' shape
// inference in libonnx assumes tensor inputs (MaxUnpool's read a map's
// missing tensor type; found by fuzzing).
#pragma once

#include <onnx/onnx_pb.h>

#include "dlrt/status.h"

namespace dlrt::ir {

// Ok, or kUnsupported naming the input and why. `main_graph`: g is the
// model's graph, not a subgraph.
Status check_map_input(const onnx::GraphProto& g, const onnx::ValueInfoProto& v, bool main_graph);

}  // namespace dlrt::ir
