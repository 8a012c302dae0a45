// Runs a Conv node through conv_run with its weights pre-packed, as a
// model's Conv/FusedConv with constant weights runs: for the conv path tests.
#pragma once

#include <vector>

#include "backends/cpu/kernels/activation_epilogue.h"
#include "backends/cpu/kernels/conv_blocked.h"
#include "backends/cpu/ops/conv_impl.h"

namespace dlrt::cpu::testing {

// `node` holds the attributes; inputs are X, W, B, Z (an invalid Tensor is
// omitted), Z being the fused residual; `act` the fused activation. Runs on
// a shared 1- or 2-thread pool, with `pre` (W packed by
// prepack_conv_weights, or null).
inline Result<Tensor> run_conv_with(ir::Node node, const std::vector<Tensor>& inputs, const Activation& act,
                                    int threads, const ConvPrepacked* pre) {
  node.op_type = "Conv";
  node.opset = 17;
  node.inputs.clear();
  for (size_t i = 0; i < inputs.size(); ++i)
    node.inputs.push_back(inputs[i].valid() ? static_cast<ir::ValueId>(i) : ir::kNoValue);
  node.outputs = {100};
  std::vector<RunValue> in_values;
  for (const Tensor& t : inputs) in_values.push_back(t.valid() ? RunValue::of(t) : RunValue{});
  std::vector<const RunValue*> in_ptrs;
  for (auto& v : in_values) in_ptrs.push_back(v.kind == RunValue::Kind::kNone ? nullptr : &v);
  std::vector<RunValue> outs(1);
  static ThreadPool pool1(1), pool2(2);
  KernelContext ctx(node, in_ptrs, outs, threads == 1 ? pool1 : pool2, nullptr);
  ConvFusion fuse;
  fuse.act = act;
  fuse.residual_input = inputs.size() > 3 && inputs[3].valid() ? 3 : -1;
  DLRT_RETURN_IF_ERROR(conv_run(ctx, pre, fuse));
  return outs[0].tensor;
}

// run_conv_with, W pre-packed here (under the thread's KernelBuildOptions).
inline Result<Tensor> run_conv_prepacked(ir::Node node, const std::vector<Tensor>& inputs, const Activation& act,
                                         int threads = 2) {
  node.op_type = "Conv";
  node.opset = 17;
  DLRT_ASSIGN_OR_RETURN(auto pre, prepack_conv_weights(node, &inputs[1]));
  return run_conv_with(std::move(node), inputs, act, threads, pre.get());
}

// A 2-D conv's geometry for reference_conv (1-D: H = KH = SH = DH = 1, PT = 0).
struct RefConvShape {
  int64_t N = 1, C = 1, M = 1, group = 1, H = 1, W = 1, KH = 1, KW = 1, SH = 1, SW = 1, DH = 1, DW = 1;
  int64_t PT = 0, PL = 0, OH = 1, OW = 1;
};

// act(conv(x, w) + b + z) by the definition, in double; b and z may be empty (none).
inline std::vector<float> reference_conv(const RefConvShape& s, const std::vector<float>& x, const std::vector<float>& w,
                                         const std::vector<float>& b, const std::vector<float>& z,
                                         const Activation& act) {
  const int64_t Cg = s.C / s.group, Mg = s.M / s.group;
  std::vector<float> y(static_cast<size_t>(s.N * s.M * s.OH * s.OW));
  size_t o = 0;
  for (int64_t n = 0; n < s.N; ++n)
    for (int64_t m = 0; m < s.M; ++m)
      for (int64_t oh = 0; oh < s.OH; ++oh)
        for (int64_t ow = 0; ow < s.OW; ++ow, ++o) {
          double acc = b.empty() ? 0.0 : b[static_cast<size_t>(m)];
          const int64_t gi = m / Mg;
          for (int64_t ci = 0; ci < Cg; ++ci)
            for (int64_t i = 0; i < s.KH; ++i)
              for (int64_t j = 0; j < s.KW; ++j) {
                const int64_t ih = oh * s.SH - s.PT + i * s.DH, iw = ow * s.SW - s.PL + j * s.DW;
                if (ih < 0 || ih >= s.H || iw < 0 || iw >= s.W) continue;
                acc += static_cast<double>(x[static_cast<size_t>(((n * s.C + gi * Cg + ci) * s.H + ih) * s.W + iw)]) *
                       w[static_cast<size_t>(((m * Cg + ci) * s.KH + i) * s.KW + j)];
              }
          if (!z.empty()) acc += z[o];
          y[o] = activate(act, static_cast<float>(acc));
        }
  return y;
}

// x [N, C, hw] in the blocked layout [N, ceil(C/block), hw, block] (pad lanes zero).
inline std::vector<float> blocked_copy(const std::vector<float>& x, int64_t N, int64_t C, int64_t hw, int block) {
  std::vector<float> y(static_cast<size_t>(N * ((C + block - 1) / block) * hw * block));
  to_blocked(x.data(), N, C, hw, block, y.data(), nullptr);
  return y;
}

}  // namespace dlrt::cpu::testing
