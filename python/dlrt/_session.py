"""dlrt.Session (the native dlrt._dlrt.Session with ONNX Runtime's session API on top) and
ONNX Runtime's names: InferenceSession, SessionOptions, GraphOptimizationLevel, ExecutionMode,
ModelMetadata, IOBinding, get_available_providers(), get_all_providers().
docs/python-session.md lists what each one does in dlrt."""

import datetime
import enum
import json
import operator
import os
import re
import time
import warnings

from . import _dlrt

# ONNX Runtime's execution provider -> dlrt's backend (a device spec), in ONNX Runtime's order.
_PROVIDERS = {
    "CUDAExecutionProvider": "cuda",
    "OpenVINOExecutionProvider": "openvino",
    "OpenCLExecutionProvider": "opencl",
    "CPUExecutionProvider": "cpu",
}
_BACKEND_PROVIDER = {backend: name for name, backend in _PROVIDERS.items()}
# The provider option that picks one device of the backend (ONNX Runtime's key).
_DEVICE_OPTION = {"CUDAExecutionProvider": "device_id", "OpenVINOExecutionProvider": "device_type",
                  "OpenCLExecutionProvider": "device_id"}
# The largest device index a device spec takes (runtime/device_spec.h), and a device name's form there.
_MAX_DEVICE_ID = 2**31 - 1
_DEVICE_NAME = re.compile(r"[A-Za-z][A-Za-z0-9._-]*")


class GraphOptimizationLevel(enum.IntEnum):
    """ONNX Runtime's optimisation levels. dlrt has one switch: ORT_DISABLE_ALL turns its graph
    optimisation off (Session(optimize=False)); every other level turns it on."""
    ORT_DISABLE_ALL = 0
    ORT_ENABLE_BASIC = 1
    ORT_ENABLE_EXTENDED = 2
    ORT_ENABLE_LAYOUT = 3
    ORT_ENABLE_ALL = 99


class ExecutionMode(enum.IntEnum):
    """ONNX Runtime's execution modes; accepted, without effect (dlrt runs a graph's nodes in order,
    each on intra_op_num_threads threads)."""
    ORT_SEQUENTIAL = 0
    ORT_PARALLEL = 1


