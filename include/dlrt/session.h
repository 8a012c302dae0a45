// dlrt::Session: load an ONNX model once, run it many times.
//
// Thread-safety: create() is not shared state; run() may be called from many
// threads at once on one Session (each call has its own intermediate buffers).
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dlrt/export.h"
#include "dlrt/limits.h"
#include "dlrt/status.h"
#include "dlrt/tensor.h"

namespace dlrt {

struct SessionOptions {
  // Intra-op threads for the CPU backend; 0 means one per core; at most
  // kMaxThreads.
  int threads = 0;
  // Device spec: auto, cpu, gpu, npu, a backend name or backend:device,
  // comma-separated as a priority list. Empty means DLRT_DEVICE, else auto.
  std::string device;
  // Turn every fallback into an error. Also set by DLRT_STRICT=1.
  bool strict = false;
  // Run graph optimisations (constant folding, fusion) at create time.
  bool optimize = true;
  // Serve on the CPU at once while accelerator partitions compile in the
  // background; switch once an accelerator's first result agrees with the
  // CPU's. Ignored in strict mode (which compiles before returning).
  bool warm_start = false;
  // Precision of the CPU backend's float matmuls and convolutions against
  // constant weights (and of large attention heads): "f32" (fp32 FMAs) or
  // "bf16x3" (Intel AMX tiles, each fp32 operand split into two bf16 parts:
  // about 1e-5 relative error, several times faster; f32 where the CPU has
  // no AMX-BF16) or "bf16" (one bf16 product per term with fp32 sums on
  // AVX512-BF16: about 1e-3 relative error; f32 where the CPU lacks it).
  // "auto": the fastest of these the CPU runs whose outputs on canary inputs
  // stay within a bound of f32's, measured at create (dlrt/precision_choice.h).
  // Empty: DLRT_CPU_PRECISION, then the config file's
  // cpu_precision, else "f32". Reported per CPU partition.
  std::string cpu_precision;
  // The input sets "auto" measures on; empty: generated from the inputs'
  // declared types and shapes (dynamic dims 2 first, else 8).
  std::vector<std::map<std::string, Tensor>> canary_inputs;
  // Options handed to accelerator backends when they compile a partition (part
  // of the blob-cache key); keys a backend does not know are ignored. OpenVINO:
  // performance_hint (LATENCY/THROUGHPUT), default_performance_hint (a
  // preference the backend may decline, see docs/openvino.md),
  // inference_precision, infer_requests, ov.<PROPERTY>.
  std::map<std::string, std::string> backend_options;
  // The largest single tensor a run may allocate, in bytes: an output or
  // buffer a model's shapes or an input's size would make larger fails with
  // kOutOfMemory ("node 'y' (Resize): an output of shape [...] would allocate
  // 19.2 GiB, over the 4.0 GiB limit (...)") before anything is allocated.
  // 0: DLRT_MAX_TENSOR_MB, then the config file's max_tensor_mb, else half the
  // memory available to the process (dlrt::memory_info(), include/dlrt/memory.h:
  // the least of physical memory, the memory cgroup's limit and RLIMIT_AS, less
  // what the process holds).
  uint64_t max_tensor_bytes = 0;
  // The outputs the session computes, by name (kept in the model's order);
  // empty: all. Nodes only the other outputs need are dropped, and so are the
  // inputs only they read: a run need not feed those. kInvalidArgument at
  // create for a name that is not an output of the model.
  std::vector<std::string> outputs;
};

// One model input or output as the model declares it. Dynamic dims are -1
// and named in dim_names (empty string where the model names none).
struct TensorInfo {
  std::string name;
  DType dtype = DType::kUndefined;
  std::vector<int64_t> shape;
  std::vector<std::string> dim_names;
  // False for values that are not tensors (sequences, optionals, maps).
  bool is_tensor = true;
  // The type as ONNX (and ONNX Runtime's NodeArg.type) writes it:
  // "tensor(float)", "seq(tensor(int64))", "map(string,tensor(float))",
  // "seq(map(int64,tensor(float)))", "optional(tensor(float))".
  std::string type;
};

// One input or output value of any kind, for Session::run_values: a tensor,
// a sequence of tensors, a map or a sequence of maps (what traditional-ML
// models read and write: DictVectorizer reads a map, ZipMap writes a
// sequence of maps), or nothing (an absent optional).
struct Value {
  enum class Kind { kNone, kTensor, kSequence, kMap, kMapSequence };
  Kind kind = Kind::kNone;
  Tensor tensor;                 // kTensor
  std::vector<Tensor> sequence;  // kSequence
  // kMap: keys[i] -> values[i], both 1-D of one length (int64 or string keys).
  // kMapSequence: maps sharing their keys; map r is keys[i] -> values[r, i]
  // (values 2-D: [maps, keys]).
  Tensor keys, values;

