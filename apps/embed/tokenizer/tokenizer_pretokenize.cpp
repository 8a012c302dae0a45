// Pre-tokenizers of tokenizer.json (see tokenizer_parts.h): BertPreTokenizer,
// Whitespace, WhitespaceSplit, Metaspace, ByteLevel (GPT-2's split pattern,
// written out by hand over the Unicode tables), Split (a string or a regex),
// Punctuation, Digits, CharDelimiterSplit and Sequence, with Hugging Face's
// split behaviours (removed, isolated, merged with previous/next, contiguous).
#include <algorithm>
#include <optional>

#include "embed/tokenizer/json_util.h"
#include "embed/tokenizer/tokenizer.h"
#include "embed/tokenizer/tokenizer_parts.h"
#include "embed/tokenizer/tokenizer_regex.h"
#include "embed/tokenizer/unicode_tables.h"

namespace dlrt::embed::tok {

namespace {

enum class Behavior { kRemoved, kIsolated, kMergedWithPrevious, kMergedWithNext, kContiguous };

Result<Behavior> parse_behavior(const json& j, const char* owner, Behavior def) {
  const json* b = jsonu::member(j, "behavior");
  if (!b) return def;
  std::string s = b->is_string() ? b->get<std::string>() : "";
  if (s == "Removed") return Behavior::kRemoved;
  if (s == "Isolated") return Behavior::kIsolated;
  if (s == "MergedWithPrevious") return Behavior::kMergedWithPrevious;
  if (s == "MergedWithNext") return Behavior::kMergedWithNext;
  if (s == "Contiguous") return Behavior::kContiguous;
  return Unsupported(std::string("pre_tokenizer ") + owner + ": behavior \"" + s + "\" is not supported");
}

// A piece covered by (range, is_match) parts, cut as `behavior` says (Hugging
// Face's NormalizedString::split); empty results are dropped.
struct Part {
  size_t b, e;
  bool match;
};
template <typename Emit>
void cut(const NormText& t, std::vector<Part>& parts, Behavior behavior, const Emit& emit) {
  std::vector<Part> keep;  // match now means "remove"
  keep.reserve(parts.size());
  bool prev_match = false;
  switch (behavior) {
    case Behavior::kIsolated:
      for (Part p : parts) keep.push_back({p.b, p.e, false});
      break;
    case Behavior::kRemoved: keep = parts; break;
    case Behavior::kContiguous:
      for (Part p : parts) {
        if (p.match == prev_match && !keep.empty()) keep.back().e = p.e;
        else keep.push_back({p.b, p.e, false});
        prev_match = p.match;
      }
      break;
    case Behavior::kMergedWithPrevious:
      for (Part p : parts) {
        if (p.match && !prev_match && !keep.empty()) keep.back().e = p.e;
        else keep.push_back({p.b, p.e, false});
        prev_match = p.match;
      }
      break;
    case Behavior::kMergedWithNext:
      for (size_t k = parts.size(); k-- > 0;) {
        Part p = parts[k];
        if (p.match && !prev_match && !keep.empty()) keep.back().b = p.b;
        else keep.push_back({p.b, p.e, false});
        prev_match = p.match;
      }
      std::reverse(keep.begin(), keep.end());
      break;
  }
  for (const Part& p : keep)
    if (!p.match && p.e > p.b) emit(t.slice(p.b, p.e));
}

// Parts from match ranges (the gaps between them are non-matches).
void parts_from_matches(size_t n, const std::vector<std::pair<size_t, size_t>>& matches, bool invert, std::vector<Part>& parts) {
  parts.clear();
  size_t prev = 0;
  for (const auto& [b, e] : matches) {
    if (prev != b) parts.push_back({prev, b, invert});
    parts.push_back({b, e, !invert});
    prev = e;
  }
  if (prev != n) parts.push_back({prev, n, invert});
}

// Each code point `is_delim` accepts is a match of its own.
template <typename Pred>
void parts_from_chars(const std::u32string& s, Pred is_delim, std::vector<Part>& parts) {
  parts.clear();
  size_t last = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (!is_delim(s[i])) continue;
    if (last < i) parts.push_back({last, i, false});
    parts.push_back({i, i + 1, true});
    last = i + 1;
  }
  if (last < s.size()) parts.push_back({last, s.size(), false});
}

bool bert_whitespace(uint32_t cp) {
  if ((cp >= 0x9 && cp <= 0xD) || cp == 0x20 || cp == 0x85) return true;
  return cp > 0x7F && unicode::char_class(cp) == unicode::kSpace;
}
bool bert_punctuation(uint32_t cp) {
  if (cp < 0x80) return (cp >= 33 && cp <= 47) || (cp >= 58 && cp <= 64) || (cp >= 91 && cp <= 96) || (cp >= 123 && cp <= 126);
  return unicode::char_class(cp) == unicode::kPunct;
}

class BertPre final : public PreTokenizer {
 public:
  // Whitespace removed, then punctuation isolated, in one pass over the piece.
  void split(NormText& piece, const Emit& emit) const override {
    scan(piece.chars, [&](size_t b, size_t e) { emit(piece.slice(b, e)); });
  }

