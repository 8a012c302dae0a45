// The built-in model of the compatibility check of an untested vendor release
// (backend/canary.h; `dlrt canary BACKEND` runs it): small, but it exercises
// what a backend hands to a vendor runtime on real models:
//   - a large constant (a 256 x 2048 float32 MatMul weight, 2 MiB) with bias
//     and activation, whose bytes the vendor must keep valid;
//   - a dynamic batch dimension, run at two batch sizes;
//   - graph inputs and outputs of every element type the backends map, each
//     through an op that keeps its type, and each cast to float32.
//
// Thread-safety: free of shared state.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "dlrt/status.h"
#include "dlrt/tensor.h"

namespace dlrt {

struct CanaryModel {
  std::string onnx;  // the serialized model
  // Input sets to run, one per batch size.
  std::vector<std::map<std::string, Tensor>> feeds;
};

Result<CanaryModel> make_canary_model();

}  // namespace dlrt
