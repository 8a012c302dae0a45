// The floating-point mode of a thread: whether subnormal float results are
// flushed to zero and subnormal inputs read as zero (x86: MXCSR's FTZ and
// DAZ bits; aarch64: FPCR's FZ bit).
//
// A subnormal value (magnitude below 1.2e-38 in float32) costs a microcode
// assist of about a hundred cycles in every instruction that reads or makes
// it, against one cycle otherwise. Trained conv nets have channels whose
// weights decayed towards zero; their outputs are subnormal, and a 1x1 conv
// and its Gelu over such channels then ran 2-2.5x slower than over others
// (PP-OCRv6's detector). The CPU kernels of products and sums (Conv, Gemm,
// MatMul, the recurrent ops and their fused forms) run with flushing on
// (exec::KernelDef::flush_subnormals); a result changes by less than 1.2e-38
// in absolute value. Ops where a value near zero matters on its own (Log,
// Div, Reciprocal, Sqrt, Pow, casts) keep the caller's mode.
// DLRT_FLUSH_SUBNORMALS=0 keeps the caller's mode everywhere.
//
// Thread-safety: each call acts on the calling thread only.
#pragma once

#include <cstdint>

namespace dlrt {

// The calling thread's floating-point control word (x86: MXCSR, aarch64: FPCR;
// 0 elsewhere): its mode bits (rounding, exception masks, flushing), not the
// sticky exception flags, which set_fp_control leaves as they are.
uint32_t fp_control();
void set_fp_control(uint32_t control);

// `control` with flushing on (unchanged where neither x86 nor aarch64).
uint32_t fp_control_flushing(uint32_t control);

// Whether kernels marked flush_subnormals flush (DLRT_FLUSH_SUBNORMALS, read once).
bool flush_subnormals_enabled();

// Flushing on for the lifetime of the scope when `on`, then the previous mode.
class ScopedFlushSubnormals {
 public:
  explicit ScopedFlushSubnormals(bool on) : saved_(on ? fp_control() : 0), on_(on) {
    if (on_) set_fp_control(fp_control_flushing(saved_));
  }
  ~ScopedFlushSubnormals() {
    if (on_) set_fp_control(saved_);
  }
  ScopedFlushSubnormals(const ScopedFlushSubnormals&) = delete;
  ScopedFlushSubnormals& operator=(const ScopedFlushSubnormals&) = delete;

 private:
  uint32_t saved_;
  bool on_;
};

}  // namespace dlrt
