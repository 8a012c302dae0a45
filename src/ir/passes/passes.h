// Graph optimisation passes on dlrt's IR.
//
// Every pass rewrites one Graph in place (the top-level graph; subgraphs are
// left alone) and returns how many rewrites it made. Passes never remove or
// rename graph inputs or outputs, and never drop a value a subgraph captures
// by name. The ir layer does not know any backend: constant folding runs
// nodes through an Evaluator supplied by the caller (runtime/optimize.cpp
// plugs in the CPU kernels).
//
// Two families (see runtime/optimize.h for the order they run in):
//  - standard passes keep standard ONNX ops and may run before placement:
//    constant folding, dead-node elimination, shape inference + shape-subgraph
//    folding, Conv+BatchNormalization folding, transpose elimination,
//    decomposed LayerNorm -> LayerNormalization;
//  - fusions emit com.dlrt ops (FusedConv, FusedGemm, FusedMatMul, Attention)
//    or Gelu (opset 20) that only the CPU backend runs: they run on CPU-placed
//    nodes only.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "dlrt/status.h"
#include "dlrt/tensor.h"
#include "ir/graph.h"

namespace dlrt::ir::passes {

// Computes one node on constant inputs (nullptr for an omitted input).
using Evaluator = std::function<Result<std::vector<Tensor>>(const Node& node, const std::vector<const Tensor*>& inputs)>;

struct PassContext {
  Evaluator evaluate;  // may be empty: constant folding then only folds shapes
  // Whether the target runs op/domain/opset (fusions emit only ops it has);
  // empty means everything is available.
  std::function<bool(const std::string& op, const std::string& domain, int opset)> supports;
  bool can_run(const std::string& op, const std::string& domain, int opset) const {
    return !supports || supports(op, domain, opset);
  }
  // Constant folding leaves nodes whose outputs would exceed this many bytes
  // (e.g. a ConstantOfShape of a huge size) to run time.
  int64_t max_fold_bytes = 16 << 20;
  // Constant folding leaves DequantizeLinear nodes alone (a QDQ model's
  // quantised weights stay quantised for fuse_qdq, which runs later).
  bool keep_dequantize_linear = false;
  // Optional per-node tags (e.g. the session's partition index) kept aligned
  // with graph.nodes as passes remove and replace nodes; a fused node keeps
  // the tag of the node it replaced.
  std::vector<int>* node_tags = nullptr;
  // expand-depthwise fuses only expanded planes (the depthwise conv's input)
  // of at least this many positions when their size is known (0: any).
  int64_t expand_depthwise_min_positions = 0;
  // expand-depthwise fuses only convs whose channel count is a multiple of
  // this (8: the fused kernel's 8-channel blocks; 16 where it runs 16-channel
  // blocks only, AVX-512, and the separate depthwise conv has a 16-channel
  // kernel for any count).
  int64_t expand_depthwise_channel_multiple = 8;
  // Per value (indexed by ValueId): true where the value's float32 bits must
  // be those of the ops as written, because a dynamic quantizer reads it or a
  // value computed from it (mark_dynamic_quantizer_inputs). There a fusion
  // whose kernel rounds differently from the ops it replaces is skipped: a
  // one-ulp difference ahead of DynamicQuantizeLinear's per-tensor scale can
  // move a value by a whole integer step, which every later layer carries on.
  // Values past the end (made by a pass) are not marked.
  std::vector<bool> exact_values;
  bool keeps_rounding(ValueId v) const {
    return v >= 0 && static_cast<size_t>(v) < exact_values.size() && exact_values[v];
  }
  // Rewrites per pass name, for logs and tests.
  std::map<std::string, int> fired;
  void count(const std::string& pass, int n = 1) {
    if (n > 0) fired[pass] += n;
  }
};

// Fills ctx.exact_values: every value that a dynamic quantizer
// (DynamicQuantizeLinear; com.microsoft DynamicQuantizeMatMul, and
// DynamicQuantizeLSTM's X and initial hidden state) quantizes, and every
// value those are computed from. Returns how many values were marked.
int mark_dynamic_quantizer_inputs(const Graph& g, PassContext& ctx);

// Nodes whose outputs nobody reads (not a graph output, no node input, no
// subgraph capture) are removed; constants nobody reads any more are freed.
int eliminate_dead_nodes(Graph& g, PassContext& ctx);

// Nodes whose inputs are all constants are computed once (through
// ctx.evaluate) and become constants. Nondeterministic ops are skipped.
int fold_constants(Graph& g, PassContext& ctx);

// Propagates dtypes and (symbolic) shapes through the graph, writing them into
// Value::type where the model left them unknown, and tracks the values of
// small int64 shape tensors (Shape -> Gather/Slice/Concat/Unsqueeze/...).
// Every such value that turns out fully known becomes a constant (the node
// that produced it is then dead). `input_shapes` optionally pins graph
// inputs to concrete shapes (by input name).
int fold_shapes(Graph& g, PassContext& ctx, const std::map<std::string, Shape>& input_shapes = {});

// Conv or ConvTranspose (constant float32 W, constant or no B) followed by
// BatchNormalization (constant params, inference mode) -> one conv with scaled
// weights and bias (ConvTranspose weights are [C, M/group, k...]).
int fold_conv_batchnorm(Graph& g, PassContext& ctx);

// Conv / ConvTranspose (constant float32 W, constant or no B) whose output's
// only reader is a Mul, Add or Sub (conv - c) by a finite float32 constant
// that varies along the output channels at most (a scalar, [1], [M, 1, 1],
// [1, M, 1, 1], ...; never a per-position or per-batch tensor) -> one conv
// with scaled W and B or a shifted B (created when absent), writing the
// Mul/Add's output. Chains (Mul then Add) fold one node at a time.
int fold_conv_affine(Graph& g, PassContext& ctx);

// Conv (1-, 2- or 3-D; constant float W; input spatial sizes known) kernel
// taps that read padding only, for every output position (a 3x3 conv with
// pads 1 on a height-1 input: its top and bottom rows), are cropped out: a
// new W without them, pad_begin less dilation per leading tap removed,
// pad_end less (down to 0) per trailing one, so the output's shape and values
// stay as they were. auto_pad SAME_* is resolved to explicit pads. Not when a
// weight cropped out is infinite or NaN (0 * inf is NaN), for a leading tap
// when pad_begin would become negative, for a trailing one when the output
// would grow (no pad_end left), or on axes whose size is not known statically.
// Returns the convs rewritten.
int crop_padding_taps(Graph& g, PassContext& ctx);

// Subnormal elements (nonzero, below 2^-126 in magnitude) of float32 constants
// read only as the weights of products (Conv/ConvTranspose W, Gemm/MatMul
// A and B, RNN/GRU/LSTM W and R) become zero of the same sign. Each such
// weight moves a product's sum by less than 2^-126 times its input, far below
// the rounding of any normal result, while CPUs run multiplications with a
// subnormal operand many times slower (x86 microcode assists: trained
// weights decayed towards zero can make a conv 100x slower). Constants read
// by any other op (a threshold, an epsilon) are left exact. Returns the
// tensors changed.
int flush_subnormal_weights(Graph& g, PassContext& ctx);

// Gemm / MatMul products of a few rows (a static [M, K] float32 A with M <= 16)
// that share one constant float32 B (and, for Gemm, transA = 0, the same
// transB, alpha, beta and a constant C the same for every row), whose A does
// not depend on any of their outputs: an RNN unrolled by its exporter, each
// step's input times the same weights. They become Concat(A..., axis 0) ->
// one product -> Split(axis 0) into the same outputs, so B is read once
// instead of once per product. Results differ by summation order at most.
// The graph is sorted topologically afterwards (with ctx.node_tags).
// Returns the groups stacked.
int stack_shared_weight_rows(Graph& g, PassContext& ctx);

// Identity nodes disappear: their readers read the Identity's input (an
// Identity whose output is a graph output or a subgraph capture stays).
int eliminate_identities(Graph& g, PassContext& ctx);

// Transpose(Transpose(x)) -> one Transpose (or nothing when the perms
// cancel); identity Transposes disappear.
int eliminate_transposes(Graph& g, PassContext& ctx);

// The decomposed LayerNorm (ReduceMean, Sub, Pow 2, ReduceMean, Add eps,
// Sqrt, Div, optional Mul gamma / Add beta over the last axis) -> one
// LayerNormalization (opset 17). Standard only in models of opset >= 17;
// `any_opset` (the CPU stage) fuses in older models too.
int fuse_layer_norm(Graph& g, PassContext& ctx, bool any_opset = false);

// --- CPU-only fusions (emit ops only the CPU backend knows) ---

// QDQ-format groups -> integer ops, following ONNX Runtime's CPU QDQ
// transformers (onnxruntime/core/optimizer/qdq_transformer/selectors_actions:
// qdq_selector_action_transformer.cc, qdq_selectors.cc, qdq_actions.cc;
// qdq_util.cc; ensure_unique_dq_for_node_unit.cc; relu_quantizelinear.cc):
//  - Relu / Clip -> QuantizeLinear whose range the Q already clips (scalar
//    constant positive scale; Relu: zero point at the type's minimum; Clip:
//    quantised clip range covers the type's range): the Relu/Clip goes;
//  - DQ(x), DQ(w)[, DQ(bias int32)] -> Conv -> Q -> QLinearConv;
//    DQ(a), DQ(b) -> MatMul -> Q -> QLinearMatMul;
//    DQ(a), DQ(b)[, DQ(bias)] -> Gemm [-> Q] -> com.microsoft QGemm (float
//    output without a Q; beta 1 with a bias);
//    DQ, DQ -> Add/Mul -> Q -> com.microsoft QLinearAdd/QLinearMul;
//    DQ -> AveragePool/GlobalAveragePool/LeakyRelu/Sigmoid/Softmax -> Q ->
//    com.microsoft QLinear<op>; DQ... -> Concat -> Q -> QLinearConcat.
//    Every input of the op comes from a DQ, its output's only reader is the
//    Q (not a graph output), activations and output share one 8-bit type
//    (int8 activations want int8 weights), activation scales/zero points are
//    constant scalars, weights are constant with a scalar or per-output-
//    channel scale, and a bias is int32 with scale x_scale * w_scale and
//    zero point 0. Only ops with a CPU kernel at the model's opset are made.
//  - DQ -> Expand/Flatten/Gather/GatherElements/Reshape/Slice/Squeeze/Tile/
//    Transpose/Unsqueeze (8/16-bit), MaxPool (opset >= 12)/ReduceMax/
//    ReduceMin (8-bit, positive scale), Resize (nearest, 8-bit) -> Q with
//    equal constant scalar scale and zero point: DQ and Q go, the op runs on
//    the quantised values; likewise DQ -> Split -> a Q on every output;
//    DQ -> ArgMax (positive scalar scale): the DQ goes.
// A DQ with several readers serves each as if it were its own copy (ONNX
// Runtime duplicates it); DQs left unread are removed. Groups that fail a
// condition stay as they are.
int fuse_qdq(Graph& g, PassContext& ctx);

// 2-D QLinearConvs with constant weights and one group or one channel per
// group -> com.dlrt QLinearConvNhwc (x and y channels-last), and the 8-bit
// ops between them that do not depend on the layout (com.microsoft
// QLinearAdd, QLinearMul, QLinearSigmoid, QLinearLeakyRelu,
// QLinearGlobalAveragePool) with them, as well as 8-bit 2-D MaxPools
// (-> com.dlrt MaxPoolNhwc) next to them; Transposes only where a value
// crosses between the layouts (quant_layout.cpp). Returns the nodes converted.
int quant_convs_channels_last(Graph& g, PassContext& ctx);

// Float32 conv nets -> the channel-blocked layout [N, ceil(C/block), H, W,
// block]: regions of 2-D Convs/FusedConvs (one group or depthwise), pools,
// elementwise ops and channel Concats with at least two convs run as com.dlrt
// ConvBlocked, MaxPoolBlocked, GlobalPoolBlocked, ConcatBlocked (channel
// counts not whole blocks) and the unchanged
// elementwise ops, with ToBlocked/FromBlocked only at the regions' borders
// (blocked_layout.cpp). block: 8 or 16. Returns the nodes converted.
int blocked_layout(Graph& g, PassContext& ctx, int block);

// Squeeze-excite's residual y + y * s on the blocked layout: an Add of a
// value y and of ChannelScaleBlocked(y, s) (read by the Add alone) ->
// ChannelScaleBlocked(y, s, y), y * s + y in one pass
// (channel_scale_residual.cpp). blocked_layout runs it on what it converted.
// Returns the Adds fused.
int channel_scale_residual(Graph& g, PassContext& ctx);

// x * 0.5 * (1 + erf(x / sqrt(2))) in any of its usual arrangements -> Gelu
// (ONNX opset 20, approximate "none").
int fuse_gelu(Graph& g, PassContext& ctx);

// x * Clip(x + 3, 0, 6) / 6 (Div by 6 or Mul by 1/6, either side of the Mul
// by x; paddle2onnx's and older exporters' HardSwish) -> HardSwish (opset 14),
// which fuse_bias_activation then puts into the conv before it.
int fuse_hard_swish(Graph& g, PassContext& ctx);

// MatMul/Softmax attention -> com.dlrt Attention (see backends/cpu/ops/transformer.cpp):
//   Q·Kᵀ (MatMul), scale (Div or Mul by a constant scalar, either side of the
//   MatMul), optional additive mask (Add), Softmax over the last axis,
//   ·V (MatMul); Q/K/V read through the Transposes (and the Gathers of a
//   packed QKV tensor) the exporters put in front, and the output Transpose
//   back to [batch, seq, heads, dim] absorbed when present.
int fuse_attention(Graph& g, PassContext& ctx);

// Conv/Gemm/MatMul + bias (Add of a constant row vector) + activation, and
// Conv/MatMul + residual Add (a tensor of the output's shape) -> com.dlrt FusedConv /
// FusedGemm / FusedMatMul.
int fuse_bias_activation(Graph& g, PassContext& ctx);

// A FusedConv / FusedGemm / FusedMatMul with an activation whose output's
// only reader is a Mul, Add or Sub (y - c) by a finite float32 constant of
// one element (of rank at most the output's) -> the same op with
// activation_affine = [scale, shift]: y = act(...) * scale + shift, chains
// composed (in double, then rounded to float). Per-channel operands are not
// taken (the kernels' epilogues hold one scale and one shift).
int fuse_activation_affine(Graph& g, PassContext& ctx);

// A FusedConv / FusedGemm / FusedMatMul (any activation and post-affine), or
// a float Conv / Gemm / MatMul (which becomes one), whose output's only
// reader is a Max or Min of it and a float32 constant of one element, not
// NaN, of rank at most the output's (a chain of them composed) -> the fused
// op with activation_clamp = [lo, hi]: y = min(max(y, lo), hi) after the
// activation and its post-affine, NaN kept as the Max/Min kernels keep it.
// Max(c, y) / Min(c, y) with c = 0 stay (their ties of +0 and -0 return c).
int fuse_activation_clamp(Graph& g, PassContext& ctx);

// FusedConv, group 1 (a 1x1 "expand" conv, or a stem of at most 64 taps per
// output; no residual, Relu/Clip or none, a multiple of 8 output channels)
// whose only consumer is a depthwise FusedConv (Relu/Clip or none, no
// residual) -> com.dlrt FusedExpandDepthwise. Run on CPUs where its
// kernel was measured faster (optimize_cpu_fusions decides).
int fuse_expand_depthwise(Graph& g, PassContext& ctx);

// FusedExpandDepthwise whose only consumer is a 1x1 Conv or FusedConv
// (group 1, stride 1, no padding; a float32 constant weight; any bias,
// residual and activation) -> the same FusedExpandDepthwise with that conv
// as its projection (inputs Wp, Bp, Z; project_activation[_params]).
int fuse_expand_depthwise_project(Graph& g, PassContext& ctx);

// MatMulInteger -> Cast(float) -> Mul(scale: scalar or per column) ->
// Add(constant bias per column, optional), the product ONNX Runtime's
// quantize_dynamic writes for each MatMul, -> com.dlrt MatMulIntegerToFloat
// (A, B, a_zero_point, b_zero_point, scale, bias): the same float operations
// in the same order, on the integer GEMM's output while it is in cache.
int fuse_integer_matmul_to_float(Graph& g, PassContext& ctx);

// DynamicQuantizeLinear(x) -> MatMulIntegerToFloat (com.dlrt's, with the scale
// Mul(a_scale, constant b_scale), or com.microsoft's) reading all three of
// its outputs -> com.microsoft DynamicQuantizeMatMul(x, B, b_scale,
// b_zero_point, bias): the same bits, and a form that can quantize per batch
// item (RunOptions::item_lengths). The quantizer and the scale Mul go once no
// other op reads them (a quantizer shared by several products runs in each).
int fuse_dynamic_quantize_matmul(Graph& g, PassContext& ctx);

// A float16 or bfloat16 model (weights and activations stored in half
// precision, e.g. onnxconverter_common's float16 conversion) computed in
// float32: half constants become float32, half values float32, Casts to half
// Casts to float32; half graph inputs and outputs keep their type through a
// Cast at the border. The results are the half-precision computation without
// its intermediate roundings (what ONNX Runtime's CPU provider does for ops
// it lacks half kernels for). Only when every node touching a half value is
// an op whose meaning does not depend on the float type, and no subgraph
// reads one; otherwise the graph is left as it is. Returns 1 when it
// rewrote the graph.
int compute_half_in_float32(Graph& g, PassContext& ctx);

// Whether compute_half_in_float32 takes a node of this (standard-domain) op
// on half values: its float32 result is its half result without the
// intermediate roundings.
bool half_in_float32_op(const std::string& op_type);

}  // namespace dlrt::ir::passes
