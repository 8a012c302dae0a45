// Ops that rearrange elements: Transpose, Concat, Split, Slice, Expand, Tile,
// Pad, DepthToSpace, SpaceToDepth, Trilu, ReverseSequence, Compress. The
// permuting ones reduce to one strided copy (layout_impl.h); all work on every
// dtype by moving elements of the dtype's size (strings element-wise).
#include <algorithm>
#include <limits>

#include "backends/cpu/kernel_families.h"
#include "backends/cpu/ops/layout_impl.h"

namespace dlrt::cpu {
namespace {

using layout::contiguous_strides;
using layout::copy_elements;
using layout::dispatch_copyable;
using layout::kCopyGrain;
using layout::StridedCopy;

// Runs fn(begin, end) over [0, n) rows of `row_elems` elements each, in
// parallel when the whole job is large enough to be worth it.
template <typename Fn>
void for_rows(KernelContext& ctx, int64_t n, int64_t row_elems, Fn&& fn) {
  if (n <= 0) return;
  const int64_t grain = std::max<int64_t>(1, kCopyGrain / std::max<int64_t>(row_elems, 1));
  if (n <= grain) {
    fn(int64_t{0}, n);
  } else {
    ctx.pool().parallel_for(n, ctx.pool().balanced_grain(n, grain), fn);
  }
}

// Copies `in` permuted by `perm` into a new output 0.
Status permute_to_output(KernelContext& ctx, const Tensor& in, const Shape& view_shape, const IntList& perm,
                         Shape final_shape) {
  const auto strides = contiguous_strides(view_shape);
  StridedCopy c;
  for (int64_t p : perm) {
    c.out_shape.push_back(view_shape[p]);
    c.in_strides.push_back(strides[p]);
  }
  // strided_copy writes every element: no zero fill.
  DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, in.dtype(), std::move(final_shape)));
  return layout::strided_copy(in, *y, std::move(c), ctx.pool());
}

Status transpose(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
  const int64_t r = static_cast<int64_t>(x->rank());
  IntList perm = ints_attr(ctx.node(), "perm", 0, 0);
  if (perm.empty() && r > 0) {
    for (int64_t i = r - 1; i >= 0; --i) perm.push_back(i);
  }
  if (static_cast<int64_t>(perm.size()) != r)
    return ctx.invalid("perm " + shape_to_string(perm) + " does not match the input rank " + std::to_string(r));
  IntList seen(r, 0);  // flags
  for (int64_t& p : perm) {
    if (p < 0) p += r;
    if (p < 0 || p >= r || seen[p]) return ctx.invalid("perm " + shape_to_string(ctx.node().attr_ints("perm")) + " is not a permutation");
    seen[p] = 1;
  }
  Shape out(r);
  for (int64_t i = 0; i < r; ++i) out[i] = x->dim(perm[i]);
  return permute_to_output(ctx, *x, x->shape(), perm, out);
}

Status concat(KernelContext& ctx) {
  // The present inputs, without a list of them (which would allocate per run).
  auto for_each_input = [&](auto&& f) {
    for (size_t i = 0; i < ctx.num_inputs(); ++i)
      if (const Tensor* t = ctx.input(i)) f(t);
  };
  const Tensor* first_input = nullptr;
  for_each_input([&](const Tensor* t) {
    if (!first_input) first_input = t;
  });
  if (!first_input) return ctx.invalid("Concat needs at least one input");
  const Tensor& first = *first_input;
  const int64_t r = static_cast<int64_t>(first.rank());
  if (r == 0) return ctx.invalid("cannot concatenate scalars");
  if (!ctx.node().has_attr("axis")) return ctx.invalid("attribute 'axis' is required");
  DLRT_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx.node().attr_int("axis", 0), r, ctx));
  Shape out = first.shape();
  out[axis] = 0;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    const Tensor* t = ctx.input(i);
    if (!t) continue;
    bool ok = t->dtype() == first.dtype() && static_cast<int64_t>(t->rank()) == r;
    for (int64_t d = 0; ok && d < r; ++d) ok = d == axis || t->dim(d) == first.dim(d);
    if (!ok)
      return ctx.invalid("inputs " + shape_to_string(first.shape()) + " " + dtype_name(first.dtype()) + " and " +
                         shape_to_string(t->shape()) + " " + dtype_name(t->dtype()) +
                         " cannot be concatenated on axis " + std::to_string(axis));
    out[axis] += t->dim(axis);
  }
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= out[d];
  for (int64_t d = axis + 1; d < r; ++d) inner *= out[d];
  const int64_t out_row = out[axis] * inner;
  // Each output row is the inputs' chunks end to end: every element is written.
  DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, first.dtype(), out));
  // The output's elements in ranges over the threads (a Concat of one image's channels is a single row); each range
  // copies the parts of the input chunks that fall in it.
  for_rows(ctx, outer * out_row, 1, [&](int64_t b, int64_t e) {
    for (int64_t o = b / out_row; o * out_row < e; ++o) {
      int64_t dst = o * out_row;
      for_each_input([&](const Tensor* t) {
        const int64_t chunk = t->dim(axis) * inner;
        const int64_t lo = std::max(b, dst), hi = std::min(e, dst + chunk);
        if (lo < hi) copy_elements(*t, o * chunk + (lo - dst), *y, lo, hi - lo);
        dst += chunk;
      });
    }
  });
  return Status::Ok();
}

