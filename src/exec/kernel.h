// The kernel contract between the executor and the kernels it runs.
//
// The CPU backend supplies the kernels (backends/cpu/builtin_kernels.cpp
// registers them in a KernelRegistry); the executor (exec/executor.h) looks
// each node up in the registry it is given and runs it. A kernel is created once per node when a session is prepared (create may
// validate attributes and pre-compute; it must fail with a Status, never
// abort) and then computed on every run. compute() must be thread-safe: one
// kernel object serves concurrent runs of the same session, so per-run state
// lives on the stack or in the context, never in members.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/memory_limit.h"
#include "core/run_value.h"
#include "core/thread_pool.h"
#include "dlrt/status.h"
#include "dlrt/tensor.h"
#include "ir/graph.h"

namespace dlrt::exec {

class KernelContext;

class OpKernel {
 public:
  virtual ~OpKernel() = default;
  virtual Status compute(KernelContext& ctx) const = 0;

  // Constant data a kernel no longer needs. A kernel built from constant
  // input `input` (ConstantKernelFactory) that keeps its own copy of all it
  // reads of it (packed weights) answers true. When every node reading a
  // constant does, an executor that owns the graph's constants
  // (Executor::create_freeing_constants) calls drop_constant on each of them
  // and frees the constant's data. From then on the kernel gets, in place of
  // that input, the constant's stand-in (freed_constant: its dtype and shape,
  // no data), and must not read its data.
  virtual bool can_drop_constant(size_t input) const {
    (void)input;
    return false;
  }
  // Lets go of the kernel's own references to the data of constant input
  // `input` (after can_drop_constant(input) said true), before any run.
  virtual void drop_constant(size_t input) { (void)input; }
};

// The stand-in for a constant whose data an executor freed: its dtype and
// shape, raw_data() null.
inline Tensor freed_constant(const Tensor& t) { return Tensor::view(t.dtype(), t.shape(), nullptr); }
inline bool is_freed_constant(const Tensor& t) { return t.valid() && t.size() > 0 && t.raw_data() == nullptr; }

// Whether `t`, a run's input where a kernel was built from a constant with
// data `data` and shape `shape`, is that constant: the very tensor, or its
// stand-in once an executor freed it.
inline bool is_built_constant(const Tensor& t, const void* data, const Shape& shape) {
  return t.shape() == shape && (t.raw_data() == data || is_freed_constant(t));
}

// Runs a subgraph (an If branch, a Loop body) with the given inputs; values
// it captures from enclosing graphs are resolved by the executor.
using SubgraphRunner =
    std::function<Result<std::vector<RunValue>>(const ir::Graph& graph, std::vector<RunValue> inputs)>;

// Where allocate_output gets memory: the executor plugs in its planned arena.
// Must return a zero-filled tensor of exactly the requested dtype and shape.
class OutputAllocator {
 public:
  virtual ~OutputAllocator() = default;
  virtual Result<Tensor> allocate(size_t output_index, DType dtype, Shape shape) = 0;
  // Like allocate, but the contents may be garbage: for kernels that write
  // every element. The default zero-fills anyway.
  virtual Result<Tensor> allocate_uninitialized(size_t output_index, DType dtype, Shape shape) {
    return allocate(output_index, dtype, std::move(shape));
  }
};

// Per-call view of one node's inputs and outputs. Owned by the executor.
// `inputs` is borrowed, not copied (the executor builds it once per run, and
// a copy per node would allocate): it must outlive the context.
class KernelContext {
 public:
  KernelContext(const ir::Node& node, std::span<const RunValue* const> inputs, std::vector<RunValue>& outputs,
                ThreadPool& pool, SubgraphRunner subgraph_runner, OutputAllocator* allocator = nullptr)
      : node_(node), inputs_(inputs), outputs_(outputs), pool_(pool),
        subgraph_runner_(std::move(subgraph_runner)), allocator_(allocator) {}
  // A temporary list of inputs would dangle.
  KernelContext(const ir::Node&, std::vector<const RunValue*>&&, std::vector<RunValue>&, ThreadPool&, SubgraphRunner,
                OutputAllocator* = nullptr) = delete;

