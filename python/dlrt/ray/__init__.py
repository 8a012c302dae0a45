"""Batch embedding on Ray Data with dlrt.Embedder (docs/python-ray.md).

    import ray, dlrt.ray
    ds = ray.data.read_parquet("corpus.parquet")
    out = ds.map_batches(dlrt.ray.Embed, compute=ray.data.ActorPoolStrategy(size=2), num_cpus=0.5,
                         batch_size=1024, batch_format="pyarrow",
                         fn_constructor_kwargs={"model": "all-MiniLM-L6-v2/", "concurrency": 2})
    out.write_parquet("embeddings/")

or dlrt.ray.embed_dataset(ds, "all-MiniLM-L6-v2/", concurrency=2), or the command line
`python -m dlrt.ray.embed --input corpus.parquet --model DIR --output out/`.

Ray is not a dependency of dlrt: it is imported when first used (pip install "ray[data]";
tested with ray 2.60.0, pyarrow 23.0.1, pandas 2.3.3), so `import dlrt.ray` works without it.

Each Ray actor holds one dlrt.Embedder with its own thread budget (threads=), so N actors on
a node share its cores instead of each starting one thread per core. The output column is a
pyarrow fixed_size_list<float32>[dimension]; the input columns (ids included) are kept.

Bad rows never fail the job silently: null and empty texts are embedded as the empty text
([CLS][SEP]); invalid UTF-8 (bytes columns, or str holding lone surrogates) is replaced by
U+FFFD and embedded; a text longer than the Embedder's max_seq_length tokens is truncated.
status_column= names an optional column that says which of these happened to each row.
"""

import os

__all__ = ["Embed", "embed_dataset", "default_threads", "actor_num_cpus", "STATUS_OK", "STATUS_EMPTY", "STATUS_NULL",
           "STATUS_REPLACED"]

STATUS_OK = "ok"
STATUS_EMPTY = "empty"  # "" (or only whitespace): embedded as [CLS][SEP]
STATUS_NULL = "null"  # a null / NaN value: embedded as the empty text
STATUS_REPLACED = "invalid_utf8_replaced"  # invalid UTF-8 replaced by U+FFFD, then embedded

RAY_HINT = 'dlrt.ray needs Ray Data: pip install "ray[data]" (tested with ray[data]==2.60.0)'


def _import_ray():
    try:
        import ray
        import ray.data  # noqa: F401
    except ImportError as e:
        raise ImportError(f"{RAY_HINT} ({e})") from e
    return ray


def _import_pyarrow():
    try:
        import pyarrow
    except ImportError as e:
        raise ImportError(f"{RAY_HINT}; pyarrow is missing ({e})") from e
    return pyarrow


