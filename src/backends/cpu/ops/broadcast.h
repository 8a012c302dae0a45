// Elementwise iteration for CPU kernels: numpy-style broadcasting of N inputs
// to one output, and a parallel element map.
//
// A BroadcastPlan collapses the output shape into as few dims as possible
// (adjacent dims merge when every input either spans both or broadcasts both),
// so the common cases become one flat loop: same shapes -> one dim, all
// strides 1; a scalar operand -> stride 0; [N, C] + [C] -> rows of C with the
// second input's row stride 0. The loop then walks contiguous runs of the
// innermost dim, moving input offsets by stride (an odometer), never by
// dividing each element's index.
//
// Thread-safety: plans are immutable once built; for_each_run may be called
// concurrently and itself splits big outputs over the pool.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/thread_pool.h"
#include "dlrt/status.h"
#include "dlrt/tensor.h"

namespace dlrt::cpu {

// Outputs smaller than this many elements run on the calling thread.
inline constexpr int64_t kParallelElements = 1 << 15;
// Elements per chunk when splitting work over the pool.
inline constexpr int64_t kParallelGrain = 1 << 14;

// Numpy broadcast of `shapes` (right-aligned; a dim of 1 stretches). An
// InvalidArgument naming both shapes when two dims differ and neither is 1.
inline Result<Shape> broadcast_shapes(std::span<const Shape* const> shapes) {
  size_t rank = 0;
  for (const Shape* s : shapes) rank = std::max(rank, s->size());
  Shape out(rank, 1);
  for (size_t k = 0; k < shapes.size(); ++k) {
    const Shape& s = *shapes[k];
    size_t off = rank - s.size();
    for (size_t i = 0; i < s.size(); ++i) {
      int64_t d = s[i];
      int64_t& o = out[off + i];
      if (d == o || d == 1) continue;
      if (o == 1) {
        o = d;
        continue;
      }
      // Find an earlier shape that set `o`, for the message.
      std::string msg = "shapes cannot be broadcast together:";
      for (const Shape* t : shapes) msg += " " + shape_to_string(*t);
      msg += " (dimension " + std::to_string(static_cast<int64_t>(off + i) - static_cast<int64_t>(rank)) + ": " +
             std::to_string(o) + " vs " + std::to_string(d) + ")";
      return InvalidArgument(msg);
    }
  }
  return out;
}

inline Result<Shape> broadcast_shapes(const Shape& a, const Shape& b) {
  const Shape* s[] = {&a, &b};
  return broadcast_shapes(std::span<const Shape* const>(s, 2));
}

// How N inputs map onto one output of shape `out_shape`.
template <size_t N>
struct BroadcastPlan {
  // Collapsed output dims (at least one; {1} for a 0-d output). Shape for
  // its inline storage: a plan of rank <= 8 allocates nothing.
  Shape dims;
  // strides[k][d]: element stride of input k along collapsed dim d (0 where it broadcasts).
  std::array<Shape, N> strides;
  int64_t total = 0;

