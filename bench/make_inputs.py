#!/usr/bin/env python3
"""Writes the benchmark inputs of bench/compare_ort.sh as .npy files.

  make_inputs.py OUT_DIR

OUT_DIR/<case>/<input name>.npy for each case (fixed seed, so reruns give the same bytes):
  minilm_b1s128, minilm_b8s128, minilm_b1s16: input_ids int64 uniform in [0, 30522),
      attention_mask int64 ones, token_type_ids int64 zeros, shape [batch, sequence]
  resnet18, mobilenet_v2, tiny_vit, efficientnet_b0: input float32 [1, 3, 224, 224], standard normal
  the quantized and float16 cases (minilm_int8_*, <cnn>_int8_qdq, <cnn>_int8_qop, <cnn>_fp16): as the
      float32 case they come from
"""
import os
import sys

import numpy as np

CASES = {
    "minilm_b1s128": ("minilm", 1, 128),
    "minilm_b8s128": ("minilm", 8, 128),
    "minilm_b1s16": ("minilm", 1, 16),
    "resnet18": ("image", 1, 224),
    "mobilenet_v2": ("image", 1, 224),
    "tiny_vit": ("image", 1, 224),
    "efficientnet_b0": ("image", 1, 224),
    "minilm_int8_b1s128": ("minilm", 1, 128),
    "minilm_int8_b8s128": ("minilm", 8, 128),
}
for _cnn in ("resnet18", "mobilenet_v2", "efficientnet_b0"):
    for _tag in ("int8_qdq", "int8_qop", "fp16"):
        CASES[f"{_cnn}_{_tag}"] = ("image", 1, 224)


def main(argv):
    if len(argv) != 1:
        sys.exit(__doc__)
    out = argv[0]
    for case, (kind, batch, size) in CASES.items():
        d = os.path.join(out, case)
        os.makedirs(d, exist_ok=True)
        rng = np.random.default_rng(0)
        if kind == "minilm":
            np.save(os.path.join(d, "input_ids.npy"), rng.integers(0, 30522, (batch, size), dtype=np.int64))
            np.save(os.path.join(d, "attention_mask.npy"), np.ones((batch, size), dtype=np.int64))
            np.save(os.path.join(d, "token_type_ids.npy"), np.zeros((batch, size), dtype=np.int64))
        else:
            np.save(os.path.join(d, "input.npy"), rng.standard_normal((batch, 3, size, size), dtype=np.float32))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
