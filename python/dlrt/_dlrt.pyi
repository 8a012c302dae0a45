from collections.abc import Mapping, Sequence
import enum
import os

import numpy
import numpy.typing

from dlrt import (
    BackendError as BackendError,
    Cancelled as Cancelled,
    DeviceUnavailable as DeviceUnavailable,
    Error as Error,
    InternalError as InternalError,
    InvalidArgument as InvalidArgument,
    InvalidModel as InvalidModel,
    IoError as IoError,
    NotFound as NotFound,
    OutOfMemory as OutOfMemory,
    OutOfRange as OutOfRange,
    RunError as RunError,
    Unsupported as Unsupported
)


class StatusCode(enum.IntEnum):
    """
    dlrt's error codes (the C++ StatusCode and the C API use the same numbers):
    1xx the caller's input, 2xx the model, 3xx resources, 4xx devices and
    backends, 5xx failures while running.
    """

    Ok = 0

    InvalidArgument = 100

    NotFound = 101

    OutOfRange = 102

    InvalidModel = 200

    Unsupported = 201

    IoError = 300

    OutOfMemory = 301

    DeviceUnavailable = 400

    BackendError = 401

    RuntimeError = 500

    Internal = 501

    Cancelled = 502

class NodeArg:
    """
    A model input or output as ONNX Runtime's NodeArg describes it (Session.get_inputs(), Session.get_outputs()).
    """

    @property
    def name(self) -> str:
        """The input or output name."""

    @property
    def shape(self, /) -> list[int | str | None]:
        """
        The dims as a list: an int per fixed dim, the dim's name (str) per named dynamic dim, None per unnamed dynamic dim (also for the unk__N names ONNX's shape inference makes up); [] for a scalar and for values that are not tensors.
        """

    @property
    def type(self) -> str:
        """
        The type as ONNX Runtime writes it: 'tensor(float)', 'seq(map(int64,tensor(float)))', ...
        """

    def __repr__(self) -> str: ...

class RunOptions:
    """
    ONNX Runtime's RunOptions, for Session.run(output_names, feeds, run_options).

    terminate: set to True (from any thread) to stop the runs using these options
    with dlrt.Cancelled; runs started while it is True stop at once. The logging
    fields and run config entries are kept for ONNX Runtime code; dlrt does not act
    on them (its log level is DLRT_LOG_LEVEL, for the process).
    """

    def __init__(self) -> None: ...

    @property
    def terminate(self) -> bool:
        """True: runs using these options stop with dlrt.Cancelled."""

    @terminate.setter
    def terminate(self, arg: bool, /) -> None: ...

    @property
    def log_severity_level(self) -> int:
        """Kept (ONNX Runtime's; -1: the session's)."""

    @log_severity_level.setter
    def log_severity_level(self, arg: int, /) -> None: ...

    @property
    def log_verbosity_level(self) -> int:
        """Kept (ONNX Runtime's)."""

    @log_verbosity_level.setter
    def log_verbosity_level(self, arg: int, /) -> None: ...

    @property
    def logid(self) -> str:
        """Kept (ONNX Runtime's)."""

    @logid.setter
    def logid(self, arg: str, /) -> None: ...

    @property
    def only_execute_path_to_fetches(self) -> bool:
        """Kept (ONNX Runtime's); dlrt does not act on it."""

    @only_execute_path_to_fetches.setter
    def only_execute_path_to_fetches(self, arg: bool, /) -> None: ...

    def add_run_config_entry(self, key: str, value: str) -> None:
        """Keeps a config entry (dlrt does not act on it)."""

    def get_run_config_entry(self, key: str) -> str:
        """
        A config entry set by add_run_config_entry; dlrt.InvalidArgument if none.
        """

    def __repr__(self) -> str: ...

