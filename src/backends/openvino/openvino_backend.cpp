#include "backends/openvino/openvino_backend.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <unordered_set>

#include "backends/openvino/ov_compile.h"
#include "backends/openvino/ov_requests.h"
#include "backends/openvino/ov_runtime.h"

namespace dlrt::backend::openvino {

namespace {

// Which ONNX ops OpenVINO's ONNX frontend converts (default domain), from its operator table.
// Ops with subgraphs, sequences, strings, randomness or training semantics stay on dlrt's CPU.
const std::unordered_set<std::string>& supported_ops() {
  static const std::unordered_set<std::string> ops = {
      "Abs", "Acos", "Acosh", "Add", "And", "ArgMax", "ArgMin", "Asin", "Asinh", "Atan", "Atanh", "AveragePool",
      "BatchNormalization", "BitShift", "BitwiseAnd", "BitwiseNot", "BitwiseOr", "BitwiseXor", "BlackmanWindow", "Cast",
      "CastLike", "Ceil", "Celu", "Clip", "Compress", "Concat", "Constant", "ConstantOfShape", "Conv", "ConvInteger",
      "ConvTranspose", "Cos", "Cosh", "CumSum", "DepthToSpace", "DequantizeLinear", "Div", "Dropout",
      "DynamicQuantizeLinear", "Einsum", "Elu", "Equal", "Erf", "Exp", "Expand", "EyeLike", "Flatten", "Floor", "GRU",
      "Gather", "GatherElements", "GatherND", "Gelu", "Gemm", "GlobalAveragePool", "GlobalLpPool", "GlobalMaxPool",
      "Greater", "GreaterOrEqual", "GridSample", "GroupNormalization", "HammingWindow", "HannWindow", "HardSigmoid",
      "HardSwish", "Hardmax", "Identity", "InstanceNormalization", "IsFinite", "IsInf", "IsNaN", "LRN", "LSTM",
      "LayerNormalization", "LeakyRelu", "Less", "LessOrEqual", "Log", "LogSoftmax", "LpNormalization", "MatMul",
      "MatMulInteger", "Max", "MaxPool", "MaxRoiPool", "Mean", "MeanVarianceNormalization", "Min", "Mish", "Mod", "Mul",
      "Neg", "NonMaxSuppression", "NonZero", "Not", "OneHot", "Or", "PRelu", "Pad", "Pow", "QLinearConv",
      "QLinearMatMul", "QuantizeLinear", "RNN", "Range", "Reciprocal", "ReduceL1", "ReduceL2", "ReduceLogSum",
      "ReduceLogSumExp", "ReduceMax", "ReduceMean", "ReduceMin", "ReduceProd", "ReduceSum", "ReduceSumSquare", "Relu",
      "Reshape", "Resize", "ReverseSequence", "RoiAlign", "Round", "STFT", "Scatter", "ScatterElements", "ScatterND",
      "Selu", "Shape", "Shrink", "Sigmoid", "Sign", "Sin", "Sinh", "Size", "Slice", "Softmax", "Softplus", "Softsign",
      "SpaceToDepth", "Split", "Sqrt", "Squeeze", "Sub", "Sum", "Tan", "Tanh", "ThresholdedRelu", "Tile", "TopK",
      "Transpose", "Trilu", "Unique", "Unsqueeze", "Upsample", "Where", "Xor", "DFT"};
  return ops;
}

// Nodes OpenVINO's ONNX frontend computes differently from the ONNX
// specification (found by the differential test, Differential.*, against the
// OpenVINO wheels and checked against ONNX Runtime): left to the CPU.
std::string onnx_meaning_differs(const ir::Graph& graph, const ir::Node& n) {
  const std::string& op = n.op_type;
  if ((op == "Softmax" || op == "LogSoftmax" || op == "Hardmax") && n.opset < 13) {
    // Before opset 13 these flatten the input to 2-D at `axis`; OpenVINO
    // applies the opset-13 meaning (one axis). The same when axis is the last.
    std::optional<size_t> rank;
    if (!n.inputs.empty() && n.inputs[0] >= 0 && n.inputs[0] < static_cast<ir::ValueId>(graph.values.size()) &&
        graph.values[n.inputs[0]].type.shape)
      rank = graph.values[n.inputs[0]].type.shape->size();
    int64_t axis = n.attr_int("axis", 1);
    if (rank && axis < 0) axis += static_cast<int64_t>(*rank);
    if (!rank || axis != static_cast<int64_t>(*rank) - 1)
      return op + " before opset 13 with an axis other than the last: OpenVINO gives it the opset-13 meaning";
  }
  if (op == "ConvTranspose" && n.has_attr("output_shape"))
    return "ConvTranspose with output_shape: OpenVINO places the padding differently from ONNX's rule";
  return "";
}

DeviceType ov_device_type(const std::string& name) {
  if (name.rfind("CPU", 0) == 0) return DeviceType::kCpu;
  if (name.rfind("GPU", 0) == 0) return DeviceType::kGpu;
  if (name.rfind("NPU", 0) == 0) return DeviceType::kNpu;
  return DeviceType::kAccelerator;
}

// "GPU.1" -> 1, "GPU" -> 0.
int device_index(const std::string& name) {
  size_t dot = name.find('.');
  if (dot == std::string::npos) return 0;
  return std::atoi(name.c_str() + dot + 1);
}

class OpenVinoBackend final : public Backend {
 public:
  std::string name() const override { return "openvino"; }

