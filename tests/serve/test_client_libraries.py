"""dlrt serve against the client libraries people already use, each with its own defaults
(docs/migrate.md has one table per client): huggingface_hub's InferenceClient, Cohere's v1
and v2 clients (rerank, and embed: texts, and images on DLRT_CLIP_URL), LlamaIndex's
TextEmbeddingsInference, LangChain's OpenAIEmbeddings (its default chunk
size of 1000 inputs) and the openai client with 2048 inputs in one request (OpenAI's limit).
Every answer is checked against the server's own /embed (cosine >= 0.99999) or /rerank (within
1e-6). Run by scripts/test_serve_clients.sh, which serves tests/embed/data/tiny_bert
(DLRT_SERVE_URL) and the one-label cross-encoder tests/embed/data/cross_encoder_tiny
(DLRT_TINY_RERANK_URL); the packages are SERVE_CLIENT_PACKAGES of scripts/pins.sh."""
import json
import os
import urllib.error
import urllib.request

import numpy as np
import pytest

URL = os.environ["DLRT_SERVE_URL"]
RERANK_URL = os.environ["DLRT_TINY_RERANK_URL"]
# Words of both tiny folders' vocabularies, so the texts are real tokens.
WORDS = ["the", "cat", "sat", "on", "mat", "a", "big", "dog", "hello", "world"]


def texts(n):
    """n different short texts (3 to 5 words)."""
    return [" ".join(WORDS[(i * 7 + k * 3) % len(WORDS)] for k in range(3 + i % 3)) + " " + WORDS[i % len(WORDS)]
            for i in range(n)]


def post(url, path, body):
    req = urllib.request.Request(url + path, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as r:
        return json.loads(r.read())


def reference(inputs):
    """The server's own /embed vectors of `inputs` (its TEI route, with its defaults)."""
    out = []
    for i in range(0, len(inputs), 256):
        out.extend(post(URL, "/embed", {"inputs": inputs[i:i + 256]}))
    return np.asarray(out, np.float64)


def assert_same_vectors(got, inputs):
    got = np.asarray(got, np.float64)
    want = reference(inputs)
    assert got.shape == want.shape
    cos = np.sum(got * want, axis=1) / (np.linalg.norm(got, axis=1) * np.linalg.norm(want, axis=1))
    assert cos.min() >= 0.99999, cos.min()
    # TEI's and OpenAI's routes give unit vectors by default.
    np.testing.assert_allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)


# ---- huggingface_hub.InferenceClient, on the routes TEI answers -------------------------------

def test_hugging_face_inference_client_feature_extraction():
    from huggingface_hub import InferenceClient
    client = InferenceClient(model=URL + "/embed")
    one = texts(1)[0]
    v = client.feature_extraction(one)
    assert isinstance(v, np.ndarray) and v.shape == (1, 8), getattr(v, "shape", v)
    assert_same_vectors(v, [one])
    # The client's own parameters go through as TEI's fields.
    raw = client.feature_extraction(one, normalize=False, truncate=True)
    np.testing.assert_allclose(raw / np.linalg.norm(raw), v, atol=1e-6)


def test_hugging_face_inference_client_root_route():
    # POST / answers by the model's kind (TEI's root route): /embed for this folder.
    from huggingface_hub import InferenceClient
    one = texts(1)[0]
    assert_same_vectors(InferenceClient(model=URL).feature_extraction(one), [one])


def test_hugging_face_inference_client_sentence_similarity():
    from huggingface_hub import InferenceClient
    client = InferenceClient(model=URL + "/similarity")
    source, others = "the cat sat", texts(4)
    scores = client.sentence_similarity(source, other_sentences=others)
    vectors = reference([source] + others)
    want = vectors[1:] @ vectors[0]  # unit vectors: the cosine
    np.testing.assert_allclose(scores, want, atol=1e-5)


def test_hugging_face_inference_client_text_classification():
    from huggingface_hub import InferenceClient
    client = InferenceClient(model=RERANK_URL + "/predict")
    # TEI answers one text with its labels by score, [{"score", "label"}, ...]; the client takes the
    # first of them (the highest), as it does from TEI.
    top = client.text_classification("the cat sat on the mat")
    want = post(RERANK_URL, "/predict", {"inputs": "the cat sat on the mat"})
    assert top.label == want[0]["label"] == "L0"
    assert abs(top.score - want[0]["score"]) <= 1e-6


