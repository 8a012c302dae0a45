// PyIndex: an integer argument as Python's operator.index takes it (int,
// bool, numpy integers). nanobind's own int64_t caster falls back to int(x)
// and so takes "5" or Decimal("5") for a count; with this one a str or a float
// is a TypeError, as for any other wrong type. Signatures still read `int`.
#pragma once

#include <nanobind/nanobind.h>

#include <cstdint>

namespace dlrt::python {

struct PyIndex {
  int64_t value = 0;
  operator int64_t() const { return value; }  // NOLINT: read as the count it is
};

}  // namespace dlrt::python

namespace nanobind::detail {

template <>
struct type_caster<dlrt::python::PyIndex> {
  NB_TYPE_CASTER(dlrt::python::PyIndex, const_name("int"))

  bool from_python(handle src, uint8_t, cleanup_list*) noexcept {
    if (!PyIndex_Check(src.ptr())) return false;  // str, bytes and float have no __index__
    PyObject* as_int = PyNumber_Index(src.ptr());
    if (!as_int) {
      PyErr_Clear();
      return false;
    }
    int overflow = 0;
    const long long v = PyLong_AsLongLongAndOverflow(as_int, &overflow);
    Py_DECREF(as_int);
    if (overflow != 0 || (v == -1 && PyErr_Occurred())) {
      PyErr_Clear();
      return false;
    }
    value.value = static_cast<int64_t>(v);
    return true;
  }

  static handle from_cpp(dlrt::python::PyIndex v, rv_policy, cleanup_list*) noexcept {
    return PyLong_FromLongLong(static_cast<long long>(v.value));
  }
};

}  // namespace nanobind::detail
