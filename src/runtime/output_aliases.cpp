// Outputs over a constant's or another output's storage (see output_aliases.h).
#include "runtime/output_aliases.h"

#include <algorithm>

namespace dlrt {
namespace {

using Range = std::pair<uintptr_t, uintptr_t>;

// The bytes of `t`; empty for an empty or invalid tensor (nothing to alias).
Range range_of(const Tensor& t) {
  const auto begin = reinterpret_cast<uintptr_t>(t.raw_data());
  if (!t.valid() || begin == 0 || t.size() <= 0) return {0, 0};
  return {begin, begin + t.nbytes()};
}

bool overlap(const Range& a, const Range& b) { return a.first < b.second && b.first < a.second; }

// Calls f(tensor) on each tensor of `v` until f returns true; returns whether it did.
template <typename F>
bool any_tensor(const RunValue& v, F&& f) {
  switch (v.kind) {
    case RunValue::Kind::kTensor: return f(v.tensor);
    case RunValue::Kind::kSequence:
      for (const Tensor& t : v.sequence)
        if (f(t)) return true;
      return false;
    case RunValue::Kind::kMap:
    case RunValue::Kind::kMapSequence: return f(v.map_keys) || f(v.map_values);
    case RunValue::Kind::kNone:
    case RunValue::Kind::kOptionalNone: break;
  }
  return false;
}

}  // namespace

OutputAliases::OutputAliases(const ir::Graph& graph) {
  add(graph);
  std::sort(ranges_.begin(), ranges_.end());
  std::vector<Range> merged;
  for (const Range& r : ranges_) {
    if (!merged.empty() && r.first <= merged.back().second)
      merged.back().second = std::max(merged.back().second, r.second);
    else
      merged.push_back(r);
  }
  ranges_ = std::move(merged);
}

void OutputAliases::add(const ir::Graph& graph) {
  for (const ir::Value& v : graph.values) {
    if (!v.constant) continue;
    const Range r = range_of(*v.constant);
    if (r.first != r.second) ranges_.push_back(r);
  }
  for (const ir::Node& n : graph.nodes)
    for (const auto& [name, a] : n.attributes) {
      if (a.g) add(*a.g);
      for (const auto& sg : a.graphs)
        if (sg) add(*sg);
    }
}

bool OutputAliases::in_constant(const Tensor& t) const {
  const Range r = range_of(t);
  if (r.first == r.second) return false;
  // The last range that begins before r ends is the only one that can overlap
  // it (the ranges are disjoint and sorted).
  auto it = std::lower_bound(ranges_.begin(), ranges_.end(), r.second,
                             [](const Range& c, uintptr_t end) { return c.first < end; });
  return it != ranges_.begin() && overlap(*std::prev(it), r);
}

void OutputAliases::outputs_to_copy(std::span<const RunValue> values, std::span<char> copy) const {
  for (size_t i = 0; i < values.size() && i < copy.size(); ++i) {
    copy[i] = any_tensor(values[i], [this](const Tensor& t) { return in_constant(t); });
    if (copy[i]) continue;
    // Storage an earlier output holds: the later one is copied. Quadratic in
    // the outputs, which are few; a tensor with no bytes aliases nothing.
    for (size_t j = 0; j < i && !copy[i]; ++j) {
      copy[i] = any_tensor(values[i], [&](const Tensor& t) {
        const Range r = range_of(t);
        if (r.first == r.second) return false;
        return any_tensor(values[j], [&](const Tensor& u) { return overlap(range_of(u), r); });
      });
    }
  }
}

OutputCopies::OutputCopies(const OutputAliases& aliases, std::span<const RunValue> values)
    : heap_(values.size() > kOnStack ? values.size() : 0, 0),
      flags_(values.size() > kOnStack ? heap_.data() : stack_, values.size()) {
  aliases.outputs_to_copy(values, flags_);
}

}  // namespace dlrt
