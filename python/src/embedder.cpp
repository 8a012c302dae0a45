// The native base of dlrt.Embedder over dlrt::embed::Embedder: loading, the
// batched embedding and the folder's facts; encode() with sentence-transformers'
// semantics is python/dlrt/_embedder.py.
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <functional>
#include <memory>

#include "bindings.h"
#include "dlrt/cpu_precision.h"
#include "embed/models/embedder.h"
#include "embed/models/kind.h"
#include "embed/models/multi_vector.h"
#include "embed/models/sparse.h"
#include "embed/models/token_inputs.h"
#include "embed/tokenizer/tokenizer.h"

namespace dlrt::python {
namespace {

const char* const kEmbedderDoc = R"(Sentence embeddings from a sentence-transformers / Hugging Face ONNX
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
a model without input_ids or a 3-D output), dlrt.Unsupported (a tokenizer other than
BERT WordPiece) and Session's errors. One Embedder may be used from many threads.)";

const char* const kEncodeDoc = R"(The native half of Embedder.encode (python/dlrt/_embedder.py): embeds
`texts` (a sequence of str) `batch_size` at a time, texts sorted by token count
(less padding), and returns a float32 [len(texts), dimension] array in input
order, normalised where the folder asks for it (Embedder.normalizes) and only
there. `progress(done)` (optional) is called with the GIL held after each batch,
`done` being the number of texts embedded so far; an exception it raises stops
the encoding and propagates. The GIL is released while the model runs.)";

const char* const kEncodeTokensDoc = R"(The native half of Embedder.encode(output_value="token_embeddings"):
per text of `texts`, a float32 [tokens, dimension] array. A multi-vector
(ColBERT) folder gives its projected, L2-normalised token vectors, for
queries when `is_query` (else documents); any other folder its transformer's
token vectors up to the text's last token (max_seq_length tokens at most).
`batch_size` texts per model run, without the GIL.)";

// The native embedder and how it was made: max_seq_length above the one it
// was created with, and to(device), make a new one from `dir` and `options`.
// A call takes its own reference (with the GIL held), so a replacement never
// frees an embedder another thread is using. A multi-vector (ColBERT) folder
// has `multi` instead of `embedder`; its base() answers the folder's facts.
struct PyEmbedder {
  std::shared_ptr<embed::Embedder> embedder;
  std::shared_ptr<embed::MultiVectorEmbedder> multi;
  std::string dir;
  embed::EmbedderOptions options;
  size_t max_seq_length = 0;  // tokens per text, <= the embedder's max_length()
};

// The folder's Embedder: `embedder`, or the multi-vector one's base.
std::shared_ptr<const embed::Embedder> share(PyEmbedder& e) {
  if (e.multi) return std::shared_ptr<const embed::Embedder>(e.multi, &e.multi->base());
  if (!e.embedder) throw nb::value_error("the Embedder is not initialised");
  return e.embedder;
}

const embed::Embedder& get(PyEmbedder& e) { return *share(e); }

// T::create(dir, options) without the GIL (Embedder or MultiVectorEmbedder).
template <typename T>
std::shared_ptr<T> create_shared(const std::string& dir, const embed::EmbedderOptions& options) {
  Result<std::unique_ptr<T>> created = Status();
  {
    nb::gil_scoped_release unlocked;
    created = T::create(dir, options);
  }
  check(created.status());
  return std::shared_ptr<T>(std::move(created).value());
}

// Loads `self.dir` with `options`: a MultiVectorEmbedder for a multi-vector folder, else an Embedder.
void load(PyEmbedder& self, const embed::EmbedderOptions& options) {
  if (embed::folder_has(self.dir, embed::Capability::kMaxSim)) {
    self.multi = create_shared<embed::MultiVectorEmbedder>(self.dir, options);
    self.embedder.reset();
  } else {
    self.embedder = create_shared<embed::Embedder>(self.dir, options);
    self.multi.reset();
  }
  self.options = options;
}

size_t checked_max_seq_length(int64_t n) {
  if (n < 3) {
    raise_status(InvalidArgument("max_seq_length must be >= 3 ([CLS], a token, [SEP]), got " + std::to_string(n)));
  }
  return static_cast<size_t>(n);
}