class SessionOptions:
    """ONNX Runtime's SessionOptions for InferenceSession(path, sess_options) and Session(...,
    sess_options=). What dlrt does with each field:

    intra_op_num_threads      the CPU backend's threads (Session(threads=)); 0: one per core.
    graph_optimization_level  ORT_DISABLE_ALL: no graph optimisation (Session(optimize=False));
                              any other level: dlrt's optimisation (it has one level).
    enable_profiling          record each run; Session.end_profiling() writes the JSON trace
                              (profile_file_prefix + date + ".json" in the working directory).
    log_severity_level        0-4 (-1: the default) checked and kept; dlrt's log level is the
                              process's (DLRT_LOG_LEVEL), not a session's.
    inter_op_num_threads, execution_mode, enable_cpu_mem_arena, enable_mem_pattern,
    enable_mem_reuse, use_deterministic_compute, use_per_session_threads, log_verbosity_level,
    logid                     accepted and kept, without effect.
    optimized_model_filepath  must stay "": dlrt does not write the optimised model.

    Assigning a field ONNX Runtime's SessionOptions lacks raises AttributeError."""

    __slots__ = ("intra_op_num_threads", "inter_op_num_threads", "graph_optimization_level", "execution_mode",
                 "enable_profiling", "profile_file_prefix", "log_severity_level", "log_verbosity_level", "logid",
                 "enable_cpu_mem_arena", "enable_mem_pattern", "enable_mem_reuse", "use_deterministic_compute",
                 "use_per_session_threads", "optimized_model_filepath", "_config")

    def __init__(self):
        self.intra_op_num_threads = 0
        self.inter_op_num_threads = 0
        self.graph_optimization_level = GraphOptimizationLevel.ORT_ENABLE_ALL
        self.execution_mode = ExecutionMode.ORT_SEQUENTIAL
        self.enable_profiling = False
        self.profile_file_prefix = "dlrt_profile_"
        self.log_severity_level = -1
        self.log_verbosity_level = 0
        self.logid = ""
        self.enable_cpu_mem_arena = True
        self.enable_mem_pattern = True
        self.enable_mem_reuse = True
        self.use_deterministic_compute = False
        self.use_per_session_threads = True
        self.optimized_model_filepath = ""
        self._config = {}

    def add_session_config_entry(self, key, value):
        """Keeps a config entry (dlrt does not act on it)."""
        self._config[str(key)] = str(value)

    def get_session_config_entry(self, key):
        """A config entry set by add_session_config_entry; dlrt.InvalidArgument if none."""
        if key not in self._config:
            raise _dlrt.InvalidArgument(f"SessionOptions has no config entry {key!r}")
        return self._config[key]

    def _unsupported(self, what):
        raise _dlrt.Unsupported(f"SessionOptions.{what} is not supported by dlrt")

    def register_custom_ops_library(self, library_path):
        """Not supported: dlrt does not load ONNX Runtime custom-op libraries (its plugins: docs/devices.md)."""
        self._unsupported("register_custom_ops_library (dlrt's backend plugins are in docs/devices.md)")

    def add_initializer(self, name, value):
        """Not supported."""
        self._unsupported("add_initializer")

    def add_free_dimension_override_by_name(self, dim_name, dim_value):
        """Not supported."""
        self._unsupported("add_free_dimension_override_by_name")

    def _session_arguments(self):
        """(threads, optimize) for the native Session; raises for what dlrt cannot honour."""
        level = int(self.graph_optimization_level)
        if level not in {int(v) for v in GraphOptimizationLevel}:
            raise _dlrt.InvalidArgument(f"graph_optimization_level must be a GraphOptimizationLevel, got {level}")
        if self.log_severity_level not in (-1, 0, 1, 2, 3, 4):
            raise _dlrt.InvalidArgument(f"log_severity_level must be -1 or 0 to 4, got {self.log_severity_level!r}")
        if self.optimized_model_filepath:
            raise _dlrt.Unsupported("SessionOptions.optimized_model_filepath is not supported: dlrt does not "
                                    "write the optimised model (`dlrt compile` writes a compiled one)")
        if self.intra_op_num_threads < 0:
            raise _dlrt.InvalidArgument(f"intra_op_num_threads must be >= 0, got {self.intra_op_num_threads}")
        return self.intra_op_num_threads, level != GraphOptimizationLevel.ORT_DISABLE_ALL


class ModelMetadata:
    """ONNX Runtime's ModelMetadata (Session.get_modelmeta()): producer_name, graph_name, domain,
    description (the model's doc_string), graph_description, version (model_version; as in ONNX
    Runtime, 2**63 - 1 when the model sets none) and custom_metadata_map (metadata_props);
    producer_version is dlrt's addition."""

    __slots__ = ("producer_name", "producer_version", "graph_name", "domain", "description",
                 "graph_description", "version", "custom_metadata_map")

    def __init__(self, meta):
        self.producer_name = meta["producer_name"]
        self.producer_version = meta["producer_version"]
        self.graph_name = meta["graph_name"]
        self.domain = meta["domain"]
        self.description = meta["description"]
        self.graph_description = meta["graph_description"]
        self.version = meta["version"] if meta["version"] is not None else 2**63 - 1
        self.custom_metadata_map = dict(meta["custom"])

    def __repr__(self):
        return f"ModelMetadata(producer_name={self.producer_name!r}, graph_name={self.graph_name!r}, " \
               f"version={self.version})"


def get_all_providers():
    """The ONNX Runtime provider names dlrt knows (has a backend for), CPU last."""
    return list(_PROVIDERS)