Status split(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
  const int64_t r = static_cast<int64_t>(x->rank());
  if (r == 0) return ctx.invalid("cannot split a scalar");
  DLRT_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(ctx.node().attr_int("axis", 0), r, ctx));
  const int64_t dim = x->dim(axis);
  const int64_t n_out = static_cast<int64_t>(ctx.num_outputs());
  IntList sizes;  // inline up to 8 outputs: no allocation on the run path
  if (ctx.opset() < 13) {
    sizes = ints_attr(ctx.node(), "split", 0, 0);
  } else if (const Tensor* s = ctx.input(1)) {
    DLRT_ASSIGN_OR_RETURN(sizes, read_int_tensor(*s, ctx));
  }
  if (!sizes.empty()) {
    if (static_cast<int64_t>(sizes.size()) != n_out)
      return ctx.invalid("split has " + std::to_string(sizes.size()) + " sizes but the node has " +
                         std::to_string(n_out) + " outputs");
    int64_t sum = 0;
    for (int64_t s : sizes) {
      if (s < 0) return ctx.invalid("split sizes " + shape_to_string(sizes) + " contain a negative size");
      sum += s;
    }
    if (sum != dim)
      return ctx.invalid("split sizes " + shape_to_string(sizes) + " do not add up to the axis size " +
                         std::to_string(dim));
  } else {
    int64_t n = n_out;
    if (ctx.opset() >= 18 && ctx.node().has_attr("num_outputs")) n = ctx.node().attr_int("num_outputs", n_out);
    if (n <= 0 || n != n_out)
      return ctx.invalid("num_outputs " + std::to_string(n) + " does not match the node's " + std::to_string(n_out) +
                         " outputs");
    // Equal chunks; from opset 18 the last one may be smaller.
    const int64_t chunk = (dim + n - 1) / n;
    if (dim % n != 0 && ctx.opset() < 18)
      return ctx.invalid("axis size " + std::to_string(dim) + " cannot be split evenly into " + std::to_string(n) +
                         " outputs");
    for (int64_t i = 0; i < n; ++i) sizes.push_back(std::clamp<int64_t>(dim - i * chunk, 0, chunk));
  }
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= x->dim(d);
  for (int64_t d = axis + 1; d < r; ++d) inner *= x->dim(d);
  int64_t start = 0;
  for (int64_t i = 0; i < n_out; ++i) {
    Shape shape = x->shape();
    shape[axis] = sizes[i];
    DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(i, x->dtype(), shape));
    const int64_t chunk = sizes[i] * inner;
    // The output's elements in ranges over the threads, each range row piece by row piece.
    for_rows(ctx, outer * chunk, 1, [&](int64_t b, int64_t e) {
      while (b < e) {
        const int64_t o = b / chunk, off = b % chunk, n = std::min(e - b, chunk - off);
        copy_elements(*x, (o * dim + start) * inner + off, *y, b, n);
        b += n;
      }
    });
    start += sizes[i];
  }
  return Status::Ok();
}

