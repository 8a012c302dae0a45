"""Per-call overhead of dlrt's Python API over the C++ figure, and dlrt vs ONNX Runtime from Python.

    python_overhead.py --cli build/dlrt [--zoo DIR] [--rounds 7] [--seconds 1.0] [--out FILE]

At 1 thread on the CPU, for each model (zoo mobilenet_v2 b1, minilm_l6 b1s16; plus, when
--tiny is given, a tiny MLP that shows the fixed per-call cost in microseconds):
  cpp      the median latency of `dlrt bench MODEL --threads 1 --device cpu --json` (its own
           process, inputs from the zoo's .npy files with --input),
  dlrt-py  the median latency of dlrt.Session(MODEL, device="cpu", threads=1).run(feeds),
  ort-py   the median latency of onnxruntime.InferenceSession(MODEL, intra_op_num_threads=1,
           inter_op_num_threads=1, CPUExecutionProvider).run(None, feeds),
each taking the same arrays (np.load of the zoo case), all outputs returned. The three run
in turn, `--rounds` times, their order rotated every round (a noisy shared machine slows
whatever runs at that moment; rotation spreads it). Per round: each one's median over about
`--seconds` of back-to-back runs. Reported: the median over rounds of those medians, the
overhead (dlrt-py - cpp) / cpp from them, the median of the per-round overheads, and the
ratio dlrt-py / ort-py. Also the CPU time per run of each (process CPU time over the timed
runs; for `dlrt bench`, its process's CPU time less that of a one-iteration run), which a
loaded machine disturbs less than wall time. JSON (machine, date, versions, every round) to --out.
"""
import argparse
import datetime
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time

import numpy as np

CASES = [("mobilenet_v2", "b1"), ("minilm_l6", "b1s16")]
ISA_FLAGS = ["sse4_2", "avx", "avx2", "fma", "avx512f", "avx512bw", "avx512_vnni", "avx512_bf16", "avx512_fp16",
             "amx_tile", "amx_bf16", "amx_int8"]


def machine():
    name, flags = "unknown", set()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                k, _, v = line.partition(":")
                if k.strip() == "model name" and name == "unknown":
                    name = v.strip()
                elif k.strip() == "flags" and not flags:
                    flags = set(v.split())
    except OSError:
        pass
    try:
        load = " ".join(open("/proc/loadavg").read().split()[:3])
    except OSError:
        load = ""
    return {"cpu": name, "isa": [f for f in ISA_FLAGS if f in flags], "cores": os.cpu_count(),
            "loadavg_at_start": load, "python": platform.python_version(), "platform": platform.platform()}


def children_cpu_s():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def cpp_bench(cli, model, inputs, iterations):
    """(median wall ms, CPU seconds of the whole `dlrt bench` process)."""
    cmd = [cli, "bench", model, "--device", "cpu", "--threads", "1", "--json", "--warmup", "3",
           "--iterations", str(iterations)]
    for name, path in inputs.items():
        cmd += ["--input", f"{name}={path}"]
    before = children_cpu_s()
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out)["latency_ms"]["median"], children_cpu_s() - before


def py_bench(run, iterations, warmup=3):
    """(median wall ms, mean CPU ms per run: process CPU time over the timed loop)."""
    for _ in range(warmup):
        run()
    times = []
    clock = time.perf_counter_ns
    cpu0 = time.process_time_ns()
    for _ in range(iterations):
        t = clock()
        run()
        times.append(clock() - t)
    cpu = (time.process_time_ns() - cpu0) / 1e6 / iterations
    return statistics.median(times) / 1e6, cpu


