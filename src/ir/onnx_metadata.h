// The model's descriptive fields (dlrt/model_metadata.h) from its ModelProto.
#pragma once

#include "dlrt/model_metadata.h"

namespace onnx {
class ModelProto;
}

namespace dlrt::ir {

// Producer, domain, doc_string, model_version, graph name and doc_string,
// metadata_props: `out` is overwritten.
void read_metadata(const onnx::ModelProto& m, ModelMetadata& out);

}  // namespace dlrt::ir
