"""dlrt.Embedder: the native embedder (dlrt._dlrt.Embedder) with sentence-transformers'
SentenceTransformer.encode semantics on top. docs/python-embedder.md lists the rules."""

import logging
import math
import sys

import numpy as np

from . import _dlrt

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


def _quantize(embeddings, precision):
    """sentence_transformers.quantization.quantize_embeddings without ranges or calibration
    embeddings: int8/uint8 buckets from the embeddings' own per-dim min and max."""
    if precision in ("int8", "uint8"):
        starts = embeddings.min(axis=0)
        steps = (embeddings.max(axis=0) - starts) / 255
        with np.errstate(divide="ignore", invalid="ignore"):
            buckets = (embeddings - starts) / steps
        if precision == "uint8":
            return buckets.astype(np.uint8)
        return (buckets - 128).astype(np.int8)
    bits = np.packbits(embeddings > 0).reshape(embeddings.shape[0], -1)
    if precision == "ubinary":
        return bits
    return (bits - 128).astype(np.int8)


def _import_torch():
    try:
        import torch
    except ImportError as e:
        raise ImportError("encode(convert_to_tensor=True) returns a torch.Tensor and needs PyTorch, "
                          "which this Python cannot import (pip install torch); without it, use the "
                          "default convert_to_numpy=True") from e
    return torch


class Embedder(_dlrt.Embedder):
    __doc__ = _dlrt.Embedder.__doc__

    def encode(self, sentences, prompt_name=None, prompt=None, batch_size=32, show_progress_bar=None,
               output_value="sentence_embedding", precision="float32", convert_to_numpy=True,
               convert_to_tensor=False, device=None, normalize_embeddings=False, truncate_dim=None,
               pool=None, chunk_size=None, is_query=None, **kwargs):
        """Embeds texts with sentence-transformers' SentenceTransformer.encode semantics.

        sentences             a str (gives one vector) or a list of str (gives one row per
                              text, in input order).
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
                              (int8/uint8 ranges from these embeddings' own min and max).
        convert_to_numpy      True: one numpy array; False: a list of 1-D numpy arrays.
        convert_to_tensor     True: one torch.Tensor (needs torch; ImportError without it).
        device                must be None: the device is chosen by Embedder(..., device=).
        normalize_embeddings  True: L2-normalise each vector (after truncate_dim). False (the
                              default) leaves the vectors as the folder's modules make them:
                              a folder whose modules.json lists a Normalize module still gives
                              unit vectors (Embedder.normalizes).
        truncate_dim          keep the first truncate_dim values of each vector (None or 0:
                              all), before normalize_embeddings.
        pool, chunk_size      multi-process encoding: not supported (must be None).
        task                  accepted, as sentence-transformers accepts it for models
                              without a Router; other keyword arguments raise ValueError.

        The GIL is released while the texts are tokenized and the model runs.
        """
        if precision not in _PRECISIONS:
            raise ValueError(f"Precision {precision!r} is not supported (one of {', '.join(_PRECISIONS)})")
        if output_value not in ("sentence_embedding", "token_embeddings"):
            raise ValueError(f"output_value={output_value!r} is not supported: 'sentence_embedding' or "
                             "'token_embeddings'")
        if self.is_multi_vector and output_value == "sentence_embedding":
            raise ValueError("this folder is a multi-vector (ColBERT) model, one vector per token: call "
                             "encode(..., output_value='token_embeddings', is_query=True or False)")
        if is_query is not None and not self.is_multi_vector:
            raise ValueError("is_query applies to multi-vector (ColBERT) folders; this one is not")
        if output_value == "token_embeddings" and (precision != "float32" or truncate_dim):
            raise ValueError("output_value='token_embeddings' takes neither precision nor truncate_dim")
        if device is not None:
            raise ValueError(f"encode(device={device!r}): dlrt.Embedder runs on the device it was created "
                             "for; pass device= to dlrt.Embedder(...) instead")
        if pool is not None or chunk_size is not None:
            raise ValueError("multi-process encoding (pool, chunk_size) is not supported by dlrt.Embedder; "
                             "one Embedder may be used from many threads instead")
        unused = sorted(set(kwargs) - {"task"})
        if unused:
            raise ValueError(f"Embedder.encode() has been called with keyword arguments it does not take: {unused}")
        if truncate_dim is not None and (not isinstance(truncate_dim, int) or truncate_dim < 0):
            raise ValueError(f"truncate_dim must be None or an int >= 0, got {truncate_dim!r}")

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
        if prompt:
            texts = [prompt + t for t in texts]

        if batch_size < 1:
            raise _dlrt.InvalidArgument(f"batch_size must be >= 1, got {batch_size}")
        if output_value == "token_embeddings":
            arrays = self._encode_tokens(texts, batch_size, True if is_query is None else bool(is_query))
            if convert_to_tensor:
                torch = _import_torch()
                arrays = [torch.from_numpy(a) for a in arrays]
            return arrays[0] if single else arrays
        if show_progress_bar is None:
            show_progress_bar = _log.getEffectiveLevel() in (logging.INFO, logging.DEBUG)
        if show_progress_bar:
            bar = _progress_bar(math.ceil(len(texts) / batch_size))
            shown = [0]

            def progress(done):
                batches = math.ceil(done / batch_size)
                bar.update(batches - shown[0])
                shown[0] = batches

            try:
                vectors = self._encode_texts(texts, batch_size, progress)
            finally:
                bar.close()
        else:
            vectors = self._encode_texts(texts, batch_size)

        if truncate_dim:
            vectors = np.ascontiguousarray(vectors[:, :truncate_dim])
        if normalize_embeddings:
            norms = np.linalg.norm(vectors.astype(np.float64), axis=1, keepdims=True)
            vectors = (vectors / np.maximum(norms, 1e-12)).astype(np.float32)
        if len(texts) and precision != "float32":
            vectors = _quantize(vectors, precision)

        if convert_to_tensor:
            torch = _import_torch()
            result = torch.from_numpy(vectors) if len(texts) else torch.tensor([])
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
        return self.encode(sentences, prompt_name=prompt_name, prompt=prompt, **kwargs)

    def encode_document(self, sentences, prompt_name=None, prompt=None, **kwargs):
        """encode() with the folder's "document", else "passage", else "corpus" prompt when it has
        one and neither prompt nor prompt_name is given (sentence-transformers' encode_document);
        for a multi-vector folder, its document token vectors (is_query=False)."""
        if prompt_name is None and prompt is None:
            prompt_name = next((n for n in ("document", "passage", "corpus") if n in self.prompts), None)
        if self.is_multi_vector:  # a ColBERT folder: its document vectors
            kwargs.setdefault("output_value", "token_embeddings")
            kwargs.setdefault("is_query", False)
        return self.encode(sentences, prompt_name=prompt_name, prompt=prompt, **kwargs)
