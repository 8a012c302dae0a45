// The native base of dlrt.Embedder over the models' registry (a dense, sparse
// or multi-vector folder opened as its kind): loading, the batched embedding
// with the server's input shaping (prepare_inputs) and the folder's facts;
// encode() with sentence-transformers' semantics is python/dlrt/_embedder.py.
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <functional>
#include <memory>

#include "bindings.h"
#include "dlrt/cpu_precision.h"
#include "embed/image/image.h"
#include "embed/models/dense.h"
#include "embed/models/kind.h"
#include "embed/models/prepare_inputs.h"
#include "embed/models/registry.h"
#include "embed/models/sparse.h"

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
a model without input_ids or a 3-D output), dlrt.Unsupported (a tokenizer dlrt does not
implement; a reranker folder, naming its kind: use dlrt.CrossEncoder) and Session's
errors. One Embedder may be used from many threads.)";

const char* const kEncodeDoc = R"(The native half of Embedder.encode (python/dlrt/_embedder.py): embeds
`texts` (a sequence of str, each after `prompt`) `batch_size` at a time, texts sorted by token count
(less padding), and returns a float32 [len(texts), dimension] array in input
order, normalised where the folder asks for it (Embedder.normalizes) and only
there. `progress(done)` (optional) is called with the GIL held after each batch,
`done` being the number of texts embedded so far; an exception it raises stops
the encoding and propagates. The GIL is released while the model runs.)";

const char* const kEncodeTokensDoc = R"(The native half of Embedder.encode(output_value="token_embeddings"):
per text of `texts` (each after `prompt`), a float32 [tokens, dimension] array. A multi-vector
(ColBERT) folder gives its projected, L2-normalised token vectors, for
queries when `is_query` (else documents); any other folder its transformer's
token vectors up to the text's last token (max_seq_length tokens at most).
`batch_size` texts per model run, without the GIL.)";

// The native model and how it was made: max_seq_length above the one it was
// created with, and to(device), open a new one from `dir` and `options`. A
// call takes its own reference (with the GIL held), so a replacement never
// frees a model another thread is using.
struct PyEmbedder {
  std::shared_ptr<const embed::EmbedModel> model;
  std::string dir;
  embed::EmbedderOptions options;
  size_t max_seq_length = 0;  // tokens per text, <= the model's max_length()
};

std::shared_ptr<const embed::EmbedModel> share(PyEmbedder& e) {
  if (!e.model) throw nb::value_error("the Embedder is not initialised");
  return e.model;
}

const embed::EmbedModel& get(PyEmbedder& e) { return *share(e); }

bool is_multi_vector(const embed::EmbedModel& m) { return embed::has_capability(m.kind(), embed::Capability::kMaxSim); }

// The folder `dir` opened by the registry without the GIL: a kind that gives
// no vectors (a reranker) is refused naming it.
std::shared_ptr<const embed::EmbedModel> open_shared(const std::string& dir, const embed::EmbedderOptions& options) {
  Result<std::shared_ptr<const embed::EmbedModel>> opened = Status();
  {
    nb::gil_scoped_release unlocked;
    opened = embed::open_model(
        dir, options, {embed::Capability::kDense, embed::Capability::kSparse, embed::Capability::kMaxSim},
        "dlrt.Embedder");
  }
  check(opened.status());
  return std::move(opened).value();
}

void load(PyEmbedder& self, const embed::EmbedderOptions& options) {
  self.model = open_shared(self.dir, options);
  self.options = options;
}

