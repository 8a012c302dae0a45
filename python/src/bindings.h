// The native module dlrt._dlrt: what its files share. Each bind_* adds one
// public class or function family to the module (module.cpp calls them in
// order); the rest converts between numpy arrays and dlrt::Tensor and turns
// a dlrt::Status into the matching dlrt.Error subclass.
//
// Everything here runs with the GIL held unless it says otherwise.
#pragma once

#include <nanobind/nanobind.h>
// In every file: nb::cast<std::string> must mean the same caster everywhere (ODR).
#include <nanobind/stl/string.h>

#include <string>
#include <vector>

#include "dlrt/model_info.h"
#include "dlrt/precision_choice.h"
#include "dlrt/session.h"
#include "dlrt/status.h"
#include "dlrt/tensor.h"
#include "py_index.h"

namespace dlrt::python {

namespace nb = nanobind;

void bind_errors(nb::module_& m);
void bind_session(nb::module_& m);
void bind_devices(nb::module_& m);
void bind_embedder(nb::module_& m);
void bind_cross_encoder(nb::module_& m);
void bind_quantize(nb::module_& m);  // quantize.cpp
void bind_node_arg(nb::module_& m);
void bind_run_options(nb::module_& m);
void bind_model_info(nb::module_& m);

// Session.model_info() and Session.node_placement() (model_info.cpp).
nb::dict model_info_dict(const ModelInfo& info);
// Session/Embedder.precision_choice(): what cpu_precision "auto" chose (precision_choice.cpp).
nb::dict precision_choice_dict(const PrecisionChoice& choice);
nb::list node_placement_list(const Session& session);

// ONNX Runtime-style descriptions of `infos` (Session.get_inputs/get_outputs):
// a list of dlrt.NodeArg (node_arg.cpp; bind_node_arg must have run).
nb::list node_args(const std::vector<TensorInfo>& infos);

// Raises the dlrt.Error subclass for `status.code()` (dlrt.InvalidArgument,
// dlrt.InvalidModel, ...) with dlrt's message; `status` must not be ok.
[[noreturn]] void raise_status(const Status& status);
inline void check(const Status& status) {
  if (!status.ok()) raise_status(status);
}

// The `threads` argument of Session, Embedder and CrossEncoder as
// SessionOptions::threads: dlrt.InvalidArgument (a ValueError) outside 0 (one
// per core) to dlrt::kMaxThreads, raised before any thread starts.
int threads_from_python(int64_t threads);

// numpy, imported once (kept for the life of the process).
nb::handle numpy();
// The numpy dtype of `dtype`: object for strings, None where numpy has none
// (bfloat16, int4, uint4, undefined).
nb::object numpy_dtype(DType dtype);

// One input made ready for Session::run: `tensor` is a view over the array's
// memory (zero-copy) or over a converted copy that `keep` owns, or a string
// tensor filled from the array.
struct Feed {
  std::string name;
  Tensor tensor;
  nb::object keep;  // holds the memory `tensor` views; released with the GIL held
};

// Makes the feed for `value` (a numpy array or anything np.asarray takes).
// `info` is the model's input of that name, or null when the model has none
// (Session::run then reports the unknown name). Policy (docs/python.md):
// a C-contiguous, aligned array is viewed as it is, whatever its dtype (a
// wrong dtype is dlrt's InvalidArgument, never a silent cast); a
// non-contiguous array is copied with np.ascontiguousarray; a non-array
// (list, scalar) is converted with np.asarray to the model's dtype.
Feed feed_from_python(const std::string& name, nb::handle value, const TensorInfo* info);

// A numpy array over the tensor's storage, which the array keeps alive
// (no copy). Views of caller memory are cloned first; string tensors become
// object arrays of str; bfloat16 becomes float32 (numpy has no bfloat16);
// int4/uint4 (held one value per byte) are int8/uint8 arrays.
nb::object tensor_to_numpy(Tensor tensor);

// A tuple of dims with None for a dynamic (negative) dim.
nb::tuple shape_to_python(const std::vector<int64_t>& shape);

// The UTF-8 of the str `s`. A str that has none (one holding a lone
// surrogate such as "\ud800", which Python allows and UTF-8 cannot encode)
// raises dlrt.InvalidArgument naming `what` and the position (Hugging Face's
// fast tokenizers, on Rust strings, cannot take such a str either) (errors.cpp).
std::string utf8_of(nb::handle s, const std::string& what);

// str(x) of a Python object.
inline std::string str_of(nb::handle x) { return nb::str(x).c_str(); }
// repr(x) of a Python object / of a str made from `s`.
inline std::string repr_of(nb::handle x) { return nb::repr(x).c_str(); }
inline std::string repr_of(const std::string& s) { return repr_of(nb::str(s.data(), s.size())); }

// os.fspath(path) as UTF-8; raises TypeError for anything else.
std::string path_from_python(nb::handle path, const char* what);

}  // namespace dlrt::python
