// The native module dlrt._dlrt; the package dlrt (python/dlrt/__init__.py)
// re-exports it. One bind_* per public concern, in bindings.h.
#include "bindings.h"
#include "dlrt/dlrt.h"

NB_MODULE(_dlrt, m) {
  m.doc() = "dlrt's native module (use the package: import dlrt).";
  m.attr("__version__") = dlrt::version();
  dlrt::python::bind_errors(m);
  dlrt::python::bind_node_arg(m);
  dlrt::python::bind_session(m);
  dlrt::python::bind_devices(m);
  dlrt::python::bind_embedder(m);
  dlrt::python::bind_cross_encoder(m);
}
