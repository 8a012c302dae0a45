#!/usr/bin/env python3
"""Summarises a bench/compare_peers.sh results folder: dlrt against ONNX Runtime and OpenVINO.

  summarize_peers.py RESULTS_DIR [JSON_OUT]

Reads <case>_t<threads>_r<round>_{dlrt,base,ort,ov}.json (dlrt bench --json, ort_rss.py and ov_run.py
reports; base: a second dlrt binary, BASE_BIN), meta.json, fma.json (dlrt_fma_peak --json) and flops_<case>.json (flops.py). Per case
and thread count each figure is the median over rounds of that round's figure (latency: the
round's median run). Ratios are dlrt / peer (below 1: dlrt better); "best" is dlrt / min(ORT, OV).
"best round" is the same ratio from each runtime's fastest round instead of the median round: load
from outside (a shared host) only ever adds time, so where the two disagree a round was disturbed
(the table marks rows where they differ by more than 10%).
The peers' RSS is net of the Python interpreter and numpy (python_baseline_rss_mb).
Prints Markdown tables and writes RESULTS_DIR/summary.json (and JSON_OUT when given).
"""
import glob
import json
import math
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from summarize import fmt, load, med, ratio  # noqa: E402

PEERS = ("ort", "ov")


def geomean(xs):
    xs = [x for x in xs if x]
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else None


def set_of(case):
    """The set a case tag belongs to: unseen/<model>/<case> cases are tagged unseen_<model>_<case>,
    unseen2/<model>/<case> ones unseen2_<model>_<case>, unseen3/... ones unseen3_..."""
    for st in ("unseen3", "unseen2", "unseen"):
        if case.startswith(st + "_"):
            return st
    return "zoo"


def net_rss(rep):
    if rep.get("peak_rss_mb") is None:
        return None
    return rep["peak_rss_mb"] - rep.get("python_baseline_rss_mb", 0)


