#!/usr/bin/env python3
"""Writes the tiny test model folder tests/embed/data/tiny_bert/ (committed)
and tests/embed/data/tiny_bert_expected.json, the pooled vectors numpy
computes for a few texts (mean, cls and max; raw and L2-normalised).

    /usr/bin/python3 tests/embed/make_tiny_model.py

A BERT-like graph with random weights (seed 7): word + position + token-type
embeddings, LayerNormalization, a masked mean of the sequence added back to
every token (so padding must be masked right), MatMul + Add + Tanh ->
last_hidden_state [batch, sequence, 8]. Needs Debian's python3-onnx and
python3-numpy (onnx 1.12, numpy 1.24); output is deterministic.
"""
import json
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "data", "tiny_bert")
H, POS = 8, 16
VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat", "sat", "on", "mat", "a", "dog", "un",
         "##aff", "##able", ",", ".", "!", "hello", "world", "é", "中", "国", "##s", "big"]
# Texts and the ids the folder's tokenizer must give them.
TEXTS = ["the cat sat on the mat.", "Hello, world!", "a big dog", "unaffable cats", "中国", "",
         "The CAT sat on a big big big dog, the mat! hello world"]


def tokenize(text):
    # Enough of BERT for the texts above (lower-case, punctuation, CJK, greedy ## pieces).
    words = []
    for w in text.lower().replace(",", " , ").replace(".", " . ").replace("!", " ! ").split():
        if w == "中国":
            words += ["中", "国"]
        else:
            words.append(w)
    ids = [2]
    for w in words:
        pieces, start = [], 0
        while start < len(w):
            end = len(w)
            while end > start:
                sub = ("##" if start else "") + w[start:end]
                if sub in VOCAB:
                    pieces.append(VOCAB.index(sub))
                    break
                end -= 1
            if end == start:
                pieces = [1]
                break
            start = end
        ids += pieces
    return ids[:POS - 1] + [3]


def model(rng):
    w_word = rng.standard_normal((len(VOCAB), H)).astype(np.float32)
    w_pos = rng.standard_normal((POS, H)).astype(np.float32) * 0.5
    w_type = rng.standard_normal((2, H)).astype(np.float32) * 0.5
    gamma = (1 + 0.1 * rng.standard_normal(H)).astype(np.float32)
    beta = (0.1 * rng.standard_normal(H)).astype(np.float32)
    w1 = rng.standard_normal((H, H)).astype(np.float32) / np.sqrt(H)
    b1 = (0.1 * rng.standard_normal(H)).astype(np.float32)
    return dict(w_word=w_word, w_pos=w_pos, w_type=w_type, gamma=gamma, beta=beta, w1=w1, b1=b1)


def build_onnx(p):
    inits = [numpy_helper.from_array(v, k) for k, v in p.items()]
    inits += [numpy_helper.from_array(np.array(x, dtype=np.int64), n) for n, x in
              [("zero", 0), ("one", 1), ("axis1", [1]), ("last", [-1])]]
    n = helper.make_node
    nodes = [
        n("Gather", ["w_word", "input_ids"], ["we"]),
        n("Shape", ["input_ids"], ["shape"]),
        n("Gather", ["shape", "one"], ["seqlen"], axis=0),
        n("Range", ["zero", "seqlen", "one"], ["pos"]),
        n("Gather", ["w_pos", "pos"], ["pe"]),
        n("Gather", ["w_type", "token_type_ids"], ["te"]),
        n("Add", ["we", "pe"], ["x0"]),
        n("Add", ["x0", "te"], ["x1"]),
        n("LayerNormalization", ["x1", "gamma", "beta"], ["x2"], axis=-1, epsilon=1e-12),
        n("Cast", ["attention_mask"], ["maskf"], to=TensorProto.FLOAT),
        n("Unsqueeze", ["maskf", "last"], ["mask3"]),
        n("Mul", ["x2", "mask3"], ["xm"]),
        n("ReduceSum", ["xm", "axis1"], ["xsum"], keepdims=1),
        n("ReduceSum", ["mask3", "axis1"], ["msum"], keepdims=1),
        n("Div", ["xsum", "msum"], ["ctx"]),
        n("Add", ["x2", "ctx"], ["x3"]),
        n("MatMul", ["x3", "w1"], ["x4"]),
        n("Add", ["x4", "b1"], ["x5"]),
        n("Tanh", ["x5"], ["last_hidden_state"]),
    ]
    ins = [helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "sequence"])
           for name in ("input_ids", "attention_mask", "token_type_ids")]
    out = helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["batch", "sequence", H])
    g = helper.make_graph(nodes, "tiny_bert", ins, [out], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], producer_name="dlrt make_tiny_model.py")
    m.ir_version = 8
    onnx.checker.check_model(m)
    return m


