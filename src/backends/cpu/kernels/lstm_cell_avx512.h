// The LSTM cell update of one batch row with the default activations
// (f = sigmoid, g = h = tanh), no peepholes, no clip and separate input and
// forget gates, in one AVX-512 pass (ops/rnn_loop.h): for each unit j,
//   c[j] = sigmoid(f) c[j] + sigmoid(i) tanh(g),  h[j] = sigmoid(o) tanh(c[j])
// from the gate pre-activations i, o, f, g at gates + 0, n, 2 n, 3 n. The
// sigmoid and tanh are those of the vectorised GEMM epilogue. Call only
// where cpu_has_avx512().
#pragma once

#include <cstdint>

namespace dlrt::cpu {

#if defined(__x86_64__)
void lstm_cell_avx512(int64_t n, const float* gates, float* c, float* h);
#endif

}  // namespace dlrt::cpu
