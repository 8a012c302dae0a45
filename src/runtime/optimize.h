// Runs dlrt's graph optimisation passes (src/ir/passes) for a session.
//
// optimize_standard: passes that keep standard ONNX ops (shape inference and
// shape-subgraph folding, constant folding through the CPU kernels, dead-node
// elimination, Conv+BatchNormalization folding, transpose elimination,
// decomposed LayerNorm); safe on the whole graph before placement.
// optimize_cpu_fusions: fusions into ops only the CPU backend runs (Gelu,
// com.dlrt Attention / FusedMatMul / FusedGemm / FusedConv); run them on a
// graph whose ONNX-domain nodes all run on the CPU (other nodes, e.g.
// dlrt.Partition, are never matched). Fusions whose kernel is missing from the
// CPU registry are skipped. The first of them, qdq, rewrites a QDQ-format
// model's DequantizeLinear -> op -> QuantizeLinear groups into integer ops;
// for it optimize_standard leaves DequantizeLinear of constants unfolded in
// graphs that have a QuantizeLinear.
//
// DLRT_OPTIMIZE=0 turns both off (as SessionOptions::optimize = false does);
// DLRT_DISABLE_PASSES=name,name skips single passes (names as logged:
// constant-folding, dead-nodes, shape-folding, conv-bn, conv-affine, conv-padding-taps, transpose,
// layer-norm, gelu, hard-swish, attention, bias-activation, activation-affine,
// activation-clamp, qdq, ...; docs/optimizer.md lists them all). DLRT_LOG_LEVEL=debug logs each rewrite.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/thread_pool.h"
#include "dlrt/status.h"
#include "dlrt/tensor.h"
#include "ir/graph.h"

namespace dlrt {

struct OptimizeOptions {
  // Pins graph inputs to these shapes for shape folding (by input name).
  std::map<std::string, Shape> input_shapes;
  // Per-node tags kept aligned with graph.nodes (fusions).
  std::vector<int>* node_tags = nullptr;
  // For optimize_cpu_fusions: runs the constant folding left after fuse_qdq
  // (DequantizeLinear of constant weights no integer op took). None: skipped.
  ThreadPool* pool = nullptr;
};

// Returns rewrites per pass name.
Result<std::map<std::string, int>> optimize_standard(ir::Graph& graph, ThreadPool& pool,
                                                     const OptimizeOptions& options = {});
Result<std::map<std::string, int>> optimize_cpu_fusions(ir::Graph& graph, const OptimizeOptions& options = {});

// With the optimizer off: a float16/bfloat16 graph with com.microsoft
// transformer ops, whose CPU kernels compute in float32 only, is computed in
// float32 all the same (compute_half_in_float32, the rewrite the optimizer
// makes of it), so that it runs. Returns the rewrites made (0: none needed,
// or the graph has an op that rewrite does not take).
int widen_half_contrib_graph(ir::Graph& graph, const OptimizeOptions& options = {});

// False when DLRT_OPTIMIZE=0.
bool optimize_enabled_by_env();

}  // namespace dlrt