def forward(p, ids):
    ids = np.array(ids, dtype=np.int64)
    x = p["w_word"][ids] + p["w_pos"][np.arange(len(ids))] + p["w_type"][0]
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    x = (x - mu) / np.sqrt(var + 1e-12) * p["gamma"] + p["beta"]
    x = x + x.mean(0, keepdims=True)  # every token unmasked in an unpadded sequence
    return np.tanh(x @ p["w1"] + p["b1"])


def main():
    rng = np.random.default_rng(7)
    p = model(rng)
    os.makedirs(os.path.join(OUT, "1_Pooling"), exist_ok=True)
    onnx.save(build_onnx(p), os.path.join(OUT, "model.onnx"))
    with open(os.path.join(OUT, "vocab.txt"), "w", encoding="utf-8") as f:
        f.write("".join(t + "\n" for t in VOCAB))
    files = {
        "tokenizer_config.json": {"do_lower_case": True, "model_max_length": 512, "unk_token": "[UNK]",
                                  "cls_token": "[CLS]", "sep_token": "[SEP]", "pad_token": "[PAD]",
                                  "mask_token": "[MASK]", "tokenizer_class": "BertTokenizer"},
        "config.json": {"_name_or_path": "tiny_bert", "model_type": "bert", "hidden_size": H,
                        "max_position_embeddings": POS, "vocab_size": len(VOCAB)},
        "modules.json": [
            {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
            {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
            {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"}],
        "1_Pooling/config.json": {"word_embedding_dimension": H, "pooling_mode_cls_token": False,
                                  "pooling_mode_mean_tokens": True, "pooling_mode_max_tokens": False,
                                  "pooling_mode_mean_sqrt_len_tokens": False},
    }
    for name, obj in files.items():
        with open(os.path.join(OUT, name), "w", encoding="utf-8") as f:
            json.dump(obj, f, indent=2, ensure_ascii=False)
            f.write("\n")
    expected = {"texts": TEXTS, "ids": [], "mean": [], "cls": [], "max": [], "mean_sqrt_len_tokens": [],
                "lasttoken": [], "weightedmean": []}
    for text in TEXTS:
        ids = tokenize(text)
        hs = forward(p, ids).astype(np.float64)
        expected["ids"].append(ids)
        expected["mean"].append(hs.mean(0).tolist())
        expected["cls"].append(hs[0].tolist())
        expected["max"].append(hs.max(0).tolist())
        # sentence-transformers' other modes: the sum over sqrt(count), the
        # last token, the mean weighted 1, 2, ... by position.
        expected["mean_sqrt_len_tokens"].append((hs.sum(0) / np.sqrt(len(hs))).tolist())
        expected["lasttoken"].append(hs[-1].tolist())
        w = np.arange(1, len(hs) + 1, dtype=np.float64)[:, None]
        expected["weightedmean"].append(((hs * w).sum(0) / w.sum()).tolist())
    with open(os.path.join(HERE, "data", "tiny_bert_expected.json"), "w", encoding="utf-8") as f:
        json.dump(expected, f, indent=1, ensure_ascii=False)
        f.write("\n")


if __name__ == "__main__":
    main()
