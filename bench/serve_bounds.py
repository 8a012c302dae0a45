#!/usr/bin/env python3
"""Measures issue 80's "Done when" bounds of `dlrt serve` (stdlib only).

  slow    N connections trickle a request body in (a head announcing 100,000
          bytes, then RATE bytes/s each) for SECONDS while /health is probed on
          new connections; prints the probes' latencies and what each trickling
          connection got (503, 408, still open). Bounded: N + 1 connections,
          SECONDS + 10 s.
  bodies  For each folder, route and body shape, a fresh server gets one ~2 MB
          request: its status, the time to the answer (bound: the request
          deadline plus 1 s) and the server's peak RSS (VmHWM), with its ratio
          to /embed's on the same folder and shape (bound: 4).

  python3 bench/serve_bounds.py slow --dlrt build/dlrt --http-threads 8
  python3 bench/serve_bounds.py bodies --dlrt build/dlrt --timeout-ms 10000 --json out.json
"""
import argparse
import json
import os
import socket
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FOLDERS = {
    "tiny_bert": "tests/embed/data/tiny_bert",
    "cross_encoder_tiny": "tests/embed/data/cross_encoder_tiny",
    "dense_embed": "tests/models/retrieval/dense_embed",
    "qwen3_embed": "tests/models/retrieval/qwen3_embed",
    "qwen3_embed_fused": "tests/models/retrieval/qwen3_embed_fused",
    "qwen3_embed_gqa": "tests/models/retrieval/qwen3_embed_gqa",
    "qwen3_embed_int4": "tests/models/retrieval/qwen3_embed_int4",
    "splade_tiny": "tests/models/retrieval/splade_tiny",
    "colbert_tiny": "tests/models/retrieval/colbert_tiny",
    "qwen3_rerank": "tests/models/retrieval/qwen3_rerank",
    "clip_tiny": "tests/models/image/clip_tiny",
    "st6_router": "tests/models/st_modules/st6_router",
}
# Every POST route of the route table (apps/embed/serve/route_kinds.cpp), one
# row per variant.
ROUTES = ["/v1/embeddings", "/v1/embeddings sparse", "/embeddings", "/embeddings sparse", "/embed",
          "/embed_sparse", "/embed_all", "/similarity", "/tokenize", "/decode", "/rerank", "/v1/rerank", "/v2/rerank",
          "/predict", "/v2/embed", "/v1/embed"]
MAX_BODY = 2 * 1024 * 1024
MAX_INPUTS = 256


