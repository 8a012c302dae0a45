// Models with a plain vocabulary (see tokenizer_parts.h): WordPiece (greedy
// longest match with a continuation prefix, [UNK] for a word it cannot split or
// that is too long) and WordLevel (the whole piece or [UNK]).
#include <algorithm>

#include "embed/tokenizer/json_util.h"
#include "embed/tokenizer/tokenizer.h"
#include "embed/tokenizer/tokenizer_limits.h"
#include "embed/tokenizer/tokenizer_parts.h"

namespace dlrt::embed::tok {

Status read_vocab_map(const json& model, const char* owner, std::unordered_map<std::string, int64_t>& map,
                      std::vector<std::string>& by_id) {
  const json* vocab = jsonu::member(model, "vocab");
  if (!vocab || !vocab->is_object() || vocab->empty()) return InvalidModel(std::string(owner) + ": model.vocab is missing or empty");
  int64_t max_id = -1;
  map.reserve(vocab->size());
  for (auto it = vocab->begin(); it != vocab->end(); ++it) {
    if (!it.value().is_number_integer() || it.value().get<int64_t>() < 0 || it.value().get<int64_t>() > kMaxTokenId)
      return InvalidModel("model.vocab[\"" + it.key() + "\"] is not a valid id");
    int64_t id = it.value().get<int64_t>();
    map[it.key()] = id;
    max_id = std::max(max_id, id);
  }
  DLRT_RETURN_IF_ERROR(check_dense_id(std::string(owner) + ": model.vocab", max_id, map.size()));
  by_id.assign(static_cast<size_t>(max_id + 1), std::string());
  for (const auto& [tok, id] : map) by_id[static_cast<size_t>(id)] = tok;
  return Status::Ok();
}

namespace {

class WordPiece final : public Model {
 public:
  void tokenize(std::u32string_view word, std::vector<ModelToken>& out) const override {
    uint32_t n = static_cast<uint32_t>(word.size());
    if (word.size() > max_chars_) {
      out.push_back({unk_, 0, n});
      return;
    }
    std::string utf8;
    std::vector<size_t> offsets;  // byte offset of each char, plus the end
    offsets.reserve(word.size() + 1);
    for (char32_t c : word) {
      offsets.push_back(utf8.size());
      append_utf8(c, utf8);
    }
    offsets.push_back(utf8.size());
    size_t before = out.size();
    std::string candidate;
    uint32_t start = 0;
    while (start < n) {
      // No vocabulary entry is longer than longest_: shorter candidates only.
      uint32_t end = static_cast<uint32_t>(std::min<size_t>(n, start + longest_));
      int64_t found = -1;
      while (start < end) {
        candidate.clear();
        if (start > 0) candidate += prefix_;
        candidate.append(utf8, offsets[start], offsets[end] - offsets[start]);
        auto it = vocab_.find(candidate);
        if (it != vocab_.end()) {
          found = it->second;
          break;
        }
        --end;
      }
      if (found < 0) {
        out.resize(before);
        out.push_back({unk_, 0, n});
        return;
      }
      out.push_back({found, start, end});
      start = end;
    }
  }
  const char* family() const override { return "WordPiece"; }
  const std::vector<std::string>& vocab() const override { return by_id_; }
  int64_t unk_id() const override { return unk_; }

  std::unordered_map<std::string, int64_t> vocab_;
  std::vector<std::string> by_id_;
  std::string prefix_ = "##";
  size_t max_chars_ = 100;
  size_t longest_ = 0;  // the longest entry in code points (a bound for both word starts and continuations)
  int64_t unk_ = 0;

