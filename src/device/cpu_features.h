// What the CPU dlrt runs on can do, for choosing kernels at run time. A flag
// is true only when both the CPU has the instructions and the OS saves the
// register state they need (XGETBV/XCR0: AVX for avx/avx2/fma/f16c, opmask and
// ZMM for AVX-512, tile state for AMX). All false off x86.
//
// Thread-safety: cpu_features() may be called from any thread; it probes once.
#pragma once

namespace dlrt::device {

struct CpuFeatures {
  bool avx2 = false, fma = false, avx512f = false, avx512bw = false, avx512vl = false, avx512_vnni = false,
       avx512_bf16 = false, amx_tile = false, amx_bf16 = false, amx_int8 = false, f16c = false;
  // Also reported, rarely needed to pick a kernel.
  bool sse4_2 = false, avx = false, avx512_fp16 = false, avx_vnni = false, avx512_vbmi = false;
};

// The features of the CPU this process runs on (cpuid, probed on first use).
const CpuFeatures& cpu_features();

// Linux gives a process AMX tile state only after it asks (arch_prctl
// ARCH_REQ_XCOMP_PERM); call this once before running AMX code. Returns
// false when AMX is absent or the kernel refuses. Thread-safe, idempotent.
bool request_amx_permission();

}  // namespace dlrt::device
