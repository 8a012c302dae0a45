"""dlrt.Embedder: the native embedder (dlrt._dlrt.Embedder) with sentence-transformers'
SentenceTransformer.encode semantics on top. docs/python-embedder.md lists the rules."""

import contextlib
import json
import logging
import math
import os
import sys

import numpy as np

from . import _dlrt
from ._session import _PROVIDERS

_log = logging.getLogger("dlrt")

_PRECISIONS = ("float32", "int8", "uint8", "binary", "ubinary")


class _TextBar:
    """The progress bar drawn when tqdm is not importable: one line on stderr, redrawn."""

    def __init__(self, total, desc):
        self.total, self.desc, self.n = total, desc, 0
        self._draw()

    def _draw(self):
        width = 30
        filled = width * self.n // self.total if self.total else width
        percent = 100 * self.n // self.total if self.total else 100
        sys.stderr.write(f"\r{self.desc}: {percent:3d}%|{'#' * filled}{' ' * (width - filled)}| "
                         f"{self.n}/{self.total}")
        sys.stderr.flush()

    def update(self, n):
        self.n += n
        self._draw()

    def close(self):
        sys.stderr.write("\n")
        sys.stderr.flush()


def _progress_bar(total):
    """A bar over `total` batches on stderr, as sentence-transformers draws one (desc "Batches")."""
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return _TextBar(total, "Batches")
    return tqdm(total=total, desc="Batches", file=sys.stderr)


def _is_pil_image(x):
    """Whether x is a PIL image, without importing PIL (not a dependency)."""
    return any(c.__name__ == "Image" and c.__module__ == "PIL.Image" for c in type(x).__mro__)


def _pil_rgb(image):
    """A PIL image's pixels as transformers' image processors take a PIL image (convert_to_rgb: PIL's own
    convert("RGB") for any other mode; no EXIF orientation, which only load_image applies): uint8 [h, w, 3]."""
    return np.asarray(image if image.mode == "RGB" else image.convert("RGB"))


def _quantize(embeddings, precision):
    """sentence_transformers.quantize_embeddings(embeddings, precision) without ranges or
    calibration embeddings: int8/uint8 buckets from the embeddings' own per-dim min and max
    (two rows at least). The server's and the CLI's code (apps/embed/models/output_type.h)."""
    return _dlrt._quantize_embeddings(np.ascontiguousarray(embeddings, dtype=np.float32), precision)


def _import_torch():
    try:
        import torch
    except ImportError as e:
        raise ImportError("encode(convert_to_tensor=True) returns a torch.Tensor and needs PyTorch, "
                          "which this Python cannot import (pip install torch); without it, use the "
                          "default convert_to_numpy=True") from e
    return torch


_SIMILARITIES = ("cosine", "dot", "euclidean", "manhattan")
_MODEL_FILES = ("model.onnx", "onnx/model.onnx")


def _similarity_name(name, multi_vector=False):
    """sentence-transformers' SimilarityFunction value of `name` (a str or the enum); "maxsim"
    (PyLate's "MaxSim") or "meanmaxsim" (sentence-transformers 6's) for a multi-vector folder,
    whose vectors are per token."""
    value = getattr(name, "value", name)
    if value == "dot_product":
        value = "dot"
    if isinstance(value, str) and value.lower() in ("maxsim", "meanmaxsim"):
        if not multi_vector:
            raise ValueError(f"similarity_fn_name {name!r} scores per-token vectors: only multi-vector "
                             "(ColBERT) folders have it")
        return value.lower()
    if multi_vector:
        raise ValueError(f"similarity_fn_name {name!r} is not supported for a multi-vector (ColBERT) folder: "
                         "its vectors are per token and score by 'maxsim' or 'meanmaxsim'")
    if value not in _SIMILARITIES:
        raise ValueError(f"similarity_fn_name {name!r} is not supported; use one of {', '.join(_SIMILARITIES)}")
    return value


