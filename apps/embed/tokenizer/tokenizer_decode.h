// Decoders of tokenizer.json (the "decoder" entry): token strings back to
// text, as Hugging Face's tokenizers does it (see tokenizer_decode.cpp).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "dlrt/status.h"

namespace dlrt::embed::tok {

class Decoder {
 public:
  virtual ~Decoder() = default;
  // Rewrites the token strings in place; the text is their concatenation.
  virtual Status decode_chain(std::vector<std::string>& tokens) const = 0;
};

// WordPiece, Metaspace, ByteLevel, BPEDecoder, ByteFallback, Fuse, Strip,
// Replace (string patterns) and Sequence; kUnsupported for others.
// `depth`: the Sequences around it (tokenizer_parts.h, check_component_depth).
Result<std::unique_ptr<Decoder>> make_decoder(const nlohmann::json& j, size_t depth = 0);
// BertTokenizerFast's decoder (vocab.txt folders).
std::unique_ptr<Decoder> make_wordpiece_decoder(const std::string& prefix, bool cleanup_spaces);

}  // namespace dlrt::embed::tok
