"""dlrt.Embedder.encode gives each text the vector it gets alone, whatever batch_size and
its batch-mates (issue 53), for the zoo's MiniLM in float32 and, with DLRT_QUANT_ZOO_DIR
(scripts/run_tests.sh makes it), float16 and dynamic int8: per-tensor dynamic quantization would
make the model's answer batch-dependent,
so the Embedder quantizes each text with its own scales (padded batches), and then each text's
vector is its alone vector bit for bit."""
import os
import random

import numpy as np
import pytest

import dlrt
import model_folder
from conftest import ZOO_DIR

TEXTS = [
    "A man is eating food.",
    "",
    "Semantic search with sentence embeddings on the CPU.",
    "The quick brown fox jumps over the lazy dog while the children watch from the old bridge.",
    "Hi",
    "Padding tokens must not change what a short sentence means, nor its batch-mates' scale.",
    "cats",
    "A service whose answer depends on its neighbours' requests is hard to trust and to cache.",
    "Two words",
    "Numbers 1 2 3 4 5 6 7 8 9 10 11 12.",
]

# name, folder variable, file, quantized per text (bit-identical batches)
VARIANTS = [
    ("float32", "DLRT_ZOO_DIR", "minilm_l6.onnx", False),
    ("float16", "DLRT_QUANT_ZOO_DIR", "minilm_l6_ort_optimized_fp16.onnx", False),
    ("dynamic_qint8", "DLRT_QUANT_ZOO_DIR", "minilm_l6_dynamic_qint8.onnx", True),
]


@pytest.mark.parametrize("name,env,file,per_text", VARIANTS, ids=[v[0] for v in VARIANTS])
def test_encode_is_batch_invariant(tmp_path, name, env, file, per_text):
    base = ZOO_DIR if env == "DLRT_ZOO_DIR" else os.environ.get(env)
    if not base:
        pytest.skip(f"{env} is not set, so the {name} batch-invariance check did not run")
    onnx = os.path.join(base, file)
    assert os.path.isfile(onnx), f"{onnx} is absent from {env}"
    vocab = model_folder.bert_vocab_path(ZOO_DIR) if ZOO_DIR else ""
    if not os.path.isfile(vocab):
        pytest.skip(f"no BERT vocabulary at {vocab!r}")
    folder = tmp_path / name
    folder.mkdir()
    model_folder.write_bert_vocab(vocab, str(folder / "vocab.txt"))
    model_folder.write_tokenizer_config(str(folder))
    os.symlink(onnx, folder / "model.onnx")

    e = dlrt.Embedder(folder, device="cpu", threads=2)
    assert e.batching.startswith("padded batches"), e.batching
    assert ("int8 scales per text" in e.batching) == per_text, e.batching
    alone = np.stack([e.encode(t) for t in TEXTS])
    rng = random.Random(53)
    worst = 1.0
    for batch_size in (2, 3, 7, len(TEXTS)):
        order = list(range(len(TEXTS)))
        rng.shuffle(order)
        got = e.encode([TEXTS[i] for i in order], batch_size=batch_size)
        want = alone[order]
        cos = np.sum(got.astype(np.float64) * want, axis=1) / (
            np.linalg.norm(got.astype(np.float64), axis=1) * np.linalg.norm(want.astype(np.float64), axis=1))
        worst = min(worst, float(cos.min()))
        assert cos.min() >= 1 - 1e-6, (name, batch_size, [TEXTS[order[i]] for i in np.argsort(cos)[:3]], cos.min())
        if per_text:
            differ = [TEXTS[order[i]] for i in range(len(order)) if not np.array_equal(got[i], want[i])]
            assert not differ, (name, batch_size, differ)
    print(f"{name}: {e.batching}; worst cosine {worst:.9f}")
