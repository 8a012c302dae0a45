// How transformers prepares the texts of a CLIP / SigLIP / SigLIP 2 folder,
// read from the folder's files (tokenizer_config.json, tokenizer.json,
// processor_config.json, config.json), for ClipEmbedder:
//   - the tokenizer class AutoTokenizer builds: for model_type "siglip2"
//     always transformers' Siglip2Tokenizer (whatever tokenizer_class the
//     file names, as AutoTokenizer overrides it), whose own pipeline
//     replaces tokenizer.json's: lowercase, " " -> "▁", a BPE with byte
//     fallback, the bos / eos tokens add_bos_token / add_eos_token ask for;
//   - the padding side (tokenizer_config.json's padding_side, else
//     tokenizer.json's, else the class's: left for Siglip2Tokenizer);
//   - whether the tokenizer returns an attention mask (model_input_names);
//   - Siglip2Processor's text length (max_length 64 unless the tokenizer's
//     config sets max_length).
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>

#include "dlrt/status.h"
#include "embed/tokenizer/tokenizer.h"

namespace dlrt::embed {

struct ClipTextRule {
  bool pad_left = false;
  bool returns_mask = true;         // "attention_mask" in the tokenizer's model_input_names
  size_t processor_max_length = 0;  // the processor's max_length (0: none; the tokenizer's)
  std::string tokenizer_class;      // the class transformers builds ("" when the folder names none)
};

// The folder's tokenizer as transformers builds it for `model_type`, and its
// text rule. kUnsupported for a Siglip2Tokenizer folder whose tokenizer.json
// is not a BPE; the tokenizer's errors otherwise.
Result<Tokenizer> load_clip_tokenizer(const std::filesystem::path& dir, const std::string& model_type,
                                      ClipTextRule& rule);

}  // namespace dlrt::embed
