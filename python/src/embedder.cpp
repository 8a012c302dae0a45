// dlrt.Embedder over dlrt::embed::Embedder, with sentence-transformers'
// encode() call shape.
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <memory>

#include "bindings.h"
#include "embed/embedder.h"

namespace dlrt::python {
namespace {

const char* const kEmbedderDoc = R"(Sentence embeddings from a sentence-transformers / Hugging Face ONNX
export folder (model.onnx or onnx/model.onnx, tokenizer.json or vocab.txt, optional
tokenizer_config.json, config.json, modules.json, 1_Pooling/config.json).

Embedder(model_folder, device=None, threads=0, strict=False, max_seq_length=None)

device          device spec as for Session (None: $DLRT_DEVICE, else "auto").
threads         intra-op threads of the CPU backend; 0: one per core.
strict          turn every fallback into an error.
max_seq_length  tokens per text, [CLS]/[SEP] included; None: the folder's, capped at
                the model's positions.

Raises dlrt.NotFound (no folder, model or vocabulary), dlrt.InvalidModel (broken json,
a model without input_ids or a 3-D output), dlrt.Unsupported (a tokenizer other than
BERT WordPiece) and Session's errors. One Embedder may be used from many threads.)";

const char* const kEncodeDoc = R"(Embeds texts, as sentence-transformers' SentenceTransformer.encode.

sentences             a str (gives a 1-D array) or a list of str (gives a 2-D array,
                      one row per text, in input order).
batch_size            texts per model run. Texts are sorted by token count before
                      batching (less padding), results come back in input order.
                      A dynamically quantized model runs one text per run whatever
                      batch_size says (see Embedder.batching).
show_progress_bar     accepted for call compatibility; no bar is drawn.
convert_to_numpy      True: one float32 numpy array; False: a list of 1-D arrays.
normalize_embeddings  True: each vector L2-normalised (unit length). False: the pooled
                      vectors as the model gives them, without normalisation, even
                      where the folder's modules.json lists a Normalize module
                      (sentence-transformers would still apply that module; see
                      Embedder.normalizes for what the folder asks).

The GIL is released while the texts are tokenized and the model runs.)";

struct PyEmbedder {
  std::unique_ptr<embed::Embedder> embedder;
};

embed::Embedder& get(PyEmbedder& e) {
  if (!e.embedder) throw nb::value_error("the Embedder is not initialised");
  return *e.embedder;
}

void init_embedder(PyEmbedder* self, nb::handle folder, std::optional<std::string> device, int threads, bool strict,
                   std::optional<int64_t> max_seq_length) {
  new (self) PyEmbedder();
  embed::EmbedderOptions options;
  options.device = device.value_or("");
  options.threads = threads;
  options.strict = strict;
  if (threads < 0) raise_status(InvalidArgument("threads must be >= 0, got " + std::to_string(threads)));
  if (max_seq_length) {
    if (*max_seq_length < 3) {
      raise_status(InvalidArgument("max_seq_length must be >= 3 ([CLS], a token, [SEP]), got " +
                                   std::to_string(*max_seq_length)));
    }
    options.max_length = static_cast<size_t>(*max_seq_length);
  }
  std::string dir = path_from_python(folder, "model_folder");
  Result<std::unique_ptr<embed::Embedder>> created = Status();
  {
    nb::gil_scoped_release unlocked;
    created = embed::Embedder::create(dir, options);
  }
  check(created.status());
  self->embedder = std::move(created).value();
}

// Embeds `texts` into rows of `out` (texts.size() x dimension), batch_size at
// a time in order of decreasing token count. Runs without the GIL.
Status embed_all(const embed::Embedder& e, const std::vector<std::string>& texts, size_t batch_size,
                 bool normalize, float* out) {
  std::vector<embed::Encoding> encodings;
  encodings.reserve(texts.size());
  for (const std::string& t : texts) {
    DLRT_ASSIGN_OR_RETURN(embed::Encoding enc, e.tokenize(t));
    encodings.push_back(std::move(enc));
  }
  const size_t dim = e.dimension();
  return e.embed_by_length(std::move(encodings), batch_size, normalize, [&](size_t i, std::vector<float>&& v) {
    if (v.size() != dim) {
      return Internal("the embedder returned a vector of " + std::to_string(v.size()) + " values, expected " +
                      std::to_string(dim));
    }
    std::copy(v.begin(), v.end(), out + i * dim);
    return Status::Ok();
  });
}

nb::object encode(PyEmbedder& self, nb::handle sentences, int64_t batch_size, bool show_progress_bar,
                  bool convert_to_numpy, bool normalize_embeddings) {
  (void)show_progress_bar;
  embed::Embedder& e = get(self);
  if (batch_size < 1) raise_status(InvalidArgument("batch_size must be >= 1, got " + std::to_string(batch_size)));
  const bool single = PyUnicode_Check(sentences.ptr());
  std::vector<std::string> texts;
  if (single) {
    texts.push_back(nb::cast<std::string>(sentences));
  } else {
    for (nb::handle s : nb::iter(sentences)) {
      if (!PyUnicode_Check(s.ptr())) {
        throw nb::type_error(("sentences must be a str or a list of str, got an element of type " +
                              str_of(s.type().attr("__name__")))
                                 .c_str());
      }
      texts.push_back(nb::cast<std::string>(s));
    }
  }
  const size_t dim = e.dimension();
  auto buffer = std::make_unique<std::vector<float>>(texts.size() * dim);
  Status status;
  {
    nb::gil_scoped_release unlocked;
    status = embed_all(e, texts, static_cast<size_t>(batch_size), normalize_embeddings, buffer->data());
  }
  check(status);
  float* data = buffer->data();
  nb::capsule owner(buffer.release(), [](void* p) noexcept { delete static_cast<std::vector<float>*>(p); });
  nb::object matrix = nb::ndarray<nb::numpy, float>(data, {texts.size(), dim}, owner).cast();
  if (single) return matrix[nb::int_(0)];
  if (!convert_to_numpy) return nb::list(matrix);
  return matrix;
}

}  // namespace

