// Session::run_values's values, Session::run's tensors and TensorInfo::type (see session_values.h).
#include "runtime/session_values.h"

#include <string>
#include <utility>

namespace dlrt {

std::string onnx_type_string(const ir::TypeInfo& type) {
  auto elem = [](DType d) -> std::string {
    if (d == DType::kFloat32) return "float";
    if (d == DType::kFloat64) return "double";
    return dtype_name(d);
  };
  const std::string tensor = "tensor(" + elem(type.dtype) + ")";
  const std::string inner = type.key_dtype != DType::kUndefined ? "map(" + elem(type.key_dtype) + "," + tensor + ")" : tensor;
  switch (type.kind) {
    case ir::ValueKind::kTensor: return tensor;
    case ir::ValueKind::kMap: return inner;
    case ir::ValueKind::kSequence: return "seq(" + inner + ")";
    case ir::ValueKind::kOptional: return "optional(" + tensor + ")";
    case ir::ValueKind::kUnknown: break;
  }
  return "unknown";
}

RunValue run_value_of(const Value& v) {
  switch (v.kind) {
    case Value::Kind::kTensor: return RunValue::of(v.tensor);
    case Value::Kind::kSequence:
      return RunValue::of_sequence(v.sequence, v.sequence.empty() ? DType::kUndefined : v.sequence[0].dtype());
    case Value::Kind::kMap: return RunValue::of_map(v.keys, v.values, false);
    case Value::Kind::kMapSequence: return RunValue::of_map(v.keys, v.values, true);
    case Value::Kind::kNone: break;
  }
  return RunValue();
}

Result<Value> public_value_of(RunValue r, bool copy) {
  auto own = [copy](Tensor t) -> Result<Tensor> { return copy ? t.clone() : Result<Tensor>(std::move(t)); };
  Value v;
  if (r.kind == RunValue::Kind::kTensor) {
    v.kind = Value::Kind::kTensor;
    DLRT_ASSIGN_OR_RETURN(v.tensor, own(std::move(r.tensor)));
  } else if (r.kind == RunValue::Kind::kSequence) {
    v.kind = Value::Kind::kSequence;
    for (Tensor& t : r.sequence) {
      DLRT_ASSIGN_OR_RETURN(Tensor item, own(std::move(t)));
      v.sequence.push_back(std::move(item));
    }
  } else if (r.kind == RunValue::Kind::kMap || r.kind == RunValue::Kind::kMapSequence) {
    v.kind = r.kind == RunValue::Kind::kMap ? Value::Kind::kMap : Value::Kind::kMapSequence;
    DLRT_ASSIGN_OR_RETURN(v.keys, own(std::move(r.map_keys)));
    DLRT_ASSIGN_OR_RETURN(v.values, own(std::move(r.map_values)));
  }
  return v;
}

Status check_tensor_output(const RunValue& v, const TensorInfo& info) {
  if (v.kind == RunValue::Kind::kTensor) return Status::Ok();
  return Unsupported("output '" + info.name + "' is a " + info.type +
                     " value, which Session::run cannot return: use Session::run_values");
}

Result<std::vector<Tensor>> as_tensors(std::vector<RunValue> out, const std::vector<TensorInfo>& infos,
                                       const OutputAliases& aliases) {
  std::vector<Tensor> tensors;
  tensors.reserve(out.size());
  const OutputCopies copy(aliases, out);
  for (size_t i = 0; i < out.size(); ++i) {
    DLRT_RETURN_IF_ERROR(check_tensor_output(out[i], infos[i]));
    if (copy[i]) {
      DLRT_ASSIGN_OR_RETURN(Tensor copied, out[i].tensor.clone());
      tensors.push_back(std::move(copied));
    } else {
      tensors.push_back(std::move(out[i].tensor));
    }
  }
  return tensors;
}

}  // namespace dlrt