  // Sets longest_; kInvalidModel when a word could match a token longer than
  // kMaxWordPieceMatchChars (tokenizer_limits.h).
  Status measure() {
    auto chars = [](std::string_view s) {
      size_t n = 0;
      for (unsigned char c : s) n += (c & 0xC0) != 0x80;
      return n;
    };
    longest_ = 0;
    for (const auto& [token, id] : vocab_) longest_ = std::max(longest_, chars(token));
    const size_t usable = std::min(longest_, max_chars_ + chars(prefix_));
    if (usable > kMaxWordPieceMatchChars)
      return InvalidModel("WordPiece: a word can match a token of " + std::to_string(usable) +
                          " characters (the longest vocabulary entry, within max_input_chars_per_word); the limit is " +
                          std::to_string(kMaxWordPieceMatchChars));
    return Status::Ok();
  }
};

class WordLevel final : public Model {
 public:
  void tokenize(std::u32string_view word, std::vector<ModelToken>& out) const override {
    auto it = vocab_.find(to_utf8(word));
    if (it != vocab_.end()) out.push_back({it->second, 0, static_cast<uint32_t>(word.size())});
    else if (unk_ >= 0) out.push_back({unk_, 0, static_cast<uint32_t>(word.size())});
  }
  const char* family() const override { return "WordLevel"; }
  const std::vector<std::string>& vocab() const override { return by_id_; }
  int64_t unk_id() const override { return unk_; }

  std::unordered_map<std::string, int64_t> vocab_;
  std::vector<std::string> by_id_;
  int64_t unk_ = -1;
};

}  // namespace

Result<std::unique_ptr<Model>> make_wordpiece(std::vector<std::string> vocab, const std::string& unk_token,
                                              const std::string& prefix, size_t max_input_chars_per_word) {
  auto m = std::make_unique<WordPiece>();
  m->by_id_ = std::move(vocab);
  for (size_t i = 0; i < m->by_id_.size(); ++i) m->vocab_.emplace(m->by_id_[i], static_cast<int64_t>(i));  // first wins
  if (m->vocab_.empty()) return InvalidModel("the vocabulary is empty");
  auto unk = m->vocab_.find(unk_token);
  if (unk == m->vocab_.end()) return InvalidModel("the vocabulary has no unknown token \"" + unk_token + "\"");
  m->unk_ = unk->second;
  m->prefix_ = prefix;
  m->max_chars_ = max_input_chars_per_word;
  DLRT_RETURN_IF_ERROR(m->measure());
  return std::unique_ptr<Model>(std::move(m));
}

Result<std::unique_ptr<Model>> make_wordpiece_json(const json& j) {
  auto m = std::make_unique<WordPiece>();
  DLRT_RETURN_IF_ERROR(read_vocab_map(j, "WordPiece", m->vocab_, m->by_id_));
  std::string unk = jsonu::get_string(j, "unk_token", "[UNK]");
  auto it = m->vocab_.find(unk);
  if (it == m->vocab_.end()) return InvalidModel("the vocabulary has no unknown token \"" + unk + "\"");
  m->unk_ = it->second;
  m->prefix_ = jsonu::get_string(j, "continuing_subword_prefix", "##");
  m->max_chars_ = static_cast<size_t>(std::max<int64_t>(0, jsonu::get_int(j, "max_input_chars_per_word", 100)));
  DLRT_RETURN_IF_ERROR(m->measure());
  return std::unique_ptr<Model>(std::move(m));
}

Result<std::unique_ptr<Model>> make_wordlevel_json(const json& j) {
  auto m = std::make_unique<WordLevel>();
  DLRT_RETURN_IF_ERROR(read_vocab_map(j, "WordLevel", m->vocab_, m->by_id_));
  if (const json* unk = jsonu::member(j, "unk_token"); unk && unk->is_string()) {
    auto it = m->vocab_.find(unk->get<std::string>());
    if (it == m->vocab_.end()) return InvalidModel("WordLevel: the vocabulary has no unknown token \"" + unk->get<std::string>() + "\"");
    m->unk_ = it->second;
  }
  return std::unique_ptr<Model>(std::move(m));
}

}  // namespace dlrt::embed::tok
