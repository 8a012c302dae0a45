#!/usr/bin/env python3
"""Writes two sequence-classification model folders built from the zoo's
text encoder (minilm_l6) with a classification head of random weights:
OUT/reranker (one logit: a cross-encoder) and OUT/classifier (three labels).

    make_cross_encoder.py ZOO_DIR VOCAB_TXT OUT

The head is BERT's: the first token's vector through a dense layer and tanh
(the pooler), then a dense layer to the logits. VOCAB_TXT is shared/data's
vocabulary (word-initial pieces as "\u2581piece"), written in BERT's layout
(model_folder.py).
Needs Debian's python3-onnx and python3-numpy; deterministic (seed 11)."""
import json
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from model_folder import write_bert_vocab, write_tokenizer_config


def with_head(model, labels, rng):
    g = model.graph
    hidden = 384
    (out,) = [o for o in g.output if o.name == "last_hidden_state"]
    inits = {
        "head_index": np.array(0, dtype=np.int64),
        "pool_w": (rng.standard_normal((hidden, hidden)) * 0.05).astype(np.float32),
        "pool_b": (rng.standard_normal(hidden) * 0.05).astype(np.float32),
        "cls_w": (rng.standard_normal((hidden, labels)) * 0.2).astype(np.float32),
        "cls_b": (rng.standard_normal(labels) * 0.1).astype(np.float32),
    }
    g.initializer.extend(numpy_helper.from_array(v, k) for k, v in inits.items())
    g.node.extend([
        helper.make_node("Gather", ["last_hidden_state", "head_index"], ["head_first"], axis=1),
        helper.make_node("MatMul", ["head_first", "pool_w"], ["head_pool_mm"]),
        helper.make_node("Add", ["head_pool_mm", "pool_b"], ["head_pool_add"]),
        helper.make_node("Tanh", ["head_pool_add"], ["head_pooled"]),
        helper.make_node("MatMul", ["head_pooled", "cls_w"], ["head_cls_mm"]),
        helper.make_node("Add", ["head_cls_mm", "cls_b"], ["logits"]),
    ])
    g.output.remove(out)
    g.output.append(helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", labels]))
    return model


def main():
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    zoo, vocab_path, out = sys.argv[1:]
    rng = np.random.default_rng(11)
    for name, labels in (("reranker", ["LABEL_0"]), ("classifier", ["negative", "neutral", "positive"])):
        d = os.path.join(out, name)
        os.makedirs(d, exist_ok=True)
        model = with_head(onnx.load(os.path.join(zoo, "minilm_l6.onnx")), len(labels), rng)
        onnx.checker.check_model(model)
        onnx.save(model, os.path.join(d, "model.onnx"))
        write_bert_vocab(vocab_path, os.path.join(d, "vocab.txt"))
        config = {"architectures": ["BertForSequenceClassification"], "model_type": "bert", "hidden_size": 384,
                  "max_position_embeddings": 512, "id2label": {str(i): l for i, l in enumerate(labels)},
                  "label2id": {l: i for i, l in enumerate(labels)}}
        with open(os.path.join(d, "config.json"), "w") as f:
            json.dump(config, f, indent=1)
        write_tokenizer_config(d)
    with open(os.path.join(out, "STAMP"), "w") as f:
        f.write("made by make_cross_encoder.py\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
