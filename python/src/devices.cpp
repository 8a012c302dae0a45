// dlrt.devices() and dlrt.Device over dlrt::discover_devices().
#include <nanobind/stl/map.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "bindings.h"
#include "dlrt/device.h"

namespace dlrt::python {

void bind_devices(nb::module_& m) {
  nb::class_<Device>(m, "Device",
                     "One piece of hardware, found without any vendor runtime (as `dlrt devices` lists it).")
      .def_ro("id", &Device::id, "Stable within a process: 'cpu:0', 'gpu:0', 'npu:0', ...")
      .def_prop_ro("type", [](const Device& d) { return std::string(device_type_name(d.type)); },
                   "'cpu', 'gpu', 'npu' or 'accelerator'.")
      .def_ro("vendor", &Device::vendor, "'Intel', 'AMD', 'NVIDIA', ...")
      .def_ro("name", &Device::name, "The product name, where known.")
      .def_ro("vendor_id", &Device::vendor_id, "PCI vendor id (0 where there is none).")
      .def_ro("device_id", &Device::device_id, "PCI device id (0 where there is none).")
      .def_ro("metadata", &Device::metadata,
              "dict of str -> str: discovered_by, is_virtual, pci_bus_id, driver, driver_version,\n"
              "memory_bytes, numa_node, cores, threads, isa (see docs/devices.md).")
      .def_prop_ro("is_virtual", &Device::is_virtual, "True for a device that exists only to compile for.")
      .def("as_dict", [](const Device& d) {
            nb::dict r;
            r["id"] = d.id;
            r["type"] = device_type_name(d.type);
            r["vendor"] = d.vendor;
            r["name"] = d.name;
            r["vendor_id"] = d.vendor_id;
            r["device_id"] = d.device_id;
            r["metadata"] = d.metadata;
            return r;
          },
          nb::sig("def as_dict(self) -> dict[str, object]"), "The fields as a dict (for JSON).")
      .def("__repr__", [](const Device& d) {
        return "Device(id='" + d.id + "', type='" + device_type_name(d.type) + "', vendor=" +
               repr_of(d.vendor) +
               ", name=" + repr_of(d.name) + ")";
      });

  m.def("devices", []() {
        std::vector<Device> found;
        {
          nb::gil_scoped_release unlocked;
          found = discover_devices();
        }
        return found;
      },
      "The hardware dlrt can see: a list of Device, the CPU first, then GPUs, NPUs and other\n"
      "accelerators. Never fails; reads /proc and /sys on every call.");
}

}  // namespace dlrt::python
