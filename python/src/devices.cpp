// dlrt.devices() and dlrt.Device over dlrt::discover_devices(); dlrt.backends() over
// dlrt::backends() (what `dlrt devices` prints under "Backends" and "Backend devices");
// dlrt.memory_info() over dlrt::memory_info() (its "Memory" section).
#include <nanobind/stl/map.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "bindings.h"
#include "core/log_level.h"
#include "dlrt/backends.h"
#include "dlrt/device.h"
#include "dlrt/memory.h"

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
              "memory_bytes, numa_node, cores, threads, isa, caches (see docs/devices.md).")
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

  m.def("_set_log_level", [](int level) { set_log_level(static_cast<LogLevel>(level)); }, nb::arg("level"),
        "The process's log threshold: 0 debug, 1 info, 2 warn, 3 error, 4 off (over DLRT_LOG_LEVEL).");

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

  m.def("backends", [](bool refresh) {
        std::vector<BackendInfo> found;
        {
          nb::gil_scoped_release unlocked;
          BackendsOptions query;
          query.refresh = refresh;
          found = dlrt::backends(query);
        }
        nb::list out;
        for (const BackendInfo& a : found) {
          nb::dict e;
          e["name"] = a.name;
          e["available"] = a.available;
          e["library_path"] = a.library_path;
          e["version"] = a.version;
          e["reason"] = a.reason;
          e["fix"] = a.fix;
          e["compatibility"] = a.compatibility;
          e["tried"] = a.tried;
          nb::list devs;
          for (const BackendDeviceInfo& d : a.devices) {
            nb::dict j;
            j["spec"] = d.spec;
            j["backend"] = d.backend;
            j["name"] = d.name;
            j["type"] = device_type_name(d.type);
            j["is_virtual"] = d.is_virtual;
            j["hardware"] = d.hardware ? nb::cast(d.hardware->id) : nb::none();
            j["metadata"] = d.metadata;
            devs.append(j);
          }
          e["devices"] = devs;
          out.append(e);
        }
        return out;
      },
      nb::arg("refresh") = false, nb::sig("def backends(refresh: bool = False) -> list[dict[str, object]]"),
      "The backends (cpu, openvino, opencl, plugins) as `dlrt devices` lists them: a list of dicts\n"
      "with name, available, library_path and version (the vendor runtime loaded), reason and fix\n"
      "(why not, what to do), compatibility, tried (the paths searched) and devices (each with\n"
      "spec, usable as Session(device=spec), backend, name, type, is_virtual, hardware: the id of\n"
      "the dlrt.devices() entry it drives, metadata). Loads the vendor runtimes it finds;\n"
      "refresh=True retries one that failed to load earlier.");

  m.def("memory_info", []() {
        const MemoryInfo mi = memory_info();
        nb::dict r;
        r["max_tensor_bytes"] = mi.max_tensor_bytes;
        r["max_tensor_source"] = mi.max_tensor_source;
        r["available_bytes"] = mi.available_bytes;
        r["available_source"] = mi.available_source;
        r["physical_bytes"] = mi.physical_bytes;
        r["cgroup_limit_bytes"] = mi.cgroup_limit_bytes ? nb::cast(*mi.cgroup_limit_bytes) : nb::none();
        r["rlimit_as_bytes"] = mi.rlimit_as_bytes ? nb::cast(*mi.rlimit_as_bytes) : nb::none();
        r["rss_bytes"] = mi.rss_bytes;
        r["describe"] = mi.describe;
        return r;
      },
      nb::sig("def memory_info() -> dict[str, object]"),
      "The process's memory budget as sessions apply it (what `dlrt devices` prints under Memory):\n"
      "a dict with max_tensor_bytes (the largest tensor a run may allocate when SessionOptions sets\n"
      "no max_tensor_bytes) and max_tensor_source, available_bytes and available_source (the\n"
      "smallest of physical memory, the cgroup limit and RLIMIT_AS, less what the process holds;\n"
      "the default limit is half of it), physical_bytes, cgroup_limit_bytes and rlimit_as_bytes\n"
      "(None: no such limit), rss_bytes, and describe (one line).");
}

}  // namespace dlrt::python
