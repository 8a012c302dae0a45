"""The output types int8 / uint8 / binary / ubinary (apps/embed/models/output_type.h,
docs/embed-output-types.md) equal sentence-transformers' quantize_embeddings on the same float32 vectors:
the quantizer itself on random and bucket-edge vectors, Embedder.encode(precision=...),
`dlrt embed --precision` and dlrt serve's /v1/embeddings (encoding_format, output_dtype, ranges,
calibration_embeddings).

The reference is the library's own quantize_embeddings, read from the sentence-transformers wheel
of scripts/pins.sh (QUANTIZE_REFERENCE_WHEEL, which scripts/test_python.sh downloads into
BUILD/st-reference; or $DLRT_ST_REFERENCE_WHEEL) and run with numpy: the function needs torch
only for torch inputs, so its two functions are compiled from the wheel's source without
importing the package (which imports torch and transformers)."""
import __future__
import ast
import base64
import glob
import json
import logging
import os
import re
import subprocess
import time
import urllib.error
import urllib.request
import zipfile

import numpy as np
import pytest

import dlrt
from conftest import ROOT

TINY = os.path.join(ROOT, "tests", "embed", "data", "tiny_bert")
TYPES = ("int8", "uint8", "binary", "ubinary")
TEXTS = ["the cat sat on the mat.", "a big dog", "hello world", "the", "dogs and cats", "a mat", "sat"]
BUILD = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(dlrt._dlrt.__file__))))


def _reference_wheel():
    wheel = os.environ.get("DLRT_ST_REFERENCE_WHEEL")
    if wheel:
        return wheel
    found = sorted(glob.glob(os.path.join(BUILD, "st-reference", "sentence_transformers-*.whl")))
    if not found:
        pytest.skip(f"no sentence-transformers wheel in {BUILD}/st-reference (scripts/test_python.sh downloads "
                    "QUANTIZE_REFERENCE_WHEEL of scripts/pins.sh) nor $DLRT_ST_REFERENCE_WHEEL")
    return found[-1]


@pytest.fixture(scope="module")
def st_quantize():
    """sentence_transformers.quantize_embeddings, compiled from the wheel's source."""
    wheel = _reference_wheel()
    with zipfile.ZipFile(wheel) as z:
        names = [n for n in z.namelist() if n.endswith("quantization.py") and n.startswith("sentence_transformers/")]
        assert names, f"{wheel} has no sentence_transformers/.../quantization.py"
        source = z.read(names[0]).decode()
    wanted = ("quantize_embeddings", "_get_quantization_ranges")
    body = [n for n in ast.parse(source).body if isinstance(n, ast.FunctionDef) and n.name in wanted]
    code = compile(ast.Module(body=body, type_ignores=[]), f"{wheel}/{names[0]}", "exec",
                   flags=__future__.annotations.compiler_flag, dont_inherit=True)

    class Tensor:  # isinstance(numpy array, Tensor) is False, as with torch's
        pass

    namespace = {"np": np, "Tensor": Tensor, "logger": logging.getLogger("st_reference"), "_tensor_to_numpy": None}
    exec(code, namespace)
    return namespace["quantize_embeddings"]


def expect_equal(got, want, what):
    assert got.dtype == want.dtype and got.shape == want.shape, (what, got.dtype, want.dtype, got.shape, want.shape)
    np.testing.assert_array_equal(got, want, err_msg=what)


def edge_vectors(lo, hi, dim):
    """Values at and one float32 step either side of every bucket edge lo + k * (hi - lo) / 255."""
    k = np.arange(256)
    edges = (lo.astype(np.float64) + k[:, None] * (hi.astype(np.float64) - lo) / 255).astype(np.float32)
    below = np.nextafter(edges, np.float32(-np.inf))
    above = np.nextafter(edges, np.float32(np.inf))
    return np.concatenate([edges, below, above]).reshape(-1, dim)


@pytest.mark.parametrize("dim", [384, 13])
def test_quantizer_equals_library(st_quantize, dim):
    rng = np.random.default_rng(dim)
    x = rng.standard_normal((64, dim)).astype(np.float32)
    calibration = rng.standard_normal((200, dim)).astype(np.float32) * 0.8  # narrower: some values clip
    ranges = np.vstack([calibration.min(axis=0), calibration.max(axis=0)])
    edges = edge_vectors(ranges[0], ranges[1], dim)
    x[:, 0] = 0.0  # bit 0, and a zero-width batch range in dimension 0
    for p in TYPES:
        expect_equal(dlrt._dlrt._quantize_embeddings(x, p), st_quantize(x, p), f"{p} batch ranges, dim {dim}")
        if p.endswith("int8"):
            for what, kwargs in (("ranges", {"ranges": ranges}), ("calibration", {"calibration_embeddings": calibration})):
                for rows in (x, edges):
                    expect_equal(dlrt._dlrt._quantize_embeddings(rows, p, **kwargs), st_quantize(rows, p, **kwargs),
                                 f"{p} {what}, dim {dim}")
    for p in ("int8", "uint8"):
        with pytest.raises(dlrt.InvalidArgument, match="single embedding"):
            dlrt._dlrt._quantize_embeddings(x[:1], p)
        with pytest.raises(ValueError, match="single embedding"):
            st_quantize(x[:1], p)


