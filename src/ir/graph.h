// dlrt's own graph: what every layer above the importer sees. ONNX protobuf
// types never appear here.
//
// A Graph owns its Values (tensors flowing between nodes, identified by index)
// and its Nodes (kept in a topological order once the importer is done).
// Subgraphs (If/Loop/Scan bodies) are Graphs owned by a node attribute; a
// value a subgraph reads from an enclosing graph is listed in `captures` and
// resolved by name when the subgraph runs.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "dlrt/status.h"
#include "dlrt/tensor.h"

namespace dlrt::ir {

using ValueId = int32_t;
inline constexpr ValueId kNoValue = -1;

class Graph;

// One dimension of a declared shape: a known size, or a symbol ("batch"), or unknown.
struct Dim {
  int64_t size = -1;   // -1 when not known statically
  std::string symbol;  // the model's name for a dynamic dim, may be empty
  bool is_static() const { return size >= 0; }
};

// What a value holds. Most values are tensors; a few ONNX ops use sequences
// of tensors or optionals, and traditional-ML ops maps (ZipMap makes a
// sequence of maps: kSequence with a key_dtype).
enum class ValueKind { kTensor, kSequence, kOptional, kMap, kUnknown };

struct TypeInfo {
  ValueKind kind = ValueKind::kTensor;
  DType dtype = DType::kUndefined;  // element type (of the tensor, or sequence/optional element; a map's values)
  // A map's key type (int64 or string), for kMap and for a kSequence of maps; else undefined.
  DType key_dtype = DType::kUndefined;
  std::optional<std::vector<Dim>> shape;  // nullopt when the rank is unknown
};

struct Value {
  std::string name;
  TypeInfo type;
  // Set for initializers and Constant outputs folded by the importer.
  std::optional<Tensor> constant;
  ValueId producer_node = -1;  // index into Graph::nodes, -1 for inputs/initializers/captures
};

struct Attribute {
  enum class Kind { kFloat, kInt, kString, kTensor, kGraph, kFloats, kInts, kStrings, kTensors, kGraphs, kTypeProto };
  Kind kind = Kind::kInt;
  float f = 0;
  int64_t i = 0;
  std::string s;
  Tensor t;
  std::shared_ptr<Graph> g;
  std::vector<float> floats;
  std::vector<int64_t> ints;
  std::vector<std::string> strings;
  std::vector<Tensor> tensors;
  std::vector<std::shared_ptr<Graph>> graphs;
  TypeInfo type;  // for kTypeProto (e.g. SequenceEmpty's dtype, Optional's type)
};

// A node's attributes by name. The comparator is transparent, so a lookup by
// a literal or a string_view builds no std::string (a name longer than the
// short-string buffer would be a heap allocation on every kernel run).
using Attributes = std::map<std::string, Attribute, std::less<>>;

struct Node {
  std::string name;
  std::string op_type;
  std::string domain;  // "" for the default ONNX domain
  int opset = 0;       // the model's opset version for `domain`
  std::vector<ValueId> inputs;   // kNoValue for an omitted optional input
  std::vector<ValueId> outputs;  // kNoValue for an omitted optional output
  Attributes attributes;

  bool has_attr(std::string_view n) const { return attributes.find(n) != attributes.end(); }
  const Attribute* attr(std::string_view n) const {
    auto it = attributes.find(n);
    return it == attributes.end() ? nullptr : &it->second;
  }
  int64_t attr_int(std::string_view n, int64_t def) const {
    auto* a = attr(n);
    return a ? a->i : def;
  }
  float attr_float(std::string_view n, float def) const {
    auto* a = attr(n);
    return a ? a->f : def;
  }
  std::string attr_string(std::string_view n, const std::string& def) const {
    auto* a = attr(n);
    return a ? a->s : def;
  }
  std::vector<int64_t> attr_ints(std::string_view n, std::vector<int64_t> def = {}) const {
    auto* a = attr(n);
    return a ? a->ints : def;
  }
  // The ints of attribute `n` without a copy (empty when absent): for kernels,
  // whose run path must not allocate.
  std::span<const int64_t> ints_of(std::string_view n) const {
    auto* a = attr(n);
    return a ? std::span<const int64_t>(a->ints) : std::span<const int64_t>();
  }
  std::vector<float> attr_floats(std::string_view n, std::vector<float> def = {}) const {
    auto* a = attr(n);
    return a ? a->floats : def;
  }
  std::vector<std::string> attr_strings(std::string_view n, std::vector<std::string> def = {}) const {
    auto* a = attr(n);
    return a ? a->strings : def;
  }
  // "node 'name' (Op)" for messages; uses the first output's name when unnamed.
  std::string describe() const;
};

class Graph {
 public:
  std::string name;
  std::vector<Value> values;
  std::vector<Node> nodes;        // topological order
  std::vector<ValueId> inputs;    // graph inputs that are fed at run time (initializers excluded)
  std::vector<ValueId> outputs;
  std::vector<ValueId> captures;  // values read from an enclosing graph, by name
  std::map<std::string, int> opsets;  // domain -> version ("" is the ONNX domain)

  ValueId add_value(std::string name, TypeInfo type = {});
  // Index of the value called `name`, or kNoValue.
  ValueId find_value(const std::string& name) const;

  // Sorts nodes topologically (stable where possible) and fills producer_node.
  // InvalidModel when there is a cycle or a value has two producers.
  Status topological_sort();

  // Values of this graph that `node`'s subgraphs (at any depth) read by name:
  // dependencies that do not appear in node.inputs.
  std::vector<ValueId> implicit_inputs(const Node& node) const;

  // Number of nodes here and in every nested subgraph.
  size_t total_node_count() const;

 private:
  std::map<std::string, ValueId> by_name_;
};

// Model-level data kept beside the main graph.
struct Model {
  std::shared_ptr<Graph> graph;
  int64_t ir_version = 0;
  std::string producer_name;
  std::string producer_version;
  std::map<std::string, int> opsets;
  std::string base_dir;  // folder of the model file, for external data
};

}  // namespace dlrt::ir
