"""dlrt.ray: Ray Data batch embedding (docs/python-ray.md) on a local cluster of
2 CPUs, over a generated corpus of 8,000 lines with ids and the zoo's MiniLM: every id
exactly once, vectors as single-process dlrt.Embedder.encode gives them, an actor process
killed mid-job, and the bad-row policy. Skipped without Ray (scripts/test_python.sh
installs it) or without the zoo."""
import json
import os
import signal
import sys
import time

import numpy as np
import pytest

import dlrt
import dlrt.ray
from conftest import run_python

N_LINES = 2_000
SAMPLE = 500
WORDS = ("apple banana river mountain music science history ocean forest city train garden "
         "computer language window winter summer coffee market school doctor football").split()


def test_import_without_ray_fails_only_when_used():
    out = run_python(
        "import sys; sys.modules['ray'] = None\n"
        "import dlrt.ray\n"
        "try:\n    dlrt.ray.embed_dataset(None, 'x')\n"
        "except ImportError as e:\n    print('ImportError:', e)\n")
    assert "ImportError: dlrt.ray needs Ray Data" in out and "pip install" in out


def test_clean_policy_without_ray():
    c = dlrt.ray._clean
    assert c("a b") == ("a b", "ok")
    assert c("") == ("", "empty") and c("  ") == ("  ", "empty")
    assert c(None) == ("", "null") and c(float("nan")) == ("", "null")
    assert c(b"caf\xc3\xa9") == ("caf\u00e9", "ok")
    assert c(b"bad \xff\xfe end") == ("bad \ufffd\ufffd end", "invalid_utf8_replaced")
    assert c("lone \udcff x") == ("lone \ufffd x", "invalid_utf8_replaced")
    with pytest.raises(TypeError):
        c(3)


def test_arrow_string_fast_path_matches_clean():
    """A pyarrow string / large_string batch skips the per-row _clean: same texts, same statuses."""
    pa = pytest.importorskip("pyarrow")
    assert dlrt.ray._WHITESPACE == "".join(chr(c) for c in range(0x110000) if chr(c).isspace())
    e = dlrt.ray.Embed.__new__(dlrt.ray.Embed)  # no model: only the text step
    e.text_column, e.status_column = "text", "status"
    values = ["a b", "", "  ", None, "\u3000\x1c", "x\u2028", "\u200b", "caf\u00e9", "\x00", "\t\n"]
    want = [dlrt.ray._clean(v) for v in values]
    for typ in (pa.string(), pa.large_string()):
        texts, statuses = e._arrow_texts(pa.table({"id": range(len(values)), "text": pa.array(values, typ)}))
        assert texts == [t for t, _ in want]
        assert statuses.to_pylist() == [s for _, s in want]
    assert e._arrow_texts(pa.table({"text": pa.array([b"x"], pa.binary())})) is None  # bytes: per row


def test_cli_rows_per_batch_even_blocks():
    from dlrt.ray.embed import rows_per_batch_for

    assert rows_per_batch_for(None, 2) == 1024  # the count is not known (JSON Lines)
    assert rows_per_batch_for(20_000, 2) == 3334  # 6 blocks, 3 per actor
    assert rows_per_batch_for(100_000, 2) == 3847  # 26 blocks, 13 per actor
    assert rows_per_batch_for(3, 2) == 2 and rows_per_batch_for(1, 4) == 1
    for rows in (1, 999, 20_000, 123_457, 10**7):
        for actors in (1, 2, 3, 16):
            r = rows_per_batch_for(rows, actors)
            blocks = -(-rows // r)
            assert 1 <= r <= 4096 and (blocks % actors == 0 or blocks < actors), (rows, actors, r)


@pytest.fixture(scope="module")
def ray_cluster():
    ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'ray[data]'; "
                                            "scripts/test_python.sh installs it)")
    environ, path = dict(os.environ), list(sys.path)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             configure_logging=False, namespace="dlrt_test_ray")
    ctx = ray.data.DataContext.get_current()
    ctx.enable_progress_bars = False
    yield ray
    ray.shutdown()
    # Later tests start interpreters with this one's environment and sys.path (run_python):
    # leave them as they were before Ray added its own.
    os.environ.clear()
    os.environ.update(environ)
    sys.path[:] = path


@pytest.fixture(scope="module")
def minilm(minilm_folder):
    return str(minilm_folder)


