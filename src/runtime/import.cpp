#include "runtime/import.h"

#include "backends/cpu/kernel.h"

namespace dlrt {

ir::ImportOptions runtime_import_options() {
  ir::ImportOptions o;
  o.runs_op = [](const std::string& domain, const std::string& op_type, int opset) {
    return cpu::builtin_kernels().find(op_type, domain, opset) != nullptr;
  };
  return o;
}

}  // namespace dlrt