def get_available_providers():
    """The providers this machine can run, in ONNX Runtime's names, accelerators first and
    CPUExecutionProvider last: a backend counts when its vendor runtime loads and it has a device
    that is not only a compile target (dlrt.backends())."""
    found = []
    for b in _dlrt.backends():
        name = _BACKEND_PROVIDER.get(b["name"])
        if name and b["available"] and name != "CPUExecutionProvider" and \
                any(not d["is_virtual"] for d in b["devices"]):
            found.append(name)
    order = list(_PROVIDERS)
    return sorted(found, key=order.index) + ["CPUExecutionProvider"]


def get_device():
    """ONNX Runtime's get_device(): "GPU" when this machine runs a GPU provider (CUDA or OpenCL),
    else "CPU". (ONNX Runtime names the device its build targets; dlrt's one build runs what it finds.)"""
    available = get_available_providers()
    return "GPU" if "CUDAExecutionProvider" in available or "OpenCLExecutionProvider" in available else "CPU"


def get_version_string():
    """dlrt's version (ONNX Runtime's get_version_string() gives its own)."""
    return _dlrt.__version__


def set_default_logger_severity(severity):
    """ONNX Runtime's logging threshold for the process: 0 verbose, 1 info, 2 warning (the default),
    3 error, 4 fatal. dlrt logs from then on at debug, info, warn, error, or not at all (it has no
    fatal messages); this wins over DLRT_LOG_LEVEL."""
    if isinstance(severity, bool) or not isinstance(severity, int) or not 0 <= severity <= 4:
        raise _dlrt.InvalidArgument(f"the severity must be an int from 0 (verbose) to 4 (fatal), got {severity!r}")
    _dlrt._set_log_level(severity)


def _provider_list(providers, provider_options):
    """[(name, {options})] from ONNX Runtime's providers (names or (name, options) pairs) and
    provider_options (one dict per provider)."""
    if isinstance(providers, str):
        raise TypeError("providers must be a list of provider names, e.g. ['CPUExecutionProvider']")
    pairs = []
    for p in providers:
        if isinstance(p, tuple) and len(p) == 2 and isinstance(p[0], str) and isinstance(p[1], dict):
            pairs.append((p[0], dict(p[1])))
        elif isinstance(p, str):
            pairs.append((p, {}))
        else:
            raise TypeError(f"a provider is a name or a (name, options dict) pair, got {p!r}")
    if provider_options is not None:
        if any(opts for _, opts in pairs):
            raise ValueError("give provider options either in providers as (name, options) pairs or as "
                             "provider_options, not both")
        if len(provider_options) != len(pairs):
            raise ValueError(f"provider_options has {len(provider_options)} entries for {len(pairs)} providers: "
                             "give one dict per provider")
        pairs = [(name, dict(opts)) for (name, _), opts in zip(pairs, provider_options)]
    return pairs


def _usable_providers(pairs):
    """The providers and options dlrt can act on, as ONNX Runtime treats a provider its build lacks:
    a provider dlrt has no backend for (TensorrtExecutionProvider, ...) is skipped with a warning,
    and so is an option with no dlrt equivalent (gpu_mem_limit, arena_extend_strategy, ...); with
    none left, the CPU runs the model (ONNX Runtime's fallback)."""
    usable = []
    for name, opts in pairs:
        if name not in _PROVIDERS:
            warnings.warn(f"dlrt has no backend for the provider {name!r}: it is skipped, as ONNX Runtime skips a "
                          f"provider it does not have (dlrt runs {', '.join(_PROVIDERS)})", stacklevel=4)
            continue
        key = _DEVICE_OPTION.get(name)
        ignored = sorted(set(opts) - ({key} if key else set()))
        if ignored:
            warnings.warn(f"{name} options {ignored} have no dlrt equivalent and are ignored; dlrt takes "
                          f"{repr(key) if key else 'none'} for {name} (backend_options= for others)", stacklevel=4)
        usable.append((name, {k: v for k, v in opts.items() if k == key}))
    return usable or ([("CPUExecutionProvider", {})] if pairs else [])


