// Compiles the kernel body named by DLRT_SIMD_BODY once per vector width
// (see simd.h): in simd::w512 and simd::w256 inside target regions on x86
// (`#pragma GCC target`; `#pragma clang attribute` with clang, which ignores
// the former), in simd::w128 for the baseline. No include guard: a kernel
// .cpp includes this once, after every header its body needs.
#ifndef DLRT_SIMD_BODY
#error "define DLRT_SIMD_BODY (the kernel body's path) before including simd/instantiate.h"
#endif

#include <cstdint>
#include <cstring>

#include "backends/cpu/kernels/simd/simd.h"

#ifdef DLRT_SIMD_X86

#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx2,fma"))), \
                             apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512dq,avx512vl,avx2,fma")
// GCC 12's intrinsics start some results from _mm512_undefined_ps() (and
// the 128 -> 256-bit casts leave the upper half undefined), which the
// uninitialized-use warnings report once inlined: false positives.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include "backends/cpu/kernels/simd/w512.h"
#define DLRT_SIMD_NS w512
#include DLRT_SIMD_BODY
#undef DLRT_SIMD_NS
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC diagnostic pop
#pragma GCC pop_options
#endif

#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,fma"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2,fma")
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include "backends/cpu/kernels/simd/w256.h"
#define DLRT_SIMD_NS w256
#include DLRT_SIMD_BODY
#undef DLRT_SIMD_NS
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC diagnostic pop
#pragma GCC pop_options
#endif

#endif  // DLRT_SIMD_X86

#include "backends/cpu/kernels/simd/w128.h"
#define DLRT_SIMD_NS w128
#include DLRT_SIMD_BODY
#undef DLRT_SIMD_NS

#undef DLRT_SIMD_BODY
