// Checks of a model folder's config files against what dlrt reads from them,
// at load: a field of the wrong type or out of range is kInvalidModel naming
// the file and the field (`dlrt embed` / `dlrt serve` exit 3), instead of a
// silent default or a failure on every later batch.
//
//   modules.json                 a list of objects; idx an integer >= 0; name, path, type strings
//   config.json                  vocab_size, type_vocab_size, max_position_embeddings,
//                                hidden_size: integers >= 1
//   sentence_bert_config.json    max_seq_length an integer >= 1; do_lower_case a boolean
//   tokenizer_config.json        do_lower_case, tokenize_chinese_chars, strip_accents booleans;
//                                model_max_length a number > 0; *_token strings or {content}
//   1_Pooling/config.json        (the Pooling module's) pooling_mode_* booleans, one of them
//                                true or pooling_mode set; word_embedding_dimension an integer
//                                equal to the model's output width
//   tokenizer ids                the pad id inside the tokenizer's and config.json's vocabulary;
//                                the type ids the post-processor gives below config.json's
//                                type_vocab_size
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "dlrt/status.h"

namespace dlrt::embed {

class Tokenizer;

// The type checks of the files above that exist in `dir` (absent files pass;
// the Pooling module's config is checked by check_pooling_config).
Status check_folder_configs(const std::filesystem::path& dir);

// The config files checked, by their names in a folder (the last, the pooling
// config, under its usual path).
inline constexpr size_t kFolderConfigFileCount = 5;
extern const char* const kFolderConfigFiles[kFolderConfigFileCount];

// The checks of one of kFolderConfigFiles (`file`) read from `path` as `config`
// (null: the file is absent).
Status check_config_json(const std::filesystem::path& path, const std::string& file, const nlohmann::json& config);

// The pooling config's own fields (`path` names it in messages).
Status check_pooling_config(const std::filesystem::path& path, const nlohmann::json& config);

// The tokenizer's pad id and type ids against its vocabulary and config.json.
Status check_tokenizer_ids(const std::filesystem::path& dir, const Tokenizer& tokenizer);

// word_embedding_dimension of the pooling config at `path` against the width
// of the model's output (`hidden`).
Status check_pooling_dimension(const std::filesystem::path& path, const nlohmann::json& config, size_t hidden);

}  // namespace dlrt::embed
