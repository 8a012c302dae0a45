// The one place the built-in CPU kernels are registered (no static constructors).
#include <algorithm>
#include <mutex>

#include "backends/cpu/kernel.h"
#include "backends/cpu/kernel_families.h"
#include "core/logging.h"

namespace dlrt::cpu {

Status KernelRegistry::add(KernelDef def) {
  for (const auto& d : defs_) {
    if (d.op_type == def.op_type && d.domain == def.domain && d.min_opset <= def.max_opset && def.min_opset <= d.max_opset)
      return Internal("CPU kernel for " + def.op_type + " registered twice for overlapping opsets");
  }
  defs_.push_back(std::move(def));
  return Status::Ok();
}

Status KernelRegistry::set_in_place_inputs(const std::string& op_type, uint32_t inputs, const std::string& domain) {
  bool found = false;
  for (KernelDef& d : defs_)
    if (d.op_type == op_type && d.domain == domain) {
      d.in_place_inputs = inputs;
      found = true;
    }
  if (!found) return Internal("set_in_place_inputs: no kernel registered for op '" + op_type + "'");
  return Status::Ok();
}

Status KernelRegistry::add_fn(const std::string& op_type, KernelFn fn, int min_opset, int max_opset,
                              const std::string& domain) {
  KernelDef d;
  d.op_type = op_type;
  d.domain = domain;
  d.min_opset = min_opset;
  d.max_opset = max_opset;
  d.factory = [fn](const ir::Node&) -> Result<std::unique_ptr<OpKernel>> {
    return std::unique_ptr<OpKernel>(std::make_unique<FnKernel>(fn));
  };
  return add(std::move(d));
}

const KernelDef* KernelRegistry::find(const std::string& op_type, const std::string& domain, int opset) const {
  for (const auto& d : defs_)
    if (d.op_type == op_type && d.domain == domain && opset >= d.min_opset && opset <= d.max_opset) return &d;
  return nullptr;
}

std::vector<std::string> KernelRegistry::op_types() const {
  std::vector<std::string> r;
  for (const auto& d : defs_) r.push_back(d.domain.empty() ? d.op_type : d.domain + "." + d.op_type);
  std::sort(r.begin(), r.end());
  r.erase(std::unique(r.begin(), r.end()), r.end());
  return r;
}

Status KernelRegistry::add_families(std::span<const Family> families) {
  Status first;
  for (const Family& f : families) {
    Status s = f.add(*this);
    if (!s.ok() && first.ok()) first = s.with_context(std::string("CPU kernel family ") + f.name);
  }
  return first;
}

namespace {

struct Builtin {
  KernelRegistry registry;
  Status status;
};

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
        DLRT_FAMILY(register_pool_nhwc_kernels),       DLRT_FAMILY(register_signal_kernels),
        DLRT_FAMILY(register_linalg_kernels),          DLRT_FAMILY(register_text_kernels),
        DLRT_FAMILY(register_fused_kernels),           DLRT_FAMILY(register_transformer_kernels),
    };
#undef DLRT_FAMILY
    r->status = r->registry.add_families(families);
    if (!r->status.ok()) DLRT_LOG(kError, r->status.to_string());
    return r;
  }();
  return *b;
}

}  // namespace

const KernelRegistry& KernelRegistry::builtin() { return builtin_registry().registry; }

Status KernelRegistry::builtin_status() { return builtin_registry().status; }

}  // namespace dlrt::cpu
