// KernelRegistry: kernels by op, domain and opset range.
#include <algorithm>

#include "exec/kernel.h"

namespace dlrt::exec {

Status KernelRegistry::add(KernelDef def) {
  for (const auto& d : defs_) {
    if (d.op_type == def.op_type && d.domain == def.domain && d.min_opset <= def.max_opset && def.min_opset <= d.max_opset)
      return Internal("kernel for " + def.op_type + " registered twice for overlapping opsets");
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

Status KernelRegistry::set_flush_subnormals(const std::string& op_type, const std::string& domain) {
  bool found = false;
  for (KernelDef& d : defs_)
    if (d.op_type == op_type && d.domain == domain) {
      d.flush_subnormals = true;
      found = true;
    }
  if (!found) return Internal("set_flush_subnormals: no kernel registered for op '" + op_type + "'");
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
    if (!s.ok() && first.ok()) first = s.with_context(std::string("kernel family ") + f.name);
  }
  return first;
}

}  // namespace dlrt::exec
