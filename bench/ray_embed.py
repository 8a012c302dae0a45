"""Ray Data batch embedding (python -m dlrt.ray.embed) against single-process embedding on the
same corpus and the same cores: texts/s of each, the ratios (issue 40's target: >= 85%) and
where the time goes.

    PYTHONPATH=build/python build/python-venv/venv/bin/python bench/ray_embed.py \\
        [--lines 20000,100000] [--configs 2x1,1x2] [--repeat 2] [--cpus 2] [--suffix NAME]

The model is the zoo's MiniLM (../shared/models/minilm_l6.onnx, $DLRT_ZOO_DIR) with
../shared/data's BERT vocabulary, assembled into a temporary folder (tests/embed/model_folder.py),
unless --model DIR. The corpus: --lines generated lines (tests/python/test_ray.py's make_texts)
with an id column, as Parquet (row groups of 2000) and as a .txt file.

Each repeat runs, in turn (the order flips every repeat, so that a neighbour's load falls on
both sides):
  cli       `dlrt embed --file corpus.txt --npy out.npy --threads CPUS` (build/dlrt, the
            single-process CLI the issue names), timed end to end (load, read, embed, write).
  embedder  one process: dlrt.Embedder(threads=CPUS), read the Parquet, encode, write Parquet
            (id, fixed_size_list<float32>), each phase timed; its steady state is the encode.
  ray AxT   python -m dlrt.ray.embed's main() (read Parquet, re-block to its rows per batch,
            A actors x T threads, write Parquet of id and embedding) on a local cluster of CPUS
            CPUs started for the run, twice: "fresh cluster", the first job after ray.init
            (ray.init itself timed apart; Ray's task workers and Ray Data's own actors start
            during the job), then "running cluster", the same job again (only the job's own
            actors start and load the model, as on a cluster that has run a job before).
            "end to end" is main()'s own clock: everything after ray.init.
            Each actor logs when it starts, loads the model and runs each batch, so the run
            splits into start-up (until the first batch starts), steady state (first batch
            start to last batch end) and tail (the last write). Ray Data's ds.stats() is not
            used: the per-actor log says the same per phase and costs nothing.
Single-process runs happen with no Ray cluster up. CPU seconds per process kind come from
/proc (sampled every second), and /proc/stat's totals give what other processes took
("others_cpu_s": a neighbour's compile, say). Writes bench/results/<date>_ray_embed_<suffix>.json
with the CPU name, date and load averages.
"""
import argparse
import contextlib
import datetime
import io
import json
import os
import platform
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "python"))
sys.path.insert(0, os.path.join(ROOT, "tests", "embed"))
HZ = os.sysconf("SC_CLK_TCK")


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def minilm_folder(tmp):
    from model_folder import make_minilm_folder

    zoo = os.environ.get("DLRT_ZOO_DIR") or os.path.join(os.path.dirname(ROOT), "shared", "models")
    return make_minilm_folder(zoo, os.path.join(tmp, "minilm"))


# --- CPU accounting from /proc ---------------------------------------------------------------

def _procs():
    """{pid: (ppid, name, cpu seconds)} for every process."""
    out = {}
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open(f"/proc/{p}/stat") as f:
                s = f.read()
            with open(f"/proc/{p}/cmdline", "rb") as f:
                cmd = f.read().split(b"\0")
        except OSError:
            continue
        head, rest = s.rsplit(")", 1)
        r = rest.split()
        comm = head.split("(", 1)[1]
        name = b" ".join(cmd).decode(errors="replace").strip() or comm
        out[int(p)] = (int(r[1]), name, (int(r[11]) + int(r[12])) / HZ)
    return out


def _kind(name):
    base = os.path.basename(name.split()[0]) if name else "?"
    if "MapWorker" in name:
        return "ray actors (Embed)"
    if name.startswith("ray::"):
        return "ray workers (read, write) and Ray's own actors"
    if base in ("raylet", "gcs_server"):
        return "raylet + gcs_server"
    if base == "dlrt":
        return "dlrt embed (cli)"
    if "--single-child" in name:
        return "single process (Embedder)"
    if base.startswith("python"):
        return "other Ray processes (agents, log monitor)"
    return base


