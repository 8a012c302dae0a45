"""Embedder.encode_sparse on a sentence-transformers SparseEncoder (SPLADE) folder against
sentence-transformers' own SparseEncoder.encode, whose vectors tests/models/make_retrieval_models.py
committed (tests/models/retrieval/splade_tiny_reference.json); and the model kinds an
Embedder refuses to mix."""
import json
import os
import shutil

import numpy as np
import pytest

import dlrt
from conftest import ROOT, assert_sparse_values

RETRIEVAL = os.path.join(ROOT, "tests", "models", "retrieval")
SPLADE = os.path.join(RETRIEVAL, "splade_tiny")
TINY_BERT = os.path.join(ROOT, "tests", "embed", "data", "tiny_bert")


@pytest.fixture(scope="module")
def reference():
    with open(os.path.join(RETRIEVAL, "splade_tiny_reference.json")) as f:
        return json.load(f)


@pytest.fixture(scope="module")
def splade():
    return dlrt.Embedder(SPLADE, device="cpu", threads=2)


def assert_matches(got, want, what):
    indices, values = got
    assert indices.dtype == np.int64 and values.dtype == np.float32, what
    assert indices.tolist() == want["indices"], what
    assert_sparse_values(values, want["values"], what)


def test_sparse_vectors_match_sentence_transformers(splade, reference):
    assert splade.kind == "sparse"
    assert splade.get_sentence_embedding_dimension() == reference["vocab_size"]
    assert splade.max_seq_length == reference["max_seq_length"]
    # All texts in one call: mixed lengths (and one past max_seq_length) in padded batches.
    got = splade.encode_sparse(reference["texts"])
    assert isinstance(got, list) and len(got) == len(reference["texts"])
    for i, (g, want) in enumerate(zip(got, reference["outputs"]["max_relu"])):
        assert_matches(g, want, reference["texts"][i])
    # One text at a time (a str gives one pair), and small batches, give the same.
    for text, want in zip(reference["texts"], reference["outputs"]["max_relu"]):
        assert_matches(splade.encode_sparse(text), want, text)
    for g, want in zip(splade.encode_sparse(reference["texts"], batch_size=2), reference["outputs"]["max_relu"]):
        assert_matches(g, want, "batch_size=2")


def test_top_k_keeps_the_largest_weights(splade, reference):
    got = splade.encode_sparse(reference["texts"], top_k=5)
    for g, want in zip(got, reference["outputs"]["max_relu_top5"]):
        assert_matches(g, want, "top_k=5")
    with pytest.raises(dlrt.InvalidArgument, match="top_k"):
        splade.encode_sparse("a", top_k=0)


@pytest.mark.parametrize("strategy,activation,key", [("sum", "relu", "sum_relu"), ("max", "log1p_relu", "max_log1p_relu")])
def test_pooling_config(tmp_path, reference, strategy, activation, key):
    folder = tmp_path / "splade"
    shutil.copytree(SPLADE, folder)
    config = folder / "1_SpladePooling" / "config.json"
    c = json.loads(config.read_text())
    c.update(pooling_strategy=strategy, activation_function=activation)
    config.write_text(json.dumps(c))
    got = dlrt.Embedder(str(folder), device="cpu", threads=2).encode_sparse(reference["texts"])
    for g, want in zip(got, reference["outputs"][key]):
        assert_matches(g, want, key)


def test_kinds_do_not_mix(splade):
    with pytest.raises(dlrt.InvalidArgument, match="sparse \\(SPLADE\\) encoder"):
        splade.encode(["a text"])
    dense = dlrt.Embedder(TINY_BERT, device="cpu", threads=2)
    assert dense.kind == "dense"
    with pytest.raises(dlrt.InvalidArgument, match="dense embedding model"):
        dense.encode_sparse(["a text"])


def test_unimplemented_module_types_are_refused(tmp_path):
    # A PyLate module other than the ColBERT folders' Dense, and an unknown type.
    for name, type_ in [("pylate_other", "pylate.models.Other"), ("unknown", "my_package.MyPooling")]:
        folder = tmp_path / name
        shutil.copytree(TINY_BERT, folder)
        (folder / "modules.json").write_text(json.dumps([
            {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
            {"idx": 1, "name": "1", "path": "1_Dense", "type": type_}]))
        with pytest.raises(dlrt.Unsupported, match=type_.replace(".", "\\.")):
            dlrt.Embedder(str(folder), device="cpu")
