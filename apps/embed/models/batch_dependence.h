// Whether a model's answer for one row of a batch depends on the other rows:
// dynamic quantization with one scale per tensor (DynamicQuantizeLinear and
// the contrib ops built on it) computes that scale over the whole activation
// tensor, so padding and batch-mates change every row's result. The Embedder
// runs such models one text at a time (see docs/embed.md, "Batching").
//
// The scan reads the ONNX file's node op types (the main graph and the
// subgraphs of its nodes' attributes) without loading the model: it seeks
// over everything else, so a large file costs a few reads.
#pragma once

#include <filesystem>
#include <string>

#include "dlrt/status.h"

namespace dlrt::embed {

// The first node whose semantics are batch-dependent, as "OpType" (with its
// domain, "com.microsoft.DynamicQuantizeMatMul", when it has one); "" when
// none. kIoError when the file cannot be read, kInvalidModel when it is not a
// protobuf message.
Result<std::string> batch_dependent_op(const std::filesystem::path& model_path);

}  // namespace dlrt::embed
