// Texts to a model's inputs (prepare_inputs.h).
#include "embed/models/prepare_inputs.h"

#include <algorithm>
#include <string_view>
#include <utility>

#include "embed/models/dense.h"
#include "embed/models/length_groups.h"

namespace dlrt::embed {
namespace {

// Keeps [CLS] ... [SEP]: cuts the middle, keeps the last token.
void truncate_encoding(Encoding& e, size_t limit) {
  if (e.ids.size() <= limit || limit < 2) return;
  auto cut = [limit](std::vector<int64_t>& v) {
    if (v.size() <= limit) return;
    int64_t last = v.back();
    v.resize(limit - 1);
    v.push_back(last);
  };
  cut(e.ids);
  cut(e.type_ids);
  cut(e.attention_mask);
}

}  // namespace

std::optional<std::string> resolve_prompt(const EmbedModel& m, const std::optional<std::string>& requested,
                                          const std::string& default_name) {
  if (requested) return m.prompt(*requested);
  const std::string def = default_name.empty() ? m.default_prompt_name() : default_name;
  if (def.empty()) return std::string();
  return m.prompt(def).value_or(std::string());
}

std::string per_token_task_prompt(const EmbedModel& m, bool is_query) {
  const PerTokenOut* p = m.as<PerTokenOut>();
  if (!p || !p->prompts_by_task()) return "";
  const std::optional<std::string> name = task_prompt_name(m, is_query);
  return name ? m.prompt(*name).value_or("") : "";
}

std::optional<std::string> task_prompt_name(const EmbedModel& m, bool is_query) {
  for (const char* name : {"query", "document", "passage", "corpus"}) {
    if (is_query != (name == std::string_view("query"))) continue;
    if (m.prompt(name)) return std::string(name);
  }
  return std::nullopt;
}

std::optional<InputError> prepare_inputs(const EmbedModel& m, std::vector<std::string>& texts,
                                         const InputOptions& options, std::vector<Encoding>& out) {
  const size_t limit = options.limit ? std::min(options.limit, m.max_length()) : m.max_length();
  out.reserve(out.size() + texts.size());
  for (size_t i = 0; i < texts.size(); ++i) {
    bool truncated = false;
    size_t tokens = 0;
    const std::string text = options.prompt.empty() ? std::move(texts[i]) : options.prompt + texts[i];
    auto enc = m.tokenize_for(text, options.is_query, &truncated, &tokens);
    if (!enc.ok()) return InputError{InputError::What::kTokenize, i, 0, limit, enc.status()};
    if ((truncated || enc->ids.size() > limit) && !options.truncate)
      return InputError{InputError::What::kTooLong, i, truncated ? tokens : enc->ids.size(), limit, {}};
    truncate_encoding(*enc, limit);
    out.push_back(std::move(enc).value());
    if (options.stop && options.stop()) return InputError{InputError::What::kStopped, i, 0, limit, {}};
  }
  return std::nullopt;
}

Status embed_inputs(const DenseOut& model, std::vector<Encoding> inputs, size_t batch_size, bool normalize,
                    const Embedder::VectorSink& sink) {
  return by_length(std::move(inputs), batch_size, [&](const std::vector<Encoding>& batch, const std::vector<size_t>& at) {
    DLRT_ASSIGN_OR_RETURN(EmbedResult r, model.embed_encoded(batch, {}));
    if (r.vectors.size() != at.size()) return Internal("the model gave " + std::to_string(r.vectors.size()) + " vectors for " + std::to_string(at.size()) + " inputs");
    for (size_t k = 0; k < at.size(); ++k) {
      if (normalize) normalize_l2(r.vectors[k]);
      DLRT_RETURN_IF_ERROR(sink(at[k], std::move(r.vectors[k])));
    }
    return Status::Ok();
  });
}

Status encode_sparse_inputs(const SparseOut& model, std::vector<Encoding> inputs, size_t batch_size, size_t top_k,
                            const Embedder::SparseSink& sink) {
  return by_length(std::move(inputs), batch_size, [&](const std::vector<Encoding>& batch, const std::vector<size_t>& at) {
    DLRT_ASSIGN_OR_RETURN(SparseResult r, model.encode_sparse(batch, {}));
    if (r.vectors.size() != at.size()) return Internal("the model gave " + std::to_string(r.vectors.size()) + " vectors for " + std::to_string(at.size()) + " inputs");
    for (size_t k = 0; k < at.size(); ++k) DLRT_RETURN_IF_ERROR(sink(at[k], keep_top_k(std::move(r.vectors[k]), top_k)));
    return Status::Ok();
  });
}

}  // namespace dlrt::embed
