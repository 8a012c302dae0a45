"""Ray Data batch embedding (dlrt.ray) against single-process dlrt.Embedder.encode, on the
same corpus and the same cores: texts/s of each, and the ratio (issue 40's target: >= 85%).

    PYTHONPATH=build/python build/python-venv/venv/bin/python bench/ray_embed.py \\
        [--model DIR] [--lines 20000] [--cpus 2] [--repeat 2] [--out bench/results]

--model defaults to the zoo's MiniLM (../shared/models/minilm_l6.onnx, $DLRT_ZOO_DIR) with
../shared/data's BERT vocabulary, assembled into a temporary folder (tests/embed/model_folder.py).
The single-process run uses one Embedder with --cpus threads; the Ray run a local cluster
of --cpus CPUs, --concurrency actors (default --cpus) of cpus // concurrency threads each,
reading Parquet and writing Parquet (the CLI's path). Each is timed end to end, best of
--repeat. Writes bench/results/<date>_ray_embed.json with the CPU name and date.
"""
import argparse
import datetime
import json
import os
import platform
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "python"))
sys.path.insert(0, os.path.join(ROOT, "tests", "embed"))


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


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model")
    p.add_argument("--lines", type=int, default=20000)
    p.add_argument("--cpus", type=int, default=len(os.sched_getaffinity(0)))
    p.add_argument("--concurrency", type=int, default=None)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--rows-per-batch", type=int, default=1000)
    p.add_argument("--repeat", type=int, default=2)
    p.add_argument("--out", default=os.path.join(ROOT, "bench", "results"))
    a = p.parse_args()
    concurrency = a.concurrency or a.cpus
    threads = max(1, a.cpus // concurrency)

    import pyarrow as pa
    import pyarrow.parquet as pq
    import ray

    import dlrt
    import dlrt.ray
    from test_ray import make_texts

    tmp = tempfile.mkdtemp(prefix="dlrt_ray_bench_")
    model = a.model or minilm_folder(tmp)
    texts = make_texts(a.lines)
    corpus = os.path.join(tmp, "corpus.parquet")
    pq.write_table(pa.table({"id": np.arange(a.lines), "text": texts}), corpus, row_group_size=2000)

    single = []
    e = dlrt.Embedder(model, device="cpu", threads=a.cpus)
    for _ in range(a.repeat):
        start = time.perf_counter()
        table = pq.read_table(corpus)
        v = e.encode(table.column("text").to_pylist(), batch_size=a.batch_size)
        single.append(time.perf_counter() - start)
    del e, v

    ray.init(num_cpus=a.cpus, include_dashboard=False, log_to_driver=False, configure_logging=False)
    ray.data.DataContext.get_current().enable_progress_bars = False
    runs = []
    for k in range(a.repeat):
        out = os.path.join(tmp, f"out{k}")
        start = time.perf_counter()
        ds = ray.data.read_parquet(corpus).repartition(target_num_rows_per_block=a.rows_per_batch)
        ds = dlrt.ray.embed_dataset(ds, model, concurrency=concurrency, rows_per_batch=a.rows_per_batch,
                                    batch_size=a.batch_size, threads=threads)
        ds.drop_columns(["text"]).write_parquet(out)
        runs.append(time.perf_counter() - start)
        assert pq.read_table(out).num_rows == a.lines
    ray.shutdown()

    single_tps = a.lines / min(single)
    ray_tps = a.lines / min(runs)
    result = {
        "date": datetime.datetime.now().isoformat(timespec="seconds"),
        "cpu": cpu_name(), "cpus": a.cpus, "lines": a.lines, "model": "minilm_l6 (zoo), max 128 tokens",
        "ray": ray.__version__, "concurrency": concurrency, "threads_per_actor": threads,
        "batch_size": a.batch_size, "rows_per_batch": a.rows_per_batch,
        "single_process_seconds": [round(s, 3) for s in single],
        "ray_seconds": [round(s, 3) for s in runs],
        "single_process_texts_per_s": round(single_tps, 1), "ray_texts_per_s": round(ray_tps, 1),
        "ratio": round(ray_tps / single_tps, 3),
        "load_average_at_end": os.getloadavg(),
    }
    print(f"single-process Embedder.encode ({a.cpus} threads): {single_tps:.0f} texts/s")
    print(f"Ray Data ({concurrency} actors x {threads} threads): {ray_tps:.0f} texts/s")
    print(f"ratio: {ray_tps / single_tps:.1%}")
    os.makedirs(a.out, exist_ok=True)
    path = os.path.join(a.out, f"{datetime.date.today().isoformat()}_ray_embed.json")
    with open(path, "w") as f:
        json.dump(result, f, indent=1)
        f.write("\n")
    print(path)


if __name__ == "__main__":
    main()
