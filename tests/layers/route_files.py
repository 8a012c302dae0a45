#!/usr/bin/env python3
"""Issue 78's route count, measured: which files of apps/embed/serve/ a request
to each route of `dlrt serve` runs code in, from its route-table row to its
answer (parse -> model registry -> capability -> format).

How it counts:
- A unit is a file stem of apps/embed/serve/: x.h and x.cpp are one unit.
- A unit counts for a request when one of its functions ran for it (self cost
  under callgrind) and it is not in SHARED: the HTTP framing and the server
  every request passes before and after its row (http_server, http_message,
  body_json, server_dispatch, server: the EmbedServer that hosts the Call,
  server_util's helpers) and the observers (metrics, serve_log). routes counts
  always: the row is there, and its opening runs for every POST route.
- Code under models/, tokenizer/ and image/ is the model's, not the route's.
- Only functions written in the file count: a struct's constructor or
  destructor that the compiler writes (the struct declares none) does not.
- Functions inlined into another are counted with the function they were
  inlined into (a Release build has no line tables); a unit whose every
  function ran inlined elsewhere is missed, which is why units are file stems
  (handlers.h, the declarations and request structs every family shares, has
  one such function: EmbedRequest::size()).

How it measures: it serves one folder of each kind (tests' committed tiny
models) in one `dlrt serve` under callgrind with --dump-before on the Call
constructor (every route makes one Call per request), sends one request per
route and kind it serves, and maps each dump's functions to serve/ files by
their definitions (class members to the file defining Class::name, else the
class's header; free functions to the file defining them). Needs valgrind;
takes a few minutes.

  route_files.py [--root DIR] [--dlrt DIR/build/dlrt] [--max N] [--verbose] [--keep DIR]

Prints each request's units and exits 1 when one passes --max (default 5) or
is not answered 200 (then it measured an error path, not a normal request).
"""
import argparse
import base64
import json
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import zlib

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SHARED = {"http_server", "http_message", "body_json", "server_dispatch", "server", "server_util", "metrics",
          "serve_log"}
ALWAYS = {"routes"}
# One committed folder per kind (as tests/serve/kind_folders.h), under the tree's root.
MODELS = [
    ("dense", "tests/embed/data/tiny_bert"),
    ("sparse", "tests/models/retrieval/splade_tiny"),
    ("multi_vector", "tests/models/retrieval/colbert_tiny"),
    ("cross_encoder", "tests/embed/data/cross_encoder_tiny"),
    ("llm_reranker", "tests/models/retrieval/qwen3_rerank"),
    ("clip", "tests/models/image/clip_tiny"),
]


def tiny_png():
    """An 8x8 RGB PNG, for an image input."""
    def chunk(kind, data):
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)
    rows = b"".join(b"\x00" + bytes(v for x in range(8) for v in (x * 30, y * 30, 128)) for y in range(8))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 8, 8, 8, 2, 0, 0, 0)) +
            chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


def requests():
    """(label, method, path, body) per route and kind that serves it."""
    image = {"image": "data:image/png;base64," + base64.b64encode(tiny_png()).decode()}
    post = [
        ("/v1/embeddings", "dense", {"input": ["a small text"]}),
        ("/v1/embeddings", "sparse", {"input": ["a small text"], "encoding_format": "sparse"}),
        ("/embeddings", "dense", {"input": "a small text"}),
        ("/embed", "dense", {"inputs": ["a small text"]}),
        ("/embed", "clip", {"inputs": [image]}),
        ("/embed_sparse", "sparse", {"inputs": ["a small text"]}),
        ("/embed_all", "dense", {"inputs": ["a small text"]}),
        ("/embed_all", "multi_vector", {"inputs": ["a small text"], "is_query": True}),
        ("/similarity", "dense", {"inputs": {"source_sentence": "a text", "sentences": ["another", "a third"]}}),
        ("/tokenize", "dense", {"inputs": "a small text"}),
        ("/decode", "dense", {"ids": [5, 6]}),
        ("/rerank", "cross_encoder", {"query": "q", "texts": ["a", "b"]}),
        ("/rerank", "llm_reranker", {"query": "q", "texts": ["a", "b"]}),
        ("/rerank", "multi_vector", {"query": "q", "texts": ["a", "b"]}),
        ("/v1/rerank", "cross_encoder", {"query": "q", "documents": ["a", "b"]}),
        ("/v2/rerank", "cross_encoder", {"query": "q", "documents": ["a", "b"]}),
        ("/predict", "cross_encoder", {"inputs": ["a", "b"]}),
        ("/v2/embed", "dense", {"texts": ["a small text", "another"], "input_type": "search_document",
                                "embedding_types": ["float", "int8"]}),
        ("/v2/embed", "clip", {"images": [image["image"]], "input_type": "image"}),
        ("/v1/embed", "dense", {"texts": ["a small text"]}),
        ("/", "dense", {"inputs": "a small text"}),
        ("/invocations", "sparse", {"inputs": "a small text"}),
    ]
    out = [(f"POST {p} ({kind})", "POST", p, dict(body, model=kind)) for p, kind, body in post]
    get = ["/v1/models", "/models/dense/info", "/health", "/ready", "/live", "/metrics", "/openapi.json",
           "/api-doc/openapi.json", "/docs", "/docs/swagger-ui.css", "/", "/ping"]
    out += [(f"GET {p}", "GET", p, None) for p in get]
    return out


