// numpy arrays <-> dlrt::Tensor. Numeric arrays cross without a copy both
// ways: an input is a Tensor::view over the array's memory, an output is a
// numpy array over the Tensor's storage, kept alive by a capsule that owns a
// copy of the Tensor (which shares the storage).
#include <nanobind/ndarray.h>

#include <memory>
#include <optional>

#include "bindings.h"

namespace dlrt::python {
namespace {

using InArray = nb::ndarray<nb::ro, nb::c_contig, nb::device::cpu>;

std::optional<DType> dtype_from_dlpack(nb::dlpack::dtype t) {
  if (t.lanes != 1) return std::nullopt;
  using Code = nb::dlpack::dtype_code;
  switch (static_cast<Code>(t.code)) {
    case Code::Float:
      if (t.bits == 16) return DType::kFloat16;
      if (t.bits == 32) return DType::kFloat32;
      if (t.bits == 64) return DType::kFloat64;
      break;
    case Code::Int:
      if (t.bits == 8) return DType::kInt8;
      if (t.bits == 16) return DType::kInt16;
      if (t.bits == 32) return DType::kInt32;
      if (t.bits == 64) return DType::kInt64;
      break;
    case Code::UInt:
      if (t.bits == 8) return DType::kUInt8;
      if (t.bits == 16) return DType::kUInt16;
      if (t.bits == 32) return DType::kUInt32;
      if (t.bits == 64) return DType::kUInt64;
      break;
    case Code::Bool:
      if (t.bits == 8) return DType::kBool;
      break;
    case Code::Bfloat:
      if (t.bits == 16) return DType::kBFloat16;
      break;
    default:
      break;
  }
  return std::nullopt;
}

std::optional<nb::dlpack::dtype> dlpack_from_dtype(DType t) {
  switch (t) {
    case DType::kFloat16: return nb::dlpack::dtype{static_cast<uint8_t>(nb::dlpack::dtype_code::Float), 16, 1};
    case DType::kFloat32: return nb::dtype<float>();
    case DType::kFloat64: return nb::dtype<double>();
    case DType::kInt8: return nb::dtype<int8_t>();
    case DType::kInt16: return nb::dtype<int16_t>();
    case DType::kInt32: return nb::dtype<int32_t>();
    case DType::kInt64: return nb::dtype<int64_t>();
    case DType::kUInt8: return nb::dtype<uint8_t>();
    case DType::kUInt16: return nb::dtype<uint16_t>();
    case DType::kUInt32: return nb::dtype<uint32_t>();
    case DType::kUInt64: return nb::dtype<uint64_t>();
    case DType::kBool: return nb::dtype<bool>();
    // Held unpacked, one value per byte (int4 sign-extended): the bytes of an int8/uint8 array.
    case DType::kInt4: return nb::dtype<int8_t>();
    case DType::kUInt4: return nb::dtype<uint8_t>();
    default: return std::nullopt;
  }
}

bool is_text_array(nb::handle arr) {
  nb::object kind = arr.attr("dtype").attr("kind");
  std::string k = nb::cast<std::string>(kind);
  return k == "O" || k == "U" || k == "S";
}

// A string tensor with the array's shape, each element str (UTF-8) or bytes.
Tensor string_tensor(const std::string& name, nb::handle arr) {
  std::vector<int64_t> dims;
  for (nb::handle d : nb::tuple(arr.attr("shape"))) dims.push_back(nb::cast<int64_t>(d));
  auto t = Tensor::allocate(DType::kString, Shape(dims));
  check(t.status());
  std::string* out = t->data<std::string>();
  nb::list items = nb::list(arr.attr("reshape")(-1).attr("tolist")());
  size_t i = 0;
  for (nb::handle item : items) {
    if (PyUnicode_Check(item.ptr())) {
      Py_ssize_t size = 0;
      const char* utf8 = PyUnicode_AsUTF8AndSize(item.ptr(), &size);
      if (!utf8) throw nb::python_error();
      out[i++].assign(utf8, static_cast<size_t>(size));
    } else if (PyBytes_Check(item.ptr())) {
      char* data = nullptr;
      Py_ssize_t size = 0;
      if (PyBytes_AsStringAndSize(item.ptr(), &data, &size) != 0) throw nb::python_error();
      out[i++].assign(data, static_cast<size_t>(size));
    } else {
      raise_status(InvalidArgument("input '" + name + "': a string tensor takes str or bytes elements, got " +
                                   str_of(item.type().attr("__name__"))));
    }
  }
  return std::move(t).value();
}

}  // namespace

nb::handle numpy() {
  static PyObject* np = nb::module_::import_("numpy").release().ptr();
  return np;
}

nb::object numpy_dtype(DType dtype) {
  if (dtype == DType::kString) return numpy().attr("dtype")("O");
  if (dtype == DType::kBFloat16 || dtype == DType::kInt4 || dtype == DType::kUInt4) return nb::none();
  if (!dlpack_from_dtype(dtype)) return nb::none();
  return numpy().attr("dtype")(dtype_name(dtype));
}

Feed feed_from_python(const std::string& name, nb::handle value, const TensorInfo* info) {
  // Before any conversion: np.asarray(None, float32) is a 0-d NaN. ONNX Runtime
  // refuses None as a missing input too.
  if (value.is_none())
    raise_status(InvalidArgument("input '" + name + "' is missing: its value is None (pass an array)"));
  Feed feed{name, {}, nb::borrow(value)};
  const bool is_array = PyObject_IsInstance(value.ptr(), numpy().attr("ndarray").ptr()) == 1;
  if (!is_array) {
    // Lists and scalars have no dtype of their own: take the model's.
    nb::object want = info ? numpy_dtype(info->dtype) : nb::none();
    feed.keep = want.is_none() ? numpy().attr("asarray")(value) : numpy().attr("asarray")(value, want);
  }
  InArray arr;
  bool ok = nb::try_cast(feed.keep, arr, /*convert=*/false);
  if (!ok) {
    if (is_text_array(feed.keep)) {
      feed.tensor = string_tensor(name, feed.keep);
      return feed;
    }
    // Not C-contiguous (a slice, a transpose) or not aligned: one copy.
    feed.keep = numpy().attr("ascontiguousarray")(feed.keep);
    ok = nb::try_cast(feed.keep, arr, /*convert=*/false);
  }
  std::optional<DType> dtype = ok ? dtype_from_dlpack(arr.dtype()) : std::nullopt;
  if (!dtype) {
    raise_status(InvalidArgument("input '" + name + "': numpy dtype " +
                                 str_of(feed.keep.attr("dtype")) +
                                 " has no dlrt equivalent (float16/32/64, int8..64, uint8..64, bool, str)"));
  }
  Shape shape;
  for (size_t i = 0; i < arr.ndim(); ++i) shape.push_back(static_cast<int64_t>(arr.shape(i)));
  // dlrt never writes into an input: the const_cast only fits Tensor::view's signature.
  feed.tensor = Tensor::view(*dtype, std::move(shape), const_cast<void*>(arr.data()));
  return feed;
}

nb::tuple shape_to_python(const std::vector<int64_t>& shape) {
  nb::list dims;
  for (int64_t d : shape) dims.append(d < 0 ? nb::none() : nb::object(nb::int_(d)));
  return nb::tuple(dims);
}

nb::object tensor_to_numpy(Tensor tensor) {
  std::vector<int64_t> dims(tensor.shape().begin(), tensor.shape().end());
  nb::tuple shape = shape_to_python(dims);
  if (tensor.dtype() == DType::kString) {
    nb::list items;
    const std::string* s = tensor.data<std::string>();
    for (int64_t i = 0; i < tensor.size(); ++i) {
      PyObject* u = PyUnicode_DecodeUTF8(s[i].data(), static_cast<Py_ssize_t>(s[i].size()), "strict");
      if (!u) {  // not UTF-8: the bytes as they are
        PyErr_Clear();
        items.append(nb::bytes(s[i].data(), s[i].size()));
      } else {
        items.append(nb::steal(u));
      }
    }
    nb::object flat = numpy().attr("empty")(tensor.size(), "O");
    for (int64_t i = 0; i < tensor.size(); ++i) flat[nb::int_(i)] = items[static_cast<size_t>(i)];
    return flat.attr("reshape")(shape);
  }
  if (tensor.dtype() == DType::kBFloat16) {
    // numpy has no bfloat16: widen to float32 (exact).
    auto wide = Tensor::allocate_uninitialized(DType::kFloat32, tensor.shape());
    check(wide.status());
    const BFloat16* src = tensor.data<BFloat16>();
    float* dst = wide->data<float>();
    for (int64_t i = 0; i < tensor.size(); ++i) dst[i] = static_cast<float>(src[i]);
    tensor = std::move(wide).value();
  }
  std::optional<nb::dlpack::dtype> dtype = dlpack_from_dtype(tensor.dtype());
  if (!dtype) {
    raise_status(Internal(std::string("an output of dtype ") + dtype_name(tensor.dtype()) +
                          " cannot be returned to Python"));
  }
  if (tensor.size() == 0) {
    const DType t = tensor.dtype();
    return numpy().attr("empty")(shape, numpy_dtype(t == DType::kInt4    ? DType::kInt8
                                                    : t == DType::kUInt4 ? DType::kUInt8
                                                                         : t));
  }
  if (tensor.is_view()) {
    // A view of memory dlrt does not own (an input passed through): the
    // array must not outlive that memory, so it gets its own copy.
    auto copy = tensor.clone();
    check(copy.status());
    tensor = std::move(copy).value();
  }
  auto* owned = new Tensor(std::move(tensor));
  nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<Tensor*>(p); });
  std::vector<size_t> sizes(dims.begin(), dims.end());
  nb::ndarray<nb::numpy> arr(owned->raw_data(), sizes.size(), sizes.data(), owner, nullptr, *dtype);
  return arr.cast();
}

std::string path_from_python(nb::handle path, const char* what) {
  PyObject* p = PyOS_FSPath(path.ptr());
  if (!p) {
    PyErr_Clear();
    throw nb::type_error((std::string(what) + " must be a str or os.PathLike").c_str());
  }
  nb::object fs = nb::steal(p);
  Py_ssize_t size = 0;
  std::string out;
  if (PyBytes_Check(fs.ptr())) {
    char* data = nullptr;
    if (PyBytes_AsStringAndSize(fs.ptr(), &data, &size) != 0) throw nb::python_error();
    out.assign(data, static_cast<size_t>(size));
  } else {
    const char* utf8 = PyUnicode_AsUTF8AndSize(fs.ptr(), &size);
    if (!utf8) throw nb::python_error();
    out.assign(utf8, static_cast<size_t>(size));
  }
  // The file is opened by its C string: a NUL would cut the path short (Python's open() refuses it too).
  if (out.find('\0') != std::string::npos) throw nb::value_error((std::string(what) + ": embedded null byte").c_str());
  return out;
}

}  // namespace dlrt::python