void bind_embedder(nb::module_& m) {
  nb::class_<PyEmbedder>(m, "Embedder", kEmbedderDoc)
      .def("__init__", &init_embedder, nb::arg("model_folder"), nb::arg("device") = nb::none(),
           nb::arg("threads") = 0, nb::arg("strict") = false, nb::arg("max_seq_length") = nb::none(),
           nb::sig("def __init__(self, model_folder: str | os.PathLike[str], device: str | None = None, "
                   "threads: int = 0, strict: bool = False, max_seq_length: int | None = None) -> None"))
      .def("encode", &encode, nb::arg("sentences"), nb::arg("batch_size") = 32,
           nb::arg("show_progress_bar") = false, nb::arg("convert_to_numpy") = true,
           nb::arg("normalize_embeddings") = true,
           nb::sig("def encode(self, sentences: str | collections.abc.Sequence[str], batch_size: int = 32, "
                   "show_progress_bar: bool = False, convert_to_numpy: bool = True, "
                   "normalize_embeddings: bool = True) -> numpy.ndarray | list[numpy.ndarray]"),
           kEncodeDoc)
      .def_prop_ro("max_seq_length", [](PyEmbedder& e) { return get(e).max_length(); },
                   "Tokens per text, [CLS]/[SEP] included; longer texts are truncated.")
      .def("get_sentence_embedding_dimension", [](PyEmbedder& e) { return get(e).dimension(); },
           "The length of each embedding vector.")
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
        if (!e.embedder) return std::string("Embedder(<not initialised>)");
        return "Embedder(model_name=" + repr_of(e.embedder->model_name()) +
               ", dimension=" + std::to_string(e.embedder->dimension()) +
               ", max_seq_length=" + std::to_string(e.embedder->max_length()) + ")";
      });
}

}  // namespace dlrt::python
