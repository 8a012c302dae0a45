// The tokenizer's output for one text (or pair), as the models take it.
#pragma once

#include <cstdint>
#include <vector>

namespace dlrt::embed {

// One tokenized text: unpadded, with [CLS] ... [SEP].
struct Encoding {
  std::vector<int64_t> ids, type_ids, attention_mask;
  // A Router model's route k as k + 1 (EmbedModel::tokenize_for); 0: the model's default.
  uint8_t route = 0;
};

}  // namespace dlrt::embed
