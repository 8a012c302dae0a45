#include "ir/onnx_functions.h"

#include <map>
#include <set>
#include <utility>

#include <onnx/defs/schema.h>
#include <onnx/inliner/inliner.h>
#include <onnx/shape_inference/implementation.h>

#include "core/logging.h"

namespace dlrt::ir {

Status inline_local_functions(onnx::ModelProto& m) {
  if (m.functions_size() == 0) return Status::Ok();
  try {
    onnx::inliner::InlineLocalFunctions(m, /*convert_version=*/true);
  } catch (const std::exception& e) {
    return InvalidModel(std::string("cannot inline the model's local functions: ") + e.what());
  }
  return Status::Ok();
}

namespace {

// One round of inline_function_ops: true when something was expanded.
Result<bool> inline_function_ops_once(onnx::ModelProto& m, const RunsOp& runs_op) {
  std::map<std::string, int> opsets;
  for (const auto& o : m.opset_import()) opsets[normalize_domain(o.domain())] = static_cast<int>(o.version());
  onnx::inliner::FunctionIdVector ids;
  std::set<std::pair<std::string, std::string>> seen;
  for (const auto& n : m.graph().node()) {
    const std::string domain = normalize_domain(n.domain());
    auto it = opsets.find(domain);
    if (it == opsets.end() || !seen.insert({n.domain(), n.op_type()}).second) continue;
    if (runs_op(domain, n.op_type(), it->second)) continue;
    const onnx::OpSchema* s = onnx::OpSchemaRegistry::Schema(n.op_type(), it->second, domain);
    if (!s || !(s->HasFunction() || s->HasContextDependentFunction())) continue;
    ids.emplace_back(n.domain(), n.op_type());
    DLRT_LOG(kDebug, "expanding " + n.op_type() + " (opset " + std::to_string(it->second) +
                         ") into its ONNX function body: no native kernel");
  }
  if (ids.empty()) return false;
  // Attributes left at their defaults are written out on the node: a body
  // that refers to an attribute (e.g. a Constant of value @alpha) gets the
  // default, which ONNX's inliner does not fill in itself.
  for (auto& n : *m.mutable_graph()->mutable_node()) {
    bool selected = false;
    for (const auto& id : ids) selected = selected || (id.first == n.domain() && id.second == n.op_type());
    if (!selected) continue;
    const onnx::OpSchema* s = onnx::OpSchemaRegistry::Schema(n.op_type(), opsets[normalize_domain(n.domain())],
                                                             normalize_domain(n.domain()));
    if (!s) continue;
    for (const auto& [name, attr] : s->attributes()) {
      if (attr.default_value.type() == onnx::AttributeProto::UNDEFINED) continue;  // no default
      bool present = false;
      for (const auto& a : n.attribute()) present = present || a.name() == name;
      if (present) continue;
      auto* a = n.add_attribute();
      *a = attr.default_value;
      a->set_name(name);
    }
  }
  // ONNX's inliner builds a context-dependent body from the types of the
  // node's inputs, which it looks up in the graph's value_info, inputs and
  // outputs only: give it the types of initializers, and an empty type for
  // the name "" of a missing optional input, for the time of the expansion.
  auto* vis = m.mutable_graph()->mutable_value_info();
  const int added_from = vis->size();
  {
    std::set<std::string> typed;
    for (const auto& v : m.graph().value_info()) typed.insert(v.name());
    for (const auto& v : m.graph().input()) typed.insert(v.name());
    for (const auto& v : m.graph().output()) typed.insert(v.name());
    for (const auto& t : m.graph().initializer()) {
      if (typed.count(t.name())) continue;
      auto* vi = vis->Add();
      vi->set_name(t.name());
      auto* tt = vi->mutable_type()->mutable_tensor_type();
      tt->set_elem_type(t.data_type());
      auto* shape = tt->mutable_shape();
      for (int64_t d : t.dims()) shape->add_dim()->set_dim_value(d);
    }
    vis->Add()->set_name("");
  }
  std::string error;
  try {
    auto set = onnx::inliner::FunctionIdSet::Create(std::move(ids));
    onnx::inliner::InlineSelectedFunctions(m, *set, nullptr);
  } catch (const std::exception& e) {
    error = e.what();
  }
  // Drop what was added (shape inference may have reordered value_info).
  for (int i = vis->size() - 1; i >= 0; --i) {
    const std::string& name = vis->Get(i).name();
    bool added = name.empty();
    if (!added && i >= added_from)
      for (const auto& t : m.graph().initializer())
        if (t.name() == name) added = true;
    if (added) vis->DeleteSubrange(i, 1);
  }
  if (!error.empty()) return InvalidModel("cannot expand an op into its ONNX function body: " + error);
  // Types and shapes of the values the bodies introduced.
  try {
    onnx::ShapeInferenceOptions opts(false, 0, false);
    onnx::shape_inference::InferShapes(m, onnx::OpSchemaRegistry::Instance(), opts);
  } catch (const std::exception& e) {
    DLRT_LOG(kDebug, std::string("ONNX shape inference after function expansion failed (ignored): ") + e.what());
  }
  return true;
}

}  // namespace

Status inline_function_ops(onnx::ModelProto& m, const RunsOp& runs_op) {
  if (!runs_op) return Status::Ok();
  // A body may itself use function ops (SwiGLU's uses Swish): a few rounds.
  for (int round = 0; round < 8; ++round) {
    DLRT_ASSIGN_OR_RETURN(bool expanded, inline_function_ops_once(m, runs_op));
    if (!expanded) return Status::Ok();
  }
  return Status::Ok();
}

}  // namespace dlrt::ir