// Slice parameters: inputs from opset 10, attributes before.
Status slice(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
  const int64_t r = static_cast<int64_t>(x->rank());
  IntList starts, ends, axes, steps;
  if (ctx.opset() < 10) {
    starts = ctx.node().attr_ints("starts");
    ends = ctx.node().attr_ints("ends");
    axes = ctx.node().attr_ints("axes");
  } else {
    DLRT_ASSIGN_OR_RETURN(const Tensor* s, required_input(ctx, 1));
    DLRT_ASSIGN_OR_RETURN(const Tensor* e, required_input(ctx, 2));
    DLRT_ASSIGN_OR_RETURN(starts, read_int_tensor(*s, ctx));
    DLRT_ASSIGN_OR_RETURN(ends, read_int_tensor(*e, ctx));
    if (const Tensor* a = ctx.input(3)) {
      DLRT_ASSIGN_OR_RETURN(axes, read_int_tensor(*a, ctx));
    }
    if (const Tensor* st = ctx.input(4)) {
      DLRT_ASSIGN_OR_RETURN(steps, read_int_tensor(*st, ctx));
    }
  }
  if (starts.size() != ends.size())
    return ctx.invalid("starts and ends must have the same length, got " + std::to_string(starts.size()) + " and " +
                       std::to_string(ends.size()));
  if (axes.empty()) {
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  }
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (axes.size() != starts.size() || steps.size() != starts.size())
    return ctx.invalid("starts, ends, axes and steps must have the same length");

  const auto in_strides = contiguous_strides(x->shape());
  StridedCopy c;
  c.out_shape = x->shape();
  c.in_strides = in_strides;
  IntList seen(r, 0);  // flags
  for (size_t i = 0; i < axes.size(); ++i) {
    DLRT_ASSIGN_OR_RETURN(int64_t a, normalize_axis(axes[i], r, ctx));
    if (seen[a]) return ctx.invalid("axis " + std::to_string(axes[i]) + " is repeated in axes");
    seen[a] = 1;
    const int64_t dim = x->dim(a);
    int64_t step = steps[i];
    if (step == 0) return ctx.invalid("slice step must not be 0");
    int64_t start = starts[i], end = ends[i];
    if (start < 0) start += dim;
    if (end < 0) end += dim;
    int64_t n = 0;
    if (step > 0) {
      start = std::clamp<int64_t>(start, 0, dim);
      end = std::clamp<int64_t>(end, 0, dim);
      if (end > start) n = (end - start - 1) / step + 1;
    } else {
      start = std::clamp<int64_t>(start, 0, std::max<int64_t>(dim - 1, 0));
      end = std::clamp<int64_t>(end, -1, dim - 1);
      if (start > end) n = (start - end - 1) / (step == std::numeric_limits<int64_t>::min() ? std::numeric_limits<int64_t>::max() : -step) + 1;
    }
    if (n <= 1) step = 1;  // one element or none: the step no longer matters (and cannot overflow)
    c.out_shape[a] = n;
    c.in_strides[a] = step * in_strides[a];
    if (n > 0) c.in_offset += start * in_strides[a];
  }
  DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), c.out_shape));
  return layout::strided_copy(*x, *y, std::move(c), ctx.pool());
}

Status expand(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
  DLRT_ASSIGN_OR_RETURN(const Tensor* s, required_input(ctx, 1));
  if (s->rank() > 1) return ctx.invalid("shape input must be 1-D, got " + shape_to_string(s->shape()));
  DLRT_ASSIGN_OR_RETURN(auto want, read_int_tensor(*s, ctx));
  for (int64_t d : want)
    if (d < 0) return ctx.invalid("shape " + shape_to_string(want) + " has a negative dim");
  DLRT_ASSIGN_OR_RETURN(Shape out, layout::broadcast_shapes(x->shape(), Shape(want.begin(), want.end()), ctx));
  const auto strides = contiguous_strides(x->shape());
  const size_t lead = out.size() - x->rank();
  StridedCopy c;
  c.out_shape = out;
  c.in_strides.assign(out.size(), 0);
  for (size_t i = 0; i < x->rank(); ++i) c.in_strides[lead + i] = x->dim(i) == 1 ? 0 : strides[i];
  DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), out));
  if (y->size() == 0) return Status::Ok();
  return layout::strided_copy(*x, *y, std::move(c), ctx.pool());
}