class TensorInfo:
    """One model input or output as the model declares it."""

    @property
    def name(self) -> str:
        """The input or output name."""

    @property
    def dtype(self, /) -> numpy.dtype | None:
        """
        The numpy dtype (object for strings; None for bfloat16, int4 and uint4, which numpy lacks).
        """

    @property
    def dtype_name(self) -> str:
        """
        dlrt's name of the element type: 'float32', 'int64', 'bfloat16', 'string', ...
        """

    @property
    def shape(self, /) -> tuple[int | None, ...]:
        """The dims as a tuple, None for a dynamic dim."""

    @property
    def dim_names(self, /) -> tuple[str | None, ...]:
        """Per dim, the model's name of a dynamic dim ('batch'), else None."""

    @property
    def is_tensor(self) -> bool:
        """False for sequences, maps and optionals."""

    @property
    def type(self) -> str:
        """
        The type as ONNX (and ONNX Runtime's NodeArg.type) writes it: 'tensor(float)', 'seq(map(int64,tensor(float)))', ...
        """

    def __repr__(self) -> str: ...

class PartitionReport:
    """Where one part of the graph ran and how that went."""

    @property
    def backend(self) -> str:
        """The backend that ran it: 'cpu', 'openvino', 'opencl', ..."""

    @property
    def device(self) -> str:
        """The device: 'cpu:0', 'openvino:GPU', ..."""

    @property
    def node_count(self) -> int:
        """Graph nodes in the partition."""

    @property
    def degraded(self) -> bool:
        """True when it was meant for another device and fell back."""

    @property
    def reason(self) -> str:
        r"""Why it degraded (\'\' otherwise)."""

    @property
    def time_ms(self) -> float:
        """Time spent in it during the run, in milliseconds."""

    @property
    def precision(self) -> str:
        """
        CPU partitions: 'f32', 'bf16x3', 'bf16 (amx)', 'bf16 (avx512_bf16)' or 'f32 (bf16 unavailable: ...)', plus the int8 kernel and float16 storage where used.
        """

    @property
    def vector_isa(self) -> str:
        r"""
        CPU partitions: the vector instruction set the kernels ran with ('avx512', 'avx2', 'neon', 'generic'); \'\' for accelerators.
        """

    def as_dict(self) -> dict[str, object]:
        """The fields as a dict (for JSON)."""

    def __repr__(self) -> str: ...

class RunReport:
    """How a run (or the session's placement) went, per partition."""

    @property
    def partitions(self) -> list[PartitionReport]:
        """List of PartitionReport, in execution order."""

    @property
    def run_ms(self) -> float:
        """Wall time of the whole run in milliseconds (0 for a placement)."""

    def as_dict(self) -> dict[str, object]:
        """The fields as a dict (for JSON)."""

    def __repr__(self) -> str: ...

