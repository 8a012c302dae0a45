// dlrt rerank --model DIR --query TEXT [DOCUMENT... | --file LINES.txt]: the
// documents scored against the query by a reranker folder (a cross-encoder,
// an LLM reranker or a multi-vector model), best first.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_args.h"
#include "commands.h"
#include "embed/models/kind.h"
#include "embed/models/multi_vector.h"
#include "embed/models/prepare_inputs.h"
#include "embed/models/registry.h"
#include "embed/models/token_inputs.h"
#include "json_out.h"
#include "progress.h"
#include "text_lines.h"

namespace dlrt::cli {
namespace {

constexpr const char* kRerankHelp =
    "usage: dlrt rerank --model DIR --query TEXT [options] [DOCUMENT...]\n"
    "\n"
    "Scores each DOCUMENT (or each line of --file) against TEXT with the model folder\n"
    "DIR and prints them best first, one per line: SCORE, the document's index (from 0)\n"
    "and the document, tab-separated (ties keep the input order). DIR is one of:\n"
    "  a cross-encoder   config.json naming a *ForSequenceClassification architecture with\n"
    "                    one label; the score is its logit through the activation the folder\n"
    "                    names for sentence-transformers' CrossEncoder (default: sigmoid), as /rerank\n"
    "  an LLM reranker   a causal LM folder (Qwen3-Reranker and its kind,\n"
    "                    docs/embed-retrieval.md); the score is softmax([logit(no), logit(yes)])\n"
    "                    after the reranker's prompt (its folder's activation, default sigmoid)\n"
    "  a multi-vector    a ColBERT / PyLate folder; the score is MaxSim of the query's and the\n"
    "                    document's token vectors (divided by the query's vector count for a\n"
    "                    sentence-transformers 6 folder whose similarity_fn_name is meanmaxsim)\n"
    "\n"
    "options:\n"
    "  --model DIR        the model folder (required)\n"
    "  --query TEXT       the query (required)\n"
    "  --instruction TEXT an LLM reranker's task instruction (default: the folder's, else the\n"
    "                     Qwen3-Reranker model card's)\n"
    "  --file PATH        read the documents from PATH, one per line ('-': standard input)\n"
    "  --top-n N          print only the N best documents\n"
    "  --raw-scores       a cross-encoder's or LLM reranker's logit (logit(yes) - logit(no)) without\n"
    "                     the activation\n"
    "  --json             print one JSON object {model, kind, query, results: [{index, score,\n"
    "                     document}]}, best first\n"
    "  --batch N          query-document pairs per model run (default 32)\n"
    "  --max-length N     tokens per pair (default: the folder's); longer pairs are cut\n"
    "  --device SPEC      auto, cpu, gpu, npu, a backend or backend:device (default: DLRT_DEVICE, else auto)\n"
    "  --strict           fail instead of falling back to another device\n"
    "  --threads N        CPU threads (0: one per core)\n"
    "  --quiet            no progress or summary on stderr\n"
    "  --progress         progress and a summary on stderr even when it is not a terminal\n"
    "  -h, --help         this help\n"
    "\n"
    "exit codes: 0 ok, 1 run error, 2 usage, 3 bad model folder, 4 device unavailable\n";

struct RerankJob {
  std::string model, query, instruction;
  std::vector<std::string> documents;
  embed::EmbedderOptions options;
  size_t batch = 32;
  bool raw = false, quiet = false, progress = false;
};

// Tokenizes every document with `tokenize`, then scores them `job.batch` at a
// time, longest first (a batch's pairs pad to similar lengths), with `run`,
// which gives one score per encoding of its part; each score goes to its
// document's place in `score`. Returns the exit code.
int score_in_batches(const RerankJob& job,
                     const std::function<Result<embed::Encoding>(const std::string& document)>& tokenize,
                     const std::function<Result<std::vector<float>>(const std::vector<embed::Encoding>& part)>& run,
                     std::vector<float>& score) {
  std::vector<embed::Encoding> encodings;
  for (const std::string& doc : job.documents) {
    auto e = tokenize(doc);
    if (!e.ok()) {
      std::fprintf(stderr, "dlrt rerank: error: %s\n", e.status().to_string().c_str());
      return kExitRuntimeError;
    }
    encodings.push_back(std::move(e).value());
  }
  std::vector<size_t> order(encodings.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return encodings[a].ids.size() > encodings[b].ids.size(); });
  score.assign(encodings.size(), 0.0f);
  Progress progress(progress_wanted(job.quiet, job.progress), "scoring", "documents", encodings.size());
  progress.update(0);
  for (size_t start = 0; start < order.size(); start += job.batch) {
    const size_t end = std::min(order.size(), start + job.batch);
    std::vector<embed::Encoding> part;
    for (size_t k = start; k < end; ++k) part.push_back(encodings[order[k]]);
    auto r = run(part);
    if (!r.ok()) {
      progress.finish("stopped after " + std::to_string(start) + " of " + std::to_string(order.size()) + " documents");
      std::fprintf(stderr, "dlrt rerank: error: %s\n", r.status().to_string().c_str());
      return exit_code_for_run_status(r.status());
    }
    for (size_t k = start; k < end; ++k) score[order[k]] = (*r)[k - start];
    progress.update(end);
  }
  progress.finish("scored " + std::to_string(order.size()) + " documents");
  return kExitOk;
}

// A cross-encoder or LLM reranker: one logit per pair. Returns the exit code;
// fills `score` (one per document).
int score_with_classifier(const RerankJob& job, const embed::EmbedModel& m, const embed::PairScorer& c,
                          std::vector<float>& score) {
  if (c.labels().size() != 1)
    return usage_error("rerank", "the model " + m.model_name() + " is a classifier with " +
                                     std::to_string(c.labels().size()) +
                                     " labels; dlrt rerank needs a reranker with one score");
  if (!job.instruction.empty() && !c.takes_instruction())
    return usage_error("rerank", "--instruction applies to LLM rerankers; " + m.model_name() + " is a cross-encoder");

  const embed::ScoreActivation activation = c.score_activation();
  return score_in_batches(
      job, [&](const std::string& doc) { return c.tokenize_rerank(job.query, doc, job.instruction, nullptr); },
      [&](const std::vector<embed::Encoding>& part) -> Result<std::vector<float>> {
        auto r = c.classify(part, {});
        if (!r.ok()) return r.status();
        std::vector<float> out;
        for (auto row : *r) {
          if (!job.raw) activation.apply(row.data(), row.size());
          out.push_back(row[0]);
        }
        return out;
      },
      score);
}

// A multi-vector (ColBERT) model: MaxSim (or the folder's MeanMaxSim) of the
// query's and each document's token vectors.
int score_with_multi_vector(const RerankJob& job, const embed::EmbedModel& model, std::vector<float>& score) {
  const embed::PerTokenOut& m = *model.as<embed::PerTokenOut>();
  // A sentence-transformers 6.x encoder's task prompts (encode_query / encode_document's).
  const std::string query_prompt = embed::per_token_task_prompt(model, true);
  const std::string document_prompt = embed::per_token_task_prompt(model, false);
  const std::string fn = model.similarity_fn_name();  // "maxsim" or 6.x's "meanmaxsim"
  auto query = m.tokenize_tokens(query_prompt + job.query, /*is_query=*/true, nullptr);
  Result<embed::TokenEmbedResult> query_vectors = query.status();
  if (query.ok()) query_vectors = m.embed_tokens({*query}, /*is_query=*/true, {});
  if (!query_vectors.ok()) {
    std::fprintf(stderr, "dlrt rerank: error: %s\n", query_vectors.status().to_string().c_str());
    return exit_code_for_run_status(query_vectors.status());
  }
  return score_in_batches(
      job, [&](const std::string& doc) { return m.tokenize_tokens(document_prompt + doc, /*is_query=*/false, nullptr); },
      [&](const std::vector<embed::Encoding>& part) -> Result<std::vector<float>> {
        auto r = m.embed_tokens(part, /*is_query=*/false, {});
        if (!r.ok()) return r.status();
        std::vector<float> out;
        for (const auto& doc : r->tokens)
          out.push_back(embed::late_interaction_score(fn, query_vectors->tokens[0], doc));
        return out;
      },
      score);
}

}  // namespace

