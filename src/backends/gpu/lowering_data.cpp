// Lowering of the shape and data-movement ops (lowering.h): Reshape and its
// kin as aliases, Transpose, Concat, Split, Slice, Expand, Gather, Resize.
#include "backends/gpu/lowering_internal.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <optional>

namespace dlrt::gpu::lowering_detail {

Status lower_reshape(LowerCtx& c, const ir::Node& n) {
  ir::ValueId x = n.inputs[0];
  const Shape& sx = c.shape(x);
  Shape out;
  if (n.op_type == "Reshape") {
    std::vector<int64_t> want;
    if (n.opset < 5) want = n.attr_ints("shape");
    else {
      DLRT_ASSIGN_OR_RETURN(want, ints_of(c.host(n.inputs[1]), n, "shape"));
    }
    bool allowzero = n.attr_int("allowzero", 0) != 0;
    int infer = -1;
    int64_t known = 1;
    for (size_t i = 0; i < want.size(); ++i) {
      int64_t d = want[i];
      if (d == 0 && !allowzero) {
        if (i >= sx.size()) return bad(n, "0 in shape refers past the input's rank");
        d = sx[i];
      }
      if (d == -1) {
        if (infer >= 0) return bad(n, "more than one -1 in shape");
        infer = static_cast<int>(i);
        out.push_back(1);
        continue;
      }
      if (d < 0) return bad(n, "negative dimension in shape");
      out.push_back(d);
      known *= d;
    }
    if (infer >= 0) {
      if (known == 0 || numel(sx) % known != 0) return bad(n, "cannot infer the -1 dimension");
      out[infer] = numel(sx) / known;
    }
  } else if (n.op_type == "Flatten") {
    int64_t rank = static_cast<int64_t>(sx.size());
    int64_t axis = n.attr_int("axis", 1);
    if (axis < 0) axis += rank;
    if (axis < 0 || axis > rank) return bad(n, "axis out of range");
    int64_t a = 1, b = 1;
    for (int64_t i = 0; i < rank; ++i) (i < axis ? a : b) *= sx[i];
    out = {a, b};
  } else if (n.op_type == "Squeeze") {
    std::vector<int64_t> axes;
    if (n.opset < 13) axes = n.attr_ints("axes");
    else if (n.inputs.size() > 1 && n.inputs[1] != ir::kNoValue) {
      DLRT_ASSIGN_OR_RETURN(axes, ints_of(c.host(n.inputs[1]), n, "axes"));
    }
    int64_t rank = static_cast<int64_t>(sx.size());
    std::vector<bool> drop(rank, false);
    if (axes.empty())
      for (int64_t i = 0; i < rank; ++i) drop[i] = sx[i] == 1;
    for (auto a : axes) {
      DLRT_ASSIGN_OR_RETURN(int64_t ax, norm_axis(a, rank, n));
      if (sx[ax] != 1) return bad(n, "cannot squeeze a dimension that is not 1");
      drop[ax] = true;
    }
    for (int64_t i = 0; i < rank; ++i)
      if (!drop[i]) out.push_back(sx[i]);
  } else {  // Unsqueeze
    std::vector<int64_t> axes;
    if (n.opset < 13) axes = n.attr_ints("axes");
    else {
      DLRT_ASSIGN_OR_RETURN(axes, ints_of(c.host(n.inputs[1]), n, "axes"));
    }
    int64_t rank = static_cast<int64_t>(sx.size() + axes.size());
    std::vector<bool> ins(rank, false);
    for (auto a : axes) {
      DLRT_ASSIGN_OR_RETURN(int64_t ax, norm_axis(a, rank, n));
      if (ins[ax]) return bad(n, "repeated axis");
      ins[ax] = true;
    }
    size_t j = 0;
    for (int64_t i = 0; i < rank; ++i) out.push_back(ins[i] ? 1 : sx[j++]);
  }
  if (numel(out) != numel(sx)) return bad(n, "element count changes");
  return c.alias(n.outputs[0], x, out);
}

Status lower_transpose(LowerCtx& c, const ir::Node& n) {
  ir::ValueId x = n.inputs[0];
  const Shape& sx = c.shape(x);
  size_t rank = sx.size();
  std::vector<int64_t> perm = n.attr_ints("perm");
  if (perm.empty())
    for (size_t i = 0; i < rank; ++i) perm.push_back(static_cast<int64_t>(rank - 1 - i));
  if (perm.size() != rank) return bad(n, "perm has the wrong length");
  std::vector<bool> seen(rank, false);
  Shape out(rank);
  auto st = contiguous_strides(sx);
  std::vector<int64_t> src(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t p = perm[i];
    if (p < 0 || p >= static_cast<int64_t>(rank) || seen[p]) return bad(n, "perm is not a permutation");
    seen[p] = true;
    out[i] = sx[p];
    src[i] = st[p];
  }
  DLRT_ASSIGN_OR_RETURN(int xs, c.slot_of(x));
  DLRT_ASSIGN_OR_RETURN(int ys, c.define(n.outputs[0], out, c.dtype(x)));
  return emit_copy(c, n, c.dtype(x), xs, 0, ys, 0, out, src, contiguous_strides(out));
}

Status lower_concat(LowerCtx& c, const ir::Node& n) {
  std::vector<ir::ValueId> ins;
  for (auto v : n.inputs)
    if (v != ir::kNoValue) ins.push_back(v);
  if (ins.empty()) return bad(n, "no inputs");
  Shape out = c.shape(ins[0]);
  int64_t rank = static_cast<int64_t>(out.size());
  DLRT_ASSIGN_OR_RETURN(int64_t axis, norm_axis(n.attr_int("axis", 0), rank, n));
  DType t = c.dtype(ins[0]);
  out[axis] = 0;
  for (auto v : ins) {
    const Shape& s = c.shape(v);
    if (static_cast<int64_t>(s.size()) != rank || c.dtype(v) != t) return bad(n, "inputs differ in rank or type");
    for (int64_t i = 0; i < rank; ++i)
      if (i != axis && s[i] != out[i]) return bad(n, "inputs differ outside the axis");
    out[axis] += s[axis];
  }
  std::vector<int> slots;
  for (auto v : ins) {
    DLRT_ASSIGN_OR_RETURN(int s, c.slot_of(v));
    slots.push_back(s);
  }
  DLRT_ASSIGN_OR_RETURN(int ys, c.define(n.outputs[0], out, t));
  auto ost = contiguous_strides(out);
  int64_t off = 0;
  for (size_t i = 0; i < ins.size(); ++i) {
    const Shape& s = c.shape(ins[i]);
    DLRT_RETURN_IF_ERROR(emit_copy(c, n, t, slots[i], 0, ys, off * ost[axis], s, contiguous_strides(s), ost));
    off += s[axis];
  }
  return Status::Ok();
}

Status lower_split(LowerCtx& c, const ir::Node& n) {
  ir::ValueId x = n.inputs[0];
  const Shape& sx = c.shape(x);
  int64_t rank = static_cast<int64_t>(sx.size());
  DLRT_ASSIGN_OR_RETURN(int64_t axis, norm_axis(n.attr_int("axis", 0), rank, n));
  std::vector<int64_t> split;
  if (n.opset < 13) split = n.attr_ints("split");
  else if (n.inputs.size() > 1 && n.inputs[1] != ir::kNoValue) {
    DLRT_ASSIGN_OR_RETURN(split, ints_of(c.host(n.inputs[1]), n, "split"));
  }
  int64_t parts = static_cast<int64_t>(n.outputs.size());
  if (split.empty()) {
    int64_t each = (sx[axis] + parts - 1) / parts;
    for (int64_t i = 0; i < parts; ++i) split.push_back(std::max<int64_t>(0, std::min(each, sx[axis] - i * each)));
  }
  if (static_cast<int64_t>(split.size()) != parts) return bad(n, "split count differs from the outputs");
  int64_t total = 0;
  for (auto s : split) {
    if (s < 0) return bad(n, "negative split");
    total += s;
  }
  if (total != sx[axis]) return bad(n, "split sizes do not add up");
  DLRT_ASSIGN_OR_RETURN(int xs, c.slot_of(x));
  auto st = contiguous_strides(sx);
  int64_t off = 0;
  for (int64_t i = 0; i < parts; ++i) {
    Shape so = sx;
    so[axis] = split[i];
    if (n.outputs[i] != ir::kNoValue) {
      DLRT_ASSIGN_OR_RETURN(int ys, c.define(n.outputs[i], so, c.dtype(x)));
      DLRT_RETURN_IF_ERROR(emit_copy(c, n, c.dtype(x), xs, off * st[axis], ys, 0, so, st, contiguous_strides(so)));
    }
    off += split[i];
  }
  return Status::Ok();
}

Status lower_slice(LowerCtx& c, const ir::Node& n) {
  ir::ValueId x = n.inputs[0];
  const Shape& sx = c.shape(x);
  int64_t rank = static_cast<int64_t>(sx.size());
  std::vector<int64_t> starts, ends, axes, steps;
  if (n.opset < 10) {
    starts = n.attr_ints("starts");
    ends = n.attr_ints("ends");
    axes = n.attr_ints("axes");
  } else {
    DLRT_ASSIGN_OR_RETURN(starts, ints_of(c.host(n.inputs[1]), n, "starts"));
    DLRT_ASSIGN_OR_RETURN(ends, ints_of(c.host(n.inputs[2]), n, "ends"));
    if (n.inputs.size() > 3 && n.inputs[3] != ir::kNoValue) {
      DLRT_ASSIGN_OR_RETURN(axes, ints_of(c.host(n.inputs[3]), n, "axes"));
    }
    if (n.inputs.size() > 4 && n.inputs[4] != ir::kNoValue) {
      DLRT_ASSIGN_OR_RETURN(steps, ints_of(c.host(n.inputs[4]), n, "steps"));
    }
  }
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    return bad(n, "starts, ends, axes and steps differ in length");
  std::vector<int64_t> begin(rank, 0), step(rank, 1);
  Shape out = sx;
  std::vector<bool> seen(rank, false);
  for (size_t i = 0; i < starts.size(); ++i) {
    DLRT_ASSIGN_OR_RETURN(int64_t a, norm_axis(axes[i], rank, n));
    if (seen[a]) return bad(n, "repeated axis");
    seen[a] = true;
    int64_t d = sx[a], s = steps[i];
    if (s == 0) return bad(n, "step 0");
    int64_t b = starts[i], e = ends[i];
    if (b < 0) b += d;
    if (e < 0) e += d;
    int64_t len;
    if (s > 0) {
      b = std::clamp<int64_t>(b, 0, d);
      e = std::clamp<int64_t>(e, 0, d);
      len = e > b ? (e - b + s - 1) / s : 0;
    } else {
      b = std::clamp<int64_t>(b, -1, d - 1);
      e = std::clamp<int64_t>(e, -1, d - 1);
      len = b > e ? (b - e + (-s) - 1) / (-s) : 0;
    }
    begin[a] = len > 0 ? b : 0;
    step[a] = s;
    out[a] = len;
  }
  auto st = contiguous_strides(sx);
  int64_t off = 0;
  std::vector<int64_t> src(rank);
  for (int64_t i = 0; i < rank; ++i) {
    off += begin[i] * st[i];
    src[i] = st[i] * step[i];
  }
  DLRT_ASSIGN_OR_RETURN(int xs, c.slot_of(x));
  DLRT_ASSIGN_OR_RETURN(int ys, c.define(n.outputs[0], out, c.dtype(x)));
  return emit_copy(c, n, c.dtype(x), xs, off, ys, 0, out, src, contiguous_strides(out));
}

Status lower_expand(LowerCtx& c, const ir::Node& n) {
  ir::ValueId x = n.inputs[0];
  DLRT_ASSIGN_OR_RETURN(std::vector<int64_t> want, ints_of(c.host(n.inputs[1]), n, "shape"));
  DLRT_ASSIGN_OR_RETURN(Shape out, broadcast_shape({c.shape(x), Shape(want)}, n));
  DLRT_ASSIGN_OR_RETURN(int xs, c.slot_of(x));
  DLRT_ASSIGN_OR_RETURN(int ys, c.define(n.outputs[0], out, c.dtype(x)));
  return emit_copy(c, n, c.dtype(x), xs, 0, ys, 0, out, broadcast_strides(c.shape(x), out), contiguous_strides(out));
}

Status lower_gather(LowerCtx& c, const ir::Node& n) {
  ir::ValueId x = n.inputs[0], idx = n.inputs[1];
  const Shape& sx = c.shape(x);
  const Shape& si = c.shape(idx);
  int64_t rank = static_cast<int64_t>(sx.size());
  if (rank == 0) return bad(n, "data must have rank >= 1");
  DLRT_ASSIGN_OR_RETURN(int64_t axis, norm_axis(n.attr_int("axis", 0), rank, n));
  DType it = c.dtype(idx);
  if (it != DType::kInt64 && it != DType::kInt32) return bad(n, "indices must be int64 or int32");
  size_t es = elem_bytes(c.dtype(x));
  if (es != 4 && es != 8) return unsup(n, "element size not supported");
  int64_t axis_len = sx[axis];
  if (const Tensor* h = c.host(idx)) {  // known indices: check them here
    DLRT_ASSIGN_OR_RETURN(auto v, ints_of(h, n, "indices"));
    for (auto k : v)
      if (k < -axis_len || k >= axis_len) return bad(n, "index " + std::to_string(k) + " out of range");
  }
  Shape out(sx.begin(), sx.begin() + axis);
  out.insert(out.end(), si.begin(), si.end());
  out.insert(out.end(), sx.begin() + axis + 1, sx.end());
  int64_t inner = 1;
  for (int64_t i = axis + 1; i < rank; ++i) inner *= sx[i];
  DLRT_ASSIGN_OR_RETURN(int xs, c.slot_of(x));
  DLRT_ASSIGN_OR_RETURN(int is, c.slot_of(idx));
  DLRT_ASSIGN_OR_RETURN(int ys, c.define(n.outputs[0], out, c.dtype(x)));
  int64_t total = numel(out);
  if (total == 0) return Status::Ok();
  if (!fits(total) || !fits(numel(sx))) return unsup(n, "too large");
  std::string k = std::string("gather_") + (es == 4 ? "4" : "8") + (it == DType::kInt64 ? "_i64" : "_i32");
  Launch l = elementwise_launch(k.c_str(), total);
  l.slot(xs).slot(is).slot(ys).val(static_cast<int32_t>(std::max<int64_t>(1, numel(si))))
      .val(static_cast<int32_t>(std::max<int64_t>(1, inner))).val(static_cast<int32_t>(axis_len))
      .val(static_cast<int32_t>(total));
  c.launch(std::move(l));
  return Status::Ok();
}

// The Resize modes the resize_f32 kernel runs, with its codes for them (placement refuses
// the others, see static_shape_reason).
const std::map<std::string, int32_t>& resize_coord_codes() {
  static const std::map<std::string, int32_t> codes = {{"half_pixel", 0}, {"asymmetric", 1}, {"align_corners", 2},
                                                      {"pytorch_half_pixel", 3}, {"tf_half_pixel_for_nn", 4}};
  return codes;
}
const std::map<std::string, int32_t>& resize_nearest_codes() {
  static const std::map<std::string, int32_t> codes = {
      {"round_prefer_floor", 0}, {"round_prefer_ceil", 1}, {"floor", 2}, {"ceil", 3}};
  return codes;
}

Status lower_resize(LowerCtx& c, const ir::Node& n) {
  ir::ValueId x = n.inputs[0];
  const Shape& sx = c.shape(x);
  if (sx.size() != 4) return unsup(n, "only 4-D Resize");
  std::string mode = n.attr_string("mode", "nearest");
  std::string coord = n.attr_string("coordinate_transformation_mode", "half_pixel");
  std::string nearest = n.attr_string("nearest_mode", "round_prefer_floor");
  std::vector<float> scales;
  std::vector<int64_t> sizes;
  if (n.inputs.size() > 2 && n.inputs[2] != ir::kNoValue) {
    const Tensor* t = c.host(n.inputs[2]);
    if (!t) return unsup(n, "scales must be known on the host");
    if (t->dtype() != DType::kFloat32) return bad(n, "scales must be float32");
    scales.assign(t->data<float>(), t->data<float>() + t->size());
  }
  if (n.inputs.size() > 3 && n.inputs[3] != ir::kNoValue) {
    DLRT_ASSIGN_OR_RETURN(sizes, ints_of(c.host(n.inputs[3]), n, "sizes"));
  }
  if (n.has_attr("axes")) return unsup(n, "axes attribute");
  Shape out = sx;
  float sh, sw;
  if (!sizes.empty()) {
    if (sizes.size() != 4) return bad(n, "sizes must have 4 elements");
    out = sizes;
    sh = static_cast<float>(out[2]) / static_cast<float>(sx[2]);
    sw = static_cast<float>(out[3]) / static_cast<float>(sx[3]);
  } else if (scales.size() == 4) {
    if (scales[0] != 1.0f || scales[1] != 1.0f) return unsup(n, "scaling N or C");
    for (int i = 2; i < 4; ++i) {
      if (!(scales[i] > 0)) return bad(n, "scales must be positive");
      out[i] = static_cast<int64_t>(std::floor(static_cast<double>(sx[i]) * scales[i]));
    }
    sh = scales[2];
    sw = scales[3];
  } else {
    return bad(n, "needs 4 scales or 4 sizes");
  }
  if (out[0] != sx[0] || out[1] != sx[1]) return unsup(n, "scaling N or C");
  ResizeArgs p;
  p.C = static_cast<int32_t>(sx[0] * sx[1]);
  p.H = static_cast<int32_t>(sx[2]);
  p.W = static_cast<int32_t>(sx[3]);
  p.OH = static_cast<int32_t>(out[2]);
  p.OW = static_cast<int32_t>(out[3]);
  p.linear = mode == "linear";
  auto ci = resize_coord_codes().find(coord);
  auto ni = resize_nearest_codes().find(nearest);
  if (ci == resize_coord_codes().end() || ni == resize_nearest_codes().end()) return unsup(n, "coordinate/nearest mode");
  p.coord = ci->second;
  p.nearest = ni->second;
  p.scale_h = sh;
  p.scale_w = sw;
  int64_t total = numel(out);
  if (!fits(total) || !fits(numel(sx))) return unsup(n, "too large");
  p.n = static_cast<int32_t>(total);
  DLRT_ASSIGN_OR_RETURN(int xs, c.slot_of(x));
  DLRT_ASSIGN_OR_RETURN(int ys, c.define(n.outputs[0], out, DType::kFloat32));
  if (total == 0 || numel(sx) == 0) return Status::Ok();
  Launch l = elementwise_launch("resize_f32", total);
  l.slot(xs).slot(ys).val(p);
  c.launch(std::move(l));
  return Status::Ok();
}

}  // namespace dlrt::gpu::lowering_detail
