"""The traditional-ML set ($DLRT_ML_SET_DIR, made by tests/models/make_ml_set.py:
scikit-learn pipelines converted by skl2onnx) through dlrt.Session: each output as
ONNX Runtime returns it (arrays, lists of dicts for ZipMap), equal to ONNX
Runtime's, and the predictions equal to scikit-learn's.
"""
import json
import os
import pickle

import numpy as np
import pytest

import dlrt

ML_SET = os.environ.get("DLRT_ML_SET_DIR", "")


def _cases():
    manifest = os.path.join(ML_SET, "manifest.json") if ML_SET else ""
    if not manifest or not os.path.isfile(manifest):
        return [pytest.param(None, id="no-ml-set", marks=pytest.mark.skip(
            reason="DLRT_ML_SET_DIR is not set or has no manifest.json: scripts/run_tests.sh makes the set with "
                   "tests/models/make_ml_set.py (pip's scikit-learn, skl2onnx, onnxruntime)"))]
    with open(manifest) as f:
        return [pytest.param(c["name"], id=c["name"]) for c in json.load(f)]


def _close(got, want, rtol, atol, what):
    """Compares one value as ONNX Runtime's Python API returns it."""
    if isinstance(want, list):
        assert isinstance(got, list), f"{what}: got {type(got).__name__}, ONNX Runtime gives a list"
        assert len(got) == len(want), f"{what}: {len(got)} items, ONNX Runtime gives {len(want)}"
        for i, (g, w) in enumerate(zip(got, want)):
            _close(g, w, rtol, atol, f"{what}[{i}]")
    elif isinstance(want, dict):
        assert isinstance(got, dict), f"{what}: got {type(got).__name__}, ONNX Runtime gives a dict"
        assert list(got.keys()) == list(want.keys()), f"{what}: keys {list(got)} != {list(want)}"
        for k in want:
            assert type(got[k]) is type(want[k]), f"{what}[{k!r}]: {type(got[k]).__name__} != {type(want[k]).__name__}"
            assert abs(got[k] - want[k]) <= atol + rtol * abs(want[k]), f"{what}[{k!r}]: {got[k]} != {want[k]}"
    else:
        want = np.asarray(want)
        assert isinstance(got, np.ndarray), f"{what}: got {type(got).__name__}"
        assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
        if want.dtype.kind in "OUS":
            assert got.tolist() == want.tolist(), f"{what}: {got.tolist()} != {want.tolist()}"
        elif want.dtype.kind in "iub":
            assert got.dtype == want.dtype, f"{what}: dtype {got.dtype} != {want.dtype}"
            np.testing.assert_array_equal(got, want, err_msg=what)
        else:
            assert got.dtype == want.dtype, f"{what}: dtype {got.dtype} != {want.dtype}"
            # float32 sums of large terms (SVM kernels, tree sums) round apart
            # by a few ulps of the largest value, not of each result.
            scale = float(np.abs(want).max()) if want.size else 0.0
            np.testing.assert_allclose(got, want, rtol=rtol, atol=atol * (1 + scale), err_msg=what)


def _as_matrix(value):
    """A probability output as a [rows, classes] array (ZipMap's list of dicts too)."""
    if isinstance(value, list):
        return np.array([list(d.values()) for d in value], dtype=np.float64)
    return np.asarray(value, dtype=np.float64)


@pytest.mark.parametrize("name", _cases())
def test_matches_onnxruntime_and_sklearn(name):
    with open(os.path.join(ML_SET, name + ".pkl"), "rb") as f:
        case = pickle.load(f)
    session = dlrt.Session(os.path.join(ML_SET, name + ".onnx"), device="cpu")
    assert [o.name for o in session.outputs] == case["outputs"]
    assert [o.type for o in session.outputs] == case["types"]
    got = session.run(case["inputs"])
    assert len(got) == len(case["ort"])
    scores = [w for w in case["ort"] if not (isinstance(w, np.ndarray) and w.dtype.kind in "iuOUS")]
    # A label is decided by its scores: where the two best are within rounding
    # of each other (or a one-class score is within rounding of 0), the label
    # may differ from ONNX Runtime's; such rows are left out of the label check.
    unsure = np.zeros(len(got[0]) if hasattr(got[0], "__len__") else 1, dtype=bool)
    if scores:
        s = _as_matrix(scores[0])
        if s.ndim == 2 and s.shape[1] >= 2:
            top = np.sort(s, axis=1)
            unsure = top[:, -1] - top[:, -2] <= 1e-5 * (1 + np.abs(top[:, -1]))
        elif s.ndim >= 1:
            unsure = np.abs(s.reshape(len(s), -1)[:, 0]) <= 1e-5
    for i, (g, w) in enumerate(zip(got, case["ort"])):
        what = f"output '{case['outputs'][i]}'"
        if isinstance(w, np.ndarray) and w.dtype.kind in "iuOUS" and unsure.shape == w.shape[:1] and unsure.any():
            keep = ~unsure
            _close(g[keep], w[keep], 0, 0, what)
            continue
        _close(g, w, 1e-4, 1e-5, what)

    # scikit-learn: the label, the probabilities, the value (float64 there,
    # float32 in the ONNX graph: a looser tolerance).
    sk = case["sklearn"]
    label = next((g for g in got if isinstance(g, np.ndarray) and g.dtype.kind in "iuOUS"), None)
    if "label" in sk and label is not None:
        want = np.asarray(sk["label"]).reshape(-1)
        agree = (label.reshape(-1).astype(want.dtype) == want) | unsure
        assert agree.all(), f"labels {label.reshape(-1)[~agree]} != scikit-learn's {want[~agree]}"
    if "proba" in sk:
        proba = _as_matrix(next(g for g in got if not (isinstance(g, np.ndarray) and g.dtype.kind in "iuOUS")))
        np.testing.assert_allclose(proba, sk["proba"], rtol=1e-3, atol=1e-4, err_msg="probabilities vs scikit-learn")
    if "value" in sk:
        value = next(g for g in got if isinstance(g, np.ndarray) and g.dtype.kind == "f")
        want = np.asarray(sk["value"], dtype=np.float64).reshape(-1)
        np.testing.assert_allclose(value.reshape(-1), want, rtol=1e-3, atol=1e-3 * (1 + np.abs(want).max()),
                                   err_msg="values vs scikit-learn")