def main(argv):
    if len(argv) not in (1, 2):
        sys.exit(__doc__)
    d = argv[0]
    meta = load(os.path.join(d, "meta.json")) or {}
    fma = load(os.path.join(d, "fma.json")) or {}
    order = meta.get("cases", [])
    runs = {}
    for path in glob.glob(os.path.join(d, "*_t*_r*_*.json")):
        m = re.match(r"(.+)_t(\d+)_r(\d+)_(dlrt|base|ort|ov)\.json$", os.path.basename(path))
        if m:
            rep = load(path)
            if rep:
                runs.setdefault((m.group(1), int(m.group(2))), {}).setdefault(m.group(4), []).append(rep)
    rows = []
    for case, threads in sorted(runs, key=lambda k: (order.index(k[0]) if k[0] in order else 99, k[0], k[1])):
        r = runs[(case, threads)]
        row = {"case": case, "threads": threads}
        for who in ("dlrt", "base") + PEERS:
            reps = r.get(who, [])
            row[f"{who}_rounds"] = len(reps)
            row[f"{who}_round_medians_ms"] = [x["latency_ms"]["median"] for x in reps]
            row[f"{who}_ms"] = med(row[f"{who}_round_medians_ms"])
            row[f"{who}_create_ms"] = med([x.get("session_create_ms") for x in reps])
            row[f"{who}_rss_mb"] = med([(x.get("peak_rss_mb") if who in ("dlrt", "base") else net_rss(x)) for x in reps])
            if who in ("dlrt", "base"):
                # The vector ISA of the CPU partitions, as the run report names it (each round's).
                isas = {p.get("vector_isa") for x in reps for p in x.get("report", []) if p.get("vector_isa")}
                row[f"{who}_vector_isa"] = "/".join(sorted(isas)) or None
        peers_ms = [row[f"{p}_ms"] for p in PEERS if row[f"{p}_ms"]]
        row["best_peer_ms"] = min(peers_ms) if peers_ms else None
        fastest = {who: min(row[f"{who}_round_medians_ms"]) if row[f"{who}_round_medians_ms"] else None
                   for who in ("dlrt",) + PEERS}
        peers_fastest = [fastest[p] for p in PEERS if fastest[p]]
        row["ratio_best_peer_best_round"] = ratio(fastest["dlrt"], min(peers_fastest) if peers_fastest else None)
        for p in PEERS + ("best_peer",):
            row[f"ratio_{p}"] = ratio(row["dlrt_ms"], row[f"{p}_ms"])
        row["base_ratio_best_peer"] = ratio(row["base_ms"], row["best_peer_ms"])
        row["ratio_base"] = ratio(row["dlrt_ms"], row["base_ms"])
        for p in PEERS:
            row[f"create_ratio_{p}"] = ratio(row["dlrt_create_ms"], row[f"{p}_create_ms"])
            row[f"rss_ratio_{p}"] = ratio(row["dlrt_rss_mb"], row[f"{p}_rss_mb"])
        fl = load(os.path.join(d, f"flops_{case}.json"))
        peak = fma.get("gflops_1_thread") if threads == 1 else (
            fma.get("gflops_n_threads") if threads == fma.get("threads") else None)
        if fl and fl.get("flop") and row["dlrt_ms"]:
            row["gflop"] = fl["flop"] / 1e9
            row["dlrt_gflops"] = row["gflop"] / (row["dlrt_ms"] / 1e3)
            if peak:
                row["dlrt_peak_share_pct"] = 100 * row["dlrt_gflops"] / peak
        rows.append(row)

    has_base = any(r["base_ms"] for r in rows)
    out = ["| case | threads | dlrt ms | ORT ms | OV ms | /ORT | /OV | **/min** | best round /min "
           "| create ms dlrt / ORT / OV "
           "| peak RSS MiB dlrt / ORT / OV | dlrt GFLOP/s (% FMA peak) |" +
           (" before ms | before /min | dlrt / before |" if has_base else ""),
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|" + ("---:|---:|---:|" if has_base else "")]
    for r in rows:
        before = (f" {fmt(r['base_ms'])} | {fmt(r['base_ratio_best_peer'])} | {fmt(r['ratio_base'])} |"
                  if has_base else "")
        share = ""
        if r.get("dlrt_gflops"):
            share = f"{fmt(r['dlrt_gflops'], 1)}"
            if r.get("dlrt_peak_share_pct") is not None:
                share += f" ({fmt(r['dlrt_peak_share_pct'], 0)}%)"
        a, b = r["ratio_best_peer"], r["ratio_best_peer_best_round"]
        disturbed = " (disturbed)" if a and b and max(a, b) / min(a, b) > 1.10 else ""
        out.append(f"| {r['case']} | {r['threads']} | {fmt(r['dlrt_ms'])} | {fmt(r['ort_ms'])} | {fmt(r['ov_ms'])} | "
                   f"{fmt(r['ratio_ort'])} | {fmt(r['ratio_ov'])} | **{fmt(r['ratio_best_peer'])}** | "
                   f"{fmt(b)}{disturbed} | "
                   f"{fmt(r['dlrt_create_ms'], 0)} / {fmt(r['ort_create_ms'], 0)} / {fmt(r['ov_create_ms'], 0)} | "
                   f"{fmt(r['dlrt_rss_mb'], 0)} / {fmt(r['ort_rss_mb'], 0)} / {fmt(r['ov_rss_mb'], 0)} | {share} |" + before)
    out.append("")
    out.append("| threads (set/threads) | cases | geomean /ORT | /OV | **/min(ORT, OV)** | best round /min "
               "| cases <= 1.00 vs min | cases > 1.05 vs min | create /ORT | /OV | RSS /ORT | /OV |" +
               (" before /min | dlrt / before |" if has_base else ""))
    out.append("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|" + ("---:|---:|" if has_base else ""))
    geo = {}
    sets = sorted({set_of(r["case"]) for r in rows})
    groups = [(str(t), None, t) for t in sorted({r["threads"] for r in rows}) + ["all"]]
    if len(sets) > 1:  # the same per set: "zoo/1", "unseen/2", ...
        groups += [(f"{st}/{t}", st, t) for st in sets for t in sorted({r["threads"] for r in rows})]
    for key, st, t in groups:
        sel = [r for r in rows if (t == "all" or r["threads"] == t) and (st is None or set_of(r["case"]) == st)]
        g = {k: geomean([r[k] for r in sel]) for k in
             ("ratio_ort", "ratio_ov", "ratio_best_peer", "ratio_best_peer_best_round", "create_ratio_ort", "create_ratio_ov",
              "rss_ratio_ort", "rss_ratio_ov", "base_ratio_best_peer", "ratio_base")}
        g["cases"] = len(sel)
        g["cases_at_most_1"] = sum(1 for r in sel if r["ratio_best_peer"] and r["ratio_best_peer"] <= 1.0)
        g["cases_above_1_05"] = sum(1 for r in sel if r["ratio_best_peer"] and r["ratio_best_peer"] > 1.05)
        geo[key] = g
        out.append(f"| {key} | {g['cases']} | {fmt(g['ratio_ort'])} | {fmt(g['ratio_ov'])} | "
                   f"**{fmt(g['ratio_best_peer'])}** | {fmt(g['ratio_best_peer_best_round'])} | "
                   f"{g['cases_at_most_1']}/{g['cases']} | {g['cases_above_1_05']} | "
                   f"{fmt(g['create_ratio_ort'])} | {fmt(g['create_ratio_ov'])} | {fmt(g['rss_ratio_ort'])} | "
                   f"{fmt(g['rss_ratio_ov'])} |" +
                   (f" {fmt(g['base_ratio_best_peer'])} | {fmt(g['ratio_base'])} |" if has_base else ""))
    out.append("")
    if fma:
        out.append(f"fp32 FMA peak (dlrt_fma_peak, {fma.get('isa')}): {fmt(fma.get('gflops_1_thread'), 1)} GFLOP/s "
                   f"on 1 thread, {fmt(fma.get('gflops_n_threads'), 1)} on {fma.get('threads')}; "
                   "GFLOP per run from bench/flops.py (Conv/ConvTranspose/MatMul/Gemm).")
    isas = sorted({r["dlrt_vector_isa"] for r in rows if r.get("dlrt_vector_isa")})
    cap = meta.get("dlrt_cpu_isa_cap")
    out.append(f"dlrt's CPU kernels ran with {', '.join(isas) or 'an unreported'} vectors"
               f"{f' (DLRT_CPU_ISA={cap}; the FMA peak above is measured at the same width)' if cap else ''}.")
    if has_base:
        out.append(f"before: {meta.get('base_label') or meta.get('base_binary')}, timed in the same rotation.")
    ident = meta.get("cpu_id") or {}
    cache = ", ".join(f"{k} {v['size']}" for k, v in sorted((meta.get("caches") or {}).items()))
    out.append(f"Machine: {meta.get('cpu')} ({ident.get('vendor_id', '?')} family {ident.get('cpu family', '?')} "
               f"model {ident.get('model', '?')} stepping {ident.get('stepping', '?')}; caches per CPU 0: "
               f"{cache or 'unknown'}; ISA flags: {' '.join(meta.get('isa_flags', []))}), {meta.get('cores')} cores; dlrt {meta.get('dlrt_label') or meta.get('commit')}, "
               f"onnxruntime {meta.get('ort_version')}, openvino {meta.get('ov_version')}; "
               f"{meta.get('rounds')} alternating rounds, {meta.get('date_utc')} UTC.")
    text = "\n".join(out)
    print(text)
    summary = {"meta": meta, "fma": fma, "rows": rows, "geomean": geo}
    targets = [os.path.join(d, "summary.json")] + argv[1:]
    for path in targets:
        with open(path, "w") as f:
            json.dump(summary, f, indent=1)
    with open(os.path.join(d, "summary.md"), "w") as f:
        f.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