// Tile is a broadcast copy of the input seen as [1, d0, 1, d1, ...] into [r0, d0, r1, d1, ...].
Status tile(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
  DLRT_ASSIGN_OR_RETURN(const Tensor* rep, required_input(ctx, 1));
  DLRT_ASSIGN_OR_RETURN(auto repeats, read_int_tensor(*rep, ctx));
  if (repeats.size() != x->rank())
    return ctx.invalid("repeats has " + std::to_string(repeats.size()) + " values but the input has rank " +
                       std::to_string(x->rank()));
  const auto strides = contiguous_strides(x->shape());
  StridedCopy c;
  Shape out;
  for (size_t i = 0; i < x->rank(); ++i) {
    if (repeats[i] < 0) return ctx.invalid("repeats " + shape_to_string(repeats) + " has a negative value");
    c.out_shape.push_back(repeats[i]);
    c.in_strides.push_back(0);
    c.out_shape.push_back(x->dim(i));
    c.in_strides.push_back(strides[i]);
    if (x->dim(i) != 0 && repeats[i] > std::numeric_limits<int64_t>::max() / x->dim(i))
      return ctx.invalid("tiled shape overflows");
    out.push_back(repeats[i] * x->dim(i));
  }
  DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), out));
  if (y->size() == 0) return Status::Ok();
  return layout::strided_copy(*x, *y, std::move(c), ctx.pool());
}

enum class PadMode { kConstant, kReflect, kEdge, kWrap };

// Index of the input element that output index `i` of a padded dim reads,
// or -1 for the constant.
int64_t pad_source(int64_t i, int64_t before, int64_t n, PadMode mode) {
  int64_t s = i - before;
  if (s >= 0 && s < n) return s;
  switch (mode) {
    case PadMode::kConstant: return -1;
    case PadMode::kEdge: return s < 0 ? 0 : n - 1;
    case PadMode::kWrap: return ((s % n) + n) % n;
    case PadMode::kReflect: {
      if (n == 1) return 0;
      const int64_t period = 2 * (n - 1);
      int64_t m = ((s % period) + period) % period;
      return m < n ? m : period - m;
    }
  }
  return -1;
}

