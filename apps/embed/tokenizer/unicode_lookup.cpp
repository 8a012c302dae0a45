// Lookups over the generated tables in unicode_tables.cpp.
#include <algorithm>
#include <utility>

#include "embed/tokenizer/unicode_tables.h"

namespace dlrt::embed::unicode {
namespace {

const ClassRange* find_range(const ClassRange* table, size_t count, uint32_t cp) {
  const ClassRange* end = table + count;
  const ClassRange* it =
      std::upper_bound(table, end, cp, [](uint32_t v, const ClassRange& r) { return v < r.first; });
  if (it == table) return nullptr;
  --it;
  return cp <= it->last ? it : nullptr;
}

constexpr uint32_t kHangulS = 0xAC00, kHangulL = 0x1100, kHangulV = 0x1161, kHangulT = 0x11A7;
constexpr uint32_t kHangulVCount = 21, kHangulTCount = 28, kHangulN = kHangulVCount * kHangulTCount,
                   kHangulSCount = 11172;

}  // namespace

CharClass char_class(uint32_t cp) {
  const ClassRange* r = find_range(kClassRanges, kClassRangeCount, cp);
  return r ? static_cast<CharClass>(r->value) : kNone;
}

uint8_t combining_class(uint32_t cp) {
  const ClassRange* r = find_range(kCombiningRanges, kCombiningRangeCount, cp);
  return r ? r->value : 0;
}

int to_lower(uint32_t cp, uint32_t out[3]) {
  if (cp < 0x80) {
    out[0] = (cp >= 'A' && cp <= 'Z') ? cp + 32 : cp;
    return 1;
  }
  const CaseMapping* end = kLowerCase + kLowerCaseCount;
  const CaseMapping* it =
      std::lower_bound(kLowerCase, end, cp, [](const CaseMapping& m, uint32_t v) { return m.cp < v; });
  if (it == end || it->cp != cp) {
    out[0] = cp;
    return 1;
  }
  int n = 0;
  for (int i = 0; i < 3 && it->to[i] != 0; ++i) out[n++] = it->to[i];
  return n;
}

int decompose(uint32_t cp, uint32_t out[4]) {
  if (cp < 0xC0) {
    out[0] = cp;
    return 1;
  }
  if (cp >= kHangulS && cp < kHangulS + kHangulSCount) {
    uint32_t s = cp - kHangulS;
    out[0] = kHangulL + s / kHangulN;
    out[1] = kHangulV + (s % kHangulN) / kHangulTCount;
    uint32_t t = s % kHangulTCount;
    if (t == 0) return 2;
    out[2] = kHangulT + t;
    return 3;
  }
  const Decomposition* end = kDecompositions + kDecompositionCount;
  const Decomposition* it =
      std::lower_bound(kDecompositions, end, cp, [](const Decomposition& d, uint32_t v) { return d.cp < v; });
  if (it == end || it->cp != cp) {
    out[0] = cp;
    return 1;
  }
  for (int i = 0; i < it->length; ++i) out[i] = it->to[i];
  return it->length;
}


GeneralCategory general_category(uint32_t cp) {
  const ClassRange* r = find_range(kCategoryRanges, kCategoryRangeCount, cp);
  return r ? static_cast<GeneralCategory>(r->value) : kCn;
}

bool is_white_space(uint32_t cp) {
  if (cp < 0x80) return (cp >= 0x9 && cp <= 0xD) || cp == 0x20;
  return cp == 0x85 || cp == 0xA0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 ||
         cp == 0x2029 || cp == 0x202F || cp == 0x205F || cp == 0x3000;
}

void decompose_compat(uint32_t cp, std::u32string& out) {
  const CompatDecomposition* end = kCompatDecompositions + kCompatDecompositionCount;
  const CompatDecomposition* it = std::lower_bound(kCompatDecompositions, end, cp,
                                                   [](const CompatDecomposition& d, uint32_t v) { return d.cp < v; });
  if (it != end && it->cp == cp) {
    out.append(reinterpret_cast<const char32_t*>(kCompatPool + it->offset), it->length);
    return;
  }
  uint32_t buf[4];
  int n = decompose(cp, buf);
  for (int i = 0; i < n; ++i) out.push_back(buf[i]);
}

uint32_t compose(uint32_t first, uint32_t second) {
  // Hangul: L + V -> LV, LV + T -> LVT.
  if (first >= kHangulL && first < kHangulL + 19 && second >= kHangulV && second < kHangulV + kHangulVCount)
    return kHangulS + ((first - kHangulL) * kHangulVCount + (second - kHangulV)) * kHangulTCount;
  if (first >= kHangulS && first < kHangulS + kHangulSCount && (first - kHangulS) % kHangulTCount == 0 &&
      second > kHangulT && second < kHangulT + kHangulTCount)
    return first + (second - kHangulT);
  const Composition* end = kCompositions + kCompositionCount;
  const Composition* it = std::lower_bound(kCompositions, end, std::make_pair(first, second),
                                           [](const Composition& c, std::pair<uint32_t, uint32_t> v) {
                                             return c.first != v.first ? c.first < v.first : c.second < v.second;
                                           });
  return (it != end && it->first == first && it->second == second) ? it->composed : 0;
}

GraphemeBreak grapheme_break(uint32_t cp) {
  const ClassRange* r = find_range(kGraphemeRanges, kGraphemeRangeCount, cp);
  return r ? static_cast<GraphemeBreak>(r->value) : kGbOther;
}

}  // namespace dlrt::embed::unicode
