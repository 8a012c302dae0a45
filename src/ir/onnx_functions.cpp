#include "ir/onnx_functions.h"

#include <map>
#include <set>
#include <utility>

#include <onnx/defs/schema.h>
#include <onnx/inliner/inliner.h>
#include <onnx/shape_inference/implementation.h>

#include "core/logging.h"

namespace dlrt::ir {
namespace {

std::string normalize_domain(const std::string& d) { return d == "ai.onnx" ? "" : d; }

}  // namespace

Status inline_local_functions(onnx::ModelProto& m) {
  if (m.functions_size() == 0) return Status::Ok();
  try {
    onnx::inliner::InlineLocalFunctions(m, /*convert_version=*/true);
  } catch (const std::exception& e) {
    return InvalidModel(std::string("cannot inline the model's local functions: ") + e.what());
  }
  return Status::Ok();
}

Status inline_function_ops(onnx::ModelProto& m, const RunsOp& runs_op) {
  if (!runs_op) return Status::Ok();
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
  if (ids.empty()) return Status::Ok();
  try {
    auto set = onnx::inliner::FunctionIdSet::Create(std::move(ids));
    onnx::inliner::InlineSelectedFunctions(m, *set, nullptr);
  } catch (const std::exception& e) {
    return InvalidModel(std::string("cannot expand an op into its ONNX function body: ") + e.what());
  }
  // Types and shapes of the values the bodies introduced.
  try {
    onnx::ShapeInferenceOptions opts(false, 0, false);
    onnx::shape_inference::InferShapes(m, onnx::OpSchemaRegistry::Instance(), opts);
  } catch (const std::exception& e) {
    DLRT_LOG(kDebug, std::string("ONNX shape inference after function expansion failed (ignored): ") + e.what());
  }
  return Status::Ok();
}

}  // namespace dlrt::ir
