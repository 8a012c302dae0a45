"""The model zoo ($DLRT_ZOO_DIR, default ../shared/models) through the Python API:
every case's outputs against the expected ones, within the tolerances of the C++
zoo test (tests/tools/zoo_test.cpp: rtol 1e-3, atol 1e-4, or the manifest's "compare")."""
import json
import os

import numpy as np
import pytest

import dlrt
from conftest import ZOO_DIR

RTOL, ATOL = 1e-3, 1e-4


def zoo_cases():
    if not ZOO_DIR:
        return [pytest.param(None, id="no-zoo", marks=pytest.mark.skip(
            reason="DLRT_ZOO_DIR is not set and ../shared/models has no manifest.json"))]
    with open(os.path.join(ZOO_DIR, "manifest.json")) as f:
        manifest = json.load(f)
    cases = []
    for model, m in sorted(manifest["models"].items()):
        for case, c in sorted(m.get("cases", {}).items()):
            cases.append(pytest.param((model, m, c), id=f"{model}/{case}"))
    return cases


_sessions = {}


def session_for(model, m):
    if model not in _sessions:
        _sessions.clear()  # one model at a time: cases are sorted by model
        _sessions[model] = dlrt.Session(os.path.join(ZOO_DIR, m.get("file", model + ".onnx")), device="cpu")
    return _sessions[model]


@pytest.mark.parametrize("case", zoo_cases())
def test_zoo_case(case):
    model, m, c = case
    s = session_for(model, m)
    feeds = {name: np.load(os.path.join(ZOO_DIR, path)) for name, path in c["inputs"].items()}
    names = list(c["expected"])
    got = s.run(feeds, output_names=names)
    cmp = m.get("compare") or {}
    for name, value in zip(names, got):
        want = np.load(os.path.join(ZOO_DIR, c["expected"][name]))
        assert value.shape == want.shape and value.dtype == want.dtype, name
        if cmp.get("min_cosine"):
            a = value.reshape(value.shape[0], -1).astype(np.float64)
            b = want.reshape(want.shape[0], -1).astype(np.float64)
            cos = (a * b).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
            assert cos.min() >= cmp["min_cosine"], f"{name}: min row cosine {cos.min()}"
        else:
            np.testing.assert_allclose(value, want, rtol=cmp.get("rtol", RTOL), atol=cmp.get("atol", ATOL),
                                       err_msg=f"{model} output {name}")
