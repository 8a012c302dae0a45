// ONNX ModelProto -> ir::Model: parsing, ONNX's checker and shape
// inference, external data, subgraphs with outer-scope captures.
#include "ir/onnx_import.h"

#include <fcntl.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <set>
#include <string_view>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <onnx/checker.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include "core/file_io.h"
#include "core/lfs_pointer.h"
#include "core/logging.h"
#include "core/tensor_values.h"
#include "ir/onnx_arity.h"
#include "ir/onnx_definitions.h"
#include "ir/onnx_functions.h"
#include "ir/onnx_map_inputs.h"
#include "ir/onnx_metadata.h"
#include "ir/onnx_tensor.h"

namespace dlrt::ir {

namespace fs = std::filesystem;

namespace {

Status check_model_path(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return IoError("model file '" + path + "' does not exist");
  if (fs::is_directory(path, ec)) return IoError("'" + path + "' is a folder, not a model file");
  return Status::Ok();
}

Result<std::string> read_file(const std::string& path) {
  DLRT_RETURN_IF_ERROR(check_model_path(path));
  return read_whole_file(path);
}

// Protobuf's default nesting limit, 100 levels, is reached by 31 nested Ifs
// (node, attribute and graph are three levels each): valid models. dlrt's
// importer recurses once per subgraph, a few KiB of stack each.
constexpr int kMaxProtoDepth = 1000;

std::string not_a_model(const std::string& what, bool lfs_pointer) {
  if (lfs_pointer) return lfs_pointer_message(what);
  return what + " is not a valid ONNX protobuf (truncated, not an ONNX file, or subgraphs nested deeper than " +
         std::to_string(kMaxProtoDepth / 3) + " levels)";
}

Status parse_proto(google::protobuf::MessageLite& msg, std::string_view bytes, const std::string& what) {
  if (bytes.empty()) return InvalidModel(what + " is empty (0 bytes)");
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()), static_cast<int>(bytes.size()));
  in.SetTotalBytesLimit(INT32_MAX);
  in.SetRecursionLimit(kMaxProtoDepth);
  if (!msg.ParseFromCodedStream(&in) || !in.ConsumedEntireMessage())
    return InvalidModel(not_a_model(what, is_lfs_pointer(bytes)));
  return Status::Ok();
}

// Parses a model file through a 1 MiB read buffer: the file is never held
// whole beside the parsed message (which holds the weights), so a 90 MB model
// peaks at ~90 MB, not 180, while loading.
Status parse_proto_file(google::protobuf::MessageLite& msg, const std::string& path) {
  const std::string what = "model file '" + path + "'";
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return IoError("cannot open " + what + ": " + std::strerror(errno));
  google::protobuf::io::FileInputStream file(fd, 1 << 20);
  file.SetCloseOnDelete(true);
  bool ok = false;
  int consumed = 0;
  {
    google::protobuf::io::CodedInputStream in(&file);
    in.SetTotalBytesLimit(INT32_MAX);
    in.SetRecursionLimit(kMaxProtoDepth);
    ok = msg.ParseFromCodedStream(&in) && in.ConsumedEntireMessage();
    consumed = in.CurrentPosition();
  }
  if (file.GetErrno() != 0) return IoError("reading " + what + " failed: " + std::strerror(file.GetErrno()));
  // An empty input parses as an empty message: refuse it as parse_proto does.
  if (consumed == 0) return InvalidModel(what + " is empty (0 bytes)");
  if (!ok) return InvalidModel(not_a_model(what, file_is_lfs_pointer(path)));
  return Status::Ok();
}

TypeInfo type_from_proto(const onnx::TypeProto& tp) {
  TypeInfo t;
  const onnx::TypeProto* inner = &tp;
  // map(K, tensor(V)): the key type, then the values' tensor type.
  auto take_map = [&](const onnx::TypeProto& m) {
    if (dtype_is_valid(m.map_type().key_type())) t.key_dtype = static_cast<DType>(m.map_type().key_type());
    inner = &m.map_type().value_type();
  };
  if (tp.has_sequence_type()) {
    t.kind = ValueKind::kSequence;
    inner = &tp.sequence_type().elem_type();
    if (inner->has_map_type()) take_map(*inner);
  } else if (tp.has_map_type()) {
    t.kind = ValueKind::kMap;
    take_map(tp);
  } else if (tp.has_optional_type()) {
    t.kind = ValueKind::kOptional;
    inner = &tp.optional_type().elem_type();
    if (inner->has_sequence_type()) inner = &inner->sequence_type().elem_type();
  } else if (!tp.has_tensor_type()) {
    t.kind = tp.value_case() == onnx::TypeProto::VALUE_NOT_SET ? ValueKind::kTensor : ValueKind::kUnknown;
  }
  if (inner->has_tensor_type()) {
    const auto& tt = inner->tensor_type();
    if (dtype_is_valid(tt.elem_type())) t.dtype = static_cast<DType>(tt.elem_type());
    if (tt.has_shape() && t.kind == ValueKind::kTensor) {
      std::vector<Dim> dims;
      for (const auto& d : tt.shape().dim()) {
        Dim dim;
        if (d.has_dim_value()) dim.size = d.dim_value();
        else if (d.has_dim_param()) dim.symbol = d.dim_param();
        dims.push_back(dim);
      }
      t.shape = std::move(dims);
    }
  }
  return t;
}

