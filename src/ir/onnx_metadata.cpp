#include "ir/onnx_metadata.h"

#include <onnx/onnx_pb.h>

namespace dlrt::ir {

void read_metadata(const onnx::ModelProto& m, ModelMetadata& out) {
  out.producer_name = m.producer_name();
  out.producer_version = m.producer_version();
  out.domain = m.domain();
  out.description = m.doc_string();
  if (m.has_model_version()) out.version = m.model_version();
  else out.version.reset();
  out.graph_name = m.graph().name();
  out.graph_description = m.graph().doc_string();
  out.custom.clear();
  for (const auto& p : m.metadata_props()) out.custom[p.key()] = p.value();
}

}  // namespace dlrt::ir
