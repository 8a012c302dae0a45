// Channels-last 8-bit convolutions across the network (passes.h).
//
// Every 2-D QLinearConv with constant weights and one group, or one channel
// per group, becomes com.dlrt QLinearConvNhwc, which reads and writes
// [N, H, W, C]; an 8-bit 2-D MaxPool next to them, com.dlrt MaxPoolNhwc. The 8-bit ops between such convs that do not care about the
// layout (com.microsoft QLinearAdd, QLinearMul, QLinearSigmoid,
// QLinearLeakyRelu on rank-4 inputs) and QLinearGlobalAveragePool (its
// channels_last attribute) follow when one of their inputs is already
// channels-last. Transposes are inserted only where a value crosses between
// the two layouts: into the first conv, and out to any reader that stays
// NCHW (or a graph output), once per value and direction. The ops between
// must see rank-4 values on every data input: a chosen node's output, or a
// value whose type says so (never a lower-rank broadcast).
#include <map>
#include <set>
#include <string>
#include <vector>

#include "ir/passes/passes.h"
#include "ir/passes/rewriter.h"

namespace dlrt::ir::passes {
namespace {

constexpr const char* kMs = "com.microsoft";

bool has_rank4(const Graph& g, ValueId v) {
  if (v == kNoValue) return false;
  const auto& shape = g.values[static_cast<size_t>(v)].type.shape;
  return shape && shape->size() == 4;
}

// The data inputs of an op that can follow the layout (their indices), or
// empty when it cannot.
std::vector<size_t> layout_free_inputs(const Node& n) {
  if (n.domain != kMs) return {};
  if (n.op_type == "QLinearAdd" || n.op_type == "QLinearMul") return {0, 3};
  if (n.op_type == "QLinearSigmoid" || n.op_type == "QLinearLeakyRelu") return {0};
  if (n.op_type == "QLinearGlobalAveragePool" && n.attr_int("channels_last", 0) == 0) return {0};
  return {};
}

// A QLinearConv QLinearConvNhwc runs well: 2-D, 8-bit, constant weights, one
// group (1 x 1, or input channels a multiple of 4) or one channel per group.
bool conv_candidate(const Rewriter& rw, const Graph& g, const Node& n) {
  // (x has w's rank, 4, or the conv fails either way.)
  if (!is_op(n, "QLinearConv") || n.inputs.size() < 8 || n.inputs[0] == kNoValue) return false;
  const Tensor* w = rw.constant(n.inputs[3]);
  if (!w || w->rank() != 4 || !is_8bit(w->dtype())) return false;
  const DType xt = g.values[static_cast<size_t>(n.inputs[0])].type.dtype;
  if (xt != DType::kUndefined && !is_8bit(xt)) return false;
  const int64_t group = n.attr_int("group", 1);
  if (group == 1) {
    // The kernel reads a window's channels in groups of 4 straight from the
    // input; other channel counts (an RGB stem) stay NCHW, where their
    // im2col rows are cheaper to make.
    const bool one_by_one = w->dim(2) == 1 && w->dim(3) == 1;
    return one_by_one || w->dim(1) % 4 == 0;
  }
  return w->dim(1) == 1 && group == w->dim(0);
}

// A 2-D MaxPool on 8-bit values that MaxPoolNhwc runs: no Indices output, no
// dilation, its input known to be 8-bit (by its type, or as the output of an
// integer conv or of a node already going channels-last).
bool max_pool_candidate(const Rewriter& rw, const Graph& g, const Node& n, const std::set<ValueId>& nhwc_values) {
  if (!is_op(n, "MaxPool") || n.inputs.empty() || n.outputs.empty()) return false;
  if (n.outputs.size() > 1 && n.outputs[1] != kNoValue) return false;
  if (const Attribute* d = n.attr("dilations"))
    for (int64_t v : d->ints)
      if (v != 1) return false;
  const ValueId x = n.inputs[0];
  if (nhwc_values.count(x)) return true;
  if (!has_rank4(g, x)) return false;
  if (is_8bit(g.values[static_cast<size_t>(x)].type.dtype)) return true;
  const int p = rw.producer(x);
  return p >= 0 && is_op(rw.node(p), "QLinearConv");
}

// perm of `v`'s shape, when known.
TypeInfo permuted(const TypeInfo& t, const std::vector<int64_t>& perm) {
  TypeInfo out = t;
  if (t.shape && t.shape->size() == perm.size()) {
    std::vector<Dim> s;
    for (int64_t p : perm) s.push_back((*t.shape)[static_cast<size_t>(p)]);
    out.shape = s;
  }
  return out;
}

Node transpose(const Graph& g, ValueId in, ValueId out, const std::vector<int64_t>& perm) {
  Node t;
  t.name = g.values[static_cast<size_t>(out)].name + "/transpose";
  t.op_type = "Transpose";
  t.opset = 13;
  t.inputs = {in};
  t.outputs = {out};
  t.attributes["perm"] = make_attr_ints(perm);
  return t;
}

}  // namespace

int quant_convs_channels_last(Graph& g, PassContext& ctx) {
  if (!ctx.can_run("QLinearConvNhwc", "com.dlrt", 1) || !ctx.can_run("MaxPoolNhwc", "com.dlrt", 1) ||
      !ctx.can_run("Transpose", "", 13))
    return 0;
  Rewriter rw(g, ctx);
  // Which nodes go channels-last, in graph (topological) order.
  std::set<int> chosen;
  // Outputs of chosen nodes: rank 4 by construction (the types of
  // com.microsoft ops' outputs are often unknown).
  std::set<ValueId> nhwc_values;
  for (int i = 0; i < rw.size(); ++i) {
    if (rw.dead(i)) continue;
    const Node& n = rw.node(i);
    bool take = conv_candidate(rw, g, n);
    if (!take) {
      const std::vector<size_t> data = layout_free_inputs(n);
      bool all_rank4 = !data.empty(), any_nhwc = false;
      for (size_t k : data) {
        const bool nhwc = k < n.inputs.size() && nhwc_values.count(n.inputs[k]);
        if (k >= n.inputs.size() || (!nhwc && !has_rank4(g, n.inputs[k]))) all_rank4 = false;
        any_nhwc = any_nhwc || nhwc;
      }
      take = all_rank4 && any_nhwc && n.outputs.size() == 1;
    }
    // A MaxPool follows a channels-last input.
    if (!take && max_pool_candidate(rw, g, n, nhwc_values)) take = nhwc_values.count(n.inputs[0]) > 0;
    if (!take) continue;
    chosen.insert(i);
    nhwc_values.insert(n.outputs[0]);
  }
  // A MaxPool whose every reader goes channels-last goes too (e.g. after an
  // RGB stem that stays NCHW): one Transpose before it instead of after.
  for (int i = 0; i < rw.size(); ++i) {
    if (rw.dead(i) || chosen.count(i) || !max_pool_candidate(rw, g, rw.node(i), nhwc_values)) continue;
    const ValueId out = rw.node(i).outputs[0];
    const std::vector<int> readers = rw.consumers(out);
    bool all = !readers.empty() && !rw.escapes(out);
    for (int c : readers) all = all && chosen.count(c) > 0;
    if (!all) continue;
    chosen.insert(i);
    nhwc_values.insert(out);
  }
  if (chosen.empty()) return 0;
  // Readers of each value that stay NCHW.
  auto nchw_reader = [&](ValueId v) {
    if (rw.escapes(v)) return true;
    for (int c : rw.consumers(v))
      if (!chosen.count(c)) return true;
    return false;
  };
  const std::vector<int64_t> to_nhwc{0, 2, 3, 1}, to_nchw{0, 3, 1, 2};
  std::map<ValueId, ValueId> nhwc_of;  // NCHW value -> its channels-last twin
  int rewrites = 0;
  for (int i : chosen) {
    Node n = rw.node(i);
    std::vector<size_t> data = layout_free_inputs(n);
    const bool conv = is_op(n, "QLinearConv"), pool = is_op(n, "MaxPool");
    if (conv || pool) data = {0};
    for (size_t k : data) {
      const ValueId v = n.inputs[k];
      auto it = nhwc_of.find(v);
      if (it == nhwc_of.end()) {
        const ValueId t = rw.new_value(g.values[static_cast<size_t>(v)].name + "_nhwc",
                                       permuted(g.values[static_cast<size_t>(v)].type, to_nhwc));
        rw.insert_before(i, transpose(g, v, t, to_nhwc));
        it = nhwc_of.emplace(v, t).first;
      }
      n.inputs[k] = it->second;
    }
    if (conv || pool) {
      n.op_type = conv ? "QLinearConvNhwc" : "MaxPoolNhwc";
      n.domain = "com.dlrt";
      n.opset = 1;
      if (pool) n.outputs.resize(1);
    } else if (n.op_type == "QLinearGlobalAveragePool") {
      n.attributes["channels_last"] = make_attr_int(1);
    }
    const ValueId out = n.outputs[0];
    const ValueId twin = rw.new_value(g.values[static_cast<size_t>(out)].name + "_nhwc",
                                      permuted(g.values[static_cast<size_t>(out)].type, to_nhwc));
    n.outputs[0] = twin;
    nhwc_of[out] = twin;
    if (nchw_reader(out)) {
      // The NCHW value stays, made from the twin right after the node.
      rw.insert_before(i, std::move(n));
      rw.replace(i, transpose(g, twin, out, to_nchw));
    } else {
      rw.replace(i, std::move(n));
    }
    ++rewrites;
  }
  rw.commit();
  ctx.count("quant-channels-last", rewrites);
  return rewrites;
}

}  // namespace dlrt::ir::passes
