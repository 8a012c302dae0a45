"""compare_npy.py OUT_DIR EXPECTED_DIR [OTHER_DIR]: each EXPECTED_DIR/*.npy against OUT_DIR's
file of the same name (rtol 1e-3, atol 1e-4, as the zoo test); with OTHER_DIR, also the largest
difference from that run's output. Exit status 1 when an output is missing or out of tolerance."""
import os
import sys

import numpy as np

out, expected = sys.argv[1], sys.argv[2]
other = sys.argv[3] if len(sys.argv) > 3 else None
names = sorted(f for f in os.listdir(expected) if f.endswith(".npy"))
if not names:
    sys.exit(f"compare_npy: no .npy files in {expected}")
bad = 0
for f in names:
    e = np.load(os.path.join(expected, f))
    path = os.path.join(out, f)
    if not os.path.exists(path):
        print(f"{f}: missing in {out}")
        bad += 1
        continue
    a = np.load(path)
    if a.shape != e.shape:
        print(f"{f}: shape {a.shape}, expected {e.shape}")
        bad += 1
        continue
    d = np.abs(a.astype(np.float64) - e.astype(np.float64))
    ok = bool(np.allclose(a, e, rtol=1e-3, atol=1e-4))
    line = f"{f}: max abs diff {d.max():.3g} (max |expected| {np.abs(e).max():.3g}) {'ok' if ok else 'OUT OF TOLERANCE'}"
    if other:
        o = np.load(os.path.join(other, f))
        line += f"; vs {other}: max abs diff {np.abs(a.astype(np.float64) - o).max():.3g}"
        line += ", bit-identical" if np.array_equal(a, o) else ""
    print(line)
    bad += 0 if ok else 1
sys.exit(1 if bad else 0)
