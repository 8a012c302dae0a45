// Shapes, strides, kernel geometries and copies for the GPU lowering
// (lowering_internal.h).
#include "backends/gpu/lowering_internal.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <optional>

namespace dlrt::gpu::lowering_detail {

Status bad(const ir::Node& n, const std::string& msg) { return InvalidArgument(n.describe() + ": " + msg); }
Status unsup(const ir::Node& n, const std::string& msg) { return Unsupported(n.describe() + ": " + msg); }

int64_t numel(const Shape& s) {
  int64_t n = 1;
  for (auto d : s) n *= d;
  return n;
}

std::vector<int64_t> contiguous_strides(const Shape& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (int i = static_cast<int>(s.size()) - 2; i >= 0; --i) st[i] = st[i + 1] * s[i + 1];
  return st;
}

// Strides of `in` broadcast to `out` (right-aligned; 0 on broadcast dims).
std::vector<int64_t> broadcast_strides(const Shape& in, const Shape& out) {
  std::vector<int64_t> st(out.size(), 0);
  auto cs = contiguous_strides(in);
  size_t off = out.size() - in.size();
  for (size_t i = 0; i < in.size(); ++i) st[off + i] = in[i] == 1 && out[off + i] != 1 ? 0 : cs[i];
  return st;
}

Result<Shape> broadcast_shape(const std::vector<Shape>& shapes, const ir::Node& n) {
  size_t rank = 0;
  for (auto& s : shapes) rank = std::max(rank, s.size());
  Shape out(rank, 1);
  for (auto& s : shapes)
    for (size_t i = 0; i < s.size(); ++i) {
      int64_t& o = out[rank - s.size() + i];
      int64_t d = s[i];
      if (d == o || d == 1) continue;
      if (o == 1) o = d;
      else return bad(n, "shapes cannot be broadcast together");
    }
  return out;
}

// Builds a geometry over `dims` with up to four stride sets, dropping size-1
// dims and merging dims that are contiguous for every operand.
Result<GeoArgs> make_geo(const Shape& dims, const std::vector<std::vector<int64_t>>& strides, const ir::Node& n) {
  GeoArgs g;
  int64_t total = numel(dims);
  if (total > kMaxIndex) return unsup(n, "tensor too large for 32-bit indexing");
  std::vector<int64_t> d2;
  std::vector<std::vector<int64_t>> s2(strides.size());
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == 1) continue;
    bool merge = !d2.empty();
    for (size_t k = 0; k < strides.size() && merge; ++k) merge = s2[k].back() == strides[k][i] * dims[i];
    if (merge) {
      d2.back() *= dims[i];
      for (size_t k = 0; k < strides.size(); ++k) s2[k].back() = strides[k][i];
    } else {
      d2.push_back(dims[i]);
      for (size_t k = 0; k < strides.size(); ++k) s2[k].push_back(strides[k][i]);
    }
  }
  if (d2.empty()) {
    d2.push_back(1);
    for (auto& s : s2) s.push_back(0);
  }
  if (d2.size() > kMaxRank) return unsup(n, "more than 6 non-mergeable dimensions");
  g.rank = static_cast<int32_t>(d2.size());
  g.n = static_cast<int32_t>(total);
  for (size_t i = 0; i < d2.size(); ++i) {
    g.dims[i] = static_cast<int32_t>(d2[i]);
    for (size_t k = 0; k < s2.size(); ++k) {
      if (std::abs(s2[k][i]) > kMaxIndex) return unsup(n, "stride too large for 32-bit indexing");
      g.s[k][i] = static_cast<int32_t>(s2[k][i]);
    }
  }
  return g;
}

Result<std::vector<int64_t>> ints_of(const Tensor* t, const ir::Node& n, const char* what) {
  if (!t) return unsup(n, std::string(what) + " must be known on the host");
  std::vector<int64_t> v(t->size());
  if (t->dtype() == DType::kInt64) std::copy(t->data<int64_t>(), t->data<int64_t>() + t->size(), v.begin());
  else if (t->dtype() == DType::kInt32) std::copy(t->data<int32_t>(), t->data<int32_t>() + t->size(), v.begin());
  else return bad(n, std::string(what) + " must be int64 or int32");
  return v;
}

Result<float> float_scalar(const Tensor* t, const ir::Node& n, const char* what) {
  if (!t) return unsup(n, std::string(what) + " must be known on the host");
  if (t->dtype() != DType::kFloat32 || t->size() != 1) return bad(n, std::string(what) + " must be a float32 scalar");
  return t->data<float>()[0];
}

Result<int64_t> norm_axis(int64_t axis, int64_t rank, const ir::Node& n) {
  if (axis < -rank || (axis >= rank && !(rank == 0 && axis == 0)))
    return bad(n, "axis " + std::to_string(axis) + " out of range for rank " + std::to_string(rank));
  return axis < 0 ? axis + rank : axis;
}

size_t elem_bytes(DType t) { return dtype_size(t); }

const char* copy_kernel(DType t) {
  switch (dtype_size(t)) {
    case 1: return "copy_nd_1";
    case 4: return "copy_nd_4";
    case 8: return "copy_nd_8";
    default: return nullptr;
  }
}

size_t pow2_at_most(size_t v) {
  size_t p = 1;
  while (p * 2 <= v) p *= 2;
  return p;
}

// Emits copy_nd: dst[dst_off + sum c*dst_strides] = src[src_off + sum c*src_strides].
Status emit_copy(LowerCtx& c, const ir::Node& n, DType t, int src, int64_t src_off, int dst, int64_t dst_off,
                 const Shape& dims, const std::vector<int64_t>& src_strides, const std::vector<int64_t>& dst_strides) {
  if (numel(dims) == 0) return Status::Ok();
  const char* k = copy_kernel(t);
  if (!k) return unsup(n, "element size not supported");
  DLRT_ASSIGN_OR_RETURN(GeoArgs g, make_geo(dims, {src_strides, dst_strides}, n));
  if (src_off > kMaxIndex || dst_off > kMaxIndex) return unsup(n, "offset too large");
  Launch l;
  l.kernel = k;
  l.slot(src).val(static_cast<int32_t>(src_off)).slot(dst).val(static_cast<int32_t>(dst_off)).val(g);
  l.gws[0] = static_cast<size_t>(g.n);
  c.launch(std::move(l));
  return Status::Ok();
}

Launch elementwise_launch(const char* kernel, int64_t count) {
  Launch l;
  l.kernel = kernel;
  l.gws[0] = static_cast<size_t>(count);
  return l;
}

}  // namespace dlrt::gpu::lowering_detail
