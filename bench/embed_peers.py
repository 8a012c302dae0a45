#!/usr/bin/env python3
"""Embedding throughput of dlrt against FastEmbed and sentence-transformers'
ONNX backend, on the same model folders, texts and thread count; then
`dlrt serve` under concurrent clients. Run through bench/embed_peers.sh, which
makes the venv, the folders and the Python module this script needs; its
header lists the options.

Each engine runs in a worker process of its own (this script with --worker),
so no thread pool, allocator or library is shared. For each precision and
thread count the three workers load the folder and encode the corpus once as
warm-up (every batch shape seen), then each of them encodes the vectors of
the first --check-texts texts, which are compared before anything is timed.
Each round then has every engine encode the whole corpus at --batch texts
per batch, one engine at a time (the others wait on a pipe), in an order
rotated from round to round, with a pause between engines; texts/s is the
median over rounds. Two corpus orders are timed: "given" (the texts as
generated, mixed lengths) and "sorted" (by token count, so every engine's
batches hold texts of one length).
"""
import argparse
import datetime
import http.client
import json
import math
import os
import platform
import random
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ENGINES = ("dlrt", "fastembed", "st")
LABELS = {"dlrt": "dlrt Embedder", "fastembed": "FastEmbed", "st": "ST-ONNX"}
ISA_FLAGS = ["sse4_2", "avx", "avx2", "fma", "f16c", "avx_vnni", "avx512f", "avx512bw", "avx512vl",
             "avx512_vnni", "avx512_bf16", "avx512_fp16", "amx_tile", "amx_bf16", "amx_int8"]
# Smallest cosine accepted between two engines' vectors for the same text:
# fp32 engines differ only in float rounding; int8 ones also in where dynamic
# quantization rounds activations (one integer step moves later layers).
MIN_COSINE = {"fp32": 0.9999, "int8": 0.99}


# ---------------------------------------------------------------- the corpus

def make_corpus(vocab_path, count, seed, min_words, max_words):
    """`count` sentences of min_words..max_words words (uniform), words drawn
    from the whole-word entries of the BERT vocabulary with a fixed seed; a
    comma now and then, a capital and a full stop. The same arguments give the
    same texts on every machine."""
    with open(vocab_path, encoding="utf-8") as f:
        words = [w for w in (line.strip() for line in f) if re.fullmatch(r"[a-z]{2,14}", w)]
    rng = random.Random(seed)
    texts = []
    for _ in range(count):
        n = rng.randint(min_words, max_words)
        parts = []
        for i in range(n):
            w = rng.choice(words)
            if i + 1 < n and rng.random() < 0.08:
                w += ","
            parts.append(w)
        text = " ".join(parts)
        texts.append(text[0].upper() + text[1:] + ".")
    return texts


# ---------------------------------------------------------------- workers

def load_engine(engine, folder, threads):
    """An encode(texts, batch_size) -> float32 [n, dim] for the engine on the folder."""
    if engine == "dlrt":
        import dlrt
        model = dlrt.Embedder(folder, threads=threads)
        return lambda texts, batch: model.encode(texts, batch_size=batch)
    import numpy as np
    if engine == "fastembed":
        from fastembed import TextEmbedding
        from fastembed.common.model_description import ModelSource, PoolingType
        name = "dlrt-bench/" + os.path.basename(os.path.normpath(folder))
        TextEmbedding.add_custom_model(model=name, pooling=PoolingType.MEAN, normalization=True,
                                       sources=ModelSource(hf=name), dim=384, model_file="onnx/model.onnx")
        model = TextEmbedding(model_name=name, specific_model_path=folder, threads=threads,
                              providers=["CPUExecutionProvider"])
        return lambda texts, batch: np.stack(list(model.embed(texts, batch_size=batch)))
    if engine == "st":
        import onnxruntime as ort
        import torch
        from sentence_transformers import SentenceTransformer
        torch.set_num_threads(threads)  # pooling and normalisation run in torch
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = threads
        model = SentenceTransformer(folder, backend="onnx", device="cpu",
                                    model_kwargs={"file_name": "onnx/model.onnx", "provider": "CPUExecutionProvider",
                                                  "session_options": opts})
        return lambda texts, batch: model.encode(texts, batch_size=batch, convert_to_numpy=True,
                                                 show_progress_bar=False)
    raise SystemExit(f"unknown engine {engine}")


