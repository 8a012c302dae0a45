#include "core/spelling.h"

#include <algorithm>

namespace dlrt::spelling {

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string closest(std::string_view given, const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_distance = 0;
  for (const std::string& c : candidates) {
    const size_t d = edit_distance(given, c);
    const size_t allowed = std::max<size_t>(2, std::max(given.size(), c.size()) / 3);
    if (d > allowed || (!best.empty() && d >= best_distance)) continue;
    best = c;
    best_distance = d;
  }
  return best;
}

}  // namespace dlrt::spelling
