// dlrt::read_onnx_value_file (dlrt/onnx_data.h) over the importer's reader.
#include "dlrt/onnx_data.h"

#include "ir/onnx_import.h"
#include "runtime/session_values.h"

namespace dlrt {

Result<Value> read_onnx_value_file(const std::string& path, const std::string& kind) {
  ir::ValueKind k = ir::ValueKind::kTensor;
  if (kind == "sequence") k = ir::ValueKind::kSequence;
  else if (kind == "optional") k = ir::ValueKind::kOptional;
  else if (kind != "tensor")
    return InvalidArgument("read_onnx_value_file: kind must be tensor, sequence or optional, not '" + kind + "'");
  DLRT_ASSIGN_OR_RETURN(RunValue v, ir::load_test_data_file(path, k));
  return public_value_of(std::move(v), false);
}

}  // namespace dlrt