def _stat_total():
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return v  # user nice system idle iowait irq softirq steal ...


class CpuMeter:
    """CPU seconds of this process and its descendants, by kind, over a run (sampled every
    `every` s so that processes which exit before the end still count), and /proc/stat's
    busy total, whose remainder is what other processes took."""

    def __init__(self, every=1.0):
        self.every, self.me = every, os.getpid()
        self.first, self.last, self.names = {}, {}, {}
        self.stop = threading.Event()

    def _sample(self):
        procs = _procs()
        mine = {self.me}
        changed = True
        while changed:
            changed = False
            for pid, (ppid, _, _) in procs.items():
                if ppid in mine and pid not in mine:
                    mine.add(pid)
                    changed = True
        for pid in mine:
            ppid, name, cpu = procs[pid]
            self.first.setdefault(pid, cpu if self.started is None else 0.0)
            self.last[pid] = cpu
            self.names[pid] = name

    def __enter__(self):
        self.started = None
        self._sample()
        self.started = time.perf_counter()
        self.stat0 = _stat_total()
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()
        return self

    def _loop(self):
        while not self.stop.wait(self.every):
            self._sample()

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()
        self._sample()
        stat1 = _stat_total()
        wall = time.perf_counter() - self.started
        d = [(b - a) / HZ for a, b in zip(self.stat0, stat1)]
        busy = sum(d) - d[3] - d[4]
        kinds = {}
        for pid, cpu in self.last.items():
            k = "driver (this process)" if pid == self.me else _kind(self.names[pid])
            kinds[k] = kinds.get(k, 0.0) + cpu - self.first[pid]
        ours = sum(kinds.values())
        top = sorted(((cpu - self.first[pid], pid) for pid, cpu in self.last.items()), reverse=True)[:12]
        self.result = {"wall_s": round(wall, 3), "busy_cpu_s": round(busy, 2), "ours_cpu_s": round(ours, 2),
                       "others_cpu_s": round(max(0.0, busy - ours), 2), "idle_cpu_s": round(d[3] + d[4], 2),
                       "by_kind_cpu_s": {k: round(v, 2) for k, v in sorted(kinds.items(), key=lambda kv: -kv[1])
                                         if v >= 0.01},
                       "top_processes_cpu_s": [[round(c, 2), self.names[pid][:60]] for c, pid in top if c >= 0.05]}


# --- the single-process runs ----------------------------------------------------------------

def single_embedder_main(args):
    """In a child process: Embedder load, Parquet read, encode, Parquet write, each timed."""
    model, corpus, out, threads, batch_size = args
    import pyarrow as pa
    import pyarrow.parquet as pq

    import dlrt

    t = [time.perf_counter()]
    e = dlrt.Embedder(model, device="cpu", threads=int(threads))
    t.append(time.perf_counter())
    table = pq.read_table(corpus)
    texts = table.column("text").to_pylist()
    t.append(time.perf_counter())
    v = e.encode(texts, batch_size=int(batch_size))
    t.append(time.perf_counter())
    col = pa.FixedSizeListArray.from_arrays(pa.array(v.reshape(-1), pa.float32()), v.shape[1])
    pq.write_table(pa.table({"id": table.column("id"), "embedding": col}), out)
    t.append(time.perf_counter())
    print(json.dumps({"load_s": t[1] - t[0], "read_s": t[2] - t[1], "encode_s": t[3] - t[2],
                      "write_s": t[4] - t[3], "total_s": t[4] - t[0]}))


def run_embedder(model, corpus, out, threads, batch_size, lines):
    with CpuMeter() as m:
        p = subprocess.run([sys.executable, os.path.abspath(__file__), "--single-child", model, corpus, out,
                            str(threads), str(batch_size)], check=True, capture_output=True, text=True)
    r = json.loads(p.stdout.strip().splitlines()[-1])
    r = {k: round(v, 3) for k, v in r.items()}
    r.update(texts_per_s=round(lines / r["total_s"], 1), steady_texts_per_s=round(lines / r["encode_s"], 1),
             cpu=m.result)
    return r


