// dlrt.StatusCode and the exception classes: one per StatusCode, all under
// dlrt.Error (a RuntimeError), each carrying dlrt's message and a `.code`.
#include <array>
#include <cstdio>
#include <utility>

#include "bindings.h"

namespace dlrt::python {
namespace {

struct ErrorClass {
  StatusCode code;
  const char* name;   // the Python class name
  PyObject* extra;    // a second builtin base, or null
  const char* doc;
};

// Filled by bind_errors; the classes live as long as the process.
std::array<std::pair<StatusCode, PyObject*>, 12> g_classes{};
PyObject* g_error = nullptr;
PyObject* g_status_code = nullptr;

PyObject* class_for(StatusCode code) {
  for (const auto& [c, cls] : g_classes) {
    if (c == code && cls) return cls;
  }
  return g_error;
}

}  // namespace

[[noreturn]] void raise_status(const Status& status) {
  PyObject* cls = class_for(status.code());
  nb::object exc = nb::steal(PyObject_CallFunctionObjArgs(cls, nb::str(status.message().c_str()).ptr(), nullptr));
  if (!exc.is_valid()) throw nb::python_error();
  // The class already has its code; set it on the instance too, as the
  // status's code (the base class Error serves codes without a class).
  nb::object code = nb::steal(
      PyObject_CallFunctionObjArgs(g_status_code, nb::int_(static_cast<int>(status.code())).ptr(), nullptr));
  if (!code.is_valid()) throw nb::python_error();
  if (PyObject_SetAttrString(exc.ptr(), "code", code.ptr()) != 0) throw nb::python_error();
  PyErr_SetObject(cls, exc.ptr());
  throw nb::python_error();
}

std::string utf8_of(nb::handle s, const std::string& what) {
  Py_ssize_t size = 0;
  if (const char* data = PyUnicode_AsUTF8AndSize(s.ptr(), &size)) return std::string(data, static_cast<size_t>(size));
  PyErr_Clear();
  const Py_ssize_t n = PyUnicode_GetLength(s.ptr());
  Py_ssize_t at = 0;
  Py_UCS4 c = 0;
  for (; at < n; ++at) {
    c = PyUnicode_ReadChar(s.ptr(), at);
    if (c >= 0xD800 && c <= 0xDFFF) break;
  }
  if (at == n) {  // not a surrogate: whatever else Python could not encode
    PyErr_Clear();
    raise_status(InvalidArgument(what + " cannot be encoded as UTF-8"));
  }
  char hex[8];
  std::snprintf(hex, sizeof hex, "%04X", static_cast<unsigned>(c));
  raise_status(InvalidArgument(what + " is not valid Unicode: a lone surrogate U+" + hex + " at character " +
                               std::to_string(at) +
                               " has no UTF-8 form (replace it first, e.g. "
                               "text.encode(\"utf-16\", \"surrogatepass\").decode(\"utf-16\", \"replace\"))"));
}

void bind_errors(nb::module_& m) {
  nb::enum_<StatusCode> codes(m, "StatusCode", nb::is_arithmetic(),
                              "dlrt's error codes (the C++ StatusCode and the C API use the same numbers):\n"
                              "1xx the caller's input, 2xx the model, 3xx resources, 4xx devices and\n"
                              "backends, 5xx failures while running.");
  for (StatusCode c : {StatusCode::kOk, StatusCode::kInvalidArgument, StatusCode::kNotFound, StatusCode::kOutOfRange,
                       StatusCode::kInvalidModel, StatusCode::kUnsupported, StatusCode::kIoError,
                       StatusCode::kOutOfMemory, StatusCode::kDeviceUnavailable, StatusCode::kBackendError,
                       StatusCode::kRuntimeError, StatusCode::kInternal, StatusCode::kCancelled}) {
    codes.value(status_code_name(c), c);
  }
  g_status_code = codes.ptr();

  nb::dict base_dict;
  base_dict["__doc__"] = nb::str(
      "Base class of every error dlrt raises (a RuntimeError). str(e) is dlrt's message;\n"
      "e.code is the dlrt.StatusCode.");
  base_dict["code"] = codes.attr("Internal");
  g_error = PyErr_NewException("dlrt.Error", PyExc_RuntimeError, base_dict.ptr());
  if (!g_error) throw nb::python_error();
  m.attr("Error") = nb::handle(g_error);

  const ErrorClass classes[] = {
      {StatusCode::kInvalidArgument, "InvalidArgument", PyExc_ValueError,
       "A bad argument or input: an unknown or missing input name, a wrong dtype, rank or dim, a bad\n"
       "device spec or option. Also a ValueError."},
      {StatusCode::kNotFound, "NotFound", nullptr, "A file or folder the call names does not exist."},
      {StatusCode::kOutOfRange, "OutOfRange", nullptr, "An index or value outside its range."},
      {StatusCode::kInvalidModel, "InvalidModel", nullptr,
       "The model is not valid ONNX: unreadable bytes, a broken graph or external data."},
      {StatusCode::kUnsupported, "Unsupported", nullptr, "The model uses an op, opset or feature dlrt lacks."},
      {StatusCode::kIoError, "IoError", nullptr, "A file could not be read or written."},
      {StatusCode::kOutOfMemory, "OutOfMemory", nullptr, "An allocation failed."},
      {StatusCode::kDeviceUnavailable, "DeviceUnavailable", nullptr,
       "The requested device or backend is not available (strict mode turns fallbacks into this)."},
      {StatusCode::kBackendError, "BackendError", nullptr, "An accelerator backend failed."},
      {StatusCode::kRuntimeError, "RunError", nullptr, "A run failed while executing (a kernel error)."},
      {StatusCode::kInternal, "InternalError", nullptr, "A bug in dlrt: please report it with the message."},
      {StatusCode::kCancelled, "Cancelled", nullptr,
       "A run stopped by its timeout (Session.run(..., timeout_ms=...)); the Session stays usable."},
  };
  size_t i = 0;
  for (const ErrorClass& c : classes) {
    nb::dict d;
    d["__doc__"] = nb::str(c.doc);
    d["code"] = codes.attr(status_code_name(c.code));
    std::string qualified = std::string("dlrt.") + c.name;
    nb::object bases = c.extra ? nb::object(nb::make_tuple(nb::handle(g_error), nb::handle(c.extra)))
                               : nb::object(nb::borrow(g_error));
    PyObject* cls = PyErr_NewException(qualified.c_str(), bases.ptr(), d.ptr());
    if (!cls) throw nb::python_error();
    m.attr(c.name) = nb::handle(cls);
    g_classes[i++] = {c.code, cls};
  }
}

}  // namespace dlrt::python
