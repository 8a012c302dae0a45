// dlrt.NodeArg: a model input or output as ONNX Runtime's
// InferenceSession.get_inputs() / get_outputs() describe it (name, shape
// with dim names, type string), for code written against ONNX Runtime.
#include <nanobind/stl/string.h>

#include <algorithm>

#include "bindings.h"

namespace dlrt::python {
namespace {

struct NodeArg {
  TensorInfo info;
};

// "unk__N": the name ONNX's shape inference gives a dim the model leaves
// unnamed (dlrt infers output shapes with it; ONNX Runtime shows such a dim as None).
bool inferred_name(const std::string& name) {
  if (name.size() <= 5 || name.compare(0, 5, "unk__") != 0) return false;
  return std::all_of(name.begin() + 5, name.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// ONNX Runtime's NodeArg.shape: a list with an int per fixed dim, the dim's
// name (a str) per named dynamic dim, and None per unnamed dynamic dim.
nb::list ort_shape(const TensorInfo& t) {
  nb::list dims;
  for (size_t i = 0; i < t.shape.size(); ++i) {
    const int64_t d = t.shape[i];
    if (d >= 0) {
      dims.append(nb::int_(d));
    } else if (i < t.dim_names.size() && !t.dim_names[i].empty() && !inferred_name(t.dim_names[i])) {
      dims.append(nb::str(t.dim_names[i].c_str()));
    } else {
      dims.append(nb::none());
    }
  }
  return dims;
}

}  // namespace

nb::list node_args(const std::vector<TensorInfo>& infos) {
  nb::list out;
  for (const TensorInfo& t : infos) out.append(nb::cast(NodeArg{t}));
  return out;
}

void bind_node_arg(nb::module_& m) {
  nb::class_<NodeArg>(m, "NodeArg",
                      "A model input or output as ONNX Runtime's NodeArg describes it (Session.get_inputs(), "
                      "Session.get_outputs()).")
      .def_prop_ro("name", [](const NodeArg& a) { return a.info.name; }, "The input or output name.")
      .def_prop_ro("shape", [](const NodeArg& a) { return ort_shape(a.info); },
                   nb::for_getter(nb::sig("def shape(self, /) -> list[int | str | None]")),
                   "The dims as a list: an int per fixed dim, the dim's name (str) per named dynamic dim, "
                   "None per unnamed dynamic dim (also for the unk__N names ONNX's shape inference makes up); "
                   "[] for a scalar and for values that are not tensors.")
      .def_prop_ro("type", [](const NodeArg& a) { return a.info.type; },
                   "The type as ONNX Runtime writes it: 'tensor(float)', 'seq(map(int64,tensor(float)))', ...")
      .def("__repr__", [](const NodeArg& a) {
        return "NodeArg(name=" + repr_of(a.info.name) + ", type=" + repr_of(a.info.type) +
               ", shape=" + repr_of(ort_shape(a.info)) + ")";
      });
}

}  // namespace dlrt::python
