"""Session's ONNX Runtime-style calls (docs/python.md), as onnxruntime.InferenceSession
has them (checked with onnxruntime 1.31.1):
- run(output_names, input_feed[, run_options]): output_names None or [] gives every output in
  the model's order, a list of names gives those, in that order (repeats allowed); input_feed=
  may be given by keyword; the result is a list;
- get_inputs() / get_outputs(): objects with .name, .shape (a list: an int per fixed dim, the
  dim's name per named dynamic dim, None per unnamed one; [] for a scalar and for a sequence)
  and .type ("tensor(float)", "seq(tensor(float))", ...).
dlrt's own run(feeds, output_names=None, report=False, timeout_ms=None) keeps working.
The side-by-side test runs the same calls through ONNX Runtime in a python that has it."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import dlrt

X = (np.arange(24, dtype=np.float32).reshape(2, 4, 3) - 12) / 4
FEEDS = {"x": X, "n": np.array(5, np.int64)}


@pytest.fixture(scope="module")
def session(models):
    return dlrt.Session(str(models / "ort_style.onnx"), device="cpu")


def _same(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        if isinstance(w, list):
            assert isinstance(g, list) and len(g) == len(w)
            for a, b in zip(g, w):
                np.testing.assert_array_equal(a, b)
        else:
            assert isinstance(g, np.ndarray) and g.dtype == w.dtype
            np.testing.assert_array_equal(g, w)


def test_run_with_output_names_first(session):
    everything = session.run(FEEDS)  # dlrt's own call
    assert [type(v) for v in everything] == [np.ndarray, np.ndarray, np.ndarray, list]
    np.testing.assert_array_equal(everything[0], np.maximum(X, 0))
    np.testing.assert_array_equal(everything[1], -X)
    _same(session.run(None, FEEDS), everything)
    _same(session.run([], FEEDS), everything)  # ONNX Runtime: an empty list is every output
    _same(session.run(None, FEEDS, None), everything)  # a third positional None (run_options)
    _same(session.run(output_names=None, input_feed=FEEDS), everything)
    _same(session.run(["z", "y"], input_feed=FEEDS), [everything[1], everything[0]])
    _same(session.run(["z", "m", "y"], FEEDS), [everything[1], everything[2], everything[0]])
    _same(session.run(("y", "y"), FEEDS), [everything[0], everything[0]])


def test_dlrt_own_run_is_unchanged(session):
    [z, y] = session.run(FEEDS, ["z", "y"])
    np.testing.assert_array_equal(z, -X)
    assert session.run(FEEDS, []) == []  # dlrt's own call: no names, no outputs
    out, report = session.run(FEEDS, ["y"], report=True)
    assert len(out) == 1 and isinstance(report, dlrt.RunReport)
    _same(session.run(feeds=FEEDS, output_names=["m"]), [np.array(5, np.int64)])


def test_bad_ort_style_calls(session):
    with pytest.raises(dlrt.InvalidArgument, match="no output named 'nope'"):
        session.run(["nope"], FEEDS)
    with pytest.raises(TypeError, match="list of output names"):
        session.run("y", FEEDS)  # a str is not a list of names (ONNX Runtime: TypeError too)
    with pytest.raises(TypeError, match="dict of input name"):
        session.run(None, None)
    with pytest.raises(TypeError, match="dict of input name"):
        session.run(["y"], ["z"])
    with pytest.raises(TypeError, match="given twice"):
        session.run(["y"], ["z"], input_feed=FEEDS)
    with pytest.raises(dlrt.InvalidArgument):  # a missing input, also a ValueError as in ONNX Runtime
        session.run(None, {"x": X})


def test_get_inputs_and_outputs(session):
    ins, outs = session.get_inputs(), session.get_outputs()
    assert all(isinstance(a, dlrt.NodeArg) for a in ins + outs)
    assert [(a.name, a.shape, a.type) for a in ins] == [
        ("x", ["batch", None, 3], "tensor(float)"), ("n", [], "tensor(int64)")]
    assert [(a.name, a.shape, a.type) for a in outs] == [
        ("y", ["batch", None, 3], "tensor(float)"), ("z", ["batch", None, 3], "tensor(float)"),
        ("m", [], "tensor(int64)"), ("s", [], "seq(tensor(float))")]
    assert [a.name for a in outs] == [t.name for t in session.outputs]
    assert repr(ins[0]) == "NodeArg(name='x', type='tensor(float)', shape=['batch', None, 3])"
    # The common ONNX Runtime idiom: feed names from get_inputs(), fetch names from get_outputs().
    feeds = {ins[0].name: X, ins[1].name: np.array(1, np.int64)}
    [y] = session.run([outs[0].name], feeds)
    np.testing.assert_array_equal(y, np.maximum(X, 0))


def _ort_python():
    """A python with onnxruntime: $DLRT_ORT_PYTHON, else the build folder's venv
    (scripts/prepare_venvs.sh installs onnxruntime there)."""
    env = os.environ.get("DLRT_ORT_PYTHON")
    if env:
        return env
    build = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(dlrt._dlrt.__file__))))
    return os.path.join(build, "venv", "bin", "python")


ORT_SCRIPT = r"""
import json, sys
import numpy as np, onnxruntime as ort
model, feeds_npz, out_npz = sys.argv[1:4]
s = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
feeds = dict(np.load(feeds_npz))
calls = {"none": s.run(None, feeds), "empty": s.run([], feeds), "picked": s.run(["z", "m", "y"], feeds),
         "keyword": s.run(output_names=["y"], input_feed=feeds)}
