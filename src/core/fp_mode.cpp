#include "core/fp_mode.h"

#include <cstring>

#include "core/env.h"

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#define DLRT_FP_MODE_X86 1
#elif defined(__aarch64__)
#define DLRT_FP_MODE_ARM64 1
#endif

namespace dlrt {

namespace {
#ifdef DLRT_FP_MODE_X86
constexpr uint32_t kFlushToZero = 0x8000;      // MXCSR FTZ: subnormal results become zero
constexpr uint32_t kDenormalsAreZero = 0x0040;  // MXCSR DAZ: subnormal inputs read as zero
constexpr uint32_t kStatusFlags = 0x003f;       // MXCSR's sticky exception flags: not part of the mode
#elif defined(DLRT_FP_MODE_ARM64)
// FPCR.FZ: subnormal inputs and results of single and double precision read and become zero
// (both of x86's FTZ and DAZ). The status flags live in FPSR, apart from the mode.
constexpr uint32_t kFlushToZero = 1u << 24;

uint32_t read_fpcr() {
  uint64_t v;
  asm volatile("mrs %0, fpcr" : "=r"(v));
  return static_cast<uint32_t>(v);  // bits 63:32 are reserved (zero)
}
#endif
}  // namespace

uint32_t fp_control() {
#ifdef DLRT_FP_MODE_X86
  return _mm_getcsr() & ~kStatusFlags;
#elif defined(DLRT_FP_MODE_ARM64)
  return read_fpcr();
#else
  return 0;
#endif
}

void set_fp_control(uint32_t control) {
#ifdef DLRT_FP_MODE_X86
  _mm_setcsr((_mm_getcsr() & kStatusFlags) | (control & ~kStatusFlags));
#elif defined(DLRT_FP_MODE_ARM64)
  if (control == read_fpcr()) return;  // a write to FPCR may serialize the pipeline
  asm volatile("msr fpcr, %0" : : "r"(static_cast<uint64_t>(control)));
#else
  (void)control;
#endif
}

uint32_t fp_control_flushing(uint32_t control) {
#ifdef DLRT_FP_MODE_X86
  return control | kFlushToZero | kDenormalsAreZero;
#elif defined(DLRT_FP_MODE_ARM64)
  return control | kFlushToZero;
#else
  return control;
#endif
}

bool flush_subnormals_enabled() {
  static const bool on = [] {
    const char* v = env::get("DLRT_FLUSH_SUBNORMALS");
    return !(v && (std::strcmp(v, "0") == 0 || std::strcmp(v, "false") == 0));
  }();
  return on;
}

}  // namespace dlrt