def cpu_seconds():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def worker(args):
    """Reads one JSON command a line on stdin, answers one JSON line on stdout."""
    out = sys.stdout
    sys.stdout = sys.stderr  # libraries' prints must not reach the pipe
    with open(args.corpus) as f:
        corpus = json.load(f)
    t0 = time.perf_counter()
    encode = load_engine(args.worker, args.folder, args.threads)
    answer = {"load_s": time.perf_counter() - t0}
    versions = {}
    for mod in ("fastembed", "sentence_transformers", "onnxruntime", "torch", "tokenizers", "dlrt"):
        if mod in sys.modules:
            versions[mod] = getattr(sys.modules[mod], "__version__", "?")
    answer["versions"] = versions
    out.write(json.dumps(answer) + "\n")
    out.flush()
    for line in sys.stdin:
        cmd = json.loads(line)
        if cmd["op"] == "quit":
            break
        texts = corpus[cmd["order"]]
        if cmd["op"] == "vectors":
            import numpy as np
            vecs = encode(texts[:cmd["count"]], cmd["batch"])
            np.save(cmd["path"], np.asarray(vecs, dtype=np.float32))
            answer = {"shape": list(np.shape(vecs))}
        else:  # "time": one pass over the corpus
            c0, w0 = cpu_seconds(), time.perf_counter()
            vecs = encode(texts, args.batch)
            wall, cpu = time.perf_counter() - w0, cpu_seconds() - c0
            if len(vecs) != len(texts):
                raise SystemExit(f"{args.worker}: {len(vecs)} vectors for {len(texts)} texts")
            answer = {"wall_s": wall, "cpu_s": cpu}
        out.write(json.dumps(answer) + "\n")
        out.flush()


class Worker:
    def __init__(self, engine, folder, threads, batch, corpus_path, python, env):
        self.engine = engine
        cmd = [python, os.path.abspath(__file__), "--worker", engine, "--folder", folder, "--threads", str(threads),
               "--batch", str(batch), "--corpus", corpus_path]
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
        self.info = self._read()

    def _read(self):
        line = self.proc.stdout.readline()
        if not line:
            code = self.proc.wait()
            raise SystemExit(f"embed_peers: the {LABELS[self.engine]} worker exited ({code}); its stderr is above")
        return json.loads(line)

    def ask(self, **cmd):
        self.proc.stdin.write(json.dumps(cmd) + "\n")
        self.proc.stdin.flush()
        return self._read()

    def close(self):
        if self.proc.poll() is None:
            try:
                self.proc.stdin.write('{"op": "quit"}\n')
                self.proc.stdin.flush()
                self.proc.wait(timeout=30)
            except (BrokenPipeError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()


def worker_env(threads, dlrt_python):
    """Every thread pool an engine may start is held to `threads` threads:
    ONNX Runtime's and dlrt's come from their options; these cover the Rust
    tokenizers' rayon pool (FastEmbed and sentence-transformers tokenize a batch
    in parallel), OpenMP and torch."""
    env = dict(os.environ)
    for var in ("RAYON_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        env[var] = str(threads)
    env["TOKENIZERS_PARALLELISM"] = "true" if threads > 1 else "false"
    env["PYTHONPATH"] = dlrt_python + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.setdefault("HF_HUB_OFFLINE", "1")
    env.setdefault("TRANSFORMERS_OFFLINE", "1")
    return env


# ---------------------------------------------------------------- the in-process part

def cosines(a, b):
    import numpy as np
    a, b = a.astype(np.float64), b.astype(np.float64)
    return (a * b).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))