// kInvalidArgument with the registry's refusal when `m` lacks `capability` (`what`: the call).
void require(const embed::EmbedModel& m, embed::Capability capability, const char* what, const char* instead) {
  const std::string e = embed::kind_refusal(m.kind(), {capability}, "the model " + m.model_name(), what);
  if (!e.empty()) raise_status(InvalidArgument(e + instead));
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
  std::shared_ptr<const embed::EmbedModel> current = share(self);
  if (is_multi_vector(*current)) {
    raise_status(Unsupported("max_seq_length of a multi-vector (ColBERT) folder is fixed: its texts are cut to the "
                             "query_length and document_length of config_sentence_transformers.json"));
  }
  if (want > current->max_length()) {
    embed::EmbedderOptions options = self.options;
    options.max_length = want;
    std::shared_ptr<const embed::EmbedModel> bigger = open_shared(self.dir, options);
    if (bigger->max_length() < want) {
      raise_status(InvalidArgument("max_seq_length " + std::to_string(want) + " is more than the model takes: " +
                                   std::to_string(bigger->max_length()) +
                                   " (config.json's max_position_embeddings)"));
    }
    self.model = std::move(bigger);
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

nb::list encode_tokens(PyEmbedder& self, nb::handle sentences, PyIndex batch_size, bool is_query,
                       const std::string& prompt) {
  std::shared_ptr<const embed::EmbedModel> held = share(self);
  require(*held, embed::Capability::kPerToken, "encode(output_value=\"token_embeddings\")", "");
  const embed::PerTokenOut& per_token = *held->as<embed::PerTokenOut>();
  const bool multi = is_multi_vector(*held);
  embed::InputOptions in;
  in.prompt = prompt;
  in.is_query = is_query;
  in.limit = self.max_seq_length;
  if (batch_size < 1) raise_status(InvalidArgument("batch_size must be >= 1, got " + std::to_string(batch_size)));
  std::vector<std::string> texts = texts_from_python(sentences);
  std::vector<std::vector<std::vector<float>>> tokens;
  Status status;
  {
    nb::gil_scoped_release unlocked;
    status = [&]() -> Status {
      // A multi-vector model tokenizes queries and documents its own way (its
      // lengths, its markers); other models as every embedding route does.
      std::vector<embed::Encoding> inputs;
      if (multi) {
        for (const std::string& t : texts) {
          DLRT_ASSIGN_OR_RETURN(embed::Encoding e, per_token.tokenize_tokens(in.prompt + t, is_query, nullptr));
          inputs.push_back(std::move(e));
        }
      } else if (auto e = embed::prepare_inputs(*held, texts, in, inputs)) {
        return e->status;
      }
      for (size_t start = 0; start < inputs.size(); start += static_cast<size_t>(batch_size)) {
        const size_t end = std::min(inputs.size(), start + static_cast<size_t>(batch_size));
        const std::vector<embed::Encoding> batch(inputs.begin() + static_cast<std::ptrdiff_t>(start),
                                                 inputs.begin() + static_cast<std::ptrdiff_t>(end));
        DLRT_ASSIGN_OR_RETURN(embed::TokenEmbedResult r, per_token.embed_tokens(batch, is_query, {}));
        for (auto& t : r.tokens) tokens.push_back(std::move(t));
      }
      return Status::Ok();
    }();
  }
  check(status);
  const size_t dim = per_token.token_dimension();
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
Status embed_all(const embed::EmbedModel& m, const embed::InputOptions& in, std::vector<std::string>& texts,
                 size_t batch_size, const std::function<Status(size_t)>& batch_done, float* out) {
  std::vector<embed::Encoding> inputs;
  if (auto e = embed::prepare_inputs(m, texts, in, inputs)) return e->status;
  const size_t dim = m.dimension(), total = inputs.size();
  size_t done = 0;
  return embed::embed_inputs(*m.as<embed::DenseOut>(), std::move(inputs), batch_size, m.normalizes(),
                             [&](size_t i, std::vector<float>&& v) {
                               if (v.size() != dim) {
                                 return Internal("the embedder returned a vector of " + std::to_string(v.size()) +
                                                 " values, expected " + std::to_string(dim));
                               }
                               std::copy(v.begin(), v.end(), out + i * dim);
                               ++done;
                               if (batch_done && (done % batch_size == 0 || done == total)) return batch_done(done);
                               return Status::Ok();
                             });
}

nb::object encode_texts(PyEmbedder& self, nb::handle sentences, PyIndex batch_size, nb::handle progress,
                        const std::string& prompt, std::optional<bool> is_query) {
  std::shared_ptr<const embed::EmbedModel> held = share(self);
  const embed::EmbedModel& e = *held;
  if (is_multi_vector(e)) {
    throw nb::value_error("this folder is a multi-vector (ColBERT) model: it gives one vector per token; "
                          "use encode(..., output_value=\"token_embeddings\", is_query=...)");
  }
  require(e, embed::Capability::kDense, "encode()", " (Python: Embedder.encode_sparse)");
  embed::InputOptions in;
  in.prompt = prompt;
  in.is_query = is_query;
  in.limit = self.max_seq_length;
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
    status = embed_all(e, in, texts, static_cast<size_t>(batch_size), batch_done, buffer->data());
  }
  if (callback_failed) throw nb::python_error();
  check(status);
  float* data = buffer->data();
  nb::capsule owner(buffer.release(), [](void* p) noexcept { delete static_cast<std::vector<float>*>(p); });
  return nb::ndarray<nb::numpy, float>(data, {texts.size(), dim}, owner).cast();
}

// sentence-transformers' tokenize(): the texts' ids padded to the longest.
nb::dict tokenize_texts(PyEmbedder& self, nb::handle sentences) {
  std::shared_ptr<const embed::EmbedModel> held = share(self);
  embed::InputOptions in;
  in.limit = self.max_seq_length;
  std::vector<std::string> texts = texts_from_python(sentences);
  std::vector<embed::Encoding> encodings;
  Status status;
  {
    nb::gil_scoped_release unlocked;
    if (auto e = embed::prepare_inputs(*held, texts, in, encodings)) status = e->status;
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
                          held->pad_id());
  out["token_type_ids"] = make([](const embed::Encoding& e) -> const std::vector<int64_t>& { return e.type_ids; }, 0);
  out["attention_mask"] =
      make([](const embed::Encoding& e) -> const std::vector<int64_t>& { return e.attention_mask; }, 0);
  return out;
}

// The device the embedder's largest partition runs on ("cpu", "openvino:GPU", ...).
std::string device_of(PyEmbedder& self) {
  const RunReport placed = get(self).placement();
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
is_query    True / False: the texts are queries / documents (sentence-transformers'
            encode_query / encode_document): the folder's "query" ("document",
            "passage", "corpus") prompt in front, and a Router folder's query or
            document route. None: neither (a Router folder's default route).

Each text gives a pair (indices, values): an int64 array of vocabulary ids, ascending,
and a float32 array of their weights (all > 0); the other ids weigh 0. A dense model
folder raises dlrt.InvalidArgument, as encode() does on a sparse one.)";

// Embedder.encode_sparse: (indices, values) per text.
nb::object encode_sparse(PyEmbedder& self, nb::handle sentences, std::optional<PyIndex> top_k, PyIndex batch_size,
                         std::optional<bool> is_query) {
  std::shared_ptr<const embed::EmbedModel> held = share(self);
  const embed::EmbedModel& e = *held;
  if (batch_size < 1) raise_status(InvalidArgument("batch_size must be >= 1, got " + std::to_string(batch_size)));
  if (top_k && *top_k < 1) raise_status(InvalidArgument("top_k must be >= 1 or None, got " + std::to_string(*top_k)));
  require(e, embed::Capability::kSparse, "encode_sparse()", " (Python: Embedder.encode)");
  embed::InputOptions in;
  in.limit = self.max_seq_length;
  // Queries or documents: the folder's query / document prompt and a Router folder's route (encode_query).
  in.is_query = is_query;
  if (is_query)
    if (auto name = embed::task_prompt_name(e, *is_query)) in.prompt = e.prompt(*name).value_or("");
  const bool one = PyUnicode_Check(sentences.ptr());
  std::vector<std::string> texts;
  if (one) texts.push_back(utf8_of(sentences, "sentences"));
  else texts = texts_from_python(sentences);
  std::vector<embed::SparseVector> vectors(texts.size());
  Status status;
  {
    nb::gil_scoped_release unlocked;
    std::vector<embed::Encoding> inputs;
    if (auto error = embed::prepare_inputs(e, texts, in, inputs)) status = error->status;
    if (status.ok())
      status = embed::encode_sparse_inputs(*e.as<embed::SparseOut>(), std::move(inputs), static_cast<size_t>(batch_size),
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


const char* const kEncodeImagesDoc = R"(The native half of Embedder.encode(images=...): one batch of images,
each a str or os.PathLike naming an image file or its encoded bytes (bytes, bytearray, memoryview;
JPEG, PNG, WebP or GIF, decoded as dlrt embed --image and dlrt serve decode them: EXIF orientation
applied, converted to RGB), or a numpy array of RGB pixels (uint8 [height, width, 3]). Returns a
float32 [len(images), dimension] array from the folder's vision tower in one run, normalised where
the folder asks for it (Embedder.normalizes). A folder of a kind without images raises
dlrt.InvalidArgument naming its kind; an image that cannot be read, decoded or taken raises the error
of its status, naming images[first + i]. The GIL is released while decoding and running.)";

// An image as Python gave it: a file to read, encoded bytes, or RGB pixels (a numpy array).
struct ImageSource {
  std::string path;
  std::vector<uint8_t> bytes;
  bool is_file = false;
  std::optional<embed::image::Image> pixels;
};

// A numpy array as load_image's RGB: uint8 [height, width, 3], within the decoder's pixel bounds.
embed::image::Image image_of_array(nb::handle item, const std::string& what) {
  nb::object array = numpy().attr("ascontiguousarray")(item);
  nb::ndarray<nb::ro, nb::c_contig, nb::device::cpu> a;
  const embed::image::DecodeLimits limits;
  if (!nb::try_cast(array, a, /*convert=*/false) || a.dtype() != nb::dtype<uint8_t>() || a.ndim() != 3 ||
      a.shape(2) != 3 || a.shape(0) == 0 || a.shape(1) == 0) {
    raise_status(InvalidArgument(what + " is a numpy array of dtype " + str_of(array.attr("dtype")) + " and shape " +
                                 str_of(nb::str(array.attr("shape"))) +
                                 ": an image array is uint8 [height, width, 3] (RGB, channels last)"));
  }
  if (a.shape(0) > static_cast<size_t>(limits.max_side) || a.shape(1) > static_cast<size_t>(limits.max_side) ||
      a.shape(0) * a.shape(1) > limits.max_pixels) {
    raise_status(InvalidArgument(what + " has more pixels than the " + std::to_string(limits.max_pixels) +
                                 " (and " + std::to_string(limits.max_side) + " a side) dlrt takes (docs/limits.md)"));
  }
  embed::image::Image image;
  image.height = static_cast<int>(a.shape(0));
  image.width = static_cast<int>(a.shape(1));
  const auto* data = static_cast<const uint8_t*>(a.data());
  image.rgb.assign(data, data + a.size());
  return image;
}

ImageSource image_source(nb::handle item, const std::string& what) {
  ImageSource source;
  const int is_array = PyObject_IsInstance(item.ptr(), numpy().attr("ndarray").ptr());
  if (is_array < 0) throw nb::python_error();
  if (is_array) {
    source.pixels = image_of_array(item, what);
    return source;
  }
  if (PyBytes_Check(item.ptr()) || PyByteArray_Check(item.ptr()) || PyMemoryView_Check(item.ptr())) {
    Py_buffer view;
    if (PyObject_GetBuffer(item.ptr(), &view, PyBUF_SIMPLE) != 0) throw nb::python_error();
    const auto* data = static_cast<const uint8_t*>(view.buf);
    source.bytes.assign(data, data + view.len);
    PyBuffer_Release(&view);
    return source;
  }
  if (!PyUnicode_Check(item.ptr()) && !PyObject_HasAttrString(item.ptr(), "__fspath__")) {
    throw nb::type_error((what + " must be an image file's path (str, os.PathLike), its encoded bytes (bytes, "
                                 "bytearray, memoryview) or a uint8 [height, width, 3] numpy array, got an element "
                                 "of type " +
                          str_of(item.type().attr("__name__")))
                             .c_str());
  }
  source.path = path_from_python(item, what.c_str());
  source.is_file = true;
  return source;
}

nb::object encode_images(PyEmbedder& self, nb::handle images, PyIndex first) {
  std::shared_ptr<const embed::EmbedModel> held = share(self);
  require(*held, embed::Capability::kImage, "encode(images=...)", "");
  const embed::ImageOut* out = held->as<embed::ImageOut>();
  if (!out) raise_status(Internal("the model " + held->model_name() + " has no image embedder"));
  auto name = [first](size_t i) { return "images[" + std::to_string(first + static_cast<PyIndex>(i)) + "]"; };
  std::vector<ImageSource> sources;
  for (nb::handle item : nb::iter(images)) sources.push_back(image_source(item, name(sources.size())));
  const size_t dim = held->dimension(), n = sources.size();
  auto buffer = std::make_unique<std::vector<float>>(n * dim);
  Status status;
  {
    nb::gil_scoped_release unlocked;
    status = [&]() -> Status {
      std::vector<embed::image::Image> decoded;
      for (size_t i = 0; i < n; ++i) {
        ImageSource& s = sources[i];
        if (s.pixels) {
          decoded.push_back(std::move(*s.pixels));
          continue;
        }
        auto image = s.is_file ? embed::image::load_file(s.path) : embed::image::decode(s.bytes);
        if (!image.ok()) return image.status().with_context(name(i));
        std::vector<uint8_t>().swap(s.bytes);  // the encoded bytes are no longer needed
        decoded.push_back(std::move(image).value());
      }
      if (decoded.empty()) return Status::Ok();
      DLRT_ASSIGN_OR_RETURN(embed::EmbedResult r, out->embed_images(decoded, {}));
      if (r.vectors.size() != n) return Internal("the vision tower gave " + std::to_string(r.vectors.size()) +
                                                 " vectors for " + std::to_string(n) + " images");
      for (size_t i = 0; i < n; ++i) {
        std::vector<float>& v = r.vectors[i];
        if (v.size() != dim) return Internal("the vision tower gave a vector of " + std::to_string(v.size()) +
                                             " values, expected " + std::to_string(dim));
        if (held->normalizes()) embed::normalize_l2(v);
        std::copy(v.begin(), v.end(), buffer->data() + i * dim);
      }
      return Status::Ok();
    }();
  }
  check(status);
  float* data = buffer->data();
  nb::capsule owner(buffer.release(), [](void* p) noexcept { delete static_cast<std::vector<float>*>(p); });
  return nb::ndarray<nb::numpy, float>(data, {n, dim}, owner).cast();
}

nb::dict prompts_of(PyEmbedder& self) {
  nb::dict out;
  const embed::EmbedModel& m = get(self);
  for (const std::string& name : m.prompt_names()) out[nb::str(name.c_str())] = nb::str(m.prompt(name).value_or("").c_str());
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
           nb::arg("progress") = nb::none(), nb::arg("prompt") = "", nb::arg("is_query") = nb::none(),
           nb::sig("def _encode_texts(self, texts: collections.abc.Iterable[str], batch_size: int = 32, "
                   "progress: collections.abc.Callable[[int], object] | None = None, prompt: str = '', "
                   "is_query: bool | None = None) -> numpy.ndarray"),
           kEncodeDoc)
      .def("_encode_tokens", &encode_tokens, nb::arg("texts"), nb::arg("batch_size") = 32, nb::arg("is_query") = true,
           nb::arg("prompt") = "",
           nb::sig("def _encode_tokens(self, texts: collections.abc.Iterable[str], batch_size: int = 32, "
                   "is_query: bool = True, prompt: str = '') -> list[numpy.ndarray]"),
           kEncodeTokensDoc)
      .def_prop_ro("is_multi_vector", [](PyEmbedder& e) { return is_multi_vector(get(e)); },
                   "True for a multi-vector (ColBERT / PyLate) folder: one vector per token, for queries or "
                   "documents (encode(..., output_value=\"token_embeddings\", is_query=...)).")
      .def_prop_ro("prompts", &prompts_of, nb::for_getter(nb::sig("def prompts(self, /) -> dict[str, str]")),
                   "The named prompts of the folder's config_sentence_transformers.json (\"prompts\"): "
                   "name -> the text put in front of each input; {} when there are none.")
      .def_prop_ro("default_prompt_name",
                   [](PyEmbedder& e) -> std::optional<std::string> {
                     const std::string name = get(e).default_prompt_name();
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
      .def("_encode_images", &encode_images, nb::arg("images"), nb::arg("first") = 0,
           nb::sig("def _encode_images(self, images: collections.abc.Iterable[str | os.PathLike[str] | bytes | "
                   "bytearray | memoryview | numpy.ndarray], first: int = 0) -> numpy.ndarray"),
           kEncodeImagesDoc)
      .def("_tokenize", &tokenize_texts, nb::arg("texts"),
           nb::sig("def _tokenize(self, texts: collections.abc.Iterable[str]) -> dict[str, numpy.ndarray]"),
           "input_ids, token_type_ids and attention_mask of the texts (int64 [texts, longest]), truncated to\n"
           "max_seq_length and padded to the longest (the pad id; 0 in the mask). The GIL is released.")
      .def("_to", &move_to, nb::arg("device"),
           "Loads the folder again for `device` (a dlrt device spec); the old one is released once unused.")
      .def_prop_ro("_device", &device_of,
                   "The device of the largest partition: 'cpu', or the backend device ('openvino:GPU', ...).")
      .def("get_sentence_embedding_dimension",
           [](PyEmbedder& e) { return get(e).dimension(); },
           "The length of each embedding vector (of a multi-vector folder: of each token vector).")
      .def_prop_ro("normalizes", [](PyEmbedder& e) { return get(e).normalizes(); },
                   "True when the folder's modules.json has a Normalize module (or there is no modules.json); "
                   "a multi-vector folder's token vectors are always normalised.")
      .def_prop_ro("pooling", [](PyEmbedder& e) { return get(e).pooling(); },
                   "The folder's pooling: 'mean', 'cls', 'max', ... ('splade' for a sparse folder, 'none' for a "
                   "multi-vector one).")
      .def_prop_ro("batching", [](PyEmbedder& e) { return get(e).batching(); },
                   "How encode() batches: 'padded batches'; 'padded batches, int8 scales per text (dynamic "
                   "quantization: OP)' for a dynamically quantized model whose texts are each quantized with "
                   "their own scales; or 'one text per run (dynamic quantization: OP; WHY)' where that cannot be.")
      .def_prop_ro("model_name", [](PyEmbedder& e) { return get(e).model_name(); },
                   "The folder's name (or config.json's _name_or_path).")
      .def("encode_sparse", &encode_sparse, nb::arg("sentences"), nb::arg("top_k") = nb::none(),
           nb::arg("batch_size") = 32, nb::arg("is_query") = nb::none(),
           nb::sig("def encode_sparse(self, sentences: str | collections.abc.Sequence[str], top_k: int | None = None, "
                   "batch_size: int = 32, is_query: bool | None = None) -> tuple[numpy.ndarray, numpy.ndarray] | "
                   "list[tuple[numpy.ndarray, numpy.ndarray]]"),
           kEncodeSparseDoc)
      .def_prop_ro("kind", [](PyEmbedder& e) { return std::string(embed::model_kind_name(get(e).kind())); },
                   "'dense' (encode()), 'sparse' (a SPLADE folder: encode_sparse()), 'multi_vector' (a ColBERT "
                   "folder: encode(..., output_value=\"token_embeddings\")) or 'clip' (texts and encode(images=...)).")
      .def("placement", [](PyEmbedder& e) { return get(e).placement(); },
           "Where the embedder's session was placed: a RunReport.")
      .def("precision_choice", [](PyEmbedder& e) {
             const PrecisionChoice* choice = get(e).precision_choice();
             return precision_choice_dict(choice ? *choice : PrecisionChoice{});
           },
           nb::sig("def precision_choice(self) -> dict[str, object]"),
           "What cpu_precision \"auto\" measured on the warm-up texts and chose (as Session.precision_choice()).")
      .def("__repr__", [](PyEmbedder& e) {
        if (!e.model) return std::string("Embedder(<not initialised>)");
        const embed::EmbedModel& b = *e.model;
        return "Embedder(model_name=" + repr_of(b.model_name()) + ", dimension=" + std::to_string(b.dimension()) +
               ", max_seq_length=" + std::to_string(e.max_seq_length) +
               (is_multi_vector(b) ? ", multi_vector=True" : "") + ")";
      });
}

}  // namespace dlrt::python
