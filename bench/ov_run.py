#!/usr/bin/env python3
"""OpenVINO CPU peer for bench/compare_peers.sh: the same command line and JSON report as
../shared/peers/ort/ort_run.py (plus the peak RSS that bench/ort_rss.py adds), with the
OpenVINO Python package (pip install openvino; scripts/setup_venv.sh installs it).

  ov_run.py --model M.onnx [NAME=FILE.npy ...] [--threads N] [--iters N] [--warmup N]
            [--dynamic] [--quiet]

The model is read from the .onnx file and compiled for the CPU plugin with
INFERENCE_PRECISION_HINT=f32, PERFORMANCE_HINT=LATENCY and INFERENCE_NUM_THREADS=N. Unless
--dynamic is given, its inputs are first reshaped to the shapes of the feeds (a static model:
how OpenVINO is usually deployed, and its faster path). session_create_ms covers read, reshape
and compile. Each timed run is one synchronous infer() on one infer request, inputs shared
with numpy (no copy), outputs copied out, as ort_run.py's session.run returns them.

Extra keys: peak_rss_mb (getrusage ru_maxrss of this process, MiB) and python_baseline_rss_mb
(resident memory after Python and numpy, before openvino is imported).
"""
import argparse
import json
import os
import resource
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from feeds import load_feeds, take_bare_inputs  # noqa: E402
from ort_rss import rss_now_mb  # noqa: E402  (resident memory now, MiB)


def parse_args(argv):
    p = argparse.ArgumentParser(description="OpenVINO CPU latency")
    p.add_argument("--model", "-m", required=True)
    p.add_argument("--input", "-i", action="append", default=[])
    p.add_argument("--threads", "-t", type=int, default=1)
    p.add_argument("--iters", "-n", type=int, default=20)
    p.add_argument("--warmup", "-w", type=int, default=3)
    p.add_argument("--dynamic", action="store_true", help="keep the model's dynamic input shapes")
    p.add_argument("--quiet", "-q", action="store_true")
    args, rest = p.parse_known_args(argv)
    take_bare_inputs(p, args, rest)
    return args


def main(argv):
    baseline = rss_now_mb()
    a = parse_args(argv)
    feeds = load_feeds(a.input)

    import openvino as ov

    config = {"INFERENCE_PRECISION_HINT": "f32", "PERFORMANCE_HINT": "LATENCY",
              "INFERENCE_NUM_THREADS": a.threads}
    t0 = time.perf_counter()
    core = ov.Core()
    model = core.read_model(a.model)
    names = [p.get_any_name() for p in model.inputs]
    missing = [n for n in names if n not in feeds]
    if missing:
        sys.exit(f"missing inputs: {', '.join(missing)}")
    if not a.dynamic:
        model.reshape({n: ov.PartialShape(list(feeds[n].shape)) for n in names})
    compiled = core.compile_model(model, "CPU", config)
    request = compiled.create_infer_request()
    create_ms = (time.perf_counter() - t0) * 1e3

    def run():
        request.infer(feeds, share_inputs=True)
        return [request.get_output_tensor(i).data.copy() for i in range(len(compiled.outputs))]

    t0 = time.perf_counter()
    run()
    first_ms = (time.perf_counter() - t0) * 1e3
    for _ in range(max(0, a.warmup - 1)):
        run()
    lat = []
    for _ in range(a.iters):
        t0 = time.perf_counter()
        run()
        lat.append((time.perf_counter() - t0) * 1e3)
    lat_sorted = sorted(lat)
    rep = {
        "model": a.model, "openvino_version": ov.get_version(), "device": "CPU",
        "config": {k: str(v) for k, v in config.items()}, "static_shapes": not a.dynamic,
        "nthreads_used": str(compiled.get_property("INFERENCE_NUM_THREADS")),
        "iterations": a.iters, "warmup": a.warmup,
        "session_create_ms": round(create_ms, 3), "first_run_ms": round(first_ms, 3),
        "latency_ms": {
            "min": lat_sorted[0] if lat else None,
            "median": statistics.median(lat) if lat else None,
            "mean": statistics.fmean(lat) if lat else None,
            "p90": lat_sorted[min(len(lat) - 1, int(0.9 * len(lat)))] if lat else None,
            "max": lat_sorted[-1] if lat else None,
            "n": len(lat),
        },
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
        "python_baseline_rss_mb": baseline,
    }
    print(json.dumps(rep, indent=None if a.quiet else 1))


if __name__ == "__main__":
    main(sys.argv[1:])
