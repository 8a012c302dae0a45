// dlrt.CrossEncoder over a sequence-classifier or LLM-reranker folder opened
// by the models' registry (its PairScorer), with sentence-transformers'
// CrossEncoder predict() and rank() call shapes.
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <numeric>

#include "bindings.h"
#include "embed/models/registry.h"

namespace dlrt::python {
namespace {

const char* const kCrossEncoderDoc = R"(A cross-encoder (reranker) or text-pair classifier from a Hugging Face
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
dlrt.Unsupported and Session's errors. One CrossEncoder may be used from many threads.)";

const char* const kPredictDoc = R"(Scores text pairs, as sentence-transformers' CrossEncoder.predict.

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

The GIL is released while the pairs are tokenized and the model runs.)";

const char* const kRankDoc = R"(Ranks documents against a query, as sentence-transformers' CrossEncoder.rank:
a list of {"corpus_id", "score"(, "text")} dicts, highest score first, top_k of them
(None: all; a negative top_k is dlrt.InvalidArgument). Needs a one-label model; the scores are
predict's (the folder's activation). instruction: as predict's.)";

struct PyCrossEncoder {
  std::shared_ptr<const embed::EmbedModel> model;
  const embed::PairScorer* scorer = nullptr;  // model's
};

const embed::EmbedModel& model_of(PyCrossEncoder& c) {
  if (!c.model) throw nb::value_error("the CrossEncoder is not initialised");
  return *c.model;
}

const embed::PairScorer& get(PyCrossEncoder& c) {
  model_of(c);
  return *c.scorer;
}

void init_cross_encoder(PyCrossEncoder* self, nb::handle folder, std::optional<std::string> device, PyIndex threads,
                        bool strict, std::optional<PyIndex> max_length) {
  new (self) PyCrossEncoder();
  embed::EmbedderOptions options;
  options.device = device.value_or("");
  options.threads = threads_from_python(threads);
  options.strict = strict;
  if (max_length) {
    if (*max_length < 4) raise_status(InvalidArgument("max_length must be >= 4, got " + std::to_string(*max_length)));
    options.max_length = static_cast<size_t>(*max_length);
  }
  std::string dir = path_from_python(folder, "model_folder");
  Result<std::shared_ptr<const embed::EmbedModel>> opened = Status();
  {
    nb::gil_scoped_release unlocked;
    // The registry refuses a folder of a kind that scores nothing, naming its kind.
    opened = embed::open_model(dir, options, {embed::Capability::kPairScore, embed::Capability::kClassify},
                               "dlrt.CrossEncoder");
  }
  check(opened.status());
  self->model = std::move(opened).value();
  self->scorer = self->model->as<embed::PairScorer>();
}

// One text, or a pair; `instruction` for an LLM reranker's pairs.
struct Input {
  std::string first, second;
  bool pair = false;
  std::string instruction;
};

Input input_of(nb::handle item) {
  if (PyUnicode_Check(item.ptr())) return {utf8_of(item, "a text"), {}, false, {}};
  std::vector<std::string> parts;
  for (nb::handle s : nb::iter(item)) {
    if (!PyUnicode_Check(s.ptr())) throw nb::type_error("a pair must hold two str");
    parts.push_back(utf8_of(s, "a text of a pair"));
  }
  if (parts.size() == 1) return {parts[0], {}, false, {}};
  if (parts.size() != 2) throw nb::value_error(("a pair must hold two texts, got " + std::to_string(parts.size())).c_str());
  return {parts[0], parts[1], true, {}};
}

Result<embed::Encoding> tokenize(const embed::EmbedModel& m, const embed::PairScorer& c, const Input& in) {
  if (in.pair) return c.tokenize_rerank(in.first, in.second, in.instruction, nullptr);
  if (!in.instruction.empty() && !c.takes_instruction())
    return InvalidArgument("an instruction is for LLM rerankers; this model is a sequence classifier");
  return m.tokenize(in.first, nullptr);
}

