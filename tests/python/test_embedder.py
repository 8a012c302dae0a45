"""dlrt.Embedder: sentence-transformers' encode() call shape on the committed tiny
BERT folder (tests/embed/data/tiny_bert, expected vectors from make_tiny_model.py),
and on the zoo's MiniLM with the shared BERT vocabulary against a pooling done here."""
import json
import os
import shutil

import numpy as np
import pytest

import dlrt
from conftest import ROOT

EMBED_DATA = os.path.join(ROOT, "tests", "embed", "data")
TINY = os.path.join(EMBED_DATA, "tiny_bert")


@pytest.fixture(scope="module")
def tiny():
    return dlrt.Embedder(TINY, device="cpu", threads=1)


@pytest.fixture(scope="module")
def expected():
    with open(os.path.join(EMBED_DATA, "tiny_bert_expected.json")) as f:
        return json.load(f)


def unit(v):
    v = np.asarray(v, np.float64)
    return v / np.maximum(np.linalg.norm(v, axis=-1, keepdims=True), 1e-12)


def test_properties(tiny):
    assert tiny.get_sentence_embedding_dimension() == 8
    assert tiny.max_seq_length == 16  # the model's positions cap tokenizer_config's 512
    assert tiny.pooling == "mean" and tiny.normalizes and tiny.model_name == "tiny_bert"
    assert tiny.placement().partitions[0].backend == "cpu"
    assert "Embedder(model_name='tiny_bert'" in repr(tiny)


def test_list_gives_2d_normalised(tiny, expected):
    got = tiny.encode(expected["texts"])
    assert isinstance(got, np.ndarray) and got.dtype == np.float32 and got.shape == (len(expected["texts"]), 8)
    np.testing.assert_allclose(got, unit(expected["mean"]), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.linalg.norm(got, axis=1), 1, rtol=1e-6)


def test_normalize_false_keeps_the_folders_normalize_module(tiny, expected):
    # As sentence-transformers: normalize_embeddings=False does not remove the Normalize
    # module tiny_bert's modules.json lists (test_embedder_st_semantics.py has the rules).
    got = tiny.encode(expected["texts"], normalize_embeddings=False)
    np.testing.assert_allclose(got, unit(expected["mean"]), rtol=1e-5, atol=1e-6)


def test_str_gives_1d(tiny, expected):
    got = tiny.encode(expected["texts"][0])
    assert got.shape == (8,)
    np.testing.assert_allclose(got, unit(expected["mean"][0]), rtol=1e-5, atol=1e-6)


def test_batching_keeps_input_order(tiny, expected):
    texts = expected["texts"]
    whole = tiny.encode(texts, batch_size=32)
    for bs in (1, 2, 3):
        np.testing.assert_allclose(tiny.encode(texts, batch_size=bs), whole, rtol=1e-6, atol=1e-7)
    rev = tiny.encode(texts[::-1], batch_size=2)
    np.testing.assert_allclose(rev[::-1], whole, rtol=1e-6, atol=1e-7)


def test_convert_to_numpy_false_and_empty(tiny, expected):
    rows = tiny.encode(expected["texts"][:3], convert_to_numpy=False, show_progress_bar=True)
    assert isinstance(rows, list) and len(rows) == 3 and all(r.shape == (8,) for r in rows)
    assert tiny.encode([]).shape == (0, 8)
    assert tiny.encode(iter(["a big dog"])).shape == (1, 8)


def test_bad_arguments(tiny):
    with pytest.raises(TypeError):
        tiny.encode(["fine", 3])
    with pytest.raises(dlrt.InvalidArgument):
        tiny.encode(["x"], batch_size=0)
    with pytest.raises(dlrt.InvalidArgument):
        dlrt.Embedder(TINY, max_seq_length=1)


def test_lone_surrogate_is_invalid_argument(tiny):
    # A str Python allows but UTF-8 cannot hold: refused by name (Hugging Face's
    # tokenizers refuses it too), not "RuntimeError: std::bad_cast".
    with pytest.raises(dlrt.InvalidArgument, match=r"sentences\[1\].*lone surrogate U\+D800 at character 0"):
        tiny.encode(["fine", "\ud800abc"])
    assert tiny.encode(["\ufffdabc"]).shape[0] == 1


def test_max_seq_length_truncates(expected):
    short = dlrt.Embedder(TINY, max_seq_length=4)
    assert short.max_seq_length == 4
    long_text = expected["texts"][-1]  # 16 tokens
    a = short.encode(long_text)
    b = dlrt.Embedder(TINY).encode(long_text)
    assert not np.allclose(a, b)


def test_minilm_matches_session_and_reference_ids(minilm_folder, tmp_path):
    # Hugging Face's token ids for a few texts (tests/embed/data/bert_reference.jsonl),
    # run through a plain Session and mean-pooled here, against the Embedder.
    with open(os.path.join(EMBED_DATA, "bert_reference.jsonl"), encoding="utf-8") as f:
        rows = [json.loads(line) for line in f][1:]
    rows = [r for r in rows if 3 <= len(r["ids"]) <= 40][:12]
    texts = [r["text"] for r in rows]
    # A modules.json without a Normalize module: the Embedder gives the mean-pooled vectors.
    folder = tmp_path / "minilm"
    shutil.copytree(minilm_folder, folder, symlinks=True)
    (folder / "modules.json").write_text(json.dumps([
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}]))
    model = dlrt.Embedder(folder, device="cpu")
    assert model.get_sentence_embedding_dimension() == 384
    got = model.encode(texts, batch_size=5)
    s = dlrt.Session(str(minilm_folder / "model.onnx"), device="cpu")
    for text, r, vec in zip(texts, rows, got):
        ids = np.array([r["ids"]], np.int64)
        [hidden] = s.run({"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)})
        np.testing.assert_allclose(vec, hidden[0].mean(axis=0), rtol=1e-4, atol=1e-5, err_msg=text)
    normed = model.encode(texts, normalize_embeddings=True)
    np.testing.assert_allclose(normed, unit(got), rtol=1e-5, atol=1e-6)
    # The folder as the zoo gives it (no modules.json): dlrt's default, mean + Normalize.
    np.testing.assert_allclose(dlrt.Embedder(minilm_folder, device="cpu").encode(texts), normed, rtol=1e-5, atol=1e-6)
