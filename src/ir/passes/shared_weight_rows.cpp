// Products of few rows with one constant weight, stacked into one product
// (passes.h: stack_shared_weight_rows).
//
// An RNN unrolled by its exporter multiplies every step's input by the same
// weight matrix, one row at a time: each product streams all of B from the
// caches or memory for a single row of A, so the steps run at the memory's
// speed rather than the FMA units'. The inputs of those products do not
// depend on one another (the recurrence goes through another weight), so
// they can run as one product of many rows that reads B once.
#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "ir/passes/rewriter.h"

namespace dlrt::ir::passes {
namespace {

// Static rows of A at most, per product: beyond this a product reuses each
// row of B over enough rows of A that stacking gains little. Rows named by a
// symbol (a dynamic batch) are stacked when every member has the same symbol:
// such models are run a few rows at a time, and for many rows the copies
// stacking adds (A's and the product's elements, once) stay small against the
// product's K * N operations per row.
constexpr int64_t kMaxRows = 16;

struct Member {
  int node = -1;
  ValueId a = kNoValue;
  int64_t rows = 0;  // -1: the symbol in the group's key
};

// The rows of a float32 value of rank 2, else nullopt.
std::optional<Dim> matrix_rows(const Graph& g, ValueId v) {
  if (!is_float32(g, v)) return std::nullopt;
  const auto& shape = g.values[static_cast<size_t>(v)].type.shape;
  if (!shape || shape->size() != 2) return std::nullopt;
  return (*shape)[0];
}

// The grouping key of a Gemm / MatMul that may be stacked: op, B, C, the
// attributes that change the product, and the symbol of A's rows ("" for
// static rows). Empty when the node does not qualify.
using Key = std::tuple<std::string, ValueId, ValueId, int64_t, float, float, std::string>;

std::optional<std::pair<Key, Member>> candidate(const Rewriter& rw, const PassContext& ctx, int i) {
  const Node& n = rw.node(i);
  const bool gemm = is_op(n, "Gemm"), matmul = is_op(n, "MatMul");
  if ((!gemm && !matmul) || n.inputs.size() < 2 || n.outputs.size() != 1 || n.outputs[0] == kNoValue) return {};
  if (ctx.keeps_rounding(n.outputs[0])) return {};
  const Graph& g = rw.graph();
  const Tensor* b = rw.constant(n.inputs[1]);
  if (!b || b->dtype() != DType::kFloat32 || b->rank() != 2) return {};
  const auto r = matrix_rows(g, n.inputs[0]);
  if (!r) return {};
  const Dim rows = *r;
  // A's columns are B's rows (B's columns with transB) in a valid model; the
  // kernel checks them at run time, so a declared size is not required.
  const int64_t k = (*g.values[static_cast<size_t>(n.inputs[0])].type.shape)[1].size;
  const int64_t b_rows = gemm && n.attr_int("transB", 0) ? b->dim(1) : b->dim(0);
  if (k >= 0 && k != b_rows) return {};
  if (rows.is_static() ? (rows.size < 1 || rows.size > kMaxRows) : rows.symbol.empty()) return {};
  int64_t trans_b = 0;
  float alpha = 1, beta = 1;
  ValueId c = kNoValue;
  if (gemm) {
    if (n.attr_int("transA", 0) != 0) return {};
    trans_b = n.attr_int("transB", 0);
    alpha = n.attr_float("alpha", 1);
    beta = n.attr_float("beta", 1);
    const int64_t cols = trans_b ? b->dim(0) : b->dim(1);
    if (n.inputs.size() > 2 && n.inputs[2] != kNoValue) {
      // A bias that is the same for every row: a scalar, [N] or [1, N].
      const Tensor* t = rw.constant(n.inputs[2]);
      if (!t || t->dtype() != DType::kFloat32 || t->rank() > 2) return {};
      if (t->size() != 1 && !(t->size() == cols && t->dim(t->rank() - 1) == cols)) return {};
      c = n.inputs[2];
    }
  }
  return std::make_pair(Key{n.op_type, n.inputs[1], c, trans_b, alpha, beta, rows.is_static() ? "" : rows.symbol},
                        Member{i, n.inputs[0], rows.is_static() ? rows.size : -1});
}

// Members whose A does not depend on any member's output (so that one node
// can compute them all): a forward sweep from the members' outputs.
std::vector<Member> independent(const Rewriter& rw, const std::vector<Member>& group) {
  const Graph& g = rw.graph();
  std::vector<bool> reached(g.values.size(), false);
  std::vector<bool> is_member(static_cast<size_t>(rw.size()), false);
  for (const Member& m : group) is_member[static_cast<size_t>(m.node)] = true;
  const int first = group.front().node;
  for (int i = first; i < rw.size(); ++i) {
    if (rw.dead(i)) continue;
    const Node& n = rw.node(i);
    bool hit = is_member[static_cast<size_t>(i)];
    for (ValueId v : n.inputs) hit = hit || (v >= 0 && reached[static_cast<size_t>(v)]);
    if (!hit)  // values a subgraph of n reads by name
      for (ValueId v : g.implicit_inputs(n)) hit = hit || reached[static_cast<size_t>(v)];
    if (hit)
      for (ValueId o : n.outputs)
        if (o >= 0) reached[static_cast<size_t>(o)] = true;
  }
  std::vector<Member> out;
  for (const Member& m : group)
    if (!reached[static_cast<size_t>(m.a)]) out.push_back(m);
  return out;
}

// Puts g's nodes (and the context's per-node tags) back in topological order.
bool sort_with_tags(Graph& g, PassContext& ctx) {
  const bool tags = ctx.node_tags && ctx.node_tags->size() == g.nodes.size();
  // Tag by position: remember each node's tag under its first output.
  std::map<ValueId, int> tag_of;
  if (tags)
    for (size_t i = 0; i < g.nodes.size(); ++i)
      if (!g.nodes[i].outputs.empty()) tag_of[g.nodes[i].outputs[0]] = (*ctx.node_tags)[i];
  if (!g.topological_sort().ok()) return false;
  if (tags)
    for (size_t i = 0; i < g.nodes.size(); ++i)
      if (!g.nodes[i].outputs.empty()) (*ctx.node_tags)[i] = tag_of[g.nodes[i].outputs[0]];
  return true;
}

// Replaces the members by Concat(A...) -> the product -> Split, placed where
// the first member was (the caller sorts the graph afterwards).
void stack(Rewriter& rw, const std::vector<Member>& group, int64_t trans_b, const std::string& symbol,
           int onnx_opset) {
  const Node first = rw.node(group.front().node);
  const Tensor* b = rw.constant(first.inputs[1]);
  const int64_t k = trans_b ? b->dim(1) : b->dim(0);
  const int64_t cols = trans_b ? b->dim(0) : b->dim(1);
  int64_t total = 0;
  std::vector<int64_t> rows;
  Node concat, split;
  for (const Member& m : group) {
    concat.inputs.push_back(m.a);
    split.outputs.push_back(rw.node(m.node).outputs[0]);
    rows.push_back(m.rows);
    total += m.rows;
  }
  const bool equal = std::all_of(rows.begin(), rows.end(), [&](int64_t r) { return r == rows.front(); });
  const Dim stacked_rows = symbol.empty() ? Dim{total, ""} : Dim{-1, ""};
  const std::string base = first.name.empty() ? "stacked" : first.name;
  TypeInfo stacked_a, stacked_y;
  stacked_a.dtype = stacked_y.dtype = DType::kFloat32;
  stacked_a.shape = std::vector<Dim>{stacked_rows, Dim{k, ""}};
  stacked_y.shape = std::vector<Dim>{stacked_rows, Dim{cols, ""}};
  const ValueId a = rw.new_value(base + "_stacked_rows", stacked_a);
  const ValueId y = rw.new_value(base + "_stacked_product", stacked_y);
  concat.name = base + "_stack";
  concat.op_type = "Concat";
  concat.opset = onnx_opset;
  concat.attributes["axis"] = make_attr_int(0);
  concat.outputs = {a};
  Node product = first;
  product.name = base + "_stacked";
  product.inputs[0] = a;
  product.outputs = {y};
  split.name = base + "_unstack";
  split.op_type = "Split";
  split.opset = onnx_opset;
  split.attributes["axis"] = make_attr_int(0);
  split.inputs = {y};
  if (!symbol.empty()) {
    // sizes computed below
  } else if (equal) {  // equal parts: no sizes (opset 18 names their count)
    if (onnx_opset >= 18) split.attributes["num_outputs"] = make_attr_int(static_cast<int64_t>(rows.size()));
  } else if (onnx_opset >= 13) {
    split.inputs.push_back(rw.new_constant(
        base + "_unstack_sizes", Tensor::from_vector<int64_t>({static_cast<int64_t>(rows.size())}, rows)));
  } else {
    split.attributes["split"] = make_attr_ints(rows);
  }
  log_fired("shared-weight-rows", std::to_string(group.size()) + " products with the weight of " + first.describe() +
                                      " stacked into one of " +
                                      (symbol.empty() ? std::to_string(total) : std::to_string(group.size()) + " x " + symbol) +
                                      " rows");
  const int at = group.front().node;
  if (!symbol.empty()) {
    // Rows known at run time only: the sizes are each A's first dim, not
    // assumed equal because they share a name.
    TypeInfo one, shape, sizes_type;
    one.dtype = shape.dtype = sizes_type.dtype = DType::kInt64;
    one.shape = std::vector<Dim>{Dim{1, ""}};
    shape.shape = std::vector<Dim>{Dim{2, ""}};
    sizes_type.shape = std::vector<Dim>{Dim{static_cast<int64_t>(group.size()), ""}};
    const ValueId first_dim =
        rw.new_constant(base + "_unstack_axis0", Tensor::from_vector<int64_t>({1}, std::vector<int64_t>{0}));
    Node sizes;
    sizes.name = base + "_unstack_sizes";
    sizes.op_type = "Concat";
    sizes.opset = onnx_opset;
    sizes.attributes["axis"] = make_attr_int(0);
    sizes.outputs = {rw.new_value(base + "_unstack_sizes", sizes_type)};
    for (size_t j = 0; j < group.size(); ++j) {
      Node sh, rows_j;
      sh.name = base + "_rows_shape" + std::to_string(j);
      sh.op_type = "Shape";
      sh.opset = onnx_opset;
      sh.inputs = {group[j].a};
      sh.outputs = {rw.new_value(sh.name, shape)};
      rows_j.name = base + "_rows" + std::to_string(j);
      rows_j.op_type = "Gather";
      rows_j.opset = onnx_opset;
      rows_j.attributes["axis"] = make_attr_int(0);
      rows_j.inputs = {sh.outputs[0], first_dim};
      rows_j.outputs = {rw.new_value(rows_j.name, one)};
      sizes.inputs.push_back(rows_j.outputs[0]);
      rw.insert_before(at, std::move(sh));
      rw.insert_before(at, std::move(rows_j));
    }
    split.inputs.push_back(sizes.outputs[0]);
    rw.insert_before(at, std::move(sizes));
  }
  rw.insert_before(at, std::move(concat));
  rw.insert_before(at, std::move(product));
  rw.insert_before(at, std::move(split));
  for (const Member& m : group) rw.remove(m.node);
}

}  // namespace

int stack_shared_weight_rows(Graph& g, PassContext& ctx) {
  const int onnx_opset = g.opsets.count("") ? g.opsets.at("") : 0;
  if (onnx_opset < 1) return 0;
  // Every node must have an output for the tags to follow it through the sort.
  if (ctx.node_tags && !ctx.node_tags->empty())
    for (const Node& n : g.nodes)
      if (n.outputs.empty() || n.outputs[0] == kNoValue) return 0;
  // One group per round, on the graph as the last round left it: a stacked
  // product depends on every member's A, which the next group's dependency
  // sweep must see.
  int fired = 0;
  std::set<Key> tried;
  for (bool again = true; again;) {
    again = false;
    Rewriter rw(g, ctx);
    std::map<Key, std::vector<Member>> groups;
    for (int i = 0; i < rw.size(); ++i)
      if (auto c = candidate(rw, ctx, i); c && !tried.count(c->first)) groups[c->first].push_back(c->second);
    for (auto& [key, all] : groups) {
      tried.insert(key);
      if (all.size() < 2) continue;
      const std::vector<Member> group = independent(rw, all);
      if (group.size() < 2 || (!std::get<6>(key).empty() && onnx_opset < 13)) continue;  // Split's sizes input: opset 13
      stack(rw, group, std::get<3>(key), std::get<6>(key), onnx_opset);
      ++fired;
      again = true;
      break;
    }
    rw.commit();
    if (again && !sort_with_tags(g, ctx)) break;  // cannot happen: the members were checked independent
  }
  ctx.count("shared-weight-rows", fired);
  return fired;
}

}  // namespace dlrt::ir::passes