 private:
  // Calls emit(b, e) for each non-empty word of `s` in order.
  template <typename Fn>
  static void scan(const std::u32string& s, Fn emit) {
    size_t start = 0;
    auto flush = [&](size_t end) {
      if (end > start) emit(start, end);
    };
    for (size_t i = 0; i < s.size(); ++i) {
      if (bert_whitespace(s[i])) {
        flush(i);
        start = i + 1;
      } else if (bert_punctuation(s[i])) {
        flush(i);
        start = i;
        flush(i + 1);
        start = i + 1;
      }
    }
    flush(s.size());
  }
};

class CharSplitPre final : public PreTokenizer {
 public:
  CharSplitPre(bool (*pred)(uint32_t), Behavior behavior) : pred_(pred), behavior_(behavior) {}
  CharSplitPre(char32_t delim, Behavior behavior) : delim_(delim), behavior_(behavior) {}
  void split(NormText& p, const Emit& emit) const override {
    std::vector<Part> parts;
    if (pred_) parts_from_chars(p.chars, pred_, parts);
    else parts_from_chars(p.chars, [this](uint32_t c) { return c == delim_; }, parts);
    cut(p, parts, behavior_, emit);
  }

 private:
  bool (*pred_)(uint32_t) = nullptr;
  char32_t delim_ = 0;
  Behavior behavior_;
};

// Whitespace: \w+|[^\w\s]+, the rest removed.
class WhitespacePre final : public PreTokenizer {
 public:
  void split(NormText& p, const Emit& emit) const override {
    std::vector<std::pair<size_t, size_t>> m;
    std::vector<Part> parts;
    const std::u32string& s = p.chars;
    for (size_t i = 0; i < s.size();) {
      if (is_word_char(s[i])) {
        size_t j = i;
        while (j < s.size() && is_word_char(s[j])) ++j;
        m.push_back({i, j});
        i = j;
      } else if (!unicode::is_white_space(s[i])) {
        size_t j = i;
        while (j < s.size() && !is_word_char(s[j]) && !unicode::is_white_space(s[j])) ++j;
        m.push_back({i, j});
        i = j;
      } else {
        ++i;
      }
    }
    parts_from_matches(s.size(), m, /*invert=*/true, parts);
    cut(p, parts, Behavior::kRemoved, emit);
  }
};

enum class Prepend { kAlways, kFirst, kNever };

class MetaspacePre final : public PreTokenizer {
 public:
  MetaspacePre(char32_t replacement, Prepend prepend, bool split_words)
      : rep_(replacement), prepend_(prepend), split_(split_words) {}
  void split(NormText& p, const Emit& emit) const override {
    std::vector<Part> parts;
    for (char32_t& c : p.chars)
      if (c == ' ') c = rep_;
    bool prepend = prepend_ == Prepend::kAlways || (prepend_ == Prepend::kFirst && p.orig_start == 0);
    if (prepend && !p.chars.empty() && p.chars[0] != rep_) {
      p.chars.insert(p.chars.begin(), rep_);
      p.align.insert(p.align.begin(), p.align[0]);
    }
    if (!split_) {
      if (!p.chars.empty()) emit(std::move(p));
      return;
    }
    parts_from_chars(p.chars, [this](uint32_t c) { return c == rep_; }, parts);
    cut(p, parts, Behavior::kMergedWithNext, emit);
  }

 private:
  char32_t rep_;
  Prepend prepend_;
  bool split_;
};

// GPT-2's pattern 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// as a scanner: the matches cover the whole text.
enum Kind : uint8_t { kLetter, kNumber, kSpaceK, kOtherK };
inline Kind kind_of(char32_t c) {
  if (c < 0x80) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) return kLetter;
    if (c >= '0' && c <= '9') return kNumber;
    if (c == ' ' || (c >= 9 && c <= 13)) return kSpaceK;
    return kOtherK;
  }
  if (unicode::is_white_space(c)) return kSpaceK;
  unicode::GeneralCategory g = unicode::general_category(c);
  if (g >= unicode::kLu && g <= unicode::kLo) return kLetter;
  if (g >= unicode::kNd && g <= unicode::kNo) return kNumber;
  return kOtherK;
}