Status pad(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
  int64_t r = static_cast<int64_t>(x->rank());
  const ir::Node& node = ctx.node();
  const std::string mode_name = node.attr_string("mode", "constant");
  PadMode mode;
  if (mode_name == "constant") mode = PadMode::kConstant;
  else if (mode_name == "reflect") mode = PadMode::kReflect;
  else if (mode_name == "edge") mode = PadMode::kEdge;
  else if (mode_name == "wrap" && ctx.opset() >= 19) mode = PadMode::kWrap;
  else return ctx.invalid("unknown pad mode '" + mode_name + "'");

  std::vector<int64_t> pads, axes;
  const Tensor* value_tensor = nullptr;
  double value_attr = 0;
  if (ctx.opset() < 11) {
    pads = node.has_attr("pads") ? node.attr_ints("pads") : node.attr_ints("paddings");
    value_attr = node.attr_float("value", 0.0f);
  } else {
    DLRT_ASSIGN_OR_RETURN(const Tensor* p, required_input(ctx, 1));
    DLRT_ASSIGN_OR_RETURN(pads, read_int_tensor(*p, ctx));
    value_tensor = ctx.input(2);
    if (value_tensor && value_tensor->size() == 0) value_tensor = nullptr;
    if (value_tensor && value_tensor->dtype() != x->dtype())
      return ctx.invalid("constant_value must have the input's dtype");
    if (ctx.opset() >= 18) {
      if (const Tensor* a = ctx.input(3)) {
        DLRT_ASSIGN_OR_RETURN(axes, read_int_tensor(*a, ctx));
      }
    }
  }
  if (axes.empty()) {
    for (int64_t i = 0; i < r; ++i) axes.push_back(i);
  }
  const int64_t na = static_cast<int64_t>(axes.size());
  if (static_cast<int64_t>(pads.size()) != 2 * na)
    return ctx.invalid("pads has " + std::to_string(pads.size()) + " values, expected " + std::to_string(2 * na));
  std::vector<int64_t> before(r, 0), after(r, 0);
  for (int64_t i = 0; i < na; ++i) {
    DLRT_ASSIGN_OR_RETURN(int64_t a, normalize_axis(axes[i], r, ctx));
    before[a] = pads[i];
    after[a] = pads[i + na];
  }
  Shape out(r);
  for (int64_t d = 0; d < r; ++d) {
    const int64_t n = x->dim(d);
    const int64_t limit = std::numeric_limits<int64_t>::max() / 4;
    if (before[d] > limit || before[d] < -limit || after[d] > limit || after[d] < -limit)
      return ctx.invalid("pads " + shape_to_string(pads) + " are too large");
    out[d] = n + before[d] + after[d];
    if (out[d] < 0)
      return ctx.invalid("pads " + shape_to_string(pads) + " crop more than the input " + shape_to_string(x->shape()));
    if (mode != PadMode::kConstant && n == 0 && out[d] > 0)
      return ctx.invalid("cannot pad an empty axis in " + mode_name + " mode");
  }
  DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), out));
  if (y->size() == 0) return Status::Ok();
  if (r == 0) return y->copy_from(*x);

  // In constant mode trailing axes without padding join the axis before them
  // (its pads scaled by their size): rows of whole blocks instead of many
  // short rows (a [1, H, W, 1] image padded on W: rows of W, not of 1).
  Shape in_shape = x->shape();
  if (mode == PadMode::kConstant) {
    const int64_t limit = std::numeric_limits<int64_t>::max() / 4;
    while (r > 1 && before[r - 1] == 0 && after[r - 1] == 0) {
      const int64_t n = in_shape[r - 1];  // >= 1: y is not empty
      if (std::abs(before[r - 2]) > limit / n || std::abs(after[r - 2]) > limit / n) break;
      in_shape[r - 2] *= n;
      before[r - 2] *= n;
      after[r - 2] *= n;
      out[r - 2] *= n;
      --r;
    }
    in_shape.resize(r);
    out.resize(r);
  }
  // Per dim, the source index of each output index (-1: the constant).
  std::vector<std::vector<int64_t>> src(r);
  for (int64_t d = 0; d < r; ++d) {
    src[d].resize(out[d]);
    for (int64_t i = 0; i < out[d]; ++i) src[d][i] = pad_source(i, before[d], in_shape[d], mode);
  }
  const auto in_strides = contiguous_strides(in_shape);
  const int64_t row = out[r - 1];
  const int64_t rows = y->size() / row;
  return dispatch_all(x->dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    const T value = value_tensor ? value_tensor->data<T>()[0] : layout::value_from_double<T>(value_attr);
    const T* in = x->data<T>();
    T* o = y->data<T>();
    const auto& last = src[r - 1];
    for_rows(ctx, rows, row, [&](int64_t b, int64_t e) {
      for (int64_t rw = b; rw < e; ++rw) {
        int64_t off = 0;
        bool is_const = false;
        for (int64_t rem = rw, d = r - 2; d >= 0; --d) {
          const int64_t s = src[d][rem % out[d]];
          rem /= out[d];
          if (s < 0) is_const = true;
          else off += s * in_strides[d];
        }
        T* dst = o + rw * row;
        if (is_const) {
          std::fill_n(dst, row, value);
          continue;
        }
        for (int64_t j = 0; j < row; ++j) dst[j] = last[j] < 0 ? value : in[off + last[j]];
      }
    });
    return Status::Ok();
  });
}

