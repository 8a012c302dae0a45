// "Did you mean ...?": the known name closest to a misspelt one (option
// names, setting keys, environment variables), by edit distance.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace dlrt::spelling {

// Levenshtein distance (insertions, deletions, substitutions; each costs 1),
// case-sensitive.
size_t edit_distance(std::string_view a, std::string_view b);

// The candidate nearest to `given` when it is near enough to be a likely
// misspelling (at most 2 edits, or a third of the longer name's length),
// else "". Ties go to the earlier candidate.
std::string closest(std::string_view given, const std::vector<std::string>& candidates);

}  // namespace dlrt::spelling
