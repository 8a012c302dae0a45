"""compare_x86.py --float|--integer|--cosine NAME ARM_DIR X86_DIR: each .npy output of the x86
build's run (X86_DIR) against the aarch64 build's (ARM_DIR). --float: within rtol 1e-3, atol 1e-4
(the zoo test's tolerance), printing the largest difference. --integer (a statically quantized
model: integer products between float stages that see the same values): every output the same
bits. --cosine (dynamic quantization: the scales follow float activations, whose last bits differ
between the ISAs): rows of the last axis at cosine 0.9999 or more (the quantized zoo's criterion
for such models). Exit status 1 otherwise."""
import os
import sys

import numpy as np

mode, name, arm, x86 = sys.argv[1:5]
names = sorted(f for f in os.listdir(x86) if f.endswith(".npy"))
if not names:
    sys.exit(f"compare_x86: no outputs in {x86}")
bad = 0
for f in names:
    b = np.load(os.path.join(x86, f))
    path = os.path.join(arm, f)
    a = np.load(path) if os.path.exists(path) else None
    if a is None or a.shape != b.shape or a.dtype != b.dtype:
        print(f"{name}/{f}: aarch64 {None if a is None else (a.dtype, a.shape)}, x86 {(b.dtype, b.shape)}")
        bad += 1
        continue
    same = a.tobytes() == b.tobytes()
    d = float(np.abs(a.astype(np.float64) - b.astype(np.float64)).max()) if a.size else 0.0
    if mode == "--integer":
        ok = same
    elif mode == "--cosine":
        x = a.astype(np.float64).reshape(-1, a.shape[-1])
        y = b.astype(np.float64).reshape(-1, b.shape[-1])
        cos = float((np.sum(x * y, 1) / (np.linalg.norm(x, axis=1) * np.linalg.norm(y, axis=1) + 1e-30)).min())
        ok = cos >= 0.9999
        d = f"{d:.3g}, min row cosine {cos:.7f}"
    else:
        ok = bool(np.allclose(a, b, rtol=1e-3, atol=1e-4))
    what = "bit-identical" if same else f"max abs diff {d if isinstance(d, str) else f'{d:.3g}'}"
    print(f"{name}/{f}: aarch64 vs x86 {what} {'ok' if ok else 'MISMATCH'}")
    bad += not ok
sys.exit(1 if bad else 0)