void gpt2_matches(const std::u32string& s, std::vector<std::pair<size_t, size_t>>& out) {
  size_t n = s.size();
  std::vector<Kind> k(n);
  for (size_t i = 0; i < n; ++i) k[i] = kind_of(s[i]);
  size_t i = 0;
  while (i < n) {
    char32_t c = s[i];
    if (c == '\'' && i + 1 < n) {
      char32_t d = s[i + 1];
      if (d == 's' || d == 't' || d == 'm' || d == 'd') {
        out.push_back({i, i + 2});
        i += 2;
        continue;
      }
      if (i + 2 < n && ((d == 'r' && s[i + 2] == 'e') || (d == 'v' && s[i + 2] == 'e') || (d == 'l' && s[i + 2] == 'l'))) {
        out.push_back({i, i + 3});
        i += 3;
        continue;
      }
    }
    size_t j = (c == ' ' && i + 1 < n) ? i + 1 : i;
    Kind kj = k[j];
    if (kj != kSpaceK) {
      size_t e = j;
      while (e < n && k[e] == kj) ++e;
      out.push_back({i, e});
      i = e;
      continue;
    }
    size_t e = i;
    while (e < n && k[e] == kSpaceK) ++e;
    if (e < n && e - i >= 2) --e;  // \s+(?!\S) leaves the last space to the word after it
    out.push_back({i, e});
    i = e;
  }
}

class ByteLevelPre final : public PreTokenizer {
 public:
  ByteLevelPre(bool add_prefix_space, bool use_regex) : prefix_(add_prefix_space), regex_(use_regex) {}
  void split(NormText& p, const Emit& emit) const override {
    if (prefix_ && !p.chars.empty() && p.chars[0] != ' ') {
      p.chars.insert(p.chars.begin(), U' ');
      p.align.insert(p.align.begin(), p.align[0]);
    }
    auto bytes = [&](NormText&& w) {
      to_bytes(w);
      emit(std::move(w));
    };
    if (regex_) {
      std::vector<std::pair<size_t, size_t>> m;
      std::vector<Part> parts;
      gpt2_matches(p.chars, m);
      parts_from_matches(p.chars.size(), m, false, parts);
      cut(p, parts, Behavior::kIsolated, bytes);
    } else if (!p.chars.empty()) {
      bytes(std::move(p));
    }
  }

 private:
  static void to_bytes(NormText& t) {
    bool ascii = true;
    for (char32_t c : t.chars) ascii = ascii && c < 0x80;
    if (ascii) {
      for (char32_t& c : t.chars) c = byte_to_char(static_cast<uint8_t>(c));
      return;
    }
    NormText out;
    out.orig_start = t.orig_start;
    std::string utf8;
    for (size_t i = 0; i < t.chars.size(); ++i) {
      utf8.clear();
      append_utf8(t.chars[i], utf8);
      for (unsigned char b : utf8) {
        out.chars.push_back(byte_to_char(b));
        out.align.push_back(t.align[i]);
      }
    }
    t.chars.swap(out.chars);
    t.align.swap(out.align);
  }
  bool prefix_, regex_;
};

class SplitPre final : public PreTokenizer {
 public:
  SplitPre(std::u32string literal, std::optional<Regex> regex, Behavior behavior, bool invert)
      : literal_(std::move(literal)), regex_(std::move(regex)), behavior_(behavior), invert_(invert) {}
  void split(NormText& p, const Emit& emit) const override {
    std::vector<std::pair<size_t, size_t>> m;
    std::vector<Part> parts;
    if (regex_) {
      regex_->find_all(p.chars, m);
    } else if (!literal_.empty()) {
      for (size_t pos = p.chars.find(literal_); pos != std::u32string::npos; pos = p.chars.find(literal_, pos + literal_.size()))
        m.push_back({pos, pos + literal_.size()});
    }
    parts_from_matches(p.chars.size(), m, invert_, parts);
    cut(p, parts, behavior_, emit);
  }

 private:
  std::u32string literal_;
  std::optional<Regex> regex_;
  Behavior behavior_;
  bool invert_;
};

class SequencePre final : public PreTokenizer {
 public:
  explicit SequencePre(std::vector<std::unique_ptr<PreTokenizer>> parts) : parts_(std::move(parts)) {}
  void split(NormText& piece, const Emit& emit) const override { split_from(0, piece, emit); }

 private:
  // Part k's words of `piece` through parts k+1... (word by word) to `emit`.
  void split_from(size_t k, NormText& piece, const Emit& emit) const {
    if (k == parts_.size()) {
      if (!piece.chars.empty()) emit(std::move(piece));
      return;
    }
    parts_[k]->split(piece, [&](NormText&& word) { split_from(k + 1, word, emit); });
  }

  std::vector<std::unique_ptr<PreTokenizer>> parts_;
};

bool is_numeric(uint32_t c) { return unicode::is_number(c); }
bool is_white_space_fn(uint32_t c) { return unicode::is_white_space(c); }

}  // namespace

std::unique_ptr<PreTokenizer> make_bert_pre_tokenizer() { return std::make_unique<BertPre>(); }