Status depth_to_space(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
  if (x->rank() != 4) return ctx.invalid("input must be 4-D (N, C, H, W), got " + shape_to_string(x->shape()));
  const int64_t b = ctx.node().attr_int("blocksize", 0);
  const int64_t n = x->dim(0), c = x->dim(1), h = x->dim(2), w = x->dim(3);
  if (b <= 0 || b > (1 << 20) || c % (b * b) != 0)
    return ctx.invalid("blocksize " + std::to_string(b) + " must be positive and its square must divide the channels " +
                       std::to_string(c));
  const std::string mode = ctx.opset() >= 11 ? ctx.node().attr_string("mode", "DCR") : "DCR";
  const int64_t oc = c / (b * b);
  const Shape out = {n, oc, h * b, w * b};
  if (mode == "DCR") return permute_to_output(ctx, *x, {n, b, b, oc, h, w}, {0, 3, 4, 1, 5, 2}, out);
  if (mode == "CRD") return permute_to_output(ctx, *x, {n, oc, b, b, h, w}, {0, 1, 4, 2, 5, 3}, out);
  return ctx.invalid("unknown mode '" + mode + "' (expected DCR or CRD)");
}

Status space_to_depth(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
  if (x->rank() != 4) return ctx.invalid("input must be 4-D (N, C, H, W), got " + shape_to_string(x->shape()));
  const int64_t b = ctx.node().attr_int("blocksize", 0);
  const int64_t n = x->dim(0), c = x->dim(1), h = x->dim(2), w = x->dim(3);
  if (b <= 0 || h % b != 0 || w % b != 0)
    return ctx.invalid("blocksize " + std::to_string(b) + " must be positive and divide the height " +
                       std::to_string(h) + " and width " + std::to_string(w));
  // mode (opset 28; before, always DCR): output channel (bh * b + bw) * C + c
  // for DCR, c * b * b + bh * b + bw for CRD.
  const std::string mode = ctx.node().attr_string("mode", "DCR");
  if (mode != "DCR" && mode != "CRD") return ctx.invalid("attribute mode must be \"DCR\" or \"CRD\", got \"" + mode + "\"");
  const IntList perm = mode == "DCR" ? IntList{0, 3, 5, 1, 2, 4} : IntList{0, 1, 3, 5, 2, 4};
  return permute_to_output(ctx, *x, {n, c, h / b, b, w / b, b}, perm, {n, c * b * b, h / b, w / b});
}

// Col2Im (opset 18): input [N, C * prod(block), L] column blocks summed back
// into an image [N, C, image...] (torch's fold), for any number of spatial dims.
Status col2im(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
  DLRT_ASSIGN_OR_RETURN(const Tensor* is, required_input(ctx, 1));
  DLRT_ASSIGN_OR_RETURN(const Tensor* bs, required_input(ctx, 2));
  DLRT_ASSIGN_OR_RETURN(IntList image, read_int_tensor(*is, ctx));
  DLRT_ASSIGN_OR_RETURN(IntList block, read_int_tensor(*bs, ctx));
  const size_t nd = image.size();
  if (x->rank() != 3) return ctx.invalid("input must be 3-D [N, C * prod(block_shape), L], got " + shape_to_string(x->shape()));
  if (nd < 1 || block.size() != nd) return ctx.invalid("image_shape and block_shape must have the same length >= 1");
  const IntList strides = ints_attr(ctx.node(), "strides", nd, 1);
  const IntList dil = ints_attr(ctx.node(), "dilations", nd, 1);
  const IntList pads = ints_attr(ctx.node(), "pads", 2 * nd, 0);
  if (strides.size() != nd || dil.size() != nd || pads.size() != 2 * nd)
    return ctx.invalid("strides, dilations and pads must have one (pads: two) value per spatial dim");
  int64_t block_size = 1, cols = 1;
  IntList outs(nd);
  for (size_t i = 0; i < nd; ++i) {
    if (image[i] < 0 || block[i] <= 0 || strides[i] <= 0 || dil[i] <= 0 || pads[i] < 0 || pads[i + nd] < 0)
      return ctx.invalid("image_shape, block_shape, strides, dilations and pads must be positive (pads >= 0)");
    const int64_t span = dil[i] * (block[i] - 1) + 1;
    const int64_t padded = image[i] + pads[i] + pads[i + nd];
    outs[i] = padded >= span ? (padded - span) / strides[i] + 1 : 0;
    block_size *= block[i];
    cols *= outs[i];
  }
  const int64_t n = x->dim(0);
  if (x->dim(1) % block_size != 0 || x->dim(2) != cols)
    return ctx.invalid("input " + shape_to_string(x->shape()) + " does not match block_shape and image_shape (expected C * " +
                       std::to_string(block_size) + " channels and " + std::to_string(cols) + " blocks)");
  const int64_t c = x->dim(1) / block_size;
  Shape os{n, c};
  int64_t pixels = 1;
  for (int64_t d : image) os.push_back(d), pixels *= d;
  DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), os));
  return dispatch_float(x->dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    const T* in = x->data<T>();
    T* out = y->data<T>();
    std::vector<double> acc(static_cast<size_t>(pixels));
    IntList k(nd), l(nd);
    for (int64_t plane = 0; plane < n * c; ++plane) {
      std::fill(acc.begin(), acc.end(), 0.0);
      const T* src = in + plane * block_size * cols;
      for (int64_t kb = 0; kb < block_size; ++kb) {
        for (int64_t r = kb, i = static_cast<int64_t>(nd) - 1; i >= 0; --i) k[i] = r % block[i], r /= block[i];
        for (int64_t lc = 0; lc < cols; ++lc) {
          int64_t at = 0;
          bool inside = true;
          for (int64_t r = lc, i = static_cast<int64_t>(nd) - 1; i >= 0; --i) l[i] = r % outs[i], r /= outs[i];
          for (size_t i = 0; i < nd && inside; ++i) {
            const int64_t p = l[i] * strides[i] - pads[i] + k[i] * dil[i];
            inside = p >= 0 && p < image[i];
            at = at * image[i] + p;
          }
          if (inside) acc[static_cast<size_t>(at)] += static_cast<double>(static_cast<float>(src[kb * cols + lc]));
        }
      }
      for (int64_t p = 0; p < pixels; ++p) out[plane * pixels + p] = static_cast<T>(static_cast<float>(acc[p]));
    }
    return Status::Ok();
  });
}