// Holds the state of one graph being converted and a link to the enclosing one.
struct Scope {
  Graph* graph;
  const Scope* parent;
};

class Importer {
 public:
  Importer(const std::map<std::string, int>& opsets, std::string base_dir)
      : opsets_(opsets), base_dir_(std::move(base_dir)) {}

  Result<std::shared_ptr<Graph>> convert_graph(onnx::GraphProto& gp, const Scope* parent);

 private:
  Status convert_attribute(onnx::AttributeProto& ap, const Node& node, Attribute& out, const Scope& scope);
  Result<ValueId> resolve_input(const std::string& name, Graph& g, const Scope& scope, const onnx::NodeProto& np);
  Result<Tensor> load_tensor(onnx::TensorProto& tp, const std::string& what) {
    if (tp.data_location() == onnx::TensorProto::EXTERNAL)
      DLRT_RETURN_IF_ERROR(inline_external_data(tp, base_dir_, what));
    return take_tensor_from_proto(tp, what);
  }
  Status fold_constant(const onnx::NodeProto& np, Node& node, Graph& g);

  const std::map<std::string, int>& opsets_;
  std::string base_dir_;
};

bool defined_in_chain(const std::string& name, const Scope* s) {
  for (; s; s = s->parent)
    if (s->graph->find_value(name) != kNoValue) return true;
  return false;
}

Result<ValueId> Importer::resolve_input(const std::string& name, Graph& g, const Scope& scope,
                                        const onnx::NodeProto& np) {
  if (name.empty()) return kNoValue;
  ValueId id = g.find_value(name);
  if (id != kNoValue) return id;
  if (defined_in_chain(name, scope.parent)) {
    id = g.add_value(name);
    g.captures.push_back(id);
    return id;
  }
  return id;  // resolved after all nodes are seen (outputs of later nodes)
}

Status Importer::convert_attribute(onnx::AttributeProto& ap, const Node& node, Attribute& a, const Scope& scope) {
  using K = Attribute::Kind;
  const std::string what = node.describe() + " attribute '" + ap.name() + "'";
  switch (ap.type()) {
    case onnx::AttributeProto::FLOAT: a.kind = K::kFloat; a.f = ap.f(); break;
    case onnx::AttributeProto::INT: a.kind = K::kInt; a.i = ap.i(); break;
    case onnx::AttributeProto::STRING: a.kind = K::kString; a.s = ap.s(); break;
    case onnx::AttributeProto::FLOATS: a.kind = K::kFloats; a.floats.assign(ap.floats().begin(), ap.floats().end()); break;
    case onnx::AttributeProto::INTS: a.kind = K::kInts; a.ints.assign(ap.ints().begin(), ap.ints().end()); break;
    case onnx::AttributeProto::STRINGS: a.kind = K::kStrings; a.strings.assign(ap.strings().begin(), ap.strings().end()); break;
    case onnx::AttributeProto::TENSOR: {
      a.kind = K::kTensor;
      DLRT_ASSIGN_OR_RETURN(a.t, load_tensor(*ap.mutable_t(), what));
      break;
    }
    case onnx::AttributeProto::TENSORS:
      a.kind = K::kTensors;
      for (auto& tp : *ap.mutable_tensors()) {
        DLRT_ASSIGN_OR_RETURN(Tensor t, load_tensor(tp, what));
        a.tensors.push_back(std::move(t));
      }
      break;
    case onnx::AttributeProto::GRAPH: {
      a.kind = K::kGraph;
      DLRT_ASSIGN_OR_RETURN(a.g, convert_graph(*ap.mutable_g(), &scope));
      break;
    }
    case onnx::AttributeProto::GRAPHS:
      a.kind = K::kGraphs;
      for (auto& gp : *ap.mutable_graphs()) {
        DLRT_ASSIGN_OR_RETURN(auto g, convert_graph(gp, &scope));
        a.graphs.push_back(std::move(g));
      }
      break;
    case onnx::AttributeProto::TYPE_PROTO:
      a.kind = K::kTypeProto;
      a.type = type_from_proto(ap.tp());
      break;
    default:
      return Unsupported(what + " has attribute type " + std::to_string(ap.type()) + ", which dlrt does not support");
  }
  return Status::Ok();
}

