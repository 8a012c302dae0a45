// BERT WordPiece tokenizer that gives the ids of Hugging Face's tokenizers
// (BertTokenizerFast): BertNormalizer (clean text, CJK split, accent
// stripping by NFD, lower-casing), BertPreTokenizer (whitespace and
// punctuation split), WordPiece with "##" continuations and [UNK] for words
// it cannot split or that are too long, special (added) tokens matched in the
// raw text, [CLS] ... [SEP] around the sequence, truncation.
//
// Loads tokenizer.json (model WordPiece) or vocab.txt (+ tokenizer_config.json).
// Text is UTF-8; invalid bytes decode to U+FFFD (which clean_text removes).
// Immutable after loading: encode() may be called from many threads.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "dlrt/status.h"
#include "embed/embedder.h"

namespace dlrt::embed {

struct NormalizerConfig {
  bool clean_text = true;
  bool handle_chinese_chars = true;
  std::optional<bool> strip_accents;  // unset: follows lowercase
  bool lowercase = true;
};

// A token matched verbatim in the text before normalisation ([CLS], [MASK], ...).
struct AddedToken {
  std::string content;
  int64_t id = 0;
  bool single_word = false, lstrip = false, rstrip = false, normalized = false, special = true;
};

class Tokenizer {
 public:
  // Reads DIR/tokenizer.json when present, else DIR/vocab.txt; both read
  // DIR/tokenizer_config.json when present for the options and model_max_length.
  static Result<Tokenizer> from_folder(const std::string& dir);
  // tokenizer.json (Hugging Face tokenizers' format), model type WordPiece.
  static Result<Tokenizer> from_json_file(const std::string& path);
  static Result<Tokenizer> from_json_string(const std::string& json);
  // One token per line, id = line number; BertTokenizerFast's defaults
  // unless `normalizer` says otherwise.
  static Result<Tokenizer> from_vocab_file(const std::string& path, const NormalizerConfig& normalizer = {});
  static Result<Tokenizer> from_vocab(std::vector<std::string> tokens, const NormalizerConfig& normalizer = {});

  // Ids with [CLS]/[SEP] (per the post-processor), truncated so that the
  // whole encoding has at most max_length ids (0: no limit; the special
  // tokens are kept when max_length leaves room for them).
  Encoding encode(std::string_view text, size_t max_length = 0) const;
  // The word pieces of `text` without special tokens added (for tests and tools).
  std::vector<std::string> tokenize(std::string_view text) const;

  std::optional<int64_t> token_to_id(const std::string& token) const;
  const std::string& id_to_token(int64_t id) const;  // "" when out of range
  size_t vocab_size() const { return id_to_token_.size(); }
  int64_t pad_id() const { return pad_id_; }
  int64_t unk_id() const { return unk_id_; }
  const NormalizerConfig& normalizer() const { return norm_; }
  // model_max_length / truncation max_length from the files (0: none given).
  size_t configured_max_length() const { return configured_max_length_; }
  void set_configured_max_length(size_t n) { configured_max_length_ = n; }
  const std::vector<AddedToken>& added_tokens() const { return added_; }

 private:
  Status finish();  // resolves special-token ids after the vocab is in
  void normalize(const std::u32string& in, std::u32string& out) const;
  void wordpiece(std::u32string_view word, std::vector<int64_t>& ids) const;
  void encode_segment(const std::u32string& segment, std::vector<int64_t>& ids) const;
  std::vector<int64_t> encode_ids(std::string_view text) const;

  NormalizerConfig norm_;
  std::unordered_map<std::string, int64_t> vocab_;
  std::vector<std::string> id_to_token_;
  std::vector<AddedToken> added_;
  std::vector<std::u32string> added_u32_;
  std::string unk_token_ = "[UNK]", continuing_prefix_ = "##";
  size_t max_input_chars_per_word_ = 100;
  int64_t unk_id_ = 0, pad_id_ = 0;
  // Post-processor: ids (and type ids) before and after the sequence.
  std::vector<int64_t> prefix_ids_, suffix_ids_, prefix_types_, suffix_types_;
  int64_t sequence_type_id_ = 0;
  size_t configured_max_length_ = 0;
  // Names used to resolve the default post-processor and padding of vocab.txt folders.
  std::string cls_token_ = "[CLS]", sep_token_ = "[SEP]", pad_token_ = "[PAD]", mask_token_ = "[MASK]";
  bool default_specials_ = true;  // vocab.txt: [CLS] A [SEP] and the five BERT special tokens
};

// UTF-8 -> code points; invalid or truncated sequences become U+FFFD.
std::u32string utf8_to_u32(std::string_view s);
void append_utf8(uint32_t cp, std::string& out);

}  // namespace dlrt::embed
