// Channel-blocked float32 conv networks (passes.h: blocked_layout).
//
// The ops of a conv net that can work on the blocked layout
// [N, ceil(C/b), H, W, b] (backends/cpu/ops/blocked.cpp) form regions:
//  - 2-D float32 Conv / com.dlrt FusedConv with a constant W and one group or
//    one channel per group -> com.dlrt ConvBlocked (the residual Z blocked too,
//    the activation and its post-affine kept),
//    except 3x3 stride-1 one-group convs of 64+ input channels, which the
//    NCHW path runs as Winograd, unless ConvBlocked runs Winograd F(4x4, 3x3)
//    itself (64-128 input and 48+ output channels);
//  - MaxPool (2-D, no Indices) -> MaxPoolBlocked; GlobalAveragePool /
//    GlobalMaxPool -> GlobalPoolBlocked;
//  - unary elementwise ops (Relu, Clip, Sigmoid, HardSigmoid, HardSwish, Tanh,
//    LeakyRelu) on a blocked value, Max / Min / Add / Sub / Mul / Div of a
//    blocked value and a float32 constant of one element (rank <= 4: the
//    shape stays), and Add / Mul / Sub of two blocked values
//    with the same channel count (spatial broadcasts such as squeeze-excite's
//    [N, C, 1, 1] scale stay correct: dims 1 and 4 match), unchanged: they run
//    on the rank-5 tensors; a Mul of a value by one known to be [N, C, 1, 1]
//    (a global pool's, through 1x1 convs and unary ops) -> ChannelScaleBlocked
//    (and y + y * s then -> ChannelScaleBlocked(y, s, y): channel_scale_residual);
//  - Concat on channels of blocked values: unchanged on the rank-5 tensors
//    when the channel counts, but the last's, are whole blocks, else ->
//    ConcatBlocked (channels: each input's count), which packs the lanes
//    across block boundaries;
//  - Split on channels of a blocked value into parts of whole blocks (but
//    the last): a Split of the rank-5 tensor on axis 1 into each part's
//    block count (YOLOv8's C2f blocks split a conv's output in halves);
//  - nearest Resize (opset 11+) of a blocked value by constant scales
//    [1, 1, sh, sw]: it runs on the rank-5 tensor with scales [1, 1, sh, sw, 1]
//    (not for tf_crop_and_resize or tf_half_pixel_for_nn, whose scale-1 axes
//    need not be identities, nor with sizes or axes).
// A conv whose input is not blocked reads it through a ToBlocked, except a
// one-group conv of at most kStemChannels input channels (an RGB stem), which
// reads the NCHW image itself (x_blocked = 0). A value read by any op outside
// the region, or a graph output, gets a FromBlocked after its producer, once.
// The rule that decides: a connected region is converted when it holds at
// least kMinConvs convs and kConvsPerBorder convs per reorder at its borders
// (each value reordered in or out counts once); smaller regions do not pay
// for their reorders.
// Lanes past C in a last block hold values no real channel reads (see
// kernels/conv_blocked.h).
//
// optimize.cpp runs this pass on AVX-512 CPUs with b = 16, after the
// expand/depthwise fusions (their fused ops stay NCHW and bound regions);
// DLRT_DISABLE_PASSES=blocked-layout turns it off
// (every conv then runs NCHW as before).
#include <algorithm>
#include <map>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "ir/passes/passes.h"
#include "ir/passes/rewriter.h"

