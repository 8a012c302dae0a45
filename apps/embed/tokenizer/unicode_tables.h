// Unicode data for the tokenizers, generated into unicode_tables.cpp by
// gen_unicode_tables.py (Python's unicodedata, Debian's unicode-data for the
// grapheme breaks), plus lookups over it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace dlrt::embed::unicode {

// Character classes the BERT tokenizer needs.
enum CharClass : uint8_t {
  kNone = 0,
  kOther = 1,   // general category Cc, Cf, Cn, Co or Cs (BERT "control", removed)
  kPunct = 2,   // general category P*
  kMn = 3,      // nonspacing mark (dropped when stripping accents)
  kSpace = 4,   // White_Space property (Rust char::is_whitespace)
};

struct ClassRange {
  uint32_t first, last;
  uint8_t value;
};
struct CaseMapping {
  uint32_t cp;
  uint32_t to[3];  // 0-terminated when shorter
};
struct Decomposition {
  uint32_t cp;
  uint8_t length;
  uint32_t to[4];
};

struct CompatDecomposition {
  uint32_t cp;
  uint32_t offset;  // into kCompatPool
  uint32_t length;
};
struct Composition {
  uint32_t first, second, composed;
};

// General categories (value of kCategoryRanges; kCn for unassigned).
enum GeneralCategory : uint8_t {
  kCn, kLu, kLl, kLt, kLm, kLo, kMnCat, kMc, kMe, kNd, kNl, kNo, kPc, kPd, kPs, kPe, kPi,
  kPf, kPo, kSm, kSc, kSk, kSo, kZs, kZl, kZp, kCc, kCf, kCs, kCo
};
// Grapheme_Cluster_Break values (Extended_Pictographic folded in as its own value).
enum GraphemeBreak : uint8_t {
  kGbOther, kGbCR, kGbLF, kGbControl, kGbExtend, kGbZWJ, kGbRegionalIndicator, kGbPrepend, kGbSpacingMark,
  kGbL, kGbV, kGbT, kGbLV, kGbLVT, kGbExtPict
};

extern const char* const kUnicodeVersion;
extern const ClassRange kClassRanges[];
extern const size_t kClassRangeCount;
extern const CaseMapping kLowerCase[];
extern const size_t kLowerCaseCount;
extern const Decomposition kDecompositions[];
extern const size_t kDecompositionCount;
extern const ClassRange kCombiningRanges[];
extern const size_t kCombiningRangeCount;
extern const ClassRange kCategoryRanges[];
extern const size_t kCategoryRangeCount;
extern const uint32_t kCompatPool[];
extern const CompatDecomposition kCompatDecompositions[];
extern const size_t kCompatDecompositionCount;
extern const Composition kCompositions[];
extern const size_t kCompositionCount;
extern const ClassRange kGraphemeRanges[];
extern const size_t kGraphemeRangeCount;

CharClass char_class(uint32_t cp);
// Canonical combining class (0 for starters).
uint8_t combining_class(uint32_t cp);
// Appends the full lower-case mapping of cp (1 to 3 code points) to out; returns the count.
int to_lower(uint32_t cp, uint32_t out[3]);
// Appends the full canonical decomposition of cp (Hangul included) to out; returns the count (<= 4).
int decompose(uint32_t cp, uint32_t out[4]);
GeneralCategory general_category(uint32_t cp);
inline bool is_letter(uint32_t cp) {
  GeneralCategory c = general_category(cp);
  return c >= kLu && c <= kLo;
}
inline bool is_number(uint32_t cp) {
  GeneralCategory c = general_category(cp);
  return c >= kNd && c <= kNo;
}
inline bool is_mark(uint32_t cp) {
  GeneralCategory c = general_category(cp);
  return c >= kMnCat && c <= kMe;
}
// The White_Space property (Rust's char::is_whitespace, regex \s).
bool is_white_space(uint32_t cp);
// Appends the full compatibility decomposition (NFKD of one code point) to out.
void decompose_compat(uint32_t cp, std::u32string& out);
// The canonical composition of a pair (Hangul included), or 0 when there is none.
uint32_t compose(uint32_t first, uint32_t second);
GraphemeBreak grapheme_break(uint32_t cp);

}  // namespace dlrt::embed::unicode
