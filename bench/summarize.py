#!/usr/bin/env python3
"""Summarises a bench/compare_ort.sh results folder as a Markdown table.

  summarize.py RESULTS_DIR     (prints the tables; writes RESULTS_DIR/summary.json)

Reads <case>_t<threads>_r<round>_{dlrt,ort}.json (dlrt bench --json and ort_rss.py reports),
fma.json and fma_end.json (dlrt_fma_peak --json, before and after the rounds), flops_<case>.json (flops.py) and meta.json.
Per case and thread count, each figure is the median over rounds of that round's figure
(latency: the round's median run). Ratios are dlrt / ORT (below 1: dlrt better). ORT's
RSS is reported net of the Python interpreter and numpy (python_baseline_rss_mb).
"""
import glob
import json
import math
import os
import re
import statistics
import sys

ORDER = ["minilm_b1s128", "minilm_b8s128", "minilm_b1s16", "resnet18", "mobilenet_v2", "tiny_vit"]
LABEL = {
    "minilm_b1s128": "minilm_l6 b1 s128", "minilm_b8s128": "minilm_l6 b8 s128",
    "minilm_b1s16": "minilm_l6 b1 s16", "resnet18": "resnet18", "mobilenet_v2": "mobilenet_v2",
    "tiny_vit": "tiny_vit",
}


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def fmt(x, digits=2):
    return "n/a" if x is None else f"{x:.{digits}f}"


def ratio(a, b):
    return a / b if a is not None and b else None


