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
    # max_seq_length bounds the token vectors too.
    e.max_seq_length = 4
    assert e.encode(ref["texts"][0], output_value="token_embeddings").shape == (4, 32)


def test_colbert_max_seq_length_is_fixed_and_to_reloads():
    m = dlrt.Embedder(COLBERT, device="cpu", threads=2)
    ref = EXPECTED["default"]
    limit = m.max_seq_length
    assert limit >= 3 and f"max_seq_length={limit}" in repr(m) and "multi_vector=True" in repr(m)
    with pytest.raises(dlrt.Unsupported, match="query_length and document_length"):
        m.max_seq_length = 8
    assert m.max_seq_length == limit
    # to() loads the multi-vector folder again: still its token vectors.
    assert m.to("cpu") is m
    assert m.is_multi_vector and m.device == "cpu"
    assert_tokens_match(m.encode_query(EXPECTED["queries"][0]), ref["queries"][0], "after to()")
    with pytest.raises(dlrt.InvalidArgument, match="unknown device"):
        m.to("tpu")
    assert m.is_multi_vector
    assert_tokens_match(m.encode_document(EXPECTED["documents"][0]), ref["documents"][0], "after a failed to()")
    # A multi-vector folder has no sparse vectors either: the registry's refusal names its kind.
    with pytest.raises(dlrt.InvalidArgument, match="kind multi_vector"):
        m.encode_sparse(["a cat"])


def test_colbert_similarity_is_maxsim(colbert):
    # The folder's config_sentence_transformers.json names PyLate's "MaxSim".
    assert colbert.similarity_fn_name == "maxsim"
    queries = colbert.encode_query(EXPECTED["queries"])
    documents = colbert.encode_document(EXPECTED["documents"])
    scores = colbert.similarity(queries, documents)
    assert scores.dtype == np.float32 and scores.shape == (len(queries), len(documents))
    np.testing.assert_allclose(scores, EXPECTED["default"]["maxsim"], atol=1e-4)
    assert colbert.similarity(queries[0], documents[1]).shape == (1, 1)
    n = min(len(queries), len(documents))
    np.testing.assert_allclose(colbert.similarity_pairwise(queries[:n], documents[:n]),
                               [EXPECTED["default"]["maxsim"][i][i] for i in range(n)], atol=1e-4)
    with pytest.raises(ValueError, match="as many texts"):
        colbert.similarity_pairwise(queries[:2], documents[:1])
    with pytest.raises(ValueError, match="per-token"):
        colbert.similarity(np.zeros(16, np.float32), documents)
    with pytest.raises(ValueError, match="multi-vector"):
        colbert.similarity_fn_name = "cosine"
    with pytest.raises(ValueError, match="only multi-vector"):
        dlrt.Embedder(os.path.join(ROOT, "tests", "embed", "data", "tiny_bert"), similarity_fn_name="MaxSim")