// Embedder.max_seq_length = n: a shorter limit applies at once; a longer one
// than the native embedder takes makes a new one for it, up to the model's
// position embeddings (InvalidArgument beyond them; the old one stays).
void set_max_seq_length(PyEmbedder& self, PyIndex n) {
  const size_t want = checked_max_seq_length(n);
  std::shared_ptr<const embed::Embedder> current = share(self);
  if (self.multi) {
    raise_status(Unsupported("max_seq_length of a multi-vector (ColBERT) folder is fixed: its texts are cut to the "
                             "query_length and document_length of config_sentence_transformers.json"));
  }
  if (want > current->max_length()) {
    embed::EmbedderOptions options = self.options;
    options.max_length = want;
    std::shared_ptr<embed::Embedder> bigger = create_shared<embed::Embedder>(self.dir, options);
    if (bigger->max_length() < want) {
      raise_status(InvalidArgument("max_seq_length " + std::to_string(want) + " is more than the model takes: " +
                                   std::to_string(bigger->max_length()) +
                                   " (config.json's max_position_embeddings)"));
    }
    self.embedder = std::move(bigger);
    self.options = options;
  }
  self.max_seq_length = want;
}

// Embedder.to(device): the same folder on another device (a dlrt device spec).
void move_to(PyEmbedder& self, const std::string& device) {
  embed::EmbedderOptions options = self.options;
  options.device = device;
  load(self, options);
}

void init_embedder(PyEmbedder* self, nb::handle folder, std::optional<std::string> device, PyIndex threads, bool strict,
                   std::optional<PyIndex> max_seq_length, std::optional<std::string> cpu_precision) {
  new (self) PyEmbedder();
  embed::EmbedderOptions options;
  options.device = device.value_or("");
  options.threads = threads_from_python(threads);
  options.strict = strict;
  if (max_seq_length) options.max_length = checked_max_seq_length(*max_seq_length);
  if (cpu_precision && !is_cpu_precision(*cpu_precision))
    raise_status(InvalidArgument("cpu_precision must be f32, bf16, bf16x3 or auto, not '" + *cpu_precision + "'"));
  options.cpu_precision = cpu_precision.value_or("");
  self->dir = path_from_python(folder, "model_folder");
  load(*self, options);
  self->max_seq_length = get(*self).max_length();
}

std::vector<std::string> texts_from_python(nb::handle sentences) {
  std::vector<std::string> texts;
  for (nb::handle s : nb::iter(sentences)) {
    if (!PyUnicode_Check(s.ptr())) {
      throw nb::type_error(("sentences must be a str or a list of str, got an element of type " +
                            str_of(s.type().attr("__name__")))
                               .c_str());
    }
    texts.push_back(utf8_of(s, "sentences[" + std::to_string(texts.size()) + "]"));
  }
  return texts;
}

nb::list encode_tokens(PyEmbedder& self, nb::handle sentences, PyIndex batch_size, bool is_query) {
  std::shared_ptr<const embed::Embedder> base = share(self);
  std::shared_ptr<const embed::MultiVectorEmbedder> multi = self.multi;
  const size_t max_seq_length = self.max_seq_length;
  if (batch_size < 1) raise_status(InvalidArgument("batch_size must be >= 1, got " + std::to_string(batch_size)));
  const std::vector<std::string> texts = texts_from_python(sentences);
  std::vector<std::vector<std::vector<float>>> tokens;
  Status status;
  {
    nb::gil_scoped_release unlocked;
    status = [&]() -> Status {
      std::vector<embed::Encoding> batch;
      for (size_t start = 0; start < texts.size(); start += static_cast<size_t>(batch_size)) {
        const size_t end = std::min(texts.size(), start + static_cast<size_t>(batch_size));
        batch.clear();
        for (size_t i = start; i < end; ++i) {
          DLRT_ASSIGN_OR_RETURN(embed::Encoding e, multi ? multi->tokenize(texts[i], is_query)
                                                         : base->tokenizer().encode_checked(texts[i], max_seq_length));
          batch.push_back(std::move(e));
        }
        DLRT_ASSIGN_OR_RETURN(embed::TokenEmbedResult r,
                              multi ? multi->embed_encoded(batch, is_query) : base->embed_tokens(batch));
        for (auto& t : r.tokens) tokens.push_back(std::move(t));
      }
      return Status::Ok();
    }();
  }
  check(status);
  const size_t dim = multi ? multi->dimension() : base->hidden_size();
  nb::list out;
  for (const auto& rows : tokens) {
    auto buffer = std::make_unique<std::vector<float>>(rows.size() * dim);
    for (size_t t = 0; t < rows.size(); ++t) std::copy(rows[t].begin(), rows[t].end(), buffer->data() + t * dim);
    float* data = buffer->data();
    nb::capsule owner(buffer.release(), [](void* p) noexcept { delete static_cast<std::vector<float>*>(p); });
    out.append(nb::ndarray<nb::numpy, float>(data, {rows.size(), dim}, owner).cast());
  }
  return out;
}

