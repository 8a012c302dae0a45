#!/usr/bin/env python3
"""Soak test of `dlrt serve` (issue 41): many connections for a bounded time,
a mix of good requests (whose vectors are checked against the first answer for
the same text) and hostile ones (malformed JSON, bodies over the limit, invalid
UTF-8, wrong types, ids outside the vocabulary, slow writers, slow readers,
requests cut off mid-body, Range headers, oversized chunked bodies). Prints and
writes (--json) the counts by class, the good requests' p50/p99 latency, the
server's RSS after warm-up and at the end, and whether /health is ok.

    bench/serve_soak.py --dlrt build/dlrt --model MODEL_DIR [--seconds 600] [--clients 16] [--json OUT]

Exit status 0 only when the server survived, every good request was answered
correctly, /health is ok at the end and RSS grew by less than --rss-growth-mb.
Not part of make test (it runs for minutes); standard library only."""
import argparse
import http.client
import json
import os
import random
import socket
import subprocess
import sys
import threading
import time

TEXTS = [f"the {a} {b} sat on the {c} number {i}" for i, (a, b, c) in enumerate(
    (a, b, c) for a in ("big", "small", "red") for b in ("cat", "dog", "bird") for c in ("mat", "sofa", "roof"))]


def rss_mb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return -1


