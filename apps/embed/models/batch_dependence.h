// Whether a model's answer for one row of a batch depends on the other rows:
// dynamic quantization with one scale per tensor (DynamicQuantizeLinear and
// the contrib ops built on it) computes that scale over the whole activation
// tensor, so padding and batch-mates change every row's result. The Embedder
// runs such models one text at a time (see docs/embed.md, "Batching").
#pragma once

#include <string>

#include "dlrt/model_info.h"

namespace dlrt::embed {

// A batch-dependent op of the model (main graph or a subgraph), as "OpType"
// (with its domain, "com.microsoft.DynamicQuantizeMatMul", when it has one);
// "" when it has none. From the model's op counts (dlrt::model_info).
std::string batch_dependent_op(const ModelInfo& model);

}  // namespace dlrt::embed