def _cpus():
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def default_threads(concurrency=None):
    """Threads for one actor's Embedder: the node's cores // concurrency (at least 1) when the
    number of actors is known; else the CPUs Ray assigned to this actor (num_cpus=), when run
    inside Ray and the assignment is whole; else every core."""
    if concurrency:
        return max(1, _cpus() // int(concurrency))
    try:
        import ray

        if ray.is_initialized():
            cpus = ray.get_runtime_context().get_assigned_resources().get("CPU", 0)
            if cpus >= 1:
                return int(cpus)
    except Exception:  # not in a Ray worker, or an older Ray: fall back to the cores
        pass
    return _cpus()


# The characters str.strip() removes (str.isspace() is true), for pyarrow.compute.utf8_trim.
# (tests/python/test_ray.py checks it against str.isspace over every code point)
_WHITESPACE = ("\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
               "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000")


def _clean(value):
    """(text, status) for one cell, as the bad-row policy says."""
    if value is None:
        return "", STATUS_NULL
    if isinstance(value, (bytes, bytearray, memoryview)):
        raw = bytes(value)
        try:
            text, status = raw.decode("utf-8"), STATUS_OK
        except UnicodeDecodeError:
            text, status = raw.decode("utf-8", "replace"), STATUS_REPLACED
    elif isinstance(value, str):
        text, status = value, STATUS_OK
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:  # lone surrogates (e.g. text decoded with surrogateescape)
            text = "".join("\ufffd" if "\ud800" <= c <= "\udfff" else c for c in value)
            status = STATUS_REPLACED
    elif isinstance(value, float) and value != value:  # pandas' NaN for a missing value
        return "", STATUS_NULL
    else:
        raise TypeError(f"the text column holds a {type(value).__name__} ({value!r:.60}); expected str or bytes")
    if status == STATUS_OK and not text.strip():
        status = STATUS_EMPTY
    return text, status


class Embed:
    """A callable class for Dataset.map_batches: one dlrt.Embedder per Ray actor.

    Embed(model, device="cpu", batch_size=32, text_column="text", output_column="embedding",
          threads=None, concurrency=None, normalize=True, max_seq_length=None, status_column=None)

    model           the sentence-transformers ONNX folder (as dlrt.Embedder); every node must
                    see it at this path.
    device          as dlrt.Embedder ("cpu", "auto", "openvino:GPU", ...).
    batch_size      texts per model run inside the actor (Embedder.encode's batch_size); the
                    rows per call are map_batches' own batch_size.
    text_column     the column to embed (string, large_string or binary).
    output_column   the column written: fixed_size_list<float32>[dimension].
    threads         the Embedder's CPU threads; None: default_threads(concurrency).
    concurrency     the number of actors per node, only to size the default threads
                    (pass the same number as map_batches' concurrency).
    normalize       L2-normalise the vectors (Embedder.encode's normalize_embeddings); False
                    keeps the folder's own normalisation (a Normalize module) as it is.
    max_seq_length  tokens per text; longer texts are truncated (None: the folder's).
    status_column   when set, a string column saying per row: "ok", "empty", "null" or
                    "invalid_utf8_replaced".

    A batch may be a pyarrow.Table, a pandas.DataFrame or a dict of numpy arrays; a
    pyarrow.Table is returned (every input column kept, the output column appended or
    replaced).
    """

    def __init__(self, model, device="cpu", batch_size=32, text_column="text", output_column="embedding",
                 threads=None, concurrency=None, normalize=True, max_seq_length=None, status_column=None):
        from .. import Embedder

        self.threads = int(threads) if threads is not None else default_threads(concurrency)
        if self.threads < 1:
            raise ValueError(f"threads must be >= 1, got {threads}")
        if int(batch_size) < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        self.embedder = Embedder(os.fspath(model), device=device, threads=self.threads,
                                 max_seq_length=max_seq_length)
        self.dimension = self.embedder.get_sentence_embedding_dimension()
        self.batch_size = int(batch_size)
        self.text_column = text_column
        self.output_column = output_column
        self.normalize = bool(normalize)
        self.status_column = status_column

    def _split(self, batch):
        """(the text column's values, the batch as a pyarrow.Table, whether the table still
        needs the cleaned text column put back). A pandas or dict batch is converted without
        its text column: pyarrow cannot convert a str with lone surrogates."""
        pa = _import_pyarrow()
        col = self.text_column
        if isinstance(batch, pa.Table):
            if col not in batch.column_names:
                raise KeyError(f"Embed: no column {col!r} in the batch (columns: {batch.column_names})")
            return batch.column(col).to_pylist(), batch, False
        if isinstance(batch, dict):
            if col not in batch:
                raise KeyError(f"Embed: no column {col!r} in the batch (columns: {list(batch)})")
            rest = {k: list(v) if getattr(v, "dtype", None) == object else v for k, v in batch.items() if k != col}
            return list(batch[col]), pa.table(rest) if rest else None, True
        if hasattr(batch, "columns") and hasattr(batch, "drop"):  # pandas.DataFrame
            if col not in batch.columns:
                raise KeyError(f"Embed: no column {col!r} in the batch (columns: {list(batch.columns)})")
            rest = batch.drop(columns=[col])
            table = pa.Table.from_pandas(rest, preserve_index=False) if len(rest.columns) else None
            return batch[col].tolist(), table, True
        raise TypeError(f"Embed: a batch must be a pyarrow.Table, pandas.DataFrame or dict, got {type(batch).__name__}")

    def _arrow_texts(self, batch):
        """The texts of a pyarrow.Table batch whose text column is string / large_string,
        without a Python step per row: Arrow strings are valid UTF-8 (nothing to replace),
        nulls become "" (the policy's "null"); None for any other batch or column type.
        The statuses, when asked for, come from pyarrow.compute, as _clean says them."""
        pa = _import_pyarrow()
        if not isinstance(batch, pa.Table) or self.text_column not in batch.column_names:
            return None
        col = batch.column(self.text_column)
        if not (pa.types.is_string(col.type) or pa.types.is_large_string(col.type)):
            return None
        import pyarrow.compute as pc

        filled = pc.fill_null(col, "") if col.null_count else col
        statuses = None
        if self.status_column:
            # Python's str.strip() whitespace, as _clean's "empty" test
            blank = pc.equal(pc.utf8_length(pc.utf8_trim(filled, _WHITESPACE)), 0)
            statuses = pc.if_else(pc.is_null(col), STATUS_NULL,
                                  pc.if_else(blank, STATUS_EMPTY, STATUS_OK))
        return filled.to_pylist(), statuses

    def __call__(self, batch):
        import numpy as np

        pa = _import_pyarrow()
        fast = self._arrow_texts(batch)
        if fast is not None:
            (texts, statuses), table, put_text_back = fast, batch, False
        else:
            raw, table, put_text_back = self._split(batch)
            cleaned = [_clean(v) for v in raw]
            texts = [t for t, _ in cleaned]
            statuses = pa.array([s for _, s in cleaned], pa.string())
        if put_text_back:
            text_column = pa.array(texts, pa.string())
            table = pa.table({self.text_column: text_column}) if table is None else \
                _set_column(table, self.text_column, text_column)
        if texts:
            vectors = self.embedder.encode(texts, batch_size=self.batch_size, normalize_embeddings=self.normalize)
        else:
            vectors = np.zeros((0, self.dimension), np.float32)
        # Zero-copy: the Arrow values buffer is the float32 matrix Embedder.encode returned.
        values = pa.array(np.ascontiguousarray(vectors, np.float32).reshape(-1), pa.float32())
        column = pa.FixedSizeListArray.from_arrays(values, self.dimension)
        table = _set_column(table, self.output_column, column)
        if self.status_column:
            table = _set_column(table, self.status_column, statuses)
        return table


def _set_column(table, name, column):
    if name in table.column_names:
        return table.set_column(table.column_names.index(name), name, column)
    return table.append_column(name, column)


def embed_dataset(ds, model, *, concurrency=1, rows_per_batch=1024, batch_format="pyarrow",
                  ray_remote_args=None, **embed_kwargs):
    """ds.map_batches(Embed, ...) over a pool of `concurrency` actors, each with an Embedder of
    cores // concurrency threads unless threads= says otherwise. rows_per_batch: rows per
    call of an actor (map_batches' batch_size). ray_remote_args: what each actor asks of Ray
    (e.g. {"num_cpus": 4}, {"num_gpus": 1}, {"resources": {"NPU": 1}}), passed to map_batches.
    Without num_cpus, an actor asks for actor_num_cpus(threads): its threads less one CPU (at least 0.5),
    so that the read and write tasks still find a CPU when actors take every core (with
    num_cpus=1 per actor and as many actors as CPUs, Ray Data waits forever).
    Other keyword arguments go to Embed. Returns the (lazy) Dataset."""
    _import_ray()
    kwargs = dict(embed_kwargs, model=os.fspath(model))
    kwargs.setdefault("concurrency", concurrency)
    remote = dict(ray_remote_args or {})
    if "num_cpus" not in remote:
        threads = kwargs.get("threads") or default_threads(kwargs["concurrency"])
        remote["num_cpus"] = actor_num_cpus(threads)
    ray = _import_ray()
    return ds.map_batches(Embed, fn_constructor_kwargs=kwargs, compute=ray.data.ActorPoolStrategy(size=concurrency),
                          batch_size=rows_per_batch, batch_format=batch_format, **remote)


def actor_num_cpus(threads):
    """The CPUs an actor of `threads` threads reserves in Ray: threads - 1, at least 0.5."""
    return max(0.5, float(threads) - 1.0)