// Constant nodes become constant values: no kernel runs for them.
Status Importer::fold_constant(const onnx::NodeProto& np, Node& node, Graph& g) {
  if (np.output_size() != 1 || np.output(0).empty()) return InvalidModel(node.describe() + " must have exactly one output");
  Tensor t;
  const auto& attrs = node.attributes;
  if (attrs.size() != 1)
    return InvalidModel(node.describe() + " must have exactly one value attribute, has " + std::to_string(attrs.size()));
  const auto& [key, a] = *attrs.begin();
  if (key == "value") t = a.t;
  else if (key == "value_float") t = Tensor::scalar<float>(a.f);
  else if (key == "value_int") t = Tensor::scalar<int64_t>(a.i);
  else if (key == "value_floats") t = Tensor::from_vector<float>({static_cast<int64_t>(a.floats.size())}, a.floats);
  else if (key == "value_ints") t = Tensor::from_vector<int64_t>({static_cast<int64_t>(a.ints.size())}, a.ints);
  else if (key == "value_string") t = Tensor::scalar<std::string>(a.s);
  else if (key == "value_strings") t = Tensor::from_vector<std::string>({static_cast<int64_t>(a.strings.size())}, a.strings);
  else return Unsupported(node.describe() + ": Constant attribute '" + key + "' (sparse tensors) is not supported");
  if (!t.valid()) return InvalidModel(node.describe() + ": Constant has no valid value");
  ValueId id = g.find_value(np.output(0));
  if (id == kNoValue) id = g.add_value(np.output(0));
  Value& v = g.values[id];
  if (v.constant || v.producer_node != -1) return InvalidModel("value '" + np.output(0) + "' is defined twice");
  v.type.kind = ValueKind::kTensor;
  v.type.dtype = t.dtype();
  std::vector<Dim> dims;
  for (int64_t d : t.shape()) dims.push_back(Dim{d, ""});
  v.type.shape = dims;
  v.constant = std::move(t);
  v.producer_node = -2;  // marks "defined" until topological_sort resets producers
  return Status::Ok();
}