def check_vectors(workers, count, batch, tmp):
    """The engines' vectors for the first `count` texts at `batch` texts per
    batch, pairwise: the worst cosine of each pair."""
    import numpy as np
    vecs = {}
    for w in workers:
        path = os.path.join(tmp, f"{w.engine}.npy")
        w.ask(op="vectors", order="given", count=count, batch=batch, path=path)
        vecs[w.engine] = np.load(path)
    worst = {}
    names = [w.engine for w in workers]
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            if vecs[a].shape != vecs[b].shape:
                raise SystemExit(f"embed_peers: {LABELS[a]} gives {vecs[a].shape}, {LABELS[b]} {vecs[b].shape}")
            worst[f"{a}~{b}"] = float(cosines(vecs[a], vecs[b]).min())
    return worst


def check_agreement(workers, precision, count, batch, tmp):
    """Whether the engines compute the same vectors, printed. Texts one at a
    time (no padding) must agree within MIN_COSINE; at `batch` texts a batch
    float32 must too (padding and masks), while int8 is only reported: a
    dynamically quantized model's per-tensor activation scale covers the padded
    positions, so its vectors depend on which texts share a batch, and the
    engines batch differently (FastEmbed in input order, the others sorted by
    length)."""
    result, ok = {}, True
    for b in (1, batch):
        worst = check_vectors(workers, count, b, tmp)
        enforced = b == 1 or precision == "fp32"
        good = all(v >= MIN_COSINE[precision] for v in worst.values())
        ok = ok and (good or not enforced)
        result[f"batch_{b}"] = worst
        verdict = ("ok" if good else "FAILED") if enforced else "reported only"
        print(f"  vectors of the first {count} texts at batch {b}, worst cosine per pair "
              f"(need >= {MIN_COSINE[precision]}{'' if enforced else ' at batch 1'}): "
              + ", ".join(f"{LABELS[k.split('~')[0]]} vs {LABELS[k.split('~')[1]]} {v:.7f}" for k, v in worst.items())
              + f"  {verdict}", flush=True)
    return result, ok


def time_engines(workers, orders, rounds, texts, pause_s):
    """{order: {engine: {"texts_per_s": median, "rounds": [...], "cores": median CPU/wall}}}."""
    result = {}
    for order in orders:
        walls = {w.engine: [] for w in workers}
        cores = {w.engine: [] for w in workers}
        for r in range(rounds):
            for k in range(len(workers)):
                w = workers[(r + k) % len(workers)]
                time.sleep(pause_s)  # let the previous engine's spinning threads go idle
                a = w.ask(op="time", order=order)
                walls[w.engine].append(a["wall_s"])
                cores[w.engine].append(a["cpu_s"] / a["wall_s"])
        result[order] = {e: {"texts_per_s": texts / statistics.median(walls[e]),
                             "rounds_texts_per_s": [round(texts / t, 2) for t in walls[e]],
                             "cores_used": round(statistics.median(cores[e]), 2)} for e in walls}
    return result


# ---------------------------------------------------------------- the server

def percentile(values, p):
    """Nearest-rank percentile."""
    s = sorted(values)
    return s[max(0, math.ceil(p / 100 * len(s)) - 1)] if s else float("nan")


