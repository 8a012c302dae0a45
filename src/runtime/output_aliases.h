// Which of a run's outputs a session must copy before it hands them out.
//
// A kernel may return a view of its input instead of a copy (Reshape,
// Unsqueeze, Squeeze, Flatten, Identity, an If branch or a Loop body
// returning a value as it is). When that input is one of the model's
// constants (an initializer, a folded value, a subgraph's initializer), the
// output's storage is the constant's: a caller writing into it would change
// every later run. When two outputs are one value (y and Identity(y), or one
// name listed twice), writing one would change the other. Those outputs are
// copied; every other output is handed out as it is (no copy).
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "core/run_value.h"
#include "ir/graph.h"

namespace dlrt {

class OutputAliases {
 public:
  // The storage of every constant of `graph` and of its subgraphs (If, Loop,
  // Scan bodies, at any depth). The graph must outlive this object's use,
  // its constants unchanged.
  explicit OutputAliases(const ir::Graph& graph);
  OutputAliases() = default;

  // Whether `t`'s bytes overlap one of the constants' bytes.
  bool in_constant(const Tensor& t) const;

  // Per output of `values`, into `copy` (one per value): 1 when it must be
  // copied: a tensor of it (a sequence's items, a map's keys or values too)
  // overlaps a constant, or storage of an earlier output of `values`.
  void outputs_to_copy(std::span<const RunValue> values, std::span<char> copy) const;

 private:
  void add(const ir::Graph& graph);

  // [begin, end) byte ranges, sorted by begin and disjoint (merged).
  std::vector<std::pair<uintptr_t, uintptr_t>> ranges_;
};

// OutputAliases::outputs_to_copy for one run's values, kept on the stack for
// up to 16 outputs: a run allocates nothing for it.
class OutputCopies {
 public:
  OutputCopies(const OutputAliases& aliases, std::span<const RunValue> values);
  OutputCopies(const OutputCopies&) = delete;
  OutputCopies& operator=(const OutputCopies&) = delete;
  bool operator[](size_t i) const { return flags_[i] != 0; }

 private:
  static constexpr size_t kOnStack = 16;
  char stack_[kOnStack] = {};
  std::vector<char> heap_;
  std::span<char> flags_;
};

}  // namespace dlrt