Status trilu(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
  if (x->rank() < 2) return ctx.invalid("input must have rank >= 2, got " + shape_to_string(x->shape()));
  int64_t k = 0;
  if (const Tensor* kt = ctx.input(1)) {
    if (kt->size() != 1) return ctx.invalid("k must be a scalar");
    DLRT_ASSIGN_OR_RETURN(auto kv, read_int_tensor(*kt, ctx));
    k = kv[0];
  }
  const bool upper = ctx.node().attr_int("upper", 1) != 0;
  const int64_t rows = x->dim(x->rank() - 2), cols = x->dim(x->rank() - 1);
  k = std::clamp<int64_t>(k, -rows - 1, cols + 1);
  DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), x->shape()));
  if (y->size() == 0) return Status::Ok();
  const int64_t mats = y->size() / (rows * cols);
  return dispatch_copyable(x->dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* in = x->data<T>();
    T* o = y->data<T>();
    for_rows(ctx, mats * rows, cols, [&](int64_t b, int64_t e) {
      for (int64_t rw = b; rw < e; ++rw) {
        const int64_t i = rw % rows;
        // Columns kept: j - i >= k (upper) or j - i <= k (lower); the rest stay zero.
        const int64_t lo = upper ? std::clamp<int64_t>(i + k, 0, cols) : 0;
        const int64_t hi = upper ? cols : std::clamp<int64_t>(i + k + 1, 0, cols);
        if (hi > lo) std::copy(in + rw * cols + lo, in + rw * cols + hi, o + rw * cols + lo);
      }
    });
    return Status::Ok();
  });
}

