"""dlrt serve against the clients people use: the official `openai` Python
client and plain HTTP as TEI's documentation shows it. Run by
scripts/test_serve_clients.sh, which starts the server on the tiny BERT
folder (tests/embed/data/tiny_bert) and sets DLRT_SERVE_URL."""
import base64
import json
import math
import os
import struct
import urllib.error
import urllib.request

import openai
import pytest

URL = os.environ["DLRT_SERVE_URL"]
DIM = 8


def post(path, body):
    req = urllib.request.Request(URL + path, data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def get(path):
    with urllib.request.urlopen(URL + path, timeout=30) as r:
        return r.status, json.loads(r.read())


@pytest.fixture(scope="module")
def client():
    return openai.OpenAI(base_url=URL + "/v1", api_key="unused", max_retries=0)


def norm(v):
    return math.sqrt(sum(x * x for x in v))


def test_openai_embeddings_create(client):
    r = client.embeddings.create(model="tiny_bert", input=["the cat sat on the mat.", "a big dog"])
    assert len(r.data) == 2
    assert [d.index for d in r.data] == [0, 1]
    assert all(len(d.embedding) == DIM for d in r.data)
    assert abs(norm(r.data[0].embedding) - 1) < 1e-5
    assert r.usage.prompt_tokens == 9 + 5  # [CLS] ... [SEP] of each text
    # The same text through TEI's route gives the same vector.
    status, tei = post("/embed", {"inputs": "the cat sat on the mat."})
    assert status == 200
    assert max(abs(a - b) for a, b in zip(tei[0], r.data[0].embedding)) < 1e-6


def test_openai_dimensions(client):
    full = client.embeddings.create(model="tiny_bert", input="a big dog").data[0].embedding
    r = client.embeddings.create(model="tiny_bert", input="a big dog", dimensions=4)
    v = r.data[0].embedding
    assert len(v) == 4
    assert abs(norm(v) - 1) < 1e-5
    want = [x / norm(full[:4]) for x in full[:4]]  # Matryoshka: cut, then normalise again
    assert max(abs(a - b) for a, b in zip(v, want)) < 1e-5
    with pytest.raises(openai.UnprocessableEntityError):
        client.embeddings.create(model="tiny_bert", input="a big dog", dimensions=DIM + 1)


def test_openai_base64_and_token_ids(client):
    # The client asks for base64 by default when numpy is absent or not; ask explicitly.
    raw = client.embeddings.with_raw_response.create(model="tiny_bert", input="a big dog", encoding_format="base64")
    data = json.loads(raw.text)["data"][0]["embedding"]
    floats = struct.unpack("<%df" % DIM, base64.b64decode(data))
    text = client.embeddings.create(model="tiny_bert", input="a big dog", encoding_format="float").data[0].embedding
    assert max(abs(a - b) for a, b in zip(floats, text)) < 1e-7
    # Token ids: [CLS] a big dog [SEP] as ids give the text's vector.
    ids = client.embeddings.create(model="tiny_bert", input=[[2, 10, 24, 11, 3]]).data[0].embedding
    assert max(abs(a - b) for a, b in zip(ids, text)) < 1e-6


def test_openai_models_list(client):
    models = client.models.list()
    ids = [m.id for m in models.data]
    assert ids == ["tiny_bert"]


def test_tei_style_routes():
    status, vec = post("/embed", {"inputs": ["a big dog"], "normalize": False})
    assert status == 200
    assert abs(norm(vec[0]) - 1) > 1e-3  # not normalised
    status, info = get("/info")
    assert status == 200
    assert info["served_model_name"] == "tiny_bert" and info["dimension"] == DIM and info["max_input_length"] == 16
    assert info["model_id"] == os.environ["DLRT_TINY_BERT"]  # the --model value, as TEI's --model-id
    status, toks = post("/tokenize", {"inputs": "a big dog"})
    assert status == 200
    assert [t["id"] for t in toks[0]] == [2, 10, 24, 11, 3]
    assert [t["text"] for t in toks[0]] == ["[CLS]", "a", "big", "dog", "[SEP]"]
    assert toks[0][0]["special"] and not toks[0][1]["special"]
    status, texts = post("/decode", {"ids": [[2, 10, 24, 11, 3], [2, 5, 6, 3]]})
    assert status == 200 and texts == ["a big dog", "the cat"], texts
    status, texts = post("/decode", {"ids": [2, 10, 24, 11, 3], "skip_special_tokens": False})
    assert status == 200 and texts == ["[CLS] a big dog [SEP]"], texts
    # Over the 16-token limit: cut to it (as TEI since 1.9), unless the request
    # says "truncate": false: then 413 with the count.
    long_text = " ".join(["dog"] * 30)
    status, vec = post("/embed", {"inputs": long_text})
    assert status == 200 and len(vec[0]) == DIM
    status, cut = post("/embed", {"inputs": " ".join(["dog"] * 14)})  # 14 + [CLS] [SEP] = the limit
    assert status == 200 and max(abs(a - b) for a, b in zip(vec[0], cut[0])) < 1e-6
    status, err = post("/embed", {"inputs": long_text, "truncate": False})
    assert status == 413 and "32 tokens" in err["error"], err


def test_openai_client_gets_a_vector_for_an_input_over_the_limit(client):
    # About 400 tokens against a 16-token model: cut, as sentence-transformers does.
    text = " ".join(["the cat sat on the mat."] * 57)
    r = client.embeddings.create(model="tiny_bert", input=text)
    assert len(r.data) == 1 and len(r.data[0].embedding) == DIM
    assert r.usage.prompt_tokens == 16
    status, tei = post("/embed", {"inputs": text, "truncate": True})
    assert status == 200
    assert max(abs(a - b) for a, b in zip(tei[0], r.data[0].embedding)) < 1e-6


def test_tokenize_offsets_match_hugging_face_tokenizers():
    from tokenizers import BertWordPieceTokenizer
    tok = BertWordPieceTokenizer(os.path.join(os.environ["DLRT_TINY_BERT"], "vocab.txt"), lowercase=True)
    for text in ["a big dog", "the  cat, sat!", "caf\u00e9 dog \u00fcber"]:
        status, toks = post("/tokenize", {"inputs": text})
        assert status == 200
        want = tok.encode(text)
        assert [t["id"] for t in toks[0]] == want.ids
        data = text.encode()
        for t, (start, stop), special in zip(toks[0], want.offsets, want.special_tokens_mask):
            if special:
                assert t["special"] and t["start"] is None and t["stop"] is None, t
                continue
            # tokenizers' Python offsets count characters; TEI's (and dlrt's) count UTF-8 bytes.
            byte_start, byte_stop = len(text[:start].encode()), len(text[:stop].encode())
            assert (t["start"], t["stop"]) == (byte_start, byte_stop), (text, t)
            assert t["text"] == data[byte_start:byte_stop].decode(), t
        # Without special tokens: [CLS] and [SEP] go, an [UNK] made from the text stays.
        status, plain = post("/tokenize", {"inputs": text, "add_special_tokens": False})
        assert status == 200 and [t["id"] for t in plain[0]] == want.ids[1:-1], plain


def test_similarity_is_the_cosine_of_the_vectors():
    sentences = ["a big dog", "the cat sat on the mat."]
    status, scores = post("/similarity", {"inputs": {"source_sentence": "the cat", "sentences": sentences}})
    assert status == 200 and len(scores) == 2, scores
    status, vecs = post("/embed", {"inputs": ["the cat"] + sentences})
    assert status == 200
    for i, score in enumerate(scores):
        a, b = vecs[0], vecs[i + 1]
        cos = sum(x * y for x, y in zip(a, b)) / (norm(a) * norm(b))
        assert abs(score - cos) < 1e-5


def test_docs_page():
    with urllib.request.urlopen(URL + "/docs", timeout=30) as r:
        assert r.status == 200 and r.headers["Content-Type"].startswith("text/html")
        assert b"openapi.json" in r.read()


def test_openapi_document_lists_the_routes():
    status, doc = get("/openapi.json")
    assert status == 200
    assert doc["openapi"].startswith("3.")
    assert {"/v1/embeddings", "/embed", "/tokenize", "/similarity", "/docs", "/v1/models", "/info",
            "/health"} <= set(doc["paths"])
    dims = doc["components"]["schemas"]["EmbeddingsRequest"]["properties"]["dimensions"]
    assert dims["maximum"] == DIM


# ---- cross-encoders: /rerank and /predict against ONNX Runtime --------------

RERANK_URL = os.environ.get("DLRT_RERANK_URL")
CLASSIFIER_URL = os.environ.get("DLRT_CLASSIFIER_URL")
CROSS_DIR = os.environ.get("DLRT_CROSS_ENCODER_DIR")
NEEDS_CROSS = pytest.mark.skipif(not (RERANK_URL and CLASSIFIER_URL and CROSS_DIR),
                                 reason="no cross-encoder folders (made from the zoo's minilm_l6: DLRT_ZOO_DIR unset)")

QUERY = "what is the capital of france?"
TEXTS = ["Paris is the capital and largest city of France.", "The cat sat on the mat.",
         "France's capital, Paris, lies on the Seine.", "Bananas are yellow."]


def reference_logits(folder, pairs):
    """ONNX Runtime on the folder's model, ids from Hugging Face's tokenizers."""
    import numpy as np
    import onnxruntime as ort
    from tokenizers import BertWordPieceTokenizer
    tok = BertWordPieceTokenizer(os.path.join(folder, "vocab.txt"), lowercase=True)
    sess = ort.InferenceSession(os.path.join(folder, "model.onnx"), providers=["CPUExecutionProvider"])
    out = []
    for first, second in pairs:
        e = tok.encode(first, second) if second is not None else tok.encode(first)
        feeds = {"input_ids": np.array([e.ids], dtype=np.int64),
                 "attention_mask": np.array([e.attention_mask], dtype=np.int64),
                 "token_type_ids": np.array([e.type_ids], dtype=np.int64)}
        out.append(sess.run(["logits"], feeds)[0][0].tolist())
    return out


def post_to(url, path, body):
    global URL
    saved, URL = URL, url
    try:
        return post(path, body)
    finally:
        URL = saved


@NEEDS_CROSS
def test_rerank_matches_onnxruntime():
    status, got = post_to(RERANK_URL, "/rerank", {"query": QUERY, "texts": TEXTS, "return_text": True})
    assert status == 200, got
    logits = reference_logits(os.path.join(CROSS_DIR, "reranker"), [(QUERY, t) for t in TEXTS])
    want = [1 / (1 + math.exp(-row[0])) for row in logits]
    assert [r["index"] for r in got] == sorted(range(len(TEXTS)), key=lambda i: -want[i])
    for r in got:
        assert abs(r["score"] - want[r["index"]]) < 1e-4, (r, want)
        assert r["text"] == TEXTS[r["index"]]
    status, raw = post_to(RERANK_URL, "/rerank", {"query": QUERY, "texts": TEXTS, "raw_scores": True})
    assert status == 200
    for r in raw:
        assert abs(r["score"] - logits[r["index"]][0]) < 1e-3 * (1 + abs(logits[r["index"]][0]))
        assert "text" not in r
    # The embedding routes refuse a cross-encoder, and /rerank an embedding model.
    status, err = post_to(RERANK_URL, "/embed", {"inputs": "x"})
    assert status == 400 and "rerank" in err["error"]
    status, err = post("/rerank", {"query": "q", "texts": ["a"]})
    assert status == 400 and "embedding model" in err["error"]


@NEEDS_CROSS
def test_predict_matches_onnxruntime():
    with urllib.request.urlopen(CLASSIFIER_URL + "/info", timeout=30) as r:
        info = json.loads(r.read())
    assert info["model_type"]["classifier"]["id2label"] == {"0": "negative", "1": "neutral", "2": "positive"}
    status, single = post_to(CLASSIFIER_URL, "/predict", {"inputs": TEXTS[0]})
    assert status == 200, single
    status, batch = post_to(CLASSIFIER_URL, "/predict", {"inputs": [[TEXTS[1]], [QUERY, TEXTS[2]]]})
    assert status == 200, batch
    logits = reference_logits(os.path.join(CROSS_DIR, "classifier"), [(TEXTS[0], None), (TEXTS[1], None), (QUERY, TEXTS[2])])
    labels = ["negative", "neutral", "positive"]
    for preds, row in zip([single] + batch, logits):
        e = [math.exp(x - max(row)) for x in row]
        probs = {labels[i]: v / sum(e) for i, v in enumerate(e)}
        assert [p["label"] for p in preds] == sorted(labels, key=lambda l: -probs[l])
        for p in preds:
            assert abs(p["score"] - probs[p["label"]]) < 1e-4, (preds, probs)
    status, err = post_to(CLASSIFIER_URL, "/rerank", {"query": "q", "texts": ["a"]})
    assert status == 400 and "3 labels" in err["error"]
    status, err = post_to(CLASSIFIER_URL, "/predict", {"inputs": [["a", "b", "c"]]})
    assert status == 422
