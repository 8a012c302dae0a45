// The one place the built-in CPU kernels are registered (no static constructors).
#include "backends/cpu/kernel.h"
#include "backends/cpu/kernel_families.h"
#include "core/logging.h"

namespace dlrt::cpu {
namespace {

struct Builtin {
  KernelRegistry registry;
  Status status;
};

// The float kernels of products and sums, which run with subnormals flushed
// (core/fp_mode.h): convs, GEMMs, the recurrent ops and their fused forms.
Status mark_flushing_kernels(KernelRegistry& r) {
  for (const char* op : {"Conv", "ConvTranspose", "Gemm", "MatMul", "LSTM", "GRU", "RNN"})
    DLRT_RETURN_IF_ERROR(r.set_flush_subnormals(op));
  for (const char* op : {"FusedConv", "ConvBlocked", "FusedExpandDepthwise", "FusedGemm", "FusedMatMul",
                         "ChannelScaleBlocked"})
    DLRT_RETURN_IF_ERROR(r.set_flush_subnormals(op, "com.dlrt"));
  return Status::Ok();
}

const Builtin& builtin_registry() {
  static const Builtin* b = [] {
    auto* r = new Builtin();
#define DLRT_FAMILY(fn) KernelRegistry::Family{#fn, fn}
    const KernelRegistry::Family families[] = {
        DLRT_FAMILY(register_elementwise_kernels),     DLRT_FAMILY(register_unary_kernels),
        DLRT_FAMILY(register_activation_kernels),      DLRT_FAMILY(register_cast_kernels),
        DLRT_FAMILY(register_matmul_kernels),          DLRT_FAMILY(register_conv_kernels),
        DLRT_FAMILY(register_pool_kernels),            DLRT_FAMILY(register_normalization_kernels),
        DLRT_FAMILY(register_shape_kernels),           DLRT_FAMILY(register_layout_kernels),
        DLRT_FAMILY(register_gather_scatter_kernels),  DLRT_FAMILY(register_reduce_kernels),
        DLRT_FAMILY(register_softmax_kernels),         DLRT_FAMILY(register_sort_kernels),
        DLRT_FAMILY(register_einsum_kernels),          DLRT_FAMILY(register_resize_kernels),
        DLRT_FAMILY(register_detection_kernels),       DLRT_FAMILY(register_rnn_kernels),
        DLRT_FAMILY(register_control_flow_kernels),    DLRT_FAMILY(register_sequence_kernels),
        DLRT_FAMILY(register_quantize_kernels),        DLRT_FAMILY(register_quantize_conv_kernels),
        DLRT_FAMILY(register_quantize_conv_nhwc_kernels), DLRT_FAMILY(register_quantize_contrib_kernels),
        DLRT_FAMILY(register_pool_nhwc_kernels), DLRT_FAMILY(register_blocked_kernels),       DLRT_FAMILY(register_signal_kernels),
        DLRT_FAMILY(register_linalg_kernels),          DLRT_FAMILY(register_text_kernels),
        DLRT_FAMILY(register_fused_kernels),           DLRT_FAMILY(register_transformer_kernels),
        DLRT_FAMILY(register_contrib_transformer_kernels), DLRT_FAMILY(register_ml_kernels),
        DLRT_FAMILY(register_ml_tree_kernels), DLRT_FAMILY(register_ml_svm_kernels),
        DLRT_FAMILY(register_ml_encoder_kernels), DLRT_FAMILY(register_ml_map_kernels),
        DLRT_FAMILY(register_contrib_quant_transformer_kernels),
        DLRT_FAMILY(register_contrib_attention_kernels),
    };
#undef DLRT_FAMILY
    r->status = r->registry.add_families(families);
    if (r->status.ok()) r->status = mark_flushing_kernels(r->registry);
    if (!r->status.ok()) {
      r->status = r->status.with_context("built-in CPU kernels");
      DLRT_LOG(kError, r->status.to_string());
    }
    return r;
  }();
  return *b;
}

}  // namespace

const KernelRegistry& builtin_kernels() { return builtin_registry().registry; }

Status builtin_kernels_status() { return builtin_registry().status; }

}  // namespace dlrt::cpu
