"""compare_bf16.py NAME DIR: precision bf16 on aarch64 against f32, from `dlrt run --json` reports
(DIR/f32.json, DIR/bf16_max.json, DIR/bf16_cortex-a76.json) and outputs (DIR/<run>/*.npy).
  - f32: the report's CPU precision is "f32";
  - bf16_max (QEMU's `max` CPU, which has BF16): the report says "bf16 (neon-bfmmla)", and every
    output is within x86's bf16 bounds of f32's (rows of the last axis at cosine 0.99999 or more,
    the largest difference at most 1e-2 of the largest |f32| value) yet not f32's bits (bf16 ran);
  - bf16_cortex-a76 (no BF16): the report says "f32 (bf16 unavailable: <why>)" and the outputs are
    f32's bit for bit.
Prints each run's precision and each output's figures; exit status 1 on any failure."""
import json
import os
import sys

import numpy as np

MIN_COSINE = 0.99999
MAX_REL = 1e-2

name, root = sys.argv[1:3]
bad = []


def precision(run):
    with open(os.path.join(root, run + ".json")) as f:
        parts = [p for p in json.load(f)["report"] if p.get("backend") == "cpu"]
    got = sorted({p.get("precision", "") for p in parts})
    print(f"{name} {run}: CPU precision {got}")
    return got


def outputs(run):
    d = os.path.join(root, run)
    return {f: np.load(os.path.join(d, f)) for f in sorted(os.listdir(d)) if f.endswith(".npy")}


if precision("f32") != ["f32"]:
    bad.append("f32 run: the report does not say f32")
ref = outputs("f32")
if not ref:
    bad.append("f32 run: no outputs")

if precision("bf16_max") != ["bf16 (neon-bfmmla)"]:
    bad.append("bf16 as max: the report does not say bf16 (neon-bfmmla)")
got = outputs("bf16_max")
for f, want in ref.items():
    have = got.get(f)
    if have is None or have.shape != want.shape:
        bad.append(f"bf16 as max: {f} missing or of another shape")
        continue
    x = have.astype(np.float64).reshape(-1, have.shape[-1])
    y = want.astype(np.float64).reshape(-1, want.shape[-1])
    cos = float((np.sum(x * y, 1) / (np.linalg.norm(x, axis=1) * np.linalg.norm(y, axis=1) + 1e-30)).min())
    rel = float(np.abs(x - y).max() / max(np.abs(y).max(), 1e-30))
    print(f"{name} bf16 as max vs f32: {f}: min row cosine {cos:.7f}, max abs diff / max |f32| {rel:.3g}")
    if cos < MIN_COSINE or rel > MAX_REL:
        bad.append(f"bf16 as max: {f} outside the bounds (cosine >= {MIN_COSINE}, relative <= {MAX_REL})")
    if rel == 0:
        bad.append(f"bf16 as max: {f} is f32's bit for bit: did bf16 run?")

a76 = precision("bf16_cortex-a76")
if len(a76) != 1 or not a76[0].startswith("f32 (bf16 unavailable: "):
    bad.append("bf16 as cortex-a76: the report does not say f32 (bf16 unavailable: ...)")
got = outputs("bf16_cortex-a76")
for f, want in ref.items():
    same = f in got and got[f].tobytes() == want.tobytes()
    print(f"{name} bf16 as cortex-a76 vs f32: {f}: {'bit-identical' if same else 'DIFFERENT'}")
    if not same:
        bad.append(f"bf16 as cortex-a76: {f} is not f32's bit for bit")

for b in bad:
    print(f"compare_bf16: {name}: {b}")
sys.exit(1 if bad else 0)
