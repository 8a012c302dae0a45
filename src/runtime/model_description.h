// dlrt::ModelInfo (dlrt/model_info.h) of an imported model: what
// Session::create keeps for model_info() and read_model_info() returns.
#pragma once

#include "dlrt/model_info.h"
#include "ir/graph.h"

namespace dlrt {

// Walks the main graph and every subgraph; `metadata` is copied in.
ModelInfo describe_model(const ir::Model& model, const ModelMetadata& metadata);

}  // namespace dlrt