// Logits of every input (rows), batch_size at a time. Runs without the GIL.
Status score_all(const embed::EmbedModel& m, const embed::PairScorer& c, const std::vector<Input>& inputs,
                 size_t batch_size, std::vector<float>& out) {
  const size_t n = c.labels().size();
  out.assign(inputs.size() * n, 0.0f);
  std::vector<embed::Encoding> batch;
  for (size_t start = 0; start < inputs.size(); start += batch_size) {
    const size_t end = std::min(inputs.size(), start + batch_size);
    batch.clear();
    for (size_t i = start; i < end; ++i) {
      DLRT_ASSIGN_OR_RETURN(embed::Encoding e, tokenize(m, c, inputs[i]));
      batch.push_back(std::move(e));
    }
    DLRT_ASSIGN_OR_RETURN(auto logits, c.classify(batch, {}));
    for (size_t i = 0; i < logits.size(); ++i) std::copy(logits[i].begin(), logits[i].end(), out.begin() + (start + i) * n);
  }
  return Status::Ok();
}

// The activation `name` gives ("sigmoid", "identity" or "softmax"), for predict's argument.
embed::ScoreActivation activation_named(const std::string& name) {
  embed::ScoreActivation a = embed::ScoreActivation::identity();
  if (name == "sigmoid") a = embed::ScoreActivation{};
  else if (name == "softmax") a.softmax = true, a.name = "Softmax";
  else if (name != "identity")
    raise_status(InvalidArgument("activation must be 'sigmoid', 'identity' or 'softmax', got '" + name + "'"));
  return a;
}

void activate(std::vector<float>& scores, size_t labels, const embed::ScoreActivation& a) {
  for (size_t row = 0; row < scores.size() / labels; ++row) a.apply(scores.data() + row * labels, labels);
}

nb::object predict(PyCrossEncoder& self, nb::handle sentences, PyIndex batch_size, bool show_progress_bar,
                   bool convert_to_numpy, bool apply_softmax, std::optional<std::string> activation,
                   std::optional<std::string> instruction) {
  (void)show_progress_bar;
  const embed::PairScorer& c = get(self);
  const embed::EmbedModel& m = model_of(self);
  if (batch_size < 1) raise_status(InvalidArgument("batch_size must be >= 1, got " + std::to_string(batch_size)));
  // One input: a str, or a pair of str. Else a list of them.
  bool single = PyUnicode_Check(sentences.ptr());
  if (!single && (PyTuple_Check(sentences.ptr()) || PyList_Check(sentences.ptr())) && nb::len(sentences) == 2) {
    single = PyUnicode_Check(sentences[0].ptr()) && PyUnicode_Check(sentences[1].ptr());
  }
  std::vector<Input> inputs;
  if (single) inputs.push_back(input_of(sentences));
  else
    for (nb::handle item : nb::iter(sentences)) inputs.push_back(input_of(item));
  for (Input& in : inputs) in.instruction = instruction.value_or("");
  const size_t labels = c.labels().size();
  const embed::ScoreActivation act = activation ? activation_named(*activation) : c.score_activation();
  auto scores = std::make_unique<std::vector<float>>();
  Status status;
  {
    nb::gil_scoped_release unlocked;
    status = score_all(m, c, inputs, static_cast<size_t>(batch_size), *scores);
  }
  check(status);
  activate(*scores, labels, act);
  if (apply_softmax && labels > 1) activate(*scores, labels, activation_named("softmax"));  // as the library: after
  float* data = scores->data();
  const size_t rows = inputs.size();
  nb::capsule owner(scores.release(), [](void* p) noexcept { delete static_cast<std::vector<float>*>(p); });
  nb::object out = labels == 1 ? nb::ndarray<nb::numpy, float>(data, {rows}, owner).cast()
                               : nb::ndarray<nb::numpy, float>(data, {rows, labels}, owner).cast();
  if (single) return out[nb::int_(0)];
  if (!convert_to_numpy) return out.attr("tolist")();
  return out;
}

