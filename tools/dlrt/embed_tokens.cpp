// `dlrt embed --tokens` and `dlrt embed` on a multi-vector (ColBERT) folder:
// one vector per token (embed_tokens.h).
#include "embed_tokens.h"

#include <cstdio>
#include <memory>

#include <nlohmann/json.hpp>

#include "cli_args.h"
#include "progress.h"
#include "vector_output.h"

namespace dlrt::cli {

int embed_tokens(const TokenEmbedJob& job) {
  // A multi-vector folder gives its own token vectors (for queries or
  // documents); any other folder its transformer's.
  const embed::EmbedModel& model = *job.model;
  const embed::PerTokenOut& per_token = *model.as<embed::PerTokenOut>();
  std::vector<embed::Encoding> encodings;
  for (const std::string& text : job.texts) {
    bool truncated = false;
    auto e = per_token.tokenize_tokens(job.prompt + text, job.is_query, &truncated);
    if (!e.ok()) {
      std::fprintf(stderr, "dlrt embed: error: %s\n", e.status().to_string().c_str());
      return kExitRuntimeError;
    }
    encodings.push_back(std::move(e).value());
  }
  std::vector<std::vector<std::vector<float>>> vectors;
  Progress progress(progress_wanted(job.quiet, job.progress), "embedding", "texts", job.texts.size());
  progress.update(0);
  for (size_t start = 0; start < encodings.size(); start += job.batch) {
    const size_t end = std::min(encodings.size(), start + job.batch);
    std::vector<embed::Encoding> part(encodings.begin() + static_cast<std::ptrdiff_t>(start),
                                      encodings.begin() + static_cast<std::ptrdiff_t>(end));
    auto r = per_token.embed_tokens(part, job.is_query, {});
    if (!r.ok()) {
      progress.finish("stopped after " + std::to_string(start) + " of " + std::to_string(job.texts.size()) + " texts");
      std::fprintf(stderr, "dlrt embed: error: %s\n", r.status().to_string().c_str());
      return exit_code_for_run_status(r.status());
    }
    for (auto& t : r->tokens) vectors.push_back(std::move(t));
    progress.update(end);
  }
  progress.finish("embedded " + std::to_string(job.texts.size()) + " texts, one vector per token");

  if (job.json) {
    nlohmann::ordered_json j;
    j["model"] = model.model_name();
    j["kind"] = job.multi_vector ? "multi_vector" : "token_embeddings";
    j["dimension"] = per_token.token_dimension();
    if (job.multi_vector) j["is_query"] = job.is_query;
    j["normalized"] = job.multi_vector;
    std::vector<size_t> tokens;
    for (const auto& e : encodings) tokens.push_back(e.ids.size());
    print_vectors_json(std::move(j), "embeddings", vectors, &tokens);
    return kExitOk;
  }
  // One token vector per line; an empty line after each text's vectors.
  std::string out;
  for (const auto& text : vectors) {
    for (const auto& v : text) append_vector_line(out, v);
    out += '\n';
  }
  std::fputs(out.c_str(), stdout);
  return kExitOk;
}

}  // namespace dlrt::cli