Result<std::shared_ptr<Graph>> Importer::convert_graph(onnx::GraphProto& gp, const Scope* parent) {
  auto g = std::make_shared<Graph>();
  g->name = gp.name();
  g->opsets = opsets_;
  Scope scope{g.get(), parent};

  std::map<std::string, TypeInfo> types;
  for (const auto& vi : gp.value_info()) types[vi.name()] = type_from_proto(vi.type());
  for (const auto& vi : gp.output()) types[vi.name()] = type_from_proto(vi.type());

  for (auto& init : *gp.mutable_initializer()) {
    if (init.name().empty()) return InvalidModel("an initializer has no name");
    if (g->find_value(init.name()) != kNoValue) return InvalidModel("initializer '" + init.name() + "' is defined twice");
    DLRT_ASSIGN_OR_RETURN(Tensor t, load_tensor(init, "initializer '" + init.name() + "'"));
    TypeInfo ti;
    ti.dtype = t.dtype();
    std::vector<Dim> dims;
    for (int64_t d : t.shape()) dims.push_back(Dim{d, ""});
    ti.shape = dims;
    ValueId id = g->add_value(init.name(), ti);
    g->values[id].constant = std::move(t);
    init.clear_raw_data();  // the tensor owns the bytes now
  }
  if (gp.sparse_initializer_size() > 0) return Unsupported("sparse initializers are not supported");

  for (const auto& in : gp.input()) {
    if (in.name().empty()) return InvalidModel("a graph input has no name");
    ValueId id = g->find_value(in.name());
    if (id != kNoValue && g->values[id].constant) continue;  // an initializer's default: treated as a constant
    if (id != kNoValue) return InvalidModel("graph input '" + in.name() + "' is listed twice");
    // An element type dlrt has no tensors of (complex, float8, 4-bit) is refused here, naming
    // it, rather than at the first run as an undefined dtype.
    const onnx::TypeProto* tp = &in.type();
    if (tp->has_sequence_type()) tp = &tp->sequence_type().elem_type();
    if (tp->has_optional_type()) tp = &tp->optional_type().elem_type();
    if (tp->has_tensor_type() && tp->tensor_type().elem_type() != 0 && !dtype_is_valid(tp->tensor_type().elem_type()))
      return Unsupported("graph input '" + in.name() + "' has element type " +
                         onnx::TensorProto_DataType_Name(tp->tensor_type().elem_type()) + " (" +
                         std::to_string(tp->tensor_type().elem_type()) + "), which dlrt has no tensors of");
    id = g->add_value(in.name(), type_from_proto(in.type()));
    g->inputs.push_back(id);
  }

  // Nodes: create all outputs first so inputs can refer to values produced later
  // (unsorted graphs are sorted below; true cycles are rejected there).
  for (const auto& np : gp.node())
    for (const auto& out : np.output()) {
      if (out.empty()) continue;
      ValueId id = g->find_value(out);
      if (id != kNoValue && (g->values[id].constant || std::find(g->inputs.begin(), g->inputs.end(), id) != g->inputs.end()))
        return InvalidModel("value '" + out + "' is both an input/initializer and the output of node '" + np.name() + "'");
      if (id == kNoValue) g->add_value(out, types.count(out) ? types[out] : TypeInfo{});
    }

  for (auto& np : *gp.mutable_node()) {
    Node node;
    node.name = np.name();
    node.op_type = np.op_type();
    node.domain = normalize_domain(np.domain());
    if (node.name.empty() && np.output_size() > 0) node.name = np.output(0);
    auto op = opsets_.find(node.domain);
    if (op == opsets_.end())
      return InvalidModel(node.describe() + " uses domain '" + node.domain + "', which the model does not import (opset_import)");
    node.opset = op->second;
    for (auto& ap : *np.mutable_attribute()) {
      if (!ap.ref_attr_name().empty()) continue;  // only meaningful inside functions
      Attribute a;
      DLRT_RETURN_IF_ERROR(convert_attribute(ap, node, a, scope));
      node.attributes[ap.name()] = std::move(a);
    }
    if (node.domain.empty() && node.op_type == "Constant") {
      DLRT_RETURN_IF_ERROR(fold_constant(np, node, *g));
      continue;
    }
    for (const auto& in : np.input()) {
      DLRT_ASSIGN_OR_RETURN(ValueId id, resolve_input(in, *g, scope, np));
      if (id == kNoValue && !in.empty())
        return InvalidModel(node.describe() + " reads value '" + in + "', which no node, graph input or initializer defines");
      node.inputs.push_back(id);
    }
    for (const auto& out : np.output()) node.outputs.push_back(out.empty() ? kNoValue : g->find_value(out));
    g->nodes.push_back(std::move(node));
  }

  for (const auto& out : gp.output()) {
    ValueId id = g->find_value(out.name());
    if (id == kNoValue && defined_in_chain(out.name(), parent)) {
      id = g->add_value(out.name());
      g->captures.push_back(id);
    }
    if (id == kNoValue) return InvalidModel("graph output '" + out.name() + "' is not produced by any node or input");
    TypeInfo declared = type_from_proto(out.type());
    if (g->values[id].type.dtype == DType::kUndefined) g->values[id].type = declared;
    g->outputs.push_back(id);
  }
  DLRT_RETURN_IF_ERROR(g->topological_sort());
  return g;
}

int default_opset(const onnx::ModelProto& m) {
  for (const auto& o : m.opset_import())
    if (normalize_domain(o.domain()).empty()) return static_cast<int>(o.version());
  return 0;
}

// Einsum's equation: letters, ',', spaces, "..." and one "->" only (ONNX
// 1.23.2's inference loops forever on another character left of the arrow;
// found by fuzzing).
Status check_einsum_equation(const onnx::NodeProto& n, const std::string& what) {
  std::string eq;
  for (const auto& a : n.attribute())
    if (a.name() == "equation") eq = a.s();
  const size_t arrow = eq.find("->");
  bool ok = arrow == std::string::npos || eq.find("->", arrow + 2) == std::string::npos;
  for (size_t i = 0; i < eq.size() && ok; ++i) {
    const char c = eq[i];
    if (i == arrow || (arrow != std::string::npos && i == arrow + 1)) continue;
    if (c == '.') {
      ok = eq.compare(i, 3, "...") == 0;
      i += 2;
      continue;
    }
    ok = std::isalpha(static_cast<unsigned char>(c)) || c == ',' || c == ' ';
  }
  if (!ok) return InvalidModel(what + ": Einsum equation '" + eq + "' is malformed (letters, ',', '...' and one '->')");
  return Status::Ok();
}

