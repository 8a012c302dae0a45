"""dlrt: run ONNX models on whatever hardware the machine has.

    import numpy as np, dlrt
    session = dlrt.Session("model.onnx", device="auto")
    [y], report = session.run({"x": np.zeros((1, 3, 224, 224), np.float32)}, report=True)
    print(report)                         # where each partition ran, and the times

    model = dlrt.Embedder("all-MiniLM-L6-v2/")   # a sentence-transformers ONNX folder
    vectors = model.encode(["a sentence", "another one"])

Classes: Session, Embedder, TensorInfo, RunReport, PartitionReport, Device; devices();
errors: Error and its subclasses, one per dlrt.StatusCode. Reference: docs/python.md.
"""

from ._dlrt import (
    BackendError,
    Device,
    DeviceUnavailable,
    Embedder,
    Error,
    InternalError,
    InvalidArgument,
    InvalidModel,
    IoError,
    NotFound,
    OutOfMemory,
    OutOfRange,
    PartitionReport,
    RunError,
    RunReport,
    Session,
    StatusCode,
    TensorInfo,
    Unsupported,
    __version__,
    devices,
)

__all__ = [
    "BackendError",
    "Device",
    "DeviceUnavailable",
    "Embedder",
    "Error",
    "InternalError",
    "InvalidArgument",
    "InvalidModel",
    "IoError",
    "NotFound",
    "OutOfMemory",
    "OutOfRange",
    "PartitionReport",
    "RunError",
    "RunReport",
    "Session",
    "StatusCode",
    "TensorInfo",
    "Unsupported",
    "__version__",
    "devices",
]