  const ir::Node& node() const { return node_; }
  int opset() const { return node_.opset; }
  ThreadPool& pool() { return pool_; }

  size_t num_inputs() const { return inputs_.size(); }
  // The i-th input tensor, or nullptr when the input is omitted (optional),
  // out of range, or not a tensor.
  const Tensor* input(size_t i) const {
    if (i >= inputs_.size() || !inputs_[i] || inputs_[i]->kind != RunValue::Kind::kTensor) return nullptr;
    return &inputs_[i]->tensor;
  }
  // The i-th input as a RunValue (sequences, optionals), or nullptr when omitted.
  const RunValue* input_value(size_t i) const { return i < inputs_.size() ? inputs_[i] : nullptr; }
  bool has_input(size_t i) const { return input(i) != nullptr; }

  size_t num_outputs() const { return outputs_.size(); }
  // False when the model omits this optional output (the kernel may skip it).
  bool output_requested(size_t i) const {
    return i < node_.outputs.size() && node_.outputs[i] != ir::kNoValue;
  }
  // Allocates output i (zero-filled) and returns it for the kernel to fill.
  // kOutOfMemory, naming the node, when it is over the tensor memory budget
  // (core/memory_limit.h).
  Result<Tensor*> allocate_output(size_t i, DType dtype, Shape shape) {
    if (i >= outputs_.size()) return Internal(node_.describe() + ": output index " + std::to_string(i) + " out of range");
    DLRT_RETURN_IF_ERROR(check_output_bytes(dtype, shape));
    DLRT_ASSIGN_OR_RETURN(Tensor t, allocator_ ? allocator_->allocate(i, dtype, std::move(shape))
                                               : Tensor::allocate(dtype, std::move(shape)));
    outputs_[i] = RunValue::of(std::move(t));
    return &outputs_[i].tensor;
  }
  // Allocates output i without zero-filling it (where the allocator can):
  // only for kernels that then write every element.
  Result<Tensor*> allocate_output_uninitialized(size_t i, DType dtype, Shape shape) {
    if (i >= outputs_.size()) return Internal(node_.describe() + ": output index " + std::to_string(i) + " out of range");
    DLRT_RETURN_IF_ERROR(check_output_bytes(dtype, shape));
    DLRT_ASSIGN_OR_RETURN(Tensor t, allocator_ ? allocator_->allocate_uninitialized(i, dtype, std::move(shape))
                                               : Tensor::allocate_uninitialized(dtype, std::move(shape)));
    outputs_[i] = RunValue::of(std::move(t));
    return &outputs_[i].tensor;
  }
  // Sets output i to an existing tensor (e.g. a reshaped view of an input).
  void set_output(size_t i, Tensor t) {
    if (i < outputs_.size()) outputs_[i] = RunValue::of(std::move(t));
  }
  void set_output_value(size_t i, RunValue v) {
    if (i < outputs_.size()) outputs_[i] = std::move(v);
  }

  Result<std::vector<RunValue>> run_subgraph(const ir::Graph& g, std::vector<RunValue> inputs) {
    if (!subgraph_runner_) return Internal("no subgraph runner available for " + node_.describe());
    return subgraph_runner_(g, std::move(inputs));
  }

  // An error that names this node: "node 'x' (Op): message".
  Status error(StatusCode code, const std::string& message) const {
    return Status(code, node_.describe() + ": " + message);
  }
  Status invalid(const std::string& message) const { return error(StatusCode::kInvalidArgument, message); }
  Status unsupported(const std::string& message) const { return error(StatusCode::kUnsupported, message); }

 private:
  // The output's bytes against the budget, before any allocator sees the shape.
  Status check_output_bytes(DType dtype, const Shape& shape) const {
    uint64_t bytes = dtype_size(dtype);
    for (int64_t d : shape) {
      if (d < 0) return invalid("output dimension " + std::to_string(d) + " is negative");
      if (d != 0 && bytes > UINT64_MAX / static_cast<uint64_t>(d))
        return error(StatusCode::kOutOfMemory, "an output of shape " + shape_to_string(shape) + " overflows 64 bits");
      bytes *= static_cast<uint64_t>(d);
    }
    if (bytes <= max_tensor_bytes()) return Status::Ok();
    return check_tensor_bytes(bytes, node_.describe() + ": an output of shape " + shape_to_string(shape));
  }