def make_texts(n):
    rng = np.random.default_rng(40)
    lengths = rng.integers(3, 12, n)
    picks = rng.integers(0, len(WORDS), int(lengths.sum()))
    texts, at = [], 0
    for i, k in enumerate(lengths):
        texts.append(f"line {i} " + " ".join(WORDS[j] for j in picks[at:at + k]))
        at += k
    return texts


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    texts = make_texts(N_LINES)
    ids = np.arange(N_LINES, dtype=np.int64) * 7 + 3  # not the row numbers
    path = tmp_path_factory.mktemp("corpus") / "corpus.parquet"
    pq.write_table(pa.table({"id": ids, "text": texts}), path, row_group_size=500)
    return {"path": str(path), "ids": ids, "texts": texts}


@pytest.fixture(scope="module")
def reference(minilm, corpus):
    rows = np.random.default_rng(7).choice(N_LINES, SAMPLE, replace=False)
    e = dlrt.Embedder(minilm, device="cpu", threads=2)
    return {int(corpus["ids"][r]): v for r, v in zip(rows, e.encode([corpus["texts"][r] for r in rows]))}


def read_output(folder):
    import pyarrow.parquet as pq

    return pq.read_table(folder)


def check_output(table, corpus, reference, column="embedding"):
    import pyarrow as pa

    ids = table.column("id").to_numpy()
    assert len(ids) == N_LINES, f"{len(ids)} rows written, expected {N_LINES}"
    assert len(np.unique(ids)) == N_LINES, "an id is written twice"
    assert set(ids.tolist()) == set(corpus["ids"].tolist()), "an id is missing"
    col = table.column(column)
    assert pa.types.is_fixed_size_list(col.type) and col.type.list_size == 384
    assert col.type.value_type == pa.float32()
    vectors = col.combine_chunks().flatten().to_numpy().reshape(-1, 384)
    where = {int(i): k for k, i in enumerate(ids)}
    got = np.stack([vectors[where[i]] for i in reference])
    want = np.stack(list(reference.values()))
    cos = (got * want).sum(1) / np.linalg.norm(got, axis=1) / np.linalg.norm(want, axis=1)
    assert cos.min() >= 0.9999, f"min cosine {cos.min()}"
    return cos.min()


def test_cli_parquet_every_id_once_and_vectors_match(ray_cluster, minilm, corpus, reference, tmp_path, capsys):
    from dlrt.ray import embed

    out = tmp_path / "out"
    start = time.perf_counter()
    rc = embed.main(["--input", corpus["path"], "--text-column", "text", "--id-column", "id",
                     "--model", minilm, "--output", str(out), "--concurrency", "2", "--batch-size", "32"])
    seconds = time.perf_counter() - start
    assert rc == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["rows"] == N_LINES and summary["threads_per_actor"] == 1
    table = read_output(out)
    assert sorted(table.column_names) == ["embedding", "id"]
    cos = check_output(table, corpus, reference)
    print(f"ray embed: {N_LINES} lines in {seconds:.1f} s, min cosine {cos:.6f} over {SAMPLE} rows")


def test_actor_killed_mid_job_every_id_once(ray_cluster, minilm, corpus, reference, tmp_path):
    ray = ray_cluster
    marker = str(tmp_path / "killed")
    calls_file = str(tmp_path / "calls")

    class KilledOnce(dlrt.ray.Embed):  # defined here: Ray pickles it by value
        calls = 0

        def __call__(self, batch):
            KilledOnce.calls += 1
            with open(calls_file, "a") as f:
                f.write(f"{os.getpid()}\n")
            if KilledOnce.calls == 3:
                try:
                    os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
                except FileExistsError:
                    pass
                else:
                    os.kill(os.getpid(), signal.SIGKILL)  # the actor's process dies mid-job
            return super().__call__(batch)

    ds = ray.data.read_parquet(corpus["path"]).repartition(target_num_rows_per_block=100)
    ds = ds.map_batches(KilledOnce, compute=ray.data.ActorPoolStrategy(size=2), batch_size=100, batch_format="pyarrow", num_cpus=0.5,
                        fn_constructor_kwargs={"model": minilm, "concurrency": 2})
    out = tmp_path / "out"
    ds.drop_columns(["text"]).write_parquet(str(out))
    assert os.path.exists(marker), "no actor was killed"
    with open(calls_file) as f:
        pids = f.read().split()
    assert len(set(pids)) >= 3, f"expected a restarted actor (a third process), saw {len(set(pids))}"
    check_output(read_output(out), corpus, reference)
    print(f"fault test: one actor SIGKILLed on its 3rd batch, {len(pids)} batch calls in "
          f"{len(set(pids))} processes, every id once")


