// One vector interface over three widths, so a CPU kernel is written once
// and compiled per ISA (docs/cpu-kernels.md):
//
//   simd::w128 (w128.h)  4 floats, GCC vector extensions: SSE on x86, NEON on aarch64
//   simd::w256 (w256.h)  8 floats, AVX2 + FMA
//   simd::w512 (w512.h) 16 floats, AVX-512 F/BW/DQ/VL + FMA
//
// Writing a kernel. Its body goes in a header without include guard (a
// "body") that opens `namespace dlrt::cpu::simd::DLRT_SIMD_NS` and calls the
// interface below unqualified; its entry points are ordinary functions in
// that namespace, its helpers in an anonymous namespace inside one named
// after the kernel (internal linkage, as helpers of a .cpp would have).
// The kernel's .cpp includes every system and project header the body needs,
// then defines DLRT_SIMD_BODY as the body's path and includes
// simd/instantiate.h, which compiles the body once per width: w512 and w256
// inside `#pragma GCC target` regions (no -march, so one binary runs on every
// x86 CPU), w128 for the baseline. A body includes nothing but other bodies:
// a header first included inside a target region would have its inline
// functions and templates compiled for that ISA, and the linker may keep that
// copy (a weak symbol) for callers on narrower CPUs. The .cpp then dispatches with DLRT_SIMD_CALL(simd_width(), entry,
// args...): simd_width() (width.h, beside cpu_isa()) is the one place that
// picks the width.
//
// Interface of each width namespace (all functions always inline; Vf the
// native vector of kLanes floats, lanes numbered from the lowest address):
//   kLanes, kBlocks (128-bit blocks of 4 floats: kLanes / 4), kRegisters
//   (architectural vector registers: size register tiles by it), kWidth,
//   kNativeCompress (compress_store / expand_load are one instruction).
//   zero(), set1(x), loadu(p), storeu(p, v)          unaligned, kLanes floats
//   load_first(p, n), store_first(p, v, n)          lanes [0, n) (n clamped to
//                                                   [0, kLanes]); others read 0,
//                                                   memory past n untouched
//   load_lanes(p, lo, hi)                           lanes [lo, hi) (clamped to
//                                                   [0, kLanes]) from p[lo, hi), 0 elsewhere;
//                                                   memory outside untouched
//   add sub mul div min max (x86 semantics: min/max return the second operand
//   on NaN or equality), fmadd(a, b, c) = a*b + c, fnmadd(a, b, c) = c - a*b
//   (fused on x86 and on aarch64's w128 (fmla); x86's w128 multiplies and adds), hsum, hmax
//   compress_store(p, m, v)   the lanes set in bit mask m, stored packed at p
//   expand_load(p, m)         consecutive floats at p into the lanes set in m, 0 elsewhere
//   load_blocks(p[kBlocks])   block a = 4 floats at p[a]
//   store_block(p, v, a)      block a's 4 floats at p
//   deinterleave4(p[kBlocks], x[4])  x[q] lane 4a + s = p[a][4s + q] (reads
//                                    16 floats at each p[a])
//   interleave4(y[4], o[4])   the inverse in registers: floats 16a + 4s + l of
//                             o[0] | o[1] | o[2] | o[3] = y[l] lane 4a + s
//   transpose_square(r[kLanes])  r[i] lane j <-> r[j] lane i
//   deinterleave2(a, b, e, o)  e = the even floats of a | b (a's lanes
//                              first), o = the odd ones
//   Mask (a lane mask: __mmask16 at 512 bits, all-ones lanes below), lt(a, b)
//   (ordered a < b, false on NaN), nlt(a, b) (!(a < b), true on NaN),
//   unord(a, b) (either is NaN),
//   select(m, t, f), mul_where(m, a, b, f) (a*b where m, f elsewhere),
//   bit_or bit_and bit_andnot (~a & b), round_nearest (ties to even; w128
//   only for |v| < 2^22), scale2(p, n) (p 2^n, n integral in [-126, 128];
//   2^128 is inf below 512 bits), scale2_where(m, p, n) (the same where m,
//   0 elsewhere), recip_1_2(d) (1 / d within an ulp for d in [1, 2]).
//   first_lanes(n) (the Mask of lanes [0, n), n clamped to [0, kLanes]),
//   mask_or(a, b), any(m) (a lane of m is set),
//   even_lanes(a, c) / odd_lanes(a, c) (the even / odd floats of a then c),
//   load_strided(p, s) (lane i = p[i * s], i * s within int32).
//   Vd (kLanes / 2 doubles, for sums of floats): zero_d set1_d add_d sub_d
//   div_d fmadd_d abs_d hsum_d storeu_d, widen_lo / widen_hi (a Vf's lower /
//   upper half, exactly), load_wide(p, lo, hi) (kLanes floats at p widened:
//   widen_lo / widen_hi of loadu(p)), narrow(lo, hi) (rounded to floats, lo's
//   in the lower half).
//   Vh (half vectors, kHalfLanes = kLanes / 2 floats: a ymm at 512 bits, for
//   an 8-row panel column): zero_h set1_h loadu_h storeu_h add_h mul_h
//   fmadd_h, transpose_half(r[kHalfLanes]) (r[i] lane j <-> r[j] lane i).
//   lanes_range(lo, hi) (the Mask of lanes [lo, hi), clamped to [0, kLanes]),
//   load_where(m, p) (lanes set in m from p, 0 elsewhere; nothing else read),
//   store_where(p, m, v) (lanes set in m to p; nothing else written).
//   Lane permutes: Index (kLanes int32 lane indexes; load_index(p) reads
//   kLanes of them; index_ramp(s, w): lane i = (s + i) & w), kNativePermute (false only on x86's 128-bit baseline,
//   where the permutes are scalar loops: kernels keep their portable loops
//   there), permute(v, ix) (lane i = v lane ix_i, ix_i in [0, kLanes)),
//   permute2(a, b, ix) (lane i = float ix_i of a | b, ix_i in [0, 2 kLanes)),
//   lookup4(v[4], ix) (lane i = float ix_i of v[0] | v[1] | v[2] | v[3] for
//   ix_i in [0, 4 kLanes), 0 for ix_i < 0), interleave2(a, b, lo, hi)
//   (lo | hi = a0 b0 a1 b1 ...: a's lane i at float 2i, b's at 2i + 1).
//   in_register(v) (v itself, kept in a register: a load the compiler would
//   fold into each of several uses stays one load).
//   hmin; Vi32 (kLanes int32): set1_i32 loadu_i32 load_first_i32 add_i32
//   sub_i32 (wrapping), to_float; store_bytes(p, v, n) (lanes [0, n) of v, integral
//   floats in [-128, 255], as bytes: each lane's int32 low byte; a NaN lane
//   stores 0: x86 converts it to 0x80000000); load_i16_i32(p) (kLanes int16
//   sign-extended), load_first_i16_i32(p, n) (lanes [0, n), 0 elsewhere,
//   memory past n unread), mullo_i32 (the low 32 bits of products: wraps),
//   storeu_i32, store_first_i32(p, v, n) (lanes [0, n); memory past n untouched).
//   simd/math_simd.h builds exp, sigmoid and tanh on them.
// New operations are added to all three widths with the same contract.
#pragma once

