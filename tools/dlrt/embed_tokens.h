// The per-token half of `dlrt embed`: --tokens on any embedding folder (the
// transformer's token vectors, as sentence-transformers'
// output_value="token_embeddings"), and every run on a multi-vector (ColBERT)
// folder (its projected, normalised token vectors; --query / --document).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "embed/models/model.h"

namespace dlrt::cli {

struct TokenEmbedJob {
  std::shared_ptr<const embed::EmbedModel> model;  // opened by the registry, with PerTokenOut
  std::vector<std::string> texts;
  bool multi_vector = false;  // the folder is a multi-vector model
  bool is_query = true;       // multi-vector: embed the texts as queries (else documents)
  std::string prompt;         // in front of every text
  size_t batch = 32;
  bool json = false, quiet = false, progress = false;
};

// Embeds and prints (text or --json); returns the exit code.
int embed_tokens(const TokenEmbedJob& job);

}  // namespace dlrt::cli