def run_cli(dlrt_bin, model, txt, out, threads, batch_size, lines):
    with CpuMeter() as m:
        subprocess.run([dlrt_bin, "embed", "--model", model, "--device", "cpu", "--threads", str(threads),
                        "--batch", str(batch_size), "--file", txt, "--npy", out], check=True,
                       stdout=subprocess.DEVNULL)
    seconds = m.result["wall_s"]
    assert np.load(out, mmap_mode="r").shape[0] == lines
    return {"total_s": round(seconds, 3), "texts_per_s": round(lines / seconds, 1), "cpu": m.result}


# --- the Ray run ----------------------------------------------------------------------------

def timed_embed_class(log_dir):
    """dlrt.ray.Embed, logging (per actor process) its start, model load and each batch."""
    import dlrt.ray

    class TimedEmbed(dlrt.ray.Embed):
        def __init__(self, *a, **kw):
            t0, c0 = time.time(), time.process_time()
            super().__init__(*a, **kw)
            self._log = open(os.path.join(log_dir, f"{os.getpid()}.jsonl"), "a")
            self._write({"init0": t0, "init1": time.time(), "cpu0": c0, "cpu": time.process_time()})

        def _write(self, rec):
            self._log.write(json.dumps(rec) + "\n")
            self._log.flush()

        def __call__(self, batch):
            t0 = time.time()
            out = super().__call__(batch)
            self._write({"c0": t0, "c1": time.time(), "n": out.num_rows, "cpu": time.process_time()})
            return out

    return TimedEmbed


def ray_job(model, corpus, out, actors, threads, batch_size, rows_per_batch, lines):
    """One `python -m dlrt.ray.embed` job on the running local cluster, its actors logged."""
    import dlrt.ray
    from dlrt.ray import embed as cli

    log_dir = tempfile.mkdtemp(prefix="actors_", dir=os.path.dirname(out))
    with CpuMeter() as m:
        original, dlrt.ray.Embed = dlrt.ray.Embed, timed_embed_class(log_dir)
        try:
            job0 = time.time()
            buf = io.StringIO()
            with contextlib.redirect_stdout(buf):
                cli.main(["--input", corpus, "--text-column", "text", "--id-column", "id", "--model", model,
                          "--output", out, "--concurrency", str(actors), "--threads", str(threads),
                          "--batch-size", str(batch_size)]
                         + (["--rows-per-batch", str(rows_per_batch)] if rows_per_batch else []))
        finally:
            dlrt.ray.Embed = original
    summary = json.loads(buf.getvalue().strip().splitlines()[-1])
    assert summary["rows"] == lines, summary
    seconds = summary["seconds"]
    recs = {}
    for name in os.listdir(log_dir):
        with open(os.path.join(log_dir, name)) as f:
            recs[name] = [json.loads(line) for line in f]
    inits = [r for rs in recs.values() for r in rs if "init0" in r]
    calls = [r for rs in recs.values() for r in rs if "c0" in r]
    first_call, last_call = min(r["c0"] for r in calls), max(r["c1"] for r in calls)
    rows_done = sum(r["n"] for r in calls)  # > lines when a batch was retried
    steady = last_call - first_call
    actors_log = []
    for rs in recs.values():
        cs = [r for r in rs if "c0" in r]
        init = [r for r in rs if "init0" in r]
        actors_log.append({
            "started_at_s": round(init[0]["init0"] - job0, 2) if init else None,
            "model_load_s": round(init[0]["init1"] - init[0]["init0"], 2) if init else None,
            "batches": len(cs), "rows": sum(r["n"] for r in cs),
            "busy_s": round(sum(r["c1"] - r["c0"] for r in cs), 2),
            "cpu_s_in_batches": round(cs[-1]["cpu"] - (init[0]["cpu"] if init else cs[0]["cpu"]), 2) if cs else 0})
    phases = {
        "first_actor_start_s": round(min(r["init0"] for r in inits) - job0, 2),
        "model_load_s": [round(r["init1"] - r["init0"], 2) for r in inits],
        "startup_s": round(first_call - job0, 2),
        "steady_s": round(steady, 2),
        "tail_s": round(job0 + seconds - last_call, 2),
    }
    return {"total_s": seconds, "texts_per_s": round(lines / seconds, 1), "rows_per_batch": summary["rows_per_batch"],
            "steady_texts_per_s": round(rows_done / steady, 1), "phases": phases, "actors": actors_log,
            "cpu": m.result}


