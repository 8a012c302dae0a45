// Normalizers of tokenizer.json (see tokenizer_parts.h): BertNormalizer, NFC,
// NFD, NFKC, NFKD, Lowercase, Strip, StripAccents, Replace, Prepend,
// Precompiled (SentencePiece's compiled character map) and Sequence; each keeps
// every output code point aligned to the input bytes it came from, as Hugging
// Face's NormalizedString does.
#include <algorithm>
#include <optional>

#include "embed/tokenizer/json_util.h"
#include "embed/tokenizer/tokenizer.h"
#include "embed/tokenizer/tokenizer_parts.h"
#include "embed/tokenizer/tokenizer_regex.h"
#include "embed/tokenizer/unicode_tables.h"

namespace dlrt::embed::tok {

// ---------------------------------------------------------------- NormText

NormText NormText::slice(size_t from, size_t to) const {
  NormText out;
  out.chars.assign(chars, from, to - from);
  out.align.assign(align.begin() + static_cast<std::ptrdiff_t>(from), align.begin() + static_cast<std::ptrdiff_t>(to));
  out.orig_start = from < to ? align[from].start : (from < align.size() ? align[from].start : orig_start);
  return out;
}

void apply_changes(NormText& t, const std::vector<Change>& changes, size_t initial_offset) {
  std::u32string chars;
  std::vector<Span> align;
  chars.reserve(changes.size());
  align.reserve(changes.size());
  size_t at = initial_offset;  // the next input code point
  for (const Change& ch : changes) {
    Span a;
    if (ch.change > 0) {
      a = at == 0 ? Span{t.orig_start, t.orig_start} : t.align[at - 1];
    } else {
      a = at < t.align.size() ? t.align[at] : (t.align.empty() ? Span{t.orig_start, t.orig_start} : t.align.back());
      at += 1 + static_cast<size_t>(-ch.change);
    }
    chars.push_back(ch.c);
    align.push_back(a);
  }
  t.chars.swap(chars);
  t.align.swap(align);
}

// ---------------------------------------------------------------- the budget

namespace {
thread_local size_t t_normalized_left = SIZE_MAX;
thread_local bool t_normalized_overflow = false;
}  // namespace

NormalizedBudget::NormalizedBudget(size_t code_points) {
  t_normalized_left = code_points;
  t_normalized_overflow = false;
}
NormalizedBudget::~NormalizedBudget() { t_normalized_left = SIZE_MAX; }

bool normalized_fits(NormText& t, size_t code_points) {
  if (code_points <= t_normalized_left) return true;
  t_normalized_overflow = true;
  t.chars.clear();
  t.align.clear();
  return false;
}

void charge_normalized(size_t code_points) {
  if (t_normalized_left != SIZE_MAX) t_normalized_left -= std::min(code_points, t_normalized_left);
}

bool take_normalized_overflow() {
  const bool was = t_normalized_overflow;
  t_normalized_overflow = false;
  return was;
}

namespace {

bool is_bert_chinese(uint32_t cp) {
  return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) || (cp >= 0x20000 && cp <= 0x2A6DF) ||
         (cp >= 0x2A700 && cp <= 0x2B73F) || (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B920 && cp <= 0x2CEAF) ||
         (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

// Keeps the code points `keep` accepts; the others go with their alignment.
template <typename Keep>
void filter(NormText& t, Keep keep) {
  size_t w = 0;
  for (size_t r = 0; r < t.chars.size(); ++r) {
    if (!keep(t.chars[r])) continue;
    t.chars[w] = t.chars[r];
    t.align[w] = t.align[r];
    ++w;
  }
  t.chars.resize(w);
  t.align.resize(w);
}

// Maps each code point to 1..n code points (the extra ones share its alignment).
template <typename Map>
void expand(NormText& t, Map map) {
  std::u32string chars;
  std::vector<Span> align;
  chars.reserve(t.chars.size() + 8);
  align.reserve(t.chars.size() + 8);
  uint32_t buf[8];
  for (size_t i = 0; i < t.chars.size(); ++i) {
    int n = map(t.chars[i], buf);
    for (int k = 0; k < n; ++k) {
      chars.push_back(buf[k]);
      align.push_back(t.align[i]);
    }
  }
  t.chars.swap(chars);
  t.align.swap(align);
}

void lowercase(NormText& t) {
  bool ascii = true;
  for (char32_t c : t.chars) {
    if (c >= 0x80) {
      ascii = false;
      break;
    }
  }
  if (ascii) {
    for (char32_t& c : t.chars)
      if (c >= 'A' && c <= 'Z') c += 32;
    return;
  }
  expand(t, [](char32_t c, uint32_t* out) { return unicode::to_lower(c, out); });
}

// Unicode normalisation forms: decomposition (canonical or compatibility),
// canonical ordering, and for NFC/NFKC canonical composition; a composed code
// point keeps its starter's alignment.
void unicode_normalize(NormText& t, bool compat, bool compose) {
  bool ascii = true;
  for (char32_t c : t.chars) {
    if (c >= 0x80) {
      ascii = false;
      break;
    }
  }
  if (ascii) return;
  std::u32string chars;
  std::vector<Span> align;
  chars.reserve(t.chars.size() + 8);
  align.reserve(t.chars.size() + 8);
  std::u32string tmp;
  uint32_t buf[4];
  for (size_t i = 0; i < t.chars.size(); ++i) {
    char32_t c = t.chars[i];
    if (c < 0xA0) {
      chars.push_back(c);
      align.push_back(t.align[i]);
      continue;
    }
    tmp.clear();
    if (compat) {
      unicode::decompose_compat(c, tmp);
    } else {
      int n = unicode::decompose(c, buf);
      tmp.append(reinterpret_cast<const char32_t*>(buf), static_cast<size_t>(n));
    }
    for (char32_t d : tmp) {
      chars.push_back(d);
      align.push_back(t.align[i]);
    }
  }
  // Canonical ordering: a stable sort of each run of non-starters by combining class.
  for (size_t i = 0; i < chars.size();) {
    if (unicode::combining_class(chars[i]) == 0) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < chars.size() && unicode::combining_class(chars[j]) != 0) ++j;
    if (j - i > 1) {
      std::vector<size_t> order(j - i);
      for (size_t k = 0; k < order.size(); ++k) order[k] = i + k;
      std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        return unicode::combining_class(chars[a]) < unicode::combining_class(chars[b]);
      });
      std::u32string c2;
      std::vector<Span> a2;
      for (size_t k : order) c2.push_back(chars[k]), a2.push_back(align[k]);
      std::copy(c2.begin(), c2.end(), chars.begin() + static_cast<std::ptrdiff_t>(i));
      std::copy(a2.begin(), a2.end(), align.begin() + static_cast<std::ptrdiff_t>(i));
    }
    i = j;
  }
  if (compose) {
    size_t w = 0;
    long starter = -1;
    for (size_t r = 0; r < chars.size(); ++r) {
      char32_t c = chars[r];
      uint8_t cc = unicode::combining_class(c);
      if (starter >= 0) {
        bool adjacent = static_cast<long>(w) - 1 == starter;
        uint8_t last = adjacent ? 0 : unicode::combining_class(chars[w - 1]);
        bool blocked = !adjacent && (last == 0 || last >= cc);
        if (!blocked) {
          uint32_t comp = unicode::compose(chars[static_cast<size_t>(starter)], c);
          if (comp != 0) {
            chars[static_cast<size_t>(starter)] = comp;
            continue;
          }
        }
      }
      if (cc == 0) starter = static_cast<long>(w);
      chars[w] = c;
      align[w] = align[r];
      ++w;
    }
    chars.resize(w);
    align.resize(w);
  }
  t.chars.swap(chars);
  t.align.swap(align);
}

