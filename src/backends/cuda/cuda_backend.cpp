#include "backends/cuda/cuda_backend.h"

#include <memory>

#include "backends/cuda/cuda_executable.h"
#include "backends/cuda/cuda_runtime.h"
#include "backends/gpu/partition.h"

namespace dlrt::cuda {

namespace {

constexpr const char* kBlobFormat = "dlrt-cuda-onnx-v1";

class CudaBackend final : public backend::Backend {
 public:
  std::string name() const override { return "cuda"; }
  bool devices_are_indexes() const override { return true; }

  backend::Availability is_available(bool refresh) override { return rt_.availability(refresh); }

  std::vector<backend::BackendDevice> devices(const std::vector<Device>& hardware) override {
    std::vector<backend::BackendDevice> out;
    const std::vector<CudaDeviceInfo> devs = rt_.devices();
    if (devs.empty()) return out;
    const int driver = rt_.api().driver_version;
    for (const CudaDeviceInfo& d : devs) {
      backend::BackendDevice bd;
      bd.backend = "cuda";
      bd.name = std::to_string(d.ordinal);
      bd.type = DeviceType::kGpu;
      if (!d.pci_bus_id.empty())
        for (const auto& h : hardware)
          if (h.meta("pci_bus_id") == d.pci_bus_id) {
            bd.hardware = h;
            break;
          }
      if (bd.hardware) {
        bd.metadata = bd.hardware->metadata;
        // sysfs's driver_version is the kernel module's ("580.65.06"); keep it beside CUDA's.
        if (auto it = bd.metadata.find("driver_version"); it != bd.metadata.end())
          bd.metadata["kernel_driver_version"] = it->second;
      } else {
        bd.metadata["discovered_by"] = "cuda";
      }
      bd.metadata["device_name"] = d.name;
      bd.metadata["vendor"] = "NVIDIA";
      bd.metadata["compute_capability"] = std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor);
      bd.metadata["memory_bytes"] = std::to_string(d.total_mem);
      bd.metadata["multiprocessors"] = std::to_string(d.sm_count);
      bd.metadata["max_threads_per_block"] = std::to_string(d.max_threads_per_block);
      bd.metadata["max_shared_memory_per_block"] = std::to_string(d.max_shared_per_block_optin);
      bd.metadata["driver_version"] = cuda_version_string(driver);
      bd.metadata["driver_version_int"] = std::to_string(driver);
      if (!d.pci_bus_id.empty()) bd.metadata["pci_bus_id"] = d.pci_bus_id;
      if (!d.uuid_or_empty.empty()) bd.metadata["uuid"] = d.uuid_or_empty;
      out.push_back(std::move(bd));
    }
    return out;
  }

  std::vector<backend::NodeSupport> supports(const ir::Graph& graph, const backend::BackendDevice&) override {
    return gpu::node_support(graph, rt_.availability(), "cuda");
  }

  Result<backend::Blob> compile(const ir::Graph& subgraph, const backend::BackendDevice& device,
                                const backend::CompileOptions&) override {
    DLRT_ASSIGN_OR_RETURN(int ordinal, device_ordinal(device));
    DLRT_ASSIGN_OR_RETURN(backend::Blob b, gpu::partition_blob(subgraph, "cuda", kBlobFormat));
    // Makes the device's context and kernel module now, so that a driver or
    // NVRTC that cannot build them fails the compile, not a run.
    DLRT_RETURN_IF_ERROR(rt_.context(ordinal).status());
    return b;
  }

  Result<backend::Executable*> init(const backend::Blob& blob, const backend::CompileOptions&,
                                    const backend::BackendDevice& device) override {
    DLRT_ASSIGN_OR_RETURN(ir::Model model, gpu::partition_model(blob, device, kBlobFormat));
    DLRT_ASSIGN_OR_RETURN(int ordinal, device_ordinal(device));
    DLRT_ASSIGN_OR_RETURN(auto ctx, rt_.context(ordinal));
    DLRT_ASSIGN_OR_RETURN(auto exe, CudaExecutable::create(std::move(ctx), std::move(model)));
    return static_cast<backend::Executable*>(exe.release());
  }

  Result<std::vector<Tensor>> execute(backend::Executable* exe, std::span<const Tensor> inputs) override {
    auto* e = dynamic_cast<CudaExecutable*>(exe);
    if (!e) return InvalidArgument("cuda: execute given an executable it did not make");
    return e->run(inputs);
  }

  int max_concurrent_runs(const backend::Executable*) const override { return CudaExecutable::kMaxStreams; }

  void destroy(backend::Executable* exe) override { delete exe; }

 private:
  Result<int> device_ordinal(const backend::BackendDevice& device) {
    return gpu::device_index(device, rt_.devices().size(), rt_.availability(), "cuda");
  }

  CudaRuntime rt_;
};

}  // namespace

std::shared_ptr<backend::Backend> make_cuda_backend() { return std::make_shared<CudaBackend>(); }

}  // namespace dlrt::cuda