// Attribute and input values that crash libonnx's shape inference (a
// division by a zero stride, a rank it assumes), found by fuzzing: each is
// also invalid ONNX, so the model is refused with the reason instead.
Status validate_for_libonnx(const onnx::GraphProto& g, int opset, const std::set<std::string>& outer = {}) {
  std::map<std::string, const onnx::TensorProto*> inits;
  for (const auto& t : g.initializer()) inits[t.name()] = &t;
  // A subgraph's initializers likewise (the main graph's are read in full by
  // the importer right after).
  if (!outer.empty())
    for (const auto& t : g.initializer())
      DLRT_RETURN_IF_ERROR(check_tensor_proto(t, "initializer '" + t.name() + "'"));
  // Every value a node reads is defined here (in any order: dlrt sorts the
  // graph) or in an enclosing graph. The checker reports an undefined input
  // as an unsorted graph, which dlrt ignores, and libonnx's MaxUnpool
  // inference then read the missing input's type (found by fuzzing).
  std::set<std::string> defined = outer;
  for (const auto& v : g.input()) defined.insert(v.name());
  for (const auto& t : g.initializer()) defined.insert(t.name());
  for (const auto& n : g.node())
    for (const auto& o : n.output()) defined.insert(o);
  std::map<std::string, int> ranks;  // declared ranks of graph inputs and annotated values
  auto note_rank = [&](const onnx::ValueInfoProto& v) {
    if (v.type().has_tensor_type() && v.type().tensor_type().has_shape())
      ranks[v.name()] = v.type().tensor_type().shape().dim_size();
  };
  for (const auto& v : g.input()) note_rank(v);
  // A tensor input of no element type: libonnx's inference functions read
  // its type as if it had one (MaxUnpool's crashed, found by fuzzing).
  // Likewise a sparse-tensor or opaque input, which no dlrt kernel takes, and
  // a map that anything but DictVectorizer reads (MaxUnpool's read a map's
  // missing tensor type).
  for (const auto& v : g.input()) {
    if (inits.count(v.name())) continue;
    if (v.type().has_tensor_type() && v.type().tensor_type().elem_type() == onnx::TensorProto::UNDEFINED)
      return InvalidModel("graph input '" + v.name() + "' is a tensor of no element type");
    if (v.type().has_sparse_tensor_type() || v.type().has_opaque_type())
      return Unsupported("graph input '" + v.name() + "' is a sparse tensor or opaque value; dlrt takes tensors, "
                         "sequences, optionals and maps");
    if (v.type().has_map_type()) DLRT_RETURN_IF_ERROR(check_map_input(g, v, outer.empty()));
  }
  for (const auto& v : g.value_info()) note_rank(v);
  for (const auto& t : g.initializer()) ranks[t.name()] = t.dims_size();
  for (const auto& n : g.node()) {
    const std::string what = "node '" + (n.name().empty() ? (n.output_size() ? n.output(0) : std::string()) : n.name()) +
                             "' (" + n.op_type() + ")";
    for (const auto& a : n.attribute()) {
      // Tensor attributes (Constant's value) hold data of their dims' size:
      // libonnx's inference copies them by their dims (a short one in a Loop
      // body overflowed in ParseData; found by fuzzing).
      if (a.has_t()) DLRT_RETURN_IF_ERROR(check_tensor_proto(a.t(), what + " attribute '" + a.name() + "'"));
      for (const auto& t : a.tensors())
        DLRT_RETURN_IF_ERROR(check_tensor_proto(t, what + " attribute '" + a.name() + "'"));
      if (a.type() == onnx::AttributeProto::GRAPH) DLRT_RETURN_IF_ERROR(validate_for_libonnx(a.g(), opset, defined));
      for (const auto& sub : a.graphs()) DLRT_RETURN_IF_ERROR(validate_for_libonnx(sub, opset, defined));
      if (a.name() == "strides" || a.name() == "dilations" || a.name() == "kernel_shape")
        for (int64_t v : a.ints())
          if (v <= 0) return InvalidModel(what + ": " + a.name() + " must be positive, got " + std::to_string(v));
    }
    for (const auto& in : n.input())
      if (!in.empty() && !defined.count(in))
        return InvalidModel(what + ": input '" + in + "' is not a graph input, an initializer or any node's output");
    const std::string domain = normalize_domain(n.domain());
    if (!domain.empty()) continue;
    // Required attributes present and of their type: the checker stops at the
    // first problem it finds, and when that one is ignored (an op it does not
    // know, an unsorted graph) later nodes reach shape inference unchecked;
    // Scan's without num_scan_inputs crashed it (found by fuzz/fuzz_model.cpp).
    if (const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(n.op_type(), opset, "")) {
      for (const auto& [name, want] : schema->attributes()) {
        const onnx::AttributeProto* have = nullptr;
        for (const auto& a : n.attribute())
          if (a.name() == name) have = &a;
        if (!have && want.required) return InvalidModel(what + ": the required attribute '" + name + "' is missing");
        if (have && have->type() != onnx::AttributeProto::UNDEFINED && have->type() != want.type)
          return InvalidModel(what + ": attribute '" + name + "' has the wrong type");
      }
    }
    if (n.op_type() == "Einsum") DLRT_RETURN_IF_ERROR(check_einsum_equation(n, what));
    if (n.op_type() == "SplitToSequence" && n.input_size() > 1) {
      auto it = inits.find(n.input(1));
      if (it != inits.end() && it->second->dims_size() == 0) {
        // A malformed one (a scalar holding 8 values, found by fuzzing) is refused here too:
        // libonnx's inference divides by its first value.
        auto t = tensor_from_proto(*it->second, what + " split");
        if (!t.ok()) return t.status();
        if (t->size() == 1 && (t->dtype() == DType::kInt64 || t->dtype() == DType::kInt32) &&
            element_as_double(*t, 0) <= 0)
          return InvalidModel(what + ": a scalar split must be positive, got " +
                              std::to_string(static_cast<int64_t>(element_as_double(*t, 0))));
      }
    }
    // Convolutions and pools: the input of rank >= 3 and the weights of its rank
    // (libonnx's ConvTranspose inference read past a rank-2 input; found by fuzzing).
    {
      const std::string& op = n.op_type();
      const bool conv = op == "Conv" || op == "ConvTranspose" || op == "ConvInteger" || op == "DeformConv";
      const bool qconv = op == "QLinearConv";
      const bool pool = op == "MaxPool" || op == "AveragePool" || op == "LpPool" || op == "MaxUnpool" ||
                        op == "MaxRoiPool" || op == "GlobalAveragePool" || op == "GlobalMaxPool" ||
                        op == "GlobalLpPool";
      if ((conv || qconv || pool) && n.input_size() > 0) {
        auto x = ranks.find(n.input(0));
        if (x != ranks.end() && x->second < 3)
          return InvalidModel(what + ": the input must have rank 3 or more (batch, channels, spatial dims), got rank " +
                              std::to_string(x->second));
        const int w_index = qconv ? 3 : 1;
        if ((conv || qconv) && n.input_size() > w_index && x != ranks.end()) {
          auto w = ranks.find(n.input(w_index));
          if (w != ranks.end() && w->second != x->second)
            return InvalidModel(what + ": the weights have rank " + std::to_string(w->second) + ", the input rank " +
                                std::to_string(x->second));
        }
      }
    }
    // An axis attribute inside the input's rank (libonnx's LayerNormalization
    // inference read dims of a rank-0 input, found by fuzzing).
    if ((n.op_type() == "LayerNormalization" || n.op_type() == "Softmax" || n.op_type() == "LogSoftmax" ||
         n.op_type() == "Hardmax" || n.op_type() == "Flatten" || n.op_type() == "Concat" || n.op_type() == "Gather" ||
         n.op_type() == "Split") &&
        n.input_size() > 0) {
      auto x = ranks.find(n.input(0));
      if (x != ranks.end()) {
        int64_t axis = n.op_type() == "LayerNormalization" || n.op_type() == "Softmax" ||
                               n.op_type() == "LogSoftmax" || n.op_type() == "Hardmax"
                           ? -1
                           : (n.op_type() == "Flatten" ? 1 : 0);
        bool has_axis = false;
        for (const auto& a : n.attribute())
          if (a.name() == "axis" && a.type() == onnx::AttributeProto::INT) axis = a.i(), has_axis = true;
        const int64_t r = x->second;
        const bool flatten = n.op_type() == "Flatten";  // axis in [-r, r]
        if ((has_axis || r == 0) && (axis < -r || axis > (flatten ? r : r - 1)))
          return InvalidModel(what + ": axis " + std::to_string(axis) + " is outside the input's rank " +
                              std::to_string(r));
      }
    }
    if (n.op_type() == "STFT" && n.input_size() > 0) {
      auto it = ranks.find(n.input(0));
      if (it != ranks.end() && it->second != 3)
        return InvalidModel(what + ": the signal must be [batch, length, 1 or 2] (rank 3), got rank " +
                            std::to_string(it->second));
    }
  }
  return Status::Ok();
}

