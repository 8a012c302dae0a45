// Whether a model's answer for one row of a batch depends on the other rows:
// dynamic quantization with one scale per tensor (DynamicQuantizeLinear and
// the contrib ops built on it) computes that scale over the whole activation
// tensor, so padding and batch-mates change every row's result. The Embedder
// runs such models with int8 scales per text where the runtime can
// (RunOptions::item_lengths), else one text at a time (docs/embed-batching.md).
#pragma once

#include <functional>
#include <string>

#include "dlrt/model_info.h"
#include "dlrt/session.h"

namespace dlrt::embed {

// A batch-dependent op of the model (main graph or a subgraph), as "OpType"
// (with its domain, "com.microsoft.DynamicQuantizeMatMul", when it has one);
// "" when it has none. From the model's op counts (dlrt::model_info).
std::string batch_dependent_op(const ModelInfo& model);

// Whether every partition of a session runs on the CPU backend.
bool runs_on_cpu(const RunReport& placement);

// Why a batch-dependent model cannot run padded batches with int8 scales per
// text (RunOptions::item_lengths), "" when it can: its session is not all on
// the CPU, or `run_two` (a run of two texts of different lengths with
// item_lengths set) fails with kUnsupported, whose message is the reason.
// Another error of `run_two` is returned.
Result<std::string> per_item_refusal(const RunReport& placement, const std::function<Status()>& run_two);

}  // namespace dlrt::embed
