#include "backends/cpu/cpu_backend.h"

#include <mutex>

#include "backends/cpu/kernel.h"
#include "backends/cpu/kernels/gemm_amx.h"
#include "backends/cpu/kernels/gemm_bf16.h"
#include "backends/cpu/kernels/gemm_int8.h"
#include "backends/cpu/kernels/isa.h"
#include "core/thread_pool.h"
#include "dlrt/limits.h"
#include "exec/executor.h"
#include "ir/onnx_export.h"
#include "ir/onnx_import.h"

namespace dlrt::cpu {

namespace {

constexpr const char* kBlobFormat = "dlrt-cpu-onnx-v1";

// A compiled CPU partition: the imported subgraph and its executor.
class CpuExecutable final : public backend::Executable {
 public:
  std::unique_ptr<ThreadPool> pool;
  ir::Model model;
  std::unique_ptr<Executor> executor;
};

class CpuBackend final : public backend::Backend {
 public:
  std::string name() const override { return "cpu"; }
  bool devices_are_indexes() const override { return true; }

  backend::Availability is_available(bool) override {
    backend::Availability a;
    a.available = true;
    a.version = "builtin";
    a.checked_at = std::chrono::system_clock::now();
    return a;
  }

  std::vector<backend::BackendDevice> devices(const std::vector<Device>& hardware) override {
    backend::BackendDevice d;
    d.backend = "cpu";
    d.name = "0";
    d.type = DeviceType::kCpu;
    for (const auto& h : hardware)
      if (h.type == DeviceType::kCpu) {
        d.hardware = h;
        break;
      }
    // Without asking the OS for AMX: placement lists devices for every session.
    d.metadata["int8_gemm"] = int8_gemm_engine(false);
    return {d};
  }

  std::vector<backend::NodeSupport> supports(const ir::Graph& graph, const backend::BackendDevice&) override {
    std::vector<backend::NodeSupport> r;
    for (const auto& n : graph.nodes) {
      std::string why = cpu_unsupported_reason(n);
      r.push_back({why.empty(), why});
    }
    return r;
  }

  Result<backend::Blob> compile(const ir::Graph& subgraph, const backend::BackendDevice&,
                                const backend::CompileOptions&) override {
    DLRT_ASSIGN_OR_RETURN(std::string bytes, ir::export_onnx(subgraph));
    backend::Blob b;
    b.format = kBlobFormat;
    b.data.assign(bytes.begin(), bytes.end());
    return b;
  }

  Result<backend::Executable*> init(const backend::Blob& blob, const backend::CompileOptions& options,
                                    const backend::BackendDevice&) override {
    if (blob.format != kBlobFormat)
      return Status(StatusCode::kBackendError, "the cpu backend cannot use a blob of format '" + blob.format + "'");
    auto exe = std::make_unique<CpuExecutable>();
    std::string bytes(blob.data.begin(), blob.data.end());
    DLRT_ASSIGN_OR_RETURN(exe->model, ir::import_onnx_bytes(bytes, ""));
    int threads = 0;
    try {
      threads = std::stoi(options.get("threads", "0"));
    } catch (...) {
      return InvalidArgument("cpu backend option threads='" + options.get("threads") + "' is not a number");
    }
    if (threads < 0 || threads > kMaxThreads)
      return InvalidArgument("cpu backend option threads=" + std::to_string(threads) + " is outside 0 (one per core) to " +
                             std::to_string(kMaxThreads));
    exe->pool = std::make_unique<ThreadPool>(threads);
    DLRT_ASSIGN_OR_RETURN(exe->executor,
                          Executor::create_freeing_constants(exe->model.graph, *exe->pool, builtin_kernels()));
    return exe.release();
  }

  Result<std::vector<Tensor>> execute(backend::Executable* exe, std::span<const Tensor> inputs) override {
    auto* e = dynamic_cast<CpuExecutable*>(exe);
    if (!e) return Internal("cpu backend: execute() got an executable it did not make");
    std::vector<RunValue> in;
    for (const auto& t : inputs) in.push_back(RunValue::of(t));
    DLRT_ASSIGN_OR_RETURN(auto out, e->executor->run(std::move(in)));
    std::vector<Tensor> r;
    for (auto& v : out) {
      if (v.kind != RunValue::Kind::kTensor) return Unsupported("cpu backend: partition outputs must be tensors");
      r.push_back(std::move(v.tensor));
    }
    return r;
  }

  void destroy(backend::Executable* exe) override { delete exe; }
};

}  // namespace

std::string cpu_unsupported_reason(const ir::Node& node) {
  if (builtin_kernels().find(node.op_type, node.domain, node.opset)) return "";
  return "op '" + node.op_type + "' (domain '" + (node.domain.empty() ? "ai.onnx" : node.domain) + "', opset " +
         std::to_string(node.opset) + ") has no CPU kernel";
}

std::shared_ptr<backend::Backend> make_cpu_backend() { return std::make_shared<CpuBackend>(); }

bool cpu_kernels_have_avx2() { return cpu_has_avx2(); }
bool cpu_kernels_have_simd() { return cpu_has_simd_kernels(); }
bool cpu_kernels_have_avx512() { return cpu_has_avx512(); }
const char* cpu_kernels_isa_name() { return cpu_isa_name(cpu_isa()); }
bool cpu_kernels_have_amx_bf16x3() { return amx_bf16x3_available(); }
const char* cpu_kernels_amx_engine() {
  const AmxEngine e = amx_engine();
  return e == AmxEngine::kTiles ? "amx" : e == AmxEngine::kModel ? "amx-model" : nullptr;
}
const char* cpu_kernels_bf16_unavailable() { return bf16_dot_unavailable_reason(); }
std::string cpu_int8_gemm_engine() { return int8_gemm_engine(); }

}  // namespace dlrt::cpu