// Embeds `texts` into rows of `out` (texts.size() x dimension), batch_size at
// a time in order of decreasing token count. Runs without the GIL.
Status embed_all(const embed::Embedder& e, size_t max_seq_length, const std::vector<std::string>& texts,
                 size_t batch_size, const std::function<Status(size_t)>& batch_done, float* out) {
  std::vector<embed::Encoding> encodings;
  encodings.reserve(texts.size());
  for (const std::string& t : texts) {
    DLRT_ASSIGN_OR_RETURN(embed::Encoding enc, e.tokenizer().encode_checked(t, max_seq_length));
    encodings.push_back(std::move(enc));
  }
  const size_t dim = e.dimension(), total = encodings.size();
  size_t done = 0;
  return e.embed_by_length(std::move(encodings), batch_size, std::nullopt, [&](size_t i, std::vector<float>&& v) {
    if (v.size() != dim) {
      return Internal("the embedder returned a vector of " + std::to_string(v.size()) + " values, expected " +
                      std::to_string(dim));
    }
    std::copy(v.begin(), v.end(), out + i * dim);
    ++done;
    if (batch_done && (done % batch_size == 0 || done == total)) return batch_done(done);
    return Status::Ok();
  });
}

nb::object encode_texts(PyEmbedder& self, nb::handle sentences, PyIndex batch_size, nb::handle progress) {
  if (self.multi) {
    throw nb::value_error("this folder is a multi-vector (ColBERT) model: it gives one vector per token; "
                          "use encode(..., output_value=\"token_embeddings\", is_query=...)");
  }
  std::shared_ptr<const embed::Embedder> held = share(self);
  const embed::Embedder& e = *held;
  const size_t max_seq_length = self.max_seq_length;
  if (batch_size < 1) raise_status(InvalidArgument("batch_size must be >= 1, got " + std::to_string(batch_size)));
  std::vector<std::string> texts = texts_from_python(sentences);
  const size_t dim = e.dimension();
  auto buffer = std::make_unique<std::vector<float>>(texts.size() * dim);
  // The progress callback runs with the GIL taken back; an exception it raises
  // is left set as the Python error and stops the encoding (kCancelled).
  bool callback_failed = false;
  std::function<Status(size_t)> batch_done;
  if (!progress.is_none()) {
    batch_done = [&](size_t done) {
      nb::gil_scoped_acquire locked;
      try {
        progress(done);
      } catch (nb::python_error& error) {
        error.restore();
        callback_failed = true;
        return Status(StatusCode::kCancelled, "the progress callback raised an exception");
      }
      return Status::Ok();
    };
  }
  Status status;
  {
    nb::gil_scoped_release unlocked;
    status = embed_all(e, max_seq_length, texts, static_cast<size_t>(batch_size), batch_done, buffer->data());
  }
  if (callback_failed) throw nb::python_error();
  check(status);
  float* data = buffer->data();
  nb::capsule owner(buffer.release(), [](void* p) noexcept { delete static_cast<std::vector<float>*>(p); });
  return nb::ndarray<nb::numpy, float>(data, {texts.size(), dim}, owner).cast();
}