  int64_t inner() const { return dims.back(); }
  int64_t rows() const { return dims.empty() ? 0 : total / dims.back(); }
};

// Builds the plan; each input shape must broadcast to `out_shape` (check with
// broadcast_shapes first; an input that does not is an InvalidArgument).
template <size_t N>
Result<BroadcastPlan<N>> make_broadcast_plan(const Shape& out_shape, const std::array<const Shape*, N>& in) {
  static_assert(N < 64, "each kept dim records its broadcasting inputs as bits of one int64");
  BroadcastPlan<N> p;
  const size_t rank = out_shape.size();
  p.total = element_count(out_shape);
  // Per input, right-aligned dims padded with 1s.
  std::array<Shape, N> idims;
  for (size_t k = 0; k < N; ++k) {
    const Shape& s = *in[k];
    if (s.size() > rank) return InvalidArgument("input of shape " + shape_to_string(s) + " has a higher rank than the output " + shape_to_string(out_shape));
    idims[k].assign(rank, 1);
    std::copy(s.begin(), s.end(), idims[k].begin() + static_cast<std::ptrdiff_t>(rank - s.size()));
    for (size_t d = 0; d < rank; ++d)
      if (idims[k][d] != out_shape[d] && idims[k][d] != 1)
        return InvalidArgument("input of shape " + shape_to_string(s) + " cannot be broadcast to " + shape_to_string(out_shape));
  }
  // Collapse: skip output dims of size 1; merge a dim into the previous one
  // when every input has the same broadcast state on both.
  Shape dims;
  Shape bcast;  // per kept dim: bit k set where input k broadcasts it
  for (size_t d = 0; d < rank; ++d) {
    if (out_shape[d] == 1) continue;
    int64_t b = 0;
    for (size_t k = 0; k < N; ++k)
      if (idims[k][d] == 1) b |= int64_t{1} << k;
    if (!dims.empty() && bcast.back() == b) {
      dims.back() *= out_shape[d];
    } else {
      dims.push_back(out_shape[d]);
      bcast.push_back(b);
    }
  }
  if (dims.empty()) {
    dims.push_back(1);
    bcast.push_back(0);
  }
  p.dims = dims;
  for (size_t k = 0; k < N; ++k) {
    p.strides[k].assign(dims.size(), 0);
    int64_t s = 1;
    for (size_t d = dims.size(); d-- > 0;) {
      if (!((bcast[d] >> k) & 1)) {
        p.strides[k][d] = s;
        s *= dims[d];
      }
    }
  }
  return p;
}

// Calls run(out_offset, in_offsets, count, in_inner_strides) for contiguous
// runs of output elements covering the whole output; input k's elements for
// the run are at in_offsets[k] + i * in_inner_strides[k] (stride 0 or 1).
// Splits over `pool` when the output is big (long rows are cut into blocks so
// that [2, 1M]-like shapes still spread over every thread); `run` must then
// be thread-safe.
template <size_t N, typename Run>
void for_each_run(const BroadcastPlan<N>& p, ThreadPool* pool, Run&& run) {
  if (p.total <= 0) return;
  const size_t od = p.dims.size() - 1;  // outer dims
  const int64_t inner = p.dims.back();
  const int64_t rows = p.total / inner;
  std::array<int64_t, N> istr;
  for (size_t k = 0; k < N; ++k) istr[k] = p.strides[k][od];
  const bool parallel = pool && pool->num_threads() > 1 && p.total >= kParallelElements;
  // Work units: blocks of at most `blk` elements within one row (a long row
  // is cut into a multiple of the thread count, in whole vectors of 16).
  int64_t blk = parallel ? std::min(inner, kParallelGrain) : inner;
  if (parallel && rows == 1 && inner > blk) blk = std::min(inner, (pool->balanced_grain(inner, blk) + 15) / 16 * 16);
  const int64_t nblk = (inner + blk - 1) / blk;

  auto body = [&](int64_t ub, int64_t ue) {
    int64_t row = ub / nblk, b = ub % nblk;
    // Decompose the first row once, then step the odometer.
    std::array<int64_t, N> off{};
    std::array<int64_t, 8> small_idx{};
    std::vector<int64_t> big_idx;
    int64_t* idx = small_idx.data();
    if (od > small_idx.size()) {
      big_idx.assign(od, 0);
      idx = big_idx.data();
    }
    int64_t r = row;
    for (size_t d = od; d-- > 0;) {
      idx[d] = r % p.dims[d];
      r /= p.dims[d];
      for (size_t k = 0; k < N; ++k) off[k] += idx[d] * p.strides[k][d];
    }
    for (int64_t u = ub; u < ue; ++u) {
      const int64_t start = b * blk;
      std::array<int64_t, N> o;
      for (size_t k = 0; k < N; ++k) o[k] = off[k] + start * istr[k];
      run(row * inner + start, o, std::min(blk, inner - start), istr);
      if (++b < nblk) continue;
      b = 0;
      ++row;
      for (size_t d = od; d-- > 0;) {
        if (++idx[d] < p.dims[d]) {
          for (size_t k = 0; k < N; ++k) off[k] += p.strides[k][d];
          break;
        }
        idx[d] = 0;
        for (size_t k = 0; k < N; ++k) off[k] -= (p.dims[d] - 1) * p.strides[k][d];
      }
    }
  };
  const int64_t units = rows * nblk;
  if (parallel) pool->parallel_for(units, pool->balanced_grain(units, std::max<int64_t>(1, kParallelGrain / blk)), body);
  else body(0, units);
}

// out[i] = op(a[i], b[i]) under broadcasting, with the four stride cases of
// the inner run specialised so the compiler can vectorise each.
template <typename A, typename B, typename O, typename Op>
void binary_broadcast(const BroadcastPlan<2>& p, const A* a, const B* b, O* o, ThreadPool* pool, Op op) {
  for_each_run(p, pool, [&](int64_t oo, const std::array<int64_t, 2>& off, int64_t n, const std::array<int64_t, 2>& st) {
    const A* pa = a + off[0];
    const B* pb = b + off[1];
    O* po = o + oo;
    if (st[0] && st[1]) {
      for (int64_t i = 0; i < n; ++i) po[i] = op(pa[i], pb[i]);
    } else if (st[1]) {
      const A av = pa[0];
      for (int64_t i = 0; i < n; ++i) po[i] = op(av, pb[i]);
    } else if (st[0]) {
      const B bv = pb[0];
      for (int64_t i = 0; i < n; ++i) po[i] = op(pa[i], bv);
    } else {
      const O v = op(pa[0], pb[0]);
      for (int64_t i = 0; i < n; ++i) po[i] = v;
    }
  });
}

// out[i] = op(a[i], b[i], c[i]) under broadcasting (Where, Clip-like ops).
template <typename A, typename B, typename C, typename O, typename Op>
void ternary_broadcast(const BroadcastPlan<3>& p, const A* a, const B* b, const C* c, O* o, ThreadPool* pool, Op op) {
  for_each_run(p, pool, [&](int64_t oo, const std::array<int64_t, 3>& off, int64_t n, const std::array<int64_t, 3>& st) {
    const A* pa = a + off[0];
    const B* pb = b + off[1];
    const C* pc = c + off[2];
    O* po = o + oo;
    if (st[0] && st[1] && st[2]) {
      for (int64_t i = 0; i < n; ++i) po[i] = op(pa[i], pb[i], pc[i]);
    } else {
      for (int64_t i = 0; i < n; ++i) po[i] = op(pa[i * st[0]], pb[i * st[1]], pc[i * st[2]]);
    }
  });
}

// out[i] = f(in[i]) for n elements, split over `pool` when n is big.
template <typename I, typename O, typename F>
void parallel_map(ThreadPool* pool, const I* in, O* out, int64_t n, F f) {
  auto body = [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) out[i] = f(in[i]);
  };
  if (pool && pool->num_threads() > 1 && n >= kParallelElements) pool->parallel_for(n, pool->balanced_grain(n, kParallelGrain), body);
  else body(0, n);
}

}  // namespace dlrt::cpu
