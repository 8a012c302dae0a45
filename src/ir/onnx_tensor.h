// TensorProto <-> dlrt::Tensor, and external tensor data. Private to the
// importer (src/ir/onnx_*.cpp); nothing else includes ONNX headers.
#pragma once

#include <string>

#include <onnx/onnx_pb.h>

#include "dlrt/tensor.h"

namespace dlrt::ir {

// The checks tensor_from_proto makes, without converting: a supported dtype,
// a sane element count, inline data of exactly the size the dims call for.
Status check_tensor_proto(const onnx::TensorProto& proto, const std::string& what);
// Converts a TensorProto whose data is inline (raw_data or typed fields).
// `what` names the tensor in messages ("initializer 'w'").
Result<Tensor> tensor_from_proto(const onnx::TensorProto& proto, const std::string& what);
// The same, but a large raw_data buffer moves into the tensor instead of being
// copied (the proto's raw_data is left empty): for weights, which would
// otherwise be held twice while a model loads.
Result<Tensor> take_tensor_from_proto(onnx::TensorProto& proto, const std::string& what);

// Replaces external data in `proto` by inline raw_data read from a file under
// `base_dir`. Rejects absolute locations, locations escaping base_dir, missing
// files and offset/length ranges past the end of the file.
Status inline_external_data(onnx::TensorProto& proto, const std::string& base_dir, const std::string& what);

}  // namespace dlrt::ir