nb::list rank(PyCrossEncoder& self, const std::string& query, const std::vector<std::string>& documents,
              std::optional<PyIndex> top_k, bool return_documents, PyIndex batch_size,
              std::optional<std::string> instruction) {
  const embed::PairScorer& c = get(self);
  const embed::EmbedModel& m = model_of(self);
  if (c.labels().size() != 1)
    raise_status(InvalidArgument("rank needs a one-label model (a reranker); this one has " +
                                 std::to_string(c.labels().size()) + " labels: use predict"));
  if (batch_size < 1) raise_status(InvalidArgument("batch_size must be >= 1, got " + std::to_string(batch_size)));
  // sentence-transformers slices [:top_k], so a negative one drops documents from the end: refused here.
  if (top_k && *top_k < 0) raise_status(InvalidArgument("top_k must be >= 0 or None, got " + std::to_string(*top_k)));
  std::vector<Input> inputs;
  for (const std::string& d : documents) inputs.push_back({query, d, true, instruction.value_or("")});
  std::vector<float> scores;
  Status status;
  {
    nb::gil_scoped_release unlocked;
    status = score_all(m, c, inputs, static_cast<size_t>(batch_size), scores);
  }
  check(status);
  activate(scores, 1, c.score_activation());
  std::vector<size_t> order(scores.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return scores[a] > scores[b]; });
  if (top_k && static_cast<size_t>(*top_k) < order.size()) order.resize(static_cast<size_t>(*top_k));
  nb::list out;
  for (size_t i : order) {
    nb::dict d;
    d["corpus_id"] = i;
    d["score"] = scores[i];
    if (return_documents) d["text"] = documents[i];
    out.append(d);
  }
  return out;
}

}  // namespace

void bind_cross_encoder(nb::module_& m) {
  nb::class_<PyCrossEncoder>(m, "CrossEncoder", kCrossEncoderDoc)
      .def("__init__", &init_cross_encoder, nb::arg("model_folder"), nb::arg("device") = nb::none(),
           nb::arg("threads") = 0, nb::arg("strict") = false, nb::arg("max_length") = nb::none(),
           "Loads the folder; see the class docstring.")
      .def("predict", &predict, nb::arg("sentences"), nb::arg("batch_size") = 32,
           nb::arg("show_progress_bar") = false, nb::arg("convert_to_numpy") = true, nb::arg("apply_softmax") = false,
           nb::arg("activation") = nb::none(), nb::arg("instruction") = nb::none(), kPredictDoc)
      .def("rank", &rank, nb::arg("query"), nb::arg("documents"), nb::arg("top_k") = nb::none(),
           nb::arg("return_documents") = false, nb::arg("batch_size") = 32, nb::arg("instruction") = nb::none(),
           kRankDoc)
      .def_prop_ro("labels", [](PyCrossEncoder& c) { return get(c).labels(); },
                   "The labels, from config.json's id2label ([\"yes\"] for an LLM reranker).")
      .def_prop_ro("is_llm_reranker",
                   [](PyCrossEncoder& c) { return model_of(c).kind() == embed::ModelKind::kLlmReranker; },
                   "True for an LLM reranker folder (pairs only; instructions where it has a prompt template).")
      .def_prop_ro("max_length", [](PyCrossEncoder& c) { return model_of(c).max_length(); },
                   "Tokens per pair, special tokens included (longer pairs are truncated).")
      .def("placement", [](PyCrossEncoder& c) { return model_of(c).placement(); },
           "Where the model was placed (a RunReport without times).")
      .def("__repr__", [](PyCrossEncoder& c) {
        return "dlrt.CrossEncoder(" + model_of(c).model_name() + ", " + std::to_string(get(c).labels().size()) + " labels)";
      });
}

}  // namespace dlrt::python
