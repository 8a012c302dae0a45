// dlrt.Session over dlrt::Session, and the objects it returns: TensorInfo
// (an input or output), PartitionReport and RunReport (where a run ran).
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <chrono>
#include <memory>
#include <optional>

#include "bindings.h"
#include "dlrt/model_info.h"
#include "dlrt/model_metadata.h"
#include "run_options.h"

namespace dlrt::python {
namespace {

const char* const kSessionDoc = R"(A loaded ONNX model, ready to run many times.

Session(model, device=None, strict=False, threads=0, warm_start=False,
        cpu_precision=None, backend_options=None, max_tensor_bytes=0, optimize=True,
        canary_inputs=None, outputs=None)

model           a path (str or os.PathLike) to an .onnx file, or the model itself as
                bytes, bytearray or memoryview (external data is then refused).
device          device spec: "auto", "cpu", "gpu", "npu", a backend ("openvino",
                "opencl") or "backend:device" ("openvino:NPU"), comma-separated as a
                priority list. None: $DLRT_DEVICE, else "auto".
strict          turn every fallback into an error (dlrt.DeviceUnavailable, ...);
                also set by DLRT_STRICT=1.
threads         intra-op threads of the CPU backend; 0: one per core; at most 4096.
warm_start      serve on the CPU at once while accelerators compile in the background.
cpu_precision   "f32", "bf16", "bf16x3" or "auto" (see docs/python-session.md); None:
                $DLRT_CPU_PRECISION, the config file, else "f32". "auto" measures at create
                (precision_choice() says what it chose and why).
canary_inputs   with "auto": a list of feeds dicts it measures on (None: generated from
                the inputs' declared shapes).
backend_options dict of str -> str handed to accelerator backends when they compile.
max_tensor_bytes the largest tensor a run may allocate (dlrt.OutOfMemory past it); 0:
                $DLRT_MAX_TENSOR_MB, the config file, else half the memory available
                 (physical, cgroup limit, RLIMIT_AS; see docs/serve-settings.md).
optimize        False: no graph optimisation (constant folding, fusions) at create;
                DLRT_OPTIMIZE=0 also turns it off.
outputs         a list of output names: the session computes only those (in the model's
                order); nodes and inputs only the other outputs need are dropped, so
                run() need not feed those inputs. None: every output.
                dlrt.InvalidArgument for a name the model lacks.

Raises dlrt.IoError (a missing or unreadable file), dlrt.InvalidModel (not ONNX,
broken graph), dlrt.Unsupported (op or opset), dlrt.InvalidArgument (bad option),
dlrt.DeviceUnavailable (strict mode).

One Session may be used from many threads at once: run() releases the GIL.)";

const char* const kRunDoc = R"(Runs the model once.

feeds         dict of input name -> numpy array (or anything np.asarray takes).
              A C-contiguous array is used in place, without a copy; a
              non-contiguous one is copied once (np.ascontiguousarray). The dtype
              must be the model's: a float64 array for a float32 input raises
              dlrt.InvalidArgument (cast it with .astype(np.float32)); lists and
              scalars are converted to the model's dtype.
output_names  None for every output in the model's order, or a list of output
              names: only those, in that order.
report        also return the run report: (outputs, RunReport).
timeout_ms    stop the run with dlrt.Cancelled once it has run this long (checked
              between the nodes it executes, Loop/Scan bodies included); None: no
              limit. The Session stays usable.

Inputs that are not tensors take what ONNX Runtime takes: a dict for a map
(DictVectorizer's), a list of arrays for a sequence, None for an absent optional.

ONNX Runtime's calling convention works too: run(output_names, feeds) with
output_names None or a list (an empty list: every output), and the keyword
input_feed=. ONNX Runtime's run_options, a dlrt.RunOptions, goes third or as
run_options=: setting its terminate to True (from any thread) stops the run
with dlrt.Cancelled.

Returns a list of numpy arrays. Each one owns dlrt's output buffer (no copy).
Outputs that are not tensors come as ONNX Runtime gives them: a sequence as a
list of arrays, a map as a dict, a sequence of maps (ZipMap's class
probabilities) as a list of dicts, an absent optional as None.
Raises dlrt.InvalidArgument for an unknown or missing input, a wrong dtype, rank or
dim, or an unknown output name; dlrt.RunError when a kernel fails.
The GIL is released while the model runs.)";

// The runs of a Session with profiling on (Session._start_profiling): one
// model_run event per run and one event per partition, for end_profiling().
struct Profile {
  bool on = false;
  nb::list events;  // dicts; touched with the GIL held only
};

struct PySession {
  std::unique_ptr<Session> session;
  Profile profile;
};

int64_t now_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Chrome trace events ("ph": "X") for a run that started at `start_us`: the
// run, then its partitions laid end to end from the run's start.
void record_run(Profile& profile, int64_t start_us, int64_t end_us, const RunReport& report) {
  auto event = [](const char* cat, const std::string& name, int64_t ts, int64_t dur) {
    nb::dict e;
    e["cat"] = cat;
    e["name"] = name;
    e["ph"] = "X";
    e["ts"] = ts;
    e["dur"] = dur;
    e["pid"] = 0;
    e["tid"] = 0;
    return e;
  };
  profile.events.append(event("Session", "model_run", start_us, end_us - start_us));
  int64_t ts = start_us;
  for (size_t i = 0; i < report.partitions.size(); ++i) {
    const PartitionReport& p = report.partitions[i];
    const int64_t dur = static_cast<int64_t>(p.time_ms * 1000.0);
    nb::dict e = event("Partition", "partition_" + std::to_string(i) + "_" + p.backend, ts, dur);
    nb::dict args;
    args["backend"] = p.backend;
    args["device"] = p.device;
    args["node_count"] = p.node_count;
    args["degraded"] = p.degraded;
    if (!p.reason.empty()) args["reason"] = p.reason;
    e["args"] = args;
    profile.events.append(e);
    ts += dur;
  }
}

Session& get(PySession& s) {
  if (!s.session) throw nb::value_error("the Session is not initialised");
  return *s.session;
}

std::string read_model_bytes(nb::handle model) {
  Py_buffer view;
  if (PyObject_GetBuffer(model.ptr(), &view, PyBUF_SIMPLE) != 0) throw nb::python_error();
  std::string bytes(static_cast<const char*>(view.buf), static_cast<size_t>(view.len));
  PyBuffer_Release(&view);
  return bytes;
}

void init_session(PySession* self, nb::handle model, std::optional<std::string> device, bool strict, PyIndex threads,
                  bool warm_start, std::optional<std::string> cpu_precision,
                  std::optional<std::map<std::string, std::string>> backend_options, PyIndex max_tensor_bytes,
                  bool optimize, nb::handle canary_inputs, nb::handle outputs) {
  new (self) PySession();
  SessionOptions options;
  options.device = device.value_or("");
  options.strict = strict;
  options.threads = threads_from_python(threads);
  options.warm_start = warm_start;
  options.cpu_precision = cpu_precision.value_or("");
  if (backend_options) options.backend_options = *backend_options;
  if (max_tensor_bytes < 0)
    raise_status(InvalidArgument("max_tensor_bytes must be >= 0, got " + std::to_string(max_tensor_bytes)));
  options.max_tensor_bytes = static_cast<uint64_t>(max_tensor_bytes);
  options.optimize = optimize;
  if (!outputs.is_none()) {
    // A str is iterable too; taking its characters as names would be a confusing error later.
    if (PyUnicode_Check(outputs.ptr()) || PyBytes_Check(outputs.ptr()))
      raise_status(InvalidArgument("outputs must be a list of output names, not a single string"));
    for (nb::handle name : nb::iter(outputs)) {
      if (!PyUnicode_Check(name.ptr()))
        raise_status(InvalidArgument("outputs must hold output names (str), got " +
                                     nb::cast<std::string>(nb::str(name.type().attr("__name__")))));
      options.outputs.push_back(nb::cast<std::string>(name));
    }
    if (options.outputs.empty()) raise_status(InvalidArgument("outputs is empty; None computes every output"));
  }
  std::vector<Feed> kept;  // the arrays the canary tensors view, alive until create returns
  if (!canary_inputs.is_none())
    for (nb::handle feeds : nb::iter(canary_inputs)) {
      std::map<std::string, Tensor> set;
      for (auto [name, value] : nb::cast<nb::dict>(feeds)) {
        kept.push_back(feed_from_python(nb::cast<std::string>(name), value, nullptr));
        set[kept.back().name] = kept.back().tensor;
      }
      options.canary_inputs.push_back(std::move(set));
    }

  const bool from_bytes = PyBytes_Check(model.ptr()) || PyByteArray_Check(model.ptr()) ||
                          PyMemoryView_Check(model.ptr());
  std::string source = from_bytes ? read_model_bytes(model) : path_from_python(model, "model");
  Result<std::unique_ptr<Session>> created = Status();
  {
    nb::gil_scoped_release unlocked;
    created = from_bytes ? Session::create_from_bytes(source, options) : Session::create(source, options);
  }
  check(created.status());
  self->session = std::move(created).value();
}

// Raises TypeError unless every key of `d` is of the map's key type: str for
// string keys, int (or a numpy integer) for int64 keys. np.asarray would turn
// 1 into "1" and 1.5 into 1, keys the map then silently misses or mismatches.
void check_map_keys(const std::string& name, const std::string& type, const nb::dict& d, bool string_keys) {
  nb::handle integer = numpy().attr("integer");
  for (nb::handle key : d.keys()) {
    const bool ok = string_keys ? PyUnicode_Check(key.ptr())
                                : !PyBool_Check(key.ptr()) && (PyLong_Check(key.ptr()) ||
                                                               PyObject_IsInstance(key.ptr(), integer.ptr()) == 1);
    if (!ok) {
      throw nb::type_error(("input '" + name + "' is a " + type + ": its keys must be " +
                            (string_keys ? "str" : "int") + ", got " + str_of(key.type().attr("__name__")) + " " +
                            repr_of(key))
                               .c_str());
    }
  }
}

// A feed for an input that is not a plain tensor: a dict for a map input, a
// list of arrays for a sequence, None for an absent optional; arrays
// otherwise. The arrays it views are kept in `prepared`.
Value value_from_python(const std::string& name, nb::handle value, const TensorInfo* info, std::vector<Feed>& prepared) {
  const std::string type = info ? info->type : "";
  if (value.is_none()) return Value();
  if (type.rfind("map(", 0) == 0) {
    if (!PyDict_Check(value.ptr()))
      throw nb::type_error(("input '" + name + "' is a " + type + ": pass a dict").c_str());
    nb::dict d = nb::borrow<nb::dict>(value);
    const bool string_keys = type.rfind("map(string", 0) == 0;
    check_map_keys(name, type, d, string_keys);
    nb::object key_dtype = string_keys ? nb::object(nb::str("U")) : numpy().attr("int64");
    nb::object keys = numpy().attr("asarray")(nb::list(d.keys()), key_dtype);
    nb::object vals = numpy().attr("asarray")(nb::list(d.values()), numpy_dtype(info->dtype));
    prepared.push_back(feed_from_python(name, keys, nullptr));
    Tensor k = prepared.back().tensor;
    prepared.push_back(feed_from_python(name, vals, nullptr));
    return Value::of_map(std::move(k), prepared.back().tensor);
  }
  if (type.rfind("seq(tensor", 0) == 0) {
    if (!PyList_Check(value.ptr()) && !PyTuple_Check(value.ptr()))
      throw nb::type_error(("input '" + name + "' is a " + type + ": pass a list of arrays").c_str());
    Value v;
    v.kind = Value::Kind::kSequence;
    TensorInfo elem;
    if (info) elem.dtype = info->dtype;
    for (nb::handle item : nb::borrow<nb::sequence>(value)) {
      prepared.push_back(feed_from_python(name, item, &elem));
      v.sequence.push_back(prepared.back().tensor);
    }
    return v;
  }
  prepared.push_back(feed_from_python(name, value, info));
  return Value::of(prepared.back().tensor);
}

// A run's value as ONNX Runtime's Python API returns it: an array, a list of
// arrays (sequence), a dict (map), a list of dicts (ZipMap's sequence of
// maps), None (an absent optional).
nb::object value_to_python(Value v) {
  switch (v.kind) {
    case Value::Kind::kTensor: return tensor_to_numpy(std::move(v.tensor));
    case Value::Kind::kSequence: {
      nb::list items;
      for (Tensor& t : v.sequence) items.append(tensor_to_numpy(std::move(t)));
      return items;
    }
    case Value::Kind::kMap:
    case Value::Kind::kMapSequence: {
      nb::list keys = nb::borrow<nb::list>(tensor_to_numpy(std::move(v.keys)).attr("tolist")());
      nb::object vals = tensor_to_numpy(std::move(v.values)).attr("tolist")();
      auto zip = [&](nb::handle row) {
        nb::dict d;
        nb::list r = nb::borrow<nb::list>(row);
        for (size_t i = 0; i < keys.size(); ++i) d[keys[i]] = r[i];
        return d;
      };
      if (v.kind == Value::Kind::kMap) return zip(vals);
      nb::list maps;
      for (nb::handle row : nb::borrow<nb::list>(vals)) maps.append(zip(row));
      return maps;
    }
    case Value::Kind::kNone: break;
  }
  return nb::none();
}

nb::object run(PySession& self, nb::handle feeds, std::optional<std::vector<std::string>> output_names,
               bool want_report, std::optional<double> timeout_ms, const PyRunOptions* run_options) {
  Session& session = get(self);
  RunOptions options;
  if (timeout_ms) {
    if (!(*timeout_ms > 0)) raise_status(InvalidArgument("timeout_ms must be positive (None: no limit)"));
    options.timeout_ms = *timeout_ms;
  }
  if (run_options) options.cancel = &run_options->terminate;
  const bool profiling = self.profile.on;
  const bool asked_report = want_report;
  want_report = want_report || profiling;
  const int64_t start_us = profiling ? now_us() : 0;
  if (!PyDict_Check(feeds.ptr())) {
    if (!PyMapping_Check(feeds.ptr()) || PyUnicode_Check(feeds.ptr())) {
      throw nb::type_error("feeds must be a dict of input name -> array");
    }
  }
  nb::dict items = PyDict_Check(feeds.ptr())
                       ? nb::borrow<nb::dict>(feeds)
                       : nb::borrow<nb::dict>(nb::handle(reinterpret_cast<PyObject*>(&PyDict_Type))(feeds));

  const std::vector<TensorInfo>& outputs_info = session.outputs();
  std::vector<size_t> picked;  // output indices to return, in order
  if (output_names) {
    for (const std::string& name : *output_names) {
      size_t i = 0;
      while (i < outputs_info.size() && outputs_info[i].name != name) ++i;
      if (i == outputs_info.size()) {
        std::string names;
        for (const TensorInfo& o : outputs_info) names += (names.empty() ? "" : ", ") + o.name;
        raise_status(InvalidArgument("the model has no output named '" + name + "'; its outputs are: " + names));
      }
      picked.push_back(i);
    }
  }

  // Feeds hold Python references: they must die with the GIL held, so they
  // are declared outside the unlocked block below.
  std::vector<Feed> prepared;
  prepared.reserve(items.size());
  std::map<std::string, Tensor> inputs;
  // Models with sequence, map or optional values run through run_values.
  bool all_tensors = true;
  for (const TensorInfo& t : session.inputs()) all_tensors = all_tensors && t.is_tensor;
  for (const TensorInfo& t : session.outputs()) all_tensors = all_tensors && t.is_tensor;
  std::map<std::string, Value> values;
  for (auto [key, value] : items) {
    if (!PyUnicode_Check(key.ptr())) throw nb::type_error("feeds keys must be str (input names)");
    std::string name = nb::cast<std::string>(key);
    const TensorInfo* info = nullptr;
    for (const TensorInfo& in : session.inputs()) {
      if (in.name == name) info = &in;
    }
    if (all_tensors) {
      prepared.push_back(feed_from_python(name, value, info));
      inputs.emplace(name, prepared.back().tensor);
    } else {
      values.emplace(name, value_from_python(name, value, info, prepared));
    }
  }

  RunReport report;
  if (!all_tensors) {
    Result<std::vector<Value>> result = Status();
    {
      nb::gil_scoped_release unlocked;
      result = session.run_values(values, options, want_report ? &report : nullptr);
      values.clear();
    }
    check(result.status());
    if (profiling) record_run(self.profile, start_us, now_us(), report);
    std::vector<Value>& got = result.value();
    nb::list out;
    if (output_names) {
      // A name asked for twice gives the same object twice (a value converts once).
      std::vector<nb::object> made(got.size());
      for (size_t i : picked) {
        if (!made[i].is_valid()) made[i] = value_to_python(std::move(got[i]));
        out.append(made[i]);
      }
    } else {
      for (Value& v : got) out.append(value_to_python(std::move(v)));
    }
    if (asked_report) return nb::make_tuple(out, nb::cast(std::move(report)));
    return out;
  }
  Result<std::vector<Tensor>> result = Status();
  {
    nb::gil_scoped_release unlocked;
    // No report asked for, none built (building one costs a little per run).
    result = session.run(inputs, options, want_report ? &report : nullptr);
    inputs.clear();  // views only; no Python object involved
  }
  check(result.status());
  if (profiling) record_run(self.profile, start_us, now_us(), report);
  std::vector<Tensor>& tensors = result.value();
  nb::list out;
  if (output_names) {
    for (size_t i : picked) out.append(tensor_to_numpy(tensors[i]));
  } else {
    for (Tensor& t : tensors) out.append(tensor_to_numpy(std::move(t)));
  }
  if (asked_report) return nb::make_tuple(out, nb::cast(std::move(report)));
  return out;
}

// A dict, or another mapping (not a list, tuple or str, which also pass PyMapping_Check).
bool is_mapping(nb::handle x) {
  if (PyDict_Check(x.ptr())) return true;
  if (PyList_Check(x.ptr()) || PyTuple_Check(x.ptr()) || PyUnicode_Check(x.ptr())) return false;
  return PyMapping_Check(x.ptr()) && nb::hasattr(x, "keys");
}

std::optional<std::vector<std::string>> names_from_python(nb::handle names) {
  if (names.is_none()) return std::nullopt;
  if (PyUnicode_Check(names.ptr()) || is_mapping(names)) {
    throw nb::type_error(("output_names must be None or a list of output names, got a " +
                          str_of(names.type().attr("__name__")))
                             .c_str());
  }
  std::vector<std::string> out;
  for (nb::handle n : nb::iter(names)) {
    if (!PyUnicode_Check(n.ptr())) {
      throw nb::type_error(("output_names must be None or a list of output names (str), got an element of type " +
                            str_of(n.type().attr("__name__")))
                               .c_str());
    }
    out.push_back(nb::cast<std::string>(n));
  }
  return out;
}

// Session.run in both calling conventions: dlrt's run(feeds, output_names=None)
// and ONNX Runtime's run(output_names, input_feed) (output_names None or a list;
// an empty list, as in ONNX Runtime, means every output), also with ONNX
// Runtime's keyword input_feed=.
// The third positional is dlrt's `report` (a bool or None) or ONNX Runtime's
// run_options (a dlrt.RunOptions), also given as the keyword run_options=.
nb::object run_either(PySession& self, nb::handle first, nb::handle second, nb::handle third,
                      std::optional<double> timeout_ms, nb::handle input_feed, nb::handle run_options_arg) {
  bool want_report = false;
  const PyRunOptions* run_options = nullptr;
  if (nb::isinstance<PyRunOptions>(third)) {
    run_options = nb::inst_ptr<PyRunOptions>(third);
  } else if (PyBool_Check(third.ptr())) {
    want_report = third.ptr() == Py_True;
  } else if (!third.is_none()) {
    throw nb::type_error(("run()'s third argument is report (a bool) or run_options (a dlrt.RunOptions), got " +
                          str_of(third.type().attr("__name__")))
                             .c_str());
  }
  if (!run_options_arg.is_none()) {
    if (run_options) throw nb::type_error("run(): run_options is given twice");
    if (!nb::isinstance<PyRunOptions>(run_options_arg))
      throw nb::type_error(("run_options must be a dlrt.RunOptions or None, got " +
                            str_of(run_options_arg.type().attr("__name__")))
                               .c_str());
    run_options = nb::inst_ptr<PyRunOptions>(run_options_arg);
  }
  nb::handle feeds, names;
  bool ort_style = false;
  if (!input_feed.is_none()) {
    if (!first.is_none() && !second.is_none()) {
      throw nb::type_error("run(output_names, input_feed=...): the output names are given twice");
    }
    feeds = input_feed;
    names = first.is_none() ? second : first;
    ort_style = true;
  } else if (is_mapping(first)) {
    feeds = first;
    names = second;
  } else if (is_mapping(second)) {
    feeds = second;
    names = first;
    ort_style = true;
  } else {
    throw nb::type_error(("run() takes the feeds as a dict of input name -> array: run(feeds) or "
                          "run(feeds, output_names) as dlrt, run(output_names, feeds) as ONNX Runtime; got " +
                          str_of(first.type().attr("__name__")) + " and " + str_of(second.type().attr("__name__")))
                             .c_str());
  }
  std::optional<std::vector<std::string>> picked = names_from_python(names);
  if (ort_style && picked && picked->empty()) picked.reset();
  return run(self, feeds, std::move(picked), want_report, timeout_ms, run_options);
}

nb::dict metadata_dict(PySession& self) {
  const ModelMetadata& m = model_metadata(get(self));
  nb::dict d;
  d["producer_name"] = m.producer_name;
  d["producer_version"] = m.producer_version;
  d["domain"] = m.domain;
  d["description"] = m.description;
  d["version"] = m.version ? nb::cast(*m.version) : nb::none();
  d["graph_name"] = m.graph_name;
  d["graph_description"] = m.graph_description;
  d["custom"] = m.custom;
  return d;
}

std::string info_repr(const TensorInfo& t) {
  std::string s = "TensorInfo(name=" + repr_of(t.name) + ", dtype=" +
                  dtype_name(t.dtype) + ", shape=" + repr_of(shape_to_python(t.shape));
  return s + ")";
}

std::string partition_repr(const PartitionReport& p) {
  std::string s = "PartitionReport(backend='" + p.backend + "', device='" + p.device +
                  "', node_count=" + std::to_string(p.node_count) + ", degraded=" + (p.degraded ? "True" : "False");
  if (!p.reason.empty()) s += ", reason=" + repr_of(p.reason);
  s += ", time_ms=" + repr_of(nb::float_(p.time_ms));
  if (!p.precision.empty()) s += ", precision='" + p.precision + "'";
  if (!p.vector_isa.empty()) s += ", vector_isa='" + p.vector_isa + "'";
  return s + ")";
}

nb::dict partition_dict(const PartitionReport& p) {
  nb::dict d;
  d["backend"] = p.backend;
  d["device"] = p.device;
  d["node_count"] = p.node_count;
  d["degraded"] = p.degraded;
  d["reason"] = p.reason;
  d["time_ms"] = p.time_ms;
  d["precision"] = p.precision;
  d["vector_isa"] = p.vector_isa;
  return d;
}

void bind_reports(nb::module_& m) {
  nb::class_<TensorInfo>(m, "TensorInfo", "One model input or output as the model declares it.")
      .def_ro("name", &TensorInfo::name, "The input or output name.")
      .def_prop_ro("dtype", [](const TensorInfo& t) { return numpy_dtype(t.dtype); },
                   nb::for_getter(nb::sig("def dtype(self, /) -> numpy.dtype | None")),
                   "The numpy dtype (object for strings; None for bfloat16, int4 and uint4, which numpy lacks).")
      .def_prop_ro("dtype_name", [](const TensorInfo& t) { return std::string(dtype_name(t.dtype)); },
                   "dlrt's name of the element type: 'float32', 'int64', 'bfloat16', 'string', ...")
      .def_prop_ro("shape", [](const TensorInfo& t) { return shape_to_python(t.shape); },
                   nb::for_getter(nb::sig("def shape(self, /) -> tuple[int | None, ...]")),
                   "The dims as a tuple, None for a dynamic dim.")
      .def_prop_ro("dim_names", [](const TensorInfo& t) {
            nb::list names;
            for (const std::string& n : t.dim_names) names.append(n.empty() ? nb::none() : nb::object(nb::str(n.c_str())));
            return nb::tuple(names);
          },
          nb::for_getter(nb::sig("def dim_names(self, /) -> tuple[str | None, ...]")), "Per dim, the model's name of a dynamic dim ('batch'), else None.")
      .def_ro("is_tensor", &TensorInfo::is_tensor, "False for sequences, maps and optionals.")
      .def_ro("type", &TensorInfo::type,
              "The type as ONNX (and ONNX Runtime's NodeArg.type) writes it: 'tensor(float)', "
              "'seq(map(int64,tensor(float)))', ...")
      .def("__repr__", &info_repr);

  nb::class_<PartitionReport>(m, "PartitionReport", "Where one part of the graph ran and how that went.")
      .def_ro("backend", &PartitionReport::backend, "The backend that ran it: 'cpu', 'openvino', 'opencl', ...")
      .def_ro("device", &PartitionReport::device, "The device: 'cpu:0', 'openvino:GPU', ...")
      .def_ro("node_count", &PartitionReport::node_count, "Graph nodes in the partition.")
      .def_ro("degraded", &PartitionReport::degraded, "True when it was meant for another device and fell back.")
      .def_ro("reason", &PartitionReport::reason, "Why it degraded ('' otherwise).")
      .def_ro("time_ms", &PartitionReport::time_ms, "Time spent in it during the run, in milliseconds.")
      .def_ro("precision", &PartitionReport::precision,
              "CPU partitions: 'f32', 'bf16x3', 'bf16 (amx)', 'bf16 (avx512_bf16)' or 'f32 (bf16 unavailable: ...)', plus the int8 kernel and float16 storage where used.")
      .def_ro("vector_isa", &PartitionReport::vector_isa,
              "CPU partitions: the vector instruction set the kernels ran with ('avx512', 'avx2', 'neon', 'generic'); "
              "'' for accelerators.")
      .def("as_dict", &partition_dict, nb::sig("def as_dict(self) -> dict[str, object]"),
           "The fields as a dict (for JSON).")
      .def("__repr__", &partition_repr);

  nb::class_<RunReport>(m, "RunReport", "How a run (or the session's placement) went, per partition.")
      .def_ro("partitions", &RunReport::partitions, "List of PartitionReport, in execution order.")
      .def_ro("run_ms", &RunReport::run_ms, "Wall time of the whole run in milliseconds (0 for a placement).")
      .def("as_dict", [](const RunReport& r) {
            nb::dict d;
            nb::list parts;
            for (const PartitionReport& p : r.partitions) parts.append(partition_dict(p));
            d["partitions"] = parts;
            d["run_ms"] = r.run_ms;
            return d;
          },
          nb::sig("def as_dict(self) -> dict[str, object]"), "The fields as a dict (for JSON).")
      .def("__repr__", [](const RunReport& r) {
        std::string s = "RunReport(run_ms=" + repr_of(nb::float_(r.run_ms)) + ", partitions=[";
        for (size_t i = 0; i < r.partitions.size(); ++i) s += (i ? ", " : "") + partition_repr(r.partitions[i]);
        return s + "])";
      });
}

}  // namespace

void bind_session(nb::module_& m) {
  bind_reports(m);
  nb::class_<PySession>(m, "Session", kSessionDoc)
      .def("__init__", &init_session, nb::arg("model"), nb::arg("device") = nb::none(), nb::arg("strict") = false,
           nb::arg("threads") = 0, nb::arg("warm_start") = false, nb::arg("cpu_precision") = nb::none(),
           nb::arg("backend_options") = nb::none(), nb::arg("max_tensor_bytes") = 0, nb::arg("optimize") = true,
           nb::arg("canary_inputs") = nb::none(), nb::arg("outputs") = nb::none(),
           nb::sig("def __init__(self, model: str | os.PathLike[str] | bytes | bytearray | memoryview, device: str | None = None, "
                   "strict: bool = False, threads: int = 0, warm_start: bool = False, "
                   "cpu_precision: str | None = None, backend_options: dict[str, str] | None = None, "
                   "max_tensor_bytes: int = 0, optimize: bool = True, "
                   "canary_inputs: collections.abc.Sequence[collections.abc.Mapping[str, numpy.typing.ArrayLike]] "
                   "| None = None, outputs: collections.abc.Sequence[str] | None = None) -> None"))
      .def_prop_ro("inputs", [](PySession& s) { return get(s).inputs(); },
                   "The model's inputs: a list of TensorInfo (name, dtype, shape).")
      .def_prop_ro("outputs", [](PySession& s) { return get(s).outputs(); },
                   "The model's outputs: a list of TensorInfo, in the order run() returns them.")
      .def("run", &run_either, nb::arg("feeds") = nb::none(), nb::arg("output_names") = nb::none(),
           nb::arg("report").none() = false, nb::arg("timeout_ms") = nb::none(), nb::kw_only(),
           nb::arg("input_feed") = nb::none(), nb::arg("run_options") = nb::none(),
           nb::sig("def run(self, feeds: collections.abc.Mapping[str, numpy.typing.ArrayLike] | "
                   "collections.abc.Sequence[str] | None = None, "
                   "output_names: collections.abc.Sequence[str] | collections.abc.Mapping[str, "
                   "numpy.typing.ArrayLike] | None = None, report: bool | RunOptions | None = False, "
                   "timeout_ms: float | None = None, *, "
                   "input_feed: collections.abc.Mapping[str, numpy.typing.ArrayLike] | None = None, "
                   "run_options: RunOptions | None = None) "
                   "-> list[numpy.ndarray] | tuple[list[numpy.ndarray], RunReport]"),
           kRunDoc)
      .def("get_inputs", [](PySession& s) { return node_args(get(s).inputs()); },
           nb::sig("def get_inputs(self) -> list[NodeArg]"),
           "The model's inputs as ONNX Runtime's InferenceSession.get_inputs() gives them: a list of "
           "NodeArg (name, shape with dim names, type).")
      .def("get_outputs", [](PySession& s) { return node_args(get(s).outputs()); },
           nb::sig("def get_outputs(self) -> list[NodeArg]"),
           "The model's outputs as ONNX Runtime's InferenceSession.get_outputs() gives them, in run()'s order.")
      .def("placement", [](PySession& s) { return get(s).placement(); },
           "Where the session's partitions were placed (before any run): a RunReport.")
      .def("precision_choice", [](PySession& s) { return precision_choice_dict(precision_choice(get(s))); },
           nb::sig("def precision_choice(self) -> dict[str, object]"),
           "What cpu_precision \"auto\" measured and chose: chosen, automatic, and for auto reason, canary,\n"
           "canary_sets, rounds, bound and trials (per precision: ran, median_ms, min_cosine, max_rel_error,\n"
           "within_bound, faster, verdict). {'chosen': ..., 'automatic': False} for a named precision.")
      .def("model_info", [](PySession& s) { return model_info_dict(model_info(get(s))); },
           nb::sig("def model_info(self) -> dict[str, object]"),
           "The model as imported (before graph optimisation), as dlrt.read_model_info() gives it.")
      .def("node_placement", [](PySession& s) { return node_placement_list(get(s)); },
           nb::sig("def node_placement(self) -> list[dict[str, object]]"),
           "Where each node of the planned graph runs, in plan order: dicts with node, op_type,\n"
           "partition (index into placement().partitions), backend, device and cpu_reason (why it\n"
           "stayed on the CPU although an accelerator was asked for; '' otherwise).")
      .def("_model_metadata", &metadata_dict, nb::sig("def _model_metadata(self) -> dict[str, object]"),
           "The model's producer_name, producer_version, domain, description (doc_string), version\n"
           "(model_version; None when unset), graph_name, graph_description and custom (metadata_props).")
      .def("_start_profiling", [](PySession& s) { s.profile.on = true; },
           "Records every later run (Session.end_profiling() writes them).")
      .def("_end_profiling", [](PySession& s) {
            s.profile.on = false;
            nb::list events = s.profile.events;
            s.profile.events = nb::list();
            return events;
          },
          nb::sig("def _end_profiling(self) -> list[dict[str, object]]"),
          "Stops recording; returns the events recorded (Chrome trace events, times in microseconds).")
      .def("__repr__", [](PySession& s) {
        if (!s.session) return std::string("Session(<not initialised>)");
        std::string r = "Session(inputs=[";
        for (size_t i = 0; i < s.session->inputs().size(); ++i) r += (i ? ", " : "") + s.session->inputs()[i].name;
        r += "], outputs=[";
        for (size_t i = 0; i < s.session->outputs().size(); ++i) r += (i ? ", " : "") + s.session->outputs()[i].name;
        return r + "])";
      });
}

int threads_from_python(int64_t threads) {
  if (threads < 0 || threads > kMaxThreads)
    raise_status(InvalidArgument("threads must be 0 (one per core) to " + std::to_string(kMaxThreads) + ", got " +
                                 std::to_string(threads)));
  return static_cast<int>(threads);
}

}  // namespace dlrt::python