def test_bad_rows(ray_cluster, minilm):
    import pandas as pd
    import pyarrow as pa

    ray = ray_cluster
    e = dlrt.Embedder(minilm, device="cpu", threads=1)
    long_line = ("river mountain " * 70_000)[:1_000_000]  # 1 MB of text, far over 128 tokens
    texts = ["a normal line", "", None, "lone \udcff surrogate", long_line]
    df = pd.DataFrame({"id": range(len(texts)), "text": texts})
    ds = ray.data.from_pandas(df).map_batches(
        dlrt.ray.Embed, compute=ray.data.ActorPoolStrategy(size=1), batch_size=8, batch_format="pandas", num_cpus=0.5,
        fn_constructor_kwargs={"model": minilm, "threads": 1, "status_column": "status"})
    rows = sorted(ds.take_all(), key=lambda r: r["id"])
    assert [r["status"] for r in rows] == ["ok", "empty", "null", "invalid_utf8_replaced", "ok"]
    got = np.stack([np.asarray(r["embedding"], np.float32) for r in rows])
    assert np.isfinite(got).all()
    want = e.encode(["a normal line", "", "", "lone \ufffd surrogate", long_line])
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    # The 1 MB line is truncated to max_seq_length (128) tokens: as its first 126 words.
    np.testing.assert_allclose(got[4], e.encode(" ".join(long_line.split()[:126])), rtol=1e-4, atol=1e-5)

    raw = [b"caf\xc3\xa9 au lait", b"bad \xff\xfe bytes", b""]
    table = pa.table({"id": [0, 1, 2], "text": pa.array(raw, pa.binary())})
    rows = sorted(ray.data.from_arrow(table).map_batches(
        dlrt.ray.Embed, compute=ray.data.ActorPoolStrategy(size=1), batch_size=8, batch_format="pyarrow", num_cpus=0.5,
        fn_constructor_kwargs={"model": minilm, "threads": 1, "status_column": "status"}).take_all(),
        key=lambda r: r["id"])
    assert [r["status"] for r in rows] == ["ok", "invalid_utf8_replaced", "empty"]
    want = e.encode(["caf\u00e9 au lait", "bad \ufffd\ufffd bytes", ""])
    np.testing.assert_allclose(np.stack([np.asarray(r["embedding"]) for r in rows]), want, rtol=1e-4, atol=1e-5)

    # A pyarrow string column (Parquet's usual text column) takes the vectorised path.
    table = pa.table({"id": [0, 1, 2, 3], "text": pa.array(["a normal line", None, " \t", "last"], pa.string())})
    rows = sorted(ray.data.from_arrow(table).map_batches(
        dlrt.ray.Embed, compute=ray.data.ActorPoolStrategy(size=1), batch_size=8, batch_format="pyarrow", num_cpus=0.5,
        fn_constructor_kwargs={"model": minilm, "threads": 1, "status_column": "status"}).take_all(),
        key=lambda r: r["id"])
    assert [r["status"] for r in rows] == ["ok", "null", "empty", "ok"]
    want = e.encode(["a normal line", "", " \t", "last"])
    np.testing.assert_allclose(np.stack([np.asarray(r["embedding"]) for r in rows]), want, rtol=1e-4, atol=1e-5)


def test_cli_text_file_with_invalid_utf8(ray_cluster, minilm, tmp_path, capsys):
    import pyarrow as pa

    from dlrt.ray import embed

    lines = [b"first line", b"", b"caf\xe9 latin-1 byte", b"last line"]
    path = tmp_path / "corpus.txt"
    path.write_bytes(b"\n".join(lines) + b"\n")
    out = tmp_path / "out"
    assert embed.main(["--input", str(path), "--model", minilm, "--output", str(out),
                       "--concurrency", "1", "--status-column", "status"]) == 0
    table = read_output(out).sort_by("id")
    assert table.column("id").to_pylist() == [0, 1, 2, 3]
    assert table.column("status").to_pylist() == ["ok", "empty", "invalid_utf8_replaced", "ok"]
    assert "text" not in table.column_names and pa.types.is_fixed_size_list(table.column("embedding").type)
    e = dlrt.Embedder(minilm, device="cpu", threads=1)
    want = e.encode([line.decode("utf-8", "replace") for line in lines])
    got = table.column("embedding").combine_chunks().flatten().to_numpy().reshape(-1, 384)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
