#include "embed/models/length_groups.h"

#include <algorithm>
#include <limits>
#include <numeric>

namespace dlrt::embed {

std::vector<std::vector<size_t>> length_groups(const std::vector<size_t>& lengths, size_t run_cost) {
  const size_t n = lengths.size();
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return lengths[a] > lengths[b]; });
  // best[i]: the least cost of the first i texts (longest first); the group
  // ending there starts at from[i] and is padded to its first text's length.
  // A cut only between texts of different lengths.
  std::vector<size_t> best(n + 1, std::numeric_limits<size_t>::max()), from(n + 1, 0);
  best[0] = 0;
  for (size_t i = 1; i <= n; ++i) {
    if (i < n && lengths[order[i]] == lengths[order[i - 1]]) continue;
    for (size_t j = 0; j < i; ++j) {
      if (best[j] == std::numeric_limits<size_t>::max()) continue;
      const size_t cost = best[j] + run_cost + lengths[order[j]] * (i - j);
      if (cost < best[i]) {  // strict: of equal costs the larger group (smaller j) wins
        best[i] = cost;
        from[i] = j;
      }
    }
  }
  std::vector<std::vector<size_t>> groups;
  for (size_t i = n; i > 0; i = from[i]) groups.emplace_back(order.begin() + from[i], order.begin() + i);
  std::reverse(groups.begin(), groups.end());
  return groups;
}

Status by_length(std::vector<Encoding> encodings, size_t batch_size,
                 const std::function<Status(const std::vector<Encoding>&, const std::vector<size_t>&)>& run) {
  if (batch_size < 1) return InvalidArgument("batch size must be at least 1");
  std::vector<size_t> order(encodings.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return encodings[a].ids.size() > encodings[b].ids.size(); });
  std::vector<Encoding> batch;
  for (size_t start = 0; start < order.size(); start += batch_size) {
    const size_t end = std::min(order.size(), start + batch_size);
    batch.clear();
    for (size_t k = start; k < end; ++k) batch.push_back(std::move(encodings[order[k]]));
    DLRT_RETURN_IF_ERROR(run(batch, std::vector<size_t>(order.begin() + start, order.begin() + end)));
  }
  return Status::Ok();
}

}  // namespace dlrt::embed
