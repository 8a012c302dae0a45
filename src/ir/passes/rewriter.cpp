#include "ir/passes/rewriter.h"

#include <algorithm>

#include "core/logging.h"

namespace dlrt::ir::passes {

Rewriter::Rewriter(Graph& g, PassContext& ctx) : g_(g), ctx_(ctx) {
  dead_.assign(g_.nodes.size(), false);
  index_uses();
}

void Rewriter::index_uses() {
  const size_t nv = g_.values.size();
  producer_.assign(nv, -1);
  users_.assign(nv, {});
  escapes_.assign(nv, false);
  is_input_.assign(nv, false);
  for (ValueId v : g_.inputs)
    if (v >= 0 && static_cast<size_t>(v) < nv) is_input_[v] = true;
  for (ValueId v : g_.outputs)
    if (v >= 0 && static_cast<size_t>(v) < nv) escapes_[v] = true;
  for (size_t i = 0; i < g_.nodes.size(); ++i) {
    const Node& n = g_.nodes[i];
    for (ValueId o : n.outputs)
      if (o >= 0 && static_cast<size_t>(o) < nv) producer_[o] = static_cast<int>(i);
    for (ValueId in : n.inputs)
      if (in >= 0 && static_cast<size_t>(in) < nv) users_[in].push_back(static_cast<int>(i));
    bool has_subgraph = false;
    for (const auto& [k, a] : n.attributes) has_subgraph = has_subgraph || a.g || !a.graphs.empty();
    if (has_subgraph)
      for (ValueId c : g_.implicit_inputs(n)) escapes_[c] = true;
  }
}

int Rewriter::producer(ValueId v) const {
  if (v < 0 || static_cast<size_t>(v) >= producer_.size()) return -1;
  int p = producer_[v];
  return p >= 0 && !dead_[p] ? p : -1;
}

int Rewriter::producer_op(ValueId v, const std::string& op_type) const {
  int p = producer(v);
  if (p < 0) return -1;
  const Node& n = g_.nodes[p];
  return n.domain.empty() && n.op_type == op_type ? p : -1;
}

std::vector<int> Rewriter::consumers(ValueId v) const {
  std::vector<int> r;
  if (v < 0 || static_cast<size_t>(v) >= users_.size()) return r;
  for (int u : users_[v])
    if (!dead_[u]) r.push_back(u);
  return r;
}

bool Rewriter::escapes(ValueId v) const {
  return v >= 0 && static_cast<size_t>(v) < escapes_.size() && escapes_[v];
}

bool Rewriter::single_use(ValueId v) const { return !escapes(v) && consumers(v).size() == 1; }

bool Rewriter::is_graph_input(ValueId v) const {
  return v >= 0 && static_cast<size_t>(v) < is_input_.size() && is_input_[v];
}

const Tensor* Rewriter::constant(ValueId v) const {
  if (v < 0 || static_cast<size_t>(v) >= g_.values.size() || is_graph_input(v)) return nullptr;
  const auto& c = g_.values[v].constant;
  return c && c->valid() ? &*c : nullptr;
}

std::optional<double> Rewriter::scalar(ValueId v) const {
  const Tensor* t = constant(v);
  if (!t || t->size() != 1 || t->dtype() == DType::kString) return std::nullopt;
  return element_as_double(*t);
}

ValueId Rewriter::new_value(const std::string& base, TypeInfo type) {
  std::string name = base;
  for (int k = 1; g_.find_value(name) != kNoValue; ++k) name = base + "_" + std::to_string(k);
  ValueId id = g_.add_value(name, std::move(type));
  producer_.push_back(-1);
  users_.push_back({});
  escapes_.push_back(false);
  is_input_.push_back(false);
  return id;
}

ValueId Rewriter::new_constant(const std::string& base, Tensor t) {
  TypeInfo type;
  type.dtype = t.dtype();
  std::vector<Dim> dims;
  for (int64_t d : t.shape()) dims.push_back(Dim{d, ""});
  type.shape = dims;
  ValueId id = new_value(base, type);
  g_.values[id].constant = std::move(t);
  return id;
}

bool Rewriter::replace_uses(ValueId from, ValueId to) {
  if (escapes(from)) return false;
  for (int u : consumers(from)) {
    for (ValueId& in : g_.nodes[u].inputs)
      if (in == from) {
        in = to;
        users_[to].push_back(u);
      }
  }
  users_[from].clear();
  return true;
}

void Rewriter::remove(int i) {
  if (dead_[i]) return;
  dead_[i] = true;
  for (ValueId o : g_.nodes[i].outputs)
    if (o >= 0 && producer_[o] == i) producer_[o] = -1;
}

void Rewriter::replace(int i, Node n) {
  for (ValueId o : g_.nodes[i].outputs)
    if (o >= 0 && producer_[o] == i) producer_[o] = -1;
  // Readers of the old node's inputs lose this reader; the new node's inputs gain it.
  for (ValueId in : g_.nodes[i].inputs)
    if (in >= 0) {
      auto& u = users_[in];
      auto it = std::find(u.begin(), u.end(), i);
      if (it != u.end()) u.erase(it);
    }
  g_.nodes[i] = std::move(n);
  dead_[i] = false;
  for (ValueId o : g_.nodes[i].outputs)
    if (o >= 0) producer_[o] = i;
  for (ValueId in : g_.nodes[i].inputs)
    if (in >= 0) users_[in].push_back(i);
}

void Rewriter::insert_before(int before, Node n) { inserted_.emplace_back(before, std::move(n)); }

void Rewriter::commit() {
  std::stable_sort(inserted_.begin(), inserted_.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<Node> nodes;
  std::vector<int> tags;
  std::vector<int>* old_tags = ctx_.node_tags;
  bool use_tags = old_tags && old_tags->size() == g_.nodes.size();
  size_t k = 0;
  for (size_t i = 0; i < g_.nodes.size(); ++i) {
    while (k < inserted_.size() && inserted_[k].first == static_cast<int>(i)) {
      nodes.push_back(std::move(inserted_[k].second));
      if (use_tags) tags.push_back((*old_tags)[i]);
      ++k;
    }
    if (dead_[i]) continue;
    nodes.push_back(std::move(g_.nodes[i]));
    if (use_tags) tags.push_back((*old_tags)[i]);
  }
  for (; k < inserted_.size(); ++k) {
    nodes.push_back(std::move(inserted_[k].second));
    if (use_tags) tags.push_back(old_tags->empty() ? -1 : old_tags->back());
  }
  g_.nodes = std::move(nodes);
  if (use_tags) *old_tags = std::move(tags);
  for (auto& v : g_.values) v.producer_node = -1;
  for (size_t i = 0; i < g_.nodes.size(); ++i)
    for (ValueId o : g_.nodes[i].outputs)
      if (o >= 0) g_.values[o].producer_node = static_cast<int>(i);
  inserted_.clear();
}

void log_fired(const std::string& pass, const std::string& what) { DLRT_LOG(kDebug, "opt: " + pass + ": " + what); }

}  // namespace dlrt::ir::passes
