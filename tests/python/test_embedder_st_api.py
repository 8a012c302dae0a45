"""dlrt.Embedder's sentence-transformers API beyond encode() (docs/python-embedder.md,
docs/migrate.md "From sentence-transformers"): similarity / similarity_pairwise with the
folder's similarity_fn_name (sentence_transformers.util's cos_sim, dot_score, and the negative
euclidean and manhattan distances), tokenize, device, to(), get_max_seq_length(), a settable
max_seq_length, and the constructor's truncate_dim, similarity_fn_name, backend and
model_kwargs. Checked on the committed tiny BERT folder (tests/embed/data/tiny_bert: 8 dims,
16 positions)."""
import json
import os
import shutil

import numpy as np
import pytest

import dlrt
from conftest import ROOT

TINY = os.path.join(ROOT, "tests", "embed", "data", "tiny_bert")
SENTENCES = ["the cat sat on the mat", "a dog sat on a mat", "hello world !"]


@pytest.fixture(scope="module")
def model():
    return dlrt.Embedder(TINY, device="cpu")


def test_sentence_transformers_quick_start_runs_unchanged(model):
    # sentence-transformers' quick start, with dlrt.Embedder for SentenceTransformer.
    embeddings = model.encode(SENTENCES)
    assert embeddings.shape == (3, 8)
    similarities = model.similarity(embeddings, embeddings)
    assert similarities.shape == (3, 3)
    np.testing.assert_allclose(np.diag(similarities), 1.0, atol=1e-6)
    assert model.similarity_fn_name == "cosine"


def _reference(name, a, b):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    if name == "cosine":
        a, b = a / np.linalg.norm(a, axis=1, keepdims=True), b / np.linalg.norm(b, axis=1, keepdims=True)
        return a @ b.T
    if name == "dot":
        return a @ b.T
    diff = a[:, None, :] - b[None, :, :]
    if name == "euclidean":
        return -np.sqrt((diff ** 2).sum(-1))
    return -np.abs(diff).sum(-1)


@pytest.mark.parametrize("name", ["cosine", "dot", "euclidean", "manhattan"])
def test_similarity_functions(name):
    m = dlrt.Embedder(TINY, device="cpu", similarity_fn_name=name)
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(4, 8)).astype(np.float32), rng.normal(size=(5, 8)).astype(np.float32)
    got = m.similarity(a, b)
    assert got.dtype == np.float32 and got.shape == (4, 5)
    np.testing.assert_allclose(got, _reference(name, a, b), rtol=1e-5, atol=1e-5)
    pairs = m.similarity_pairwise(a, b[:4])
    assert pairs.shape == (4,)
    np.testing.assert_allclose(pairs, np.diag(_reference(name, a, b[:4])), rtol=1e-5, atol=1e-5)
    assert m.similarity(a[0], b[0]).shape == (1, 1)  # a 1-D input is one row, as in sentence-transformers


def test_similarity_fn_name_from_the_folder_and_settable(tmp_path, model):
    folder = tmp_path / "st"
    shutil.copytree(TINY, folder)
    with open(folder / "config_sentence_transformers.json", "w") as f:
        json.dump({"similarity_fn_name": "dot"}, f)
    m = dlrt.Embedder(str(folder), device="cpu")
    assert m.similarity_fn_name == "dot"
    e = m.encode(SENTENCES)
    np.testing.assert_allclose(m.similarity(e, e), e @ e.T, rtol=1e-6)
    m.similarity_fn_name = "manhattan"
    assert m.similarity_fn_name == "manhattan"
    with pytest.raises(ValueError, match="cosine, dot, euclidean, manhattan"):
        m.similarity_fn_name = "jaccard"
    with pytest.raises(ValueError, match="one shape"):
        model.similarity_pairwise(e, e[:2])
    with pytest.raises(ValueError, match="dimension"):
        model.similarity(e, e[:, :4])


def test_tokenize(model):
    t = model.tokenize(["the cat", "hello world !"])
    assert list(t) == ["input_ids", "token_type_ids", "attention_mask"]
    vocab = open(os.path.join(TINY, "vocab.txt")).read().split("\n")
    ids = {w: i for i, w in enumerate(vocab)}
    want = [[ids["[CLS]"], ids["the"], ids["cat"], ids["[SEP]"], ids["[PAD]"]],
            [ids["[CLS]"], ids["hello"], ids["world"], ids["!"], ids["[SEP]"]]]
    assert t["input_ids"].dtype == np.int64 and t["input_ids"].tolist() == want
    assert t["attention_mask"].tolist() == [[1, 1, 1, 1, 0], [1, 1, 1, 1, 1]]
    assert t["token_type_ids"].tolist() == [[0] * 5] * 2
    assert model.tokenize("the cat")["input_ids"].shape == (1, 4)