def main(argv):
    if len(argv) != 1:
        sys.exit(__doc__)
    d = argv[0]
    meta = load(os.path.join(d, "meta.json")) or {}
    fma = load(os.path.join(d, "fma.json")) or {}
    fma_end = load(os.path.join(d, "fma_end.json")) or {}
    runs = {}
    for path in glob.glob(os.path.join(d, "*_t*_r*_*.json")):
        m = re.match(r"(.+)_t(\d+)_r(\d+)_(dlrt|ort)\.json$", os.path.basename(path))
        if not m:
            continue
        case, threads, rnd, who = m.group(1), int(m.group(2)), int(m.group(3)), m.group(4)
        runs.setdefault((case, threads), {}).setdefault(who, []).append(load(path))
    rows = []
    for (case, threads) in sorted(runs, key=lambda k: (ORDER.index(k[0]) if k[0] in ORDER else 99, k[1])):
        r = runs[(case, threads)]
        dl = [x for x in r.get("dlrt", []) if x]
        ot = [x for x in r.get("ort", []) if x]
        row = {
            "case": case, "threads": threads, "rounds_dlrt": len(dl), "rounds_ort": len(ot),
            "iterations": (dl or ot or [{}])[0].get("iterations"),
            "dlrt_median_ms": med([x["latency_ms"]["median"] for x in dl]),
            "ort_median_ms": med([x["latency_ms"]["median"] for x in ot]),
            "dlrt_round_medians_ms": [x["latency_ms"]["median"] for x in dl],
            "ort_round_medians_ms": [x["latency_ms"]["median"] for x in ot],
            "dlrt_create_ms": med([x.get("session_create_ms") for x in dl]),
            "dlrt_create_warm_ms": med([x.get("session_create_warm_ms") for x in dl]),
            "ort_create_ms": med([x.get("session_create_ms") for x in ot]),
            "dlrt_rss_mb": med([x.get("peak_rss_mb") for x in dl]),
            "ort_rss_mb": med([x.get("peak_rss_mb") for x in ot]),
            "ort_rss_net_mb": med([x["peak_rss_mb"] - x.get("python_baseline_rss_mb", 0) for x in ot
                                   if x.get("peak_rss_mb") is not None]),
        }
        row["latency_ratio"] = ratio(row["dlrt_median_ms"], row["ort_median_ms"])
        row["create_ratio"] = ratio(row["dlrt_create_ms"], row["ort_create_ms"])
        row["rss_ratio"] = ratio(row["dlrt_rss_mb"], row["ort_rss_net_mb"])
        fl = load(os.path.join(d, f"flops_{case}.json"))
        if fl and fl.get("flop"):
            row["gflop"] = fl["flop"] / 1e9
            row["dlrt_gflops"] = row["gflop"] / (row["dlrt_median_ms"] / 1e3) if row["dlrt_median_ms"] else None
            row["ort_gflops"] = row["gflop"] / (row["ort_median_ms"] / 1e3) if row["ort_median_ms"] else None
        rows.append(row)

    out = []
    if meta.get("dlrt_precision", "f32") != "f32":
        out.append(f"dlrt CPU precision: {meta['dlrt_precision']} (ONNX Runtime: fp32).")
        out.append("")
    out.append("| model | threads | dlrt median ms | ORT median ms | ratio | create ms dlrt (warm) / ORT | create ratio "
               "| peak RSS MiB dlrt / ORT net (raw) | RSS ratio |")
    out.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        out.append(f"| {LABEL.get(r['case'], r['case'])} | {r['threads']} | {fmt(r['dlrt_median_ms'])} | "
                   f"{fmt(r['ort_median_ms'])} | **{fmt(r['latency_ratio'])}** | "
                   f"{fmt(r['dlrt_create_ms'], 0)} ({fmt(r['dlrt_create_warm_ms'], 0)}) / {fmt(r['ort_create_ms'], 0)} | "
                   f"{fmt(r['create_ratio'])} | {fmt(r['dlrt_rss_mb'], 0)} / {fmt(r['ort_rss_net_mb'], 0)} "
                   f"({fmt(r['ort_rss_mb'], 0)}) | {fmt(r['rss_ratio'])} |")
    lat = [r["latency_ratio"] for r in rows if r["latency_ratio"]]
    geo = math.exp(sum(math.log(x) for x in lat) / len(lat)) if lat else None
    out.append("")
    out.append(f"Geometric mean of the latency ratios: **{fmt(geo)}** over {len(lat)} cases "
               f"(target <= 0.90); cases with ratio <= 1.00: {sum(1 for x in lat if x <= 1.0)}/{len(lat)}.")
    crt = [r["create_ratio"] for r in rows if r["create_ratio"]]
    rss = [r["rss_ratio"] for r in rows if r["rss_ratio"]]
    if crt:
        out.append(f"Geometric mean of the session-create ratios: {fmt(math.exp(sum(map(math.log, crt)) / len(crt)))}; "
                   f"of the peak-RSS ratios: {fmt(math.exp(sum(map(math.log, rss)) / len(rss)) if rss else None)}.")
    out.append("")
    if fma:
        out.append(f"Peak fp32 FMA (bench/fma_peak.cpp, {fma.get('isa')}): "
                   f"{fmt(fma.get('gflops_1_thread'), 1)} GFLOP/s on 1 thread, "
                   f"{fmt(fma.get('gflops_n_threads'), 1)} GFLOP/s on {fma.get('threads')} threads.")
        t1, tn = fma.get("tile_gflops_1_thread"), fma.get("tile_gflops_n_threads")
        p1, pn = fma.get("gflops_1_thread"), fma.get("gflops_n_threads")
        if t1 and tn and p1 and pn:
            out.append(f"The same FMAs fed by the GEMM tile's loads from L1 ({fma.get('tile_loads')}): "
                       f"{fmt(t1, 1)} GFLOP/s on 1 thread ({fmt(100 * t1 / p1, 0)}% of the peak), "
                       f"{fmt(tn, 1)} on {fma.get('threads')} ({fmt(100 * tn / pn, 0)}%): the most a GEMM "
                       "kernel of that shape reaches here; on a shared host it moves with the machine's state.")
        e1, et1 = fma_end.get("gflops_1_thread"), fma_end.get("tile_gflops_1_thread")
        en, etn = fma_end.get("gflops_n_threads"), fma_end.get("tile_gflops_n_threads")
        if e1 and et1 and en and etn:
            out.append(f"Measured again after the rounds: peak {fmt(e1, 1)} / {fmt(en, 1)} GFLOP/s, the tile's loads "
                       f"{fmt(100 * et1 / e1, 0)}% / {fmt(100 * etn / en, 0)}% of it (1 / {fma_end.get('threads')} "
                       "threads; the shares of peak below use the first figures).")
        out.append("")
    fl_rows = [r for r in rows if r.get("gflop")]
    if fl_rows:
        out.append("| model | threads | GFLOP per run | dlrt GFLOP/s (% of peak) | ORT GFLOP/s (% of peak) |")
        out.append("|---|---:|---:|---:|---:|")
        for r in fl_rows:
            peak = None
            if fma:
                peak = fma.get("gflops_1_thread") if r["threads"] == 1 else (
                    fma.get("gflops_n_threads") if r["threads"] == fma.get("threads") else None)

            def pct(g):
                return f"{fmt(g, 1)} ({fmt(100 * g / peak, 0)}%)" if g and peak else fmt(g, 1)
            out.append(f"| {LABEL.get(r['case'], r['case'])} | {r['threads']} | {fmt(r['gflop'], 3)} | "
                       f"{pct(r.get('dlrt_gflops'))} | {pct(r.get('ort_gflops'))} |")
        out.append("")
        out.append("GFLOP per run: Conv/ConvTranspose/MatMul/Gemm multiply-adds x 2 at the benchmark shapes "
                   "(bench/flops.py); peak: the 1-thread figure for 1 thread, the N-thread figure for N.")
    text = "\n".join(out)
    print(text)
    with open(os.path.join(d, "summary.json"), "w") as f:
        json.dump({"meta": meta, "fma": fma, "rows": rows, "geomean_latency_ratio": geo}, f, indent=1)
    with open(os.path.join(d, "summary.md"), "w") as f:
        f.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
