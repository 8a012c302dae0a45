"""Folders sentence-transformers 5.x and 6.x saved (tests/models/st_modules/,
made by tests/models/make_st_modules.py) through dlrt.Embedder against that
library's torch outputs: dense (Transformer + Pooling + Dense + LayerNorm +
Normalize), StaticEmbedding and WeightedLayerPooling (Transformer +
WeightedLayerPooling + Pooling) cosine >= 0.99999, SPLADE and
SparseStaticEmbedding the same non-zero indices with values within 1e-4
relative or 1e-6 absolute; 6.x's decoder embedder with its prompts; the
CrossEncoder folders of 5.3, 5.7 and 6.2 and 6.x's LogitScore LLM reranker
through dlrt.CrossEncoder.predict."""
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


@pytest.mark.parametrize("major", [5, 6])
@pytest.mark.parametrize("name", ["dense", "static", "wlp"])
def test_dense_and_static(major, name):
    ref = reference(major)
    e = dlrt.Embedder(os.path.join(ST, f"st{major}_{name}"), device="cpu", threads=2)
    assert e.kind == "dense"
    got = e.encode(ref["texts"])
    want = np.array(ref["folders"][name]["embeddings"], dtype=np.float64)
    assert got.shape == want.shape
    for i, (g, w) in enumerate(zip(got.astype(np.float64), want)):
        if not w.any():  # a static model's empty text: zeros in torch and here
            assert not g.any(), i
            continue
        cos = g @ w / (np.linalg.norm(g) * np.linalg.norm(w))
        assert cos >= 0.99999, (name, i, cos)
    np.testing.assert_allclose(got, want, atol=1e-4)


@pytest.mark.parametrize("major", [5, 6])
@pytest.mark.parametrize("name", ["sparse", "sparse_static"])
def test_sparse_and_sparse_static(major, name):
    ref = reference(major)
    e = dlrt.Embedder(os.path.join(ST, f"st{major}_{name}"), device="cpu", threads=2)
    assert e.kind == "sparse"
    for i, ((indices, values), want) in enumerate(zip(e.encode_sparse(ref["texts"]), ref["folders"][name]["sparse"])):
        assert indices.tolist() == want["indices"], (name, i)
        assert_sparse_values(values, want["values"], f"{name} text {i}")


def test_st6_llm_reranker_predicts_as_sentence_transformers():
    # 6.x's CrossEncoder over a causal LM (Transformer + LogitScore): predict() as CrossEncoder.predict.
    ref = reference(6)
    want = ref["folders"]["llm_reranker"]
    c = dlrt.CrossEncoder(os.path.join(ST, "st6_llm_reranker"), device="cpu", threads=2)
    assert c.is_llm_reranker
    got = c.predict([(want["query"], t) for t in ref["texts"]])
    np.testing.assert_allclose(got, want["scores"], atol=1e-4, rtol=0)
    with pytest.raises(dlrt.InvalidArgument, match="prompt template"):
        c.predict([(want["query"], "a")], instruction="judge")


def test_st6_cross_encoder_predicts_as_sentence_transformers():
    # 6.x saves a CrossEncoder with a modules.json (one sequence-classification Transformer).
    check_cross_encoder(6, "cross_encoder")


@pytest.mark.parametrize("name", ["cross_encoder", "cross_encoder_plain"])
def test_st5_cross_encoder_predicts_as_sentence_transformers(name):
    # 5.7 saves 6.x's layout (modules.json); 5.3 a plain transformers folder (config.json names the activation).
    check_cross_encoder(5, name)


@pytest.mark.parametrize("major,name", [(6, "cross_encoder_identity"), (5, "cross_encoder_identity"),
                                        (5, "cross_encoder_identity_plain")])
