// The contract every backend implements (modelled on ExecuTorch's delegate
// interface, extended for partitioning and devices). The runtime calls these;
// a backend never calls the runtime.
//
// Life of a partition: supports() picks nodes -> compile() turns the
// partition's subgraph into an opaque Blob (possibly cached on disk, possibly
// on a virtual device) -> init() turns a Blob into an Executable -> execute()
// runs it, many times, from many threads -> destroy() frees it.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "dlrt/device.h"
#include "dlrt/status.h"
#include "dlrt/tensor.h"
#include "ir/graph.h"

namespace dlrt::backend {

// Why a backend can or cannot be used, kept with the time it was decided.
struct Availability {
  bool available = false;
  std::string reason;                // when unavailable: what is missing
  std::string fix;                   // when unavailable: what the user can do
  std::string library_path;          // the vendor library loaded, if any
  std::string version;               // the vendor runtime's version, if known
  // How far the release is trusted: "tested release", or the verdict of the
  // compatibility check of an untested one (backend/canary.h).
  std::string compatibility;
  std::vector<std::string> tried;    // paths tried while loading
  std::chrono::system_clock::time_point checked_at{};
};

// A device as one backend drives it.
struct BackendDevice {
  std::string backend;  // "openvino"
  std::string name;     // the backend's own name for it: "NPU", "GPU.0", "0", "cpu"
  DeviceType type = DeviceType::kCpu;
  bool is_virtual = false;           // can compile, never execute
  std::optional<Device> hardware;    // the discovered device it drives, if matched
  std::map<std::string, std::string> metadata;  // same keys as Device::metadata

  std::string spec() const { return backend + ":" + name; }  // "openvino:NPU"
};

// Per-node answer of supports().
struct NodeSupport {
  bool supported = false;
  std::string reason;  // why not, e.g. "op Einsum is not implemented", "float64 not supported"
};

// Options that change what compile() produces (part of the blob cache key).
struct CompileOptions {
  std::map<std::string, std::string> values;  // e.g. {"performance_hint", "LATENCY"}
  std::string get(const std::string& k, const std::string& def = "") const {
    auto it = values.find(k);
    return it == values.end() ? def : it->second;
  }
  std::string to_string() const;  // "k=v;k=v", sorted: stable for cache keys
};

// What compile() produces; opaque to everyone but its backend.
struct Blob {
  std::string format;  // backend-defined tag, e.g. "openvino-export-v1"
  std::vector<uint8_t> data;
};

// A backend-made object that init() returns and destroy() frees.
class Executable {
 public:
  virtual ~Executable() = default;
};

class Backend {
 public:
  virtual ~Backend() = default;

  // Short lowercase name used in device specs and reports: "cpu", "openvino".
  virtual std::string name() const = 0;

  // True when its devices are named by index ("0", "1", ...): a spec naming
  // one of them by anything else ("cuda:abc") is malformed, whether or not the
  // vendor runtime is installed. Needs no vendor runtime.
  virtual bool devices_are_indexes() const { return false; }

  // Loads the vendor runtime on the first call (thread-safe; later calls
  // return the cached answer). refresh=true forgets a failure and tries again,
  // so fixing the environment needs no restart. Never throws, never aborts.
  virtual Availability is_available(bool refresh = false) = 0;

  // Pairs the backend with the discovered `hardware` it can drive; may add
  // devices only it sees (metadata discovered_by = its name) and virtual
  // devices (is_virtual) for ahead-of-time compiles. Empty when unavailable.
  // Thread-safe.
  virtual std::vector<BackendDevice> devices(const std::vector<Device>& hardware) = 0;

  // One NodeSupport per node of `graph` (same order). Thread-safe, no side effects.
  virtual std::vector<NodeSupport> supports(const ir::Graph& graph, const BackendDevice& device) = 0;

  // Compiles a partition. `subgraph` is self-contained: its inputs are the
  // values crossing into the partition, its constants are initializers.
  // Errors: kDeviceUnavailable (runtime missing), kUnsupported (something in
  // the subgraph it cannot take after all), kBackendError (vendor failure).
  // May run on a virtual device. Thread-safe.
  virtual Result<Blob> compile(const ir::Graph& subgraph, const BackendDevice& device,
                               const CompileOptions& options) = 0;

  // Makes an Executable from a blob. Must return its failure as a Status
  // (never log and continue). Refuses virtual devices (kDeviceUnavailable)
  // and blobs it cannot use (kBackendError: stale/foreign format). The caller
  // owns the result until it passes it to destroy().
  virtual Result<Executable*> init(const Blob& blob, const CompileOptions& options, const BackendDevice& device) = 0;

  // Runs `exe` on host tensors in subgraph-input order; returns the outputs in
  // subgraph-output order. Thread-safe per Executable unless
  // max_concurrent_runs() says otherwise.
  virtual Result<std::vector<Tensor>> execute(Executable* exe, std::span<const Tensor> inputs) = 0;

  // How many execute() calls one Executable takes at once; 0 = no limit.
  virtual int max_concurrent_runs(const Executable* exe) const { return 0; }

  // Frees everything init() made for `exe`. Called exactly once per Executable.
  virtual void destroy(Executable* exe) = 0;
};

}  // namespace dlrt::backend
