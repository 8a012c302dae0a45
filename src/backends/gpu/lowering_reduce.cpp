// Lowering of the reductions, Softmax/LogSoftmax and LayerNormalization
// (lowering.h).
#include "backends/gpu/lowering_internal.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <optional>

namespace dlrt::gpu::lowering_detail {

int32_t reduce_code(const std::string& op) {
  static const std::map<std::string, int32_t> m = {
      {"ReduceSum", 0}, {"ReduceMean", 1}, {"ReduceMax", 2}, {"ReduceMin", 3}, {"ReduceProd", 4},
      {"ReduceL1", 5}, {"ReduceL2", 6}, {"ReduceSumSquare", 7}, {"ReduceLogSum", 8}, {"ReduceLogSumExp", 9},
      {"GlobalAveragePool", 1}, {"GlobalMaxPool", 2}};
  auto it = m.find(op);
  return it == m.end() ? -1 : it->second;
}

// Opset at which a reduction's axes moved from attribute to input.
int axes_input_opset(const std::string& op) { return op == "ReduceSum" ? 13 : 18; }

Status emit_reduce(LowerCtx& c, const ir::Node& n, int32_t code, const std::vector<bool>& reduced, bool keepdims) {
  ir::ValueId x = n.inputs[0];
  const Shape& sx = c.shape(x);
  auto st = contiguous_strides(sx);
  Shape kd, rd, out;
  std::vector<int64_t> ks, rs;
  for (size_t i = 0; i < sx.size(); ++i) {
    if (reduced[i]) {
      rd.push_back(sx[i]);
      rs.push_back(st[i]);
      if (keepdims) out.push_back(1);
    } else {
      kd.push_back(sx[i]);
      ks.push_back(st[i]);
      out.push_back(sx[i]);
    }
  }
  DLRT_ASSIGN_OR_RETURN(int xs, c.slot_of(x));
  DLRT_ASSIGN_OR_RETURN(int ys, c.define(n.outputs[0], out, DType::kFloat32));
  if (numel(out) == 0) return Status::Ok();
  DLRT_ASSIGN_OR_RETURN(GeoArgs keep, make_geo(kd, {ks}, n));
  DLRT_ASSIGN_OR_RETURN(GeoArgs red, make_geo(rd, {rs}, n));
  if (numel(rd) == 0) red.n = 0;
  Launch l = elementwise_launch("reduce_f32", keep.n);
  l.slot(xs).slot(ys).val(keep).val(red).val(code);
  c.launch(std::move(l));
  return Status::Ok();
}

Status lower_reduce(LowerCtx& c, const ir::Node& n) {
  ir::ValueId x = n.inputs[0];
  int64_t rank = static_cast<int64_t>(c.shape(x).size());
  int32_t code = reduce_code(n.op_type);
  if (n.op_type == "GlobalAveragePool" || n.op_type == "GlobalMaxPool") {
    if (rank < 3) return bad(n, "input must have rank >= 3");
    std::vector<bool> red(rank, true);
    red[0] = red[1] = false;
    return emit_reduce(c, n, code, red, true);
  }
  std::vector<int64_t> axes;
  if (n.opset >= axes_input_opset(n.op_type)) {
    if (n.inputs.size() > 1 && n.inputs[1] != ir::kNoValue) {
      DLRT_ASSIGN_OR_RETURN(axes, ints_of(c.host(n.inputs[1]), n, "axes"));
    }
  } else {
    axes = n.attr_ints("axes");
  }
  bool keepdims = n.attr_int("keepdims", 1) != 0;
  if (axes.empty() && n.attr_int("noop_with_empty_axes", 0) != 0) return c.alias(n.outputs[0], x, c.shape(x));
  std::vector<bool> red(rank, axes.empty());
  for (auto a : axes) {
    DLRT_ASSIGN_OR_RETURN(int64_t ax, norm_axis(a, rank, n));
    red[ax] = true;
  }
  return emit_reduce(c, n, code, red, keepdims);
}

size_t row_local_size(const LowerCtx& c, int64_t len) {
  size_t cap = std::min<size_t>(256, pow2_at_most(std::max<size_t>(1, c.device().max_wg)));
  size_t l = 1;
  while (l < static_cast<size_t>(len) && l < cap) l *= 2;
  return l;
}

Status lower_softmax(LowerCtx& c, const ir::Node& n) {
  ir::ValueId x = n.inputs[0];
  const Shape& sx = c.shape(x);
  int64_t rank = static_cast<int64_t>(sx.size());
  DLRT_ASSIGN_OR_RETURN(int64_t axis, norm_axis(n.attr_int("axis", n.opset < 13 ? 1 : -1), rank, n));
  int64_t outer = 1, len = 1, inner = 1;
  for (int64_t i = 0; i < rank; ++i) {
    if (i < axis) outer *= sx[i];
    else if (n.opset < 13 || i == axis) len *= sx[i];
    else inner *= sx[i];
  }
  DLRT_ASSIGN_OR_RETURN(int xs, c.slot_of(x));
  DLRT_ASSIGN_OR_RETURN(int ys, c.define(n.outputs[0], sx, DType::kFloat32));
  int64_t rows = outer * inner;
  if (rows == 0 || len == 0) return Status::Ok();
  if (!fits(numel(sx))) return unsup(n, "too large");
  size_t lsz = row_local_size(c, len);
  Launch l;
  l.kernel = "softmax_f32";
  l.slot(xs).slot(ys).val(static_cast<int32_t>(len)).val(static_cast<int32_t>(inner))
      .val(static_cast<int32_t>(n.op_type == "LogSoftmax"));
  l.gws[0] = static_cast<size_t>(rows) * lsz;
  l.lws[0] = lsz;
  c.launch(std::move(l));
  return Status::Ok();
}

Status lower_layernorm(LowerCtx& c, const ir::Node& n) {
  for (size_t i = 1; i < n.outputs.size(); ++i)
    if (n.outputs[i] != ir::kNoValue) return unsup(n, "Mean/InvStdDev outputs");
  ir::ValueId x = n.inputs[0];
  const Shape& sx = c.shape(x);
  int64_t rank = static_cast<int64_t>(sx.size());
  DLRT_ASSIGN_OR_RETURN(int64_t axis, norm_axis(n.attr_int("axis", -1), rank, n));
  int64_t rows = 1, len = 1;
  for (int64_t i = 0; i < rank; ++i) (i < axis ? rows : len) *= sx[i];
  if (numel(c.shape(n.inputs[1])) != len) return unsup(n, "Scale must have the normalized shape");
  bool has_bias = n.inputs.size() > 2 && n.inputs[2] != ir::kNoValue;
  if (has_bias && numel(c.shape(n.inputs[2])) != len) return unsup(n, "B must have the normalized shape");
  DLRT_ASSIGN_OR_RETURN(int xs, c.slot_of(x));
  DLRT_ASSIGN_OR_RETURN(int ss, c.slot_of(n.inputs[1]));
  int bs = ss;
  if (has_bias) {
    DLRT_ASSIGN_OR_RETURN(bs, c.slot_of(n.inputs[2]));
  }
  DLRT_ASSIGN_OR_RETURN(int ys, c.define(n.outputs[0], sx, DType::kFloat32));
  if (rows == 0 || len == 0) return Status::Ok();
  if (!fits(numel(sx))) return unsup(n, "too large");
  size_t lsz = row_local_size(c, len);
  Launch l;
  l.kernel = "layernorm_f32";
  l.slot(xs).slot(ss).slot(bs).slot(ys).val(static_cast<int32_t>(len)).val(n.attr_float("epsilon", 1e-5f))
      .val(static_cast<int32_t>(has_bias));
  l.gws[0] = static_cast<size_t>(rows) * lsz;
  l.lws[0] = lsz;
  c.launch(std::move(l));
  return Status::Ok();
}

}  // namespace dlrt::gpu::lowering_detail
