"""dlrt.read_model_info(), Session.model_info() and Session.node_placement() (issue 78): what a
model declares, and where each node runs, over the public C++ API (dlrt/model_info.h,
dlrt/placement.h)."""
import os

import pytest

import dlrt

MLP_KEYS = {"ir_version", "opsets", "producer_name", "producer_version", "domain", "description",
            "model_version", "graph_name", "graph_description", "metadata_props", "inputs", "outputs",
            "node_count", "subgraph_count", "ops", "parameter_count", "parameter_bytes"}


def check_mlp(info):
    assert set(info) == MLP_KEYS
    assert info["producer_name"] == "dlrt-test-models" and info["graph_name"] == "mlp"
    assert list(info["opsets"]) == ["ai.onnx"] and info["opsets"]["ai.onnx"] >= 7
    assert info["model_version"] is None and info["metadata_props"] == {}
    [x] = info["inputs"]
    assert x == {"name": "x", "kind": "tensor", "dtype": "float32", "key_dtype": None, "shape": [2, 4],
                 "type": "tensor(float)"}
    assert [o["name"] for o in info["outputs"]] == ["probs"]
    assert info["node_count"] == 6 and info["subgraph_count"] == 0
    counts = {(op["domain"], op["op_type"]): op["count"] for op in info["ops"]}
    assert counts == {("", "Add"): 2, ("", "MatMul"): 2, ("", "Relu"): 1, ("", "Softmax"): 1}
    assert info["parameter_count"] == 4 * 8 + 8 + 8 * 3 + 3
    assert info["parameter_bytes"] == 4 * info["parameter_count"]


def test_read_model_info(test_models):
    check_mlp(dlrt.read_model_info(os.path.join(test_models, "mlp.onnx")))


def test_session_model_info_is_the_model_as_imported(test_models):
    s = dlrt.Session(os.path.join(test_models, "mlp.onnx"), device="cpu", threads=1)
    check_mlp(s.model_info())


def test_symbolic_dims(test_models):
    s = dlrt.Session(os.path.join(test_models, "dynamic_batch.onnx"), device="cpu", threads=1)
    [x] = s.model_info()["inputs"]
    symbolic = [d for d in x["shape"] if not isinstance(d, int)]
    assert symbolic, x  # the batch dim: its symbol, or None where the model names none
    assert all(d is None or isinstance(d, str) and d for d in symbolic), x


def test_read_model_info_errors(tmp_path):
    with pytest.raises(dlrt.IoError):
        dlrt.read_model_info(str(tmp_path / "missing.onnx"))
    junk = tmp_path / "junk.onnx"
    junk.write_bytes(b"not a model \x01\x02")
    with pytest.raises(dlrt.InvalidModel):
        dlrt.read_model_info(str(junk))


def test_node_placement(test_models):
    s = dlrt.Session(os.path.join(test_models, "mlp.onnx"), device="cpu", threads=1)
    partitions = s.placement().partitions
    nodes = s.node_placement()
    assert nodes
    for n in nodes:
        assert set(n) == {"node", "op_type", "partition", "backend", "device", "cpu_reason"}
        assert 0 <= n["partition"] < len(partitions)
        assert n["backend"] == partitions[n["partition"]].backend == "cpu"
        assert n["op_type"] and n["cpu_reason"] == ""
