"""dlrt.Embedder refuses the folders it cannot embed with one error naming their kind (issue 80,
W2: an LLM reranker folder was embedded as mean-pooled LM logits, a "dimension 640" vector), and
a sparse folder's dense encode names what it gives instead."""
import os

import pytest

import dlrt
from conftest import ROOT

RETRIEVAL = os.path.join(ROOT, "tests", "models", "retrieval")
EMBED_DATA = os.path.join(ROOT, "tests", "embed", "data")


@pytest.mark.parametrize("folder, kind", [(os.path.join(RETRIEVAL, "qwen3_rerank"), "llm_reranker"),
                                          (os.path.join(EMBED_DATA, "cross_encoder_tiny"), "cross_encoder")])
def test_reranker_folders_are_refused_naming_their_kind(folder, kind):
    with pytest.raises(dlrt.Unsupported, match=f"kind {kind}"):
        dlrt.Embedder(folder, device="cpu", threads=1)


def test_sparse_folder_dense_encode_names_the_sparse_route():
    e = dlrt.Embedder(os.path.join(RETRIEVAL, "splade_tiny"), device="cpu", threads=1)
    with pytest.raises(dlrt.InvalidArgument, match="sparse"):
        e.encode(["hello"])


@pytest.mark.parametrize("name", ["clip_tiny", "siglip_tiny", "clip_optimum_tiny", "st5_clip_tiny", "st57_clip_tiny",
                                  "st6_clip_tiny", "siglip_optimum_tiny", "st57_siglip_tiny", "st6_siglip_tiny",
                                  "siglip2_tiny", "st57_siglip2_tiny", "st6_siglip2_tiny",
                                  "siglip2_mask_tiny"])
def test_clip_folder_embeds_texts_as_the_text_tower(name):
    # The registry opens a CLIP / SigLIP folder as its kind: texts through the text tower,
    # normalised, against the torch reference (images: dlrt embed --image and dlrt serve).
    import json

    import numpy as np
    folder = os.path.join(ROOT, "tests", "models", "image", name)
    with open(folder + "_reference.json") as f:
        ref = json.load(f)
    e = dlrt.Embedder(folder, device="cpu", threads=1)
    assert e.kind == "clip"
    got = e.encode(ref["texts"])
    want = np.asarray(ref["text_embeds"], dtype=np.float32)
    assert got.shape == want.shape
    cos = (got * want).sum(1) / np.linalg.norm(got, axis=1) / np.linalg.norm(want, axis=1)
    assert cos.min() >= 0.99999, cos
    assert np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)