@pytest.fixture(scope="module")
def embedder():
    return dlrt.Embedder(TINY, device="cpu", threads=1)


def test_embedder_precision_equals_library(st_quantize, embedder):
    vectors = embedder.encode(TEXTS)
    for p in TYPES:
        expect_equal(embedder.encode(TEXTS, precision=p), st_quantize(vectors, p), f"encode(precision={p!r})")
    five = embedder.encode(TEXTS, truncate_dim=5)  # 5 bits: one byte per row, zero-padded
    expect_equal(embedder.encode(TEXTS, truncate_dim=5, precision="ubinary"), st_quantize(five, "ubinary"), "5 dims")
    with pytest.raises(ValueError, match="single embedding"):
        embedder.encode("a big dog", precision="int8")


def cli(*args):
    path = os.path.join(BUILD, "dlrt")
    if not os.path.isfile(path):
        pytest.skip(f"no dlrt CLI next to the module ({path}): build the dlrt target")
    return subprocess.run([path, "embed", "--model", TINY, "--device", "cpu", "--threads", "1", "--quiet", *args],
                          capture_output=True, text=True, timeout=300)


def test_cli_precision_equals_library(st_quantize, tmp_path):
    done = cli("--json", "--", *TEXTS)
    assert done.returncode == 0, done.stderr
    vectors = np.array([row["embedding"] for row in json.loads(done.stdout)["data"]], np.float32)
    calibration = np.vstack([vectors * 0.9, vectors.max(axis=0, keepdims=True) * 0.5])
    np.save(tmp_path / "calibration.npy", calibration)
    for p in TYPES:
        want = st_quantize(vectors, p)
        done = cli("--json", "--precision", p, "--", *TEXTS)
        assert done.returncode == 0, done.stderr
        out = json.loads(done.stdout)
        assert out["precision"] == p
        expect_equal(np.array([r["embedding"] for r in out["data"]], want.dtype), want, f"--precision {p} --json")
        done = cli("--npy", str(tmp_path / f"{p}.npy"), "--precision", p, "--", *TEXTS)
        assert done.returncode == 0, done.stderr
        expect_equal(np.load(tmp_path / f"{p}.npy"), want, f"--precision {p} --npy")
        done = cli("--precision", p, "--", *TEXTS)
        assert done.returncode == 0, done.stderr
        lines = [[int(v) for v in line.split()] for line in done.stdout.splitlines()]
        expect_equal(np.array(lines, want.dtype), want, f"--precision {p} (text)")
        if p.endswith("int8"):
            want = st_quantize(vectors, p, calibration_embeddings=calibration)
            done = cli("--npy", str(tmp_path / "c.npy"), "--precision", p, "--calibration",
                       str(tmp_path / "calibration.npy"), "--", *TEXTS)
            assert done.returncode == 0, done.stderr
            expect_equal(np.load(tmp_path / "c.npy"), want, f"--precision {p} --calibration")
            np.save(tmp_path / "calibration64.npy", calibration.astype(np.float64) * 1.01)
            want = st_quantize(vectors, p, calibration_embeddings=calibration.astype(np.float64) * 1.01)
            done = cli("--npy", str(tmp_path / "c64.npy"), "--precision", p, "--calibration",
                       str(tmp_path / "calibration64.npy"), "--", *TEXTS)
            assert done.returncode == 0, done.stderr
            expect_equal(np.load(tmp_path / "c64.npy"), want, f"--precision {p} --calibration (float64)")
    done = cli("--precision", "int8", "--", "one text")
    assert done.returncode == 2 and "single embedding" in done.stderr, done.stderr
    done = cli("--precision", "float16", "--", "a")
    assert done.returncode == 2 and "--precision must be one of" in done.stderr, done.stderr
    done = cli("--precision", "binary", "--calibration", str(tmp_path / "calibration.npy"), "--", "a", "b")
    assert done.returncode == 2 and "--calibration applies to" in done.stderr, done.stderr


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """`dlrt serve` on tiny_bert on a free port; its URL once it says it is ready."""
    path = os.path.join(BUILD, "dlrt")
    if not os.path.isfile(path):
        pytest.skip(f"no dlrt CLI next to the module ({path}): build the dlrt target")
    log = tmp_path_factory.mktemp("serve") / "serve.log"
    with open(log, "w") as out:
        proc = subprocess.Popen([path, "serve", "--model", TINY, "--port", "0", "--device", "cpu", "--threads", "1",
                                 "--access-log", "false"], stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        text = ""
        while "ready in" not in text and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)  # polls the log for readiness; the result does not depend on timing
            text = log.read_text()
        assert "ready in" in text, text
        port = re.search(r"listening on https?://[^:\s]*:(\d+)", text).group(1)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(timeout=60)