# ---- Cohere's v1 client: /v1/rerank ----------------------------------------------------------

def check_cohere_rerank(client):
    """The client's rerank: /rerank's order (highest first) and scores; its documents and answer."""
    documents = texts(6)
    r = client.rerank(model="cross_encoder_tiny", query="a big dog", documents=documents, top_n=4)
    assert len(r.results) == 4
    tei = post(RERANK_URL, "/rerank", {"query": "a big dog", "texts": documents})
    want = {x["index"]: x["score"] for x in tei}
    assert [x.index for x in r.results] == [x["index"] for x in tei[:4]]
    for x in r.results:
        assert abs(x.relevance_score - want[x.index]) <= 1e-6
    return documents, r


def test_cohere_v1_client_rerank():
    import cohere
    check_cohere_rerank(cohere.Client(api_key="unused", base_url=RERANK_URL))


def test_cohere_v2_client_rerank():
    import cohere
    client = cohere.ClientV2(api_key="unused", base_url=RERANK_URL)
    documents, r = check_cohere_rerank(client)
    # Under a model prefix the route is /v2/rerank of the model "cross_encoder_tiny", not a model "…/v2".
    prefixed = cohere.ClientV2(api_key="unused", base_url=RERANK_URL + "/models/cross_encoder_tiny")
    r2 = prefixed.rerank(model="cross_encoder_tiny", query="a big dog", documents=documents, top_n=4)
    assert [x.index for x in r2.results] == [x.index for x in r.results]
    with pytest.raises(Exception) as refused:
        client.rerank(model="cross_encoder_tiny", query="q", documents=documents, max_tokens_per_doc=16)
    assert "max_tokens_per_doc" in str(refused.value)


# ---- Cohere's embed: /v2/embed (ClientV2) and /v1/embed (Client) ---------------------------------

EMBEDDING_TYPES = ["float", "int8", "uint8", "binary", "ubinary", "base64"]


def openai_embeddings(docs, encoding_format):
    """/v1/embeddings' vectors of docs in one output type: the path /v2/embed's types share."""
    answer = post(URL, "/v1/embeddings", {"input": docs, "encoding_format": encoding_format})
    return [d["embedding"] for d in answer["data"]]


def test_cohere_v2_client_embed_every_type():
    import base64
    import cohere
    client = cohere.ClientV2(api_key="unused", base_url=URL)
    docs = texts(12)
    r = client.embed(model="tiny_bert", input_type="search_document", texts=docs, embedding_types=EMBEDDING_TYPES)
    assert r.response_type == "embeddings_by_type" and r.texts == docs and r.id
    assert r.meta.api_version.version == "2" and r.meta.billed_units.input_tokens > 0
    e = r.embeddings
    assert_same_vectors(e.float_, docs)
    floats = np.asarray(e.float_, np.float32)
    np.testing.assert_array_equal(np.stack([np.frombuffer(base64.b64decode(b), "<f4") for b in e.base64]), floats)
    # The quantized types: /v1/embeddings' (quantize_embeddings over the request's vectors:
    # tests/python/test_output_types.py compares that with sentence-transformers), and the
    # packed bits of numpy's packbits for the binary ones.
    for name in ["int8", "uint8", "binary", "ubinary"]:
        assert getattr(e, name) == openai_embeddings(docs, name), name
    ubinary = np.packbits(floats > 0, axis=-1)
    assert e.ubinary == ubinary.tolist()
    assert e.binary == (ubinary.astype(np.int16) - 128).tolist()
    # output_dimension keeps the first values, normalised again; "float" is the default type.
    cut = client.embed(model="tiny_bert", input_type="search_query", texts=docs[:2], output_dimension=4)
    want = floats[:2, :4] / np.linalg.norm(floats[:2, :4], axis=1, keepdims=True)
    np.testing.assert_allclose(cut.embeddings.float_, want, atol=1e-6)
    # inputs with text content items answer as texts.
    by_inputs = client.embed(model="tiny_bert", input_type="search_document",
                             inputs=[{"content": [{"type": "text", "text": d}]} for d in docs[:3]])
    np.testing.assert_allclose(by_inputs.embeddings.float_, floats[:3], atol=1e-6)


