// The tokenizer's output for one text (or pair), as the models take it.
#pragma once

#include <cstdint>
#include <vector>

namespace dlrt::embed {

// One tokenized text: unpadded, with [CLS] ... [SEP].
struct Encoding {
  std::vector<int64_t> ids, type_ids, attention_mask;
};

}  // namespace dlrt::embed
