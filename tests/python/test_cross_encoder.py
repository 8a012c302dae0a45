"""dlrt.CrossEncoder on two folders made from the zoo's minilm_l6 with a random
classification head (tests/embed/make_cross_encoder.py): predict() and rank()
in sentence-transformers' call shapes, activations, and errors. The scores
themselves are checked against ONNX Runtime by tests/serve/test_clients.py
(the same Classifier behind dlrt serve's /rerank and /predict)."""
import json
import math
import os
import subprocess

import numpy as np
import pytest

import dlrt
from conftest import ROOT, ZOO_DIR

QUERY = "what is the capital of france?"
DOCS = ["Paris is the capital and largest city of France.", "The cat sat on the mat.",
        "France's capital, Paris, lies on the Seine."]


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    if not ZOO_DIR or not os.path.isfile(os.path.join(ZOO_DIR, "minilm_l6.onnx")):
        pytest.skip("no model zoo with minilm_l6 (DLRT_ZOO_DIR): the cross-encoder folders are made from it")
    vocab = os.path.join(os.path.dirname(ROOT), "shared", "data", "bert-uncased-vocab.txt")
    if not os.path.isfile(vocab):
        pytest.skip(f"{vocab} is absent")
    out = tmp_path_factory.mktemp("cross_encoder")
    python = os.environ.get("DLRT_MODEL_PYTHON", "/usr/bin/python3")
    subprocess.run([python, os.path.join(ROOT, "tests", "embed", "make_cross_encoder.py"), ZOO_DIR, vocab, str(out)],
                   check=True)
    return out


def test_predict_and_rank(folders):
    ce = dlrt.CrossEncoder(folders / "reranker", device="cpu", threads=1)
    assert ce.labels == ["LABEL_0"]
    pairs = [(QUERY, d) for d in DOCS]
    scores = ce.predict(pairs)
    assert scores.shape == (3,) and scores.dtype == np.float32
    assert np.all((scores > 0) & (scores < 1))  # sigmoid by default for one label
    raw = ce.predict(pairs, activation="identity")
    assert np.allclose(scores, 1 / (1 + np.exp(-raw)), atol=1e-6)
    one = ce.predict(pairs[2])  # a single pair gives one score
    assert abs(float(one) - float(scores[2])) < 1e-4
    assert ce.predict(pairs, convert_to_numpy=False, batch_size=1) == pytest.approx(scores.tolist(), abs=1e-4)
    ranked = ce.rank(QUERY, DOCS, return_documents=True)
    assert [r["corpus_id"] for r in ranked] == list(np.argsort(-scores, kind="stable"))
    assert ranked[0]["text"] == DOCS[ranked[0]["corpus_id"]]
    assert [r["score"] for r in ranked] == pytest.approx(sorted(scores.tolist(), reverse=True), abs=1e-6)
    assert len(ce.rank(QUERY, DOCS, top_k=2)) == 2
    assert "text" not in ce.rank(QUERY, DOCS)[0]


def test_lone_surrogate_is_invalid_argument(folders):
    ce = dlrt.CrossEncoder(folders / "reranker", device="cpu", threads=1)
    with pytest.raises(dlrt.InvalidArgument, match=r"lone surrogate U\+DC00 at character 1"):
        ce.predict([(QUERY, "a\udc00")])
    with pytest.raises(dlrt.InvalidArgument, match=r"lone surrogate U\+D83D"):
        ce.predict(["\ud83d"])


def test_classifier_labels_and_softmax(folders):
    cl = dlrt.CrossEncoder(folders / "classifier", device="cpu")
    assert cl.labels == ["negative", "neutral", "positive"]
    texts = [["I like it"], ["I do not", "like it"], "fine"]
    logits = cl.predict(texts)  # several labels: the logits by default
    assert logits.shape == (3, 3)
    probs = cl.predict(texts, apply_softmax=True)
    assert np.allclose(probs.sum(axis=1), 1, atol=1e-6)
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    assert np.allclose(probs, e / e.sum(axis=1, keepdims=True), atol=1e-5)
    with pytest.raises(dlrt.InvalidArgument, match="one-label"):
        cl.rank(QUERY, DOCS)
    with pytest.raises(dlrt.InvalidArgument, match="activation"):
        cl.predict(texts, activation="relu")
    with pytest.raises(ValueError, match="two texts"):
        cl.predict([["a", "b", "c"]])


def test_folder_errors(folders, tmp_path):
    with pytest.raises(dlrt.NotFound):
        dlrt.CrossEncoder(tmp_path / "missing")
    # An embedding model folder is not a classifier: the registry refuses it naming its kind.
    emb = os.path.join(ROOT, "tests", "embed", "data", "tiny_bert")
    with pytest.raises(dlrt.Unsupported, match="kind dense"):
        dlrt.CrossEncoder(emb)


def test_cli_rerank_matches_rank(folders):
    """`dlrt rerank` on the cross-encoder: the scores and order of CrossEncoder.rank; a classifier
    with three labels is a usage error (exit 2) naming the count."""
    build = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(dlrt._dlrt.__file__))))
    cli = os.path.join(build, "dlrt")
    if not os.path.isfile(cli):
        pytest.skip(f"no dlrt CLI next to the module ({cli}): build the dlrt target")
    ce = dlrt.CrossEncoder(folders / "reranker", device="cpu", threads=1)
    want = ce.rank(QUERY, DOCS)
    done = subprocess.run([cli, "rerank", "--model", str(folders / "reranker"), "--device", "cpu", "--threads", "1",
                           "--query", QUERY, "--json", "--quiet", "--", *DOCS], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout)
    assert got["kind"] == "cross_encoder"
    assert [r["index"] for r in got["results"]] == [r["corpus_id"] for r in want]
    assert [r["score"] for r in got["results"]] == pytest.approx([r["score"] for r in want], abs=1e-5)
    bad = subprocess.run([cli, "rerank", "--model", str(folders / "classifier"), "--device", "cpu", "--query", QUERY,
                          "a"], capture_output=True, text=True, timeout=300)
    assert bad.returncode == 2 and "3 labels" in bad.stderr, bad.stderr
