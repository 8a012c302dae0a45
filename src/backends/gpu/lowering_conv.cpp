// Lowering of Conv, ConvTranspose and the pools (lowering.h).
#include "backends/gpu/lowering_internal.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <optional>

namespace dlrt::gpu::lowering_detail {

struct Window {
  std::vector<int64_t> kernel, strides, dilations, pads;  // pads: begins then ends
  std::vector<int64_t> out;
};

Result<Window> window(const ir::Node& n, const Shape& x, const std::vector<int64_t>& kernel, bool ceil_mode) {
  size_t sp = x.size() - 2;
  Window w;
  w.kernel = kernel;
  if (w.kernel.size() != sp) return bad(n, "kernel_shape rank does not match the input");
  w.strides = n.attr_ints("strides", std::vector<int64_t>(sp, 1));
  w.dilations = n.attr_ints("dilations", std::vector<int64_t>(sp, 1));
  w.pads = n.attr_ints("pads", std::vector<int64_t>(2 * sp, 0));
  if (w.strides.size() != sp || w.dilations.size() != sp || w.pads.size() != 2 * sp) return bad(n, "bad strides/dilations/pads");
  std::string ap = n.attr_string("auto_pad", "NOTSET");
  for (size_t i = 0; i < sp; ++i) {
    if (w.strides[i] <= 0 || w.dilations[i] <= 0 || w.kernel[i] <= 0) return bad(n, "non-positive window parameter");
    int64_t ext = (w.kernel[i] - 1) * w.dilations[i] + 1;
    int64_t in = x[2 + i];
    int64_t o;
    if (ap == "SAME_UPPER" || ap == "SAME_LOWER") {
      o = (in + w.strides[i] - 1) / w.strides[i];
      int64_t total = std::max<int64_t>(0, (o - 1) * w.strides[i] + ext - in);
      int64_t small = total / 2, big = total - small;
      w.pads[i] = ap == "SAME_UPPER" ? small : big;
      w.pads[i + sp] = ap == "SAME_UPPER" ? big : small;
    } else if (ap == "VALID") {
      w.pads[i] = w.pads[i + sp] = 0;
      o = (in - ext) / w.strides[i] + 1;
    } else if (ap == "NOTSET") {
      int64_t span = in + w.pads[i] + w.pads[i + sp] - ext;
      if (span < 0) return bad(n, "window larger than the padded input");
      o = ceil_mode ? (span + w.strides[i] - 1) / w.strides[i] + 1 : span / w.strides[i] + 1;
      if (ceil_mode && (o - 1) * w.strides[i] >= in + w.pads[i]) --o;
    } else {
      return bad(n, "unknown auto_pad '" + ap + "'");
    }
    if (o < 0) return bad(n, "negative output size");
    w.out.push_back(o);
  }
  return w;
}

// The geometry fields the conv-like kernels' argument structs share.
template <typename Args>
void set_geometry(Args& a, int64_t C, int64_t H, int64_t W, int64_t OH, int64_t OW, const int64_t k[2],
                  const int64_t s[2], const int64_t p[2], const int64_t d[2]) {
  a.C = static_cast<int32_t>(C);
  a.H = static_cast<int32_t>(H);
  a.W = static_cast<int32_t>(W);
  a.OH = static_cast<int32_t>(OH);
  a.OW = static_cast<int32_t>(OW);
  a.KH = static_cast<int32_t>(k[0]);
  a.KW = static_cast<int32_t>(k[1]);
  a.sh = static_cast<int32_t>(s[0]);
  a.sw = static_cast<int32_t>(s[1]);
  a.ph = static_cast<int32_t>(p[0]);
  a.pw = static_cast<int32_t>(p[1]);
  a.dh = static_cast<int32_t>(d[0]);
  a.dw = static_cast<int32_t>(d[1]);
}

Status lower_conv(LowerCtx& c, const ir::Node& n, const Epilogue& epi, ir::ValueId out) {
  const Shape& sx = c.shape(n.inputs[0]);
  const Shape& sw = c.shape(n.inputs[1]);
  if (sx.size() != 4 || sw.size() != 4) return unsup(n, "only 2-D convolution");
  int64_t N = sx[0], C = sx[1], H = sx[2], W = sx[3], M = sw[0];
  int64_t G = n.attr_int("group", 1);
  if (G <= 0 || C % G != 0 || M % G != 0 || sw[1] != C / G) return bad(n, "channels do not match the weights and group");
  DLRT_ASSIGN_OR_RETURN(Window w, window(n, sx, n.attr_ints("kernel_shape", {sw[2], sw[3]}), false));
  if (w.kernel[0] != sw[2] || w.kernel[1] != sw[3]) return bad(n, "kernel_shape does not match the weights");
  int64_t OH = w.out[0], OW = w.out[1];
  bool has_bias = n.inputs.size() > 2 && n.inputs[2] != ir::kNoValue;
  if (has_bias && numel(c.shape(n.inputs[2])) != M) return bad(n, "bias must have M elements");
  DLRT_ASSIGN_OR_RETURN(int xs, c.slot_of(n.inputs[0]));
  DLRT_ASSIGN_OR_RETURN(int ws, c.slot_of(n.inputs[1]));
  int bs = -1;
  if (has_bias) {
    DLRT_ASSIGN_OR_RETURN(bs, c.slot_of(n.inputs[2]));
  }
  DLRT_ASSIGN_OR_RETURN(int ys, c.define(out, {N, M, OH, OW}, DType::kFloat32));
  int64_t P = OH * OW;
  if (N == 0 || M == 0 || P == 0) return Status::Ok();
  if (!fits(numel(sx)) || !fits(N * M * P) || !fits(numel(sw))) return unsup(n, "too large");
  if (G == C && sw[1] == 1) {  // depthwise: direct
    DwArgs d;
    set_geometry(d, C, H, W, OH, OW, w.kernel.data(), w.strides.data(), w.pads.data(), w.dilations.data());
    d.M = static_cast<int32_t>(M);
    d.mult = static_cast<int32_t>(M / C);
    d.has_bias = has_bias;
    d.act = epi.act;
    d.act_a = epi.a;
    d.act_b = epi.b;
    d.n = static_cast<int32_t>(N * M * P);
    Launch l = elementwise_launch("dwconv_f32", d.n);
    l.slot(xs).slot(ws).slot(bs >= 0 ? bs : ws).slot(ys).val(d);
    c.launch(std::move(l));
    return Status::Ok();
  }
  int64_t Cg = C / G, Mg = M / G, K = Cg * w.kernel[0] * w.kernel[1];
  bool direct = w.kernel[0] == 1 && w.kernel[1] == 1 && w.strides[0] == 1 && w.strides[1] == 1 &&
                std::all_of(w.pads.begin(), w.pads.end(), [](int64_t v) { return v == 0; });
  if (!fits(K * P)) return unsup(n, "im2col buffer too large");
  // Images per GEMM: all of them when their im2col buffer stays small enough
  // (one im2col and one batched GEMM per group), else one at a time.
  constexpr int64_t kMaxColBytes = int64_t{256} << 20;
  int64_t per = direct || (fits(N * K * P) && N * K * P * 4 <= kMaxColBytes) ? N : 1;
  int col = direct ? -1 : c.scratch(static_cast<size_t>(per * K * P) * sizeof(float));
  // Small output planes (the last stages of a CNN, batch > 1) make narrow
  // GEMMs: there the images go side by side in one wide GEMM (col is
  // K x per*P) into a scratch [Mg][per][P], copied to the output's
  // [per][M][P] order after. Wider planes run as one GEMM per image.
  constexpr int64_t kFoldBelowPlane = 1024;
  const bool fold = !direct && per > 1 && P < kFoldBelowPlane && fits(Mg * per * P);
  int folded = fold ? c.scratch(static_cast<size_t>(Mg * per * P) * sizeof(float)) : -1;
  GemmArgs p = row_major_gemm(Mg, P, K);
  p.has_bias = has_bias;
  p.bias_sm = 1;
  p.bias_sn = 0;
  p.nb2 = static_cast<int32_t>(per);
  p.c_sb2 = static_cast<int32_t>(M * P);  // batch: images; weights shared (a_sb2 = 0)
  p.b_sb2 = static_cast<int32_t>(direct ? C * H * W : K * P);
  set_epilogue(p, epi);
  for (int64_t b = 0; b < N; b += per)
    for (int64_t g = 0; g < G; ++g) {
      int64_t x_off = (b * C + g * Cg) * H * W;
      GemmArgs q = p;
      q.a_off = static_cast<int32_t>(g * Mg * K);
      q.c_off = static_cast<int32_t>((b * M + g * Mg) * P);
      q.bias_off = static_cast<int32_t>(g * Mg);
      if (direct) {
        q.b_off = static_cast<int32_t>(x_off);
        emit_gemm(c, q, ws, xs, ys, bs, static_cast<int>(per));
        continue;
      }
      ConvArgs cv;
      set_geometry(cv, Cg, H, W, OH, OW, w.kernel.data(), w.strides.data(), w.pads.data(), w.dilations.data());
      cv.x_off = static_cast<int32_t>(x_off);
      cv.kp = static_cast<int32_t>(K * P);
      cv.x_bstride = static_cast<int32_t>(C * H * W);
      cv.col_img = static_cast<int32_t>(fold ? P : K * P);
      cv.col_row = static_cast<int32_t>(fold ? per * P : P);
      cv.n = static_cast<int32_t>(per * K * P);
      cv.fast = K * P < (int64_t{1} << 22);
      cv.r_p = 1.0f / static_cast<float>(P);
      cv.r_ow = 1.0f / static_cast<float>(OW);
      cv.r_kw = 1.0f / static_cast<float>(w.kernel[1]);
      cv.r_kh = 1.0f / static_cast<float>(w.kernel[0]);
      Launch l;
      l.kernel = "im2col_f32";
      l.dims = 2;
      const size_t lw = std::min<size_t>(256, pow2_at_most(std::max<size_t>(1, c.device().max_wg)));
      l.lws[0] = lw;
      l.lws[1] = 1;
      l.gws[0] = (static_cast<size_t>(K * P) + lw - 1) / lw * lw;
      l.gws[1] = static_cast<size_t>(per);
      l.slot(xs).slot(col).val(cv);
      c.launch(std::move(l));
      if (!fold) {
        emit_gemm(c, q, ws, col, ys, bs, static_cast<int>(per));
        continue;
      }
      GemmArgs f = q;
      f.N = static_cast<int32_t>(per * P);
      f.b_sk = f.N;
      f.c_sm = f.N;
      f.c_off = 0;
      f.nb2 = 1;
      f.b_sb2 = f.c_sb2 = 0;
      emit_gemm(c, f, ws, col, folded, bs, 1);
      DLRT_RETURN_IF_ERROR(emit_copy(c, n, DType::kFloat32, folded, 0, ys, (b * M + g * Mg) * P, {per, Mg, P},
                                     {P, per * P, 1}, {M * P, P, 1}));
    }
  return Status::Ok();
}

// ConvTranspose (2-D): output size from strides, pads, dilations and
// output_padding, or pads from output_shape (ONNX's rules); a direct gather
// kernel with the bias and a fused activation.
Status lower_convtranspose(LowerCtx& c, const ir::Node& n, const Epilogue& epi, ir::ValueId out) {
  const Shape& sx = c.shape(n.inputs[0]);
  const Shape& sw = c.shape(n.inputs[1]);
  if (sx.size() != 4 || sw.size() != 4) return unsup(n, "only 2-D ConvTranspose");
  int64_t N = sx[0], C = sx[1], H = sx[2], W = sx[3];
  int64_t G = n.attr_int("group", 1);
  if (G <= 0 || C % G != 0 || sw[0] != C) return bad(n, "channels do not match the weights and group");
  int64_t Cg = C / G, Mg = sw[1], M = Mg * G;
  std::vector<int64_t> k = n.attr_ints("kernel_shape", {sw[2], sw[3]});
  std::vector<int64_t> st = n.attr_ints("strides", {1, 1}), dl = n.attr_ints("dilations", {1, 1});
  std::vector<int64_t> op = n.attr_ints("output_padding", {0, 0}), pads = n.attr_ints("pads", {0, 0, 0, 0});
  std::vector<int64_t> oshape = n.attr_ints("output_shape", {});
  std::string ap = n.attr_string("auto_pad", "NOTSET");
  if (k.size() != 2 || st.size() != 2 || dl.size() != 2 || op.size() != 2 || pads.size() != 4)
    return bad(n, "bad kernel_shape/strides/dilations/output_padding/pads");
  if (k[0] != sw[2] || k[1] != sw[3]) return bad(n, "kernel_shape does not match the weights");
  for (int i = 0; i < 2; ++i)
    if (st[i] <= 0 || dl[i] <= 0 || k[i] <= 0) return bad(n, "non-positive window parameter");
  int64_t outs[2];
  for (int i = 0; i < 2; ++i) {
    int64_t in = sx[2 + i], ext = (k[i] - 1) * dl[i] + 1;
    int64_t full = st[i] * (in - 1) + op[i] + ext;
    if (!oshape.empty()) {
      if (oshape.size() != 2 && oshape.size() != 4) return bad(n, "output_shape must have 2 (or 4) values");
      int64_t want = oshape[oshape.size() - 2 + i];
      int64_t total = full - want;
      if (total < 0) return unsup(n, "output_shape larger than the full output");
      bool upper = ap == "SAME_UPPER";
      pads[i] = upper ? total / 2 : total - total / 2;
      pads[i + 2] = total - pads[i];
    } else if (ap == "SAME_UPPER" || ap == "SAME_LOWER") {
      int64_t want = in * st[i];
      int64_t total = std::max<int64_t>(0, full - want);
      pads[i] = ap == "SAME_UPPER" ? total / 2 : total - total / 2;
      pads[i + 2] = total - pads[i];
    } else if (ap == "VALID") {
      pads[i] = pads[i + 2] = 0;
    } else if (ap != "NOTSET") {
      return bad(n, "unknown auto_pad '" + ap + "'");
    }
    outs[i] = full - pads[i] - pads[i + 2];
    if (outs[i] < 0) return bad(n, "negative output size");
  }
  bool has_bias = n.inputs.size() > 2 && n.inputs[2] != ir::kNoValue;
  if (has_bias && numel(c.shape(n.inputs[2])) != M) return bad(n, "bias must have M elements");
  DLRT_ASSIGN_OR_RETURN(int xs, c.slot_of(n.inputs[0]));
  DLRT_ASSIGN_OR_RETURN(int ws, c.slot_of(n.inputs[1]));
  int bs = -1;
  if (has_bias) {
    DLRT_ASSIGN_OR_RETURN(bs, c.slot_of(n.inputs[2]));
  }
  DLRT_ASSIGN_OR_RETURN(int ys, c.define(out, {N, M, outs[0], outs[1]}, DType::kFloat32));
  int64_t total = N * M * outs[0] * outs[1];
  if (total == 0) return Status::Ok();
  if (!fits(numel(sx)) || !fits(total) || !fits(numel(sw))) return unsup(n, "too large");
  ConvTArgs p;
  set_geometry(p, Cg, H, W, outs[0], outs[1], k.data(), st.data(), pads.data(), dl.data());
  p.M = static_cast<int32_t>(Mg);
  p.G = static_cast<int32_t>(G);
  p.has_bias = has_bias;
  p.act = epi.act;
  p.act_a = epi.a;
  p.act_b = epi.b;
  p.n = static_cast<int32_t>(total);
  Launch l = elementwise_launch("convtranspose_f32", total);
  l.slot(xs).slot(ws).slot(bs >= 0 ? bs : ws).slot(ys).val(p);
  c.launch(std::move(l));
  return Status::Ok();
}

Status lower_pool(LowerCtx& c, const ir::Node& n) {
  const Shape& sx = c.shape(n.inputs[0]);
  if (sx.size() != 4) return unsup(n, "only 2-D pooling");
  if (n.outputs.size() > 1 && n.outputs[1] != ir::kNoValue) return unsup(n, "MaxPool Indices output");
  bool is_max = n.op_type == "MaxPool";
  if (is_max && n.attr_int("storage_order", 0) != 0) return unsup(n, "storage_order");
  DLRT_ASSIGN_OR_RETURN(Window w, window(n, sx, n.attr_ints("kernel_shape"), n.attr_int("ceil_mode", 0) != 0));
  DLRT_ASSIGN_OR_RETURN(int xs, c.slot_of(n.inputs[0]));
  DLRT_ASSIGN_OR_RETURN(int ys, c.define(n.outputs[0], {sx[0], sx[1], w.out[0], w.out[1]}, DType::kFloat32));
  PoolArgs p;
  p.C = static_cast<int32_t>(sx[0] * sx[1]);
  p.H = static_cast<int32_t>(sx[2]);
  p.W = static_cast<int32_t>(sx[3]);
  p.OH = static_cast<int32_t>(w.out[0]);
  p.OW = static_cast<int32_t>(w.out[1]);
  p.KH = static_cast<int32_t>(w.kernel[0]);
  p.KW = static_cast<int32_t>(w.kernel[1]);
  p.sh = static_cast<int32_t>(w.strides[0]);
  p.sw = static_cast<int32_t>(w.strides[1]);
  p.ph = static_cast<int32_t>(w.pads[0]);
  p.pw = static_cast<int32_t>(w.pads[1]);
  p.ph_end = static_cast<int32_t>(w.pads[2]);
  p.pw_end = static_cast<int32_t>(w.pads[3]);
  p.dh = is_max ? static_cast<int32_t>(w.dilations[0]) : 1;
  p.dw = is_max ? static_cast<int32_t>(w.dilations[1]) : 1;
  if (!is_max && (w.dilations[0] != 1 || w.dilations[1] != 1)) return unsup(n, "dilated AveragePool");
  p.count_include_pad = static_cast<int32_t>(n.attr_int("count_include_pad", 0));
  int64_t total = sx[0] * sx[1] * w.out[0] * w.out[1];
  if (!fits(total) || !fits(numel(sx))) return unsup(n, "too large");
  p.n = static_cast<int32_t>(total);
  if (total == 0) return Status::Ok();
  Launch l = elementwise_launch(is_max ? "maxpool_f32" : "avgpool_f32", total);
  l.slot(xs).slot(ys).val(p);
  c.launch(std::move(l));
  return Status::Ok();
}

}  // namespace dlrt::gpu::lowering_detail