def bench_model(label, model, input_files, args, dlrt, ort):
    feeds = {name: np.load(path) for name, path in input_files.items()}
    sess = dlrt.Session(model, device="cpu", threads=1)
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    osess = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
    ofeeds = {i.name: feeds[i.name] for i in osess.get_inputs()}

    # Same outputs, so both compute the same thing.
    a = sess.run(feeds)
    b = osess.run(None, ofeeds)
    for x, y in zip(a, b):
        np.testing.assert_allclose(x, y, rtol=1e-3, atol=1e-4)

    # Iterations per round: about --seconds of runs (from a calibration run of dlrt-py).
    one = py_bench(lambda: sess.run(feeds), 5, warmup=2)[0]
    iterations = max(20, min(20000, int(args.seconds * 1000 / max(one, 1e-3))))
    # CPU time per run of the C++ bench: its process's CPU time with N runs less that with
    # one (session creates, warm-up, the report run: the same in both), over N - 1; the
    # one-run baseline is the least of three. CPU time does not count the time the process
    # waits for a core, so it is steadier than wall time on a loaded machine.
    base = min(cpp_bench(args.cli, model, input_files, 1)[1] for _ in range(3))
    runners = {
        "cpp": lambda: cpp_bench(args.cli, model, input_files, iterations),
        "dlrt_py": lambda: py_bench(lambda: sess.run(feeds), iterations),
        "ort_py": lambda: py_bench(lambda: osess.run(None, ofeeds), iterations),
    }
    order = list(runners)
    rounds = {k: [] for k in runners}
    cpu = {k: [] for k in runners}
    for r in range(args.rounds):
        turn = order[r % 3:] + order[:r % 3]
        for k in turn:
            wall, c = runners[k]()
            if k == "cpp":
                c = (c - base) * 1000 / (iterations - 1)
            rounds[k].append(wall)
            cpu[k].append(c)
        print(f"  {label} round {r + 1}/{args.rounds}: " +
              "  ".join(f"{k} {rounds[k][-1]:.4f} ms (cpu {cpu[k][-1]:.4f})" for k in order), flush=True)
    med = {k: statistics.median(v) for k, v in rounds.items()}
    cmed = {k: statistics.median(v) for k, v in cpu.items()}
    per_round = [(p - c) / c for p, c in zip(rounds["dlrt_py"], rounds["cpp"])]
    row = {
        "model": label,
        "file": model,
        "inputs": {n: [list(feeds[n].shape), str(feeds[n].dtype)] for n in feeds},
        "threads": 1,
        "iterations_per_round": iterations,
        "rounds": args.rounds,
        "cpp_median_ms": med["cpp"],
        "dlrt_py_median_ms": med["dlrt_py"],
        "ort_py_median_ms": med["ort_py"],
        "overhead_pct": 100 * (med["dlrt_py"] - med["cpp"]) / med["cpp"],
        "overhead_pct_median_of_rounds": 100 * statistics.median(per_round),
        "overhead_us": 1000 * (med["dlrt_py"] - med["cpp"]),
        "dlrt_py_over_ort_py": med["dlrt_py"] / med["ort_py"],
        "cpu_ms_per_run": cmed,
        "cpu_overhead_pct": 100 * (cmed["dlrt_py"] - cmed["cpp"]) / cmed["cpp"],
        "cpu_dlrt_py_over_ort_py": cmed["dlrt_py"] / cmed["ort_py"],
        "round_medians_ms": rounds,
        "round_cpu_ms_per_run": cpu,
        "cpp_baseline_cpu_s": base,
    }
    print(f"{label}: cpp {med['cpp']:.4f} ms, dlrt-py {med['dlrt_py']:.4f} ms, ort-py {med['ort_py']:.4f} ms; "
          f"overhead {row['overhead_pct']:+.2f}% ({row['overhead_us']:+.1f} us; median of rounds "
          f"{row['overhead_pct_median_of_rounds']:+.2f}%), dlrt-py / ort-py {row['dlrt_py_over_ort_py']:.3f}; "
          f"CPU per run: cpp {cmed['cpp']:.4f}, dlrt-py {cmed['dlrt_py']:.4f}, ort-py {cmed['ort_py']:.4f} ms, "
          f"overhead {row['cpu_overhead_pct']:+.2f}%", flush=True)
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cli", required=True, help="the dlrt executable (dlrt bench)")
    ap.add_argument("--zoo", default=os.environ.get("DLRT_ZOO_DIR", ""))
    ap.add_argument("--tiny", help="a tiny model and its input as MODEL:NAME=FILE.npy (the per-call floor)")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--seconds", type=float, default=1.0, help="per runtime per round")
    ap.add_argument("--only", help="comma-separated model labels to run")
    ap.add_argument("--out", help="the JSON file to write")
    args = ap.parse_args()

    import dlrt
    import onnxruntime as ort

    ort.set_default_logger_severity(3)
    meta = machine()
    meta.update({
        "date_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M"),
        "dlrt": dlrt.__version__, "dlrt_module": dlrt._dlrt.__file__, "dlrt_cli": os.path.abspath(args.cli),
        "onnxruntime": ort.__version__, "numpy": np.__version__, "rounds": args.rounds,
        "seconds_per_round": args.seconds,
    })
    print(f"{meta['cpu']} ({meta['cores']} cores; {' '.join(meta['isa'])}), load {meta['loadavg_at_start']}; "
          f"dlrt {meta['dlrt']}, onnxruntime {meta['onnxruntime']}, numpy {meta['numpy']}, python {meta['python']}")

    work = []
    if args.zoo:
        with open(os.path.join(args.zoo, "manifest.json")) as f:
            manifest = json.load(f)["models"]
        for model, case in CASES:
            m = manifest[model]
            label = model if model != "minilm_l6" else "minilm_l6_s16"
            inputs = {n: os.path.join(args.zoo, p) for n, p in m["cases"][case]["inputs"].items()}
            work.append((label, os.path.join(args.zoo, m.get("file", model + ".onnx")), inputs))
    if args.tiny:
        model, _, spec = args.tiny.partition(":")
        name, _, path = spec.partition("=")
        work.append(("tiny_" + os.path.splitext(os.path.basename(model))[0], model, {name: path}))
    if args.only:
        keep = set(args.only.split(","))
        work = [w for w in work if w[0] in keep]
    if not work:
        sys.exit("nothing to run: give --zoo (or DLRT_ZOO_DIR) and/or --tiny")

    rows = [bench_model(label, model, inputs, args, dlrt, ort) for label, model, inputs in work]
    print()
    print("median wall time per run (ms); CPU: mean CPU time per run, overhead and dlrt/ort from it")
    print(f"{'model':<16} {'cpp':>9} {'dlrt-py':>9} {'ort-py':>9} {'overhead':>9} {'us/call':>8} "
          f"{'dlrt/ort':>9} | {'CPU ovh':>8} {'dlrt/ort':>9}")
    for r in rows:
        print(f"{r['model']:<16} {r['cpp_median_ms']:>9.4f} {r['dlrt_py_median_ms']:>9.4f} "
              f"{r['ort_py_median_ms']:>9.4f} {r['overhead_pct']:>+8.2f}% {r['overhead_us']:>+8.1f} "
              f"{r['dlrt_py_over_ort_py']:>9.3f} | {r['cpu_overhead_pct']:>+7.2f}% {r['cpu_dlrt_py_over_ort_py']:>9.3f}")
    if args.out:
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        with open(args.out, "w") as f:
            json.dump({"meta": meta, "rows": rows}, f, indent=1)
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
