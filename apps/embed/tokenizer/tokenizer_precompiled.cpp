// The Precompiled normalizer: SentencePiece's compiled character map, as
// tokenizer.json carries it (XLM-RoBERTa, multilingual-e5, bge-m3, ...):
// base64 of [u32 trie size in bytes][double-array trie of u32 units][NUL-
// terminated replacement strings]. The text is walked by extended grapheme
// cluster (UAX #29): a cluster of under 6 UTF-8 bytes is looked up whole, else
// (or when it has no entry) each code point is; a lookup takes the shortest
// key of the trie that prefixes the chunk, and its value indexes the
// replacement strings.
#include <string>
#include <vector>

#include "embed/tokenizer/tokenizer.h"
#include "embed/tokenizer/tokenizer_parts.h"
#include "embed/tokenizer/unicode_tables.h"

namespace dlrt::embed::tok {

namespace {

Result<std::string> base64_decode(const std::string& in) {
  std::string out;
  out.reserve(in.size() * 3 / 4);
  uint32_t acc = 0;
  int bits = 0;
  for (char ch : in) {
    int v;
    if (ch >= 'A' && ch <= 'Z') v = ch - 'A';
    else if (ch >= 'a' && ch <= 'z') v = ch - 'a' + 26;
    else if (ch >= '0' && ch <= '9') v = ch - '0' + 52;
    else if (ch == '+') v = 62;
    else if (ch == '/') v = 63;
    else if (ch == '=') break;
    else return InvalidModel("Precompiled: precompiled_charsmap is not base64");
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xFF));
    }
  }
  return out;
}

// Extended grapheme cluster boundaries (UAX #29 rules GB3-GB13).
bool grapheme_break_between(unicode::GraphemeBreak a, unicode::GraphemeBreak b, bool ext_pict_zwj, size_t ri_run) {
  using namespace unicode;
  if (a == kGbCR && b == kGbLF) return false;
  if (a == kGbControl || a == kGbCR || a == kGbLF || b == kGbControl || b == kGbCR || b == kGbLF) return true;
  if (a == kGbL && (b == kGbL || b == kGbV || b == kGbLV || b == kGbLVT)) return false;
  if ((a == kGbLV || a == kGbV) && (b == kGbV || b == kGbT)) return false;
  if ((a == kGbLVT || a == kGbT) && b == kGbT) return false;
  if (b == kGbExtend || b == kGbZWJ || b == kGbSpacingMark) return false;
  if (a == kGbPrepend) return false;
  if (a == kGbZWJ && b == kGbExtPict && ext_pict_zwj) return false;
  if (a == kGbRegionalIndicator && b == kGbRegionalIndicator) return ri_run % 2 == 0;
  return true;
}

class PrecompiledNormalizer final : public Normalizer {
 public:
  PrecompiledNormalizer(std::vector<uint32_t> trie, std::string strings)
      : trie_(std::move(trie)), strings_(std::move(strings)) {}

  void normalize(NormText& t) const override {
    const std::u32string& s = t.chars;
    std::vector<Change> changes;
    changes.reserve(s.size() + 8);
    bool modified = false;
    std::string chunk;
    std::u32string repl;
    size_t i = 0, n = s.size();
    // State for GB11 (ExtPict Extend* ZWJ x ExtPict) and GB12/13 (regional indicator pairs).
    bool in_pict = false;
    size_t ri_run = 0;
    while (i < n) {
      // One grapheme cluster [i, j).
      size_t j = i + 1;
      unicode::GraphemeBreak prev = unicode::grapheme_break(s[i]);
      in_pict = prev == unicode::kGbExtPict;
      ri_run = prev == unicode::kGbRegionalIndicator ? 1 : 0;
      while (j < n) {
        unicode::GraphemeBreak cur = unicode::grapheme_break(s[j]);
        if (grapheme_break_between(prev, cur, in_pict, ri_run)) break;
        if (cur == unicode::kGbExtPict) in_pict = true;
        else if (cur != unicode::kGbExtend && cur != unicode::kGbZWJ) in_pict = false;
        ri_run = cur == unicode::kGbRegionalIndicator ? ri_run + 1 : 0;
        prev = cur;
        ++j;
      }
      chunk.clear();
      for (size_t k = i; k < j; ++k) append_utf8(s[k], chunk);
      if (chunk.size() < 6 && lookup(chunk, repl)) {
        modified = true;
        replace(changes, j - i, repl);
      } else {
        for (size_t k = i; k < j; ++k) {
          chunk.clear();
          append_utf8(s[k], chunk);
          if (lookup(chunk, repl)) {
            modified = true;
            replace(changes, 1, repl);
          } else {
            changes.push_back({s[k], 0});
          }
        }
      }
      i = j;
      // A replacement may be long (it is the file's): bounded as it grows.
      if (!normalized_fits(t, changes.size())) return;
    }
    if (modified) apply_changes(t, changes);
  }