// sentence-transformers' tokenize(): the texts' ids padded to the longest.
nb::dict tokenize_texts(PyEmbedder& self, nb::handle sentences) {
  std::shared_ptr<const embed::Embedder> held = share(self);
  const size_t max_seq_length = self.max_seq_length;
  std::vector<std::string> texts = texts_from_python(sentences);
  std::vector<embed::Encoding> encodings;
  Status status;
  {
    nb::gil_scoped_release unlocked;
    for (const std::string& t : texts) {
      Result<embed::Encoding> enc = held->tokenizer().encode_checked(t, max_seq_length);
      if (!enc.ok()) {
        status = enc.status();
        break;
      }
      encodings.push_back(std::move(enc).value());
    }
  }
  check(status);
  size_t length = 0;
  for (const embed::Encoding& enc : encodings) length = std::max(length, enc.ids.size());
  const size_t rows = encodings.size();
  auto make = [&](auto pick, int64_t pad) {
    auto buffer = std::make_unique<std::vector<int64_t>>(rows * length, pad);
    for (size_t r = 0; r < rows; ++r) {
      const std::vector<int64_t>& v = pick(encodings[r]);
      std::copy(v.begin(), v.end(), buffer->begin() + static_cast<std::ptrdiff_t>(r * length));
    }
    int64_t* data = buffer->data();
    nb::capsule owner(buffer.release(), [](void* p) noexcept { delete static_cast<std::vector<int64_t>*>(p); });
    return nb::ndarray<nb::numpy, int64_t>(data, {rows, length}, owner).cast();
  };
  nb::dict out;
  out["input_ids"] = make([](const embed::Encoding& e) -> const std::vector<int64_t>& { return e.ids; },
                          held->tokenizer().pad_id());
  out["token_type_ids"] = make([](const embed::Encoding& e) -> const std::vector<int64_t>& { return e.type_ids; }, 0);
  out["attention_mask"] =
      make([](const embed::Encoding& e) -> const std::vector<int64_t>& { return e.attention_mask; }, 0);
  return out;
}

// The device the embedder's largest partition runs on ("cpu", "openvino:GPU", ...).
std::string device_of(PyEmbedder& self) {
  const RunReport placed = share(self)->placement();
  const PartitionReport* largest = nullptr;
  for (const PartitionReport& p : placed.partitions)
    if (!largest || p.node_count > largest->node_count) largest = &p;
  if (!largest || largest->backend == "cpu") return "cpu";
  return largest->device;
}

const char* const kEncodeSparseDoc = R"(Sparse (SPLADE) vectors of a sparse model folder (modules.json:
MLMTransformer + SpladePooling; Embedder.kind == "sparse").

sentences   a str (gives one pair) or a sequence of str (gives a list of pairs, in input order).
top_k       keep each text's top_k largest weights (SparseEncoder.encode's max_active_dims);
            None: every non-zero weight.
batch_size  texts per model run (texts sorted by token count first).

Each text gives a pair (indices, values): an int64 array of vocabulary ids, ascending,
and a float32 array of their weights (all > 0); the other ids weigh 0. A dense model
folder raises dlrt.InvalidArgument, as encode() does on a sparse one.)";

