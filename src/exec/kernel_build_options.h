// Settings that shape how kernels are built, for the factories that read
// them (e.g. MatMul packs its constant weights for the session's precision).
// Session::create installs the session's options on its thread while it
// builds kernels; the options object must outlive the scope.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace dlrt::exec {

// How a float GEMM against a pre-packed constant B multiplies (the session's
// CPU precision, docs/performance-precision.md).
enum class GemmPrecision : uint8_t {
  kF32,     // fp32 FMAs (the default)
  kBf16x3,  // AMX tiles, each operand split into two bf16 parts; fp32 where AMX is missing
  kBf16,    // one bf16 product per term, fp32 sums (AVX512-BF16, gemm_bf16.h); fp32 where it is missing
};

const char* gemm_precision_name(GemmPrecision p);  // "f32", "bf16x3", "bf16"
// The inverse: the precision named "f32", "bf16x3" or "bf16"; nullopt for any other text.
std::optional<GemmPrecision> gemm_precision_from_name(std::string_view name);

struct KernelBuildOptions {
  // Float GEMMs against constant weights (MatMul, Gemm, Conv and their fused forms).
  GemmPrecision precision = GemmPrecision::kF32;
};

// The options of the executor building kernels on this thread (defaults otherwise).
const KernelBuildOptions& kernel_build_options();

// Makes `options` current on this thread while alive.
class ScopedKernelBuildOptions {
 public:
  explicit ScopedKernelBuildOptions(const KernelBuildOptions& options);
  ~ScopedKernelBuildOptions();
  ScopedKernelBuildOptions(const ScopedKernelBuildOptions&) = delete;
  ScopedKernelBuildOptions& operator=(const ScopedKernelBuildOptions&) = delete;

 private:
  const KernelBuildOptions* previous_;
};

}  // namespace dlrt::exec
