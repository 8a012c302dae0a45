"""dlrt.Embedder on a multi-vector (ColBERT / PyLate) folder and token embeddings of a
plain folder, against the reference outputs PyLate and sentence-transformers gave
(tests/models/make_colbert_models.py; the committed files, no torch needed)."""
import json
import os
import shutil

import numpy as np
import pytest

import dlrt
from conftest import ROOT

RETRIEVAL = os.path.join(ROOT, "tests", "models", "retrieval")
COLBERT = os.path.join(RETRIEVAL, "colbert_tiny")
with open(os.path.join(RETRIEVAL, "colbert_tiny_expected.json")) as f:
    EXPECTED = json.load(f)


def assert_tokens_match(got, want, what):
    want = np.asarray(want, dtype=np.float64)
    assert got.dtype == np.float32 and got.shape == want.shape, (what, got.shape, want.shape)
    cos = (got * want).sum(1) / np.linalg.norm(got, axis=1) / np.linalg.norm(want, axis=1)
    assert cos.min() >= 0.99999, (what, cos.min())


def maxsim(q, d):
    return float((q.astype(np.float64) @ d.astype(np.float64).T).max(axis=1).sum())


@pytest.fixture(scope="module")
def colbert():
    return dlrt.Embedder(COLBERT, device="cpu", threads=2)


def test_colbert_queries_documents_and_maxsim_match_pylate(colbert):
    assert colbert.is_multi_vector
    assert colbert.get_sentence_embedding_dimension() == 16
    ref = EXPECTED["default"]
    queries = colbert.encode(EXPECTED["queries"], output_value="token_embeddings", is_query=True, batch_size=8)
    documents = colbert.encode(EXPECTED["documents"], output_value="token_embeddings", is_query=False, batch_size=8)
    assert isinstance(queries, list) and len(queries) == len(EXPECTED["queries"])
    for i, q in enumerate(queries):
        assert_tokens_match(q, ref["queries"][i], f"query {i}")
    for i, d in enumerate(documents):
        assert_tokens_match(d, ref["documents"][i], f"document {i}")
    for i, q in enumerate(queries):
        scores = [maxsim(q, d) for d in documents]
        np.testing.assert_allclose(scores, ref["maxsim"][i], atol=1e-4)
        assert np.argsort(scores).tolist() == np.argsort(ref["maxsim"][i]).tolist()
    # encode_query / encode_document pick the role; a str gives one array.
    one = colbert.encode_document(EXPECTED["documents"][0])
    assert_tokens_match(one, ref["documents"][0], "encode_document")
    assert_tokens_match(colbert.encode_query(EXPECTED["queries"][1]), ref["queries"][1], "encode_query")
    # Without is_query: queries, as PyLate's encode.
    assert_tokens_match(colbert.encode(EXPECTED["queries"][2], output_value="token_embeddings"),
                        ref["queries"][2], "default role")


def test_colbert_refuses_a_pooled_vector(colbert):
    with pytest.raises(ValueError, match="multi-vector"):
        colbert.encode(["a cat"])
    with pytest.raises(ValueError, match="precision"):
        colbert.encode(["a cat"], output_value="token_embeddings", precision="int8")
    with pytest.raises(ValueError, match="output_value"):
        colbert.encode(["a cat"], output_value="nope")


def test_plain_folder_token_embeddings_match_sentence_transformers(tmp_path):
    plain = tmp_path / "plain"
    shutil.copytree(COLBERT, plain)
    os.remove(plain / "config_sentence_transformers.json")
    shutil.rmtree(plain / "1_Dense")
    (plain / "modules.json").write_text(json.dumps([
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}]))
    (plain / "1_Pooling").mkdir()
    (plain / "1_Pooling" / "config.json").write_text(json.dumps({"word_embedding_dimension": 32, "pooling_mode": "mean"}))
    e = dlrt.Embedder(plain, device="cpu", threads=2)
    assert not e.is_multi_vector
    ref = EXPECTED["plain"]
    tokens = e.encode(ref["texts"], output_value="token_embeddings", batch_size=4)
    for i, t in enumerate(tokens):
        assert_tokens_match(t, ref["token_embeddings"][i], f"text {i}")
    with pytest.raises(ValueError, match="is_query"):
        e.encode(ref["texts"], output_value="token_embeddings", is_query=True)
    # The sentence vector is still there for a plain folder.
    assert e.encode(ref["texts"][0]).shape == (32,)
