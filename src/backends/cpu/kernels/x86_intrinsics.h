// <immintrin.h> for the AVX-512 code written per ISA (int8 kernels, the
// expand-depthwise tiles). GCC 12's AVX-512 intrinsics start some results
// from _mm512_undefined_ps(), which the uninitialized-use warnings report
// once inlined: false positives, silenced for the including file.
#pragma once

#if defined(__x86_64__) || defined(__i386__)
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include <immintrin.h>
#endif
