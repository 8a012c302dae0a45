// The program a Regex runs (tokenizer_regex.h): sets of code points and
// instructions, made from a pattern by compile_regex_program
// (regex_compile.cpp: pattern -> syntax tree -> instructions) and
// run by Regex::find_all (tokenizer_regex.cpp). Internal to the tokenizer.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include "dlrt/status.h"
#include "embed/tokenizer/tokenizer_parts.h"
#include "embed/tokenizer/tokenizer_regex.h"
#include "embed/tokenizer/unicode_tables.h"

namespace dlrt::embed::tok {

// A set of code points: ranges plus general-category tests, possibly negated.
struct CharSet {
  std::vector<std::pair<char32_t, char32_t>> ranges;
  uint32_t categories = 0;  // bit per unicode::GeneralCategory
  bool space = false, word = false, not_space = false, not_word = false, not_digit = false;
  std::vector<uint32_t> not_categories;  // \P{..} inside a class: bit masks
  bool negated = false;

  bool contains(char32_t c) const {
    bool in = false;
    for (const auto& [a, b] : ranges)
      if (c >= a && c <= b) {
        in = true;
        break;
      }
    if (!in && categories && (categories >> unicode::general_category(c) & 1u)) in = true;
    if (!in && space && unicode::is_white_space(c)) in = true;
    if (!in && not_space && !unicode::is_white_space(c)) in = true;
    if (!in && word && is_word_char(c)) in = true;
    if (!in && not_word && !is_word_char(c)) in = true;
    if (!in && not_digit && unicode::general_category(c) != unicode::kNd) in = true;
    if (!in)
      for (uint32_t m : not_categories)
        if (!(m >> unicode::general_category(c) & 1u)) {
          in = true;
          break;
        }
    return in != negated;
  }
};

enum class Op : uint8_t { kChar, kAny, kSet, kSplit, kJmp, kLook, kBegin, kEnd, kMatch, kAtomic };

struct Inst {
  Op op;
  bool icase = false, negate = false;
  char32_t c = 0;
  int32_t x = 0, y = 0;  // kSplit: preferred, other; kJmp: target; kSet/kLook/kAtomic: index
  int32_t loop_exit = -1;  // kSplit at the head of a * or + loop: where the loop ends
};

inline uint32_t fold(uint32_t c) {
  uint32_t buf[3];
  return unicode::to_lower(c, buf) == 1 ? buf[0] : c;
}

struct Regex::Program {
  std::vector<Inst> code;
  std::vector<CharSet> sets;
  std::vector<std::vector<Inst>> subs;  // lookahead and possessive bodies, each ending in kMatch
};

// Parses and compiles `pattern` into a program ending in kMatch. Errors:
// kUnsupported naming the construct (or the size past kMaxRegexProgram), with
// the pattern.
Result<std::shared_ptr<Regex::Program>> compile_regex_program(std::string_view pattern);

}  // namespace dlrt::embed::tok