arrays = {}
for call, values in calls.items():
    for i, v in enumerate(values):
        for j, item in enumerate(v if isinstance(v, list) else [v]):
            arrays[f"{call}.{i}.{j}"] = item
np.savez(out_npz, **arrays)
print(json.dumps({"version": ort.__version__,
                  "inputs": [[a.name, a.shape, a.type] for a in s.get_inputs()],
                  "outputs": [[a.name, a.shape, a.type] for a in s.get_outputs()],
                  "kinds": {c: [type(v).__name__ for v in vs] for c, vs in calls.items()}}))
"""


def test_side_by_side_with_onnxruntime(session, models, tmp_path):
    python = _ort_python()
    if not os.path.isfile(python):
        pytest.skip(f"no python with onnxruntime at {python} (set DLRT_ORT_PYTHON)")
    probe = subprocess.run([python, "-c", "import onnxruntime"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip(f"{python} cannot import onnxruntime (set DLRT_ORT_PYTHON)")
    np.savez(tmp_path / "feeds.npz", **FEEDS)
    done = subprocess.run([python, "-c", ORT_SCRIPT, str(models / "ort_style.onnx"), str(tmp_path / "feeds.npz"),
                           str(tmp_path / "ort.npz")], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    ort = json.loads(done.stdout.splitlines()[-1])
    assert [[a.name, a.shape, a.type] for a in session.get_inputs()] == ort["inputs"]
    assert [[a.name, a.shape, a.type] for a in session.get_outputs()] == ort["outputs"]
    want = np.load(tmp_path / "ort.npz")
    ours = {"none": session.run(None, FEEDS), "empty": session.run([], FEEDS),
            "picked": session.run(["z", "m", "y"], FEEDS), "keyword": session.run(output_names=["y"], input_feed=FEEDS)}
    for call, values in ours.items():
        assert [type(v).__name__ for v in values] == ort["kinds"][call], (call, ort["version"])
        for i, v in enumerate(values):
            items = v if isinstance(v, list) else [v]
            for j, item in enumerate(items):
                w = want[f"{call}.{i}.{j}"]
                assert item.dtype == w.dtype and item.shape == w.shape, (call, i, j)
                np.testing.assert_array_equal(item, w)
        assert not any(k.startswith(f"{call}.{len(values)}.") for k in want.files), call


def test_stub_and_doc_mention_the_conventions():
    assert "run(output_names, feeds)" in dlrt.Session.run.__doc__
    assert callable(dlrt.Session.get_inputs) and callable(dlrt.Session.get_outputs)
    assert sys.modules["dlrt"].NodeArg is dlrt._dlrt.NodeArg