class Session:
    """
    A loaded ONNX model, ready to run many times.

    Session(model, device=None, strict=False, threads=0, warm_start=False,
            cpu_precision=None, backend_options=None, max_tensor_bytes=0, optimize=True,
            canary_inputs=None, outputs=None)

    model           a path (str or os.PathLike) to an .onnx file, or the model itself as
                    bytes, bytearray or memoryview (external data is then refused).
    device          device spec: "auto", "cpu", "gpu", "npu", a backend ("openvino",
                    "opencl") or "backend:device" ("openvino:NPU"), comma-separated as a
                    priority list. None: $DLRT_DEVICE, else "auto".
    strict          turn every fallback into an error (dlrt.DeviceUnavailable, ...);
                    also set by DLRT_STRICT=1.
    threads         intra-op threads of the CPU backend; 0: one per core; at most 4096.
    warm_start      serve on the CPU at once while accelerators compile in the background.
    cpu_precision   "f32", "bf16", "bf16x3" or "auto" (see docs/python-session.md); None:
                    $DLRT_CPU_PRECISION, the config file, else "f32". "auto" measures at create
                    (precision_choice() says what it chose and why).
    canary_inputs   with "auto": a list of feeds dicts it measures on (None: generated from
                    the inputs' declared shapes).
    backend_options dict of str -> str handed to accelerator backends when they compile.
    max_tensor_bytes the largest tensor a run may allocate (dlrt.OutOfMemory past it); 0:
                    $DLRT_MAX_TENSOR_MB, the config file, else half the memory available
                     (physical, cgroup limit, RLIMIT_AS; see docs/serve-settings.md).
    optimize        False: no graph optimisation (constant folding, fusions) at create;
                    DLRT_OPTIMIZE=0 also turns it off.
    outputs         a list of output names: the session computes only those (in the model's
                    order); nodes and inputs only the other outputs need are dropped, so
                    run() need not feed those inputs. None: every output.
                    dlrt.InvalidArgument for a name the model lacks.

    Raises dlrt.IoError (a missing or unreadable file), dlrt.InvalidModel (not ONNX,
    broken graph), dlrt.Unsupported (op or opset), dlrt.InvalidArgument (bad option),
    dlrt.DeviceUnavailable (strict mode).

    One Session may be used from many threads at once: run() releases the GIL.
    """

    def __init__(self, model: str | os.PathLike[str] | bytes | bytearray | memoryview, device: str | None = None, strict: bool = False, threads: int = 0, warm_start: bool = False, cpu_precision: str | None = None, backend_options: dict[str, str] | None = None, max_tensor_bytes: int = 0, optimize: bool = True, canary_inputs: Sequence[Mapping[str, numpy.typing.ArrayLike]] | None = None, outputs: Sequence[str] | None = None) -> None: ...

    @property
    def inputs(self) -> list[TensorInfo]:
        """The model's inputs: a list of TensorInfo (name, dtype, shape)."""

    @property
    def outputs(self) -> list[TensorInfo]:
        """
        The model's outputs: a list of TensorInfo, in the order run() returns them.
        """

    def run(self, feeds: Mapping[str, numpy.typing.ArrayLike] | Sequence[str] | None = None, output_names: Sequence[str] | Mapping[str, numpy.typing.ArrayLike] | None = None, report: bool | RunOptions | None = False, timeout_ms: float | None = None, *, input_feed: Mapping[str, numpy.typing.ArrayLike] | None = None, run_options: RunOptions | None = None) -> list[numpy.ndarray] | tuple[list[numpy.ndarray], RunReport]:
        """
        Runs the model once.

        feeds         dict of input name -> numpy array (or anything np.asarray takes).
                      A C-contiguous array is used in place, without a copy; a
                      non-contiguous one is copied once (np.ascontiguousarray). The dtype
                      must be the model's: a float64 array for a float32 input raises
                      dlrt.InvalidArgument (cast it with .astype(np.float32)); lists and
                      scalars are converted to the model's dtype.
        output_names  None for every output in the model's order, or a list of output
                      names: only those, in that order.
        report        also return the run report: (outputs, RunReport).
        timeout_ms    stop the run with dlrt.Cancelled once it has run this long (checked
                      between the nodes it executes, Loop/Scan bodies included); None: no
                      limit. The Session stays usable.

        Inputs that are not tensors take what ONNX Runtime takes: a dict for a map
        (DictVectorizer's), a list of arrays for a sequence, None for an absent optional.

        ONNX Runtime's calling convention works too: run(output_names, feeds) with
        output_names None or a list (an empty list: every output), and the keyword
        input_feed=. ONNX Runtime's run_options, a dlrt.RunOptions, goes third or as
        run_options=: setting its terminate to True (from any thread) stops the run
        with dlrt.Cancelled.

        Returns a list of numpy arrays. Each one owns dlrt's output buffer (no copy).
        Outputs that are not tensors come as ONNX Runtime gives them: a sequence as a
        list of arrays, a map as a dict, a sequence of maps (ZipMap's class
        probabilities) as a list of dicts, an absent optional as None.
        Raises dlrt.InvalidArgument for an unknown or missing input, a wrong dtype, rank or
        dim, or an unknown output name; dlrt.RunError when a kernel fails.
        The GIL is released while the model runs.
        """

    def get_inputs(self) -> list[NodeArg]:
        """
        The model's inputs as ONNX Runtime's InferenceSession.get_inputs() gives them: a list of NodeArg (name, shape with dim names, type).
        """

    def get_outputs(self) -> list[NodeArg]:
        """
        The model's outputs as ONNX Runtime's InferenceSession.get_outputs() gives them, in run()'s order.
        """

    def placement(self) -> RunReport:
        """
        Where the session's partitions were placed (before any run): a RunReport.
        """

    def precision_choice(self) -> dict[str, object]:
        """
        What cpu_precision "auto" measured and chose: chosen, automatic, and for auto reason, canary,
        canary_sets, rounds, bound and trials (per precision: ran, median_ms, min_cosine, max_rel_error,
        within_bound, faster, verdict). {'chosen': ..., 'automatic': False} for a named precision.
        """

    def model_info(self) -> dict[str, object]:
        """
        The model as imported (before graph optimisation), as dlrt.read_model_info() gives it.
        """

    def node_placement(self) -> list[dict[str, object]]:
        r"""
        Where each node of the planned graph runs, in plan order: dicts with node, op_type,
        partition (index into placement().partitions), backend, device and cpu_reason (why it
        stayed on the CPU although an accelerator was asked for; \'\' otherwise).
        """

    def __repr__(self) -> str: ...

