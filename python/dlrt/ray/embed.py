"""python -m dlrt.ray.embed: embed a corpus with Ray Data and dlrt.Embedder, write Parquet.

    python -m dlrt.ray.embed --input corpus.parquet --text-column text --id-column id \\
        --model all-MiniLM-L6-v2/ --output out/ [--concurrency N] [--batch-size B]

--input     a .parquet file or folder, a .jsonl/.json file (one object per line), or a .txt
            file (one text per line; an "id" column with the 0-based line number is added,
            and the file is read on the driver: use Parquet or JSONL for big corpora).
--output    a folder; Ray Data writes Parquet files into it: the --id-column columns (all
            input columns but the text when none is given) and --output-column, a
            fixed_size_list<float32>[dimension] column.
--address   a running Ray cluster ("auto", "ray://host:10001"); default: a local one.
The bad-row policy is dlrt.ray's (docs/python-ray.md); --status-column adds a
column that says per row what it did. Prints a JSON summary line at the end.
"""

import argparse
import json
import os
import sys
import time

from . import _import_ray, embed_dataset


def read_input(ray, path, text_column, parallelism):
    lower = path.lower()
    if lower.endswith(".txt"):
        import pyarrow as pa

        with open(path, "rb") as f:
            lines = f.read().split(b"\n")
        if lines and lines[-1] == b"":
            lines.pop()
        lines = [line[:-1] if line.endswith(b"\r") else line for line in lines]
        table = pa.table({"id": pa.array(range(len(lines)), pa.int64()), text_column: pa.array(lines, pa.binary())})
        return ray.data.from_arrow(table)
    if lower.endswith((".jsonl", ".json", ".ndjson")):
        return ray.data.read_json(path, lines=True)
    return ray.data.read_parquet(path)


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m dlrt.ray.embed", description=__doc__.split("\n\n")[0])
    p.add_argument("--input", required=True)
    p.add_argument("--model", required=True, help="the sentence-transformers ONNX folder")
    p.add_argument("--output", required=True, help="the output folder (Parquet files)")
    p.add_argument("--text-column", default="text")
    p.add_argument("--id-column", action="append", default=[], help="a column to keep (repeatable)")
    p.add_argument("--output-column", default="embedding")
    p.add_argument("--status-column", default=None)
    p.add_argument("--concurrency", type=int, default=None, help="actors (default: the cluster's CPUs // threads)")
    p.add_argument("--threads", type=int, default=None, help="threads per actor (default: cores // concurrency)")
    p.add_argument("--batch-size", type=int, default=32, help="texts per model run")
    p.add_argument("--rows-per-batch", type=int, default=1024, help="rows per actor call")
    p.add_argument("--device", default="cpu")
    p.add_argument("--max-seq-length", type=int, default=None)
    p.add_argument("--no-normalize", action="store_true")
    p.add_argument("--address", default=None)
    p.add_argument("--num-cpus", type=int, default=None, help="CPUs of the local cluster (no --address)")
    a = p.parse_args(argv)

    ray = _import_ray()
    if not ray.is_initialized():
        if a.address:
            ray.init(address=a.address)
        else:
            ray.init(num_cpus=a.num_cpus, include_dashboard=False)
    cpus = int(ray.cluster_resources().get("CPU", 1))
    concurrency = a.concurrency or max(1, cpus // (a.threads or 1))
    threads = a.threads or max(1, cpus // concurrency)
    start = time.perf_counter()
    ds = read_input(ray, a.input, a.text_column, concurrency)
    keep = a.id_column
    if keep:
        ds = ds.select_columns(list(dict.fromkeys(keep + [a.text_column])))
    # Enough blocks for every actor to have work (one block goes to one actor at a time).
    ds = ds.repartition(target_num_rows_per_block=a.rows_per_batch)
    ds = embed_dataset(ds, a.model, concurrency=concurrency, rows_per_batch=a.rows_per_batch,
                       device=a.device, batch_size=a.batch_size,
                       text_column=a.text_column, output_column=a.output_column, threads=threads,
                       normalize=not a.no_normalize, max_seq_length=a.max_seq_length,
                       status_column=a.status_column)
    if a.text_column not in keep:
        ds = ds.drop_columns([a.text_column])
    os.makedirs(a.output, exist_ok=True)
    ds.write_parquet(a.output)
    seconds = time.perf_counter() - start
    rows = ray.data.read_parquet(a.output).count()
    print(json.dumps({"rows": rows, "seconds": round(seconds, 3), "texts_per_s": round(rows / seconds, 1),
                      "concurrency": concurrency, "threads_per_actor": threads, "output": a.output}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
