// The parts of the backend contract every GPU backend answers the same way:
// which nodes it takes (the shared classification), the blob a compile makes
// (the partition's subgraph as ONNX, checked first), the model init() reads
// back from it, and the device index a BackendDevice names.
//
// Thread-safety: free functions without shared state.
#pragma once

#include <string>
#include <vector>

#include "backend/backend.h"
#include "ir/graph.h"

namespace dlrt::gpu {

// supports(): per node whether the GPU kernels run it and why not; every node
// refused with the reason when the backend `name` is unavailable.
std::vector<backend::NodeSupport> node_support(const ir::Graph& graph, const backend::Availability& availability,
                                               const std::string& name);

// compile(): the subgraph as ONNX bytes in a blob of `format`, or kUnsupported
// naming the first node the kernels cannot run.
Result<backend::Blob> partition_blob(const ir::Graph& subgraph, const std::string& name, const std::string& format);

// init(): the model in a blob partition_blob made. Refuses a virtual device
// (kDeviceUnavailable) and a blob of another format (kBackendError).
Result<ir::Model> partition_model(const backend::Blob& blob, const backend::BackendDevice& device,
                                  const std::string& format);

// The index `device.name` gives ("0", "1", ...) among `count` devices, or
// kDeviceUnavailable: the backend is unavailable (with its reason and fix) or
// has no such device.
Result<int> device_index(const backend::BackendDevice& device, size_t count, const backend::Availability& availability,
                         const std::string& name);

}  // namespace dlrt::gpu