def _device_spec(pairs):
    """dlrt's device spec (a priority list) for ONNX Runtime providers: each node runs on the first
    listed backend that takes it, the rest on the CPU, as ONNX Runtime assigns nodes."""
    if not pairs:
        raise ValueError("providers is empty: list at least one, e.g. ['CPUExecutionProvider']")
    specs = []
    for name, opts in pairs:
        if name not in _PROVIDERS:
            raise ValueError(f"dlrt has no backend for the provider {name!r}; the providers it runs are "
                             f"{', '.join(_PROVIDERS)} (dlrt.get_available_providers(): those this machine "
                             "has); remove it from the list")
        key = _DEVICE_OPTION.get(name)
        unknown = sorted(set(opts) - ({key} if key else set()))
        if unknown:
            raise ValueError(f"{name} options {unknown} have no dlrt equivalent; dlrt takes "
                             f"{repr(key) if key else 'none'} for {name} (backend_options= for others)")
        spec = _PROVIDERS[name]
        if key and key in opts:
            spec += ":" + _device_option(name, key, opts[key])
        specs.append(spec)
    return ",".join(specs)


def _device_option(provider, key, value):
    """The device part of the spec for a provider's device_id / device_type, checked: a value is
    one device, never a list ("0,cpu" would add a priority-list entry the caller never listed)."""
    if key == "device_id":
        # ONNX Runtime's device_id is a non-negative int; a str of digits is its config-file form.
        if isinstance(value, str) and value.isascii() and value.isdigit():
            value = int(value)
        elif not isinstance(value, (bool, str)) and hasattr(type(value), "__index__"):
            value = operator.index(value)  # numpy's integers
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= _MAX_DEVICE_ID:
            raise ValueError(f"{provider} device_id must be an int from 0 to {_MAX_DEVICE_ID} (or a str of "
                             f"its digits), got {value!r}")
        return str(value)
    if not isinstance(value, str) or not _DEVICE_NAME.fullmatch(value):
        raise ValueError(f"{provider} {key} must name one device (letters, digits, '.', '_' or '-', starting with "
                         f"a letter, e.g. 'GPU' or 'GPU.0'), got {value!r}")
    return value


class IOBinding:
    """ONNX Runtime's IOBinding over CPU numpy arrays (Session.io_binding()): bind_cpu_input(),
    bind_output(name) with dlrt allocating it, run via Session.run_with_iobinding(), then
    copy_outputs_to_cpu() or get_outputs() (both numpy arrays). Device buffers (bind_input with
    a device pointer, OrtValues) are not supported: dlrt.Unsupported."""

    def __init__(self, session):
        self._session = session
        self._inputs = {}
        self._outputs = []
        self._results = None

    def bind_cpu_input(self, name, arr_on_cpu):
        """Feeds `name` with the numpy array (used in place when C-contiguous)."""
        self._inputs[name] = arr_on_cpu

    def bind_input(self, name, device_type, device_id, element_type, shape, buffer_ptr):
        """Not supported (a raw device buffer); use bind_cpu_input."""
        raise _dlrt.Unsupported("IOBinding.bind_input with a buffer pointer is not supported by dlrt; "
                                "bind numpy arrays with bind_cpu_input")

    def bind_ortvalue_input(self, name, ortvalue):
        """Not supported (dlrt has no OrtValue); use bind_cpu_input."""
        raise _dlrt.Unsupported("dlrt has no OrtValue; bind numpy arrays with bind_cpu_input")

    def bind_ortvalue_output(self, name, ortvalue):
        """Not supported (dlrt has no OrtValue); use bind_output(name)."""
        raise _dlrt.Unsupported("dlrt has no OrtValue; use bind_output(name)")

    def bind_output(self, name, device_type="cpu", device_id=0, element_type=None, shape=None, buffer_ptr=None):
        """Asks for output `name`, allocated by dlrt on the CPU (device_type 'cpu', no buffer_ptr)."""
        if str(device_type).lower() != "cpu" or buffer_ptr is not None:
            raise _dlrt.Unsupported("IOBinding.bind_output: dlrt binds outputs it allocates on the CPU only "
                                    "(device_type='cpu', no buffer_ptr)")
        self._outputs.append(name)

    def clear_binding_inputs(self):
        self._inputs = {}

    def clear_binding_outputs(self):
        self._outputs = []

    def synchronize_inputs(self):
        """Nothing to do: bound inputs are CPU arrays."""

    def synchronize_outputs(self):
        """Nothing to do: outputs are CPU arrays once run_with_iobinding returns."""

    def _run(self, run_options):
        self._results = self._session.run(list(self._outputs) or None, self._inputs, run_options)

    def get_outputs(self):
        """The outputs of the last run_with_iobinding, as numpy arrays (ONNX Runtime gives OrtValues)."""
        if self._results is None:
            raise _dlrt.InvalidArgument("no outputs yet: call Session.run_with_iobinding(binding) first")
        return list(self._results)

    def copy_outputs_to_cpu(self):
        """The outputs of the last run_with_iobinding as numpy arrays (copies)."""
        return [r.copy() if hasattr(r, "copy") else r for r in self.get_outputs()]


