// The added tokens' matcher (added_matcher.h).
#include "embed/tokenizer/added_matcher.h"

#include <algorithm>
#include <numeric>
#include <utility>

#include "embed/tokenizer/tokenizer_parts.h"
#include "embed/tokenizer/unicode_tables.h"

namespace dlrt::embed::tok {

thread_local size_t added_match_steps = 0;

size_t take_added_match_steps() { return std::exchange(added_match_steps, 0); }

void build_matcher(AddedMatcher& m, std::vector<std::u32string> patterns, std::vector<size_t> token) {
  std::vector<uint32_t> parent{0}, depth{0};
  std::vector<char32_t> via{0};
  for (size_t k = 0; k < patterns.size(); ++k) {
    uint32_t node = 0;
    for (size_t i = patterns[k].size(); i-- > 0;) {
      auto [it, fresh] =
          m.next.try_emplace(AddedMatcher::key(node, patterns[k][i]), static_cast<uint32_t>(parent.size()));
      if (fresh) {
        parent.push_back(node);
        via.push_back(patterns[k][i]);
        depth.push_back(depth[node] + 1);
      }
      node = it->second;
    }
    m.longest.resize(parent.size(), 0);
    m.token.resize(parent.size(), 0);
    // The first of equal patterns wins, as the longest-first scan it replaces took it.
    if (node != 0 && m.longest[node] == 0) {
      m.longest[node] = depth[node];
      m.token[node] = static_cast<uint32_t>(token[k]);
    }
  }
  // Failure links and outputs by depth: a node's suffixes are shallower.
  std::vector<uint32_t> order(parent.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return depth[a] < depth[b]; });
  m.fail.assign(parent.size(), 0);
  for (uint32_t n : order) {
    if (depth[n] <= 1) continue;
    m.fail[n] = m.step(m.fail[parent[n]], via[n]);
    if (m.longest[n] == 0) {
      m.longest[n] = m.longest[m.fail[n]];
      m.token[n] = m.token[m.fail[n]];
    }
  }
}

// Hugging Face's AddedVocabulary::find_matches: leftmost-longest matches
// (its Aho-Corasick automaton's MatchKind::LeftmostLongest), single_word
// checked on the match, then lstrip/rstrip take the whitespace around it; the
// splits cover all of `s`.
void find_added(const AddedMatcher& m, const std::vector<AddedToken>& added, const std::u32string& s,
                std::vector<AddedSplit>& out) {
  out.clear();
  size_t n = s.size(), start_offset = 0, i = 0;
  if (!m.empty()) {
    // state[i]: the automaton after s[n-1] .. s[i], whose output is the longest pattern starting at i.
    std::vector<uint32_t> state(n);
    for (size_t j = n, node = 0; j-- > 0;)
      state[j] = static_cast<uint32_t>(node = m.step(static_cast<uint32_t>(node), s[j]));
    while (i < n) {
      const uint32_t length = m.longest[state[i]];
      if (length == 0) {
        ++i;
        continue;
      }
      const AddedToken& t = added[m.token[state[i]]];
      size_t start = i, stop = i + length;
      i = stop;
      if (t.single_word) {
        bool start_ok = start == 0 || !is_word_char(s[start - 1]);
        bool stop_ok = stop == n || !is_word_char(s[stop]);
        if (!start_ok || !stop_ok) continue;
      }
      if (t.lstrip) {
        size_t ns = start;
        while (ns > 0 && unicode::is_white_space(s[ns - 1])) --ns;
        start = std::max(ns, start_offset);
      }
      if (t.rstrip)
        while (stop < n && unicode::is_white_space(s[stop])) ++stop;
      i = stop;
      if (start_offset < start) out.push_back({start_offset, start, -1});
      out.push_back({start, stop, t.id});
      start_offset = stop;
    }
  }
  if (start_offset != n || n == 0) out.push_back({start_offset, n, -1});
}

}  // namespace dlrt::embed::tok
