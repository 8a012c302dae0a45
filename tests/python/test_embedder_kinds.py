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


def test_clip_folder_is_refused_naming_where_it_is_served():
    # Images in the Python Embedder are not implemented yet: dlrt embed and dlrt serve take CLIP folders.
    with pytest.raises(dlrt.Unsupported, match="is a CLIP model .*dlrt embed and dlrt serve"):
        dlrt.Embedder(os.path.join(ROOT, "tests", "models", "image", "clip_tiny"), device="cpu", threads=1)