class Device:
    """
    One piece of hardware, found without any vendor runtime (as `dlrt devices` lists it).
    """

    @property
    def id(self) -> str:
        """Stable within a process: 'cpu:0', 'gpu:0', 'npu:0', ..."""

    @property
    def type(self) -> str:
        """'cpu', 'gpu', 'npu' or 'accelerator'."""

    @property
    def vendor(self) -> str:
        """'Intel', 'AMD', 'NVIDIA', ..."""

    @property
    def name(self) -> str:
        """The product name, where known."""

    @property
    def vendor_id(self) -> int:
        """PCI vendor id (0 where there is none)."""

    @property
    def device_id(self) -> int:
        """PCI device id (0 where there is none)."""

    @property
    def metadata(self) -> dict[str, str]:
        """
        dict of str -> str: discovered_by, is_virtual, pci_bus_id, driver, driver_version,
        memory_bytes, numa_node, cores, threads, isa, caches (see docs/devices.md).
        """

    @property
    def is_virtual(self) -> bool:
        """True for a device that exists only to compile for."""

    def as_dict(self) -> dict[str, object]:
        """The fields as a dict (for JSON)."""

    def __repr__(self) -> str: ...

def devices() -> list[Device]:
    """
    The hardware dlrt can see: a list of Device, the CPU first, then GPUs, NPUs and other
    accelerators. Never fails; reads /proc and /sys on every call.
    """

def backends(refresh: bool = False) -> list[dict[str, object]]:
    """
    The backends (cpu, openvino, opencl, plugins) as `dlrt devices` lists them: a list of dicts
    with name, available, library_path and version (the vendor runtime loaded), reason and fix
    (why not, what to do), compatibility, tried (the paths searched) and devices (each with
    spec, usable as Session(device=spec), backend, name, type, is_virtual, hardware: the id of
    the dlrt.devices() entry it drives, metadata). Loads the vendor runtimes it finds;
    refresh=True retries one that failed to load earlier.
    """

def memory_info() -> dict[str, object]:
    """
    The process's memory budget as sessions apply it (what `dlrt devices` prints under Memory):
    a dict with max_tensor_bytes (the largest tensor a run may allocate when SessionOptions sets
    no max_tensor_bytes) and max_tensor_source, available_bytes and available_source (the
    smallest of physical memory, the cgroup limit and RLIMIT_AS, less what the process holds;
    the default limit is half of it), physical_bytes, cgroup_limit_bytes and rlimit_as_bytes
    (None: no such limit), rss_bytes, and describe (one line).
    """

def read_model_info(path: str) -> dict[str, object]:
    """
    What the ONNX model at `path` declares and what it is made of, without creating a session:
    a dict with ir_version, opsets (domain -> version), producer_name, producer_version, domain,
    description, model_version, graph_name, graph_description, metadata_props (dict), inputs and
    outputs (dicts: name, kind, dtype, key_dtype, shape: ints, dim symbols or None, None when the
    rank is unknown; type as ONNX writes it), node_count and subgraph_count (subgraphs included),
    ops (dicts: domain, op_type, count), parameter_count and parameter_bytes. Raises dlrt.IoError,
    dlrt.InvalidModel or dlrt.Unsupported as Session does.
    """

