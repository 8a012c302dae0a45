#include "ir/graph.h"

#include <algorithm>
#include <queue>

namespace dlrt::ir {

std::string Node::describe() const {
  std::string n = name;
  if (n.empty()) n = "<unnamed>";
  return "node '" + n + "' (" + (domain.empty() ? "" : domain + ".") + op_type + ")";
}

ValueId Graph::add_value(std::string n, TypeInfo type) {
  ValueId id = static_cast<ValueId>(values.size());
  if (!n.empty()) by_name_[n] = id;
  values.push_back(Value{std::move(n), std::move(type), std::nullopt, -1});
  return id;
}

ValueId Graph::find_value(const std::string& n) const {
  auto it = by_name_.find(n);
  return it == by_name_.end() ? kNoValue : it->second;
}

namespace {
void collect_capture_names(const Node& node, std::vector<std::string>& names) {
  auto visit = [&](const Graph& g) {
    for (ValueId c : g.captures) names.push_back(g.values[c].name);
    for (const auto& n : g.nodes) collect_capture_names(n, names);
  };
  for (const auto& [k, a] : node.attributes) {
    if (a.g) visit(*a.g);
    for (const auto& g : a.graphs) visit(*g);
  }
}
}  // namespace

std::vector<ValueId> Graph::implicit_inputs(const Node& node) const {
  std::vector<std::string> names;
  collect_capture_names(node, names);
  std::vector<ValueId> ids;
  for (const auto& n : names) {
    ValueId id = find_value(n);
    if (id != kNoValue && std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
  }
  return ids;
}

Status Graph::topological_sort() {
  const size_t n = nodes.size();
  std::vector<int> producer(values.size(), -1);
  for (size_t i = 0; i < n; ++i) {
    for (ValueId o : nodes[i].outputs) {
      if (o == kNoValue) continue;
      if (producer[o] != -1)
        return InvalidModel("value '" + values[o].name + "' is produced by both " + nodes[producer[o]].describe() +
                            " and " + nodes[i].describe());
      producer[o] = static_cast<int>(i);
    }
  }
  std::vector<int> pending(n, 0);
  std::vector<std::vector<int>> users(n);
  for (size_t i = 0; i < n; ++i) {
    std::vector<ValueId> deps = nodes[i].inputs;
    for (ValueId c : implicit_inputs(nodes[i])) deps.push_back(c);
    for (ValueId in : deps) {
      if (in == kNoValue || producer[in] < 0) continue;
      ++pending[i];
      users[producer[in]].push_back(static_cast<int>(i));
    }
  }
  // Kahn's algorithm with a min-heap keeps the model's own order where it is valid.
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (size_t i = 0; i < n; ++i)
    if (pending[i] == 0) ready.push(static_cast<int>(i));
  std::vector<int> order;
  order.reserve(n);
  while (!ready.empty()) {
    int i = ready.top();
    ready.pop();
    order.push_back(i);
    for (int u : users[i])
      if (--pending[u] == 0) ready.push(u);
  }
  if (order.size() != n) {
    for (size_t i = 0; i < n; ++i)
      if (pending[i] > 0) return InvalidModel("the graph has a cycle through " + nodes[i].describe());
  }
  std::vector<Node> sorted;
  sorted.reserve(n);
  for (int i : order) sorted.push_back(std::move(nodes[i]));
  nodes = std::move(sorted);
  for (auto& v : values) v.producer_node = -1;
  for (size_t i = 0; i < n; ++i)
    for (ValueId o : nodes[i].outputs)
      if (o != kNoValue) values[o].producer_node = static_cast<ValueId>(i);
  return Status::Ok();
}

size_t Graph::total_node_count() const {
  size_t c = nodes.size();
  for (const auto& nd : nodes)
    for (const auto& [k, a] : nd.attributes) {
      if (a.g) c += a.g->total_node_count();
      for (const auto& g : a.graphs) c += g->total_node_count();
    }
  return c;
}

}  // namespace dlrt::ir