Status reverse_sequence(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
  DLRT_ASSIGN_OR_RETURN(const Tensor* lens_t, required_input(ctx, 1));
  if (x->rank() < 2) return ctx.invalid("input must have rank >= 2, got " + shape_to_string(x->shape()));
  const int64_t time_axis = ctx.node().attr_int("time_axis", 0);
  const int64_t batch_axis = ctx.node().attr_int("batch_axis", 1);
  if (!((time_axis == 0 && batch_axis == 1) || (time_axis == 1 && batch_axis == 0)))
    return ctx.invalid("time_axis and batch_axis must be 0 and 1 in some order");
  DLRT_ASSIGN_OR_RETURN(auto lens, read_int_tensor(*lens_t, ctx));
  const int64_t steps = x->dim(time_axis), batch = x->dim(batch_axis);
  if (static_cast<int64_t>(lens.size()) != batch)
    return ctx.invalid("sequence_lens has " + std::to_string(lens.size()) + " values, expected the batch size " +
                       std::to_string(batch));
  for (int64_t l : lens)
    if (l < 0 || l > steps)
      return ctx.invalid("sequence length " + std::to_string(l) + " is outside [0, " + std::to_string(steps) + "]");
  const auto strides = contiguous_strides(x->shape());
  const int64_t inner = strides[1];
  const int64_t ts = strides[time_axis], bs = strides[batch_axis];
  DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), x->shape()));
  for_rows(ctx, batch * steps, inner, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      const int64_t bi = i / steps, t = i % steps;
      const int64_t src_t = t < lens[bi] ? lens[bi] - 1 - t : t;
      copy_elements(*x, src_t * ts + bi * bs, *y, t * ts + bi * bs, inner);
    }
  });
  return Status::Ok();
}

Status compress(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
  DLRT_ASSIGN_OR_RETURN(const Tensor* cond, required_input(ctx, 1));
  if (cond->dtype() != DType::kBool || cond->rank() != 1)
    return ctx.invalid("condition must be a 1-D bool tensor, got " + std::string(dtype_name(cond->dtype())) + " " +
                       shape_to_string(cond->shape()));
  const bool has_axis = ctx.node().has_attr("axis");
  Shape shape = has_axis ? x->shape() : Shape{x->size()};
  const int64_t r = static_cast<int64_t>(shape.size());
  int64_t axis = 0;
  if (has_axis) {
    DLRT_ASSIGN_OR_RETURN(axis, normalize_axis(ctx.node().attr_int("axis", 0), r, ctx));
  }
  const int64_t dim = shape[axis];
  std::vector<int64_t> keep;
  const bool* c = cond->data<bool>();
  for (int64_t i = 0; i < cond->size(); ++i) {
    if (!c[i]) continue;
    if (i >= dim)
      return ctx.invalid("condition selects index " + std::to_string(i) + " but the axis has size " +
                         std::to_string(dim));
    keep.push_back(i);
  }
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= shape[d];
  for (int64_t d = axis + 1; d < r; ++d) inner *= shape[d];
  Shape out = shape;
  out[axis] = static_cast<int64_t>(keep.size());
  DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), out));
  const int64_t nk = static_cast<int64_t>(keep.size());
  for_rows(ctx, outer * nk, inner, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      const int64_t o = i / nk, k = keep[i % nk];
      copy_elements(*x, (o * dim + k) * inner, *y, i * inner, inner);
    }
  });
  return Status::Ok();
}

}  // namespace

Status register_layout_kernels(KernelRegistry& r) {
  DLRT_RETURN_IF_ERROR(r.add_fn("Transpose", transpose, 1));
  DLRT_RETURN_IF_ERROR(r.add_fn("Concat", concat, 1));
  DLRT_RETURN_IF_ERROR(r.add_fn("Split", split, 1));
  DLRT_RETURN_IF_ERROR(r.add_fn("Slice", slice, 1));
  DLRT_RETURN_IF_ERROR(r.add_fn("Expand", expand, 8));
  DLRT_RETURN_IF_ERROR(r.add_fn("Tile", tile, 6));
  DLRT_RETURN_IF_ERROR(r.add_fn("Pad", pad, 1));
  DLRT_RETURN_IF_ERROR(r.add_fn("DepthToSpace", depth_to_space, 1));
  DLRT_RETURN_IF_ERROR(r.add_fn("SpaceToDepth", space_to_depth, 1));
  DLRT_RETURN_IF_ERROR(r.add_fn("Col2Im", col2im, 18));
  DLRT_RETURN_IF_ERROR(r.add_fn("Trilu", trilu, 14));
  DLRT_RETURN_IF_ERROR(r.add_fn("ReverseSequence", reverse_sequence, 10));
  DLRT_RETURN_IF_ERROR(r.add_fn("Compress", compress, 9));
  return Status::Ok();
}

}  // namespace dlrt::cpu
