// The values of Session::run_values (dlrt::Value, public) as the executor's
// RunValues and back, the tensors of Session::run, and ONNX's type strings for
// TensorInfo::type.
#pragma once

#include <string>
#include <vector>

#include "core/run_value.h"
#include "dlrt/session.h"
#include "ir/graph.h"
#include "runtime/output_aliases.h"

namespace dlrt {

// A type as ONNX (and ONNX Runtime's NodeArg.type) writes it: "tensor(float)",
// "seq(map(int64,tensor(float)))", "optional(tensor(int64))".
std::string onnx_type_string(const ir::TypeInfo& type);

// A caller's value as the executor takes it (kNone: an empty RunValue).
RunValue run_value_of(const Value& v);

// A run's value as Session::run_values returns it; `copy`: its tensors are
// copied, as Session::run copies an output over a constant's or another
// output's storage (runtime/output_aliases.h).
Result<Value> public_value_of(RunValue r, bool copy);

// Ok when output `info`'s value is a tensor; else why Session::run cannot hand it over.
Status check_tensor_output(const RunValue& v, const TensorInfo& info);

// A run's values as the tensors Session::run returns: views of constants and
// repeated storage copied (OutputAliases).
Result<std::vector<Tensor>> as_tensors(std::vector<RunValue> out, const std::vector<TensorInfo>& infos,
                                       const OutputAliases& aliases);

}  // namespace dlrt
