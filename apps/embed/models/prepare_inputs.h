// Texts to a model's inputs, one way for every entry point (dlrt serve's
// embedding routes, dlrt embed, the Python Embedder, the C API): the prompt in
// front, tokenizing, the token limit per input and truncation. Callers word
// the errors their own way (a 413 / 422 / 504, a usage error, an exception).
// And the inputs' vectors outside the server's batcher: `batch_size` at a
// time, longest first (length_groups.h's by_length).
//
// Thread-safety: free of shared state.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "dlrt/status.h"
#include "embed/models/model.h"
#include "embed/tokenizer/encoding.h"

namespace dlrt::embed {

// The text to put in front of each text: the named prompt `requested`, else
// `default_name`'s, else the model's default prompt's, else none (""); nullopt
// when `requested` is not a prompt of the model.
std::optional<std::string> resolve_prompt(const EmbedModel& m, const std::optional<std::string>& requested,
                                          const std::string& default_name);

// The prompt sentence-transformers' encode_query (true) / encode_document
// (false) use when none is named: the model's "query", or its first of
// "document", "passage", "corpus"; nullopt when it has none of them.
std::optional<std::string> task_prompt_name(const EmbedModel& m, bool is_query);
// That prompt's text for a per-token model that picks prompts by task
// (PerTokenOut::prompts_by_task); "" for any other model.
std::string per_token_task_prompt(const EmbedModel& m, bool is_query);

struct InputOptions {
  std::string prompt;    // in front of every text (resolve_prompt's)
  size_t limit = 0;      // tokens per input, within the model's max_length() (0: max_length())
  bool truncate = true;  // cut a longer input to `limit` (keeping its last token); false: kTooLong
  // Queries (true) or documents (false): a Router folder's route (EmbedModel::tokenize_for).
  std::optional<bool> is_query;
  // Asked after each text: true stops with kStopped (a request's deadline).
  std::function<bool()> stop;
};

struct InputError {
  enum class What { kTokenize, kTooLong, kStopped } what = What::kTokenize;
  size_t index = 0;   // the input
  size_t tokens = 0;  // kTooLong: its tokens before the cut (0: not known, more than the limit)
  size_t limit = 0;   // kTooLong: the limit it is over
  Status status;      // kTokenize: the tokenizer's error
};

// The inputs of `texts` (moved from) in `out`, in order; the first error otherwise.
std::optional<InputError> prepare_inputs(const EmbedModel& m, std::vector<std::string>& texts,
                                         const InputOptions& options, std::vector<Encoding>& out);

// The dense vectors of `inputs`, L2-normalised when `normalize`; sink(i,
// vector) gets inputs[i]'s. Stops at the first run or sink that fails.
Status embed_inputs(const DenseOut& model, std::vector<Encoding> inputs, size_t batch_size, bool normalize,
                    const Embedder::VectorSink& sink);
// The sparse vectors of `inputs`, each cut to its top_k largest (0: all).
Status encode_sparse_inputs(const SparseOut& model, std::vector<Encoding> inputs, size_t batch_size, size_t top_k,
                            const Embedder::SparseSink& sink);

}  // namespace dlrt::embed
