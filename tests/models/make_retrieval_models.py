#!/usr/bin/env python3
"""Writes the retrieval test models under tests/models/retrieval/ (committed):
tiny random-weight models of the retrieval families dlrt serves, saved and
exported to ONNX the way their users do, with the outputs of their own
libraries (in torch) for a fixed set of texts as the reference.

Run once by a developer, not by `make test` (the tests read the committed
folders without torch). It needs a venv with RETRIEVAL_MODEL_PACKAGES of
scripts/pins.sh:

    python3 -m venv /tmp/venv-retrieval
    . scripts/pins.sh && /tmp/venv-retrieval/bin/pip install $RETRIEVAL_MODEL_PACKAGES
    /tmp/venv-retrieval/bin/python tests/models/make_retrieval_models.py [--only NAME ...]

Families (one function each, `make_<name>(out_dir)`, listed in FAMILIES; add
a new family as a further function, with its folder and reference file):

  splade_tiny  a sentence-transformers SparseEncoder (MLMTransformer +
               SpladePooling) over a 2-layer BertForMaskedLM (hidden 32) with
               a small WordPiece vocabulary cut from BERT's; onnx/model.onnx is
               what SparseEncoder(..., backend="onnx") exports (optimum's
               fill-mask task: the MLM logits [batch, sequence, vocabulary]).
               reference.json holds SparseEncoder.encode's vectors (torch) for
               TEXTS in one padded batch, as non-zero (index, value) pairs, for
               the folder's pooling (max, relu) and for sum pooling, the
               log1p_relu activation and max_active_dims=5.

Weights are random (fixed seeds). The output is deterministic for the pinned
packages; the script checks ONNX Runtime on the exported model against torch.
"""
import json
import os
import shutil

import numpy as np
import torch

from families_main import main as families_main

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "retrieval")
BERT_VOCAB = os.path.join(HERE, "..", "..", "..", "shared", "data", "bert-uncased-vocab.txt")

# The texts of every family's reference: mixed lengths in one batch, an empty
# text, punctuation, an accented word, words outside the small vocabulary
# (split into pieces) and one text past the model's max_seq_length (truncated).
TEXTS = [
    "the quick brown fox jumps over the lazy dog.",
    "what is the capital of france?",
    "",
    "Café, naïve and résumé are words with accents!",
    "search",
    "a sparse model gives each word of the vocabulary a weight, and most of them are zero",
    " ".join(["the river bank and the money bank are not the same"] * 12),
]


def small_bert_vocab(words=300):
    """BERT's special tokens, its single characters and ## pieces of ASCII, its
    `words` most frequent whole words and the words of TEXTS: a WordPiece
    vocabulary small enough to commit that still spells every ASCII text."""
    # The shared file writes a word-initial piece as "\u2581piece" and a
    # continuation bare; BERT's layout is "piece" and "##piece" (same order).
    lines = []
    for raw in open(BERT_VOCAB, encoding="utf-8"):
        t = raw.rstrip("\n")
        if t.startswith("[") and t.endswith("]"):
            lines.append(t)
        elif t.startswith("\u2581"):
            lines.append(t[1:])
        else:
            lines.append("##" + t)
    special = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    chars = [t for t in lines if len(t) == 1 and ord(t) < 128 and t.isprintable() and not t.isspace()]
    pieces = [t for t in lines if t.startswith("##") and len(t) == 3 and ord(t[2]) < 128 and t[2].isalnum()]
    whole = [t for t in lines[1996:] if t.isalpha() and t.isascii() and len(t) > 1][:words]
    known = set(lines)
    whole += [w for text in TEXTS for w in text.lower().replace(",", " ").replace(".", " ").split() if w in known]
    vocab = []
    for t in special + chars + pieces + whole:
        if t not in vocab:
            vocab.append(t)
    return vocab


def write_json(path, value):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(value, f, indent=1, ensure_ascii=False)
        f.write("\n")


def sparse_rows(dense):
    """[[(index, value), ...] per row] of a dense [n, dim] array: the non-zero entries."""
    rows = []
    for row in np.asarray(dense, dtype=np.float32):
        nz = np.nonzero(row)[0]
        rows.append({"indices": [int(i) for i in nz], "values": [float(row[i]) for i in nz]})
    return rows


