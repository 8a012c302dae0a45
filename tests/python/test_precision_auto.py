"""cpu_precision="auto" from Python: Session and Embedder report what was measured and chosen
(docs/performance-precision.md, "Choosing the precision: auto"). Nothing here asserts a time."""
import os

import numpy as np
import pytest

import dlrt
from conftest import ROOT

TINY = os.path.join(ROOT, "tests", "embed", "data", "tiny_bert")


def check_choice(choice):
    assert choice["automatic"] is True
    assert choice["bound"] == {"min_cosine": 0.9999, "max_rel_error": 0.01, "speed_margin": 0.05}
    names = [t["precision"] for t in choice["trials"]]
    assert names == ["f32", "bf16x3", "bf16"]
    assert choice["trials"][0]["ran"]
    assert choice["chosen"] in names
    for t in choice["trials"]:
        assert t["verdict"], t
        if t["ran"]:
            assert t["median_ms"] >= 0 and 0 <= t["min_cosine"] <= 1 and t["max_rel_error"] >= 0
        else:
            assert t["verdict"].startswith("not available: ") or t["verdict"].startswith("failed"), t
    chosen = next(t for t in choice["trials"] if t["precision"] == choice["chosen"])
    assert chosen["verdict"] == "chosen"
    assert choice["reason"].startswith(choice["chosen"] + ": ")


def test_session_auto_on_given_canary_inputs(test_models):
    x = np.linspace(-1, 1, 8, dtype=np.float32).reshape(2, 4)
    s = dlrt.Session(os.path.join(test_models, "mlp.onnx"), threads=1, cpu_precision="auto",
                     canary_inputs=[{"x": x}, {"x": -x}])
    choice = s.precision_choice()
    check_choice(choice)
    assert choice["canary"] == "given" and choice["canary_sets"] == 2 and choice["rounds"] == 5
    assert "; auto: " in s.placement().partitions[0].precision
    [probs] = s.run({"x": x})
    np.testing.assert_allclose(probs.sum(axis=1), 1, rtol=1e-5)


def test_session_auto_generates_inputs_and_named_precisions_measure_nothing(test_models):
    s = dlrt.Session(os.path.join(test_models, "mlp.onnx"), threads=1, cpu_precision="auto")
    assert s.precision_choice()["canary"] == "generated from the inputs' shapes"
    named = dlrt.Session(os.path.join(test_models, "mlp.onnx"), threads=1, cpu_precision="f32")
    assert named.precision_choice() == {"chosen": "f32", "automatic": False}
    with pytest.raises(dlrt.InvalidArgument, match="auto"):
        dlrt.Session(os.path.join(test_models, "mlp.onnx"), cpu_precision="fast")


def test_embedder_auto_measures_on_warm_up_texts():
    e = dlrt.Embedder(TINY, threads=1, cpu_precision="auto")
    choice = e.precision_choice()
    check_choice(choice)
    assert choice["canary"] == "given" and choice["canary_sets"] == 2  # the warm-up texts: a batch, then one alone
    assert e.encode(["hello world"]).shape == (1, e.get_sentence_embedding_dimension())
    assert dlrt.Embedder(TINY, threads=1).precision_choice()["automatic"] is False
    with pytest.raises(dlrt.InvalidArgument, match="cpu_precision"):
        dlrt.Embedder(TINY, cpu_precision="bf17")