def serve_bench(dlrt_bin, folder, threads, pool_size, batch, corpus, clients, seconds, warmup_s, per_request):
    """dlrt serve on the folder; `clients` keep-alive clients (one thread each)
    post /v1/embeddings with `per_request` texts each for warmup_s + seconds;
    latencies of the requests that ended after the warm-up count."""
    cmd = [dlrt_bin, "serve", "--model", folder, "--port", "0", "--device", "cpu", "--threads", str(threads),
           "--pool-size", str(pool_size), "--max-batch-size", str(batch), "--http-threads", str(clients + 8),
           "--access-log=false"]
    log = tempfile.TemporaryFile(mode="w+")
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=log, text=True)
    try:
        port = None
        deadline = time.time() + 120
        while port is None and time.time() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            m = re.search(r"listening on http://[^:]+:(\d+)", line)
            if m:
                port = int(m.group(1))
        if port is None:
            log.seek(0)
            raise SystemExit(f"embed_peers: dlrt serve did not start: {log.read()[-2000:]}")
        threading.Thread(target=lambda: proc.stdout.read(), daemon=True).start()
        while time.time() < deadline:  # ready: /health answers 200
            try:
                c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
                c.request("GET", "/health")
                if c.getresponse().status == 200:
                    break
            except OSError:
                pass
            time.sleep(0.1)
        bodies = [json.dumps({"input": corpus[i:i + per_request] if per_request > 1 else corpus[i],
                              "model": "bench"}).encode()
                  for i in range(0, len(corpus) - per_request + 1, per_request)]
        start = time.perf_counter()
        t_measure, t_end = start + warmup_s, start + warmup_s + seconds
        latencies, errors = [[] for _ in range(clients)], [0] * clients
        dims = set()

        def client(k):
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            i = k
            while True:
                t0 = time.perf_counter()
                if t0 >= t_end:
                    break
                body = bodies[i % len(bodies)]
                i += clients
                try:
                    conn.request("POST", "/v1/embeddings", body, {"Content-Type": "application/json"})
                    resp = conn.getresponse()
                    data = resp.read()
                except (OSError, http.client.HTTPException):
                    errors[k] += 1
                    conn.close()
                    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
                    continue
                t1 = time.perf_counter()
                if resp.status != 200:
                    errors[k] += 1
                    continue
                if len(dims) < 1:
                    dims.add(len(json.loads(data)["data"][0]["embedding"]))
                if t0 >= t_measure:
                    latencies[k].append(t1 - t0)

        threads_ = [threading.Thread(target=client, args=(k,)) for k in range(clients)]
        for t in threads_:
            t.start()
        for t in threads_:
            t.join()
        flat = [x for per in latencies for x in per]
        measured = time.perf_counter() - t_measure
        return {"requests": len(flat), "errors": sum(errors), "texts_per_s": len(flat) * per_request / measured,
                "p50_ms": 1000 * percentile(flat, 50), "p99_ms": 1000 * percentile(flat, 99),
                "dimension": sorted(dims), "clients": clients, "texts_per_request": per_request,
                "pool_size": pool_size, "seconds": seconds}
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


# ---------------------------------------------------------------- the machine

def machine():
    name, flags, ident = "unknown", set(), {}
    with open("/proc/cpuinfo") as f:
        for line in f:
            k, _, v = line.partition(":")
            k = k.strip()
            if k == "model name" and name == "unknown":
                name = v.strip()
            elif k == "flags" and not flags:
                flags = set(v.split())
            elif k in ("vendor_id", "cpu family", "model", "stepping") and k not in ident:
                ident[k] = v.strip()
    return {"cpu": name, "cpu_id": ident, "isa": [f for f in ISA_FLAGS if f in flags], "cores": os.cpu_count(),
            "loadavg_at_start": " ".join(open("/proc/loadavg").read().split()[:3]),
            "python": platform.python_version(), "platform": platform.platform()}


