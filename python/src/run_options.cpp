// dlrt.RunOptions (run_options.h): the per-run options of ONNX Runtime's
// Python API; what dlrt acts on is `terminate` (and Session.run's timeout_ms).
#include "run_options.h"

#include <nanobind/stl/map.h>
#include <nanobind/stl/string.h>

#include "bindings.h"

namespace dlrt::python {

void bind_run_options(nb::module_& m) {
  nb::class_<PyRunOptions>(m, "RunOptions",
                           "ONNX Runtime's RunOptions, for Session.run(output_names, feeds, run_options).\n\n"
                           "terminate: set to True (from any thread) to stop the runs using these options\n"
                           "with dlrt.Cancelled; runs started while it is True stop at once. The logging\n"
                           "fields and run config entries are kept for ONNX Runtime code; dlrt does not act\n"
                           "on them (its log level is DLRT_LOG_LEVEL, for the process).")
      .def(nb::init<>())
      .def_prop_rw("terminate", [](const PyRunOptions& o) { return o.terminate.load(); },
                   [](PyRunOptions& o, bool v) { o.terminate.store(v); },
                   "True: runs using these options stop with dlrt.Cancelled.")
      .def_rw("log_severity_level", &PyRunOptions::log_severity_level, "Kept (ONNX Runtime's; -1: the session's).")
      .def_rw("log_verbosity_level", &PyRunOptions::log_verbosity_level, "Kept (ONNX Runtime's).")
      .def_rw("logid", &PyRunOptions::logid, "Kept (ONNX Runtime's).")
      .def_rw("only_execute_path_to_fetches", &PyRunOptions::only_execute_path_to_fetches,
              "Kept (ONNX Runtime's); dlrt does not act on it.")
      .def("add_run_config_entry",
           [](PyRunOptions& o, const std::string& key, const std::string& value) { o.config[key] = value; },
           nb::arg("key"), nb::arg("value"), "Keeps a config entry (dlrt does not act on it).")
      .def("get_run_config_entry",
           [](const PyRunOptions& o, const std::string& key) {
             auto it = o.config.find(key);
             if (it == o.config.end())
               raise_status(InvalidArgument("RunOptions has no config entry '" + key + "'"));
             return it->second;
           },
           nb::arg("key"), "A config entry set by add_run_config_entry; dlrt.InvalidArgument if none.")
      .def("__repr__", [](const PyRunOptions& o) {
        return std::string("RunOptions(terminate=") + (o.terminate.load() ? "True" : "False") + ")";
      });
}

}  // namespace dlrt::python