// Embedder.encode_sparse: (indices, values) per text.
nb::object encode_sparse(PyEmbedder& self, nb::handle sentences, std::optional<PyIndex> top_k, PyIndex batch_size) {
  std::shared_ptr<const embed::Embedder> held = share(self);
  const embed::Embedder& e = *held;
  if (batch_size < 1) raise_status(InvalidArgument("batch_size must be >= 1, got " + std::to_string(batch_size)));
  if (top_k && *top_k < 1) raise_status(InvalidArgument("top_k must be >= 1 or None, got " + std::to_string(*top_k)));
  const bool one = PyUnicode_Check(sentences.ptr());
  std::vector<std::string> texts;
  if (one) {
    texts.push_back(utf8_of(sentences, "sentences"));
  } else {
    for (nb::handle s : nb::iter(sentences)) {
      if (!PyUnicode_Check(s.ptr())) {
        throw nb::type_error(("sentences must be a str or a list of str, got an element of type " +
                              str_of(s.type().attr("__name__")))
                                 .c_str());
      }
      texts.push_back(utf8_of(s, "sentences[" + std::to_string(texts.size()) + "]"));
    }
  }
  std::vector<embed::SparseVector> vectors(texts.size());
  Status status;
  {
    nb::gil_scoped_release unlocked;
    std::vector<embed::Encoding> encodings;
    for (const std::string& t : texts) {
      auto enc = e.tokenize(t);
      if (!enc.ok()) {
        status = enc.status();
        break;
      }
      encodings.push_back(std::move(enc).value());
    }
    if (status.ok())
      status = e.encode_sparse_by_length(std::move(encodings), static_cast<size_t>(batch_size),
                                         top_k ? static_cast<size_t>(*top_k) : size_t{0},
                                         [&](size_t i, embed::SparseVector&& v) {
                                           vectors[i] = std::move(v);
                                           return Status::Ok();
                                         });
  }
  check(status);
  nb::list out;
  for (embed::SparseVector& v : vectors) {
    auto* indices = new std::vector<int64_t>(std::move(v.indices));
    auto* values = new std::vector<float>(std::move(v.values));
    nb::capsule own_i(indices, [](void* p) noexcept { delete static_cast<std::vector<int64_t>*>(p); });
    nb::capsule own_v(values, [](void* p) noexcept { delete static_cast<std::vector<float>*>(p); });
    out.append(nb::make_tuple(nb::ndarray<nb::numpy, int64_t>(indices->data(), {indices->size()}, own_i).cast(),
                              nb::ndarray<nb::numpy, float>(values->data(), {values->size()}, own_v).cast()));
  }
  if (one) return out[0];
  return out;
}


nb::dict prompts_of(PyEmbedder& self) {
  nb::dict out;
  for (const auto& [name, text] : get(self).prompts()) out[nb::str(name.c_str())] = nb::str(text.c_str());
  return out;
}

}  // namespace

