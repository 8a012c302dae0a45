// The CPU precision a session is asked for (SessionOptions::cpu_precision,
// then DLRT_CPU_PRECISION, then the config file) and what it runs here.
#pragma once

#include <string>

#include "dlrt/session.h"
#include "dlrt/status.h"
#include "exec/kernel_build_options.h"
#include "runtime/config.h"

namespace dlrt {

inline constexpr const char* kAutoPrecision = "auto";

// The precision text in force ("" when none is set); *from names its source.
std::string requested_cpu_precision(const SessionOptions& options, const RuntimeEnv& env, const RuntimeConfig& config,
                                    std::string* from = nullptr);

// The named precision the kernels build with: "bf16x3" becomes f32, with a
// warning, where AMX cannot run, and "bf16" where AVX512-BF16 cannot.
// `label`: what the run report says. "auto" is resolved before (precision_auto.h).
Result<exec::GemmPrecision> cpu_precision_of(const SessionOptions& options, const RuntimeEnv& env,
                                            const RuntimeConfig& config, std::string& label);

}  // namespace dlrt
