// The descriptive fields an ONNX model carries (ModelProto's producer, domain,
// doc_string, model_version and metadata_props, the main graph's name and
// doc_string), as a Session read them at create time.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "dlrt/export.h"

namespace dlrt {

class Session;

struct ModelMetadata {
  std::string producer_name;     // ModelProto.producer_name ("pytorch", "skl2onnx", ...)
  std::string producer_version;  // ModelProto.producer_version
  std::string domain;            // ModelProto.domain
  std::string description;       // ModelProto.doc_string
  std::optional<int64_t> version;  // ModelProto.model_version; nullopt when the model sets none
  std::string graph_name;         // GraphProto.name of the main graph
  std::string graph_description;  // GraphProto.doc_string of the main graph
  std::map<std::string, std::string> custom;  // ModelProto.metadata_props (key -> value)
};

// The metadata of the model `session` was created from; valid as long as the session.
DLRT_API const ModelMetadata& model_metadata(const Session& session);

}  // namespace dlrt
