"""Every dlrt error surfaces as its own exception class, with dlrt's message and code."""
import os

import numpy as np
import pytest

import dlrt

CLASSES = {
    "InvalidArgument": dlrt.InvalidArgument, "NotFound": dlrt.NotFound, "OutOfRange": dlrt.OutOfRange,
    "InvalidModel": dlrt.InvalidModel, "Unsupported": dlrt.Unsupported, "IoError": dlrt.IoError,
    "OutOfMemory": dlrt.OutOfMemory, "DeviceUnavailable": dlrt.DeviceUnavailable,
    "BackendError": dlrt.BackendError, "RuntimeError": dlrt.RunError, "Internal": dlrt.InternalError,
}


def test_hierarchy_and_codes():
    assert issubclass(dlrt.Error, RuntimeError)
    assert issubclass(dlrt.InvalidArgument, ValueError)
    for code_name, cls in CLASSES.items():
        assert issubclass(cls, dlrt.Error)
        assert cls.code == getattr(dlrt.StatusCode, code_name)
        assert cls.__module__ == "dlrt" and cls.__doc__
    assert int(dlrt.StatusCode.InvalidArgument) == 100 and int(dlrt.StatusCode.DeviceUnavailable) == 400
    assert len(set(CLASSES.values())) == len(CLASSES)


def raised(fn):
    with pytest.raises(dlrt.Error) as info:
        fn()
    return info.value


def test_missing_file():
    e = raised(lambda: dlrt.Session("/nonexistent/model.onnx"))
    assert type(e) is dlrt.IoError and e.code == dlrt.StatusCode.IoError
    assert "/nonexistent/model.onnx" in str(e)


def test_bad_bytes():
    e = raised(lambda: dlrt.Session(b"this is not an onnx model"))
    assert type(e) is dlrt.InvalidModel and e.code == dlrt.StatusCode.InvalidModel
    assert "ONNX" in str(e)


def test_broken_graph(test_models):
    e = raised(lambda: dlrt.Session(os.path.join(test_models, "bad", "cycle.onnx")))
    assert type(e) is dlrt.InvalidModel and "cycle" in str(e)


def test_unsupported_op_and_opset(test_models):
    e = raised(lambda: dlrt.Session(os.path.join(test_models, "bad", "custom_op.onnx")))
    assert type(e) is dlrt.Unsupported and "FancyCustomOp" in str(e)
    e = raised(lambda: dlrt.Session(os.path.join(test_models, "bad", "opset99.onnx")))
    assert type(e) is dlrt.Unsupported and "opset 99" in str(e)


def test_bad_device_spec(test_models):
    e = raised(lambda: dlrt.Session(os.path.join(test_models, "mlp.onnx"), device="bogus"))
    assert type(e) is dlrt.InvalidArgument and isinstance(e, ValueError) and "bogus" in str(e)


def test_strict_device_unavailable(test_models):
    if any(d.type == "npu" for d in dlrt.devices()):
        pytest.skip("this machine has an NPU, so device='npu' may well be available")
    e = raised(lambda: dlrt.Session(os.path.join(test_models, "mlp.onnx"), device="npu", strict=True))
    assert type(e) is dlrt.DeviceUnavailable and e.code == dlrt.StatusCode.DeviceUnavailable


def test_bad_cpu_precision(test_models):
    e = raised(lambda: dlrt.Session(os.path.join(test_models, "mlp.onnx"), cpu_precision="f8"))
    assert type(e) is dlrt.InvalidArgument and "f8" in str(e)


@pytest.fixture(scope="module")
def mlp(test_models):
    return dlrt.Session(os.path.join(test_models, "mlp.onnx"))


def test_unknown_input_name(mlp):
    e = raised(lambda: mlp.run({"x": np.zeros((2, 4), np.float32), "nope": np.zeros(1, np.float32)}))
    assert type(e) is dlrt.InvalidArgument and "nope" in str(e) and e.code == dlrt.StatusCode.InvalidArgument


def test_missing_input(mlp):
    e = raised(lambda: mlp.run({}))
    assert type(e) is dlrt.InvalidArgument and "'x' is missing" in str(e)


def test_wrong_dtype_is_not_cast(mlp):
    e = raised(lambda: mlp.run({"x": np.zeros((2, 4), np.float64)}))
    assert type(e) is dlrt.InvalidArgument and "float32" in str(e) and "float64" in str(e)


def test_wrong_rank_and_dim(mlp):
    e = raised(lambda: mlp.run({"x": np.zeros((8,), np.float32)}))
    assert type(e) is dlrt.InvalidArgument and "rank" in str(e)
    e = raised(lambda: mlp.run({"x": np.zeros((2, 5), np.float32)}))
    assert type(e) is dlrt.InvalidArgument and "dim" in str(e)


def test_unknown_output_name(mlp):
    e = raised(lambda: mlp.run({"x": np.zeros((2, 4), np.float32)}, output_names=["nope"]))
    assert type(e) is dlrt.InvalidArgument and "no output named 'nope'" in str(e)


def test_dtype_numpy_cannot_express(mlp):
    e = raised(lambda: mlp.run({"x": np.zeros((2, 4), np.complex64)}))
    assert type(e) is dlrt.InvalidArgument and "complex64" in str(e)


def test_python_type_errors(mlp):
    with pytest.raises(TypeError):
        mlp.run([np.zeros((2, 4), np.float32)])
    with pytest.raises(TypeError):
        mlp.run({1: np.zeros((2, 4), np.float32)})


def test_embedder_missing_folder(tmp_path):
    e = raised(lambda: dlrt.Embedder(tmp_path / "nothing-here"))
    assert type(e) is dlrt.NotFound and "nothing-here" in str(e)


def test_errors_can_be_caught_as_their_python_bases(mlp):
    with pytest.raises(ValueError):
        mlp.run({"x": np.zeros((2, 4), np.float64)})
    with pytest.raises(RuntimeError):
        dlrt.Session(b"junk")


def test_timeout_cancels_the_run_and_the_session_stays_usable(test_models):
    s = dlrt.Session(os.path.join(test_models, "mlp.onnx"))
    x = np.zeros((2, 4), np.float32)
    with pytest.raises(dlrt.Cancelled, match="timeout") as e:
        s.run({"x": x}, timeout_ms=1e-6)  # expired before the first node
    assert e.value.code == dlrt.StatusCode.Cancelled
    assert isinstance(e.value, dlrt.Error)
    [y] = s.run({"x": x}, timeout_ms=60_000)
    assert y.shape == (2, 3)
    with pytest.raises(dlrt.InvalidArgument, match="timeout_ms"):
        s.run({"x": x}, timeout_ms=0)
