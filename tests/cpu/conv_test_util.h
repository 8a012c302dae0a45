// Runs a Conv node through conv_run with its weights pre-packed, as a
// model's Conv/FusedConv with constant weights runs: for the conv path tests.
#pragma once

#include <vector>

#include "backends/cpu/conv_impl.h"

namespace dlrt::cpu::testing {

// `node` holds the attributes; inputs are X, W, B, Z (an invalid Tensor is
// omitted), Z being the fused residual; `act` the fused activation. Runs on
// a shared 2-thread pool.
inline Result<Tensor> run_conv_prepacked(ir::Node node, const std::vector<Tensor>& inputs, const Activation& act) {
  node.op_type = "Conv";
  node.opset = 17;
  node.inputs.clear();
  for (size_t i = 0; i < inputs.size(); ++i)
    node.inputs.push_back(inputs[i].valid() ? static_cast<ir::ValueId>(i) : ir::kNoValue);
  node.outputs = {100};
  DLRT_ASSIGN_OR_RETURN(auto pre, prepack_conv_weights(node, &inputs[1]));
  std::vector<RunValue> in_values;
  for (const Tensor& t : inputs) in_values.push_back(t.valid() ? RunValue::of(t) : RunValue{});
  std::vector<const RunValue*> in_ptrs;
  for (auto& v : in_values) in_ptrs.push_back(v.kind == RunValue::Kind::kNone ? nullptr : &v);
  std::vector<RunValue> outs(1);
  static ThreadPool pool(2);
  KernelContext ctx(node, in_ptrs, outs, pool, nullptr);
  ConvFusion fuse;
  fuse.act = act;
  fuse.residual_input = inputs.size() > 3 && inputs[3].valid() ? 3 : -1;
  DLRT_RETURN_IF_ERROR(conv_run(ctx, pre.get(), fuse));
  return outs[0].tensor;
}

}  // namespace dlrt::cpu::testing