// True when the graph has a MaxUnpool (at any depth): libonnx's MaxUnpool
// inference reads the shapes of its inputs without checking that they exist
// (found by fuzzing: an indices input of unknown shape), and an input's shape
// may be unknown however it is made, so such a model skips libonnx's shape
// inference (dlrt's own still runs).
bool needs_shapes_libonnx_lacks(const onnx::GraphProto& g) {
  for (const auto& n : g.node()) {
    for (const auto& a : n.attribute()) {
      if (a.type() == onnx::AttributeProto::GRAPH && needs_shapes_libonnx_lacks(a.g())) return true;
      for (const auto& sub : a.graphs())
        if (needs_shapes_libonnx_lacks(sub)) return true;
    }
    if (n.op_type() == "MaxUnpool" && normalize_domain(n.domain()).empty()) return true;
  }
  return false;
}

// ONNX's checker and shape inference. Errors that only say an op is unknown
// are left to the runtime, which names the op, domain, opset and node.
Status run_libonnx_checks(onnx::ModelProto& m) {
  // The checker requires a shape on every graph input and output and stops
  // at the first one without. A value of unknown rank is legal for dlrt (its
  // kernels check shapes at run time; partitions it exports may have such
  // borders), so it gets an empty shape for the check only, and the nodes are
  // still checked.
  std::vector<onnx::TypeProto_Tensor*> shapeless;
  for (auto* list : {m.mutable_graph()->mutable_input(), m.mutable_graph()->mutable_output()})
    for (auto& vi : *list)
      if (vi.type().has_tensor_type() && !vi.type().tensor_type().has_shape()) {
        shapeless.push_back(vi.mutable_type()->mutable_tensor_type());
        shapeless.back()->mutable_shape();
      }
  std::string rejected;
  try {
    onnx::checker::check_model(m);
  } catch (const std::exception& e) {
    std::string msg = e.what();
    bool only_unknown_op = msg.find("No Op registered") != std::string::npos ||
                           msg.find("No opset import for domain") != std::string::npos ||
                           msg.find("is under development") != std::string::npos;
    bool unsorted = msg.find("topologically sorted") != std::string::npos;
    if (!only_unknown_op && !unsorted) rejected = msg;
    else DLRT_LOG(kDebug, std::string("ONNX checker (ignored): ") + msg);
  }
  for (auto* t : shapeless) t->clear_shape();
  if (!rejected.empty()) return InvalidModel("the ONNX checker rejected the model: " + rejected);
  // ONNX's shape inference divides by strides and indexes ranks it does not
  // always check: refuse what would crash it first.
  DLRT_RETURN_IF_ERROR(validate_for_libonnx(m.graph(), default_opset(m)));
  if (needs_shapes_libonnx_lacks(m.graph())) {
    DLRT_LOG(kDebug, "a MaxUnpool: skipping libonnx's shape inference (it may crash on unknown input shapes)");
    return Status::Ok();
  }
  try {
    onnx::ShapeInferenceOptions opts(false, 0, false);
    onnx::shape_inference::InferShapes(m, onnx::OpSchemaRegistry::Instance(), opts);
  } catch (const std::exception& e) {
    DLRT_LOG(kDebug, std::string("ONNX shape inference failed (ignored): ") + e.what());
  }
  return Status::Ok();
}

