// The LSTM cell update of one batch row with the default activations
// (f = sigmoid, g = h = tanh), no peepholes, no clip and separate input and
// forget gates, in one vector pass (ops/rnn_loop.h): for each unit j,
//   c[j] = sigmoid(f) c[j] + sigmoid(i) tanh(g),  h[j] = sigmoid(o) tanh(c[j])
// from the gate pre-activations i, o, f, g at gates + 0, n, 2 n, 3 n. One
// source (lstm_cell_simd.h over simd/simd.h) at every vector width.
#pragma once

#include <cstdint>

#include "backends/cpu/kernels/simd/width.h"

namespace dlrt::cpu {

using LstmCellFn = void (*)(int64_t n, const float* gates, float* c, float* h);

// The cell compiled for `width`, which must run on this CPU (simd_width()
// or narrower).
LstmCellFn lstm_cell_at(SimdWidth width);

}  // namespace dlrt::cpu
