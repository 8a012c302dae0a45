#include "embed/models/batch_dependence.h"

#include <set>

namespace dlrt::embed {
namespace {

// ONNX ops whose output for one row depends on the whole input tensor: a
// per-tensor scale (and zero point) computed at run time from all of it.
// MatMulIntegerToFloat and QAttention take that scale as an input; in the
// dynamic-quantized graphs they appear in (onnxruntime.quantization's
// quantize_dynamic) it comes from a DynamicQuantizeLinear on the batch.
bool batch_dependent(const std::string& op_type) {
  static const std::set<std::string> kOps = {"DynamicQuantizeLinear", "DynamicQuantizeMatMul", "DynamicQuantizeLSTM",
                                             "MatMulIntegerToFloat", "QAttention"};
  return kOps.count(op_type) != 0;
}

}  // namespace

std::string batch_dependent_op(const ModelInfo& model) {
  for (const OpCount& op : model.ops)
    if (op.count > 0 && batch_dependent(op.op_type))
      return op.domain.empty() || op.domain == "ai.onnx" ? op.op_type : op.domain + "." + op.op_type;
  return "";
}

bool runs_on_cpu(const RunReport& placement) {
  for (const PartitionReport& p : placement.partitions)
    if (p.backend != "cpu") return false;
  return true;
}

Result<std::string> per_item_refusal(const RunReport& placement, const std::function<Status()>& run_two) {
  if (!runs_on_cpu(placement)) return std::string("only the CPU backend quantizes per text");
  const Status s = run_two();
  if (s.ok()) return std::string();
  if (s.code() != StatusCode::kUnsupported) return s.with_context("probing int8 scales per text");
  return s.message();
}

}  // namespace dlrt::embed
