"""dlrt.Embedder.encode follows sentence-transformers' SentenceTransformer.encode
(sentence_transformers/SentenceTransformer.py, v5; docs/python-embedder.md). The rules,
each checked below on the committed tiny BERT folder (tests/embed/data/tiny_bert, whose
pooled vectors make_tiny_model.py computed with numpy) copied with and without a Normalize
module, and against the CLI (`dlrt embed`, the C++ Embedder):

1. The folder's modules decide normalisation: a sentence_transformers.models.Normalize module
   in modules.json L2-normalises; without one, encode() returns the pooled vectors.
2. normalize_embeddings (default False) normalises on top of the modules; False never removes
   the folder's Normalize module.
3. truncate_dim keeps the first values of each vector, before normalize_embeddings.
4. prompt wins over prompt_name (a warning); prompt_name must be a key of the folder's
   config_sentence_transformers.json "prompts" (else ValueError); with neither, the
   "default_prompt_name" prompt; a non-empty prompt is prepended to each text; prompt="" adds
   nothing (and so switches the default off).
5. convert_to_tensor gives one torch.Tensor (and wins over convert_to_numpy); convert_to_numpy=
   False a list of rows (dlrt: 1-D numpy arrays); a str input gives one vector.
6. precision "int8"/"uint8" buckets each dim over the embeddings' own min..max in 255 steps
   (floor, clipped to 0..255; int8 is the bucket minus 128, as in sentence-transformers 6);
   "binary"/"ubinary" pack the bits of v > 0 (binary: minus 128, as int8); others: ValueError.
7. show_progress_bar draws a bar over the batches ("Batches") on stderr; False draws nothing.
8. encode_query / encode_document pick the "query" / "document"|"passage"|"corpus" prompt.
"""
import json
import logging
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

import dlrt
from conftest import ROOT

EMBED_DATA = os.path.join(ROOT, "tests", "embed", "data")
TINY = os.path.join(EMBED_DATA, "tiny_bert")
TRANSFORMER = {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"}
POOLING = {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}
NORMALIZE = {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"}
PROMPTS = {"query": "the cat ", "passage": "a dog ", "empty": ""}


def unit(v):
    v = np.asarray(v, np.float64)
    return v / np.maximum(np.linalg.norm(v, axis=-1, keepdims=True), 1e-12)


def make_folder(dst, modules, prompts=None, default_prompt_name=None):
    shutil.copytree(TINY, dst)
    with open(os.path.join(dst, "modules.json"), "w") as f:
        json.dump(modules, f)
    if prompts is not None:
        with open(os.path.join(dst, "config_sentence_transformers.json"), "w") as f:
            json.dump({"prompts": prompts, "default_prompt_name": default_prompt_name}, f)
    return dst


@pytest.fixture(scope="module")
def expected():
    with open(os.path.join(EMBED_DATA, "tiny_bert_expected.json")) as f:
        return json.load(f)


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    base = tmp_path_factory.mktemp("st")
    return {
        "plain": make_folder(str(base / "plain"), [TRANSFORMER, POOLING], PROMPTS),
        "normalize": make_folder(str(base / "normalize"), [TRANSFORMER, POOLING, NORMALIZE], PROMPTS),
        "default_prompt": make_folder(str(base / "default_prompt"), [TRANSFORMER, POOLING], PROMPTS, "query"),
    }


@pytest.fixture(scope="module")
def plain(folders):
    return dlrt.Embedder(folders["plain"], device="cpu", threads=1)


@pytest.fixture(scope="module")
def normed(folders):
    return dlrt.Embedder(folders["normalize"], device="cpu", threads=1)


def cli_vectors(folder, texts, *flags):
    """`dlrt embed --json [flags]` on `texts`: the C++ Embedder's vectors."""
    build = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(dlrt._dlrt.__file__))))
    cli = os.path.join(build, "dlrt")
    if not os.path.isfile(cli):
        pytest.skip(f"no dlrt CLI next to the module ({cli}): build the dlrt target")
    done = subprocess.run([cli, "embed", "--model", folder, "--device", "cpu", "--json", *flags, "--", *texts],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return np.array([row["embedding"] for row in json.loads(done.stdout)["data"]], np.float32)


# Rule 1 and 2: the folder decides; normalize_embeddings only adds.
def test_without_normalize_module_vectors_are_the_pooled_ones(plain, folders, expected):
    texts = [t for t in expected["texts"] if t]
    want = np.array([m for t, m in zip(expected["texts"], expected["mean"]) if t], np.float32)
    assert not plain.normalizes
    got = plain.encode(texts)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)  # the numpy reference
    assert not np.allclose(np.linalg.norm(got, axis=1), 1)
    np.testing.assert_allclose(got, cli_vectors(folders["plain"], texts), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(plain.encode(texts, normalize_embeddings=False), got, rtol=0, atol=0)


def test_without_normalize_module_normalize_embeddings_normalises(plain, expected):
    got = plain.encode(expected["texts"], normalize_embeddings=True)
    np.testing.assert_allclose(got, unit(expected["mean"]), rtol=1e-5, atol=1e-6)


def test_normalize_module_is_kept_whatever_normalize_embeddings_says(normed, folders, expected):
    texts = [t for t in expected["texts"] if t]
    want = unit([m for t, m in zip(expected["texts"], expected["mean"]) if t])
    assert normed.normalizes
    for flag in (False, True):
        got = normed.encode(texts, normalize_embeddings=flag)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=f"normalize_embeddings={flag}")
        np.testing.assert_allclose(np.linalg.norm(got, axis=1), 1, rtol=1e-6)
    np.testing.assert_allclose(normed.encode(texts), cli_vectors(folders["normalize"], texts), rtol=1e-6, atol=1e-6)


