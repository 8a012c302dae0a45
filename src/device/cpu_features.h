// What the CPU dlrt runs on can do, for choosing kernels at run time. A flag
// is true only when both the CPU has the instructions and the OS saves the
// register state they need (XGETBV/XCR0: AVX for avx/avx2/fma/f16c, opmask and
// ZMM for AVX-512, tile state for AMX). The x86 flags are false off x86; the
// aarch64 ones (from HWCAP) false off aarch64.
// DLRT_CPU_FEATURES_OFF (names as `dlrt devices` prints them, comma or space
// separated, e.g. avx512_vnni,avx_vnni,amx_int8) turns flags off, so the
// kernels choose what a CPU without those extensions would run (the vector
// width itself is capped by DLRT_CPU_ISA).
//
// Thread-safety: cpu_features() may be called from any thread; it probes once.
#pragma once

#include <string>

namespace dlrt::device {

struct CpuFeatures {
  bool avx2 = false, fma = false, avx512f = false, avx512bw = false, avx512vl = false, avx512_vnni = false,
       avx512_bf16 = false, amx_tile = false, amx_bf16 = false, amx_int8 = false, f16c = false;
  // Also reported, rarely needed to pick a kernel.
  bool sse4_2 = false, avx = false, avx512_fp16 = false, avx_vnni = false, avx512_vbmi = false;
  // aarch64 (HWCAP): the 8-bit dot products (SDOT/UDOT) and matrix multiplies (USMMLA).
  bool dotprod = false, i8mm = false;
  // aarch64 (HWCAP2_BF16): the BFloat16 extension (BFMMLA, BFDOT, BFCVT).
  bool bf16 = false;
};

// The features of the CPU this process runs on (cpuid, probed on first use).
const CpuFeatures& cpu_features();

// Turns the named extension flags off in *f (what DLRT_CPU_FEATURES_OFF does
// to cpu_features()). Returns "" or a message naming what it left alone:
// unknown names, and the vector-width flags (sse4_2, avx, avx2, fma, avx512f/bw/vl),
// which DLRT_CPU_ISA caps instead. The others named are still turned off.
std::string turn_features_off(const std::string& names, CpuFeatures* f);

// Linux gives a process AMX tile state only after it asks (arch_prctl
// ARCH_REQ_XCOMP_PERM); call this once before running AMX code. Returns
// false when AMX is absent or the kernel refuses. Thread-safe, idempotent.
bool request_amx_permission();

}  // namespace dlrt::device