Result<Model> import_model(onnx::ModelProto& m, const std::string& base_dir, const ImportOptions& options) {
  if (!m.has_graph() || (m.ir_version() <= 0 && m.opset_import_size() == 0))
    return InvalidModel("the data parsed as protobuf but is not an ONNX model (no graph, no ir_version, no opset_import)");
  Model model;
  model.ir_version = m.ir_version();
  model.producer_name = m.producer_name();
  model.producer_version = m.producer_version();
  if (options.metadata) read_metadata(m, *options.metadata);
  model.base_dir = base_dir;
  for (const auto& o : m.opset_import()) {
    if (o.version() < 1 || o.version() > std::numeric_limits<int>::max())
      return InvalidModel("opset_import of domain '" + o.domain() + "' has version " + std::to_string(o.version()) +
                          ", which is no opset");
    model.opsets[normalize_domain(o.domain())] = static_cast<int>(o.version());
  }
  if (m.opset_import_size() == 0) model.opsets[""] = 1;  // IR v1/v2 models imply opset 1
  int op = model.opsets.count("") ? model.opsets[""] : 0;
  if (model.opsets.count("") && (op < 1 || op > kMaxOpset))
    return Unsupported("the model uses ONNX opset " + std::to_string(op) + "; dlrt supports opsets " +
                       std::to_string(kMinOpset) + " to " + std::to_string(kMaxOpset) +
                       " (older ones back to 1 where the ops are unchanged); convert it with onnx.version_converter");

  // External data is loaded first so that libonnx's checks see inline tensors.
  Importer importer(model.opsets, base_dir);
  for (auto& init : *m.mutable_graph()->mutable_initializer())
    if (init.data_location() == onnx::TensorProto::EXTERNAL)
      DLRT_RETURN_IF_ERROR(inline_external_data(init, base_dir, "initializer '" + init.name() + "'"));
  DLRT_RETURN_IF_ERROR(inline_local_functions(m));
  // Node arity with dlrt's wording, before ONNX's checker (which stops at the
  // first problem of any kind).
  DLRT_RETURN_IF_ERROR(check_node_arity(m.graph(), op));
  DLRT_RETURN_IF_ERROR(run_libonnx_checks(m));
  DLRT_RETURN_IF_ERROR(inline_function_ops(m, options.runs_op));
  DLRT_RETURN_IF_ERROR(check_newer_definitions(m.graph(), op));
  DLRT_ASSIGN_OR_RETURN(model.graph, importer.convert_graph(*m.mutable_graph(), nullptr));
  return model;
}

}  // namespace