namespace dlrt::ir::passes {
namespace {

constexpr const char* kDlrt = "com.dlrt";
constexpr int kMinConvs = 2;
constexpr int kConvsPerBorder = 2;
constexpr int64_t kStemChannels = 4;

enum class Kind { kNone, kConv, kUnary, kScalar, kBinary, kScale, kGlobalPool, kMaxPool, kConcat, kResize, kSplit };

bool float_or_unknown(const Graph& g, ValueId v) {
  const DType t = g.values[static_cast<size_t>(v)].type.dtype;
  return t == DType::kFloat32 || t == DType::kUndefined;
}

bool all_ones(const Node& n, const char* attr) {
  const Attribute* a = n.attr(attr);
  if (!a) return true;
  for (int64_t v : a->ints)
    if (v != 1) return false;
  return true;
}

// A 3x3, stride-1, undilated one-group conv of 64+ input channels, which
// the NCHW path runs as Winograd (fewer products than any direct conv) or,
// on small planes, on its GEMM, stays NCHW unless ConvBlocked runs the same
// Winograd F(4x4, 3x3) itself (backends/cpu/ops/conv.cpp,
// conv_winograd_tile): for at most kWinograd4MaxChannels input channels and
// kWinogradBlockedMinOutputs+ output channels (its GEMMs have the output
// channels as columns: fewer leave most of each 48-wide tile empty).
constexpr int64_t kWinogradChannels = 64, kWinograd4MaxChannels = 128, kWinogradBlockedMinOutputs = 48;
bool winograd_shaped(const Node& n, const Tensor& w) {
  const bool shaped = n.attr_int("group", 1) == 1 && w.dim(2) == 3 && w.dim(3) == 3 && w.dim(1) >= kWinogradChannels &&
                      all_ones(n, "strides") && all_ones(n, "dilations");
  return shaped && (w.dim(1) > kWinograd4MaxChannels || w.dim(0) < kWinogradBlockedMinOutputs);
}

// A 1x1 conv without padding (a 1x1 plane stays 1x1).
bool pointwise_unpadded(const Rewriter& rw, const Node& n) {
  const Tensor* w = rw.constant(n.inputs[1]);
  if (!w || w->dim(2) != 1 || w->dim(3) != 1) return false;
  const std::string pad = n.attr_string("auto_pad", "NOTSET");
  if (pad != "NOTSET" && pad != "VALID") return false;
  if (const Attribute* a = n.attr("pads"))
    for (int64_t v : a->ints)
      if (v != 0) return false;
  return true;
}

// Conv / FusedConv that ConvBlocked runs: its output channels, else -1.
int64_t conv_channels(const Rewriter& rw, const Graph& g, const Node& n) {
  const bool fused = n.domain == kDlrt && n.op_type == "FusedConv";
  if (!is_op(n, "Conv") && !fused) return -1;
  if (n.inputs.size() < 2 || n.inputs[0] == kNoValue || n.outputs.size() != 1) return -1;
  if (!float_or_unknown(g, n.inputs[0])) return -1;
  const Tensor* w = rw.constant(n.inputs[1]);
  if (!w || w->rank() != 4 || w->dtype() != DType::kFloat32 || w->dim(0) <= 0) return -1;
  if (n.inputs.size() > 2 && n.inputs[2] != kNoValue) {
    const Tensor* b = rw.constant(n.inputs[2]);
    if (b && b->dtype() != DType::kFloat32) return -1;
  }
  const int64_t group = n.attr_int("group", 1);
  if (group != 1 && !(w->dim(1) == 1 && group == w->dim(0))) return -1;
  if (winograd_shaped(n, *w)) return -1;
  return w->dim(0);
}

int64_t conv_in_channels(const Rewriter& rw, const Node& n) {
  const Tensor* w = rw.constant(n.inputs[1]);
  const int64_t group = n.attr_int("group", 1);
  return group == 1 ? w->dim(1) : group;
}

// A one-group conv of few input channels reads its NCHW input as it is.
bool reads_image(const Rewriter& rw, const Node& n) {
  return n.attr_int("group", 1) == 1 && conv_in_channels(rw, n) <= kStemChannels;
}

bool is_unary(const Node& n) {
  static const std::set<std::string> ops = {"Relu",      "Clip", "Sigmoid",  "HardSigmoid",
                                            "HardSwish", "Tanh", "LeakyRelu"};
  return n.domain.empty() && ops.count(n.op_type) && !n.inputs.empty() && n.outputs.size() == 1;
}

// An elementwise op of a value and a float32 constant of one element of
// rank <= 4 (broadcast over the rank-5 blocked tensor as over the NCHW one):
// the index of the other input, else -1.
int scalar_operand_data(const Rewriter& rw, const Node& n) {
  static const std::set<std::string> ops = {"Max", "Min", "Add", "Sub", "Mul", "Div"};
  if (!n.domain.empty() || !ops.count(n.op_type) || n.inputs.size() != 2 || n.outputs.size() != 1) return -1;
  for (int j = 0; j < 2; ++j) {
    const Tensor* c = rw.constant(n.inputs[static_cast<size_t>(1 - j)]);
    const ValueId x = n.inputs[static_cast<size_t>(j)];
    if (c && c->dtype() == DType::kFloat32 && c->size() == 1 && c->rank() <= 4 && x != kNoValue && !rw.constant(x))
      return j;
  }
  return -1;
}

bool is_binary(const Node& n) {
  return (is_op(n, "Add") || is_op(n, "Mul") || is_op(n, "Sub")) && n.inputs.size() == 2 && n.outputs.size() == 1;
}

bool is_max_pool(const Node& n) {
  if (!is_op(n, "MaxPool") || n.inputs.empty() || n.outputs.empty()) return false;
  if (n.outputs.size() > 1 && n.outputs[1] != kNoValue) return false;
  const Attribute* k = n.attr("kernel_shape");
  return k && k->ints.size() == 2 && n.attr_int("storage_order", 0) == 0;
}

// A Resize that runs unchanged on the blocked layout once its scales gain a
// trailing 1 (see the list at the top).
bool blocked_resize(const Rewriter& rw, const Node& n) {
  if (!is_op(n, "Resize") || n.opset < 11 || n.outputs.size() != 1 || n.inputs.size() < 3 || n.has_attr("axes"))
    return false;
  if (n.attr_string("mode", "nearest") != "nearest") return false;
  const std::string coord = n.attr_string("coordinate_transformation_mode", "half_pixel");
  if (coord == "tf_crop_and_resize" || coord == "tf_half_pixel_for_nn") return false;
  if (n.inputs.size() > 3 && n.inputs[3] != kNoValue) {
    const Tensor* sizes = rw.constant(n.inputs[3]);
    if (!sizes || sizes->size() != 0) return false;
  }
  const Tensor* s = n.inputs[2] == kNoValue ? nullptr : rw.constant(n.inputs[2]);
  return s && s->dtype() == DType::kFloat32 && s->rank() == 1 && s->size() == 4 && s->data<float>()[0] == 1.0f &&
         s->data<float>()[1] == 1.0f;
}

// A channel Split of a blocked value of C channels into parts of whole blocks
// (but the last, which keeps the input's pad lanes): each part's channels,
// else empty. Sizes as the Split kernel reads them: the `split` attribute
// (opset < 13) or a constant input, else equal parts.
std::vector<int64_t> split_channels(const Rewriter& rw, const Node& n, int64_t C, int block) {
  if (!is_op(n, "Split") || n.inputs.empty() || n.outputs.empty()) return {};
  const int64_t axis = n.attr_int("axis", 0);
  if (axis != 1 && axis != -3) return {};
  for (ValueId v : n.outputs)
    if (v == kNoValue) return {};
  const int64_t parts = static_cast<int64_t>(n.outputs.size());
  std::vector<int64_t> sizes;
  if (n.opset < 13) {
    if (const Attribute* a = n.attr("split")) sizes = a->ints;
  } else if (n.inputs.size() > 1 && n.inputs[1] != kNoValue) {
    const Tensor* s = rw.constant(n.inputs[1]);
    if (!s || s->dtype() != DType::kInt64 || s->rank() != 1) return {};
    sizes.assign(s->data<int64_t>(), s->data<int64_t>() + s->size());
  }
  if (sizes.empty()) {
    if (n.opset >= 18 && n.attr_int("num_outputs", parts) != parts) return {};
    if (C % parts != 0) return {};  // uneven parts: the kernel's rules differ by opset; stays NCHW
    sizes.assign(static_cast<size_t>(parts), C / parts);
  }
  if (static_cast<int64_t>(sizes.size()) != parts) return {};
  int64_t sum = 0;
  for (size_t j = 0; j < sizes.size(); ++j) {
    if (sizes[j] <= 0 || (j + 1 < sizes.size() && sizes[j] % block != 0)) return {};
    sum += sizes[j];
  }
  return sum == C ? sizes : std::vector<int64_t>{};
}

// n (a channel Split into parts of `parts` channels) -> the Split of the
// rank-5 tensor on axis 1 into the parts' block counts (an opset-13 Split
// with a constant split input).
void to_block_split(Rewriter& rw, Node& n, const std::vector<int64_t>& parts, int block) {
  std::vector<int64_t> blocks;
  for (int64_t c : parts) blocks.push_back((c + block - 1) / block);
  const int64_t count = static_cast<int64_t>(blocks.size());
  n.inputs.resize(2);
  n.inputs[1] = rw.new_constant(n.name + "_blocks", Tensor::from_vector<int64_t>({count}, blocks));
  n.attributes.erase("split");
  n.attributes.erase("num_outputs");
  n.attributes["axis"] = make_attr_int(1);
  n.opset = 13;
}

// A channel Concat of blocked values (channels: the blocked values' counts):
// its channel count (-1: not blocked), and whether it needs ConcatBlocked.
// Inputs of whole blocks (but the last) concatenate as rank-5 tensors; others
// need ConcatBlocked (when `packing`: the backend runs it), which packs lanes
// across blocks.
struct ConcatChoice {
  int64_t channels = -1;
  bool packed = false;
};
ConcatChoice concat_choice(const Node& n, const std::map<ValueId, int64_t>& channels, int block, bool packing) {
  ConcatChoice c;
  if (!is_op(n, "Concat") || n.outputs.size() != 1 || n.inputs.empty()) return c;
  const int64_t axis = n.attr_int("axis", 0);
  if (axis != 1 && axis != -3) return c;
  int64_t total = 0;
  bool whole = true;
  for (size_t j = 0; j < n.inputs.size(); ++j) {
    auto it = n.inputs[j] == kNoValue ? channels.end() : channels.find(n.inputs[j]);
    if (it == channels.end()) return c;
    whole = whole && (j + 1 == n.inputs.size() || it->second % block == 0);
    total += it->second;
  }
  if (!whole && !packing) return c;
  c.channels = total;
  c.packed = !whole;
  return c;
}

// n (a Concat of `inputs`, their channel counts in `channels`) -> ConcatBlocked.
void to_concat_blocked(Node& n, const std::vector<ValueId>& inputs, const std::map<ValueId, int64_t>& channels) {
  std::vector<int64_t> cs;
  for (ValueId v : inputs) cs.push_back(channels.at(v));
  n.attributes.erase("axis");
  n.attributes["channels"] = make_attr_ints(cs);
  n.op_type = "ConcatBlocked";
  n.domain = kDlrt;
  n.opset = 1;
}

// Reader-side data inputs of a chosen node (those that must be blocked).
std::vector<size_t> data_inputs(const Rewriter& rw, Kind k, const Node& n) {
  switch (k) {
    case Kind::kScalar: return {static_cast<size_t>(scalar_operand_data(rw, n))};
    case Kind::kConv: {
      std::vector<size_t> d{0};
      if (n.inputs.size() > 3 && n.inputs[3] != kNoValue) d.push_back(3);
      return d;
    }
    case Kind::kBinary:
    case Kind::kScale: return {0, 1};
    case Kind::kConcat: {
      std::vector<size_t> d(n.inputs.size());
      std::iota(d.begin(), d.end(), size_t{0});
      return d;
    }
    default: return {0};
  }
}

TypeInfo blocked_type(const Graph& g, ValueId v, int64_t C, int block) {
  TypeInfo t;
  t.dtype = DType::kFloat32;
  const auto& shape = g.values[static_cast<size_t>(v)].type.shape;
  std::vector<Dim> s(5);
  if (shape && shape->size() == 4) {
    s[0] = (*shape)[0];
    s[2] = (*shape)[2];
    s[3] = (*shape)[3];
  }
  s[1].size = (C + block - 1) / block;
  s[4].size = block;
  t.shape = s;
  return t;
}

Node reorder(const std::string& op, ValueId in, ValueId out, const std::string& name, int block, int64_t C) {
  Node n;
  n.name = name;
  n.op_type = op;
  n.domain = kDlrt;
  n.opset = 1;
  n.inputs = {in};
  n.outputs = {out};
  n.attributes["block"] = make_attr_int(block);
  if (op == "FromBlocked") n.attributes["channels"] = make_attr_int(C);
  return n;
}

// Puts n, the blocked form of node i, in its place: each output becomes its
// blocked twin (recorded in `twin`), and those read outside the chosen nodes
// (or graph outputs) get a FromBlocked after n.
void put_blocked(Rewriter& rw, int i, Node n, const std::set<int>& chosen, const std::map<ValueId, int64_t>& channels,
                 std::map<ValueId, ValueId>& twin, int block) {
  Graph& g = rw.graph();
  std::vector<Node> from;
  for (ValueId& out : n.outputs) {
    const int64_t C = channels.at(out);
    const std::string name = g.values[static_cast<size_t>(out)].name;  // new_value may move the values
    const ValueId t = rw.new_value(name + "_blocked", blocked_type(g, out, C, block));
    bool outside = rw.escapes(out);
    for (int c : rw.consumers(out)) outside = outside || !chosen.count(c);
    if (outside) from.push_back(reorder("FromBlocked", t, out, name + "/reorder", block, C));
    twin[out] = t;
    out = t;
  }
  if (from.empty()) {
    rw.replace(i, std::move(n));
    return;
  }
  rw.insert_before(i, std::move(n));
  for (size_t j = 0; j + 1 < from.size(); ++j) rw.insert_before(i, std::move(from[j]));
  rw.replace(i, std::move(from.back()));
}

int find_root(std::vector<int>& parent, int i) {
  while (parent[static_cast<size_t>(i)] != i) i = parent[static_cast<size_t>(i)] = parent[static_cast<size_t>(parent[static_cast<size_t>(i)])];
  return i;
}

// The candidate nodes (kind != kNone) of the regions worth converting, in
// order. parent: the union-find forest of regions; made_by: candidate outputs.
std::vector<int> regions_worth_converting(const Rewriter& rw, const std::vector<Kind>& kind, std::vector<int>& parent,
                                          const std::map<ValueId, int>& made_by) {
  const int nodes = rw.size();
  // Regions with enough convs for their borders: the values reordered into
  // the region (a stem's image is read as it is) and out of it.
  std::map<int, int> convs, borders;
  std::map<int, std::set<ValueId>> entering;
  for (int i = 0; i < nodes; ++i) {
    const Kind k = kind[static_cast<size_t>(i)];
    if (k == Kind::kNone) continue;
    const int root = find_root(parent, i);
    const Node& n = rw.node(i);
    if (k == Kind::kConv) ++convs[root];
    for (size_t j : data_inputs(rw, k, n)) {
      const ValueId v = n.inputs[j];
      auto it = made_by.find(v);
      if (it != made_by.end() && find_root(parent, it->second) == root) continue;
      if (k == Kind::kConv && j == 0 && reads_image(rw, n)) continue;
      entering[root].insert(v);
    }
    for (ValueId out : n.outputs) {
      bool outside = rw.escapes(out);
      for (int c : rw.consumers(out))
        outside = outside || kind[static_cast<size_t>(c)] == Kind::kNone || find_root(parent, c) != root;
      borders[root] += outside;
    }
  }
  std::vector<int> chosen;
  for (int i = 0; i < nodes; ++i) {
    if (kind[static_cast<size_t>(i)] == Kind::kNone) continue;
    const int root = find_root(parent, i);
    const int b = borders[root] + static_cast<int>(entering[root].size());
    if (convs[root] >= kMinConvs && convs[root] >= kConvsPerBorder * b) chosen.push_back(i);
  }
  return chosen;
}

}  // namespace

int blocked_layout(Graph& g, PassContext& ctx, int block) {
  if (block != 8 && block != 16) return 0;
  for (const char* op :
       {"ConvBlocked", "ToBlocked", "FromBlocked", "GlobalPoolBlocked", "MaxPoolBlocked", "ChannelScaleBlocked"})
    if (!ctx.can_run(op, kDlrt, 1)) return 0;
  Rewriter rw(g, ctx);
  const int nodes = rw.size();
  std::vector<Kind> kind(static_cast<size_t>(nodes), Kind::kNone);
  std::map<ValueId, int64_t> channels;  // blocked values (outputs of chosen nodes) -> C
  std::map<ValueId, int> made_by;       // ... -> their node
  std::vector<int> parent(static_cast<size_t>(nodes));
  std::iota(parent.begin(), parent.end(), 0);
  auto blocked = [&](ValueId v) { return v != kNoValue && channels.count(v) > 0; };
  std::set<ValueId> pooled;  // blocked values known to be [N, cb, 1, 1, b]
  const bool packed_concat = ctx.can_run("ConcatBlocked", kDlrt, 1);
  std::set<int> packed;  // Concats of inputs not all whole blocks -> ConcatBlocked
  std::map<int, std::vector<int64_t>> split_parts;  // Splits -> their outputs' channels
  for (int i = 0; i < nodes; ++i) {
    if (rw.dead(i)) continue;
    const Node& n = rw.node(i);
    // Blocked convs sum in another order: not where a dynamic quantizer depends on the bits.
    if (!n.outputs.empty() && ctx.keeps_rounding(n.outputs[0])) continue;
    Kind k = Kind::kNone;
    int64_t C = -1;
    if (const int64_t m = conv_channels(rw, g, n); m > 0) {
      k = Kind::kConv;
      C = m;
      // A residual Z of another layout is reordered like X; its channels must match.
      if (n.inputs.size() > 3 && n.inputs[3] != kNoValue && blocked(n.inputs[3]) && channels[n.inputs[3]] != m)
        k = Kind::kNone;
    } else if (is_unary(n) && blocked(n.inputs[0])) {
      k = Kind::kUnary;
      C = channels[n.inputs[0]];
    } else if (const int d = scalar_operand_data(rw, n); d >= 0 && blocked(n.inputs[static_cast<size_t>(d)])) {
      k = Kind::kScalar;
      C = channels[n.inputs[static_cast<size_t>(d)]];
    } else if (is_binary(n) && blocked(n.inputs[0]) && blocked(n.inputs[1]) &&
               channels[n.inputs[0]] == channels[n.inputs[1]]) {
      // x * s with s one value per channel (squeeze-excite): ChannelScaleBlocked.
      const bool p0 = pooled.count(n.inputs[0]) > 0, p1 = pooled.count(n.inputs[1]) > 0;
      k = is_op(n, "Mul") && p0 != p1 ? Kind::kScale : Kind::kBinary;
      C = channels[n.inputs[0]];
      if (p0 && p1) pooled.insert(n.outputs[0]);
    } else if ((is_op(n, "GlobalAveragePool") || is_op(n, "GlobalMaxPool")) && n.outputs.size() == 1 &&
               blocked(n.inputs[0])) {
      k = Kind::kGlobalPool;
      C = channels[n.inputs[0]];
    } else if (is_max_pool(n) && blocked(n.inputs[0])) {
      k = Kind::kMaxPool;
      C = channels[n.inputs[0]];
    } else if (blocked_resize(rw, n) && blocked(n.inputs[0])) {
      k = Kind::kResize;
      C = channels[n.inputs[0]];
    } else if (const ConcatChoice cc = concat_choice(n, channels, block, packed_concat); cc.channels >= 0) {
      k = Kind::kConcat;
      C = cc.channels;
      if (cc.packed) packed.insert(i);
    } else if (is_op(n, "Split") && blocked(n.inputs[0])) {
      split_parts[i] = split_channels(rw, n, channels[n.inputs[0]], block);
      if (!split_parts[i].empty()) k = Kind::kSplit;
    }
    if (k == Kind::kNone) continue;
    const bool elementwise = k == Kind::kUnary || k == Kind::kScalar;
    if (k == Kind::kGlobalPool || (elementwise && pooled.count(n.inputs[data_inputs(rw, k, n)[0]])) ||
        (k == Kind::kConv && pooled.count(n.inputs[0]) && pointwise_unpadded(rw, n)))
      pooled.insert(n.outputs[0]);
    kind[static_cast<size_t>(i)] = k;
    for (size_t j : data_inputs(rw, k, n))
      if (auto it = made_by.find(n.inputs[j]); it != made_by.end())
        parent[static_cast<size_t>(find_root(parent, i))] = find_root(parent, it->second);
    for (size_t j = 0; j < n.outputs.size(); ++j) {
      channels[n.outputs[j]] = k == Kind::kSplit ? split_parts[i][j] : C;
      made_by[n.outputs[j]] = i;
    }
  }
  const std::vector<int> chosen = regions_worth_converting(rw, kind, parent, made_by);
  for (int i = 0; i < nodes; ++i)
    if (kind[static_cast<size_t>(i)] != Kind::kNone && !std::binary_search(chosen.begin(), chosen.end(), i))
      for (ValueId out : rw.node(i).outputs) channels.erase(out);
  if (chosen.empty()) return 0;
  std::set<int> chosen_set(chosen.begin(), chosen.end());
  std::map<ValueId, ValueId> twin;  // NCHW value -> its blocked twin
  int rewrites = 0;
  for (int i : chosen) {
    Node n = rw.node(i);
    const Kind k = kind[static_cast<size_t>(i)];
    for (size_t j : data_inputs(rw, k, n)) {
      const ValueId v = n.inputs[j];
      if (auto it = twin.find(v); it != twin.end()) {
        n.inputs[j] = it->second;
        continue;
      }
      // Only convs read values from outside the region.
      if (k == Kind::kConv && j == 0 && reads_image(rw, n)) {
        n.attributes["x_blocked"] = make_attr_int(0);
        continue;
      }
      const int64_t C = j == 0 ? conv_in_channels(rw, n) : channels[n.outputs[0]];
      const ValueId t = rw.new_value(g.values[static_cast<size_t>(v)].name + "_blocked", blocked_type(g, v, C, block));
      rw.insert_before(i, reorder("ToBlocked", v, t, g.values[static_cast<size_t>(t)].name + "/reorder", block, C));
      twin[v] = t;
      n.inputs[j] = t;
    }
    if (k == Kind::kConv) {
      n.op_type = "ConvBlocked";
      n.domain = kDlrt;
      n.opset = 1;
    } else if (k == Kind::kGlobalPool) {
      n.attributes["max"] = make_attr_int(is_op(n, "GlobalMaxPool") ? 1 : 0);
      n.op_type = "GlobalPoolBlocked";
      n.domain = kDlrt;
      n.opset = 1;
    } else if (k == Kind::kMaxPool) {
      n.op_type = "MaxPoolBlocked";
      n.domain = kDlrt;
      n.opset = 1;
      n.outputs.resize(1);
    } else if (k == Kind::kConcat && packed.count(i)) {
      to_concat_blocked(n, rw.node(i).inputs, channels);
    } else if (k == Kind::kConcat) {
      n.attributes["axis"] = make_attr_int(1);
    } else if (k == Kind::kResize) {
      const float* sc = rw.constant(n.inputs[2])->data<float>();
      n.inputs[2] = rw.new_constant(g.values[static_cast<size_t>(n.inputs[2])].name + "_blocked",
                                    Tensor::from_vector<float>({5}, {sc[0], sc[1], sc[2], sc[3], 1.0f}));
    } else if (k == Kind::kScale) {
      if (pooled.count(rw.node(i).inputs[0])) std::swap(n.inputs[0], n.inputs[1]);
      n.op_type = "ChannelScaleBlocked";
      n.domain = kDlrt;
      n.opset = 1;
    } else if (k == Kind::kSplit) {
      to_block_split(rw, n, split_parts.at(i), block);
    }
    if (n.domain == kDlrt) n.attributes["block"] = make_attr_int(block);
    put_blocked(rw, i, std::move(n), chosen_set, channels, twin, block);
    ++rewrites;
  }
  rw.commit();
  ctx.count("blocked-layout", rewrites);
  channel_scale_residual(g, ctx);
  return rewrites;
}

}  // namespace dlrt::ir::passes