  Availability is_available(bool refresh) override {
    std::lock_guard<std::mutex> lk(mu_);
    if (attempted_ && (availability_.available || !refresh)) return availability_;
    attempted_ = true;
    availability_ = load();
    return availability_;
  }

  std::vector<BackendDevice> devices(const std::vector<Device>& hardware) override {
    std::vector<BackendDevice> out;
    const Runtime* rt = runtime();
    if (rt == nullptr) return out;
    std::vector<const Device*> gpus, npus;
    const Device* cpu = nullptr;
    for (const auto& h : hardware) {
      if (h.is_virtual()) continue;
      bool intel = h.vendor_id == 0x8086 || h.vendor == "Intel";
      if (h.type == DeviceType::kCpu && cpu == nullptr) cpu = &h;
      if (h.type == DeviceType::kGpu && intel) gpus.push_back(&h);
      if (h.type == DeviceType::kNpu && intel) npus.push_back(&h);
    }
    bool have_gpu = false, have_npu = false;
    for (const auto& d : rt->devices) {
      BackendDevice bd;
      bd.backend = name();
      bd.name = d.name;
      bd.type = ov_device_type(d.name);
      size_t idx = static_cast<size_t>(std::max(0, device_index(d.name)));
      if (bd.type == DeviceType::kCpu && cpu) bd.hardware = *cpu;
      if (bd.type == DeviceType::kGpu && idx < gpus.size()) bd.hardware = *gpus[idx];
      if (bd.type == DeviceType::kNpu && idx < npus.size()) bd.hardware = *npus[idx];
      if (bd.hardware)
        bd.metadata = bd.hardware->metadata;
      else
        bd.metadata["discovered_by"] = name();
      if (!d.full_name.empty()) bd.metadata["full_device_name"] = d.full_name;
      have_gpu = have_gpu || bd.type == DeviceType::kGpu;
      have_npu = have_npu || bd.type == DeviceType::kNpu;
      out.push_back(std::move(bd));
    }
    // Ahead-of-time targets for machines without the hardware: compile only.
    auto add_virtual = [&](const char* n, DeviceType t) {
      BackendDevice bd;
      bd.backend = name();
      bd.name = n;
      bd.type = t;
      bd.is_virtual = true;
      bd.metadata["discovered_by"] = name();
      bd.metadata["is_virtual"] = "1";
      out.push_back(std::move(bd));
    };
    if (!have_npu) add_virtual("NPU", DeviceType::kNpu);
    if (!have_gpu) add_virtual("GPU", DeviceType::kGpu);
    return out;
  }