def test_max_seq_length_setter():
    m = dlrt.Embedder(TINY, device="cpu")
    assert m.max_seq_length == m.get_max_seq_length() == 16  # capped at max_position_embeddings
    long_text = " ".join(["the cat sat"] * 10)
    full = m.encode(long_text)
    m.max_seq_length = 5
    assert m.get_max_seq_length() == 5
    assert m.tokenize(long_text)["input_ids"].shape == (1, 5)
    short = m.encode(long_text)
    assert not np.allclose(short, full)
    m.max_seq_length = 16  # back up to the model's limit: loads the model again
    np.testing.assert_allclose(m.encode(long_text), full, rtol=1e-6)
    with pytest.raises(dlrt.InvalidArgument, match="more than the model takes: 16"):
        m.max_seq_length = 17
    assert m.max_seq_length == 16
    with pytest.raises(dlrt.InvalidArgument, match=">= 3"):
        m.max_seq_length = 2
    with pytest.raises(AttributeError, match="'normalizes'"):  # read-only properties are named
        m.normalizes = False


def test_truncate_dim_in_the_constructor(model):
    m = dlrt.Embedder(TINY, device="cpu", truncate_dim=4)
    assert m.get_sentence_embedding_dimension() == 4 and model.get_sentence_embedding_dimension() == 8
    full = model.encode(SENTENCES)
    got = m.encode(SENTENCES)
    np.testing.assert_allclose(got, full[:, :4], rtol=1e-6)  # truncated after the folder's Normalize
    np.testing.assert_allclose(m.encode(SENTENCES, normalize_embeddings=True),
                               full[:, :4] / np.linalg.norm(full[:, :4], axis=1, keepdims=True), rtol=1e-5)
    assert m.encode(SENTENCES, truncate_dim=2).shape == (3, 2)  # encode's own wins
    with model.truncate_sentence_embeddings(3):
        assert model.encode(SENTENCES).shape == (3, 3)
    assert model.encode(SENTENCES).shape == (3, 8)
    with pytest.raises(ValueError, match="truncate_dim"):
        dlrt.Embedder(TINY, truncate_dim=0)


def test_device_and_to(model):
    m = dlrt.Embedder(TINY, device="cpu")
    assert m.device == "cpu"
    before = m.encode(SENTENCES)
    assert m.to("cpu") is m
    np.testing.assert_allclose(m.encode(SENTENCES), before, rtol=1e-6)
    with pytest.raises(dlrt.InvalidArgument, match="'mps' is a PyTorch device dlrt has no backend for"):
        m.to("mps")
    with pytest.raises(dlrt.InvalidArgument, match="unknown device"):
        m.to("tpu")
    assert m.device == "cpu"  # still usable after a failed move
    assert m.encode("the cat").shape == (8,)


def test_encode_takes_sentence_transformers_device_argument(model):
    # encode(device=...) as sentence-transformers takes it: the Embedder's own device changes
    # nothing; torch-only devices are refused naming the ones dlrt has.
    m = dlrt.Embedder(TINY, device="cpu")
    np.testing.assert_array_equal(m.encode(SENTENCES, device="cpu"), model.encode(SENTENCES))
    assert m.device == "cpu"
    with pytest.raises(ValueError, match="'mps' is a PyTorch device.*'cpu', 'cuda'"):
        m.encode(SENTENCES, device="mps")
    with pytest.raises(ValueError, match="'xpu:0' is a PyTorch device"):
        dlrt.Embedder(TINY, device="xpu:0")


def test_default_prompts_of_sentence_transformers_5(model):
    # sentence-transformers 5 gives every model empty "query" and "document" prompts, so
    # encode(prompt_name="query") and encode_query() run on a folder that names none.
    assert model.prompts == {"query": "", "document": ""}
    plain = model.encode(SENTENCES)
    for name in ("query", "document"):
        np.testing.assert_array_equal(model.encode(SENTENCES, prompt_name=name), plain)
    np.testing.assert_array_equal(model.encode_query(SENTENCES), plain)
    np.testing.assert_array_equal(model.encode_document(SENTENCES), plain)
    with pytest.raises(ValueError, match="Prompt name 'passage' not found"):
        model.encode(SENTENCES, prompt_name="passage")


def test_backend_and_model_kwargs():
    assert dlrt.Embedder(TINY, backend="onnx", model_kwargs={"provider": "CPUExecutionProvider",
                                                             "file_name": "model.onnx", "export": False}).device == "cpu"
    with pytest.raises(ValueError, match="backend='torch'.*ONNX export"):
        dlrt.Embedder(TINY, backend="torch")
    with pytest.raises(ValueError, match="device='openvino'"):
        dlrt.Embedder(TINY, backend="openvino")
    with pytest.raises(ValueError, match="no backend for the provider 'TensorrtExecutionProvider'"):
        dlrt.Embedder(TINY, model_kwargs={"provider": "TensorrtExecutionProvider"})
    with pytest.raises(ValueError, match="file_name='onnx/model_O3.onnx'"):
        dlrt.Embedder(TINY, model_kwargs={"file_name": "onnx/model_O3.onnx"})
    with pytest.raises(ValueError, match="'torch_dtype' is not supported"):
        dlrt.Embedder(TINY, model_kwargs={"torch_dtype": "float16"})
    with pytest.raises(ValueError, match="not both"):
        dlrt.Embedder(TINY, device="cpu", model_kwargs={"provider": "CPUExecutionProvider"})