def test_cohere_v2_client_embed_errors():
    import cohere
    from cohere.core.api_error import ApiError
    client = cohere.ClientV2(api_key="unused", base_url=URL)
    for kwargs, status, part in [
            ({"input_type": "search", "texts": ["a"]}, 422, "'input_type' must be"),
            ({"input_type": "image", "images": ["https://example.com/cat.png"]}, 422,
             "remote image URLs are not fetched"),
            ({"input_type": "search_query", "texts": ["a"], "truncate": "START"}, 422, "START"),
            ({"input_type": "search_query", "texts": ["a"], "embedding_types": ["int8"]}, 422, "single embedding"),
            # A text model has no image tower: refused by kind (the image is never decoded).
            ({"input_type": "image", "images": ["data:image/png;base64,iVBORw0KGgo="]}, 400, "an image input")]:
        with pytest.raises(ApiError) as e:
            client.embed(model="tiny_bert", **kwargs)
        assert e.value.status_code == status, (kwargs, e.value)
        assert part in e.value.body["error"]["message"], (kwargs, e.value.body)


def test_cohere_v1_client_embed():
    import cohere
    client = cohere.Client(api_key="unused", base_url=URL)
    docs = texts(200)  # the client sends 96 texts a request and merges the answers
    r = client.embed(model="tiny_bert", texts=docs, input_type="search_query")
    assert r.response_type == "embeddings_floats" and r.texts == docs
    assert_same_vectors(r.embeddings, docs)
    typed = client.embed(model="tiny_bert", texts=docs[:5], input_type="search_query",
                         embedding_types=["float", "uint8"])
    assert typed.response_type == "embeddings_by_type"
    assert_same_vectors(typed.embeddings.float_, docs[:5])
    assert typed.embeddings.uint8 == openai_embeddings(docs[:5], "uint8")


@pytest.mark.skipif(not os.environ.get("DLRT_CLIP_URL"),
                    reason="DLRT_CLIP_URL is not set (scripts/test_serve_clients.sh serves "
                           "tests/models/image/clip_tiny)")
def test_cohere_v2_client_embed_images():
    import base64
    import cohere
    clip_url = os.environ["DLRT_CLIP_URL"]
    root = os.path.join(os.path.dirname(__file__), "..", "..")
    with open(os.path.join(root, "tests/models/image/clip_tiny_reference.json")) as f:
        ref = json.load(f)
    urls = []
    for path in ref["images"]:
        with open(os.path.join(root, path), "rb") as f:
            urls.append("data:image/" + path.rsplit(".", 1)[1] + ";base64," + base64.b64encode(f.read()).decode())
    want = np.asarray(ref["image_embeds"], np.float64)
    client = cohere.ClientV2(api_key="unused", base_url=clip_url)

    def check(got):
        got = np.asarray(got, np.float64)
        cos = np.sum(got * want, axis=1) / (np.linalg.norm(got, axis=1) * np.linalg.norm(want, axis=1))
        assert cos.min() >= 0.99999, cos

    r = client.embed(model="clip_tiny", input_type="image", images=urls, embedding_types=["float", "ubinary"])
    check(r.embeddings.float_)
    assert r.embeddings.ubinary == np.packbits(np.asarray(r.embeddings.float_) > 0, axis=-1).tolist()
    # What the SDK parses of an image answer: the images billed, no text tokens, no texts; the
    # optional per-image `images` (width, height, format, bit_depth) is not sent.
    assert r.response_type == "embeddings_by_type" and r.id and r.meta.api_version.version == "2"
    assert r.meta.billed_units.images == len(urls) and r.meta.billed_units.input_tokens is None
    assert r.texts == [] and r.images is None
    r = client.embed(model="clip_tiny", input_type="search_document",
                     inputs=[{"content": [{"type": "image_url", "image_url": {"url": u}}]} for u in urls])
    check(r.embeddings.float_)
    # Texts on the same model go through its text tower, alone or among images (a vector per input).
    r = client.embed(model="clip_tiny", input_type="search_query", texts=ref["texts"])
    got, text_want = np.asarray(r.embeddings.float_), np.asarray(ref["text_embeds"])
    cos = np.sum(got * text_want, axis=1) / (np.linalg.norm(got, axis=1) * np.linalg.norm(text_want, axis=1))
    assert cos.min() >= 0.99999, cos
    mixed = client.embed(model="clip_tiny", input_type="search_document",
                         inputs=[{"content": [{"type": "text", "text": ref["texts"][0]}]},
                                 {"content": [{"type": "image_url", "image_url": {"url": urls[1]}}]}])
    got = np.asarray(mixed.embeddings.float_)
    np.testing.assert_allclose(got[0], np.asarray(r.embeddings.float_)[0], atol=1e-6)
    assert np.dot(got[1], want[1]) / (np.linalg.norm(got[1]) * np.linalg.norm(want[1])) >= 0.99999
    assert mixed.meta.billed_units.images == 1 and mixed.meta.billed_units.input_tokens > 0
    assert mixed.texts == [ref["texts"][0]]
    # The v1 client's images: its floats answer (texts is a required list there: empty).
    v1 = cohere.Client(api_key="unused", base_url=clip_url).embed(model="clip_tiny", input_type="image",
                                                                   images=urls[:2])
    assert v1.response_type == "embeddings_floats" and v1.texts == [] and v1.meta.billed_units.images == 2
    v2 = client.embed(model="clip_tiny", input_type="image", images=urls[:2])
    np.testing.assert_allclose(v1.embeddings, v2.embeddings.float_, atol=1e-6)


