// Placement: which backend devices a device spec asks for, and which nodes of
// a graph go where.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "backend/registry.h"
#include "ir/graph.h"
#include "runtime/device_spec.h"

namespace dlrt {

// A backend device a session may place nodes on.
struct Candidate {
  std::shared_ptr<backend::Backend> backend;
  backend::BackendDevice device;
};

// A requested device that cannot be used, and why.
struct Unavailable {
  std::string requested;  // the spec entry, e.g. "npu" or "openvino:NPU"
  std::string reason;
  std::string fix;
};

// "npu: reason; gpu: reason", each with " (fix: ...)" where one is known and `with_fix`.
std::string join_unavailable(const std::vector<Unavailable>& u, bool with_fix);

struct Resolution {
  std::vector<Candidate> candidates;  // accelerators in priority order (the CPU is implicit)
  std::vector<Unavailable> unavailable;
  bool cpu_requested = false;  // the spec names cpu or auto
  std::vector<std::string> unknown_backends;  // names in the spec no registered backend has
  // Entries naming a device by something other than an index on a backend
  // whose devices are indexes ("cuda:abc"), each with why.
  std::vector<std::string> malformed;
};

// Resolves a spec against the registry and the discovered hardware. `auto`
// means every available accelerator device (GPU first, then NPU, then other
// accelerators), then the CPU. Virtual devices never run, so they are only
// candidates when `for_compile` is set.
Resolution resolve_devices(const DeviceSpec& spec, backend::BackendRegistry& registry,
                           const std::vector<Device>& hardware, bool for_compile = false);

// One contiguous run of nodes (in topological order) placed on one device.
struct PlannedPartition {
  int candidate = -1;          // index into Resolution::candidates; -1 = CPU
  std::vector<int> nodes;      // node indices into the graph
};

struct PartitionPlan {
  std::vector<PlannedPartition> partitions;
  std::vector<int> node_candidate;         // per node: candidate index or -1
  std::vector<std::string> cpu_reasons;    // per node on CPU: why no candidate took it ("" if none was asked)
};

// Assigns each node to the first candidate that supports it, the rest to the
// CPU, and merges neighbours with the same assignment.
PartitionPlan plan_partitions(const ir::Graph& graph, const std::vector<Candidate>& candidates);

// Builds the subgraph of one partition: its inputs are the values it reads
// from outside (constants are copied in), its outputs the values read after it
// or returned by the graph.
std::shared_ptr<ir::Graph> extract_partition(const ir::Graph& graph, const std::vector<int>& nodes);

}  // namespace dlrt
