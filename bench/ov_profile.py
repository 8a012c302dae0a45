#!/usr/bin/env python3
"""Per-layer times of OpenVINO's CPU plugin next to dlrt's, for finding the layers a peer runs faster.

  ov_profile.py --model M.onnx [NAME=FILE.npy ...] [--threads N] [--iters N] [--warmup N]
                [--top N] [--dlrt-json FILE] [--json FILE]

OpenVINO compiles the model as bench/ov_run.py does (inputs reshaped to the feeds' shapes,
INFERENCE_PRECISION_HINT=f32, PERFORMANCE_HINT=LATENCY, INFERENCE_NUM_THREADS=N) with
PERF_COUNT=YES, runs it --warmup + --iters times and averages each executed node's real_time
from InferRequest.get_profiling_info() over the timed runs. Every executed node is listed with
its layer type, the primitive that ran it (exec type: brgconv_avx512_f32, jit_avx512_f32, ...),
its first output shape and the ONNX nodes it was made from (the runtime model's
originalLayersNames: OpenVINO fuses BatchNorm, activations and Adds into a conv and names the
result after one of them).

--dlrt-json takes the report of `dlrt bench MODEL ... --profile --json` (the slowest nodes, by
ONNX node name; dlrt suffixes fused nodes with _fused) and prints each of those nodes with the
OpenVINO nodes whose original layers include it, their time and primitive, so the two
runtimes' costs of the same layer sit on one line. Times are of one run each, on whatever
else the machine runs: compare runs made in the same minute.

Run it with the OpenVINO venv that scripts/setup_venv.sh makes (VENVS/venv-openvino-<version>).
"""
import argparse
import collections
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from feeds import load_feeds, take_bare_inputs  # noqa: E402


def parse_args(argv):
    p = argparse.ArgumentParser(description="OpenVINO per-layer CPU profile")
    p.add_argument("--model", "-m", required=True)
    p.add_argument("--input", "-i", action="append", default=[], help="NAME=FILE.npy (also positional)")
    p.add_argument("--threads", "-t", type=int, default=1)
    p.add_argument("--iters", "-n", type=int, default=20)
    p.add_argument("--warmup", "-w", type=int, default=5)
    p.add_argument("--top", type=int, default=30, help="nodes printed, slowest first")
    p.add_argument("--dlrt-json", help="`dlrt bench --profile --json` report to join by ONNX node name")
    p.add_argument("--json", help="write every node's row here")
    args, rest = p.parse_known_args(argv)
    take_bare_inputs(p, args, rest)
    if args.iters < 1 or args.warmup < 0 or args.threads < 1:
        p.error("--iters and --threads must be >= 1, --warmup >= 0")
    return args


def rt_str(info, key):
    return info[key].astype(str) if key in info else ""


def profile(a, feeds):
    import openvino as ov

    core = ov.Core()
    model = core.read_model(a.model)
    if feeds:
        model.reshape({name: list(v.shape) for name, v in feeds.items()})
    compiled = core.compile_model(model, "CPU", {
        "INFERENCE_PRECISION_HINT": "f32", "PERFORMANCE_HINT": "LATENCY",
        "INFERENCE_NUM_THREADS": a.threads, "PERF_COUNT": True})
    request = compiled.create_infer_request()
    for _ in range(a.warmup):
        request.infer(feeds)
    ms = collections.defaultdict(float)
    for _ in range(a.iters):
        request.infer(feeds)
        for p in request.get_profiling_info():
            ms[p.node_name] += p.real_time.total_seconds() * 1e3 / a.iters
    rows = []
    for op in compiled.get_runtime_model().get_ordered_ops():
        info = op.get_rt_info()
        name = op.get_friendly_name()
        if name not in ms:
            continue
        shape = str(op.get_output_partial_shape(0)) if op.get_output_size() else ""
        rows.append({"ms": ms[name], "name": name, "layer_type": rt_str(info, "layerType"),
                     "primitive": rt_str(info, "primitiveType"), "shape": shape,
                     "original": [s for s in rt_str(info, "originalLayersNames").split(",") if s]})
    rows.sort(key=lambda r: -r["ms"])
    return rows


def main(argv):
    a = parse_args(argv)
    feeds = load_feeds(a.input)
    rows = profile(a, feeds)
    total = sum(r["ms"] for r in rows)
    print(f"OpenVINO, {a.threads} thread(s), mean of {a.iters} runs: {total:.3f} ms in {len(rows)} nodes")
    for r in rows[:a.top]:
        orig = ",".join(r["original"])
        print(f"{r['ms']:8.3f} {100 * r['ms'] / total:5.1f}%  {r['layer_type']:16s} {r['primitive']:26s} "
              f"{r['shape']:22s} {orig[:80]}")
    if a.dlrt_json:
        with open(a.dlrt_json) as f:
            prof = json.load(f).get("profile")
        if not prof:
            sys.exit(f"ov_profile: {a.dlrt_json} has no profile (run dlrt bench with --profile --json)")
        by_layer = collections.defaultdict(list)
        for r in rows:
            for o in set(o.split("/")[0] for o in r["original"]):  # p2o.Conv.33/WithoutBiases
                by_layer[o].append(r)
        print(f"\ndlrt's slowest nodes ({prof['total_ms']:.3f} ms in nodes) and the OpenVINO nodes made from them:")
        print(f"{'dlrt node':34s} {'dlrt ms':>8s} {'OV ms':>8s}  OV node / primitive")
        for n in prof["nodes"]:
            base = n["name"][:-len("_fused")] if n["name"].endswith("_fused") else n["name"]
            hits = by_layer.get(base, [])
            ov_ms = sum(h["ms"] for h in hits)
            what = "; ".join(f"{h['name']} {h['primitive']}" for h in hits) or "(not among the original layers of any node: fused under another name or folded)"
            print(f"{n['name'][:34]:34s} {n['ms']:8.3f} {ov_ms:8.3f}  {what[:90]}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"model": a.model, "threads": a.threads, "iters": a.iters, "total_ms": total, "nodes": rows},
                      f, indent=1)


if __name__ == "__main__":
    main(sys.argv[1:])
