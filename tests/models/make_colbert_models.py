#!/usr/bin/env python3
"""Writes the multi-vector (ColBERT) test model, committed under
tests/models/retrieval/colbert_tiny/, and its reference outputs,
tests/models/retrieval/colbert_tiny_expected.json.

    /work/venv-retrieval/bin/python tests/models/make_colbert_models.py

(the venv: scripts/pins.sh's COLBERT_MODEL_PACKAGES; `python3 -m venv V &&
V/bin/pip install --extra-index-url https://download.pytorch.org/whl/cpu
$COLBERT_MODEL_PACKAGES`). The tests read the committed files and need none
of these packages.

The model is made with the family's own classes, as a user would make one:
a random-weight BERT (transformers' BertConfig, seed 67) over a small
WordPiece vocabulary (a subset of ../shared/data/bert-uncased-vocab.txt),
wrapped as a PyLate ColBERT model (which adds the [Q] / [D] marker tokens and
a Dense projection 32 -> 16) and saved by PyLate; the transformer is then
exported to ONNX by optimum (task feature-extraction) into onnx/model.onnx.

The reference outputs come from PyLate's own encode in torch: per-token
vectors of queries and of documents (mixed lengths in one batch, a document
over document_length, punctuation the skip-list drops), MaxSim scores
(pylate.scores.colbert_scores), and the same for two other settings of
config_sentence_transformers.json (no query expansion; attending to the
expansion tokens) applied to the same weights. "plain" is
sentence-transformers' encode(output_value="token_embeddings") of the
transformer alone (a Transformer + Pooling folder over the same files).
"""
import json
import os
import shutil
import tempfile

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
OUT_DIR = os.path.join(HERE, "retrieval")
MODEL = os.path.join(OUT_DIR, "colbert_tiny")
EXPECTED = os.path.join(OUT_DIR, "colbert_tiny_expected.json")
VOCAB_SOURCE = os.path.join(HERE, "..", "..", "..", "shared", "data", "bert-uncased-vocab.txt")
if not os.path.exists(VOCAB_SOURCE):
    VOCAB_SOURCE = "/work/shared/data/bert-uncased-vocab.txt"

QUERIES = ["what is a cat?", "dogs", "how do big dogs and small cats sleep on the mat at night, and why?"]
DOCUMENTS = [
    "The cat sat on the mat.",
    "Dogs, cats and birds: they all sleep!",
    "a",
    "When the night is long, the big dog walks to the river; the small cat stays home, "
    "sleeping on a red mat near the door (it is warm there).",
]
# Whole words kept from the BERT vocabulary besides every single character and
# its ## form (so that any text made of ASCII letters tokenizes without [UNK]).
WORDS = ("the a an is what how do does and or on at in to of it its they all there when why where who "
         "cat cats dog dogs bird birds sat sit sleep sleeping walks walk long big small red warm home near "
         "door river night mat stays stay").split()


def vocabulary():
    # The file spells the vocabulary SentencePiece-style: "▁word" starts
    # a word (WordPiece's "word"), a bare piece continues one ("##piece").
    full = []
    with open(VOCAB_SOURCE, encoding="utf-8") as f:
        for line in f:
            tok = line.rstrip("\n")
            if tok.startswith("[") and tok.endswith("]"):
                full.append(tok)
            elif tok.startswith("\u2581") and len(tok) > 1:
                full.append(tok[1:])
            elif tok and not tok.startswith("\u2581"):
                full.append("##" + tok)
    keep = set(WORDS)
    for tok in full:
        bare = tok[2:] if tok.startswith("##") else tok
        if len(bare) == 1 and bare.isascii():
            keep.add(tok)
        if tok.startswith("##") and bare in ("s", "ing", "ed", "er", "ly"):
            keep.add(tok)
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    return specials + [t for t in full if t in keep and t not in specials]