// Replaces each match of `pattern` (a literal or a regex) with `content`; the
// new code points take the alignment of the last one they replace.
class ReplaceNormalizer final : public Normalizer {
 public:
  ReplaceNormalizer(std::u32string literal, std::optional<Regex> regex, std::u32string content)
      : literal_(std::move(literal)), regex_(std::move(regex)), content_(std::move(content)) {}
  void normalize(NormText& t) const override {
    std::vector<std::pair<size_t, size_t>> matches;
    if (regex_) {
      regex_->find_all(t.chars, matches);
    } else if (!literal_.empty()) {
      for (size_t pos = t.chars.find(literal_); pos != std::u32string::npos; pos = t.chars.find(literal_, pos + literal_.size()))
        matches.push_back({pos, pos + literal_.size()});
    }
    if (matches.empty()) return;
    size_t removed = 0;
    for (const auto& [b, e] : matches) removed += e - b;
    // At most one match per code point and content_ is from the file: no overflow.
    if (!normalized_fits(t, t.chars.size() - removed + matches.size() * content_.size())) return;
    NormText out;
    out.orig_start = t.orig_start;
    size_t last = 0;
    for (const auto& [b, e] : matches) {
      out.chars.append(t.chars, last, b - last);
      out.align.insert(out.align.end(), t.align.begin() + static_cast<std::ptrdiff_t>(last), t.align.begin() + static_cast<std::ptrdiff_t>(b));
      Span a = e > 0 ? t.align[e - 1] : Span{t.orig_start, t.orig_start};
      out.chars.append(content_);
      out.align.insert(out.align.end(), content_.size(), a);
      last = e;
    }
    out.chars.append(t.chars, last, std::u32string::npos);
    out.align.insert(out.align.end(), t.align.begin() + static_cast<std::ptrdiff_t>(last), t.align.end());
    t.chars.swap(out.chars);
    t.align.swap(out.align);
  }