# ---- LlamaIndex's TEI embeddings: /embed -----------------------------------------------------

def test_llama_index_text_embeddings_inference():
    from llama_index.embeddings.text_embeddings_inference import TextEmbeddingsInference
    model = TextEmbeddingsInference(model_name="tiny_bert", base_url=URL, timeout=60)
    docs = texts(25)  # more than its default embed_batch_size (10): three requests
    assert_same_vectors(model.get_text_embedding_batch(docs), docs)
    assert_same_vectors([model.get_query_embedding(docs[0])], docs[:1])


# ---- LangChain's OpenAIEmbeddings: /v1/embeddings in chunks of 1000 --------------------------

def test_langchain_openai_embeddings_default_chunk_size():
    from langchain_openai import OpenAIEmbeddings
    # check_embedding_ctx_length=False: LangChain's default would tokenize with tiktoken (OpenAI's
    # vocabulary, downloaded at first use) and send those ids, which mean nothing to another model
    # (docs/migrate.md); LangChain's documentation says the same for servers other than OpenAI's.
    model = OpenAIEmbeddings(model="tiny_bert", base_url=URL + "/v1", api_key="unused",
                             check_embedding_ctx_length=False, max_retries=0)
    assert model.chunk_size == 1000
    docs = texts(2500)  # 1000, 1000 and 500 inputs per request
    got = model.embed_documents(docs)
    assert len(got) == len(docs)
    assert_same_vectors(got, docs)
    assert_same_vectors([model.embed_query(docs[3])], docs[3:4])


# ---- the openai client: 2048 inputs in one request (OpenAI's limit) --------------------------

def test_openai_client_2048_inputs():
    import openai
    client = openai.OpenAI(base_url=URL + "/v1", api_key="unused", max_retries=0)
    docs = texts(2048)
    r = client.embeddings.create(model="tiny_bert", input=docs)
    assert [d.index for d in r.data] == list(range(2048))
    assert_same_vectors([d.embedding for d in r.data], docs)
    # One more is over the limit: 413 naming the flags that raise it.
    with pytest.raises(openai.APIStatusError) as e:
        client.embeddings.create(model="tiny_bert", input=texts(2049))
    assert e.value.status_code == 413
    assert "--max-inputs-per-request" in str(e.value) and "--max-client-batch-size" in str(e.value)


# ---- TEI's error_type values, as TEI's clients match them ------------------------------------

def test_tei_error_types():
    def error(url, path, body):
        req = urllib.request.Request(url + path, data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
        with pytest.raises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(req, timeout=60)
        return e.value.code, json.loads(e.value.read())
    assert error(URL, "/embed", {"inputs": []}) == (400, {"error": "'inputs' is empty: send at least one input",
                                                          "error_type": "Empty"})
    code, body = error(URL, "/embed", {"inputs": "a", "prompt_name": "nope"})
    assert code == 422 and body["error_type"] == "Validation"
    code, body = error(RERANK_URL, "/rerank", {"query": "a", "texts": []})
    assert code == 400 and body["error_type"] == "Empty"
    code, body = error(URL, "/v1/embeddings", {"input": []})  # OpenAI's shape on OpenAI's route
    assert code == 400 and body["error"]["type"] == "invalid_request_error"