#include <cstdint>

#include "backends/cpu/kernels/simd/width.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define DLRT_SIMD_X86 1
#endif

// `entry(args...)` at the width `w` (a SimdWidth): the instantiation in
// simd::w512, w256 or w128 (simd/instantiate.h), counted per width in the
// call site's SimdCallCounter (width.h: simd_calls).
#ifdef DLRT_SIMD_X86
#define DLRT_SIMD_PICK(w, entry, ...)                                                  \
  ((w) == ::dlrt::cpu::SimdWidth::k512   ? ::dlrt::cpu::simd::w512::entry(__VA_ARGS__) \
   : (w) == ::dlrt::cpu::SimdWidth::k256 ? ::dlrt::cpu::simd::w256::entry(__VA_ARGS__) \
                                         : ::dlrt::cpu::simd::w128::entry(__VA_ARGS__))
#else
#define DLRT_SIMD_PICK(w, entry, ...) ((void)(w), ::dlrt::cpu::simd::w128::entry(__VA_ARGS__))
#endif
#define DLRT_SIMD_CALL(w, entry, ...)                              \
  [&](::dlrt::cpu::SimdWidth dlrt_simd_w_) -> decltype(auto) {     \
    static ::dlrt::cpu::SimdCallCounter dlrt_simd_calls_(#entry);  \
    dlrt_simd_calls_.add(dlrt_simd_w_);                            \
    return DLRT_SIMD_PICK(dlrt_simd_w_, entry, __VA_ARGS__);       \
  }(w)
