// Symbolic dims for shape inference (shape_folding.cpp): a dim is static, a
// named symbol (batch, sequence) or unknown; shape values may also hold
// literal negative numbers (Reshape's -1). And numpy broadcasting over them.
#pragma once

#include <algorithm>
#include <optional>
#include <vector>

#include "ir/graph.h"

namespace dlrt::ir::passes::symbolic {

using Dims = std::vector<Dim>;

inline Dim unknown_dim() { return Dim{-1, ""}; }
inline Dim static_dim(int64_t v) { return Dim{v, ""}; }
inline bool same_dim(const Dim& a, const Dim& b) {
  if (a.is_static() || b.is_static()) return a.size == b.size;
  return !a.symbol.empty() && a.symbol == b.symbol;
}

// Shape values may hold literal negative numbers (Reshape's -1): they are
// known but not dims; marked with the symbol "#lit".
inline Dim literal(int64_t v) { return v >= 0 ? static_dim(v) : Dim{v, "#lit"}; }
inline bool is_literal(const Dim& d) { return !d.is_static() && d.symbol == "#lit"; }
inline bool known(const Dim& d) { return d.is_static() || is_literal(d); }
inline bool fully_static(const Dims& d) { return std::all_of(d.begin(), d.end(), known); }
// A shape value used as a shape: literals are not valid dims.
inline Dims as_shape(Dims d) {
  for (Dim& x : d)
    if (is_literal(x)) x = unknown_dim();
  return d;
}

inline std::optional<Dims> broadcast(const std::optional<Dims>& a, const std::optional<Dims>& b) {
  if (!a || !b) return std::nullopt;
  size_t r = std::max(a->size(), b->size());
  Dims out(r);
  for (size_t i = 0; i < r; ++i) {
    const Dim* x = i + a->size() >= r ? &(*a)[i + a->size() - r] : nullptr;
    const Dim* y = i + b->size() >= r ? &(*b)[i + b->size() - r] : nullptr;
    if (!x) { out[i] = *y; continue; }
    if (!y) { out[i] = *x; continue; }
    if (x->is_static() && x->size == 1) out[i] = *y;
    else if (y->is_static() && y->size == 1) out[i] = *x;
    else if (same_dim(*x, *y)) out[i] = *x;
    else if (x->is_static() && y->is_static()) return std::nullopt;  // invalid broadcast: leave to run time
    else if (x->is_static()) out[i] = *x;  // y must equal x (or be 1, then x wins too)
    else if (y->is_static()) out[i] = *y;
    else out[i] = unknown_dim();
  }
  return out;
}

}  // namespace dlrt::ir::passes::symbolic