def _token_sets(x):
    """Per-token vectors as a list of float32 [tokens, dimension] arrays: one 2-D array (numpy or
    torch) is one text's, a 3-D one or a list holds one per text."""
    if hasattr(x, "detach") and hasattr(x, "cpu"):
        x = x.detach().cpu().numpy()
    if isinstance(x, np.ndarray) and x.ndim == 2:
        x = [x]
    sets = []
    for t in x:
        if hasattr(t, "detach") and hasattr(t, "cpu"):
            t = t.detach().cpu().numpy()
        a = np.asarray(t, dtype=np.float32)
        if a.ndim != 2:
            raise ValueError(f"MaxSim takes per-token vectors ([tokens, dimension] per text), got shape {a.shape}")
        sets.append(a)
    return sets


def _maxsim(q, d, mean=False):
    """For each query token the largest dot product with a document token, summed (0 for an empty document);
    mean: divided by the query's token count (at least 1), sentence-transformers 6's MeanMaxSim."""
    if q.shape[1] != d.shape[1]:
        raise ValueError(f"the token vectors differ in dimension: {q.shape[1]} and {d.shape[1]}")
    if not len(q) or not len(d):
        return 0.0
    score = float((q.astype(np.float64) @ d.astype(np.float64).T).max(axis=1).sum())
    return score / max(len(q), 1) if mean else score


def _rows(x):
    """A float32 2-D numpy array of `x` (numpy, list or torch.Tensor); a 1-D one becomes one row."""
    if hasattr(x, "detach") and hasattr(x, "cpu"):
        x = x.detach().cpu().numpy()
    a = np.asarray(x, dtype=np.float32)
    if a.ndim == 1:
        a = a[None, :]
    if a.ndim != 2:
        raise ValueError(f"embeddings must be 1-D or 2-D, got shape {a.shape}")
    return a


def _unit(a):
    return a / np.maximum(np.linalg.norm(a, axis=1, keepdims=True), 1e-12)