def make_model(tmp):
    from pylate import models
    from sentence_transformers import models as st_models
    from transformers import BertConfig, BertModel, BertTokenizerFast

    base = os.path.join(tmp, "base")
    os.makedirs(base)
    vocab = vocabulary()
    with open(os.path.join(base, "vocab.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(vocab) + "\n")
    tok = BertTokenizerFast(vocab_file=os.path.join(base, "vocab.txt"), do_lower_case=True)
    tok.model_max_length = 64
    tok.save_pretrained(base)
    torch.manual_seed(67)
    config = BertConfig(vocab_size=len(vocab), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=64)
    BertModel(config).eval().save_pretrained(base)
    transformer = st_models.Transformer(base, max_seq_length=64)
    # The Dense projection as PyLate builds it for a base encoder (no bias).
    dense = models.Dense(in_features=32, out_features=16, bias=False)
    model = models.ColBERT(modules=[transformer, dense], query_length=12, document_length=20)
    model.save(MODEL)
    return model


def export_onnx():
    from optimum.exporters.onnx import main_export

    main_export(MODEL, output=os.path.join(MODEL, "onnx"), task="feature-extraction", opset=17,
                do_validation=False, no_post_process=False)
    # optimum copies the tokenizer and config into its output folder: the
    # model folder has them already.
    for name in os.listdir(os.path.join(MODEL, "onnx")):
        if name != "model.onnx":
            os.remove(os.path.join(MODEL, "onnx", name))


def vectors(arrays):
    return [np.asarray(a, dtype=np.float32).round(7).tolist() for a in arrays]


def reference(model, overrides):
    from pylate import models, scores

    m = models.ColBERT(MODEL, **overrides) if overrides else model
    m.eval()
    q = m.encode(QUERIES, is_query=True, batch_size=8)
    d = m.encode(DOCUMENTS, is_query=False, batch_size=8)
    def padded(arrays):
        return torch.nn.utils.rnn.pad_sequence([torch.tensor(x) for x in arrays], batch_first=True)

    def mask(arrays):
        return padded([np.ones(len(x), dtype=np.float32) for x in arrays])

    maxsim = scores.colbert_scores(padded(q), padded(d), queries_mask=mask(q), documents_mask=mask(d))
    # Per-query scores, one document at a time (padding-free), as a check of the padded call.
    for i, qv in enumerate(q):
        for j, dv in enumerate(d):
            alone = float((torch.tensor(qv) @ torch.tensor(dv).T).max(dim=1).values.sum())
            assert abs(alone - float(maxsim[i, j])) < 1e-4, (i, j, alone, float(maxsim[i, j]))
    feats = m.tokenize(QUERIES, is_query=True)
    dfeats = m.tokenize(DOCUMENTS, is_query=False)
    return {
        "overrides": overrides,
        "query_ids": feats["input_ids"].tolist(),
        "query_attention": feats["attention_mask"].tolist(),
        "document_ids": [[int(t) for t, a in zip(ids, mask) if a] for ids, mask in
                         zip(dfeats["input_ids"].tolist(), dfeats["attention_mask"].tolist())],
        "queries": vectors(q),
        "documents": vectors(d),
        "maxsim": np.asarray(maxsim, dtype=np.float64).round(6).tolist(),
    }


def plain_reference():
    from sentence_transformers import SentenceTransformer
    from sentence_transformers import models as st_models

    transformer = st_models.Transformer(MODEL, max_seq_length=64)
    pooling = st_models.Pooling(transformer.get_word_embedding_dimension(), "mean")
    st = SentenceTransformer(modules=[transformer, pooling], device="cpu")
    texts = QUERIES + DOCUMENTS
    tokens = st.encode(texts, output_value="token_embeddings", batch_size=8, convert_to_numpy=False)
    return {"texts": texts, "token_embeddings": vectors([t.cpu().numpy() for t in tokens])}


def main():
    if os.path.exists(MODEL):
        shutil.rmtree(MODEL)
    os.makedirs(OUT_DIR, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        model = make_model(tmp)
    export_onnx()
    # PyLate writes a model card with the date and paths of this run: not needed.
    readme = os.path.join(MODEL, "README.md")
    if os.path.exists(readme):
        os.remove(readme)
    expected = {
        "queries": QUERIES,
        "documents": DOCUMENTS,
        "default": reference(model, {}),
        "no_expansion": reference(model, {"do_query_expansion": False}),
        "attend_expansion": reference(model, {"attend_to_expansion_tokens": True}),
        "plain": plain_reference(),
    }
    with open(EXPECTED, "w", encoding="utf-8") as f:
        json.dump(expected, f, separators=(",", ":"))
        f.write("\n")
    total = sum(os.path.getsize(os.path.join(r, n)) for r, _, ns in os.walk(MODEL) for n in ns)
    print(f"wrote {MODEL} ({total} bytes) and {EXPECTED}")


if __name__ == "__main__":
    main()
