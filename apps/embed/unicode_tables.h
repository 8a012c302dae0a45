// Unicode data for the BERT tokenizer, generated into unicode_tables.cpp by
// gen_unicode_tables.py (Python's unicodedata), plus lookups over it.
#pragma once

#include <cstddef>
#include <cstdint>

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

extern const char* const kUnicodeVersion;
extern const ClassRange kClassRanges[];
extern const size_t kClassRangeCount;
extern const CaseMapping kLowerCase[];
extern const size_t kLowerCaseCount;
extern const Decomposition kDecompositions[];
extern const size_t kDecompositionCount;
extern const ClassRange kCombiningRanges[];
extern const size_t kCombiningRangeCount;

CharClass char_class(uint32_t cp);
// Canonical combining class (0 for starters).
uint8_t combining_class(uint32_t cp);
// Appends the full lower-case mapping of cp (1 to 3 code points) to out; returns the count.
int to_lower(uint32_t cp, uint32_t out[3]);
// Appends the full canonical decomposition of cp (Hangul included) to out; returns the count (<= 4).
int decompose(uint32_t cp, uint32_t out[4]);

}  // namespace dlrt::embed::unicode
