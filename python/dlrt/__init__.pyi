# The package's public names (python/dlrt/__init__.py). The native classes and
# functions are in _dlrt.pyi, which `python -m nanobind.stubgen -m dlrt._dlrt`
# writes (Embedder is _embedder.py's subclass of the native one, Session
# _session.py's, with ONNX Runtime's names beside it); the exception
# classes are made at import time (python/src/errors.cpp) and written here.
# tests/python/test_stubs.py checks both against the module.
from ._dlrt import (
    CrossEncoder as CrossEncoder,
    Device as Device,
    NodeArg as NodeArg,
    PartitionReport as PartitionReport,
    RunOptions as RunOptions,
    RunReport as RunReport,
    StatusCode as StatusCode,
    TensorInfo as TensorInfo,
    backends as backends,
    devices as devices,
    memory_info as memory_info,
    read_model_info as read_model_info,
)
from ._embedder import Embedder as Embedder
from ._session import (
    ExecutionMode as ExecutionMode,
    GraphOptimizationLevel as GraphOptimizationLevel,
    InferenceSession as InferenceSession,
    IOBinding as IOBinding,
    ModelMetadata as ModelMetadata,
    Session as Session,
    SessionOptions as SessionOptions,
    get_all_providers as get_all_providers,
    get_available_providers as get_available_providers,
    get_device as get_device,
    get_version_string as get_version_string,
    set_default_logger_severity as set_default_logger_severity,
)

__version__: str

class Error(RuntimeError):
    """
    Base class of every error dlrt raises (a RuntimeError). str(e) is dlrt's message;
    e.code is the dlrt.StatusCode.
    """

    code: StatusCode = StatusCode.Internal

class BackendError(Error):
    """An accelerator backend failed."""

    code: StatusCode = StatusCode.BackendError

class DeviceUnavailable(Error):
    """
    The requested device or backend is not available (strict mode turns fallbacks into this).
    """

    code: StatusCode = StatusCode.DeviceUnavailable

class InternalError(Error):
    """A bug in dlrt: please report it with the message."""

    code: StatusCode = StatusCode.Internal

class Cancelled(Error):
    """A run stopped by its timeout (Session.run(..., timeout_ms=...)); the Session stays usable."""

    code: StatusCode = StatusCode.Cancelled

class InvalidArgument(Error, ValueError):
    """
    A bad argument or input: an unknown or missing input name, a wrong dtype, rank or dim, a bad
    device spec or option. Also a ValueError.
    """

    code: StatusCode = StatusCode.InvalidArgument

class InvalidModel(Error):
    """
    The model is not valid ONNX: unreadable bytes, a broken graph or external data.
    """

    code: StatusCode = StatusCode.InvalidModel

class IoError(Error):
    """A file could not be read or written."""

    code: StatusCode = StatusCode.IoError

class NotFound(Error):
    """A file or folder the call names does not exist."""

    code: StatusCode = StatusCode.NotFound

class OutOfMemory(Error):
    """An allocation failed."""

    code: StatusCode = StatusCode.OutOfMemory

class OutOfRange(Error):
    """An index or value outside its range."""

    code: StatusCode = StatusCode.OutOfRange

class RunError(Error):
    """A run failed while executing (a kernel error)."""

    code: StatusCode = StatusCode.RuntimeError

class Unsupported(Error):
    """The model uses an op, opset or feature dlrt lacks."""

    code: StatusCode = StatusCode.Unsupported

__all__: list[str]