Result<std::unique_ptr<PreTokenizer>> make_pre_tokenizer(const json& j, size_t depth) {
  DLRT_RETURN_IF_ERROR(check_component_depth("pre_tokenizer", depth));
  std::string type = jsonu::get_string(j, "type", "");
  if (type == "BertPreTokenizer") return make_bert_pre_tokenizer();
  if (type == "Whitespace") return std::unique_ptr<PreTokenizer>(new WhitespacePre());
  if (type == "WhitespaceSplit") return std::unique_ptr<PreTokenizer>(new CharSplitPre(is_white_space_fn, Behavior::kRemoved));
  if (type == "Punctuation") {
    DLRT_ASSIGN_OR_RETURN(Behavior b, parse_behavior(j, "Punctuation", Behavior::kIsolated));
    return std::unique_ptr<PreTokenizer>(new CharSplitPre(bert_punctuation, b));
  }
  if (type == "Digits") {
    bool individual = jsonu::get_bool(j, "individual_digits", false);
    return std::unique_ptr<PreTokenizer>(new CharSplitPre(is_numeric, individual ? Behavior::kIsolated : Behavior::kContiguous));
  }
  if (type == "CharDelimiterSplit") {
    std::u32string d = utf8_to_u32(jsonu::get_string(j, "delimiter", ""));
    if (d.size() != 1) return InvalidModel("pre_tokenizer CharDelimiterSplit needs a one-character delimiter");
    return std::unique_ptr<PreTokenizer>(new CharSplitPre(d[0], Behavior::kRemoved));
  }
  if (type == "Metaspace") {
    std::u32string rep = utf8_to_u32(jsonu::get_string(j, "replacement", "\xE2\x96\x81"));
    if (rep.size() != 1) return InvalidModel("pre_tokenizer Metaspace needs a one-character replacement");
    Prepend prepend = Prepend::kAlways;
    if (const json* s = jsonu::member(j, "prepend_scheme"); s && s->is_string()) {
      std::string v = s->get<std::string>();
      if (v == "always") prepend = Prepend::kAlways;
      else if (v == "first") prepend = Prepend::kFirst;
      else if (v == "never") prepend = Prepend::kNever;
      else return Unsupported("pre_tokenizer Metaspace: prepend_scheme \"" + v + "\" is not supported");
    }
    if (const json* a = jsonu::member(j, "add_prefix_space"); a && a->is_boolean() && !a->get<bool>()) prepend = Prepend::kNever;
    return std::unique_ptr<PreTokenizer>(new MetaspacePre(rep[0], prepend, jsonu::get_bool(j, "split", true)));
  }
  if (type == "ByteLevel")
    return std::unique_ptr<PreTokenizer>(new ByteLevelPre(jsonu::get_bool(j, "add_prefix_space", true), jsonu::get_bool(j, "use_regex", true)));
  if (type == "Split") {
    DLRT_ASSIGN_OR_RETURN(Behavior b, parse_behavior(j, "Split", Behavior::kIsolated));
    bool invert = jsonu::get_bool(j, "invert", false);
    const json* pattern = jsonu::member(j, "pattern");
    if (pattern && pattern->is_object()) {
      if (const json* s = jsonu::member(*pattern, "String"); s && s->is_string())
        return std::unique_ptr<PreTokenizer>(new SplitPre(utf8_to_u32(s->get<std::string>()), std::nullopt, b, invert));
      if (const json* r = jsonu::member(*pattern, "Regex"); r && r->is_string()) {
        auto re = Regex::compile(r->get<std::string>());
        if (!re.ok()) return re.status().with_context("pre_tokenizer Split");
        return std::unique_ptr<PreTokenizer>(new SplitPre({}, std::move(re).value(), b, invert));
      }
    }
    return InvalidModel("pre_tokenizer Split needs a pattern {\"String\": ...} or {\"Regex\": ...}");
  }
  if (type == "Sequence") {
    const json* list = jsonu::member(j, "pretokenizers");
    if (!list || !list->is_array()) return InvalidModel("pre_tokenizer Sequence has no \"pretokenizers\" list");
    std::vector<std::unique_ptr<PreTokenizer>> parts;
    for (const json& p : *list) {
      DLRT_ASSIGN_OR_RETURN(auto part, make_pre_tokenizer(p, depth + 1));
      parts.push_back(std::move(part));
    }
    return std::unique_ptr<PreTokenizer>(new SequencePre(std::move(parts)));
  }
  return Unsupported("pre_tokenizer \"" + type +
                     "\" is not supported (BertPreTokenizer, Whitespace, WhitespaceSplit, Metaspace, ByteLevel, Split, "
                     "Punctuation, Digits, CharDelimiterSplit, Sequence)");
}

}  // namespace dlrt::embed::tok
