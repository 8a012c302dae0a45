"""Router folders sentence-transformers 5.x and 6.x saved (tests/models/st_modules/st<N>_router*,
made by tests/models/make_st_modules.py) through dlrt.Embedder: encode_query / encode_document /
encode against the library's (cosine >= 0.99999, values within 1e-4), and encode_sparse(is_query=)
of an inference-free SPLADE Router against its encode_query / encode_document (the same non-zero
indices, values within 1e-4 relative or 1e-6 absolute)."""
import json
import os

import numpy as np
import pytest

import dlrt
from conftest import ROOT, assert_sparse_values

ST = os.path.join(ROOT, "tests", "models", "st_modules")


def reference(major):
    with open(os.path.join(ST, f"st{major}_reference.json"), encoding="utf-8") as f:
        return json.load(f)


def expect_rows(got, want, what):
    want = np.array(want, dtype=np.float64)
    assert got.shape == want.shape, what
    for i, (g, w) in enumerate(zip(got.astype(np.float64), want)):
        if not w.any():  # the static route's empty text: zeros in torch and here
            assert not g.any(), (what, i)
            continue
        cos = g @ w / (np.linalg.norm(g) * np.linalg.norm(w))
        assert cos >= 0.99999, (what, i, cos)
    np.testing.assert_allclose(got, want, atol=1e-4)


@pytest.mark.parametrize("major", [5, 6])
def test_router_dense_routes(major):
    ref = reference(major)
    want = ref["folders"]["router"]
    e = dlrt.Embedder(os.path.join(ST, f"st{major}_router"), device="cpu", threads=2)
    assert e.kind == "dense"
    expect_rows(e.encode_query(ref["texts"]), want["query"], "encode_query")
    expect_rows(e.encode_document(ref["texts"]), want["document"], "encode_document")
    expect_rows(e.encode(ref["texts"]), want["default"], "encode")
    expect_rows(e.encode(ref["texts"], task="query", prompt_name="query"), want["query"], "task='query'")
    with pytest.raises(ValueError, match="task"):
        e.encode(ref["texts"], task="image")


@pytest.mark.parametrize("major", [5, 6])
def test_router_sparse_routes(major):
    ref = reference(major)
    e = dlrt.Embedder(os.path.join(ST, f"st{major}_router_sparse"), device="cpu", threads=2)
    assert e.kind == "sparse"
    for name, is_query in (("query", True), ("document", False)):
        got = e.encode_sparse(ref["texts"], is_query=is_query)
        for i, ((indices, values), want) in enumerate(zip(got, ref["folders"]["router_sparse"][name])):
            assert indices.tolist() == want["indices"], (name, i)
            assert_sparse_values(values, want["values"], f"{name} text {i}")