# Rule 3.
def test_truncate_dim_comes_before_normalize_embeddings(plain, normed, expected):
    mean = np.array(expected["mean"])
    np.testing.assert_allclose(plain.encode(expected["texts"], truncate_dim=5), mean[:, :5], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(plain.encode(expected["texts"], truncate_dim=5, normalize_embeddings=True),
                               unit(mean[:, :5]), rtol=1e-5, atol=1e-6)
    # The Normalize module runs inside the model, before the truncation.
    np.testing.assert_allclose(normed.encode(expected["texts"], truncate_dim=5), unit(mean)[:, :5],
                               rtol=1e-5, atol=1e-6)
    assert plain.encode("a big dog", truncate_dim=0).shape == (8,)
    with pytest.raises(ValueError):
        plain.encode("a big dog", truncate_dim=-1)


# Rule 4.
def test_prompts(plain, caplog):
    assert plain.prompts == {"document": "", **PROMPTS} and plain.default_prompt_name is None  # ST 5's default ""
    texts = ["sat on the mat", "hello world"]
    prefixed = plain.encode(["the cat " + t for t in texts])
    np.testing.assert_array_equal(plain.encode(texts, prompt_name="query"), prefixed)
    np.testing.assert_array_equal(plain.encode(texts, prompt="the cat "), prefixed)
    assert not np.allclose(plain.encode(texts), prefixed)
    with caplog.at_level(logging.WARNING, logger="dlrt"):
        np.testing.assert_array_equal(plain.encode(texts, prompt="a dog ", prompt_name="query"),
                                      plain.encode(texts, prompt_name="passage"))
    assert "Ignoring the `prompt_name` in favor of `prompt`" in caplog.text
    np.testing.assert_array_equal(plain.encode(texts, prompt_name="empty"), plain.encode(texts))
    with pytest.raises(ValueError, match="Prompt name 'nope' not found"):
        plain.encode(texts, prompt_name="nope")


def test_default_prompt_name(folders, plain):
    e = dlrt.Embedder(folders["default_prompt"], device="cpu", threads=1)
    assert e.default_prompt_name == "query"
    texts = ["sat on the mat", "hello world"]
    np.testing.assert_array_equal(e.encode(texts), plain.encode(["the cat " + t for t in texts]))
    np.testing.assert_array_equal(e.encode(texts, prompt_name="passage"), plain.encode(["a dog " + t for t in texts]))
    np.testing.assert_array_equal(e.encode(texts, prompt=""), plain.encode(texts))  # "" switches the default off


def test_prompts_as_the_cli_applies_them(plain, folders):
    texts = ["sat on the mat", "hello world"]
    np.testing.assert_allclose(plain.encode(texts, prompt_name="query"),
                               cli_vectors(folders["plain"], texts, "--prompt-name", "query"), rtol=1e-6, atol=1e-6)
    e = dlrt.Embedder(folders["default_prompt"], device="cpu", threads=1)
    np.testing.assert_allclose(e.encode(texts), cli_vectors(folders["default_prompt"], texts), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(e.encode(texts, prompt=""), cli_vectors(folders["default_prompt"], texts, "--prompt", ""),
                               rtol=1e-6, atol=1e-6)


def test_encode_query_and_document(plain):
    texts = ["sat on the mat"]
    np.testing.assert_array_equal(plain.encode_query(texts), plain.encode(texts, prompt_name="query"))
    np.testing.assert_array_equal(plain.encode_document(texts), plain.encode(texts, prompt_name="passage"))
    np.testing.assert_array_equal(plain.encode_document(texts, prompt=""), plain.encode(texts))


# Rule 5.
def test_output_shapes(plain, expected):
    one = plain.encode("a big dog")
    assert isinstance(one, np.ndarray) and one.shape == (8,) and one.dtype == np.float32
    rows = plain.encode(["a big dog", "hello"], convert_to_numpy=False)
    assert isinstance(rows, list) and [r.shape for r in rows] == [(8,), (8,)]
    assert plain.encode([]).shape == (0, 8)


def test_convert_to_tensor_without_torch(plain, monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # import torch raises ImportError
    with pytest.raises(ImportError, match="needs PyTorch"):
        plain.encode(["a big dog"], convert_to_tensor=True)


def test_convert_to_tensor_with_torch(folders, tmp_path):
    # The test python has no torch; Debian's python3 (same CPython minor) has it.
    python = os.environ.get("DLRT_TORCH_PYTHON", "/usr/bin/python3")
    probe = subprocess.run([python, "-c", "import sys, torch; print('%d.%d' % sys.version_info[:2])"],
                           capture_output=True, text=True)
    if probe.returncode != 0:
        pytest.skip(f"{python} cannot import torch (set DLRT_TORCH_PYTHON)")
    mine = "%d.%d" % sys.version_info[:2]
    if probe.stdout.strip() != mine:
        pytest.skip(f"{python} with torch is CPython {probe.stdout.strip()}, this dlrt module is for {mine}")
    code = f"""
import numpy as np, torch, dlrt
e = dlrt.Embedder({folders['normalize']!r}, device="cpu", threads=1)
t = e.encode(["a big dog", "hello world"], convert_to_tensor=True, convert_to_numpy=True)
assert isinstance(t, torch.Tensor) and t.dtype == torch.float32 and tuple(t.shape) == (2, 8), t
np.testing.assert_array_equal(t.numpy(), e.encode(["a big dog", "hello world"]))
one = e.encode("a big dog", convert_to_tensor=True)
assert isinstance(one, torch.Tensor) and tuple(one.shape) == (8,)
q = e.encode(["a big dog", "hello world"], convert_to_tensor=True, precision="ubinary")
assert q.dtype == torch.uint8 and tuple(q.shape) == (2, 1)
empty = e.encode([], convert_to_tensor=True)
assert isinstance(empty, torch.Tensor) and empty.numel() == 0
print("ok")
"""
    # A copy of this dlrt package alone (and the libraries a wheel bundles beside it), so that
    # the child uses its own numpy and torch, not those next to this dlrt in a venv.
    package = os.path.dirname(os.path.abspath(dlrt.__file__))
    shutil.copytree(package, tmp_path / "dlrt")
    if os.path.isdir(package + ".libs"):
        shutil.copytree(package + ".libs", tmp_path / "dlrt.libs")
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    done = subprocess.run([python, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    if done.returncode != 0 and "No module named 'dlrt._dlrt'" in done.stderr:
        pytest.skip(f"{python} cannot load this build's dlrt module: {done.stderr.splitlines()[-1]}")
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr


# Rule 6: sentence_transformers.quantize_embeddings (6.x), written out with numpy (the library's own
# function: test_output_types.py).
def test_precision(plain, expected):
    x = plain.encode(expected["texts"])
    starts, steps = x.min(axis=0), (x.max(axis=0) - x.min(axis=0)) / 255
    buckets = np.clip(np.floor((x - starts) / np.where(steps == 0, 1, steps)), 0, 255)
    want = {
        "uint8": buckets.astype(np.uint8),
        "int8": (buckets - 128).astype(np.int8),
        "ubinary": np.packbits(x > 0, axis=-1),
        "binary": (np.packbits(x > 0, axis=-1) - 128).astype(np.int8),
    }
    for precision, w in want.items():
        got = plain.encode(expected["texts"], precision=precision)
        assert got.dtype == w.dtype and got.shape == w.shape, precision
        np.testing.assert_array_equal(got, w, err_msg=precision)
    assert plain.encode(expected["texts"], precision="ubinary").shape == (len(x), 1)  # 8 dims -> 1 byte
    with pytest.raises(ValueError, match="Precision 'float16' is not supported"):
        plain.encode("a", precision="float16")


def test_arguments_sentence_transformers_has_but_dlrt_does_not_use(plain):
    np.testing.assert_array_equal(plain.encode("a big dog", task="query"), plain.encode("a big dog"))
    for bad in ({"is_query": True}, {"output_value": None}, {"device": "mps"},
                {"pool": {}}, {"chunk_size": 4}, {"not_an_argument": 1}):
        with pytest.raises(ValueError):
            plain.encode("a big dog", **bad)
    with pytest.raises(TypeError, match="list of str"):
        plain.encode(["fine", 3])
    with pytest.raises(dlrt.InvalidArgument):
        plain.encode(["x"], batch_size=0)


# Rule 7.
def test_progress_bar_own_when_tqdm_is_missing(plain, expected, capfd, monkeypatch):
    monkeypatch.setitem(sys.modules, "tqdm", None)
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)
    plain.encode(expected["texts"], batch_size=2, show_progress_bar=True)  # 7 texts: 4 batches
    err = capfd.readouterr().err
    assert "Batches:" in err and err.rstrip().endswith("4/4") and "100%" in err, err
    plain.encode(expected["texts"], batch_size=2, show_progress_bar=False)
    assert capfd.readouterr().err == ""
    plain.encode(expected["texts"], batch_size=2)  # None: off unless the "dlrt" logger shows INFO
    assert capfd.readouterr().err == ""


def test_progress_bar_tqdm(plain, expected, capfd):
    pytest.importorskip("tqdm", reason="tqdm is not installed in this python (the bar falls back to dlrt's own)")
    plain.encode(expected["texts"], batch_size=2, show_progress_bar=True)
    err = capfd.readouterr().err
    assert "Batches" in err and "4/4" in err, err


def test_progress_callback_is_called_per_batch_and_can_stop(plain, expected):
    calls = []
    plain._encode_texts(expected["texts"], 3, calls.append)
    assert calls == [3, 6, 7]

    def stop(done):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        plain._encode_texts(expected["texts"], 3, stop)
    assert plain.encode("a big dog").shape == (8,)  # still usable