 private:
  // Hugging Face's replace(): new code points replace old ones in order; extra
  // ones are insertions, missing ones are removals charged to the last.
  static void replace(std::vector<Change>& changes, size_t old_count, const std::u32string& repl) {
    long diff = static_cast<long>(repl.size()) - static_cast<long>(old_count);
    for (char32_t c : repl) changes.push_back({c, 0});
    if (diff > 0) {
      for (size_t k = 0; k < static_cast<size_t>(diff); ++k) changes[changes.size() - 1 - k].change = 1;
    } else if (diff < 0 && !changes.empty()) {
      changes.back().change += static_cast<int32_t>(diff);
    }
  }

  // The shortest trie key prefixing `key`, its replacement in `out`.
  bool lookup(const std::string& key, std::u32string& out) const {
    size_t size = trie_.size();
    if (size == 0) return false;
    size_t pos = 0;
    uint32_t unit = trie_[0];
    pos ^= offset(unit);
    for (unsigned char c : key) {
      if (c == 0) break;
      pos ^= c;
      if (pos >= size) return false;
      unit = trie_[pos];
      if ((unit & ((1u << 31) | 0xFF)) != c) return false;
      pos ^= offset(unit);
      if (pos >= size) return false;
      if ((unit >> 8) & 1) {
        size_t index = trie_[pos] & ((1u << 31) - 1);
        if (index >= strings_.size()) return false;
        size_t end = strings_.find('\0', index);
        out = utf8_to_u32(std::string_view(strings_).substr(index, end == std::string::npos ? std::string::npos : end - index));
        return true;
      }
    }
    return false;
  }
  static size_t offset(uint32_t unit) { return (unit >> 10) << ((unit & (1u << 9)) >> 6); }

  std::vector<uint32_t> trie_;
  std::string strings_;
};

}  // namespace

Result<std::unique_ptr<Normalizer>> make_precompiled_normalizer(const std::string& base64) {
  DLRT_ASSIGN_OR_RETURN(std::string blob, base64_decode(base64));
  if (blob.size() < 4) return InvalidModel("Precompiled: the charsmap is too short");
  const std::vector<unsigned char> bytes(blob.begin(), blob.end());
  auto u32_at = [&bytes](size_t at) {
    return static_cast<uint32_t>(bytes[at]) | static_cast<uint32_t>(bytes[at + 1]) << 8 |
           static_cast<uint32_t>(bytes[at + 2]) << 16 | static_cast<uint32_t>(bytes[at + 3]) << 24;
  };
  size_t trie_bytes = u32_at(0);
  if (trie_bytes % 4 != 0 || trie_bytes > blob.size() - 4)
    return InvalidModel("Precompiled: the charsmap's trie size " + std::to_string(trie_bytes) + " does not fit its " +
                        std::to_string(blob.size()) + " bytes");
  std::vector<uint32_t> trie(trie_bytes / 4);
  for (size_t k = 0; k < trie.size(); ++k) trie[k] = u32_at(4 + 4 * k);
  std::string strings = blob.substr(4 + trie_bytes);
  return std::unique_ptr<Normalizer>(new PrecompiledNormalizer(std::move(trie), std::move(strings)));
}

}  // namespace dlrt::embed::tok