 private:
  std::u32string literal_;
  std::optional<Regex> regex_;
  std::u32string content_;
};

class BertNormalizer final : public Normalizer {
 public:
  explicit BertNormalizer(const BertNormalizerOptions& o) : o_(o) {}
  void normalize(NormText& t) const override {
    if (o_.clean_text) {
      filter(t, [](char32_t c) {
        return c != 0 && c != 0xFFFD && unicode::char_class(c) != unicode::kOther;
      });
      for (char32_t& c : t.chars)
        if (unicode::char_class(c) == unicode::kSpace) c = ' ';
    }
    if (o_.handle_chinese_chars) {
      bool any = false;
      for (char32_t c : t.chars) any = any || is_bert_chinese(c);
      if (any) {
        std::vector<Change> changes;
        changes.reserve(t.chars.size() + 16);
        for (char32_t c : t.chars) {
          if (is_bert_chinese(c)) {
            changes.push_back({' ', 0});
            changes.push_back({c, 1});
            changes.push_back({' ', 1});
          } else {
            changes.push_back({c, 0});
          }
        }
        // The space before takes the character's own alignment, as in Hugging Face.
        NormText copy = t;
        apply_changes(copy, changes);
        t = std::move(copy);
      }
    }
    bool strip = o_.strip_accents < 0 ? o_.lowercase : o_.strip_accents != 0;
    if (strip) {
      unicode_normalize(t, false, false);
      filter(t, [](char32_t c) { return c < 0x300 || unicode::char_class(c) != unicode::kMn; });
    }
    if (o_.lowercase) lowercase(t);
  }

 private:
  BertNormalizerOptions o_;
};

class FnNormalizer final : public Normalizer {
 public:
  explicit FnNormalizer(void (*fn)(NormText&)) : fn_(fn) {}
  void normalize(NormText& t) const override { fn_(t); }

 private:
  void (*fn_)(NormText&);
};

class StripNormalizer final : public Normalizer {
 public:
  StripNormalizer(bool left, bool right) : left_(left), right_(right) {}
  void normalize(NormText& t) const override {
    size_t b = 0, e = t.chars.size();
    if (left_)
      while (b < e && unicode::is_white_space(t.chars[b])) ++b;
    if (right_)
      while (e > b && unicode::is_white_space(t.chars[e - 1])) --e;
    if (b == 0 && e == t.chars.size()) return;
    uint32_t orig = t.orig_start;
    t = t.slice(b, e);
    t.orig_start = orig;
  }

 private:
  bool left_, right_;
};

class PrependNormalizer final : public Normalizer {
 public:
  explicit PrependNormalizer(std::u32string s) : s_(std::move(s)) {}
  void normalize(NormText& t) const override {
    if (t.chars.empty() || !normalized_fits(t, t.chars.size() + s_.size())) return;
    t.chars.insert(0, s_);
    t.align.insert(t.align.begin(), s_.size(), t.align[0]);
  }

 private:
  std::u32string s_;
};

class SequenceNormalizer final : public Normalizer {
 public:
  explicit SequenceNormalizer(std::vector<std::unique_ptr<Normalizer>> parts) : parts_(std::move(parts)) {}
  void normalize(NormText& t) const override {
    // Each part may grow the text by a bounded factor at most (Replace and
    // Precompiled check themselves as they grow it); checked after each.
    for (const auto& p : parts_) {
      p->normalize(t);
      if (!normalized_fits(t, t.chars.size())) return;
    }
  }

 private:
  std::vector<std::unique_ptr<Normalizer>> parts_;
};

}  // namespace

