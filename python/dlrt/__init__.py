"""dlrt: run ONNX models on whatever hardware the machine has.

    import numpy as np, dlrt
    session = dlrt.Session("model.onnx", device="auto")
    [y], report = session.run({"x": np.zeros((1, 3, 224, 224), np.float32)}, report=True)
    print(report)                         # where each partition ran, and the times

    model = dlrt.Embedder("all-MiniLM-L6-v2/")   # a sentence-transformers ONNX folder
    vectors = model.encode(["a sentence", "another one"])

Classes: Session, Embedder, CrossEncoder, TensorInfo, NodeArg, RunReport, PartitionReport, Device; devices(),
backends(), memory_info(), read_model_info(); ONNX Runtime's names: InferenceSession, SessionOptions, RunOptions,
GraphOptimizationLevel, ExecutionMode, ModelMetadata, IOBinding, get_available_providers(), get_all_providers(),
get_device(), get_version_string(), set_default_logger_severity();
errors: Error and its subclasses, one per dlrt.StatusCode. Reference: docs/python.md.
"""

import importlib.util as _util
import os as _os


def _point_at_this_pythons_openvino():
    """OpenVINO is found at run time (never bundled or linked). The `openvino` package of this
    interpreter (pip install openvino into the same venv) is the one to use, even when the venv
    is not activated (no $VIRTUAL_ENV, and the python3 on PATH is another one): its libs folder
    goes into OPENVINO_LIB_PATH, unless that is already set. Nothing of openvino is imported."""
    if _os.environ.get("OPENVINO_LIB_PATH") or _os.environ.get("DLRT_OPENVINO_NO_PYTHON") == "1":
        return
    try:
        spec = _util.find_spec("openvino")
    except (ImportError, ValueError):
        return
    for folder in (spec.submodule_search_locations or []) if spec else []:
        libs = _os.path.join(folder, "libs")
        if _os.path.isdir(libs) and any(n.startswith("libopenvino_c.so") for n in _os.listdir(libs)):
            _os.environ["OPENVINO_LIB_PATH"] = libs
            return


_point_at_this_pythons_openvino()

from ._dlrt import (  # noqa: E402
    BackendError,
    Cancelled,
    CrossEncoder,
    Device,
    DeviceUnavailable,
    Error,
    InternalError,
    InvalidArgument,
    InvalidModel,
    IoError,
    NodeArg,
    NotFound,
    OutOfMemory,
    OutOfRange,
    PartitionReport,
    RunError,
    RunOptions,
    RunReport,
    StatusCode,
    TensorInfo,
    Unsupported,
    __version__,
    backends,
    devices,
    memory_info,
    read_model_info,
)
from ._embedder import Embedder  # noqa: E402  (the native Embedder with sentence-transformers' encode)
from ._session import (  # noqa: E402  (the native Session with ONNX Runtime's session API)
    ExecutionMode,
    GraphOptimizationLevel,
    InferenceSession,
    IOBinding,
    ModelMetadata,
    Session,
    SessionOptions,
    get_all_providers,
    get_available_providers,
    get_device,
    get_version_string,
    set_default_logger_severity,
)

__all__ = [
    "BackendError",
    "Cancelled",
    "CrossEncoder",
    "Device",
    "DeviceUnavailable",
    "Embedder",
    "Error",
    "ExecutionMode",
    "GraphOptimizationLevel",
    "IOBinding",
    "InferenceSession",
    "InternalError",
    "InvalidArgument",
    "InvalidModel",
    "IoError",
    "ModelMetadata",
    "NodeArg",
    "NotFound",
    "OutOfMemory",
    "OutOfRange",
    "PartitionReport",
    "RunError",
    "RunOptions",
    "RunReport",
    "Session",
    "SessionOptions",
    "StatusCode",
    "TensorInfo",
    "Unsupported",
    "__version__",
    "backends",
    "devices",
    "get_all_providers",
    "get_available_providers",
    "get_device",
    "get_version_string",
    "memory_info",
    "read_model_info",
    "set_default_logger_severity",
]
