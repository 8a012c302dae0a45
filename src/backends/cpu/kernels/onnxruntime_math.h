// erf and softmax over float32 with ONNX Runtime's algorithms (MLAS's, as its
// Erf, com.microsoft BiasGelu and Softmax compute them on x86), for the nodes
// that must round as ONNX Runtime does (ir/onnxruntime_order.h).
#pragma once

#include <cstdint>

namespace dlrt::cpu {

// y[i] = erf(x[i]) for i < n (y may be x), bit for bit ONNX Runtime's on CPUs
// with FMA: |x| <= 0.921875 an odd polynomial in x^2, above it 1 - exp(-P(|x|))
// with its own exp (a degree-6 polynomial after a round-to-integer by
// magic-constant addition), the sign put back. Without vector kernels,
// scalar code with std::fma, the same steps.
void erf_ort_f32(const float* x, float* y, int64_t n);

// One softmax row as MLAS computes it on AVX-512 CPUs (y may be x): the max;
// e = exp(max(x - max, -103.97)) by its polynomial (a degree-6 polynomial
// after reduction by round(x / ln 2), scaled by 2^m exactly); the sum of e in
// sixteen float lanes, one vector after another, the lanes then added as
// halves, pairs, pairs of pairs; y = e * (1 / sum). (On AVX2-only CPUs MLAS
// sums in eight lanes: the last bits of the sum may differ there.)
void softmax_row_ort(const float* x, float* y, int64_t n);

}  // namespace dlrt::cpu