Result<Model> import_onnx_bytes(const std::string& bytes, const std::string& base_dir, const ImportOptions& options) {
  onnx::ModelProto m;
  DLRT_RETURN_IF_ERROR(parse_proto(m, bytes, "the model data"));
  return import_model(m, base_dir, options);
}

Result<Model> import_onnx_file(const std::string& path, const ImportOptions& options) {
  DLRT_RETURN_IF_ERROR(check_model_path(path));
  onnx::ModelProto m;
  DLRT_RETURN_IF_ERROR(parse_proto_file(m, path));
  std::string base = fs::path(path).parent_path().string();
  if (base.empty()) base = ".";
  auto r = import_model(m, base, options);
  if (!r.ok()) return r.status().with_context(path);
  return r;
}

Result<RunValue> load_test_data_file(const std::string& path, ValueKind kind) {
  DLRT_ASSIGN_OR_RETURN(std::string bytes, read_file(path));
  const std::string what = "test data '" + path + "'";
  if (kind == ValueKind::kSequence) {
    onnx::SequenceProto sp;
    DLRT_RETURN_IF_ERROR(parse_proto(sp, bytes, what));
    std::vector<Tensor> items;
    DType elem = DType::kUndefined;
    for (const auto& tp : sp.tensor_values()) {
      DLRT_ASSIGN_OR_RETURN(Tensor t, tensor_from_proto(tp, what));
      elem = t.dtype();
      items.push_back(std::move(t));
    }
    return RunValue::of_sequence(std::move(items), elem);
  }
  if (kind == ValueKind::kOptional) {
    onnx::OptionalProto op;
    DLRT_RETURN_IF_ERROR(parse_proto(op, bytes, what));
    if (op.has_tensor_value()) {
      DLRT_ASSIGN_OR_RETURN(Tensor t, tensor_from_proto(op.tensor_value(), what));
      return RunValue::of(std::move(t));
    }
    if (op.has_sequence_value()) {
      std::vector<Tensor> items;
      DType elem = DType::kUndefined;
      for (const auto& tp : op.sequence_value().tensor_values()) {
        DLRT_ASSIGN_OR_RETURN(Tensor t, tensor_from_proto(tp, what));
        elem = t.dtype();
        items.push_back(std::move(t));
      }
      return RunValue::of_sequence(std::move(items), elem);
    }
    return RunValue::optional_none(dtype_is_valid(op.elem_type()) ? static_cast<DType>(op.elem_type()) : DType::kUndefined);
  }
  onnx::TensorProto tp;
  if (bytes.empty()) {
    // An empty file is a valid serialization of a TensorProto with no fields.
    return InvalidModel(what + " is empty");
  }
  DLRT_RETURN_IF_ERROR(parse_proto(tp, bytes, what));
  DLRT_ASSIGN_OR_RETURN(Tensor t, tensor_from_proto(tp, what));
  return RunValue::of(std::move(t));
}

}  // namespace dlrt::ir