  static Value of(Tensor t) {
    Value v;
    v.kind = Kind::kTensor;
    v.tensor = std::move(t);
    return v;
  }
  static Value of_map(Tensor keys, Tensor values) {
    Value v;
    v.kind = Kind::kMap;
    v.keys = std::move(keys);
    v.values = std::move(values);
    return v;
  }
};

// Where one part of the graph ran and how that went.
struct PartitionReport {
  std::string backend;  // "cpu"
  std::string device;   // "cpu:0"
  int node_count = 0;
  bool degraded = false;  // true when it was meant for another device
  std::string reason;     // why it degraded (empty otherwise)
  double time_ms = 0;
  // CPU partitions: the precision their float matmuls run in ("f32",
  // "bf16x3", "bf16 (amx)", "bf16 (avx512_bf16)" or "f32 (bf16 unavailable: WHY)", see
  // SessionOptions::cpu_precision), then ", int8 KERNEL" when
  // the partition has 8-bit integer products (KERNEL: avx512-vnni, avx-vnni,
  // avx2 or generic, the dot-product kernel this CPU runs) and ", float16
  // storage" when it holds float16/bfloat16 values (computed in float32);
  // empty for accelerators.
  std::string precision;
  // CPU partitions: the vector instruction set their float kernels ran with
  // ("avx512", "avx2", "neon" on aarch64, or "generic"): the CPU's widest, capped by DLRT_CPU_ISA.
  // Empty for accelerators.
  std::string vector_isa;
};

// Bounds of one run: it stops with kCancelled (promptly: checked between the
// nodes it executes, inside Loop/Scan bodies too; a node already running on
// an accelerator finishes first) once timeout_ms passes or *cancel turns
// true (set from any thread). The session stays usable.
struct RunOptions {
  double timeout_ms = 0;                     // 0: none
  const std::atomic<bool>* cancel = nullptr;  // may be null
  // Per-item dynamic quantization: the valid (unpadded) rows of each batch
  // item, padding on the right (e.g. each text's token count). Dynamic
  // quantizers then take one scale and zero point per item over its valid
  // rows, so an item's result does not depend on its batch-mates (CPU only;
  // a graph whose quantizer cannot do that fails with kUnsupported; see
  // docs/quantized.md). Empty: one per tensor, as ONNX says.
  std::vector<int64_t> item_lengths;
};

struct RunReport {
  std::vector<PartitionReport> partitions;
  double run_ms = 0;
};

class SessionImpl;

class DLRT_API Session {
 public:
  // Loads, checks and prepares the model at `path`; external data is read
  // relative to the model's folder. Errors: kIoError (unreadable),
  // kInvalidModel (not ONNX, broken graph), kUnsupported (op or opset),
  // kInvalidArgument (an option out of range, e.g. threads above kMaxThreads).
  static Result<std::unique_ptr<Session>> create(const std::string& path,
                                                 const SessionOptions& options = {});
  // Same from serialized bytes; external data, if any, is resolved relative
  // to `base_dir` (empty: external data is rejected).
  static Result<std::unique_ptr<Session>> create_from_bytes(const std::string& bytes,
                                                            const SessionOptions& options = {},
                                                            const std::string& base_dir = "");
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  const std::vector<TensorInfo>& inputs() const;
  const std::vector<TensorInfo>& outputs() const;

  // Runs the model. `inputs` maps input names to tensors (views are fine);
  // every graph input without an initializer must be present. Returns the
  // outputs in the model's output order. Errors: kInvalidArgument for an
  // unknown input name, a missing input, a wrong dtype or rank or a
  // conflicting dim; kRuntimeError when a kernel fails.
  Result<std::vector<Tensor>> run(const std::map<std::string, Tensor>& inputs,
                                  RunReport* report = nullptr) const;
  // The same with bounds (RunOptions); kCancelled when one stopped it.
  Result<std::vector<Tensor>> run(const std::map<std::string, Tensor>& inputs, const RunOptions& options,
                                  RunReport* report = nullptr) const;

  // Runs a model whose inputs or outputs are not all tensors (sequences,
  // maps, optionals); works for any model. Errors as run().
  Result<std::vector<Value>> run_values(const std::map<std::string, Value>& inputs, const RunOptions& options = {},
                                        RunReport* report = nullptr) const;

  // As above, writing into caller-provided outputs: each entry of `outputs`
  // names a model output; a valid tensor there must have the right dtype and
  // shape and receives the values, an invalid (empty) one is replaced. From
  // the second run with the same input shapes, the CPU kernel that computes
  // an output writes it straight into its buffer (no output allocation, no
  // copy); a buffer must not overlap the inputs.
  Status run_into(const std::map<std::string, Tensor>& inputs,
                  std::map<std::string, Tensor>& outputs, RunReport* report = nullptr) const;
  Status run_into(const std::map<std::string, Tensor>& inputs, std::map<std::string, Tensor>& outputs,
                  const RunOptions& options, RunReport* report = nullptr) const;

  // The report of how the session was placed (before any run).
  RunReport placement() const;

 private:
  friend const SessionImpl& session_impl(const Session& session);  // for dlrt's own tools
  explicit Session(std::unique_ptr<SessionImpl> impl);
  std::unique_ptr<SessionImpl> impl_;
};

}  // namespace dlrt
