// dlrt::is_cpu_precision (dlrt/cpu_precision.h) over the kernels' own names.
#include "dlrt/cpu_precision.h"

#include "exec/kernel_build_options.h"

namespace dlrt {

bool is_cpu_precision(const std::string& name) { return exec::gemm_precision_from_name(name).has_value(); }

}  // namespace dlrt