  std::vector<NodeSupport> supports(const ir::Graph& graph, const BackendDevice& device) override {
    std::vector<NodeSupport> out(graph.nodes.size());
    const Runtime* rt = runtime();
    const bool f64_ok = device.type == DeviceType::kCpu;
    for (size_t i = 0; i < graph.nodes.size(); ++i) {
      const ir::Node& n = graph.nodes[i];
      NodeSupport& r = out[i];
      if (rt == nullptr) {
        r.reason = "OpenVINO is unavailable: " + availability_reason();
        continue;
      }
      if (!(n.domain.empty() || n.domain == "ai.onnx")) {
        r.reason = "domain '" + n.domain + "' is not handed to OpenVINO";
        continue;
      }
      if (!supported_ops().count(n.op_type)) {
        r.reason = "op " + n.op_type + " is not handed to OpenVINO";
        continue;
      }
      if (!n.attributes.empty()) {
        bool has_graph = false;
        for (const auto& [k, a] : n.attributes) has_graph = has_graph || a.g || !a.graphs.empty();
        if (has_graph) {
          r.reason = "nodes with subgraphs stay on cpu";
          continue;
        }
      }
      std::string bad;
      auto check = [&](ir::ValueId id) {
        if (id < 0 || id >= static_cast<ir::ValueId>(graph.values.size()) || !bad.empty()) return;
        const ir::TypeInfo& t = graph.values[id].type;
        if (t.kind != ir::ValueKind::kTensor)
          bad = "value '" + graph.values[id].name + "' is not a tensor";
        else if (t.dtype == DType::kString)
          bad = "string tensors are not supported by OpenVINO";
        else if (t.dtype == DType::kFloat64 && !f64_ok)
          bad = "float64 is not supported on " + device.spec();
        else if (t.dtype != DType::kUndefined && !to_ov_element(rt->numbering, t.dtype))
          bad = std::string(dtype_name(t.dtype)) + " has no OpenVINO element type";
      };
      for (auto id : n.inputs) check(id);
      for (auto id : n.outputs) check(id);
      if (!bad.empty()) {
        r.reason = bad;
        continue;
      }
      if (std::string why = onnx_meaning_differs(graph, n); !why.empty()) {
        r.reason = why;
        continue;
      }
      r.supported = true;
    }
    return out;
  }

  Result<Blob> compile(const ir::Graph& subgraph, const BackendDevice& device, const CompileOptions& options) override {
    DLRT_ASSIGN_OR_RETURN(const Runtime* rt, loaded());
    return compile_blob(*rt, subgraph, device, options);
  }

  Result<Executable*> init(const Blob& blob, const CompileOptions& options, const BackendDevice& device) override {
    if (device.is_virtual)
      return Status(StatusCode::kDeviceUnavailable,
                    device.spec() +
                        " is a virtual device: it can compile ahead of time, never execute; run on a "
                        "machine with the device or pick a real one (dlrt devices lists them)");
    DLRT_ASSIGN_OR_RETURN(const Runtime* rt, loaded());
    DLRT_ASSIGN_OR_RETURN(std::unique_ptr<OvExecutable> exe, import_blob(*rt, blob, options, device));
    DLRT_RETURN_IF_ERROR(start_request_pool(*exe, options));
    return static_cast<Executable*>(exe.release());
  }

  Result<std::vector<Tensor>> execute(Executable* exe_base, std::span<const Tensor> inputs) override {
    auto* exe = dynamic_cast<OvExecutable*>(exe_base);
    if (exe == nullptr) return InvalidArgument("openvino: execute given an executable it did not make");
    return run_on_request(*exe, inputs);
  }

  void destroy(Executable* exe) override { delete dynamic_cast<OvExecutable*>(exe); }

 private:
  Availability load() {
    std::unique_ptr<Runtime> rt;
    Availability a = load_runtime(&rt);
    if (a.available) {
      runtime_ = std::move(rt);
      loaded_.store(runtime_.get(), std::memory_order_release);
    }
    return a;
  }

  const Runtime* runtime() {
    const Runtime* rt = loaded_.load(std::memory_order_acquire);
    if (rt) return rt;
    is_available(false);
    return loaded_.load(std::memory_order_acquire);
  }

  Result<const Runtime*> loaded() {
    if (const Runtime* rt = runtime()) return rt;
    return Status(StatusCode::kDeviceUnavailable, "backend 'openvino' is unavailable: " + availability_reason());
  }

  std::string availability_reason() {
    Availability a = is_available(false);
    return a.reason + (a.fix.empty() ? "" : ". Fix: " + a.fix);
  }

  std::mutex mu_;  // guards attempted_, availability_, runtime_ (writes)
  bool attempted_ = false;
  Availability availability_;
  std::unique_ptr<Runtime> runtime_;  // set once, never reset (pointers into it are in use)
  std::atomic<const Runtime*> loaded_{nullptr};
};

}  // namespace

std::shared_ptr<Backend> make_openvino_backend() { return std::make_shared<OpenVinoBackend>(); }

}  // namespace dlrt::backend::openvino
