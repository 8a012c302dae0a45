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
#include "embed/embedder.h"
#include "embed/multi_vector.h"
#include "embed/token_inputs.h"

namespace dlrt::python {
namespace {

const char* const kEmbedderDoc = R"(Sentence embeddings from a sentence-transformers / Hugging Face ONNX
export folder (model.onnx or onnx/model.onnx, tokenizer.json or vocab.txt, optional
tokenizer_config.json, config.json, modules.json, 1_Pooling/config.json).

Embedder(model_folder, device=None, threads=0, strict=False, max_seq_length=None)

device          device spec as for Session (None: $DLRT_DEVICE, else "auto").
threads         intra-op threads of the CPU backend; 0: one per core; at most 4096.
strict          turn every fallback into an error.
max_seq_length  tokens per text, [CLS]/[SEP] included; None: the folder's, capped at
                the model's positions.

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
token vectors up to the text's last token. `batch_size` texts per model run,
without the GIL.)";

// A folder's embedder: the Embedder, or for a multi-vector folder the
// MultiVectorEmbedder (whose base() answers the folder's facts).
struct PyEmbedder {
  std::unique_ptr<embed::Embedder> embedder;
  std::unique_ptr<embed::MultiVectorEmbedder> multi;
};

const embed::Embedder& get(PyEmbedder& e) {
  if (e.multi) return e.multi->base();
  if (!e.embedder) throw nb::value_error("the Embedder is not initialised");
  return *e.embedder;
}

void init_embedder(PyEmbedder* self, nb::handle folder, std::optional<std::string> device, int64_t threads, bool strict,
                   std::optional<int64_t> max_seq_length) {
  new (self) PyEmbedder();
  embed::EmbedderOptions options;
  options.device = device.value_or("");
  options.threads = threads_from_python(threads);
  options.strict = strict;
  if (max_seq_length) {
    if (*max_seq_length < 3) {
      raise_status(InvalidArgument("max_seq_length must be >= 3 ([CLS], a token, [SEP]), got " +
                                   std::to_string(*max_seq_length)));
    }
    options.max_length = static_cast<size_t>(*max_seq_length);
  }
  std::string dir = path_from_python(folder, "model_folder");
  if (embed::is_multi_vector_folder(embed::model_folder_of(dir))) {
    Result<std::unique_ptr<embed::MultiVectorEmbedder>> created = Status();
    {
      nb::gil_scoped_release unlocked;
      created = embed::MultiVectorEmbedder::create(dir, options);
    }
    check(created.status());
    self->multi = std::move(created).value();
    return;
  }
  Result<std::unique_ptr<embed::Embedder>> created = Status();
  {
    nb::gil_scoped_release unlocked;
    created = embed::Embedder::create(dir, options);
  }
  check(created.status());
  self->embedder = std::move(created).value();
}

std::vector<std::string> texts_of(nb::handle sentences) {
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

nb::list encode_tokens(PyEmbedder& self, nb::handle sentences, int64_t batch_size, bool is_query) {
  const embed::Embedder& base = get(self);
  if (batch_size < 1) raise_status(InvalidArgument("batch_size must be >= 1, got " + std::to_string(batch_size)));
  const std::vector<std::string> texts = texts_of(sentences);
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
          DLRT_ASSIGN_OR_RETURN(embed::Encoding e, self.multi ? self.multi->tokenize(texts[i], is_query) : base.tokenize(texts[i]));
          batch.push_back(std::move(e));
        }
        DLRT_ASSIGN_OR_RETURN(embed::TokenEmbedResult r,
                              self.multi ? self.multi->embed_encoded(batch, is_query) : base.embed_tokens(batch));
        for (auto& t : r.tokens) tokens.push_back(std::move(t));
      }
      return Status::Ok();
    }();
  }
  check(status);
  const size_t dim = self.multi ? self.multi->dimension() : base.hidden_size();
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
Status embed_all(const embed::Embedder& e, const std::vector<std::string>& texts, size_t batch_size,
                 const std::function<Status(size_t)>& batch_done, float* out) {
  std::vector<embed::Encoding> encodings;
  encodings.reserve(texts.size());
  for (const std::string& t : texts) {
    DLRT_ASSIGN_OR_RETURN(embed::Encoding enc, e.tokenize(t));
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

nb::object encode_texts(PyEmbedder& self, nb::handle sentences, int64_t batch_size, nb::handle progress) {
  if (self.multi) {
    throw nb::value_error("this folder is a multi-vector (ColBERT) model: it gives one vector per token; "
                          "use encode(..., output_value=\"token_embeddings\", is_query=...)");
  }
  const embed::Embedder& e = get(self);
  if (batch_size < 1) raise_status(InvalidArgument("batch_size must be >= 1, got " + std::to_string(batch_size)));
  const std::vector<std::string> texts = texts_of(sentences);
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
    status = embed_all(e, texts, static_cast<size_t>(batch_size), batch_done, buffer->data());
  }
  if (callback_failed) throw nb::python_error();
  check(status);
  float* data = buffer->data();
  nb::capsule owner(buffer.release(), [](void* p) noexcept { delete static_cast<std::vector<float>*>(p); });
  return nb::ndarray<nb::numpy, float>(data, {texts.size(), dim}, owner).cast();
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
           nb::sig("def __init__(self, model_folder: str | os.PathLike[str], device: str | None = None, "
                   "threads: int = 0, strict: bool = False, max_seq_length: int | None = None) -> None"))
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
      .def_prop_ro("max_seq_length", [](PyEmbedder& e) { return get(e).max_length(); },
                   "Tokens per text, [CLS]/[SEP] included; longer texts are truncated.")
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
      .def("placement", [](PyEmbedder& e) { return get(e).placement(); },
           "Where the embedder's session was placed: a RunReport.")
      .def("__repr__", [](PyEmbedder& e) {
        if (!e.embedder && !e.multi) return std::string("Embedder(<not initialised>)");
        const embed::Embedder& b = get(e);
        return "Embedder(model_name=" + repr_of(b.model_name()) +
               ", dimension=" + std::to_string(e.multi ? e.multi->dimension() : b.dimension()) +
               ", max_seq_length=" + std::to_string(b.max_length()) + (e.multi ? ", multi_vector=True" : "") + ")";
      });
}

}  // namespace dlrt::python