std::unique_ptr<Normalizer> make_bert_normalizer(const BertNormalizerOptions& options) {
  return std::make_unique<BertNormalizer>(options);
}

Result<std::unique_ptr<Normalizer>> make_normalizer(const json& j, size_t depth) {
  DLRT_RETURN_IF_ERROR(check_component_depth("normalizer", depth));
  std::string type = jsonu::get_string(j, "type", "");
  if (type == "BertNormalizer") {
    BertNormalizerOptions o;
    o.clean_text = jsonu::get_bool(j, "clean_text", true);
    o.handle_chinese_chars = jsonu::get_bool(j, "handle_chinese_chars", true);
    o.lowercase = jsonu::get_bool(j, "lowercase", true);
    if (const json* sa = jsonu::member(j, "strip_accents"); sa && sa->is_boolean()) o.strip_accents = sa->get<bool>() ? 1 : 0;
    return make_bert_normalizer(o);
  }
  if (type == "NFC") return std::unique_ptr<Normalizer>(new FnNormalizer([](NormText& t) { unicode_normalize(t, false, true); }));
  if (type == "NFD") return std::unique_ptr<Normalizer>(new FnNormalizer([](NormText& t) { unicode_normalize(t, false, false); }));
  if (type == "NFKC") return std::unique_ptr<Normalizer>(new FnNormalizer([](NormText& t) { unicode_normalize(t, true, true); }));
  if (type == "NFKD") return std::unique_ptr<Normalizer>(new FnNormalizer([](NormText& t) { unicode_normalize(t, true, false); }));
  if (type == "Lowercase") return std::unique_ptr<Normalizer>(new FnNormalizer(lowercase));
  if (type == "StripAccents")
    return std::unique_ptr<Normalizer>(new FnNormalizer([](NormText& t) { filter(t, [](char32_t c) { return !unicode::is_mark(c); }); }));
  if (type == "Strip")
    return std::unique_ptr<Normalizer>(new StripNormalizer(jsonu::get_bool(j, "strip_left", true), jsonu::get_bool(j, "strip_right", true)));
  if (type == "Prepend") return std::unique_ptr<Normalizer>(new PrependNormalizer(utf8_to_u32(jsonu::get_string(j, "prepend", ""))));
  if (type == "Replace") {
    const json* pattern = jsonu::member(j, "pattern");
    std::u32string content = utf8_to_u32(jsonu::get_string(j, "content", ""));
    if (pattern && pattern->is_object()) {
      if (const json* s = jsonu::member(*pattern, "String"); s && s->is_string())
        return std::unique_ptr<Normalizer>(new ReplaceNormalizer(utf8_to_u32(s->get<std::string>()), std::nullopt, content));
      if (const json* r = jsonu::member(*pattern, "Regex"); r && r->is_string()) {
        auto re = Regex::compile(r->get<std::string>());
        if (!re.ok()) return re.status().with_context("normalizer Replace");
        return std::unique_ptr<Normalizer>(new ReplaceNormalizer({}, std::move(re).value(), content));
      }
    }
    return InvalidModel("normalizer Replace needs a pattern {\"String\": ...} or {\"Regex\": ...}");
  }
  if (type == "Precompiled") {
    const json* map = jsonu::member(j, "precompiled_charsmap");
    if (map && map->is_null()) return std::unique_ptr<Normalizer>(new FnNormalizer([](NormText&) {}));
    if (!map || !map->is_string()) return InvalidModel("normalizer Precompiled has no precompiled_charsmap");
    return make_precompiled_normalizer(map->get<std::string>());
  }
  if (type == "Sequence") {
    const json* list = jsonu::member(j, "normalizers");
    if (!list || !list->is_array()) return InvalidModel("normalizer Sequence has no \"normalizers\" list");
    std::vector<std::unique_ptr<Normalizer>> parts;
    for (const json& n : *list) {
      DLRT_ASSIGN_OR_RETURN(auto p, make_normalizer(n, depth + 1));
      parts.push_back(std::move(p));
    }
    return std::unique_ptr<Normalizer>(new SequenceNormalizer(std::move(parts)));
  }
  return Unsupported("normalizer \"" + type +
                     "\" is not supported (BertNormalizer, NFC, NFD, NFKC, NFKD, Lowercase, Strip, StripAccents, "
                     "Replace, Prepend, Precompiled, Sequence)");
}

}  // namespace dlrt::embed::tok