def text_of(n, word="hello world "):
    return (word * (n // len(word) + 1))[:n]


def body_for(route, shape):
    """A body of at most 2 MiB: `one` a single ~2 MB text (or query), `many`
    256 inputs of ~8 KB (each over any model's length)."""
    big = MAX_BODY - 4096
    per = big // MAX_INPUTS - 64
    path, _, variant = route.partition(" ")
    if path in ("/v1/embeddings", "/embeddings"):
        b = {"input": text_of(big) if shape == "one" else [text_of(per)] * MAX_INPUTS}
        if variant:
            b["encoding_format"] = "sparse"
    elif path in ("/embed", "/embed_sparse", "/embed_all", "/tokenize"):
        b = {"inputs": text_of(big) if shape == "one" else [text_of(per)] * MAX_INPUTS}
    elif path == "/similarity":
        if shape == "one":
            b = {"inputs": {"source_sentence": text_of(big), "sentences": ["hello"]}}
        else:
            b = {"inputs": {"source_sentence": text_of(per), "sentences": [text_of(per)] * (MAX_INPUTS - 1)}}
    elif path == "/decode":
        n = big // 2 - 16
        b = {"ids": [5] * n} if shape == "one" else {"ids": [[5] * (n // MAX_INPUTS)] * MAX_INPUTS}
    elif path == "/rerank":
        b = ({"query": text_of(big), "texts": ["hello"]} if shape == "one" else
             {"query": "hello world", "texts": [text_of(per)] * MAX_INPUTS})
    elif path in ("/v1/rerank", "/v2/rerank"):
        b = ({"query": text_of(big), "documents": ["hello"]} if shape == "one" else
             {"query": "hello world", "documents": [text_of(per)] * MAX_INPUTS})
    elif path in ("/v2/embed", "/v1/embed"):
        b = {"texts": [text_of(big)] if shape == "one" else [text_of(per)] * MAX_INPUTS, "input_type": "search_document"}
        if path == "/v2/embed":
            b["embedding_types"] = ["float"]
    elif path == "/predict":
        b = ({"inputs": text_of(big)} if shape == "one" else
             {"inputs": [[text_of(per // 2), text_of(per // 2)]] * MAX_INPUTS})
    else:
        raise ValueError(route)
    data = json.dumps(b, separators=(",", ":")).encode()
    assert len(data) <= MAX_BODY, (route, shape, len(data))
    return path, data


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def vm_kb(pid, key):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def http_get(port, path, timeout):
    t0 = time.monotonic()
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
            s.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
            data = b""
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
        status = int(data[9:12]) if len(data) >= 12 else -1
        return status, time.monotonic() - t0, data
    except OSError:
        return -1, time.monotonic() - t0, b""


def post(port, path, data, timeout):
    """(status, seconds, answer bytes); status -1 when the connection closed
    without an answer, 0 on the client's timeout."""
    head = (f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nConnection: close\r\n"
            f"Content-Length: {len(data)}\r\n\r\n").encode()
    t0 = time.monotonic()
    chunks = []  # joined once: a 46 MB answer read by += costs seconds of copying
    first = None
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
            try:
                s.sendall(head + data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # an early refusal: read it
            while True:
                chunk = s.recv(1 << 20)
                if not chunk:
                    break
                first = first or time.monotonic() - t0
                chunks.append(chunk)
    except socket.timeout:
        answer = b"".join(chunks)
        return 0, time.monotonic() - t0, len(answer), answer[:300], first
    except OSError:
        pass
    seconds = time.monotonic() - t0
    answer = b"".join(chunks)
    status = int(answer[9:12]) if len(answer) >= 12 else -1
    return status, seconds, len(answer), answer[:300], first


class Server:
    def __init__(self, dlrt, args):
        self.port = free_port()
        self.log = open(os.devnull, "w")
        self.proc = subprocess.Popen([dlrt, "serve", "--port", str(self.port), "--threads", "1"] + args,
                                     stdout=self.log, stderr=subprocess.STDOUT, cwd=ROOT)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            status, _, data = http_get(self.port, "/health", 2)
            if status == 200 or b'"failed"' in data:
                return
            if self.proc.poll() is not None:
                raise RuntimeError(f"dlrt serve {args} exited {self.proc.returncode}")
            time.sleep(0.1)
        raise RuntimeError(f"dlrt serve {args} not ready")

    def hwm_kb(self):
        return vm_kb(self.proc.pid, "VmHWM")

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


def run_bodies(a):
    rows = []
    folders = a.folders.split(",") if a.folders else list(FOLDERS)
    routes = a.routes.split(",") if a.routes else ROUTES
    for folder in folders:
        for shape in a.shapes.split(","):
            for route in routes:
                path, data = body_for(route, shape)
                srv = Server(a.dlrt, ["--model", FOLDERS[folder], "--request-timeout-ms", str(a.timeout_ms)])
                try:
                    base = srv.hwm_kb()
                    status, seconds, size, start, first = post(srv.port, path, data, a.timeout_ms / 1000 + 30)
                    peak = srv.hwm_kb()
                    alive, _, _ = http_get(srv.port, "/health", 5)
                finally:
                    srv.stop()
                row = {"folder": folder, "shape": shape, "route": route, "body_bytes": len(data), "status": status,
                       "seconds": round(seconds, 3), "first_byte_s": round(first or 0, 3), "answer_bytes": size, "base_rss_mb": round(base / 1024, 1),
                       "peak_rss_mb": round(peak / 1024, 1), "health_after": alive}
                if status not in (200,):
                    row["answer_start"] = start.split(b"\r\n\r\n", 1)[-1][:160].decode("utf-8", "replace")
                rows.append(row)
                print(json.dumps(row), flush=True)
    by_embed = {(r["folder"], r["shape"]): r["peak_rss_mb"] for r in rows if r["route"] == "/embed"}
    bound_s = a.timeout_ms / 1000 + 1
    worst = {"seconds": 0, "ratio": 0}
    for r in rows:
        ref = by_embed.get((r["folder"], r["shape"]))
        if ref:
            r["rss_ratio_to_embed"] = round(r["peak_rss_mb"] / ref, 2)
            worst["ratio"] = max(worst["ratio"], r["rss_ratio_to_embed"])
        r["within_deadline_plus_1s"] = r["status"] > 0 and r["seconds"] <= bound_s
        worst["seconds"] = max(worst["seconds"], r["seconds"])
    summary = {"requests": len(rows), "deadline_ms": a.timeout_ms,
               "over_deadline_plus_1s": [r for r in rows if not r["within_deadline_plus_1s"]],
               "over_4x_embed_rss": [r for r in rows if r.get("rss_ratio_to_embed", 0) > 4],
               "server_died": [r for r in rows if r["health_after"] != 200], "worst": worst}
    print(json.dumps({k: v for k, v in summary.items()}, indent=1))
    return {"rows": rows, "summary": summary}


def run_slow(a):
    srv = Server(a.dlrt, ["--model", FOLDERS["tiny_bert"]] + (["--http-threads", str(a.http_threads)]
                                                             if a.http_threads else []))
    head = (b"POST /embed HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Content-Length: 100000\r\n\r\n{\"inputs\":\"")
    conns, status = [], []
    try:
        for _ in range(a.connections):
            s = socket.create_connection(("127.0.0.1", srv.port), timeout=5)
            s.sendall(head)
            s.setblocking(False)
            conns.append(s)
            status.append(0)
        probes = []
        t0 = time.monotonic()
        next_byte = t0
        per_byte = 1.0 / a.rate
        chunk = b"a" * max(1, int(a.rate * 0.25)) if a.rate >= 4 else b"a"
        if a.rate >= 4:
            per_byte = len(chunk) / a.rate
        while time.monotonic() - t0 < a.seconds:
            now = time.monotonic()
            if now >= next_byte:
                for i, s in enumerate(conns):
                    if status[i] == 0:
                        try:
                            s.send(chunk)
                        except OSError:
                            pass
                next_byte = now + per_byte
            for i, s in enumerate(conns):
                if status[i] == 0:
                    try:
                        d = s.recv(64)
                        status[i] = int(d[9:12]) if len(d) >= 12 else -1
                    except BlockingIOError:
                        pass
                    except OSError:
                        status[i] = -1
            st, sec, _ = http_get(srv.port, "/health", 5)
            probes.append((round(time.monotonic() - t0, 2), st, round(sec, 3)))
            time.sleep(0.2)
        for s in conns:
            s.close()
    finally:
        srv.stop()
    lat = [p[2] for p in probes]
    counts = {}
    for s in status:
        key = {0: "open", -1: "closed"}.get(s, str(s))
        counts[key] = counts.get(key, 0) + 1
    out = {"http_threads": a.http_threads or "default (64)", "connections": a.connections,
           "bytes_per_s_each": a.rate, "seconds": a.seconds, "probes": len(probes),
           "probes_ok": sum(1 for p in probes if p[1] == 200), "probe_max_s": max(lat),
           "probe_median_s": sorted(lat)[len(lat) // 2], "probes_over_1s": sum(1 for x in lat if x > 1),
           "trickling_outcome": counts}
    print(json.dumps(out), flush=True)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["slow", "bodies"])
    ap.add_argument("--dlrt", default=os.path.join(ROOT, "build", "dlrt"))
    ap.add_argument("--json", help="append the results to this file (a JSON list)")
    ap.add_argument("--http-threads", type=int, default=0)
    ap.add_argument("--connections", type=int, default=64)
    ap.add_argument("--rate", type=float, default=0.5, help="body bytes per second per connection")
    ap.add_argument("--seconds", type=float, default=30)
    ap.add_argument("--timeout-ms", type=int, default=10000)
    ap.add_argument("--folders", default="")
    ap.add_argument("--routes", default="")
    ap.add_argument("--shapes", default="one,many")
    a = ap.parse_args()
    a.dlrt = os.path.abspath(a.dlrt)
    result = run_slow(a) if a.mode == "slow" else run_bodies(a)
    if a.json:
        prior = []
        if os.path.exists(a.json):
            with open(a.json) as f:
                prior = json.load(f)
        prior.append({"mode": a.mode, "args": {k: v for k, v in vars(a).items() if k != "json"}, "result": result})
        with open(a.json, "w") as f:
            json.dump(prior, f, indent=1)
    if a.mode == "slow":
        return 0 if result["probes_over_1s"] == 0 and result["probes_ok"] == result["probes"] else 1
    s = result["summary"]
    return 0 if not (s["over_deadline_plus_1s"] or s["over_4x_embed_rss"] or s["server_died"]) else 1


if __name__ == "__main__":
    sys.exit(main())
