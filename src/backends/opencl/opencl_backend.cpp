#include "backends/opencl/opencl_backend.h"

#include <memory>

#include "backends/gpu/partition.h"
#include "backends/opencl/cl_runtime.h"
#include "backends/opencl/executable.h"

namespace dlrt::opencl {

namespace {

constexpr const char* kBlobFormat = "dlrt-opencl-onnx-v1";

DeviceType device_type(cl_device_type t) {
  if (t & CL_DEVICE_TYPE_GPU) return DeviceType::kGpu;
  if (t & CL_DEVICE_TYPE_CPU) return DeviceType::kCpu;
  return DeviceType::kAccelerator;
}

class OpenClBackend final : public backend::Backend {
 public:
  std::string name() const override { return "opencl"; }
  bool devices_are_indexes() const override { return true; }

  backend::Availability is_available(bool refresh) override { return rt_.availability(refresh); }

  std::vector<backend::BackendDevice> devices(const std::vector<Device>& hardware) override {
    std::vector<backend::BackendDevice> out;
    for (const ClDeviceInfo& d : rt_.devices()) {
      backend::BackendDevice bd;
      bd.backend = "opencl";
      bd.name = std::to_string(d.index);
      bd.type = device_type(d.type);
      for (const auto& h : hardware) {
        bool match = !d.pci_bus_id.empty() ? h.meta("pci_bus_id") == d.pci_bus_id
                                           : bd.type == DeviceType::kCpu && h.type == DeviceType::kCpu;
        if (match) {
          bd.hardware = h;
          break;
        }
      }
      if (bd.hardware) bd.metadata = bd.hardware->metadata;
      else bd.metadata["discovered_by"] = "opencl";
      bd.metadata["device_name"] = d.name;
      bd.metadata["vendor"] = d.vendor;
      bd.metadata["platform"] = d.platform_name;
      bd.metadata["opencl_version"] = d.version;
      bd.metadata["opencl_c_version"] = d.c_version;
      bd.metadata["driver_version"] = d.driver_version;
      bd.metadata["compute_units"] = std::to_string(d.compute_units);
      bd.metadata["memory_bytes"] = std::to_string(d.global_mem);
      bd.metadata["max_alloc_bytes"] = std::to_string(d.max_alloc);
      bd.metadata["local_memory_bytes"] = std::to_string(d.local_mem);
      bd.metadata["max_work_group_size"] = std::to_string(d.max_wg);
      if (d.clock_mhz) bd.metadata["max_clock_mhz"] = std::to_string(d.clock_mhz);
      if (!d.pci_bus_id.empty()) bd.metadata["pci_bus_id"] = d.pci_bus_id;
      out.push_back(std::move(bd));
    }
    return out;
  }

  std::vector<backend::NodeSupport> supports(const ir::Graph& graph, const backend::BackendDevice&) override {
    return gpu::node_support(graph, rt_.availability(), "opencl");
  }

  Result<backend::Blob> compile(const ir::Graph& subgraph, const backend::BackendDevice& device,
                                const backend::CompileOptions&) override {
    DLRT_ASSIGN_OR_RETURN(int index, device_index(device));
    DLRT_ASSIGN_OR_RETURN(backend::Blob b, gpu::partition_blob(subgraph, "opencl", kBlobFormat));
    // Builds (or loads from the program cache) the device's kernels now, so
    // that a driver that cannot build them fails the compile, not a run.
    DLRT_RETURN_IF_ERROR(rt_.context(index).status());
    return b;
  }

  Result<backend::Executable*> init(const backend::Blob& blob, const backend::CompileOptions&,
                                    const backend::BackendDevice& device) override {
    DLRT_ASSIGN_OR_RETURN(ir::Model model, gpu::partition_model(blob, device, kBlobFormat));
    DLRT_ASSIGN_OR_RETURN(int index, device_index(device));
    DLRT_ASSIGN_OR_RETURN(auto ctx, rt_.context(index));
    DLRT_ASSIGN_OR_RETURN(auto exe, ClExecutable::create(std::move(ctx), std::move(model)));
    return static_cast<backend::Executable*>(exe.release());
  }

  Result<std::vector<Tensor>> execute(backend::Executable* exe, std::span<const Tensor> inputs) override {
    auto* e = dynamic_cast<ClExecutable*>(exe);
    if (!e) return InvalidArgument("opencl: execute given an executable it did not make");
    return e->run(inputs);
  }

  int max_concurrent_runs(const backend::Executable*) const override { return 1; }

  void destroy(backend::Executable* exe) override { delete exe; }

 private:
  Result<int> device_index(const backend::BackendDevice& device) {
    return gpu::device_index(device, rt_.devices().size(), rt_.availability(), "opencl");
  }

  ClRuntime rt_;
};

}  // namespace

std::shared_ptr<backend::Backend> make_opencl_backend() { return std::make_shared<OpenClBackend>(); }

}  // namespace dlrt::opencl