int cmd_rerank(int argc, char** argv) {
  auto parsed = parse_args(argc, argv, 2,
                           {{"model", true}, {"query", true}, {"instruction", true}, {"file", true},
                            {"top-n", true}, {"raw-scores"}, {"json"}, {"batch", true}, {"max-length", true},
                            {"device", true}, {"strict"}, {"threads", true}, {"quiet"}, {"progress"}});
  if (!parsed.ok()) return usage_error("rerank", parsed.status().message());
  const Args& args = *parsed;
  if (args.has("help")) {
    std::fputs(kRerankHelp, stdout);
    return kExitOk;
  }
  if (!args.has("model") || args.get("model").empty()) return usage_error("rerank", "missing --model DIR");
  if (!args.has("query")) return usage_error("rerank", "missing --query TEXT");
  if (args.has("file") && !args.positional.empty())
    return usage_error("rerank", "give DOCUMENT arguments or --file, not both");
  if (args.has("quiet") && args.has("progress"))
    return usage_error("rerank", "--quiet and --progress exclude each other");

  RerankJob job;
  job.model = args.get("model");
  job.query = args.get("query");
  job.instruction = args.get("instruction");
  if (args.has("instruction") && job.instruction.empty()) return usage_error("rerank", "--instruction is empty");
  job.raw = args.has("raw-scores");
  job.quiet = args.has("quiet");
  job.progress = args.has("progress");
  job.options.device = args.get("device");
  job.options.strict = args.has("strict");
  size_t top_n = 0;
  for (const char* flag : {"threads", "batch", "max-length", "top-n"}) {
    if (!args.has(flag)) continue;
    auto v = parse_nonnegative_int(args.get(flag), std::string("--") + flag);
    if (!v.ok()) return usage_error("rerank", v.status().message());
    if (std::strcmp(flag, "threads") == 0) job.options.threads = static_cast<int>(std::min<int64_t>(*v, 1024));
    if (std::strcmp(flag, "batch") == 0) {
      if (*v == 0) return usage_error("rerank", "--batch must be at least 1");
      job.batch = static_cast<size_t>(*v);
    }
    if (std::strcmp(flag, "max-length") == 0) {
      if (*v == 1) return usage_error("rerank", "--max-length must be 0 (the folder's) or at least 2");
      job.options.max_length = static_cast<size_t>(*v);
    }
    if (std::strcmp(flag, "top-n") == 0) {
      if (*v == 0) return usage_error("rerank", "--top-n must be at least 1");
      top_n = static_cast<size_t>(*v);
    }
  }
  job.documents = args.positional;
  if (args.has("file")) {
    if (int rc = read_text_file("rerank", args.get("file"), job.documents); rc != kExitOk) return rc;
  }
  if (job.documents.empty() && !args.has("file")) return usage_error("rerank", "no DOCUMENT given (or use --file PATH)");

  if (auto found = embed::find_model_file(job.model); !found.ok()) {
    std::fprintf(stderr, "dlrt rerank: error: %s\n", found.status().to_string().c_str());
    return exit_code_for_folder_status(found.status());
  }
  // The registry refuses a folder of a kind that does not rerank before loading it.
  if (Status can = embed::require_capability(job.model, {embed::Capability::kPairScore, embed::Capability::kMaxSim},
                                             "dlrt rerank");
      !can.ok())
    return usage_error("rerank", "the model is not a reranker: " + can.message());
  auto opened = embed::open_model(job.model, job.options);
  if (!opened.ok()) {
    std::fprintf(stderr, "dlrt rerank: error: %s\n", opened.status().to_string().c_str());
    return exit_code_for_folder_status(opened.status());
  }
  const embed::EmbedModel& model = **opened;
  const embed::PairScorer* scorer = model.as<embed::PairScorer>();
  const bool multi_vector = scorer == nullptr;  // MaxSim over per-token vectors
  if (multi_vector && !job.instruction.empty())
    return usage_error("rerank", "--instruction applies to LLM rerankers; " + job.model +
                                     " is a multi-vector (ColBERT) folder");
  const std::string kind = embed::model_kind_name(model.kind()), model_name = model.model_name();
  std::vector<float> score;
  const int rc = multi_vector ? score_with_multi_vector(job, model, score)
                              : score_with_classifier(job, model, *scorer, score);
  if (rc != kExitOk) return rc;

  std::vector<size_t> best(score.size());
  std::iota(best.begin(), best.end(), size_t{0});
  std::stable_sort(best.begin(), best.end(), [&](size_t a, size_t b) { return score[a] > score[b]; });
  if (top_n && best.size() > top_n) best.resize(top_n);

  if (args.has("json")) {
    nlohmann::ordered_json j;
    j["model"] = model_name;
    j["kind"] = kind;
    j["query"] = job.query;
    j["raw_scores"] = job.raw && !multi_vector;
    nlohmann::ordered_json results = nlohmann::ordered_json::array();
    for (size_t i : best)
      results.push_back({{"index", i}, {"score", score[i]}, {"document", job.documents[i]}});
    j["results"] = std::move(results);
    print_json(j, -1);
    return kExitOk;
  }
  std::string out;
  char buf[64];
  for (size_t i : best) {
    std::snprintf(buf, sizeof buf, "%.7g\t%zu\t", static_cast<double>(score[i]), i);
    out += buf;
    out += job.documents[i];
    out += '\n';
  }
  std::fputs(out.c_str(), stdout);
  return kExitOk;
}

}  // namespace dlrt::cli
