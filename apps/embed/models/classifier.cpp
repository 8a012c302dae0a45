// Classifier: model folder -> tokenizer + dlrt::Session -> logits (see classifier.h).
#include "embed/models/classifier.h"

#include <filesystem>

#include <nlohmann/json.hpp>

#include "embed/tokenizer/json_util.h"
#include "embed/models/llm_reranker.h"
#include "embed/models/token_inputs.h"
#include "embed/tokenizer/tokenizer.h"

namespace dlrt::embed {

namespace fs = std::filesystem;
using json = nlohmann::json;

bool is_classifier_folder(const std::string& dir) {
  if (is_llm_reranker_folder(dir)) return true;
  auto config = jsonu::read_optional_json(model_folder_of(dir) / "config.json");
  if (!config.ok() || !config->is_object()) return false;
  auto arch = config->find("architectures");
  if (arch == config->end() || !arch->is_array()) return false;
  const std::string suffix = "ForSequenceClassification";
  for (const json& a : *arch)
    if (a.is_string() && a.get<std::string>().size() >= suffix.size() &&
        a.get<std::string>().compare(a.get<std::string>().size() - suffix.size(), suffix.size(), suffix) == 0)
      return true;
  return false;
}

struct Classifier::Impl {
  std::string name;
  std::unique_ptr<Tokenizer> tokenizer;
  std::unique_ptr<Session> session;
  TokenInputs inputs;
  size_t output_index = 0;
  size_t max_length = 512;
  std::vector<std::string> labels;
  std::unique_ptr<LlmReranker> llm;  // an LLM reranker's prompt and answer tokens
  ScoreActivation activation;        // what sentence-transformers applies to the logits
};

Classifier::Classifier(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Classifier::~Classifier() = default;

Result<std::unique_ptr<Classifier>> Classifier::create(const std::string& model_dir, const EmbedderOptions& options) {
  DLRT_ASSIGN_OR_RETURN(ModelFile file, find_model_file(model_dir));
  const fs::path& dir = file.dir;
  const fs::path& model_path = file.path;
  auto impl = std::make_unique<Impl>();
  impl->name = file.name;
  DLRT_ASSIGN_OR_RETURN(Tokenizer tok, Tokenizer::from_folder(dir.string()));
  impl->tokenizer = std::make_unique<Tokenizer>(std::move(tok));
  DLRT_ASSIGN_OR_RETURN(json config, jsonu::read_optional_json(dir / "config.json"));

  size_t max_len = options.max_length ? options.max_length : impl->tokenizer->configured_max_length();
  if (max_len == 0) max_len = 512;
  if (int64_t positions = jsonu::get_int(config, "max_position_embeddings", 0); positions > 0)
    max_len = std::min(max_len, static_cast<size_t>(positions));
  impl->max_length = std::max<size_t>(max_len, 2);

  DLRT_ASSIGN_OR_RETURN(impl->session, open_model_session(model_path, options, impl->tokenizer.get(), impl->max_length));
  DLRT_ASSIGN_OR_RETURN(impl->inputs, TokenInputs::from_session(*impl->session, model_path.string()));

  const auto& outs = impl->session->outputs();
  if (is_llm_reranker_folder(dir.string())) {
    // A causal LM: logits [batch, sequence, vocabulary].
    size_t i = 0;
    while (i < outs.size() && !(outs[i].name == "logits" && outs[i].shape.size() == 3)) ++i;
    if (i == outs.size() || outs[i].dtype != DType::kFloat32)
      return InvalidModel(model_path.string() + ": an LLM reranker (config.json names a *ForCausalLM) needs a float32 "
                          "\"logits\" [batch, sequence, vocabulary] output, as optimum's text-generation export has");
    impl->output_index = i;
    DLRT_ASSIGN_OR_RETURN(LlmReranker llm, LlmReranker::load(dir, *impl->tokenizer));
    impl->llm = std::make_unique<LlmReranker>(std::move(llm));
    impl->labels = {"yes"};
    DLRT_ASSIGN_OR_RETURN(impl->activation, read_score_activation(dir, 1));
    return std::unique_ptr<Classifier>(new Classifier(std::move(impl)));
  }

  // The logits: named so, else the one 2-D float output.
  size_t found = outs.size();
  for (size_t i = 0; i < outs.size() && found == outs.size(); ++i)
    if (outs[i].name == "logits") found = i;
  for (size_t i = 0; i < outs.size() && found == outs.size(); ++i)
    if (outs[i].is_tensor && outs[i].shape.size() == 2) found = i;
  if (found == outs.size() || outs[found].shape.size() != 2 || outs[found].dtype != DType::kFloat32)
    return InvalidModel(model_path.string() + ": no float32 logits [batch, labels] output (a sequence-classification model)");
  impl->output_index = found;

  // Labels: config.json's id2label, else LABEL_i for the output's width.
  size_t count = outs[found].shape[1] > 0 ? static_cast<size_t>(outs[found].shape[1]) : 0;
  const json* id2label = jsonu::member(config, "id2label");
  if (count == 0 && id2label && id2label->is_object()) count = id2label->size();
  if (count == 0) return InvalidModel(model_path.string() + ": the number of labels is neither in the model nor in config.json");
  for (size_t i = 0; i < count; ++i) {
    std::string label = "LABEL_" + std::to_string(i);
    if (id2label) label = jsonu::get_string(*id2label, std::to_string(i), label);
    impl->labels.push_back(label);
  }
  DLRT_ASSIGN_OR_RETURN(impl->activation, read_score_activation(dir, count));
  return std::unique_ptr<Classifier>(new Classifier(std::move(impl)));
}

Result<Encoding> Classifier::tokenize(const ClassifierInput& input, bool* truncated) const {
  if (impl_->llm) {
    if (!input.pair)
      return InvalidArgument("an LLM reranker scores (query, document) pairs, not a single text");
    return impl_->llm->encode(*impl_->tokenizer, input.first, input.second, input.instruction, impl_->max_length,
                              truncated);
  }
  if (!input.instruction.empty())
    return InvalidArgument("an instruction is for LLM rerankers; this model is a sequence classifier");
  return encode_within(impl_->max_length, truncated, [&](size_t limit, size_t* n) {
    return input.pair ? impl_->tokenizer->encode_pair_checked(input.first, input.second, limit, n)
                      : impl_->tokenizer->encode_checked(input.first, limit, nullptr, n);
  });
}

Result<std::vector<Encoding>> Classifier::tokenize_pairs(std::string_view query,
                                                         const std::vector<std::string>& documents,
                                                         const std::string& instruction,
                                                         std::vector<uint8_t>* truncated) const {
  std::vector<Encoding> out;
  out.reserve(documents.size());
  if (truncated) truncated->assign(documents.size(), 0);
  if (!impl_->llm && !instruction.empty())
    return InvalidArgument("an instruction is for LLM rerankers; this model is a sequence classifier");
  // An LLM reranker with a prompt encodes each pair in it; one without (sentence-transformers'
  // LogitScore form) as the tokenizer's pairs, as a cross-encoder.
  const bool prompt = impl_->llm && impl_->llm->has_prompt();
  if (impl_->llm) DLRT_RETURN_IF_ERROR(impl_->llm->check_instruction(instruction));
  const std::string prompted = impl_->llm && !prompt ? impl_->llm->query_prompt() + std::string(query) : "";
  DLRT_ASSIGN_OR_RETURN(Tokenizer::First first,
                        impl_->tokenizer->encode_first_checked(prompted.empty() ? query : prompted));
  if (prompt && first.tokens() + impl_->llm->fixed_tokens() >= impl_->max_length)
    return OutOfRange("the query alone has " + std::to_string(first.tokens()) +
                      " tokens, which with the reranker's "
                      "prompt (" +
                      std::to_string(impl_->llm->fixed_tokens()) + " tokens) fills the model's maximum of " +
                      std::to_string(impl_->max_length) + ": shorten the query");
  for (size_t i = 0; i < documents.size(); ++i) {
    bool cut = false;
    Result<Encoding> e =
        prompt ? impl_->llm->encode(*impl_->tokenizer, query, documents[i], instruction, impl_->max_length, &cut)
               : encode_within(impl_->max_length, &cut, [&](size_t limit, size_t* n) {
                   return impl_->tokenizer->encode_pair_checked(first, documents[i], limit, n);
                 });
    if (!e.ok()) return e.status();
    if (truncated) (*truncated)[i] = cut ? 1 : 0;
    out.push_back(std::move(e).value());
  }
  return out;
}

Result<ClassifierResult> Classifier::score_encoded(const std::vector<Encoding>& batch, const dlrt::RunOptions& bounds) const {
  ClassifierResult result;
  if (batch.empty()) return result;
  TokenInputs::Batch in;
  DLRT_RETURN_IF_ERROR(impl_->inputs.make_batch(batch, impl_->tokenizer->pad_id(), impl_->tokenizer->vocab_size(),
                                                impl_->max_length, in));
  result.total_tokens = in.tokens;
  auto outputs = impl_->session->run(in.feeds, bounds, &result.report);
  if (!outputs.ok()) return outputs.status();
  const Tensor& logits = (*outputs)[impl_->output_index];
  if (impl_->llm) {
    DLRT_ASSIGN_OR_RETURN(std::vector<float> diff, impl_->llm->score(logits, in.mask));
    if (diff.size() != batch.size()) return RuntimeError("the model's logits have the wrong batch size");
    for (float d : diff) result.logits.push_back({d});
    return result;
  }
  const size_t n = impl_->labels.size();
  if (logits.rank() != 2 || logits.dim(0) != static_cast<int64_t>(batch.size()) || logits.dim(1) != static_cast<int64_t>(n) ||
      logits.dtype() != DType::kFloat32)
    return RuntimeError("the model's logits have shape " + shape_to_string(logits.shape()) + ", expected [" +
                        std::to_string(batch.size()) + ", " + std::to_string(n) + "]");
  const float* x = logits.data<float>();
  for (size_t i = 0; i < batch.size(); ++i) result.logits.emplace_back(x + i * n, x + (i + 1) * n);
  return result;
}

Result<ClassifierResult> Classifier::score(const std::vector<ClassifierInput>& inputs) const {
  std::vector<Encoding> batch;
  batch.reserve(inputs.size());
  for (const ClassifierInput& in : inputs) {
    DLRT_ASSIGN_OR_RETURN(Encoding e, tokenize(in));
    batch.push_back(std::move(e));
  }
  return score_encoded(batch);
}

const std::vector<std::string>& Classifier::labels() const { return impl_->labels; }
const ScoreActivation& Classifier::score_activation() const { return impl_->activation; }
bool Classifier::is_llm_reranker() const { return impl_->llm != nullptr; }
bool Classifier::takes_instruction() const { return impl_->llm && impl_->llm->takes_instruction(); }
std::string Classifier::model_name() const { return impl_->name; }
size_t Classifier::max_length() const { return impl_->max_length; }
RunReport Classifier::placement() const { return impl_->session->placement(); }
const PrecisionChoice& Classifier::precision_choice() const { return dlrt::precision_choice(*impl_->session); }
size_t Classifier::token_row_bytes() const { return dlrt::embed::token_row_bytes(*impl_->session); }
const Tokenizer& Classifier::tokenizer() const { return *impl_->tokenizer; }

}  // namespace dlrt::embed
