// Graphs in the form ONNX Runtime's tools write (com.microsoft contrib ops, as
// its transformer optimizer leaves them before quantize_dynamic): the layer
// norms, BiasGelu, Softmax and float MatMul nodes that a dynamic quantizer's
// input is computed from are tagged to compute in ONNX Runtime's order and
// rounding. There a one-ulp difference moves
// DynamicQuantizeLinear's per-tensor scale or a value by an integer step,
// which every later layer carries on; elsewhere dlrt's more accurate order stays.
#pragma once

#include "ir/graph.h"

namespace dlrt::ir {

// The node attribute (int, 1; onnx_export.h's internal prefix) that selects ONNX Runtime's order in the
// LayerNormalization, Softmax, MatMul (float: each element one chain of
// fused multiply-adds over k, whatever N), com.microsoft
// SkipLayerNormalization and BiasGelu kernels.
inline constexpr const char* kOnnxRuntimeOrderAttr = "_dlrt_onnxruntime_order";

// In a graph with a com.microsoft node: tags each LayerNormalization, Softmax,
// MatMul, com.microsoft SkipLayerNormalization and BiasGelu whose first output the
// input of a DynamicQuantizeLinear or com.microsoft DynamicQuantizeMatMul is
// computed from (directly or through other nodes).
// Other graphs are left as they are. Runs before optimisation, so optimised
// and unoptimised sessions compute alike. Returns the nodes tagged.
int mark_onnxruntime_order(Graph& g);

// Whether mark_onnxruntime_order tagged `n` (what its kernel reads).
inline bool in_onnxruntime_order(const Node& n) { return n.attr_int(kOnnxRuntimeOrderAttr, 0) != 0; }

}  // namespace dlrt::ir