def post(url, body, path="/v1/embeddings"):
    req = urllib.request.Request(url + path, data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def rows(answer, dtype):
    return np.array([d["embedding"] for d in answer["data"]], dtype)


def test_cohere_embedding_types_equal_library(st_quantize, server):
    # Cohere's /v2/embed and /v1/embed: every type in one answer, each quantize_embeddings of that answer's floats.
    for route in ("/v2/embed", "/v1/embed"):
        for extra in ({}, {"output_dimension": 5}):
            body = {"input_type": "search_document", "texts": TEXTS, "embedding_types": ["float", *TYPES], **extra}
            status, got = post(server, body, route)
            assert status == 200, got
            vectors = np.array(got["embeddings"]["float"], np.float32)
            for p in TYPES:
                want = st_quantize(vectors, p)
                expect_equal(np.array(got["embeddings"][p], want.dtype), want, f"{route} {p} {extra}")
    r = [[-1.0] * 8, [1.0] * 8]
    one = {"input_type": "search_query", "texts": ["a big dog"], "embedding_types": ["float", "int8"], "ranges": r}
    status, got = post(server, one, "/v2/embed")
    assert status == 200, got
    want = st_quantize(np.array(got["embeddings"]["float"], np.float32), "int8", ranges=np.array(r, np.float32))
    expect_equal(np.array(got["embeddings"]["int8"], np.int8), want, "/v2/embed int8 with ranges")


def test_server_output_types_equal_library(st_quantize, server):
    for extra in ({}, {"dimensions": 5}):
        status, floats = post(server, {"input": TEXTS, **extra})
        assert status == 200, floats
        vectors = rows(floats, np.float32)
        calibration = np.vstack([vectors * 0.9, vectors.max(axis=0, keepdims=True) * 0.5])
        ranges = np.vstack([calibration.min(axis=0), calibration.max(axis=0)])
        for p in TYPES:
            want = st_quantize(vectors, p)
            for form in ({"encoding_format": p}, {"output_dtype": p}, {"output_dtype": p, "encoding_format": "float"}):
                status, got = post(server, {"input": TEXTS, **form, **extra})
                assert status == 200, (form, got)
                expect_equal(rows(got, want.dtype), want, f"{form} {extra}")
            status, got = post(server, {"input": TEXTS, "output_dtype": p, "encoding_format": "base64", **extra})
            assert status == 200, got
            raw = np.array([np.frombuffer(base64.b64decode(d["embedding"]), want.dtype) for d in got["data"]])
            expect_equal(raw, want, f"{p} base64 {extra}")
            if p.endswith("int8"):
                for field, value, kwargs in (("ranges", ranges, {"ranges": ranges}),
                                             ("calibration_embeddings", calibration,
                                              {"calibration_embeddings": calibration})):
                    want = st_quantize(vectors, p, **kwargs)
                    status, got = post(server, {"input": TEXTS, "output_dtype": p, field: value.tolist(), **extra})
                    assert status == 200, got
                    expect_equal(rows(got, want.dtype), want, f"{p} {field} {extra}")
    # One input and nothing to calibrate on: refused as the library refuses it; with ranges, quantized.
    status, got = post(server, {"input": "a big dog", "encoding_format": "int8"})
    assert status == 422 and "single embedding" in got["error"]["message"], got
    status, one = post(server, {"input": "a big dog"})
    r = [[-1.0] * 8, [1.0] * 8]
    status, got = post(server, {"input": "a big dog", "output_dtype": "uint8", "ranges": r})
    assert status == 200, got
    expect_equal(rows(got, np.uint8), st_quantize(rows(one, np.float32), "uint8", ranges=np.array(r, np.float32)),
                 "one input with ranges")
    for bad, message in (({"encoding_format": "int4"}, "'encoding_format' must be"),
                         ({"output_dtype": "float32"}, "'output_dtype' must be"),
                         ({"encoding_format": "int8", "output_dtype": "uint8"}, "different output types"),
                         ({"output_dtype": "binary", "ranges": r}, "applies to the int8 and uint8"),
                         ({"output_dtype": "int8", "ranges": [[0.0] * 8]}, "'ranges' must be"),
                         ({"output_dtype": "int8", "ranges": [[0.0] * 3, [1.0] * 3]}, "3 values per row"),
                         ({"output_dtype": "int8", "calibration_embeddings": [[1.0, 2.0], [1.0]]}, "must be a non-empty"),
                         ({"output_dtype": "int8", "ranges": r, "calibration_embeddings": r}, "not both"),
                         ({"output_dtype": "int8", "ranges": [[0.0] * 8, [1e39] * 8]}, "'ranges' must be"),
                         ({"output_dtype": "int8", "encoding_format": "sparse"}, "does not apply to sparse")):
        status, got = post(server, {"input": TEXTS, **bad})
        assert status == 422 and message in got["error"]["message"], (bad, got)
    status, got = post(server, {"input": TEXTS, "output_dtype": "int8", "calibration_embeddings": [[0.0]] * 65537})
    assert status == 413 and "calibration_embeddings" in got["error"]["message"], got
