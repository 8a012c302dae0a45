// The parts of a tokenizer.json pipeline (tokenizer.h), private to
// apps/embed: the text on its way through normalisation and pre-tokenisation
// with its alignment to the input (as Hugging Face's NormalizedString), and
// one interface per stage, each built from its JSON object by a make_*
// function that answers kUnsupported, naming the component, for anything it
// would tokenize differently from Hugging Face's tokenizers.
//
// Thread-safety: every part is immutable once made; its methods may be called
// from many threads at once.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "dlrt/status.h"
#include "embed/tokenizer/tokenizer_limits.h"

namespace dlrt::embed::tok {

using json = nlohmann::json;

// The largest token id a tokenizer.json may use (ids index tables of that many entries).
inline constexpr int64_t kMaxTokenId = int64_t{1} << 26;

// The largest id a table of `tokens` tokens may use. Ids index a table with a
// slot for every id below the largest, so an id far past the token count (a
// sparse or hostile file) would cost memory out of all proportion to the file;
// real vocabularies are dense, with at most a few gaps.
inline int64_t max_dense_id(size_t tokens) {
  return std::min<int64_t>(kMaxTokenId, 16 * static_cast<int64_t>(tokens) + 4096);
}

// InvalidModel naming `what` (e.g. `added_tokens["[X]"]`) when `id` is past
// max_dense_id(tokens); Ok otherwise.
inline Status check_dense_id(const std::string& what, int64_t id, size_t tokens) {
  const int64_t most = max_dense_id(tokens);
  if (id <= most) return Status::Ok();
  return InvalidModel(what + " has id " + std::to_string(id) + " for " + std::to_string(tokens) + " tokens (at most " +
                      std::to_string(most) + "): ids must be dense");
}

// kInvalidModel when a `component` ("normalizer", "decoder", ...) sits inside
// more than kMaxComponentDepth Sequences (`depth`: the Sequences around it).
// The make_* functions take the depth of the object they build.
inline Status check_component_depth(const char* component, size_t depth) {
  if (depth <= kMaxComponentDepth) return Status::Ok();
  return InvalidModel(std::string(component) + " Sequences are nested more than " + std::to_string(kMaxComponentDepth) +
                      " deep");
}

// The byte range of the input a normalised code point came from.
struct Span {
  uint32_t start = 0, end = 0;
};

// A piece of text between the input and the model: code points, each with the
// input bytes it came from. `orig_start` is where the piece starts in the input
// (NormalizedString::offsets_original().0); `added_id` >= 0 marks an added token
// matched here, which later stages leave alone.
struct NormText {
  std::u32string chars;
  std::vector<Span> align;
  uint32_t orig_start = 0;
  int64_t added_id = -1;