def git_commit():
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    try:
        head = subprocess.run(["git", "-C", root, "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", root, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, check=True).stdout.strip()
        return head + (" (modified)" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


# ---------------------------------------------------------------- main

def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--folders", help="holds fp32/ and int8/ (bench/make_embed_folder.py)")
    p.add_argument("--vocab", help="BERT vocabulary the corpus' words come from")
    p.add_argument("--dlrt-bin", help="the dlrt CLI (for dlrt serve)")
    p.add_argument("--dlrt-python", help="folder holding the dlrt package (BUILD/python)")
    p.add_argument("--precisions", default="fp32,int8")
    p.add_argument("--threads", default="1,2", help="comma-separated thread counts")
    p.add_argument("--engines", default=",".join(ENGINES))
    p.add_argument("--orders", default="given,sorted")
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--texts", type=int, default=512)
    p.add_argument("--min-words", type=int, default=10)
    p.add_argument("--max-words", type=int, default=120)
    p.add_argument("--seed", type=int, default=67)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--pause", type=float, default=0.5, help="seconds between two engines' passes")
    p.add_argument("--check-texts", type=int, default=64)
    p.add_argument("--clients", type=int, default=16)
    p.add_argument("--seconds", type=float, default=20, help="server: measured seconds per run")
    p.add_argument("--server-warmup", type=float, default=3)
    p.add_argument("--per-request", type=int, default=1, help="server: texts per request")
    p.add_argument("--pool-size", type=int, default=1, help="dlrt serve --pool-size")
    p.add_argument("--no-server", action="store_true")
    p.add_argument("--save", nargs="?", const="", default=None,
                   help="write the JSON (default bench/results/<date>_embed_peers.json)")
    p.add_argument("--worker", choices=ENGINES, help=argparse.SUPPRESS)
    p.add_argument("--folder", help=argparse.SUPPRESS)
    p.add_argument("--corpus", help=argparse.SUPPRESS)
    return p.parse_args()


def main():
    args = parse_args()
    if args.worker:
        args.threads = int(args.threads)
        return worker(args)
    for need in ("folders", "vocab", "dlrt_bin", "dlrt_python"):
        if not getattr(args, need):
            raise SystemExit(f"embed_peers: --{need.replace('_', '-')} is needed (bench/embed_peers.sh passes it)")
    precisions = args.precisions.split(",")
    thread_counts = [int(t) for t in args.threads.split(",")]
    engines = args.engines.split(",")
    orders = args.orders.split(",")
    for e in engines:
        if e not in ENGINES:
            raise SystemExit(f"embed_peers: unknown engine {e} (known: {', '.join(ENGINES)})")
    for o in orders:
        if o not in ("given", "sorted"):
            raise SystemExit(f"embed_peers: unknown order {o} (given, sorted)")
    for prec in precisions:
        if prec not in MIN_COSINE:
            raise SystemExit(f"embed_peers: unknown precision {prec} (fp32, int8)")

    started = time.time()
    mach = machine()
    from tokenizers import Tokenizer
    texts = make_corpus(args.vocab, args.texts, args.seed, args.min_words, args.max_words)
    tok = Tokenizer.from_file(os.path.join(args.folders, "fp32", "tokenizer.json"))
    tok.no_padding()
    lengths = [len(e.ids) for e in tok.encode_batch(texts)]
    corpus = {"given": texts, "sorted": [t for _, t in sorted(zip(lengths, texts), key=lambda p: p[0])]}
    print(f"== CPU: {mach['cpu']} ({mach['cpu_id'].get('vendor_id', '?')} family {mach['cpu_id'].get('cpu family')} "
          f"model {mach['cpu_id'].get('model')} stepping {mach['cpu_id'].get('stepping')}), {mach['cores']} cores, "
          f"ISA {' '.join(mach['isa'])}; load {mach['loadavg_at_start']}")
    print(f"== corpus: {len(texts)} texts, {args.min_words}-{args.max_words} words (seed {args.seed}), "
          f"{min(lengths)}-{max(lengths)} tokens, mean {statistics.mean(lengths):.1f}; batch {args.batch}; "
          f"{args.rounds} rounds, median; orders {', '.join(orders)}", flush=True)

    result = {"tool": "bench/embed_peers.py", "date_utc": datetime.datetime.now(datetime.timezone.utc)
              .strftime("%Y-%m-%d %H:%M"), "commit": git_commit(), "machine": mach, "argv": sys.argv[1:],
              "corpus": {"texts": len(texts), "words": [args.min_words, args.max_words], "seed": args.seed,
                         "tokens_min_mean_max": [min(lengths), round(statistics.mean(lengths), 1), max(lengths)]},
              "batch": args.batch, "rounds": args.rounds, "runs": [], "server": []}
    failed = False
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        corpus_path = os.path.join(tmp, "corpus.json")
        with open(corpus_path, "w") as f:
            json.dump(corpus, f)
        for prec in precisions:
            folder = os.path.join(args.folders, prec)
            for threads in thread_counts:
                print(f"== {prec}, {threads} thread{'s' if threads > 1 else ''}: {folder}", flush=True)
                env = worker_env(threads, args.dlrt_python)
                workers = []
                try:
                    for e in engines:
                        workers.append(Worker(e, folder, threads, args.batch, corpus_path, sys.executable, env))
                    for w in workers:  # warm-up: every batch shape of every order once
                        for order in orders:
                            w.ask(op="time", order=order)
                    worst, ok = check_agreement(workers, prec, min(args.check_texts, len(texts)), args.batch, tmp)
                    if not ok:
                        failed = True
                        continue
                    timed = time_engines(workers, orders, args.rounds, len(texts), args.pause)
                finally:
                    for w in workers:
                        w.close()
                run = {"precision": prec, "threads": threads, "worst_cosine": worst, "orders": timed,
                       "versions": {w.engine: w.info["versions"] for w in workers},
                       "load_s": {w.engine: round(w.info["load_s"], 3) for w in workers}}
                result["runs"].append(run)
                for order in orders:
                    t = timed[order]
                    row = {"precision": prec, "threads": threads, "order": order}
                    for e in engines:
                        row[e] = t[e]["texts_per_s"]
                        row[e + "_cores"] = t[e]["cores_used"]
                    rows.append(row)
                    print("  " + order + ": " + ", ".join(
                        f"{LABELS[e]} {t[e]['texts_per_s']:.1f} texts/s ({t[e]['cores_used']:.2f} cores)"
                        for e in engines), flush=True)
                if not args.no_server:
                    s = serve_bench(args.dlrt_bin, folder, threads, args.pool_size, args.batch, texts, args.clients,
                                    args.seconds, args.server_warmup, args.per_request)
                    s.update(precision=prec, threads=threads)
                    result["server"].append(s)
                    print(f"  dlrt serve: {s['texts_per_s']:.1f} texts/s, p50 {s['p50_ms']:.1f} ms, "
                          f"p99 {s['p99_ms']:.1f} ms ({s['clients']} clients, {s['texts_per_request']} text/request, "
                          f"{s['requests']} requests, {s['errors']} errors)", flush=True)
                    if s["errors"] or s["dimension"] != [384]:
                        failed = True

    print_table(mach, rows, engines, result["server"], args)
    result["table"] = rows
    result["elapsed_s"] = round(time.time() - started)
    result["loadavg_at_end"] = " ".join(open("/proc/loadavg").read().split()[:3])
    print(f"({result['elapsed_s']} s; load average at the start {mach['loadavg_at_start']}, "
          f"at the end {result['loadavg_at_end']})")
    if args.save is not None:
        path = args.save or os.path.join(os.path.dirname(os.path.abspath(__file__)), "results",
                                         f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d}_embed_peers.json")
        with open(path, "w") as f:
            json.dump(result, f, indent=1)
            f.write("\n")
        print(f"saved {path}")
    return 1 if failed else 0


def print_table(mach, rows, engines, server, args):
    print()
    print(f"CPU: {mach['cpu']}, {mach['cores']} cores; ISA: {' '.join(mach['isa'])}")
    print(f"texts/s, batch {args.batch}, median of {args.rounds} rounds ({args.texts} texts, "
          f"{args.min_words}-{args.max_words} words); same thread count for every engine")
    head = f"{'precision':<9} {'threads':>7} {'order':<6} " + " ".join(f"{LABELS[e]:>14}" for e in engines)
    ratios = [e for e in engines if e != "dlrt"] if "dlrt" in engines else []
    head += "".join(f" {'dlrt/' + LABELS[e]:>16}" for e in ratios)
    print(head)
    for r in rows:
        line = f"{r['precision']:<9} {r['threads']:>7} {r['order']:<6} " + " ".join(f"{r[e]:>14.1f}" for e in engines)
        line += "".join(f" {r['dlrt'] / r[e]:>16.2f}" for e in ratios)
        print(line)
    if server:
        print(f"\ndlrt serve, {args.clients} concurrent keep-alive clients, {args.per_request} text/request, "
              f"--pool-size {args.pool_size}, {args.seconds:g} s measured")
        print(f"{'precision':<9} {'threads':>7} {'texts/s':>9} {'p50 ms':>8} {'p99 ms':>8} {'errors':>6}")
        for s in server:
            print(f"{s['precision']:<9} {s['threads']:>7} {s['texts_per_s']:>9.1f} {s['p50_ms']:>8.1f} "
                  f"{s['p99_ms']:>8.1f} {s['errors']:>6}")


if __name__ == "__main__":
    sys.exit(main())