void bind_embedder(nb::module_& m) {
  nb::class_<PyEmbedder>(m, "Embedder", kEmbedderDoc)
      .def("__init__", &init_embedder, nb::arg("model_folder"), nb::arg("device") = nb::none(),
           nb::arg("threads") = 0, nb::arg("strict") = false, nb::arg("max_seq_length") = nb::none(),
           nb::arg("cpu_precision") = nb::none(),
           nb::sig("def __init__(self, model_folder: str | os.PathLike[str], device: str | None = None, "
                   "threads: int = 0, strict: bool = False, max_seq_length: int | None = None, "
                   "cpu_precision: str | None = None) -> None"))
      .def("_encode_texts", &encode_texts, nb::arg("texts"), nb::arg("batch_size") = 32,
           nb::arg("progress") = nb::none(),
           nb::sig("def _encode_texts(self, texts: collections.abc.Iterable[str], batch_size: int = 32, "
                   "progress: collections.abc.Callable[[int], object] | None = None) -> numpy.ndarray"),
           kEncodeDoc)
      .def("_encode_tokens", &encode_tokens, nb::arg("texts"), nb::arg("batch_size") = 32, nb::arg("is_query") = true,
           nb::sig("def _encode_tokens(self, texts: collections.abc.Iterable[str], batch_size: int = 32, "
                   "is_query: bool = True) -> list[numpy.ndarray]"),
           kEncodeTokensDoc)
      .def_prop_ro("is_multi_vector", [](PyEmbedder& e) { return static_cast<bool>(e.multi); },
                   "True for a multi-vector (ColBERT / PyLate) folder: one vector per token, for queries or "
                   "documents (encode(..., output_value=\"token_embeddings\", is_query=...)).")
      .def_prop_ro("prompts", &prompts_of, nb::for_getter(nb::sig("def prompts(self, /) -> dict[str, str]")),
                   "The named prompts of the folder's config_sentence_transformers.json (\"prompts\"): "
                   "name -> the text put in front of each input; {} when there are none.")
      .def_prop_ro("default_prompt_name",
                   [](PyEmbedder& e) -> std::optional<std::string> {
                     const std::string& name = get(e).default_prompt_name();
                     if (name.empty()) return std::nullopt;
                     return name;
                   },
                   "config_sentence_transformers.json's \"default_prompt_name\": the prompt encode() uses "
                   "when given neither prompt nor prompt_name; None when it names none.")
      .def_prop_rw("max_seq_length", [](PyEmbedder& e) { get(e); return e.max_seq_length; }, &set_max_seq_length,
                   "Tokens per text, [CLS]/[SEP] included; longer texts are truncated. Settable: at least 3,\n"
                   "at most the model's position embeddings (a longer limit than the Embedder was made with\n"
                   "loads the model again). A multi-vector folder's is fixed (dlrt.Unsupported): its texts are\n"
                   "cut to its query_length and document_length.")
      .def("_tokenize", &tokenize_texts, nb::arg("texts"),
           nb::sig("def _tokenize(self, texts: collections.abc.Iterable[str]) -> dict[str, numpy.ndarray]"),
           "input_ids, token_type_ids and attention_mask of the texts (int64 [texts, longest]), truncated to\n"
           "max_seq_length and padded to the longest (the pad id; 0 in the mask). The GIL is released.")
      .def("_to", &move_to, nb::arg("device"),
           "Loads the folder again for `device` (a dlrt device spec); the old one is released once unused.")
      .def_prop_ro("_device", &device_of,
                   "The device of the largest partition: 'cpu', or the backend device ('openvino:GPU', ...).")
      .def("get_sentence_embedding_dimension",
           [](PyEmbedder& e) { return e.multi ? e.multi->dimension() : get(e).dimension(); },
           "The length of each embedding vector (of a multi-vector folder: of each token vector).")
      .def_prop_ro("normalizes", [](PyEmbedder& e) { return get(e).normalize(); },
                   "True when the folder's modules.json has a Normalize module (or there is no modules.json).")
      .def_prop_ro("pooling", [](PyEmbedder& e) { return std::string(embed::pooling_name(get(e).pooling())); },
                   "The folder's pooling: 'mean', 'cls' or 'max'.")
      .def_prop_ro("batching", [](PyEmbedder& e) { return get(e).batching(); },
                   "How encode() batches: 'padded batches', or 'one text per run (dynamic quantization: OP)' "
                   "for a model whose per-tensor dynamic quantization would make a text's vector depend on "
                   "its batch-mates.")
      .def_prop_ro("model_name", [](PyEmbedder& e) { return get(e).model_name(); },
                   "The folder's name (or config.json's _name_or_path).")
      .def("encode_sparse", &encode_sparse, nb::arg("sentences"), nb::arg("top_k") = nb::none(),
           nb::arg("batch_size") = 32,
           nb::sig("def encode_sparse(self, sentences: str | collections.abc.Sequence[str], top_k: int | None = None, "
                   "batch_size: int = 32) -> tuple[numpy.ndarray, numpy.ndarray] | "
                   "list[tuple[numpy.ndarray, numpy.ndarray]]"),
           kEncodeSparseDoc)
      .def_prop_ro("kind", [](PyEmbedder& e) { return std::string(embed::model_kind_name(get(e).kind())); },
                   "'dense' (encode()) or 'sparse' (a SPLADE folder: encode_sparse()).")
      .def("placement", [](PyEmbedder& e) { return get(e).placement(); },
           "Where the embedder's session was placed: a RunReport.")
      .def("precision_choice", [](PyEmbedder& e) { return precision_choice_dict(get(e).precision_choice()); },
           nb::sig("def precision_choice(self) -> dict[str, object]"),
           "What cpu_precision \"auto\" measured on the warm-up texts and chose (as Session.precision_choice()).")
      .def("__repr__", [](PyEmbedder& e) {
        if (!e.embedder && !e.multi) return std::string("Embedder(<not initialised>)");
        const embed::Embedder& b = get(e);
        return "Embedder(model_name=" + repr_of(b.model_name()) +
               ", dimension=" + std::to_string(e.multi ? e.multi->dimension() : b.dimension()) +
               ", max_seq_length=" + std::to_string(e.max_seq_length) + (e.multi ? ", multi_vector=True" : "") + ")";
      });
}

}  // namespace dlrt::python