def keep_logits_off_zero(model, tokenizer, texts, max_length, margin=0.02):
    """Shifts the MLM head's per-token bias so that no logit of `texts` lies
    within `margin` of zero: relu then keeps or drops the same entries in any
    float32 implementation, so the non-zero indices compare exactly."""
    enc = tokenizer(texts, padding=True, truncation=True, max_length=max_length, return_tensors="pt")
    with torch.no_grad():
        logits = model(**enc).logits  # [batch, sequence, vocabulary]
    mask = enc["attention_mask"].bool()
    real = logits[mask]  # [tokens, vocabulary]
    bias = model.cls.predictions.bias.data
    for j in range(real.shape[1]):
        col = real[:, j]
        for k in range(1, 400):
            shift = (k // 2) * 0.005 * (1 if k % 2 else -1)
            if torch.all((col + shift).abs() > margin):
                bias[j] += shift
                break
        else:
            raise SystemExit(f"no bias shift keeps the logits of token {j} off zero")


def make_splade_tiny(out_dir):
    from sentence_transformers import SparseEncoder
    from sentence_transformers.sparse_encoder.models import MLMTransformer, SpladePooling
    from transformers import BertConfig, BertForMaskedLM, BertTokenizerFast

    work = out_dir + ".work"
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    vocab = small_bert_vocab()
    with open(os.path.join(work, "vocab.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(vocab) + "\n")
    tokenizer = BertTokenizerFast(os.path.join(work, "vocab.txt"), do_lower_case=True, model_max_length=64)
    torch.manual_seed(67)
    config = BertConfig(vocab_size=len(vocab), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=64, tie_word_embeddings=False)
    mlm = BertForMaskedLM(config).eval()
    with torch.no_grad():
        # Logits of order 1, mostly negative: a few active terms per text.
        mlm.cls.predictions.decoder.weight.normal_(0.0, 0.15)
        mlm.cls.predictions.bias.fill_(-2.0)
    max_seq_length = 48
    keep_logits_off_zero(mlm, tokenizer, TEXTS, max_seq_length)
    hf_dir = os.path.join(work, "hf")
    mlm.save_pretrained(hf_dir)
    tokenizer.save_pretrained(hf_dir)

    transformer = MLMTransformer(hf_dir, max_seq_length=max_seq_length)
    pooling = SpladePooling(pooling_strategy="max", activation_function="relu",
                            word_embedding_dimension=len(vocab))
    model = SparseEncoder(modules=[transformer, pooling], device="cpu")
    st_dir = os.path.join(work, "st")
    model.save_pretrained(st_dir)

    # References: SparseEncoder.encode in torch, all texts in one padded batch.
    def encode(m, **kw):
        emb = m.encode(TEXTS, batch_size=len(TEXTS), convert_to_tensor=True, **kw)
        return emb.to_dense().cpu().numpy()

    reference = {"texts": TEXTS, "vocab_size": len(vocab), "max_seq_length": max_seq_length, "outputs": {}}
    outputs = reference["outputs"]
    outputs["max_relu"] = sparse_rows(encode(model))
    outputs["max_relu_top5"] = sparse_rows(encode(model, max_active_dims=5))
    model[1].pooling_strategy = "sum"
    outputs["sum_relu"] = sparse_rows(encode(model))
    model[1].pooling_strategy = "max"
    model[1].activation_function = "log1p_relu"
    outputs["max_log1p_relu"] = sparse_rows(encode(model))
    model[1].activation_function = "relu"
    reference["token_counts"] = [len(model.tokenize([t])["input_ids"][0]) for t in TEXTS]

    # The ONNX export users make: backend="onnx" exports through optimum
    # (fill-mask) and save_pretrained writes onnx/model.onnx into the folder.
    onnx_model = SparseEncoder(st_dir, backend="onnx", device="cpu")
    onnx_model.save_pretrained(st_dir)
    got = encode(onnx_model)
    want = encode(model)
    if not np.array_equal(got != 0, want != 0) or not np.allclose(got, want, rtol=1e-4, atol=1e-6):
        raise SystemExit("ONNX Runtime on the export differs from torch: " + str(np.abs(got - want).max()))

    shutil.rmtree(out_dir, ignore_errors=True)
    shutil.copytree(st_dir, out_dir)
    shutil.rmtree(work)
    write_json(os.path.join(out_dir, "..", "splade_tiny_reference.json"), reference)


FAMILIES = {"splade_tiny": make_splade_tiny}


if __name__ == "__main__":
    families_main(__doc__, OUT, FAMILIES)