class Session(_dlrt.Session):
    __doc__ = _dlrt.Session.__doc__ + """

ONNX Runtime's arguments work too (keywords): providers (e.g. ["CUDAExecutionProvider",
"CPUExecutionProvider"], instead of device), provider_options, sess_options (a
dlrt.SessionOptions). dlrt.InferenceSession takes them in ONNX Runtime's order."""

    def __init__(self, model, device=None, strict=False, threads=0, warm_start=False, cpu_precision=None,
                 backend_options=None, max_tensor_bytes=0, optimize=True, *, providers=None, provider_options=None,
                 sess_options=None, canary_inputs=None, outputs=None):
        started_ns = time.time_ns()
        pairs = []
        if providers is not None:
            if device is not None:
                raise TypeError("give device= (dlrt's spec) or providers= (ONNX Runtime's names), not both")
            pairs = _usable_providers(_provider_list(providers, provider_options))
            device = _device_spec(pairs)
        elif provider_options is not None:
            raise ValueError("provider_options needs providers")
        options = sess_options if sess_options is not None else SessionOptions()
        if not isinstance(options, SessionOptions):
            raise TypeError(f"sess_options must be a dlrt.SessionOptions, got {type(options).__name__}")
        if not isinstance(optimize, bool):
            raise TypeError(f"optimize must be True or False, got {optimize!r}")
        sess_threads, sess_optimize = options._session_arguments()
        if threads and sess_threads and threads != sess_threads:
            raise ValueError(f"threads={threads} and sess_options.intra_op_num_threads={sess_threads} disagree")
        super().__init__(model, device, strict, threads or sess_threads, warm_start, cpu_precision, backend_options,
                         max_tensor_bytes, optimize and sess_optimize, canary_inputs, outputs)
        self._options = options
        self._provider_options = {name: {k: str(v) for k, v in opts.items()} for name, opts in pairs}
        self._profiling_start_ns = 0
        self._profile_init = None
        if options.enable_profiling:
            self._profiling_start_ns = started_ns
            self._profile_init = {"cat": "Session", "name": "session_initialization", "ph": "X", "pid": 0, "tid": 0,
                                  "ts": started_ns // 1000, "dur": (time.time_ns() - started_ns) // 1000}
            self._start_profiling()

    def get_providers(self):
        """The providers this session runs on, in ONNX Runtime's names: the backends of its
        partitions (Session.placement(); a partition that fell back counts as the CPU), accelerators
        first, CPUExecutionProvider always last (dlrt's fallback)."""
        used = []
        for p in self.placement().partitions:
            name = _BACKEND_PROVIDER.get(p.backend, p.backend)
            if name not in used and name != "CPUExecutionProvider":
                used.append(name)
        return used + ["CPUExecutionProvider"]

    def get_provider_options(self):
        """{provider: {option: value}} for get_providers(), as given (values as str)."""
        return {name: dict(self._provider_options.get(name, {})) for name in self.get_providers()}

    def get_session_options(self):
        """The SessionOptions the session was made with (a default one when none was given)."""
        return self._options

    def get_modelmeta(self):
        """The model's metadata as ONNX Runtime's ModelMetadata (dlrt.ModelMetadata)."""
        return ModelMetadata(self._model_metadata())

    def io_binding(self):
        """An IOBinding over CPU numpy arrays for run_with_iobinding()."""
        return IOBinding(self)

    def run_with_iobinding(self, iobinding, run_options=None):
        """Runs with the binding's inputs; its outputs are then in iobinding.get_outputs()."""
        if not isinstance(iobinding, IOBinding) or iobinding._session is not self:
            raise TypeError("run_with_iobinding takes an IOBinding from this session's io_binding()")
        iobinding._run(run_options)

    def get_profiling_start_time_ns(self):
        """When profiling started (ns since the epoch); 0 without SessionOptions.enable_profiling."""
        return self._profiling_start_ns

    def end_profiling(self):
        """Stops profiling and writes the events (Chrome trace format: a JSON list; times in us) to
        PREFIX + date + ".json" in the working directory: session_initialization, a model_run per
        run and, per run, one event per partition (backend, device, node count) laid end to end.
        Returns the file's path; "" when profiling is off (ONNX Runtime's behaviour)."""
        if not self._profiling_start_ns:
            return ""
        events = [self._profile_init] + self._end_profiling()
        self._profiling_start_ns = 0
        stamp = datetime.datetime.now().strftime("%Y-%m-%d_%H-%M-%S")
        path = f"{self._options.profile_file_prefix}{stamp}.json"
        n = 1
        while os.path.exists(path):
            path = f"{self._options.profile_file_prefix}{stamp}_{n}.json"
            n += 1
        with open(path, "w") as f:
            json.dump(events, f)
        return path


class InferenceSession(Session):
    """ONNX Runtime's InferenceSession(path_or_bytes, sess_options=None, providers=None,
    provider_options=None): a dlrt.Session made from ONNX Runtime's arguments. providers are
    ONNX Runtime's names, tried in order (each node on the first that takes it, the rest on the
    CPU); None: dlrt's default device ($DLRT_DEVICE, else auto). A provider dlrt has no backend
    for (TensorrtExecutionProvider, ...) is a ValueError naming the ones it has. dlrt's own
    keywords (strict, threads, warm_start, cpu_precision, backend_options, max_tensor_bytes, outputs) work
    too; ONNX Runtime's disabled_optimizers is dlrt.Unsupported (DLRT_DISABLE_PASSES skips passes)."""

    def __init__(self, path_or_bytes, sess_options=None, providers=None, provider_options=None, **kwargs):
        if kwargs.get("disabled_optimizers"):
            raise _dlrt.Unsupported("disabled_optimizers is not supported; DLRT_DISABLE_PASSES=name,name skips "
                                    "dlrt's passes (docs/optimizer.md)")
        kwargs.pop("disabled_optimizers", None)
        own = {"strict", "threads", "warm_start", "cpu_precision", "backend_options", "max_tensor_bytes", "outputs"}
        unknown = sorted(set(kwargs) - own)
        if unknown:
            raise TypeError(f"InferenceSession() got keyword arguments it does not take: {unknown}")
        super().__init__(path_or_bytes, sess_options=sess_options, providers=providers,
                         provider_options=provider_options, **kwargs)
