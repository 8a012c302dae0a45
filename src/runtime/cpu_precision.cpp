// dlrt::is_cpu_precision (dlrt/cpu_precision.h) over the kernels' own names,
// and the precision a session is asked for (session_precision.h).
#include "dlrt/cpu_precision.h"

#include "backends/cpu/cpu_backend.h"
#include "core/logging.h"
#include "runtime/session_precision.h"

// The bf16 GEMM's kernel as the report names it, and the extension it needs (gemm_bf16.h).
#if defined(__aarch64__)
#define DLRT_BF16_KERNEL "neon-bfmmla"
#define DLRT_BF16_EXTENSION "the BF16 extension (BFMMLA)"
#else
#define DLRT_BF16_KERNEL "avx512_bf16"
#define DLRT_BF16_EXTENSION "AVX512-BF16"
#endif

namespace dlrt {

bool is_cpu_precision(const std::string& name) {
  return name == kAutoPrecision || exec::gemm_precision_from_name(name).has_value();
}

std::string requested_cpu_precision(const SessionOptions& options, const RuntimeEnv& env, const RuntimeConfig& config,
                                    std::string* from) {
  std::string text = options.cpu_precision, source = "SessionOptions::cpu_precision";
  if (text.empty() && env.cpu_precision) text = *env.cpu_precision, source = "DLRT_CPU_PRECISION";
  if (text.empty() && config.cpu_precision) text = *config.cpu_precision, source = "config file cpu_precision";
  if (from) *from = source;
  return text;
}

Result<exec::GemmPrecision> cpu_precision_of(const SessionOptions& options, const RuntimeEnv& env,
                                            const RuntimeConfig& config, std::string& label) {
  label = "f32";
  std::string from;
  const std::string text = requested_cpu_precision(options, env, config, &from);
  if (text.empty()) return exec::GemmPrecision::kF32;
  const std::optional<exec::GemmPrecision> named = exec::gemm_precision_from_name(text);
  if (!named) return InvalidArgument(from + " is '" + text + "'; expected f32, bf16, bf16x3 or auto");
  if (*named == exec::GemmPrecision::kF32) return exec::GemmPrecision::kF32;
  if (*named == exec::GemmPrecision::kBf16) {
    if (const char* tiles = cpu::cpu_kernels_amx_engine()) {  // AMX tiles where they run (gemm_amx.h)
      label = std::string("bf16 (") + tiles + ")";
      return exec::GemmPrecision::kBf16;
    }
    const std::string why = cpu::cpu_kernels_bf16_unavailable();
    label = why.empty() ? "bf16 (" DLRT_BF16_KERNEL ")" : "f32 (bf16 unavailable: " + why + ")";
    if (why.empty()) return exec::GemmPrecision::kBf16;
    DLRT_LOG(kWarn, "cpu precision bf16 needs " DLRT_BF16_EXTENSION " (" + why + "); this CPU runs f32");
    return exec::GemmPrecision::kF32;
  }
  if (!cpu::cpu_kernels_have_amx_bf16x3()) {
    DLRT_LOG(kWarn, "cpu precision bf16x3 needs AMX-BF16 and AVX512-BF16 (and DLRT_CPU_ISA not below avx512); "
                    "this CPU runs f32");
    return exec::GemmPrecision::kF32;
  }
  label = "bf16x3";
  return exec::GemmPrecision::kBf16x3;
}

}  // namespace dlrt

#undef DLRT_BF16_KERNEL
#undef DLRT_BF16_EXTENSION
