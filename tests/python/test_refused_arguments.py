"""Arguments the Python API refuses before acting on them (issue 80, shared/cases/hostile-2026-11-28
python_*): a None feed, a path with a NUL, a str where a count goes, a truthy non-bool optimize, a
provider option or device spec that names no one device, CrossEncoder.rank's negative top_k."""
import os
import pathlib

import numpy as np
import pytest

import dlrt
from conftest import ROOT

RETRIEVAL = os.path.join(ROOT, "tests", "models", "retrieval")
TINY_BERT = os.path.join(ROOT, "tests", "embed", "data", "tiny_bert")


@pytest.mark.parametrize("model, name", [("neg_any_rank.onnx", "x"), ("negate.onnx", "x"), ("int64_add.onnx", "i")])
def test_none_feed_is_a_missing_input(models, model, name):
    # np.asarray(None, float32) is a 0-d NaN: an input of unknown rank used to run on it.
    s = dlrt.InferenceSession(str(models / model), providers=["CPUExecutionProvider"])
    with pytest.raises(dlrt.InvalidArgument, match=f"input '{name}' is missing: its value is None"):
        s.run(None, {name: None})
    with pytest.raises(dlrt.InvalidArgument, match=f"input '{name}' is missing"):
        dlrt.Session(str(models / model)).run({name: None})


def test_none_feed_of_a_tensor_in_a_model_with_sequences_is_missing(models):
    s = dlrt.InferenceSession(str(models / "ort_style.onnx"), providers=["CPUExecutionProvider"])
    with pytest.raises(dlrt.InvalidArgument, match="input 'n' is missing"):
        s.run(None, {"x": np.zeros((1, 2, 3), np.float32), "n": None})


def test_path_with_a_nul_is_refused(models, tmp_path):
    path = str(models / "negate.onnx")
    for bad in (path + "\0junk", pathlib.Path(path + "\0junk")):  # (bytes are a model's data, not a path)
        with pytest.raises(ValueError, match="embedded null byte"):
            dlrt.Session(bad)
    with pytest.raises(ValueError, match="embedded null byte"):
        dlrt.Embedder(TINY_BERT + "\0x")


def test_optimize_must_be_a_bool(models):
    path = str(models / "negate.onnx")
    for bad in ("no", 1, None):
        with pytest.raises(TypeError, match="optimize must be True or False"):
            dlrt.Session(path, optimize=bad)
    dlrt.Session(path, optimize=False)


def test_counts_are_ints_not_strs(models):
    e = dlrt.Embedder(TINY_BERT, device="cpu", threads=1)
    before = e.max_seq_length
    for bad in ("5", 5.0, None, b"5"):
        with pytest.raises(TypeError):
            e.max_seq_length = bad
    assert e.max_seq_length == before
    e.max_seq_length = np.int64(5)  # operator.index takes numpy's integers
    assert e.max_seq_length == 5
    with pytest.raises(TypeError):
        dlrt.Embedder(TINY_BERT, max_seq_length="5")
    with pytest.raises(TypeError):
        e.encode(["a b"], batch_size="2")
    with pytest.raises(TypeError):
        dlrt.Session(str(models / "negate.onnx"), threads="2")


def test_rank_top_k_is_a_non_negative_int():
    ce = dlrt.CrossEncoder(os.path.join(RETRIEVAL, "qwen3_rerank"), device="cpu", threads=1)
    docs = ["one", "two", "three"]
    assert len(ce.rank("q", docs)) == 3
    assert len(ce.rank("q", docs, top_k=2)) == 2
    assert ce.rank("q", docs, top_k=0) == []
    assert len(ce.rank("q", docs, top_k=10)) == 3
    with pytest.raises(dlrt.InvalidArgument, match="top_k must be >= 0"):
        ce.rank("q", docs, top_k=-1)
    with pytest.raises(TypeError):
        ce.rank("q", docs, top_k="2")


@pytest.mark.parametrize("provider, options", [
    ("CUDAExecutionProvider", {"device_id": "0,cpu"}), ("OpenVINOExecutionProvider", {"device_type": "GPU,cuda:0"}),
    ("CUDAExecutionProvider", {"device_id": -1}), ("CUDAExecutionProvider", {"device_id": True}),
    ("CUDAExecutionProvider", {"device_id": 1.5}), ("CUDAExecutionProvider", {"device_id": 2**70}),
    ("CUDAExecutionProvider", {"device_id": "abc"}), ("OpenVINOExecutionProvider", {"device_type": ""}),
    ("OpenVINOExecutionProvider", {"device_type": "GPU:0"}), ("OpenVINOExecutionProvider", {"device_type": 0}),
])
def test_provider_options_name_one_checked_device(models, provider, options):
    with pytest.raises(ValueError, match="must"):
        dlrt.InferenceSession(str(models / "negate.onnx"), providers=[provider], provider_options=[options])


def test_provider_options_that_name_a_device():
    from dlrt._session import _device_spec
    assert _device_spec([("CUDAExecutionProvider", {"device_id": "1"})]) == "cuda:1"
    assert _device_spec([("CUDAExecutionProvider", {"device_id": np.int64(2)})]) == "cuda:2"
    assert _device_spec([("OpenCLExecutionProvider", {"device_id": 0})]) == "opencl:0"
    assert _device_spec([("OpenVINOExecutionProvider", {"device_type": "GPU.1"})]) == "openvino:GPU.1"


@pytest.mark.parametrize("device", ["cuda:-1", "cuda:abc", "cuda:1.5", "cuda:" + str(2**70), "openvino:", "cpu:x",
                                    "cuda:0,cpu:-1"])
def test_device_spec_names_a_device_or_is_refused(models, device):
    with pytest.raises(dlrt.InvalidArgument, match="malformed device"):
        dlrt.Session(str(models / "negate.onnx"), device=device)
