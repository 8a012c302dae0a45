// The added tokens' matcher of the tokenizer (tokenizer.cpp): one
// Aho-Corasick automaton per group of added tokens, and the splits of a text
// at their matches as Hugging Face's AddedVocabulary finds them. Private to
// apps/embed/tokenizer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "embed/tokenizer/tokenizer.h"

namespace dlrt::embed::tok {

// Transitions tried on this thread (read and reset by take_added_match_steps,
// tokenizer_parts.h).
extern thread_local size_t added_match_steps;

// The matching set of a group of added tokens (the raw ones or the normalised
// ones): one Aho-Corasick automaton over the reversed patterns. Run from the
// end of a text to its start, its state at each position names the longest
// pattern that starts there, so a text costs one step per code point (plus
// failure moves, fewer in all than the steps) whatever the tokens.
struct AddedMatcher {
  // Trie of the reversed patterns, node 0 the root: (node << 21 | code point) -> child.
  std::unordered_map<uint64_t, uint32_t> next;
  std::vector<uint32_t> fail{0};     // the node of the longest proper suffix of a node's string
  std::vector<uint32_t> longest{0};  // length of the longest pattern that is a suffix of it (0: none)
  std::vector<uint32_t> token{0};    // that pattern's added token (index into the added tokens)
  bool empty() const { return fail.size() <= 1; }
  static uint64_t key(uint32_t node, char32_t c) { return (static_cast<uint64_t>(node) << 21) | (c & 0x1FFFFF); }
  // The state after `c` from `node`.
  uint32_t step(uint32_t node, char32_t c) const {
    for (;;) {
      ++added_match_steps;
      if (auto it = next.find(key(node, c)); it != next.end()) return it->second;
      if (node == 0) return 0;
      node = fail[node];
    }
  }
};

// The automaton over `patterns` (code points), pattern k naming added token
// token[k]; the first of equal patterns wins.
void build_matcher(AddedMatcher& m, std::vector<std::u32string> patterns, std::vector<size_t> token);

struct AddedSplit {
  size_t b, e;
  int64_t id;  // -1: text between added tokens
};

// Hugging Face's AddedVocabulary::find_matches: leftmost-longest matches
// (its Aho-Corasick automaton's MatchKind::LeftmostLongest), single_word
// checked on the match, then lstrip/rstrip take the whitespace around it; the
// splits cover all of `s`.
void find_added(const AddedMatcher& m, const std::vector<AddedToken>& added, const std::u32string& s,
                std::vector<AddedSplit>& out);

}  // namespace dlrt::embed::tok
