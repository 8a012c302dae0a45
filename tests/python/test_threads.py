"""One Session used from many Python threads; the GIL is released while a run executes."""
import ctypes
import ctypes.util
import gc
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import dlrt


def test_many_threads_one_session_same_results(test_models):
    s = dlrt.Session(os.path.join(test_models, "conv_net.onnx"), threads=1)
    rng = np.random.default_rng(3)
    shape = s.inputs[0].shape
    inputs = [rng.standard_normal(shape).astype(np.float32) for _ in range(24)]
    want = [s.run({"image": x})[0] for x in inputs]
    assert len({w.tobytes() for w in want}) == len(want), "distinct inputs should give distinct outputs"

    def run(i):
        return i, s.run({"image": inputs[i]}, report=True)

    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(run, list(range(len(inputs))) * 4))
    assert len(results) == 4 * len(inputs)
    for i, (outputs, report) in results:
        np.testing.assert_array_equal(outputs[0], want[i])
        assert report.partitions[0].backend == "cpu"


def test_many_threads_embedder():
    folder = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "embed", "data", "tiny_bert")
    model = dlrt.Embedder(folder, threads=1)
    texts = ["the cat sat on the mat.", "Hello, world!", "a big dog", "unaffable cats"]
    want = model.encode(texts)
    with ThreadPoolExecutor(max_workers=6) as pool:
        got = list(pool.map(lambda _: model.encode(texts), range(30)))
    for g in got:
        np.testing.assert_array_equal(g, want)


def test_gil_released_during_run(models):
    # A single-threaded MatMul of at least 80 ms runs in a thread while this
    # thread keeps running Python code and notes the longest pause between
    # two of its iterations. With the GIL held for the run, that pause would
    # be the whole run; released, it is a scheduling slice (a few ms).
    s = dlrt.Session(str(models / "matmul.onnx"), threads=1)
    n, one_run = 512, 0.0
    while True:
        a = np.ones((n, n), np.float32)
        s.run({"a": a, "b": a})  # first run of a shape plans it
        t0 = time.perf_counter()
        s.run({"a": a, "b": a})
        one_run = time.perf_counter() - t0
        if one_run >= 0.08 or n >= 4096:
            break
        n *= 2 if one_run < 0.02 else 1.25
        n = int(n)
    def longest_pause_while(fn):
        started = threading.Event()

        def work():
            started.set()
            fn()

        t = threading.Thread(target=work)
        last = time.perf_counter()
        t.start()
        started.wait()  # counted: a thread that keeps the GIL keeps this wait from returning
        longest = 0.0
        while t.is_alive():
            now = time.perf_counter()
            longest = max(longest, now - last)
            last = now
        t.join()
        return max(longest, time.perf_counter() - last)

    # The measure itself: a C call that keeps the GIL (ctypes.PyDLL does) for
    # as long as a run must show as a pause that long.
    libc = ctypes.PyDLL(ctypes.util.find_library("c"))
    held = longest_pause_while(lambda: libc.usleep(int(one_run * 1e6)))
    assert held > one_run / 2, f"the control held the GIL {one_run * 1e3:.1f} ms but the pause was {held * 1e3:.1f} ms"
    longest = longest_pause_while(lambda: s.run({"a": a, "b": a}))
    assert longest < one_run / 2, f"this thread stood still {longest * 1e3:.1f} ms of a {one_run * 1e3:.1f} ms run"


def _process_threads():
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("Threads:"))


def test_threads_above_the_bound_are_refused_before_any_starts(models):
    # dlrt.kMaxThreads (4096) bounds Session, Embedder and CrossEncoder as it bounds the
    # CLI's --threads and the C API: past it, dlrt.InvalidArgument (a ValueError) at once.
    # Unbounded, threads=100000 started threads until the process limit and never returned.
    folder = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "embed", "data", "tiny_bert")
    makers = [lambda n: dlrt.Session(str(models / "negate.onnx"), threads=n),
              lambda n: dlrt.Embedder(folder, threads=n),
              lambda n: dlrt.CrossEncoder(folder, threads=n)]
    # Threads of objects earlier tests left to the garbage collector end first; after that a
    # thread that ends late (a pool of an earlier test winding down on a loaded machine) can
    # only lower the count, and a refused constructor must not raise it.
    gc.collect()
    before = _process_threads()
    for make in makers:
        for n in (4097, 100000, 2**40, -1):
            t0 = time.perf_counter()
            with pytest.raises(dlrt.InvalidArgument, match=f"threads must be 0 \\(one per core\\) to 4096, got {n}"):
                make(n)
            # Refused before any thread starts: seconds at most even on a loaded machine
            # (unbounded, the first case never returned); the thread count below is exact.
            assert time.perf_counter() - t0 < 10.0
            assert _process_threads() <= before
    with pytest.raises(ValueError):
        dlrt.Session(str(models / "negate.onnx"), threads=100000)
    s = dlrt.Session(str(models / "negate.onnx"), threads=2)
    np.testing.assert_array_equal(s.run({"x": np.ones(3, np.float32)})[0], -np.ones(3, np.float32))
