// MultiVectorEmbedder's state, shared by multi_vector.cpp (PyLate folders)
// and multi_vector_encoder.cpp (sentence-transformers 6.x). Internal to models/.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "embed/models/dense.h"
#include "embed/models/embedder.h"
#include "embed/models/multi_vector.h"
#include "embed/tokenizer/tokenizer.h"

namespace dlrt::embed {

struct MultiVectorEmbedder::Impl {
  std::unique_ptr<Embedder> base;
  MultiVectorConfig config;
  std::vector<DenseLayer> dense;
  std::optional<int64_t> query_marker, document_marker;
  int64_t mask_id = 0;  // PyLate's mask token; a 6.x encoder's expansion token
  std::set<int64_t> skiplist, keep_only;
  size_t dimension = 0;
};

// The id of a token: the vocabulary's, else an added token's (convert_tokens_to_ids).
std::optional<int64_t> multi_vector_token_id(const Tokenizer& tok, const std::string& token);
// tokenizer_config.json's / special_tokens_map.json's KEY ("mask_token": a string or {"content": ...}); "" if none.
std::string special_token_name(const std::filesystem::path& dir, const char* key);

}  // namespace dlrt::embed
