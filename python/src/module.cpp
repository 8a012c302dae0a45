// The native module dlrt._dlrt; the package dlrt (python/dlrt/__init__.py)
// re-exports it. One bind_* per public concern, in bindings.h.
#include "bindings.h"
#include "dlrt/dlrt.h"

namespace {

// nanobind installs a class's properties without naming them, so assigning to
// a read-only one said "property '' of 'Embedder' object has no setter":
// give each property its attribute name (property.__set_name__).
void name_properties(nanobind::module_& m) {
  namespace nb = nanobind;
  nb::handle property = reinterpret_cast<PyObject*>(&PyProperty_Type);
  for (auto [name, value] : nb::borrow<nb::dict>(m.attr("__dict__"))) {
    if (!PyType_Check(value.ptr())) continue;
    for (nb::handle item : value.attr("__dict__").attr("items")()) {  // a mappingproxy
      nb::handle member = item[1];
      if (nb::isinstance(member, property)) member.attr("__set_name__")(value, item[0]);
    }
  }
}

}  // namespace

NB_MODULE(_dlrt, m) {
  m.doc() = "dlrt's native module (use the package: import dlrt).";
  m.attr("__version__") = dlrt::version();
  dlrt::python::bind_errors(m);
  dlrt::python::bind_node_arg(m);
  dlrt::python::bind_run_options(m);
  dlrt::python::bind_session(m);
  dlrt::python::bind_devices(m);
  dlrt::python::bind_model_info(m);
  dlrt::python::bind_embedder(m);
  dlrt::python::bind_cross_encoder(m);
  dlrt::python::bind_quantize(m);
  name_properties(m);
}