def strip_templates(name):
    out, depth = [], 0
    for ch in name:
        if ch == "<":
            depth += 1
        elif ch == ">" and depth:
            depth -= 1
        elif depth == 0:
            out.append(ch)
    return "".join(out)


def qualified(symbol):
    """'dlrt::embed::Call::embed(...) const' -> ['Call', 'embed']; None outside dlrt::embed."""
    s = symbol.replace("(anonymous namespace)", "{anon}")
    s = strip_templates(s.replace("operator<", "operator_lt").replace("operator>", "operator_gt"))
    s = s.split("(", 1)[0].split()[-1] if s.split("(", 1)[0].split() else ""  # a template's return type goes
    if not s.startswith("dlrt::embed::"):
        return None
    parts = [p for p in s.split("::")[2:] if p not in ("{anon}", "server_util", "http")]
    return parts or None


def index_serve(root):
    """(classes, functions, texts): class name -> defining units; [Class::]name -> defining
    units; unit -> its files' text."""
    classes, functions, texts = {}, {}, {}
    serve = os.path.join(root, "apps", "embed", "serve")
    for f in sorted(os.listdir(serve)):
        if not f.endswith((".h", ".cpp")):
            continue
        text = open(os.path.join(serve, f), encoding="utf-8").read()
        unit = f.rsplit(".", 1)[0]
        texts[unit] = texts.get(unit, "") + text
        for m in re.finditer(r"^\s*(?:class|struct)\s+(?:\w+::)?(\w+)\b[^;{]*\{", text, re.M):
            classes.setdefault(m.group(1), set()).add(unit)
        # Definitions at namespace scope: a line at column 0 naming [Class::]name( whose
        # parameter list is followed by a body rather than ';'.
        for m in re.finditer(r"^(?![ /#}])[^\n;{}=]*?\b((?:\w+::)?~?\w+)\s*\(", text, re.M):
            rest = text[m.end():]
            semi, brace = rest.find(";"), rest.find("{")
            if brace != -1 and (semi == -1 or brace < semi):
                functions.setdefault(m.group(1), set()).add(unit)
    return classes, functions, texts


def units_of(parts, index):
    """The serve units a function of these name parts is written in (empty: not serve's)."""
    classes, functions, texts = index
    for i, p in enumerate(parts[:-1]):  # a member, or a member's lambda: Class::method()::{lambda}
        if p not in classes:
            continue
        member = parts[i + 1].split("{")[0]
        if member.lstrip("~") == p and not any(
                re.search(r"(?<![\w:])" + re.escape(member) + r"\s*\(", texts[u]) for u in classes[p]):
            return set()  # a special member the compiler writes (the struct declares none)
        return functions.get(p + "::" + member) or classes[p]
    if len(parts) == 1:
        return functions.get(parts[0].split("{")[0], set())
    return set()  # a member of a class that is not serve's (models/, image/, ...)