  const ir::Node& node_;
  std::span<const RunValue* const> inputs_;
  std::vector<RunValue>& outputs_;
  ThreadPool& pool_;
  SubgraphRunner subgraph_runner_;
  OutputAllocator* allocator_;
};

// A kernel that is a plain function of the context.
using KernelFn = Status (*)(KernelContext&);

class FnKernel final : public OpKernel {
 public:
  explicit FnKernel(KernelFn fn) : fn_(fn) {}
  Status compute(KernelContext& ctx) const override { return fn_(ctx); }

 private:
  KernelFn fn_;
};

// Creates the kernel for a node; may reject attributes it cannot handle.
using KernelFactory = std::function<Result<std::unique_ptr<OpKernel>>(const ir::Node& node)>;

// The constant (initializer) tensor feeding input i of the node being
// created, or nullptr when that input is computed at run time or omitted.
using ConstantInputs = std::function<const Tensor*(size_t input_index)>;

// A factory that may pre-process constant inputs once (e.g. pack weights).
// The kernel must still check, in compute(), that the input it gets is the
// tensor it pre-processed (same data pointer, or its freed stand-in:
// is_built_constant) and fall back otherwise.
using ConstantKernelFactory =
    std::function<Result<std::unique_ptr<OpKernel>>(const ir::Node& node, const ConstantInputs& constants)>;

struct KernelDef {
  std::string op_type;
  std::string domain;  // "" for ONNX
  int min_opset = 1;    // inclusive range of opset versions this kernel implements
  int max_opset = 1000;
  KernelFactory factory;
  // Optional: used instead of `factory` where the caller knows the graph's
  // constants (the executor); `factory` must still work without them.
  ConstantKernelFactory factory_with_constants = nullptr;
  // Inputs (bit k: input k) whose buffer output 0 may take over when this
  // node reads them for the last time and they have output 0's size in
  // bytes. The kernel must write every element of output 0 and read each
  // element of such an input before it writes the output element of the same
  // index (elementwise ops), or read a whole row before it writes that row
  // (row normalisations). The executor's memory plan then places the output
  // over the input (ArenaPlan::build), where it is still in cache.
  uint32_t in_place_inputs = 0;
  // The kernel runs with subnormal floats flushed to zero (core/fp_mode.h):
  // for products and sums, where a subnormal changes no result by more than
  // its own size but costs a microcode assist per instruction.
  bool flush_subnormals = false;
};

class KernelRegistry {
 public:
  // Adds a kernel. A second registration for an overlapping opset range of the
  // same op and domain is an error (kInternal), reported at backend start.
  Status add(KernelDef def);
  Status add_fn(const std::string& op_type, KernelFn fn, int min_opset = 1, int max_opset = 1000,
                const std::string& domain = "");
  // Marks `inputs` (KernelDef::in_place_inputs) on every registered opset
  // range of op/domain; kInternal when none is registered.
  Status set_in_place_inputs(const std::string& op_type, uint32_t inputs, const std::string& domain = "");
  // Marks KernelDef::flush_subnormals on every registered opset range of
  // op/domain; kInternal when none is registered.
  Status set_flush_subnormals(const std::string& op_type, const std::string& domain = "");
  // The kernel for op/domain at `opset`, or nullptr.
  const KernelDef* find(const std::string& op_type, const std::string& domain, int opset) const;
  std::vector<std::string> op_types() const;

  // One family of kernels, registered by `add` under the name `name`.
  struct Family {
    const char* name;
    Status (*add)(KernelRegistry&);
  };
  // Registers every family in order; all are tried, and the first failure
  // comes back prefixed with its family's name.
  Status add_families(std::span<const Family> families);

 private:
  std::vector<KernelDef> defs_;
};

}  // namespace dlrt::exec
