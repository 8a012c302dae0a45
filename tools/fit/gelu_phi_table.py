#!/usr/bin/env python3
"""Fits the piecewise polynomial table of the 512-bit Gelu (activation_simd.h).

Phi(x), the standard normal CDF, on [-L, L] in NSEG equal segments; on each a
degree-DEG polynomial in u in [-1/2, 1/2] (u = the position within the
segment less its middle), fitted for the least maximum absolute error by
iteratively reweighted least squares (Lawson). Prints the C++ table (one row
of NSEG coefficients per power of u) and the errors of a float32 evaluation
done the way the kernel does it, against Gelu in double.

    /usr/bin/python3 tools/fit/gelu_phi_table.py   (needs numpy)
"""
import math

import numpy as np

L, NSEG, DEG = 6.0, 32, 5
H = 2 * L / NSEG
erfc = np.vectorize(math.erfc)


def phi(x):
    return 0.5 * erfc(-x / math.sqrt(2.0))


def fit_segment(i):
    u = 0.5 * np.cos(np.linspace(np.pi, 0, 400))  # Chebyshev-spaced nodes
    f = phi(-L + (i + 0.5 + u) * H)
    a = np.stack([u**k for k in range(DEG + 1)], 1)
    w = np.ones_like(u)
    for _ in range(40):
        sw = np.sqrt(w)
        c, *_ = np.linalg.lstsq(a * sw[:, None], f * sw, rcond=None)
        err = a @ c - f
        w = w * np.abs(err) + 1e-30
        w /= w.sum()
    return c, np.abs(err).max()


def main():
    fits = [fit_segment(i) for i in range(NSEG)]
    table = np.array([c for c, _ in fits]).astype(np.float32)  # [segment][power]
    # float32 evaluation as in gelu_lockstep: s = x/H + (L/H - 1/2) rounded to
    # the nearest segment, u = s - segment, Horner in u, 0 below -L.
    v = np.linspace(-8, 8, 800001).astype(np.float32)
    t = np.clip(v, np.float32(-L), np.float32(L))
    s = (t * np.float32(1 / H) + np.float32(L / H - 0.5)).astype(np.float32)
    seg = np.minimum(np.rint(s).astype(np.int32), NSEG - 1)
    u = (s - seg.astype(np.float32)).astype(np.float32)
    p = table[seg, DEG]
    for k in range(DEG - 1, -1, -1):
        p = (p * u + table[seg, k]).astype(np.float32)
    p = np.where(v < -L, np.float32(0), p)
    gelu = (v * p).astype(np.float32)
    ref = v.astype(np.float64) * phi(v.astype(np.float64))
    err = np.abs(gelu - ref)
    print(f"// fit: max |Phi error| {max(e for _, e in fits):.3g} in exact arithmetic;")
    print(f"// float32 Gelu: max |error| {err.max():.3g}, max |error| / (3e-7 + 4e-7 |Gelu|) "
          f"{(err / (3e-7 + 4e-7 * np.abs(ref))).max():.3f}")
    print(f"alignas(64) inline constexpr float kGeluPhiTable[{DEG + 1}][{NSEG}] = {{")
    for k in range(DEG + 1):
        vals = [f"{x:.9g}" for x in table[:, k]]
        vals = [x + ("f" if any(ch in x for ch in ".en") else ".0f") for x in vals]  # 1 -> 1.0f
        lines = [", ".join(vals[i:i + 6]) for i in range(0, NSEG, 6)]
        print(f"    {{{(',' + chr(10) + '     ').join(lines)}}},  // u^{k}")
    print("};")


if __name__ == "__main__":
    main()
