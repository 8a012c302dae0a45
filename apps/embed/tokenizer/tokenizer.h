// Tokenizers that give the ids (and offsets) of Hugging Face's tokenizers
// for the three families of embedding models: BERT WordPiece, SentencePiece
// Unigram (XLM-RoBERTa, multilingual-e5, bge-m3) and byte-level BPE
// (GPT-2/RoBERTa, gte-Qwen), read from tokenizer.json as `tokenizers` writes
// it: normalizer, pre_tokenizer, model, post_processor, added_tokens,
// truncation and padding (the parts are in tokenizer_parts.h). A folder with
// only vocab.txt (+ tokenizer_config.json) gets BertTokenizerFast's pipeline.
// Anything in a tokenizer.json that would tokenize differently is refused at
// load with kUnsupported naming the component.
//
// Text is UTF-8; invalid bytes decode to U+FFFD.
// Immutable after loading: encode() may be called from many threads.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "dlrt/status.h"
#include "embed/tokenizer/encoding.h"

namespace dlrt::embed {

namespace tok {
struct Encoded;
}

struct NormalizerConfig {
  bool clean_text = true;
  bool handle_chinese_chars = true;
  std::optional<bool> strip_accents;  // unset: follows lowercase
  bool lowercase = true;
};

// A token of added_tokens ([CLS], <mask>, ...), matched in the text before the
// model: verbatim in the input, or in the normalised text when `normalized`.
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
  // tokenizer.json (Hugging Face tokenizers' format). kUnsupported names the
  // component (model, normalizer, pre-tokenizer, post-processor, option) dlrt
  // does not implement; kInvalidModel a file that is not a valid tokenizer.
  static Result<Tokenizer> from_json_file(const std::string& path);
  static Result<Tokenizer> from_json_string(const std::string& json);
  // One token per line, id = line number; BertTokenizerFast's defaults
  // unless `normalizer` says otherwise.
  static Result<Tokenizer> from_vocab_file(const std::string& path, const NormalizerConfig& normalizer = {});
  static Result<Tokenizer> from_vocab(std::vector<std::string> tokens, const NormalizerConfig& normalizer = {});

  // Byte offsets [begin, end) into the text of each token, as `tokenizers`
  // reports them ((0, 0) for the post-processor's special tokens).
  using Offsets = std::vector<std::pair<size_t, size_t>>;

  // Ids with the post-processor's special tokens ([CLS] ... [SEP], <s> ... </s>),
  // truncated so that the whole encoding has at most max_length ids (0: no
  // limit; the special tokens are kept when max_length leaves room for them)
  // the way the file's truncation says (strategy, direction; default
  // longest_first from the right). Offsets go to `offsets` when given.
  Encoding encode(std::string_view text, size_t max_length = 0, Offsets* offsets = nullptr) const;
  // A pair (query and passage for a cross-encoder) per the pair template; the
  // offsets of each token are into its own text.
  Encoding encode_pair(std::string_view first, std::string_view second, size_t max_length = 0,
                       Offsets* offsets = nullptr) const;
  // encode() / encode_pair() with their work bounded: kInvalidArgument when
  // a Split or Replace regex ran past its step budget (tokenizer_regex.h)
  // on this input. What the embedder, the classifier and the server use.
  // `untruncated`, when given, gets the ids the encoding would have had
  // without max_length (special tokens included), from the same pass.
  Result<Encoding> encode_checked(std::string_view text, size_t max_length = 0, Offsets* offsets = nullptr,
                                  size_t* untruncated = nullptr) const;
  Result<Encoding> encode_pair_checked(std::string_view first, std::string_view second, size_t max_length = 0,
                                       size_t* untruncated = nullptr) const;
  // The first text of pairs that share it (a reranker's query) tokenized
  // once: encode_pair_checked(encode_first_checked(a), b) is
  // encode_pair_checked(a, b), for the work of b alone (of a, only the
  // tokens that stay are copied).
  class First {
   public:
    size_t tokens() const;  // before truncation and special tokens
   private:
    friend class Tokenizer;
    std::shared_ptr<const tok::Encoded> encoded_;
    std::string text_;
  };
  Result<First> encode_first_checked(std::string_view text) const;
  Result<Encoding> encode_pair_checked(const First& first, std::string_view second, size_t max_length = 0,
                                       size_t* untruncated = nullptr) const;
  // Text of token ids by the file's decoder (WordPiece, Metaspace, ByteLevel,
  // BPEDecoder, ByteFallback, Fuse, Strip, Replace, Sequence; none: tokens
  // joined with spaces), as tokenizers' decode. kInvalidArgument for an id
  // outside the vocabulary, kUnsupported for a decoder dlrt does not have.
  Result<std::string> decode(const std::vector<int64_t>& ids, bool skip_special_tokens = true) const;
  // The word pieces of `text` without special tokens added (for tests and tools).
  std::vector<std::string> tokenize(std::string_view text) const;

  std::optional<int64_t> token_to_id(const std::string& token) const;
  const std::string& id_to_token(int64_t id) const;  // "" when out of range
  size_t vocab_size() const;  // the largest id + 1 (model vocabulary and added tokens)
  int64_t pad_id() const { return pad_id_; }
  int64_t unk_id() const { return unk_id_; }
  const NormalizerConfig& normalizer() const { return norm_; }
  // model_max_length / truncation max_length from the files (0: none given).
  size_t configured_max_length() const { return configured_max_length_; }
  void set_configured_max_length(size_t n) { configured_max_length_ = n; }
  const std::vector<AddedToken>& added_tokens() const { return added_; }
  // Whether `id` is a special added token ([CLS], <s>, ...), by table lookup.
  bool is_special(int64_t id) const;
  // "WordPiece", "Unigram", "BPE" or "WordLevel".
  std::string family() const;

  struct Pipeline;

 private:
  // The special-token names of a vocab.txt folder (tokenizer_config.json may rename them).
  struct SpecialNames {
    std::string unk = "[UNK]", cls = "[CLS]", sep = "[SEP]", pad = "[PAD]", mask = "[MASK]";
  };
  static Result<Tokenizer> from_vocab_named(std::vector<std::string> tokens, const NormalizerConfig& normalizer,
                                            const SpecialNames& names);
  Encoding encode_impl(std::string_view a, const std::string_view* b, size_t max_length, Offsets* offsets,
                       size_t* untruncated = nullptr) const;
  First encode_first(std::string_view text) const;
  Encoding encode_pair_first(const First& first, std::string_view second, size_t max_length,
                             size_t* untruncated = nullptr) const;

  std::shared_ptr<const Pipeline> p_;
  NormalizerConfig norm_;
  std::vector<AddedToken> added_;
  int64_t unk_id_ = 0, pad_id_ = 0;
  size_t configured_max_length_ = 0;
};

// While it lives, tokenizing on this thread stops once `deadline` passes:
// encode_checked and the other *_checked calls then fail with kCancelled (the
// server sets one per request, its deadline). The epoch: none.
class TokenizeDeadline {
 public:
  explicit TokenizeDeadline(std::chrono::steady_clock::time_point deadline);
  ~TokenizeDeadline();
  TokenizeDeadline(const TokenizeDeadline&) = delete;
  TokenizeDeadline& operator=(const TokenizeDeadline&) = delete;

 private:
  std::chrono::steady_clock::time_point previous_;
};

// UTF-8 -> code points; invalid or truncated sequences become U+FFFD.
std::u32string utf8_to_u32(std::string_view s);
void append_utf8(uint32_t cp, std::string& out);

}  // namespace dlrt::embed
