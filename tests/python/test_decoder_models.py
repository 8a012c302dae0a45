"""Decoder-family retrieval models through the Python package, against their families' own
outputs in torch (tests/models/retrieval, made by tests/models/make_decoder_models.py):
Embedder.encode with prompts on Qwen3 and Gemma3 + Dense embedders, and CrossEncoder.predict /
rank on a Qwen3 LLM reranker, as sentence-transformers' users call them."""
import json
import os

import numpy as np
import pytest

import dlrt
from conftest import ROOT

DIR = os.path.join(ROOT, "tests", "models", "retrieval")
with open(os.path.join(DIR, "decoder_reference.json"), encoding="utf-8") as f:
    REF = json.load(f)


def kept(ref, key):
    """Indices of the texts sentence-transformers does not strip (dlrt, like TEI, does not)."""
    return [i for i in range(len(ref["texts"])) if i not in ref["stripped"][key]]


def assert_close(got, want, rows):
    got, want = np.asarray(got, np.float64)[rows], np.asarray(want, np.float64)[rows]
    cos = (got * want).sum(1) / np.linalg.norm(got, axis=1) / np.linalg.norm(want, axis=1)
    assert cos.min() >= 0.99999, cos


@pytest.mark.parametrize("folder", ["qwen3_embed", "qwen3_embed_fused", "qwen3_embed_gqa"])
def test_qwen3_embedder_prompts(folder):
    ref = REF["qwen3_embed"]
    e = dlrt.Embedder(os.path.join(DIR, folder), device="cpu", threads=2)
    texts = ref["texts"]
    assert_close(e.encode(texts, batch_size=5), ref["vectors"]["default"], kept(ref, "default"))
    assert_close(e.encode(texts, prompt_name="query"), ref["vectors"]["query"], kept(ref, "query"))
    assert_close(e.encode(texts, prompt="custom: "), ref["vectors"]["custom"], kept(ref, "custom"))
    # One text alone is its row of a mixed batch.
    alone = e.encode(texts[3])
    assert float(alone @ e.encode(texts)[3]) >= 1 - 1e-6


def test_dense_stack_default_prompt():
    ref = REF["dense_embed"]
    e = dlrt.Embedder(os.path.join(DIR, "dense_embed"), device="cpu", threads=2)
    vecs = e.encode(ref["texts"])  # the folder's default_prompt_name ("query") applies
    assert vecs.shape == (len(ref["texts"]), 24)
    assert_close(vecs, ref["vectors"]["default"], kept(ref, "default"))
    assert_close(e.encode(ref["texts"], prompt_name="document"), ref["vectors"]["document"], kept(ref, "document"))


@pytest.fixture(scope="module")
def reranker():
    return dlrt.CrossEncoder(os.path.join(DIR, "qwen3_rerank"), device="cpu", threads=2)


def test_llm_reranker_predict(reranker):
    ref = REF["qwen3_rerank"]
    assert reranker.is_llm_reranker and reranker.labels == ["yes"]
    pairs = [tuple(p) for p in ref["pairs"]]
    np.testing.assert_allclose(reranker.predict(pairs, batch_size=3), ref["scores"], atol=1e-4)
    np.testing.assert_allclose(reranker.predict(pairs, instruction=ref["custom_instruction"]), ref["scores_custom"],
                               atol=1e-4)
    one = reranker.predict(pairs[1])
    assert abs(float(one) - ref["scores"][1]) < 1e-4
    logit = reranker.predict(pairs[1], activation="identity")
    assert abs(1 / (1 + np.exp(-float(logit))) - ref["scores"][1]) < 1e-4
    with pytest.raises(ValueError, match="pairs"):
        reranker.predict(["a single text"])


def test_llm_reranker_rank(reranker):
    ref = REF["qwen3_rerank"]
    n = len(ref["documents"])
    for q, query in enumerate(ref["queries"]):
        want = ref["scores"][q * n:(q + 1) * n]
        ranked = reranker.rank(query, ref["documents"], top_k=2, return_documents=True)
        assert [r["corpus_id"] for r in ranked] == list(np.argsort(want)[::-1][:2])
        for r in ranked:
            assert abs(r["score"] - want[r["corpus_id"]]) < 1e-4
            assert r["text"] == ref["documents"][r["corpus_id"]]