class Embedder:
    """
    Sentence embeddings from a sentence-transformers / Hugging Face ONNX
    export folder (model.onnx or onnx/model.onnx, tokenizer.json or vocab.txt, optional
    tokenizer_config.json, config.json, modules.json, 1_Pooling/config.json).

    Embedder(model_folder, device=None, threads=0, strict=False, max_seq_length=None,
             cpu_precision=None)

    device          device spec as for Session (None: $DLRT_DEVICE, else "auto").
    threads         intra-op threads of the CPU backend; 0: one per core; at most 4096.
    strict          turn every fallback into an error.
    max_seq_length  tokens per text, [CLS]/[SEP] included; None: the folder's, capped at
                    the model's positions.
    cpu_precision   as for Session ("f32", "bf16", "bf16x3", "auto"); "auto" measures on
                    warm-up texts at load (precision_choice() says what it chose).

    Raises dlrt.NotFound (no folder, model or vocabulary), dlrt.InvalidModel (broken json,
    a model without input_ids or a 3-D output), dlrt.Unsupported (a tokenizer dlrt does not
    implement; a reranker folder, naming its kind: use dlrt.CrossEncoder) and Session's
    errors. One Embedder may be used from many threads.
    """

    def __init__(self, model_folder: str | os.PathLike[str], device: str | None = None, threads: int = 0, strict: bool = False, max_seq_length: int | None = None, cpu_precision: str | None = None) -> None: ...

    @property
    def is_multi_vector(self) -> bool:
        """
        True for a multi-vector (ColBERT / PyLate) folder: one vector per token, for queries or documents (encode(..., output_value="token_embeddings", is_query=...)).
        """

    @property
    def prompts(self, /) -> dict[str, str]:
        """
        The named prompts of the folder's config_sentence_transformers.json ("prompts"): name -> the text put in front of each input; {} when there are none.
        """

    @property
    def default_prompt_name(self) -> str | None:
        """
        config_sentence_transformers.json's "default_prompt_name": the prompt encode() uses when given neither prompt nor prompt_name; None when it names none.
        """

    @property
    def max_seq_length(self) -> int:
        """
        Tokens per text, [CLS]/[SEP] included; longer texts are truncated. Settable: at least 3,
        at most the model's position embeddings (a longer limit than the Embedder was made with
        loads the model again). A multi-vector folder's is fixed (dlrt.Unsupported): its texts are
        cut to its query_length and document_length.
        """

    @max_seq_length.setter
    def max_seq_length(self, arg: int, /) -> None: ...

    def get_sentence_embedding_dimension(self) -> int:
        """
        The length of each embedding vector (of a multi-vector folder: of each token vector).
        """

    @property
    def normalizes(self) -> bool:
        """
        True when the folder's modules.json has a Normalize module (or there is no modules.json); a multi-vector folder's token vectors are always normalised.
        """

    @property
    def pooling(self) -> str:
        """
        The folder's pooling: 'mean', 'cls', 'max', ... ('splade' for a sparse folder, 'none' for a multi-vector one).
        """

    @property
    def batching(self) -> str:
        """
        How encode() batches: 'padded batches'; 'padded batches, int8 scales per text (dynamic quantization: OP)' for a dynamically quantized model whose texts are each quantized with their own scales; or 'one text per run (dynamic quantization: OP; WHY)' where that cannot be.
        """

    @property
    def model_name(self) -> str:
        """The folder's name (or config.json's _name_or_path)."""

    def encode_sparse(self, sentences: str | Sequence[str], top_k: int | None = None, batch_size: int = 32, is_query: bool | None = None) -> tuple[numpy.ndarray, numpy.ndarray] | list[tuple[numpy.ndarray, numpy.ndarray]]:
        """
        Sparse (SPLADE) vectors of a sparse model folder (modules.json:
        MLMTransformer + SpladePooling; Embedder.kind == "sparse").

        sentences   a str (gives one pair) or a sequence of str (gives a list of pairs, in input order).
        top_k       keep each text's top_k largest weights (SparseEncoder.encode's max_active_dims);
                    None: every non-zero weight.
        batch_size  texts per model run (texts sorted by token count first).
        is_query    True / False: the texts are queries / documents (sentence-transformers'
                    encode_query / encode_document): the folder's "query" ("document",
                    "passage", "corpus") prompt in front, and a Router folder's query or
                    document route. None: neither (a Router folder's default route).

        Each text gives a pair (indices, values): an int64 array of vocabulary ids, ascending,
        and a float32 array of their weights (all > 0); the other ids weigh 0. A dense model
        folder raises dlrt.InvalidArgument, as encode() does on a sparse one.
        """

    @property
    def kind(self) -> str:
        """
        'dense' (encode()), 'sparse' (a SPLADE folder: encode_sparse()), 'multi_vector' (a ColBERT folder: encode(..., output_value="token_embeddings")) or 'clip' (texts and encode(images=...)).
        """

    def placement(self) -> RunReport:
        """Where the embedder's session was placed: a RunReport."""

    def precision_choice(self) -> dict[str, object]:
        """
        What cpu_precision "auto" measured on the warm-up texts and chose (as Session.precision_choice()).
        """

    def __repr__(self) -> str: ...