def test_cross_encoder_applies_the_folders_activation(major, name):
    # Saved with activation_fn Identity (6.2 and 5.7 in config_sentence_transformers.json, 5.3 in
    # config.json): predict and rank give the logits, as the library's predict does.
    check_cross_encoder(major, name)
    want = reference(major)["folders"][name]
    c = dlrt.CrossEncoder(os.path.join(ST, f"st{major}_{name}"), device="cpu", threads=2)
    ranked = c.rank(want["query"], reference(major)["texts"])
    np.testing.assert_allclose([r["score"] for r in ranked], sorted(want["scores"], reverse=True), atol=1e-5, rtol=0)
    got = c.predict([(want["query"], t) for t in reference(major)["texts"]], activation="sigmoid")
    np.testing.assert_allclose(got, want["sigmoid_scores"], atol=1e-5, rtol=0)


def check_cross_encoder(major, name):
    ref = reference(major)
    want = ref["folders"][name]
    c = dlrt.CrossEncoder(os.path.join(ST, f"st{major}_{name}"), device="cpu", threads=2)
    assert not c.is_llm_reranker
    got = c.predict([(want["query"], t) for t in ref["texts"]])
    np.testing.assert_allclose(got, want["scores"], atol=1e-5, rtol=0)
    ranked = c.rank(want["query"], ref["texts"], top_k=3)
    assert [r["corpus_id"] for r in ranked] == list(np.argsort(want["scores"])[::-1][:3])


def assert_cosine(got, want):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    assert got.shape == want.shape
    cos = (got * want).sum(1) / np.linalg.norm(got, axis=1) / np.linalg.norm(want, axis=1)
    assert cos.min() >= 0.99999, cos


def test_st6_decoder_embedder_prompts_as_sentence_transformers():
    # A Qwen3-Embedding-shaped folder saved by 6.x: last-token pooling, prompts by name and by
    # encode_query / encode_document, as the library's own calls.
    want = reference(6)["folders"]["decoder_embed"]
    e = dlrt.Embedder(os.path.join(ST, "st6_decoder_embed"), device="cpu", threads=2)
    texts = want["texts"]
    assert e.kind == "dense"
    assert_cosine(e.encode(texts, batch_size=3), want["default"])
    assert_cosine(e.encode_query(texts), want["query"])
    assert_cosine(e.encode(texts, prompt_name="query"), want["query"])
    assert_cosine(e.encode_document(texts), want["document"])
    assert_cosine(e.encode(texts, prompt_name="classification"), want["classification"])


@pytest.mark.parametrize("name", ["multi_vector", "multi_vector_min", "multi_vector_mean"])
def test_st6_multi_vector_encoder_matches_encode_query_and_document(name):
    """6.x's MultiVectorEncoder: encode_query / encode_document's per-token vectors (the task prompts,
    query expansion, MultiVectorMask's skip-list) with per-token cosine >= 0.9999 and the same kept
    token count; similarity() the library's (MaxSim, MeanMaxSim for multi_vector_mean)."""
    ref = reference(6)
    want = ref["folders"][name]
    e = dlrt.Embedder(os.path.join(ST, f"st6_{name}"), device="cpu", threads=2)
    assert e.is_multi_vector and e.similarity_fn_name == want.get("similarity_fn_name", "maxsim")
    got = {"query": e.encode_query(ref["texts"], batch_size=3), "document": e.encode_document(ref["texts"], batch_size=3)}
    for task, vectors in got.items():
        assert len(vectors) == len(want[task])
        for i, (g, w) in enumerate(zip(vectors, want[task])):
            w = np.asarray(w, dtype=np.float64)
            assert g.shape == w.shape, (task, i, g.shape, w.shape)
            cos = (g * w).sum(1) / np.linalg.norm(g, axis=1) / np.linalg.norm(w, axis=1)
            assert cos.min() >= 0.9999, (task, i, cos.min())
    library = want.get("similarity", want["maxsim"])  # MeanMaxSim for multi_vector_mean
    np.testing.assert_allclose(e.similarity(got["query"], got["document"]), library, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(e.similarity_pairwise(got["query"], got["document"]), np.diag(library),
                               rtol=1e-5, atol=1e-4)
    e.similarity_fn_name = "maxsim"
    np.testing.assert_allclose(e.similarity(got["query"], got["document"]), want["maxsim"], rtol=1e-5, atol=1e-4)
