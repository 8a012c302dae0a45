#!/usr/bin/env python3
"""Tokenizer speed, dlrt against Hugging Face's tokenizers (issue 38), single
thread, on the same lines and tokenizer.json files: the parity suite's
(tests/embed/make_tokenizer_parity.py). Prints tokens/s for each family.

    scripts/setup_venv.sh BUILD tokenizers==0.23.3 sentencepiece==0.2.3
    BUILD/venv/bin/python tests/embed/make_tokenizer_parity.py BUILD/tokenizer_parity
    cmake --build BUILD --target dlrt_tokenizer_speed
    BUILD/venv/bin/python bench/tokenizer_speed.py BUILD [ROUNDS]

`tokenizers` is timed two ways: encode_batch with one Rayon thread (its Rust
loop, no Python per line) and encode() per line from Python. Not a test.
"""
import json
import os
import subprocess
import sys
import time

os.environ["RAYON_NUM_THREADS"] = "1"  # before tokenizers starts its pool
os.environ["TOKENIZERS_PARALLELISM"] = "false"

import tokenizers  # noqa: E402


def best_of(rounds, fn):
    best = float("inf")
    for _ in range(rounds):
        t0 = time.perf_counter()
        n = fn()
        best = min(best, time.perf_counter() - t0)
    return n, best


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    root = os.path.join(build, "tokenizer_parity")
    lines = json.load(open(os.path.join(root, "lines.txt"), encoding="utf-8"))
    exe = os.path.join(build, "dlrt_tokenizer_speed")
    print(f"{len(lines)} lines, {sum(len(x.encode()) for x in lines)} bytes; tokenizers {tokenizers.__version__}; "
          f"one thread; best of {rounds}")
    for name in sorted(os.listdir(root)):
        path = os.path.join(root, name, "tokenizer.json")
        if not os.path.exists(path):
            continue
        tok = tokenizers.Tokenizer.from_file(path)
        tok.no_truncation()
        n, batch = best_of(rounds, lambda: sum(len(e.ids) for e in tok.encode_batch(lines)))
        _, loop = best_of(rounds, lambda: sum(len(tok.encode(x).ids) for x in lines))
        out = subprocess.run([exe, path, os.path.join(root, "lines.txt"), str(rounds)], check=True,
                             capture_output=True, text=True).stdout.strip().splitlines()
        dlrt = out[1].split(", ")  # with offsets, as tokenizers computes them
        dlrt_tps = float(dlrt[3].split()[0])
        hf = n / min(batch, loop)
        print(f"{name:20s} tokens {n:7d}  tokenizers encode_batch {n / batch:10.0f} tok/s, encode() loop "
              f"{n / loop:10.0f} tok/s;  dlrt {dlrt_tps:10.0f} tok/s ({dlrt_tps / hf:.2f}x the faster)")


if __name__ == "__main__":
    main()