def dump_functions(path):
    """Function names with self cost in one callgrind dump."""
    names, ran, current, after_call = {}, set(), None, False
    for line in open(path, encoding="utf-8", errors="replace"):
        if line.startswith("fn="):
            m = re.match(r"fn=\((\d+)\)(?: (.*))?", line.rstrip("\n"))
            if m.group(2) is not None:
                names[m.group(1)] = m.group(2)
            current = names.get(m.group(1))
            after_call = False
        elif line.startswith(("cfn=", "cfi=", "cfl=")):
            m = re.match(r"c?f[nil]=\((\d+)\)(?: (.*))?", line.rstrip("\n"))
            if line.startswith("cfn=") and m and m.group(2) is not None:
                names[m.group(1)] = m.group(2)
        elif line.startswith("calls="):
            after_call = True
        elif line[:1].isdigit() or line[:1] in "+-*":
            if after_call:
                after_call = False
            elif current and any(int(v) for v in line.split()[1:] if v.lstrip("-").isdigit()):
                ran.add(current)
    return ran


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def send(port, method, path, body, timeout=900):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=data, method=method,
                                 headers={"Content-Type": "application/json"} if data else {})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def dumps(base):
    d, prefix = os.path.dirname(base), os.path.basename(base) + "."
    return sorted(int(f[len(prefix):]) for f in os.listdir(d) if f.startswith(prefix) and f[len(prefix):].isdigit())


def wait_for_dump(base, n, timeout=60):
    end = time.time() + timeout
    while time.time() < end:
        if dumps(base) and dumps(base)[-1] >= n:
            return
        time.sleep(0.2)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", default=ROOT, help="the source tree the binary was built from")
    ap.add_argument("--dlrt", help="the dlrt binary (default ROOT/build/dlrt)")
    ap.add_argument("--max", type=int, default=5)
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("--keep", help="keep the callgrind dumps in this folder")
    args = ap.parse_args()
    args.dlrt = args.dlrt or os.path.join(args.root, "build", "dlrt")
    if not shutil.which("valgrind"):
        print("route_files.py: valgrind is not installed; nothing measured", file=sys.stderr)
        return 2
    work = args.keep or tempfile.mkdtemp(prefix="route_files_")
    os.makedirs(work, exist_ok=True)
    base = os.path.join(work, "cg.out")
    port = free_port()
    cmd = ["valgrind", "--tool=callgrind", "--callgrind-out-file=" + base, "--dump-before=dlrt::embed::Call::Call*",
           args.dlrt, "serve", "--device", "cpu", "--threads", "1", "--pool-size", "1", "--port", str(port),
           "--request-timeout-ms", "900000", "--read-timeout-s", "300", "--no-access-log"]
    for name, folder in MODELS:
        cmd += ["--model", f"{name}={os.path.join(args.root, folder)}"]
    log = open(os.path.join(work, "serve.log"), "w")
    server = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    try:
        end = time.time() + 1200
        while time.time() < end:
            try:
                if send(port, "GET", "/ready", None, timeout=60)[0] == 200:
                    break
            except OSError:
                pass
            if server.poll() is not None:
                print(open(os.path.join(work, "serve.log")).read()[-3000:], file=sys.stderr)
                return 2
            time.sleep(2)
        index = index_serve(args.root)
        plan = requests() + [("(flush)", "GET", "/live", None)]
        time.sleep(1)
        last = dumps(base)[-1] if dumps(base) else 0
        ranges = []
        for label, method, path, body in plan:
            status, _ = send(port, method, path, body)
            time.sleep(1)  # the batcher's workers finish their bookkeeping within this request's dumps
            wait_for_dump(base, last + 1)
            now = dumps(base)[-1]
            ranges.append((label, status, last + 1, now))  # the dumps made while it ran
            last = now
        worst = 0
        print(f"files of apps/embed/serve/ per request (not counted: {', '.join(sorted(SHARED))})")
        for i, (label, status, first, end_) in enumerate(ranges[:-1]):
            # Its own dumps are the ones after its start dump, to the next request's start dump.
            mine = range(first + 1, ranges[i + 1][2] + 1)
            seen = {}
            for n in mine:
                for fn in dump_functions(f"{base}.{n}"):
                    parts = qualified(fn)
                    if parts:
                        for u in units_of(parts, index):
                            seen.setdefault(u, set()).add("::".join(parts))
            units = sorted((set(seen) | ALWAYS) - SHARED)
            worst = max(worst, len(units))
            flag = "" if status == 200 else f"  (answered {status}: not a normal request)"
            print(f"  {len(units)}  {label:34s} {', '.join(units)}{flag}")
            if args.verbose:
                for u in units:
                    for fn in sorted(seen.get(u, ())):
                        print(f"        {u}: {fn}")
            if status != 200:
                worst = max(worst, args.max + 1)
        print(f"most: {worst} (limit {args.max})")
        return 0 if worst <= args.max else 1
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=120)
        except subprocess.TimeoutExpired:
            server.kill()
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
