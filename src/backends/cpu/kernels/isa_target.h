// The one place the CPU kernels' x86 target attributes are spelled. Vector
// paths are compiled for their ISA with __attribute__((target(...))) instead of
// -march, so one binary runs everywhere; isa.h picks which runs. Each macro
// names one feature set; a kernel uses the smallest set its intrinsics need.
#pragma once

#if defined(__x86_64__) || defined(__i386__)

// AVX2 + FMA (CpuIsa::kAvx2).
#define DLRT_AVX2 __attribute__((target("avx2,fma")))
// AVX2 without FMA (integer-only helpers).
#define DLRT_AVX2_INT __attribute__((target("avx2")))
// AVX2 with AVX-VNNI (the 8-bit GEMM on hybrid cores).
#define DLRT_AVX2_VNNI __attribute__((target("avx2,avxvnni")))

// AVX-512 F/BW/DQ/VL + FMA (CpuIsa::kAvx512): the AVX-512 int8 and AMX/bf16 callers.
#define DLRT_AVX512 __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,fma")))
// AVX-512F with AVX2 + FMA.
#define DLRT_AVX512F_FMA __attribute__((target("avx512f,avx2,fma")))
// AVX-512F alone.
#define DLRT_AVX512F __attribute__((target("avx512f")))
// AVX-512 F + BW (byte and word lanes: the 8-bit kernels and pools).
#define DLRT_AVX512BW __attribute__((target("avx512f,avx512bw")))
// AVX-512 F + BW + VL.
#define DLRT_AVX512BW_VL __attribute__((target("avx512f,avx512bw,avx512vl")))
// AVX-512 F + BW + VNNI (the 8-bit GEMM's dot products).
#define DLRT_AVX512_VNNI __attribute__((target("avx512f,avx512bw,avx512vnni")))
// AVX-512 F + BW + VBMI (64-byte table lookups in the quantization rows).
#define DLRT_AVX512_VBMI __attribute__((target("avx512f,avx512bw,avx512vbmi")))
// AVX-512 F/BW/VL + AVX512-BF16 (the bf16 GEMM's VDPBF16PS kernel, gemm_bf16_avx512.cpp).
#define DLRT_AVX512_BF16 __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16")))
// AMX tiles with bf16 and the AVX-512 sets around them (gemm_amx.cpp).
#define DLRT_AMX_TARGET \
  __attribute__((target("amx-tile,amx-bf16,avx512f,avx512bw,avx512vl,avx512dq,avx512bf16")))
// AMX tiles with int8 dot products alone (gemm_int8_amx.cpp: LDTILECFG and TILERELEASE).
#define DLRT_AMX_INT8 __attribute__((target("amx-tile,amx-int8")))

#endif