class Soak:
    def __init__(self, port, seconds):
        self.port, self.end = port, time.time() + seconds
        self.lock = threading.Lock()
        self.counts = {}
        self.latencies = []
        self.reference = {}
        self.wrong = 0

    def count(self, key):
        with self.lock:
            self.counts[key] = self.counts.get(key, 0) + 1

    def conn(self, timeout=30):
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)

    def good(self, rng):
        texts = rng.sample(TEXTS, rng.randint(1, 8))
        c = self.conn()
        t = time.time()
        c.request("POST", "/v1/embeddings", json.dumps({"input": texts}), {"Content-Type": "application/json"})
        r = c.getresponse()
        body = r.read()
        c.close()
        if r.status == 429:
            return self.count("good: 429 busy (retryable)")
        if r.status != 200:
            self.count(f"good: HTTP {r.status} (wrong)")
            with self.lock:
                self.wrong += 1
            return
        data = json.loads(body)["data"]
        ok = len(data) == len(texts)
        with self.lock:
            for text, d in zip(texts, data):
                v = d["embedding"]
                ref = self.reference.setdefault(text, v)
                ok = ok and len(v) == len(ref) and max(abs(a - b) for a, b in zip(v, ref)) < 1e-4
            self.latencies.append(time.time() - t)
            if not ok:
                self.wrong += 1
        self.count("good: 200" if ok else "good: wrong vectors")

    def raw(self, payload, read=True, pause=0.0, close_early=False):
        s = socket.create_connection(("127.0.0.1", self.port), timeout=10)
        try:
            if pause:
                for part in (payload[:10], payload[10:]):
                    s.sendall(part)
                    time.sleep(pause)
            else:
                s.sendall(payload)
            if close_early:
                return b""
            if not read:
                time.sleep(0.5)
                return b""
            out = b""
            while True:
                try:
                    d = s.recv(65536)
                except socket.timeout:
                    break
                if not d:
                    break
                out += d
                if b"\r\n\r\n" in out and len(out) > 200:
                    break
            return out
        finally:
            s.close()

    def hostile(self, rng):
        kind = rng.choice(["bad_json", "too_big", "bad_utf8", "wrong_type", "bad_ids", "slow_writer", "slow_reader",
                           "cut_off", "range", "chunked_big"])
        head = lambda n, extra="": (f"POST /v1/embeddings HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                                    f"Content-Length: {n}\r\n{extra}\r\n").encode()
        try:
            if kind == "bad_json":
                body = b'{"input": ["a", '
                out = self.raw(head(len(body)) + body)
            elif kind == "too_big":
                body = b'{"input": "' + b"a" * (3 << 20) + b'"}'
                out = self.raw(head(len(body)) + body)
            elif kind == "bad_utf8":
                body = b'{"input": "\xff\xfe\xfd"}'
                out = self.raw(head(len(body)) + body)
            elif kind == "wrong_type":
                body = b'{"input": {"x": 1}, "dimensions": "big"}'
                out = self.raw(head(len(body)) + body)
            elif kind == "bad_ids":
                body = b'{"input": [[1, 99999999]]}'
                out = self.raw(head(len(body)) + body)
            elif kind == "slow_writer":
                body = json.dumps({"input": "slow"}).encode()
                out = self.raw(head(len(body)) + body, pause=0.3)
            elif kind == "slow_reader":
                body = json.dumps({"input": TEXTS[:8]}).encode()
                out = self.raw(head(len(body)) + body, read=False)
            elif kind == "cut_off":
                body = json.dumps({"input": TEXTS[:4]}).encode()
                out = self.raw(head(len(body)) + body[: len(body) // 2], close_early=True)
            elif kind == "range":
                out = self.raw(b"GET /metrics HTTP/1.1\r\nHost: x\r\nRange: bytes=" +
                               b",".join(b"%d-%d" % (i, i) for i in range(2000)) + b"\r\n\r\n")
            else:
                chunk = b"a" * 65536
                payload = (b"POST /v1/embeddings HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                           b"Transfer-Encoding: chunked\r\n\r\n" + (b"%x\r\n" % len(chunk) + chunk + b"\r\n") * 48)
                out = self.raw(payload)
            status = out.split(b" ", 2)[1].decode() if out.startswith(b"HTTP/1.1") else "no answer"
            self.count(f"hostile {kind}: {status}")
        except OSError as e:
            self.count(f"hostile {kind}: {type(e).__name__}")

    def client(self, k):
        rng = random.Random(k)
        while time.time() < self.end:
            if rng.random() < 0.7:
                try:
                    self.good(rng)
                except Exception as e:  # a good request that got no answer
                    self.count(f"good: {type(e).__name__} (wrong)")
                    with self.lock:
                        self.wrong += 1
            else:
                self.hostile(rng)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dlrt", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--seconds", type=float, default=600)
    ap.add_argument("--clients", type=int, default=16)
    ap.add_argument("--rss-growth-mb", type=float, default=64)
    ap.add_argument("--json")
    a = ap.parse_args()
    log = open("/tmp/dlrt_soak_server.log", "w")
    server = subprocess.Popen([a.dlrt, "serve", "--model", a.model, "--port", "0", "--access-log", "false",
                               "--http-threads", "32"], stdout=log, stderr=subprocess.STDOUT)
    port = None
    for _ in range(600):
        text = open("/tmp/dlrt_soak_server.log").read()
        if "ready in" in text:
            port = int(text.split("listening on http://")[1].split(":")[1].split(" ")[0])
            break
        time.sleep(0.1)
    if port is None:
        print("the server did not start:\n" + open("/tmp/dlrt_soak_server.log").read())
        return 1
    soak = Soak(port, a.seconds)
    warm_end = time.time() + min(30, a.seconds / 10)
    threads = [threading.Thread(target=soak.client, args=(k,)) for k in range(a.clients)]
    for t in threads:
        t.start()
    while time.time() < warm_end:
        time.sleep(0.5)
    rss_start = rss_mb(server.pid)
    for t in threads:
        t.join()
    alive = server.poll() is None
    rss_end = rss_mb(server.pid) if alive else -1
    health = None
    if alive:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        c.request("GET", "/health")
        health = json.loads(c.getresponse().read())["status"]
    lat = sorted(soak.latencies)
    p = lambda q: lat[min(len(lat) - 1, int(q * len(lat)))] * 1000 if lat else float("nan")
    result = {"date": time.strftime("%Y-%m-%d"), "model": os.path.basename(a.model.rstrip("/")), "seconds": a.seconds,
              "clients": a.clients, "counts": dict(sorted(soak.counts.items())), "good_wrong": soak.wrong,
              "good_p50_ms": round(p(0.5), 2), "good_p99_ms": round(p(0.99), 2), "rss_mb_after_warmup": round(rss_start, 1),
              "rss_mb_end": round(rss_end, 1), "server_alive": alive, "health": health,
              "cpu": next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")}
    print(json.dumps(result, indent=1))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(result, f, indent=1)
    server.terminate()
    server.wait(timeout=60)
    ok = alive and soak.wrong == 0 and health == "ok" and rss_end - rss_start < a.rss_growth_mb
    print("soak:", "ok" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