def run_ray(model, corpus, out, cpus, actors, threads, batch_size, rows_per_batch, lines):
    """A fresh local cluster (ray.init timed), the job on it ("fresh cluster": Ray's workers
    and Ray Data's own actors start during the job), then the same job again ("running
    cluster": only the job's own actors start, as on a cluster that has run a job before)."""
    import ray

    t = time.perf_counter()
    ray.init(num_cpus=cpus, include_dashboard=False, log_to_driver=False, configure_logging=False,
             logging_level="ERROR")
    init_s = time.perf_counter() - t
    ctx = ray.data.DataContext.get_current()
    ctx.enable_progress_bars = False
    ctx.print_on_execution_start = False
    try:
        fresh = ray_job(model, corpus, out + "_fresh", actors, threads, batch_size, rows_per_batch, lines)
        running = ray_job(model, corpus, out + "_running", actors, threads, batch_size, rows_per_batch, lines)
    finally:
        ray.shutdown()
    fresh["ray_init_s"] = round(init_s, 2)
    fresh["texts_per_s_with_ray_init"] = round(lines / (fresh["total_s"] + init_s), 1)
    return fresh, running


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--single-child":
        return single_embedder_main(sys.argv[2:])
    p = argparse.ArgumentParser()
    p.add_argument("--model")
    p.add_argument("--lines", default="20000", help="comma-separated corpus sizes")
    p.add_argument("--cpus", type=int, default=len(os.sched_getaffinity(0)))
    p.add_argument("--configs", default=None, help="comma-separated ACTORSxTHREADS (default: CPUSx1)")
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--rows-per-batch", type=int, default=None, help="default: the CLI's own choice")
    p.add_argument("--repeat", type=int, default=2)
    p.add_argument("--no-cli", action="store_true", help="skip `dlrt embed` (no build/dlrt)")
    p.add_argument("--ray-only", action="store_true", help="only the Ray runs (profiling; no ratios)")
    p.add_argument("--dlrt", default=os.path.join(ROOT, "build", "dlrt"))
    p.add_argument("--out", default=os.path.join(ROOT, "bench", "results"))
    p.add_argument("--suffix", default=None)
    a = p.parse_args()
    configs = [tuple(int(x) for x in c.split("x")) for c in (a.configs or f"{a.cpus}x1").split(",")]

    import pyarrow as pa
    import pyarrow.parquet as pq
    import ray

    from test_ray import make_texts

    tmp = tempfile.mkdtemp(prefix="dlrt_ray_bench_")
    model = a.model or minilm_folder(tmp)
    result = {
        "issue": 40, "date": datetime.datetime.now().isoformat(timespec="seconds"), "cpu": cpu_name(),
        "cpus": a.cpus, "model": "minilm_l6 (zoo), max 128 tokens", "ray": ray.__version__,
        "pyarrow": pa.__version__, "batch_size": a.batch_size, "rows_per_batch": a.rows_per_batch,
        "load_average_at_start": os.getloadavg(), "corpora": [],
    }
    for lines in [int(x) for x in a.lines.split(",")]:
        texts = make_texts(lines)
        corpus = os.path.join(tmp, f"corpus{lines}.parquet")
        pq.write_table(pa.table({"id": np.arange(lines), "text": texts}), corpus, row_group_size=2000)
        txt = os.path.join(tmp, f"corpus{lines}.txt")
        with open(txt, "w") as f:
            f.write("\n".join(texts) + "\n")
        del texts
        kinds = ([] if a.no_cli or a.ray_only else ["cli"]) + ([] if a.ray_only else ["embedder"]) + \
            [f"ray {x}x{t}" for x, t in configs]
        runs = {k: [] for k in kinds}
        for rep in range(a.repeat):
            for k in (kinds if rep % 2 == 0 else kinds[::-1]):
                out = os.path.join(tmp, f"out_{lines}_{rep}_{k.replace(' ', '_')}")
                load = os.getloadavg()
                if k == "cli":
                    r = run_cli(a.dlrt, model, txt, out + ".npy", a.cpus, a.batch_size, lines)
                elif k == "embedder":
                    r = run_embedder(model, corpus, out + ".parquet", a.cpus, a.batch_size, lines)
                else:
                    actors, threads = (int(x) for x in k.split()[1].split("x"))
                    rs = run_ray(model, corpus, out, a.cpus, actors, threads, a.batch_size, a.rows_per_batch, lines)
                    r = {"fresh_cluster": rs[0], "running_cluster": rs[1]}
                r["load_average_before"] = [round(x, 2) for x in load]
                runs[k].append(r)
                for name, x in ([(k, r)] if "texts_per_s" in r else [(f"{k} {c}", r[c]) for c in r if "cluster" in c]):
                    print(f"{lines} lines, repeat {rep}, {name}: {x['texts_per_s']:.0f} texts/s end to end"
                          + (f", {x['steady_texts_per_s']:.0f} steady" if "steady_texts_per_s" in x else "")
                          + f" (others took {x['cpu']['others_cpu_s']} CPU s)", flush=True)

        def best(rs, key="texts_per_s"):
            return max(r[key] for r in rs)

        summary = {}
        if "cli" in runs:
            summary["cli"] = {"texts_per_s": best(runs["cli"])}
        if "embedder" in runs:
            summary["embedder"] = {"texts_per_s": best(runs["embedder"]),
                                   "steady_texts_per_s": best(runs["embedder"], "steady_texts_per_s")}
        for k in kinds:
            if not k.startswith("ray"):
                continue
            for c in ("fresh_cluster", "running_cluster"):
                rs = [r[c] for r in runs[k]]
                s = {"texts_per_s": best(rs), "steady_texts_per_s": best(rs, "steady_texts_per_s")}
                if c == "fresh_cluster":
                    s["texts_per_s_with_ray_init"] = best(rs, "texts_per_s_with_ray_init")
                if "cli" in summary:
                    s["ratio_to_cli"] = round(s["texts_per_s"] / summary["cli"]["texts_per_s"], 3)
                if "embedder" in summary:
                    s["ratio_to_embedder"] = round(s["texts_per_s"] / summary["embedder"]["texts_per_s"], 3)
                    s["steady_ratio_to_embedder_encode"] = round(
                        s["steady_texts_per_s"] / summary["embedder"]["steady_texts_per_s"], 3)
                # Each repeat's Ray run over the same repeat's single-process run (a neighbour's
                # load changes from minute to minute; best-of pairs runs minutes apart).
                for base in ("cli", "embedder"):
                    if base in runs:
                        s[f"per_repeat_ratio_to_{base}"] = [round(r["texts_per_s"] / b["texts_per_s"], 3)
                                                            for r, b in zip(rs, runs[base])]
                if "embedder" in runs:
                    s["per_repeat_steady_ratio"] = [round(r["steady_texts_per_s"] / b["steady_texts_per_s"], 3)
                                                    for r, b in zip(rs, runs["embedder"])]
                summary[f"{k} {c.replace('_', ' ')}"] = s
        result["corpora"].append({"lines": lines, "best_of": a.repeat, "summary": summary, "runs": runs})
        print(json.dumps({"lines": lines, "summary": summary}, indent=1), flush=True)
    result["load_average_at_end"] = os.getloadavg()
    os.makedirs(a.out, exist_ok=True)
    name = f"{datetime.date.today().isoformat()}_ray_embed" + (f"_{a.suffix}" if a.suffix else "") + ".json"
    path = os.path.join(a.out, name)
    with open(path, "w") as f:
        json.dump(result, f, indent=1)
        f.write("\n")
    print(path)


if __name__ == "__main__":
    main()
