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

const KernelRegistry& KernelRegistry::builtin() {
  static const KernelRegistry* reg = [] {
    auto* r = new KernelRegistry();
    using Register = Status (*)(KernelRegistry&);
    const Register families[] = {
        register_elementwise_kernels, register_unary_kernels,   register_activation_kernels,
        register_cast_kernels,        register_matmul_kernels,  register_conv_kernels,
        register_pool_kernels,        register_normalization_kernels, register_shape_kernels,
        register_layout_kernels,      register_gather_scatter_kernels, register_reduce_kernels,
        register_softmax_kernels,     register_sort_kernels,    register_einsum_kernels,
        register_resize_kernels,      register_detection_kernels, register_rnn_kernels,
        register_control_flow_kernels, register_sequence_kernels, register_quantize_kernels,
        register_quantize_conv_kernels, register_quantize_conv_nhwc_kernels, register_quantize_contrib_kernels,
        register_pool_nhwc_kernels,
        register_signal_kernels,      register_linalg_kernels,  register_text_kernels,
        register_fused_kernels,
        register_transformer_kernels,
    };
    for (Register f : families) {
      Status s = f(*r);
      if (!s.ok()) DLRT_LOG(kError, "CPU kernel registration: " + s.to_string());
    }
    return r;
  }();
  return *reg;
}

}  // namespace dlrt::cpu