class CrossEncoder:
    """
    A cross-encoder (reranker) or text-pair classifier from a Hugging Face
    sequence-classification ONNX folder (model.onnx with a logits output, config.json naming a
    *ForSequenceClassification architecture and its id2label, the tokenizer files), or an LLM
    reranker folder (a causal LM such as Qwen3-Reranker exported with its logits, config.json naming a
    *ForCausalLM, no modules.json): one label "yes", scored softmax([logit(no), logit(yes)]) at the
    end of its prompt, so the default sigmoid gives that probability.

    predict and rank apply the activation the folder names for sentence-transformers' CrossEncoder
    (config_sentence_transformers.json's "activation_fn", else config.json's "sentence_transformers"
    or "sbert_ce_default_activation_function"), else the library's default: sigmoid for one label,
    identity for several.

    CrossEncoder(model_folder, device=None, threads=0, strict=False, max_length=None)

    Arguments as Embedder's. Raises dlrt.NotFound, dlrt.InvalidModel (no 2-D logits output),
    dlrt.Unsupported and Session's errors. One CrossEncoder may be used from many threads.
    """

    def __init__(self, model_folder: object, device: str | None = None, threads: int = 0, strict: bool = False, max_length: int | None = None) -> None:
        """Loads the folder; see the class docstring."""

    def predict(self, sentences: object, batch_size: int = 32, show_progress_bar: bool = False, convert_to_numpy: bool = True, apply_softmax: bool = False, activation: str | None = None, instruction: str | None = None) -> object:
        """
        Scores text pairs, as sentence-transformers' CrossEncoder.predict.

        sentences          a pair (a, b) (gives a scalar, or a 1-D array for several labels) or a
                           list of pairs (one score, or one row of scores, per pair); a plain str is
                           scored alone.
        batch_size         pairs per model run.
        show_progress_bar  accepted for call compatibility; no bar is drawn.
        convert_to_numpy   True: a numpy array; False: a list.
        apply_softmax      with several labels, the softmax of each row after the activation.
        activation         None: the folder's (see the class docstring); "sigmoid", "identity" (the
                           raw logits) or "softmax" instead.
        instruction        an LLM reranker's task instruction for these pairs (None: the folder's
                           default); other models raise ValueError.

        The GIL is released while the pairs are tokenized and the model runs.
        """

    def rank(self, query: str, documents: Sequence[str], top_k: int | None = None, return_documents: bool = False, batch_size: int = 32, instruction: str | None = None) -> list:
        """
        Ranks documents against a query, as sentence-transformers' CrossEncoder.rank:
        a list of {"corpus_id", "score"(, "text")} dicts, highest score first, top_k of them
        (None: all; a negative top_k is dlrt.InvalidArgument). Needs a one-label model; the scores are
        predict's (the folder's activation). instruction: as predict's.
        """

    @property
    def labels(self) -> list[str]:
        """The labels, from config.json's id2label (["yes"] for an LLM reranker)."""

    @property
    def is_llm_reranker(self) -> bool:
        """
        True for an LLM reranker folder (pairs only; instructions where it has a prompt template).
        """

    @property
    def max_length(self) -> int:
        """Tokens per pair, special tokens included (longer pairs are truncated)."""

    def placement(self) -> RunReport:
        """Where the model was placed (a RunReport without times)."""

    def __repr__(self) -> str: ...