  // Code points [from, to) as a piece of its own.
  NormText slice(size_t from, size_t to) const;
};

// One output code point of a transformation and what it did, as Hugging Face's
// NormalizedString::transform takes them: 0 replaces the next input code point,
// 1 is inserted (it takes the alignment of the input code point before it),
// -n replaces the next one and removes the n after it.
struct Change {
  char32_t c;
  int32_t change;
};
// Rebuilds `t` from `changes` (after skipping `initial_offset` input code points).
void apply_changes(NormText& t, const std::vector<Change>& changes, size_t initial_offset = 0);

// The bound on the normalised text of one encode (kMaxNormalizedGrowth):
// Tokenizer::encode_impl gives this thread a budget of code points
// (NormalizedBudget); a normalizer about to make a piece longer than what is
// left empties the piece instead and flags the thread, which encode_checked
// reports (take_normalized_overflow). Outside an encode there is no bound.
class NormalizedBudget {
 public:
  explicit NormalizedBudget(size_t code_points);
  ~NormalizedBudget();
  NormalizedBudget(const NormalizedBudget&) = delete;
  NormalizedBudget& operator=(const NormalizedBudget&) = delete;
};
// Whether `t` may be `code_points` long; when not, empties `t` and flags the thread.
bool normalized_fits(NormText& t, size_t code_points);
// Takes a normalised piece's length off this thread's budget.
void charge_normalized(size_t code_points);
// Whether a normalizer on this thread went past its budget since the last
// call; clears the flag.
bool take_normalized_overflow();

class Normalizer {
 public:
  virtual ~Normalizer() = default;
  virtual void normalize(NormText& t) const = 0;
};
// From tokenizer.json's "normalizer" (not null).
Result<std::unique_ptr<Normalizer>> make_normalizer(const json& j, size_t depth = 0);
Result<std::unique_ptr<Normalizer>> make_precompiled_normalizer(const std::string& base64);

// BertNormalizer's options (also what a vocab.txt folder's tokenizer_config.json sets).
struct BertNormalizerOptions {
  bool clean_text = true, handle_chinese_chars = true, lowercase = true;
  int strip_accents = -1;  // -1: follows lowercase
};
std::unique_ptr<Normalizer> make_bert_normalizer(const BertNormalizerOptions& options);

class PreTokenizer {
 public:
  using Emit = std::function<void(NormText&&)>;
  virtual ~PreTokenizer() = default;
  // The non-empty words of one piece (one that holds no added token), in
  // order, to `emit`; `piece` may be changed. Each piece's words depend on
  // that piece alone, so a long input's words are given one at a time to the
  // model and never all held at once.
  virtual void split(NormText& piece, const Emit& emit) const = 0;
};
// From tokenizer.json's "pre_tokenizer" (not null).
Result<std::unique_ptr<PreTokenizer>> make_pre_tokenizer(const json& j, size_t depth = 0);
std::unique_ptr<PreTokenizer> make_bert_pre_tokenizer();

// A token of a model: its id and the code points [begin, end) of the piece it covers.
struct ModelToken {
  int64_t id;
  uint32_t begin, end;
};

class Model {
 public:
  virtual ~Model() = default;
  // Appends the tokens of one pre-tokenized piece (not empty).
  virtual void tokenize(std::u32string_view piece, std::vector<ModelToken>& out) const = 0;
  // "WordPiece", "Unigram", "BPE", "WordLevel".
  virtual const char* family() const = 0;
  // The vocabulary: token text by id ("" for a gap).
  virtual const std::vector<std::string>& vocab() const = 0;
  // The unknown token's id, or -1.
  virtual int64_t unk_id() const = 0;
};
// The model makers by type (tokenizer_wordpiece.cpp, tokenizer_unigram.cpp, tokenizer_bpe.cpp).
Result<std::unique_ptr<Model>> make_wordpiece_json(const json& j);
Result<std::unique_ptr<Model>> make_wordlevel_json(const json& j);
Result<std::unique_ptr<Model>> make_unigram_json(const json& j);
Result<std::unique_ptr<Model>> make_bpe_json(const json& j);
// model.vocab as {token: id}: the map and the tokens by id.
Status read_vocab_map(const json& model, const char* owner, std::unordered_map<std::string, int64_t>& map,
                      std::vector<std::string>& by_id);
// WordPiece over a vocabulary in id order (vocab.txt).
Result<std::unique_ptr<Model>> make_wordpiece(std::vector<std::string> vocab, const std::string& unk_token,
                                              const std::string& prefix, size_t max_input_chars_per_word);

// One sequence's tokens on their way out: ids, type ids, input byte offsets,
// whether each is a special token of the post-processor, and whether it is an
// added token (its text is the input's, not the vocabulary's).
struct Encoded {
  std::vector<int64_t> ids, type_ids;
  std::vector<std::pair<uint32_t, uint32_t>> offsets;
  std::vector<uint8_t> special, added;
  // At most about `keep` tokens are stored, the first ones (or the last ones
  // when `keep_last`); push() counts the others in `dropped`: a long input's
  // truncated tokens cost no memory.
  size_t keep = SIZE_MAX, dropped = 0;
  bool keep_last = false;

  size_t size() const { return ids.size(); }
  size_t total() const { return ids.size() + dropped; }  // pushed, stored or not
  void push(int64_t id, int64_t type_id, std::pair<uint32_t, uint32_t> offset, bool is_special, bool is_added);
  void append(const Encoded& other);
  // Keeps `n` tokens, dropping from the end (right) or the front (left).
  void truncate(size_t n, bool from_left);
};

// What a post-processor may look at besides the encodings.
struct PostContext {
  const std::vector<std::string>* vocab;  // token text by id
  std::string_view texts[2];              // the inputs (added tokens' text)
};

class PostProcessor {
 public:
  virtual ~PostProcessor() = default;
  // How many special tokens it adds to one sequence or a pair.
  virtual size_t added_tokens(bool pair) const = 0;
  // Hugging Face's process_encodings: gets one encoding per input, may merge them.
  virtual void process(std::vector<Encoded>& encodings, const PostContext& context) const = 0;
};
// From tokenizer.json's "post_processor" (not null); `vocab` resolves token names.
Result<std::unique_ptr<PostProcessor>> make_post_processor(const json& j,
                                                           const std::unordered_map<std::string, int64_t>& vocab,
                                                           size_t depth = 0);
// [CLS] $A [SEP] / [CLS] $A [SEP] $B:1 [SEP]:1 (vocab.txt folders).
std::unique_ptr<PostProcessor> make_bert_processing(int64_t cls_id, int64_t sep_id);
// Concatenates a pair into one encoding (what Hugging Face does without a post-processor).
void merge_encodings(std::vector<Encoded>& encodings);

// Whether the TokenizeDeadline (tokenizer.h) of this thread stopped a
// tokenization since the last call (then false).
bool take_deadline_passed();

// Transitions the added-token matcher tried on this thread since the last
// call (then 0): at most two per code point scanned, whatever the added tokens.
size_t take_added_match_steps();

// ---- text helpers shared by the parts

// Rust's char::is_alphanumeric() || '_' (regex \w for the added tokens' single_word).
bool is_word_char(uint32_t cp);
// The byte-level alphabet: byte -> code point, and back (-1 for code points outside it).
char32_t byte_to_char(uint8_t b);
int char_to_byte(char32_t c);
// UTF-8 of a code point string.
std::string to_utf8(std::u32string_view s);

}  // namespace dlrt::embed::tok
