#include "backends/gpu/partition.h"

#include "backends/gpu/executor.h"
#include "ir/onnx_export.h"
#include "ir/onnx_import.h"

namespace dlrt::gpu {

std::vector<backend::NodeSupport> node_support(const ir::Graph& graph, const backend::Availability& availability,
                                               const std::string& name) {
  std::vector<backend::NodeSupport> out(graph.nodes.size());
  if (!availability.available) {
    for (auto& s : out) s.reason = name + " is unavailable: " + availability.reason;
    return out;
  }
  Classification c = classify(graph);
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    out[i].supported = c.cls[i] != NodeClass::kUnsupported;
    out[i].reason = c.reason[i];
  }
  return out;
}

Result<backend::Blob> partition_blob(const ir::Graph& subgraph, const std::string& name, const std::string& format) {
  Classification c = classify(subgraph);
  for (size_t i = 0; i < subgraph.nodes.size(); ++i)
    if (c.cls[i] == NodeClass::kUnsupported)
      return Unsupported(name + " cannot run " + subgraph.nodes[i].describe() + ": " + c.reason[i]);
  DLRT_ASSIGN_OR_RETURN(std::string bytes, ir::export_onnx(subgraph));
  backend::Blob b;
  b.format = format;
  b.data.assign(bytes.begin(), bytes.end());
  return b;
}

Result<ir::Model> partition_model(const backend::Blob& blob, const backend::BackendDevice& device,
                                  const std::string& format) {
  if (device.is_virtual)
    return Status(StatusCode::kDeviceUnavailable, device.spec() + " is a virtual device: it can compile, never execute");
  if (blob.format != format)
    return Status(StatusCode::kBackendError, "blob format '" + blob.format + "' is not " + format + ": recompile");
  std::string bytes(blob.data.begin(), blob.data.end());
  return ir::import_onnx_bytes(bytes, "");
}

Result<int> device_index(const backend::BackendDevice& device, size_t count, const backend::Availability& availability,
                         const std::string& name) {
  if (!availability.available)
    return Status(StatusCode::kDeviceUnavailable,
                  name + " is unavailable: " + availability.reason + ". Fix: " + availability.fix);
  const std::string& n = device.name;
  int index = -1;
  if (!n.empty() && n.size() <= 6 && n.find_first_not_of("0123456789") == std::string::npos) index = std::stoi(n);
  if (index < 0 || index >= static_cast<int>(count))
    return Status(StatusCode::kDeviceUnavailable, name + " has no device '" + n + "'");
  return index;
}

}  // namespace dlrt::gpu
