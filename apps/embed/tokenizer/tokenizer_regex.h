// The regular expressions tokenizer.json files use in Split pre-tokenizers and
// Replace normalizers (Hugging Face runs them with Oniguruma): a backtracking
// matcher over code points with Perl's leftmost-first semantics that remembers
// the states it has explored, so find_all takes at most (program size x text
// length) steps whatever the pattern ((a|a)*b on a run of a's is linear, not
// exponential), and at most kRegexMemoBytesPerChar bytes of memory per code
// point plus kRegexMemoBaseBytes. Programs are capped at kMaxRegexProgram
// instructions (tokenizer_limits.h has the bounds).
//
// Supported: literals and escapes (\t \n \r \f \v \e \0, \xHH, \x{H..}, \uHHHH,
// escaped punctuation), `.`, classes [...] with ranges and negation, \s \S \d
// \D \w \W \h \p{..} \P{..} (general categories and their groups: L, Lu, Ll,
// Lt, Lm, Lo, M, Mn, Mc, Me, N, Nd, Nl, No, P.., S.., Z.., C..), groups (...),
// (?:...), (?i:...) and (?i) (case-insensitive for ASCII and the simple
// lower-case mapping), alternation, greedy, lazy and possessive quantifiers
// (* + ? {n} {n,} {n,m}), lookahead (?=...) (?!...), anchors ^ $ \A \z.
// Anything else (backreferences, lookbehind, named groups, atomic groups,
// Unicode scripts) is kUnsupported with the construct named.
//
// Thread-safety: immutable once compiled.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "dlrt/status.h"
#include "embed/tokenizer/tokenizer_limits.h"

namespace dlrt::embed::tok {

class Regex {
 public:
  static Result<Regex> compile(std::string_view pattern);
  // The non-overlapping leftmost-first matches in `text`, as [begin, end)
  // code-point indices (an empty match moves the search on by one). At most
  // kStepsPerChar steps per code point plus kBaseSteps, and the memory above:
  // past either the search stops with the matches so far and flags the
  // thread (take_budget_exceeded).
  static constexpr size_t kStepsPerChar = kRegexStepsPerChar;
  static constexpr size_t kBaseSteps = kRegexBaseSteps;
  void find_all(std::u32string_view text, std::vector<std::pair<size_t, size_t>>& out) const;
  const std::string& pattern() const { return pattern_; }

  struct Program;

 private:
  std::string pattern_;
  std::shared_ptr<const Program> program_;
};

// Whether a find_all on this thread stopped at its step or memory budget since the
// last call; clears the flag. Tokenizer::encode_checked turns it into an error.
bool take_budget_exceeded();

}  // namespace dlrt::embed::tok
