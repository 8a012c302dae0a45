#include "runtime/optimize.h"

#include <cstdlib>
#include <set>
#include <sstream>

#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/kernel.h"
#include "core/logging.h"
#include "core/run_value.h"
#include "exec/kernel_build_options.h"
#include "ir/passes/passes.h"
#include "runtime/config.h"

namespace dlrt {

namespace {

// Runs one node on the CPU kernels (constant folding).
ir::passes::Evaluator cpu_evaluator(ThreadPool& pool) {
  return [&pool](const ir::Node& node, const std::vector<const Tensor*>& inputs) -> Result<std::vector<Tensor>> {
    const cpu::KernelDef* def = cpu::builtin_kernels().find(node.op_type, node.domain, node.opset);
    if (!def) return Unsupported("no CPU kernel for " + node.describe());
    DLRT_ASSIGN_OR_RETURN(auto kernel, def->factory(node));
    std::vector<RunValue> in_values(inputs.size());
    std::vector<const RunValue*> in_ptrs(inputs.size(), nullptr);
    for (size_t i = 0; i < inputs.size(); ++i)
      if (inputs[i]) {
        in_values[i] = RunValue::of(*inputs[i]);
        in_ptrs[i] = &in_values[i];
      }
    std::vector<RunValue> outs(node.outputs.size());
    cpu::KernelContext ctx(node, in_ptrs, outs, pool, nullptr);
    DLRT_RETURN_IF_ERROR(kernel->compute(ctx));
    std::vector<Tensor> result;
    for (auto& o : outs) {
      if (o.kind != RunValue::Kind::kTensor) return Unsupported("non-tensor output");
      result.push_back(std::move(o.tensor));
    }
    return result;
  };
}

void log_summary(const char* stage, const std::map<std::string, int>& fired, size_t before, size_t after) {
  if (!log_enabled(LogLevel::kDebug)) return;
  std::string s;
  for (const auto& [k, v] : fired) s += (s.empty() ? "" : ", ") + k + " x" + std::to_string(v);
  log_message(LogLevel::kDebug, std::string("opt: ") + stage + ": " + std::to_string(before) + " -> " +
                                    std::to_string(after) + " nodes" + (s.empty() ? "" : " (" + s + ")"));
}

// A QDQ-format model: some QuantizeLinear quantises a computed value.
bool has_qdq(const ir::Graph& g) {
  for (const auto& n : g.nodes)
    if (n.domain.empty() && n.op_type == "QuantizeLinear" && !n.inputs.empty() && n.inputs[0] >= 0 &&
        !g.values[n.inputs[0]].constant)
      return true;
  return false;
}

bool has_kernel(const std::string& op, const std::string& domain, int opset) {
  return cpu::builtin_kernels().find(op, domain, opset) != nullptr;
}

}  // namespace

bool optimize_enabled_by_env() { return read_runtime_env().optimize; }

Result<std::map<std::string, int>> optimize_standard(ir::Graph& graph, ThreadPool& pool, const OptimizeOptions& options) {
  namespace p = ir::passes;
  p::PassContext ctx;
  ctx.evaluate = cpu_evaluator(pool);
  ctx.node_tags = options.node_tags;
  ctx.supports = has_kernel;
  const std::set<std::string> off = read_runtime_env().disabled_passes;
  size_t before = graph.nodes.size();
  auto on = [&](const char* name) { return !off.count(name); };
  ctx.keep_dequantize_linear = on("qdq") && has_qdq(graph);
  p::mark_dynamic_quantizer_inputs(graph, ctx);
  for (int round = 0; round < 8; ++round) {
    int changes = 0;
    if (on("shape-folding")) changes += p::fold_shapes(graph, ctx, options.input_shapes);
    if (on("constant-folding")) changes += p::fold_constants(graph, ctx);
    if (on("dead-nodes")) changes += p::eliminate_dead_nodes(graph, ctx);
    if (on("conv-bn")) changes += p::fold_conv_batchnorm(graph, ctx);
    if (on("conv-affine")) changes += p::fold_conv_affine(graph, ctx);
    if (on("conv-padding-taps")) changes += p::crop_padding_taps(graph, ctx);
    if (on("identity")) changes += p::eliminate_identities(graph, ctx);
    if (on("transpose")) changes += p::eliminate_transposes(graph, ctx);
    if (on("layer-norm")) changes += p::fuse_layer_norm(graph, ctx);
    if (changes == 0) break;
  }
  // Once, on the weights the folds above left (they may make new ones).
  if (on("flush-subnormal-weights")) p::flush_subnormal_weights(graph, ctx);
  // Once, on the shapes the folds above inferred.
  if (on("shared-weight-rows")) p::stack_shared_weight_rows(graph, ctx);
  log_summary("standard passes", ctx.fired, before, graph.nodes.size());
  return ctx.fired;
}

Result<std::map<std::string, int>> optimize_cpu_fusions(ir::Graph& graph, const OptimizeOptions& options) {
  namespace p = ir::passes;
  p::PassContext ctx;
  ctx.node_tags = options.node_tags;
  ctx.supports = has_kernel;
  const std::set<std::string> off = read_runtime_env().disabled_passes;
  size_t before = graph.nodes.size();
  auto on = [&](const char* name) { return !off.count(name); };
  if (on("qdq")) {
    p::fuse_qdq(graph, ctx);
    if (options.pool && on("constant-folding")) {
      // DequantizeLinear of constants that no integer op took become float
      // constants (optimize_standard left them for fuse_qdq).
      p::PassContext fold;
      fold.evaluate = cpu_evaluator(*options.pool);
      fold.node_tags = options.node_tags;
      fold.max_fold_bytes = ctx.max_fold_bytes;
      ctx.count("constant-folding", p::fold_constants(graph, fold));
    }
  }
  // Values a dynamic quantizer depends on keep the rounding of the ops as
  // written: the fusions below that round differently skip them.
  p::mark_dynamic_quantizer_inputs(graph, ctx);
  // Channels-last 8-bit convs: their depthwise kernels are fast with AVX-512
  // only (portable loops elsewhere).
  if (on("quant-channels-last") && cpu::cpu_kernels_have_avx512()) p::quant_convs_channels_last(graph, ctx);
  if (on("half-in-float32")) p::compute_half_in_float32(graph, ctx);
  if (on("layer-norm")) p::fuse_layer_norm(graph, ctx, true);
  if (on("gelu")) p::fuse_gelu(graph, ctx);
  if (on("hard-swish")) p::fuse_hard_swish(graph, ctx);
  if (on("attention")) p::fuse_attention(graph, ctx);
  if (on("bias-activation")) p::fuse_bias_activation(graph, ctx);
  if (on("activation-affine")) p::fuse_activation_affine(graph, ctx);
  if (on("activation-clamp")) p::fuse_activation_clamp(graph, ctx);
  if (on("integer-matmul-float")) p::fuse_integer_matmul_to_float(graph, ctx);
  if (on("dynamic-quantize-matmul")) p::fuse_dynamic_quantize_matmul(graph, ctx);
  // AVX2 and AVX-512 CPUs (8- or 16-channel blocks; measured on Zen 1 and on
  // a Sapphire Rapids-class Xeon, docs/performance-decisions.md).
  // Every plane size: 7x7 expanded planes (mobilenet_v2's last blocks), once
  // kept as separate convs on AVX-512, run fused since the fused op splits
  // small planes over K on several threads (expand_depthwise.cpp; docs/performance-decisions.md).
  // On AVX-512 the fused kernel runs 16-channel blocks only where the
  // channel count is a multiple of 16 (8-channel ones otherwise), where the
  // separate convs take the 16-channel depthwise kernel for any count:
  // mobilenet_v3_small's 72- and 88-channel blocks ran 2x slower fused.
  ctx.expand_depthwise_channel_multiple = cpu::cpu_kernels_have_avx512() ? 16 : 8;
  if (on("expand-depthwise") && cpu::cpu_kernels_have_avx2()) {
    p::fuse_expand_depthwise(graph, ctx);
    if (on("expand-depthwise-project")) p::fuse_expand_depthwise_project(graph, ctx);
  }
  // Channel-blocked conv regions (16-channel blocks) among the convs the
  // fusions above left: AVX2 and AVX-512 CPUs (one zmm or two ymm vectors
  // per block, kernels/conv_blocked_vec.cpp; docs/performance-decisions.md),
  // and NEON (four vectors per block), whose other conv paths are portable code.
  // Not under precision bf16 on AMX tiles: ConvBlocked computes in fp32,
  // the NCHW convs run on the tiles (conv.cpp).
  const bool convs_on_tiles =
      exec::kernel_build_options().precision == exec::GemmPrecision::kBf16 && cpu::cpu_kernels_amx_engine();
  if (on("blocked-layout") && cpu::cpu_kernels_have_simd() && !convs_on_tiles) p::blocked_layout(graph, ctx, 16);
  if (on("dead-nodes")) p::eliminate_dead_nodes(graph, ctx);
  log_summary("cpu fusions", ctx.fired, before, graph.nodes.size());
  return ctx.fired;
}

int widen_half_contrib_graph(ir::Graph& graph, const OptimizeOptions& options) {
  bool contrib_half = false;
  for (const auto& n : graph.nodes)
    if (n.domain == "com.microsoft")
      for (ir::ValueId v : n.inputs)
        contrib_half = contrib_half || (v >= 0 && (graph.values[v].type.dtype == DType::kFloat16 ||
                                                   graph.values[v].type.dtype == DType::kBFloat16));
  if (!contrib_half) return 0;
  ir::passes::PassContext ctx;
  ctx.node_tags = options.node_tags;
  ctx.supports = has_kernel;
  return ir::passes::compute_half_in_float32(graph, ctx);
}

}  // namespace dlrt