def _pairwise(fn, a, b):
    """fn(a[i], b[j]) for all i, j, a block of rows at a time (bounded memory)."""
    out = np.empty((a.shape[0], b.shape[0]), np.float32)
    step = max(1, (1 << 22) // max(1, b.shape[0] * a.shape[1]))
    for i in range(0, a.shape[0], step):
        out[i:i + step] = fn(a[i:i + step, None, :], b[None, :, :])
    return out


def _like_input(result, *inputs):
    """A torch.Tensor when an input was one (sentence-transformers returns tensors), else numpy."""
    if any(type(x).__module__.startswith("torch") for x in inputs):
        return _import_torch().from_numpy(result)
    return result


# torch's device types dlrt has no backend for (sentence-transformers' device= takes them).
_TORCH_ONLY_DEVICES = ("mps", "xpu", "hpu", "npu", "ipu", "xla", "meta", "mtia", "privateuseone")


def _device_spec_of(device):
    """dlrt's device spec for sentence-transformers' device= (a str or torch.device): "cpu",
    "cuda", "cuda:1" and dlrt's own specs as they are; torch's other device types are refused."""
    spec = str(device)
    if spec.split(":")[0] in _TORCH_ONLY_DEVICES:
        raise _dlrt.InvalidArgument(f"device={spec!r} is a PyTorch device dlrt has no backend for; dlrt runs "
                                    "'cpu', 'cuda', 'openvino' and 'opencl' (dlrt.devices() lists this machine's)")
    return spec


class Embedder(_dlrt.Embedder):
    __doc__ = _dlrt.Embedder.__doc__ + """

sentence-transformers' constructor keywords work too: truncate_dim (encode() keeps the
first truncate_dim values, before normalize_embeddings), similarity_fn_name ("cosine",
"dot", "euclidean", "manhattan"; "maxsim", "meanmaxsim" for a multi-vector folder; None: the folder's config_sentence_transformers.json,
else cosine), backend ("onnx" only), model_kwargs ({"provider": an ONNX Runtime provider
name, instead of device; "file_name": "model.onnx" or "onnx/model.onnx", the files dlrt
loads; "export": False}). Other values are a ValueError."""

    def __init__(self, model_folder, device=None, threads=0, strict=False, max_seq_length=None, *,
                 truncate_dim=None, similarity_fn_name=None, backend="onnx", model_kwargs=None, cpu_precision=None):
        if backend != "onnx":
            hint = {"torch": "sentence-transformers' own PyTorch backend; dlrt runs the folder's ONNX export "
                             "(backend='onnx')",
                    "openvino": "an OpenVINO IR model; dlrt runs the folder's ONNX export on OpenVINO with "
                                "device='openvino'"}.get(backend, "use backend='onnx'")
            raise ValueError(f"backend={backend!r} is not supported by dlrt.Embedder: {hint}")
        for key, value in (model_kwargs or {}).items():
            if key == "provider":
                if device is not None:
                    raise ValueError("give device= or model_kwargs['provider'], not both")
                if value not in _PROVIDERS:
                    raise ValueError(f"dlrt has no backend for the provider {value!r}; it runs "
                                     f"{', '.join(_PROVIDERS)}")
                device = _PROVIDERS[value]
            elif key == "file_name":
                if value not in _MODEL_FILES:
                    raise ValueError(f"model_kwargs file_name={value!r}: dlrt.Embedder loads the folder's "
                                     f"{' or '.join(_MODEL_FILES)}; point model_folder at a folder with that model")
            elif key == "export":
                if value:
                    raise ValueError("model_kwargs export=True: dlrt does not export models; give a folder with "
                                     "an ONNX export")
            else:
                raise ValueError(f"model_kwargs {key!r} is not supported by dlrt.Embedder; it takes provider, "
                                 "file_name and export")
        if truncate_dim is not None and (not isinstance(truncate_dim, int) or truncate_dim < 1):
            raise ValueError(f"truncate_dim must be None or an int >= 1, got {truncate_dim!r}")
        super().__init__(model_folder, None if device is None else _device_spec_of(device), threads, strict,
                         max_seq_length, cpu_precision)
        self.truncate_dim = truncate_dim
        if similarity_fn_name is None:
            path = os.path.join(os.fspath(model_folder), "config_sentence_transformers.json")
            if os.path.isfile(path):
                with open(path, encoding="utf-8") as f:
                    similarity_fn_name = json.load(f).get("similarity_fn_name")
        self._similarity = (None if similarity_fn_name is None
                            else _similarity_name(similarity_fn_name, self.is_multi_vector))

    @property
    def similarity_fn_name(self):
        """The similarity similarity() and similarity_pairwise() compute: "cosine" (the default),
        "dot", "euclidean" or "manhattan" (negative distances); "maxsim" (the default) or "meanmaxsim"
        (MaxSim over the query's token count) for a multi-vector (ColBERT) folder. Settable."""
        if self._similarity is None:
            self._similarity = "maxsim" if self.is_multi_vector else "cosine"
        return self._similarity

    @similarity_fn_name.setter
    def similarity_fn_name(self, name):
        self._similarity = _similarity_name(name, self.is_multi_vector)

    def similarity(self, embeddings1, embeddings2):
        """sentence-transformers' similarity(): a float32 [len(embeddings1), len(embeddings2)] matrix of
        similarity_fn_name between every pair of rows (1-D inputs count as one row); a torch.Tensor
        when an input is one, else numpy. For a multi-vector folder ("maxsim") the inputs are
        per-token vectors (one [tokens, dimension] array per text, as encode(output_value=
        "token_embeddings") gives them) and each entry is the pair's MaxSim score ("meanmaxsim": over
        the query's token count)."""
        if self.similarity_fn_name in ("maxsim", "meanmaxsim"):
            q, d = _token_sets(embeddings1), _token_sets(embeddings2)
            mean = self.similarity_fn_name == "meanmaxsim"
            result = np.array([[_maxsim(x, y, mean) for y in d] for x in q],
                              dtype=np.float32).reshape(len(q), len(d))
            return _like_input(result, embeddings1, embeddings2)
        a, b = _rows(embeddings1), _rows(embeddings2)
        if a.shape[1] != b.shape[1]:
            raise ValueError(f"the embeddings differ in dimension: {a.shape[1]} and {b.shape[1]}")
        name = self.similarity_fn_name
        if name == "cosine":
            result = _unit(a) @ _unit(b).T
        elif name == "dot":
            result = a @ b.T
        elif name == "euclidean":
            result = -_pairwise(lambda x, y: np.sqrt(((x - y) ** 2).sum(axis=-1)), a, b)
        else:
            result = -_pairwise(lambda x, y: np.abs(x - y).sum(axis=-1), a, b)
        return _like_input(np.ascontiguousarray(result, dtype=np.float32), embeddings1, embeddings2)

    def similarity_pairwise(self, embeddings1, embeddings2):
        """sentence-transformers' similarity_pairwise(): similarity_fn_name of row i of each input, for
        every i (a float32 vector; the inputs have equal shapes; for "maxsim", as many texts)."""
        if self.similarity_fn_name in ("maxsim", "meanmaxsim"):
            q, d = _token_sets(embeddings1), _token_sets(embeddings2)
            if len(q) != len(d):
                raise ValueError(f"similarity_pairwise needs as many texts on each side, got {len(q)} and {len(d)}")
            mean = self.similarity_fn_name == "meanmaxsim"
            return _like_input(np.array([_maxsim(x, y, mean) for x, y in zip(q, d)], dtype=np.float32),
                               embeddings1, embeddings2)
        a, b = _rows(embeddings1), _rows(embeddings2)
        if a.shape != b.shape:
            raise ValueError(f"similarity_pairwise needs embeddings of one shape, got {a.shape} and {b.shape}")
        name = self.similarity_fn_name
        if name == "cosine":
            result = (_unit(a) * _unit(b)).sum(axis=1)
        elif name == "dot":
            result = (a * b).sum(axis=1)
        elif name == "euclidean":
            result = -np.sqrt(((a - b) ** 2).sum(axis=1))
        else:
            result = -np.abs(a - b).sum(axis=1)
        return _like_input(result.astype(np.float32), embeddings1, embeddings2)

    def tokenize(self, texts):
        """sentence-transformers' tokenize(): a dict of input_ids, token_type_ids and attention_mask,
        int64 numpy arrays [texts, longest], truncated to max_seq_length and padded to the longest."""
        return self._tokenize([texts] if isinstance(texts, str) else texts)

    @property
    def prompts(self):
        """The named prompts of the folder's config_sentence_transformers.json ("prompts"), with
        sentence-transformers 5's defaults: "query" and "document" are "" (no prompt) unless the
        folder names them, so encode(prompt_name="query") works on any folder."""
        return {"query": "", "document": "", **super().prompts}

    @property
    def device(self):
        """Where the model runs: "cpu", or the accelerator's device ("openvino:GPU", "cuda:0", ...)
        of its largest partition (sentence-transformers gives a torch.device)."""
        return self._device

    def to(self, device):
        """Loads the model again on `device` (a dlrt device spec: "cpu", "cuda", "openvino:GPU", ...;
        a torch.device works as its str) and returns the Embedder."""
        spec = _device_spec_of(device)
        self._to(spec)
        self._device_asked = spec
        return self

    def get_max_seq_length(self):
        """max_seq_length (sentence-transformers' method)."""
        return self.max_seq_length

    def get_sentence_embedding_dimension(self):
        """The length of each vector encode() gives: the model's, or truncate_dim when smaller."""
        dim = super().get_sentence_embedding_dimension()
        return min(dim, self.truncate_dim) if self.truncate_dim else dim

    @contextlib.contextmanager
    def truncate_sentence_embeddings(self, truncate_dim):
        """Within the block, encode() keeps the first truncate_dim values (sentence-transformers')."""
        before, self.truncate_dim = self.truncate_dim, truncate_dim
        try:
            yield
        finally:
            self.truncate_dim = before

    def encode(self, sentences=None, prompt_name=None, prompt=None, batch_size=32, show_progress_bar=None,
               output_value="sentence_embedding", precision="float32", convert_to_numpy=True,
               convert_to_tensor=False, device=None, normalize_embeddings=False, truncate_dim=None,
               pool=None, chunk_size=None, is_query=None, *, images=None, **kwargs):
        """Embeds texts (or a clip folder's images) with sentence-transformers' SentenceTransformer.encode semantics.

        sentences             a str (gives one vector) or a list of str (gives one row per
                              text, in input order).
        images                instead of sentences, for a clip folder (Embedder.kind == "clip"):
                              an image file's path (str, os.PathLike) or its encoded bytes
                              (bytes, bytearray, memoryview; JPEG, PNG, WebP, GIF), decoded as
                              dlrt embed --image does, or its RGB pixels (a uint8 [height,
                              width, 3] numpy array) gives one vector; a list of them (or a
                              [n, height, width, 3] array) one row per image, in the space of
                              the folder's text vectors; or a PIL image, taken as transformers'
                              processor takes it: converted with its convert("RGB") unless RGB,
                              without EXIF orientation (PIL is not needed otherwise).
                              Another kind of folder raises dlrt.InvalidArgument naming its
                              kind; sentences and images in one call raise ValueError. prompt,
                              prompt_name, is_query and output_value="token_embeddings"
                              apply to texts only (ValueError).
        prompt_name           a key of Embedder.prompts (config_sentence_transformers.json);
                              its text goes in front of each sentence. ValueError if unknown.
        prompt                a prompt text to put in front of each sentence; wins over
                              prompt_name. Neither given: the folder's default_prompt_name's
                              prompt, if it names one.
        batch_size            texts per model run (texts sorted by token count first).
        show_progress_bar     True: a bar over the batches on stderr (tqdm when importable).
                              None: on when the "dlrt" logger is at INFO or DEBUG.
        output_value          "sentence_embedding": one vector per text. "token_embeddings": per
                              text a float32 [tokens, dimension] array (a list of them; one array
                              for a str): the transformer's token vectors up to the text's last
                              token, as sentence-transformers gives them; for a multi-vector
                              (ColBERT / PyLate) folder (Embedder.is_multi_vector), which has
                              only these, its projected, L2-normalised token vectors as PyLate's
                              encode gives them.
        is_query              multi-vector folders only: True (the default, as PyLate's) embeds
                              the texts as queries (query marker, expansion to query_length),
                              False as documents (document marker, skip-list).
        precision             "float32", or "int8", "uint8", "binary", "ubinary": quantized as
                              sentence_transformers.quantization.quantize_embeddings does
                              (int8/uint8 ranges from these embeddings' own min and max: two
                              texts at least, else dlrt.InvalidArgument, a ValueError).
        convert_to_numpy      True: one numpy array; False: a list of 1-D numpy arrays.
        convert_to_tensor     True: one torch.Tensor (needs torch; ImportError without it).
        device                where to run (sentence-transformers' encode(device=)): the Embedder's device
                              changes nothing; another dlrt device spec, or "cuda"/"cuda:N", loads
                              the model there first (Embedder.to); torch-only devices ("mps", ...) raise.
        normalize_embeddings  True: L2-normalise each vector (after truncate_dim). False (the
                              default) leaves the vectors as the folder's modules make them:
                              a folder whose modules.json lists a Normalize module still gives
                              unit vectors (Embedder.normalizes).
        truncate_dim          keep the first truncate_dim values of each vector, before
                              normalize_embeddings (None: Embedder.truncate_dim; 0: all).
        pool, chunk_size      multi-process encoding: not supported (must be None).
        task                  "query" or "document": a Router folder's query or document route
                              (encode_query / encode_document set it); None its default route.
                              A folder without a Router ignores it, as sentence-transformers
                              does. Other keyword arguments raise ValueError.

        The GIL is released while the texts are tokenized and the model runs.
        """
        if precision not in _PRECISIONS:
            raise ValueError(f"Precision {precision!r} is not supported (one of {', '.join(_PRECISIONS)})")
        if output_value not in ("sentence_embedding", "token_embeddings"):
            raise ValueError(f"output_value={output_value!r} is not supported: 'sentence_embedding' or "
                             "'token_embeddings'")
        if images is not None:
            if sentences is not None:
                raise ValueError("encode() takes texts (sentences) or images, not both in one call: call it "
                                 "once for each (a clip folder's text and image vectors share one space)")
            if output_value != "sentence_embedding" or is_query is not None:
                raise ValueError("images give one vector each: output_value='token_embeddings' and is_query "
                                 "apply to texts only")
            if prompt is not None or prompt_name is not None:
                raise ValueError("prompt and prompt_name apply to texts, not to images")
        elif sentences is None:
            raise TypeError("encode() needs sentences (a str or a list of str) or images=")
        if images is None and self.is_multi_vector and output_value == "sentence_embedding":
            raise ValueError("this folder is a multi-vector (ColBERT) model, one vector per token: call "
                             "encode(..., output_value='token_embeddings', is_query=True or False)")
        if is_query is not None and not self.is_multi_vector:
            raise ValueError("is_query applies to multi-vector (ColBERT) folders; this one is not "
                             "(encode_query / encode_document, or task='query' / 'document')")
        task = kwargs.pop("task", None)
        if task not in (None, "query", "document"):
            raise ValueError(f"task={task!r}: dlrt routes texts as 'query' or 'document' (a Router folder's "
                             "routes; encode_query / encode_document), or None (its default route)")
        if output_value == "token_embeddings" and (precision != "float32" or truncate_dim):
            raise ValueError("output_value='token_embeddings' takes neither precision nor truncate_dim")
        if device is not None:  # sentence-transformers moves the model there (a torch.device works as its str)
            wanted = _device_spec_of(device)
            # Asked for before (a missing accelerator falls back to the CPU): not loaded again.
            if wanted not in (self.device, self.device.split(":")[0], getattr(self, "_device_asked", None)):
                self.to(wanted)
        if pool is not None or chunk_size is not None:
            raise ValueError("multi-process encoding (pool, chunk_size) is not supported by dlrt.Embedder; "
                             "one Embedder may be used from many threads instead")
        unused = sorted(kwargs)
        if unused:
            raise ValueError(f"Embedder.encode() has been called with keyword arguments it does not take: {unused}")
        if truncate_dim is None:
            truncate_dim = self.truncate_dim
        if truncate_dim is not None and (not isinstance(truncate_dim, int) or truncate_dim < 0):
            raise ValueError(f"truncate_dim must be None or an int >= 0, got {truncate_dim!r}")

        if batch_size < 1:
            raise _dlrt.InvalidArgument(f"batch_size must be >= 1, got {batch_size}")
        if show_progress_bar is None:
            show_progress_bar = _log.getEffectiveLevel() in (logging.INFO, logging.DEBUG)
        if images is not None:
            single = (isinstance(images, (str, bytes, bytearray, memoryview, os.PathLike))
                      or (isinstance(images, np.ndarray) and images.ndim == 3) or _is_pil_image(images))
            try:
                items = [images] if single else list(images)
            except TypeError:
                raise TypeError("images must be an image file's path (str, os.PathLike), its encoded bytes "
                                "(bytes, bytearray, memoryview), a uint8 [height, width, 3] numpy array, a PIL "
                                f"image or a list of them, got {type(images).__name__}") from None
            vectors = self._encode_image_list(items, batch_size, show_progress_bar)
            return self._finish(vectors, single, truncate_dim, normalize_embeddings, precision, convert_to_numpy,
                                convert_to_tensor)

        single = isinstance(sentences, str)
        texts = [sentences] if single else list(sentences)
        for t in texts:
            if not isinstance(t, str):
                raise TypeError(f"sentences must be a str or a list of str, got an element of type {type(t).__name__}")

        if prompt is None:
            if prompt_name is not None:
                if prompt_name not in self.prompts:
                    raise ValueError(f"Prompt name {prompt_name!r} not found in the configured prompts "
                                     f"dictionary with keys {list(self.prompts)!r}.")
                prompt = self.prompts[prompt_name]
            elif self.default_prompt_name is not None:
                prompt = self.prompts.get(self.default_prompt_name)
        elif prompt_name is not None:
            _log.warning("Encode with either a `prompt`, a `prompt_name`, or neither, but not both. "
                         "Ignoring the `prompt_name` in favor of `prompt`.")
        prompt = prompt or ""  # put in front of each text natively, as dlrt serve does

        route = None if task is None else task == "query"  # a Router folder's route
        if output_value == "token_embeddings":
            arrays = self._encode_tokens(texts, batch_size, True if is_query is None else bool(is_query), prompt)
            if convert_to_tensor:
                torch = _import_torch()
                arrays = [torch.from_numpy(a) for a in arrays]
            return arrays[0] if single else arrays
        if show_progress_bar:
            bar = _progress_bar(math.ceil(len(texts) / batch_size))
            shown = [0]

            def progress(done):
                batches = math.ceil(done / batch_size)
                bar.update(batches - shown[0])
                shown[0] = batches

            try:
                vectors = self._encode_texts(texts, batch_size, progress, prompt, route)
            finally:
                bar.close()
        else:
            vectors = self._encode_texts(texts, batch_size, prompt=prompt, is_query=route)
        return self._finish(vectors, single, truncate_dim, normalize_embeddings, precision, convert_to_numpy,
                            convert_to_tensor)

    def _encode_image_list(self, images, batch_size, show_progress_bar):
        """float32 [len(images), dimension]: batch_size images a native call (each batch decoded there)."""
        if not images:
            return self._encode_images([])
        bar = _progress_bar(math.ceil(len(images) / batch_size)) if show_progress_bar else None
        parts = []
        try:
            for start in range(0, len(images), batch_size):
                batch = [_pil_rgb(x) if _is_pil_image(x) else x for x in images[start:start + batch_size]]
                parts.append(self._encode_images(batch, start))
                if bar is not None:
                    bar.update(1)
        finally:
            if bar is not None:
                bar.close()
        return parts[0] if len(parts) == 1 else np.concatenate(parts)

    @staticmethod
    def _finish(vectors, single, truncate_dim, normalize_embeddings, precision, convert_to_numpy,
                convert_to_tensor):
        """encode()'s truncate_dim, normalize_embeddings, precision and conversion of the rows."""
        if truncate_dim:
            vectors = np.ascontiguousarray(vectors[:, :truncate_dim])
        if normalize_embeddings:
            norms = np.linalg.norm(vectors.astype(np.float64), axis=1, keepdims=True)
            vectors = (vectors / np.maximum(norms, 1e-12)).astype(np.float32)
        if len(vectors) and precision != "float32":
            vectors = _quantize(vectors, precision)

        if convert_to_tensor:
            torch = _import_torch()
            result = torch.from_numpy(vectors) if len(vectors) else torch.tensor([])
        elif convert_to_numpy:
            result = vectors
        else:
            result = list(vectors)
        return result[0] if single else result

    def encode_query(self, sentences, prompt_name=None, prompt=None, **kwargs):
        """encode() with the folder's "query" prompt when it has one and neither prompt nor
        prompt_name is given (sentence-transformers' encode_query); for a multi-vector folder,
        its query token vectors (output_value="token_embeddings", is_query=True)."""
        if prompt_name is None and prompt is None and "query" in self.prompts:
            prompt_name = "query"
        if self.is_multi_vector:  # a ColBERT folder: its query vectors
            kwargs.setdefault("output_value", "token_embeddings")
            kwargs.setdefault("is_query", True)
        else:  # a Router folder's query route
            kwargs.setdefault("task", "query")
        return self.encode(sentences, prompt_name=prompt_name, prompt=prompt, **kwargs)

    def encode_document(self, sentences, prompt_name=None, prompt=None, **kwargs):
        """encode() with the folder's "document", else "passage", else "corpus" prompt when it has
        one and neither prompt nor prompt_name is given (sentence-transformers' encode_document);
        for a multi-vector folder, its document token vectors (is_query=False)."""
        if prompt_name is None and prompt is None:
            folder = super().prompts  # the folder's own: its "passage" before the empty default "document"
            prompt_name = next((n for n in ("document", "passage", "corpus") if n in folder), None)
        if self.is_multi_vector:  # a ColBERT folder: its document vectors
            kwargs.setdefault("output_value", "token_embeddings")
            kwargs.setdefault("is_query", False)
        else:  # a Router folder's document route
            kwargs.setdefault("task", "document")
        return self.encode(sentences, prompt_name=prompt_name, prompt=prompt, **kwargs)
