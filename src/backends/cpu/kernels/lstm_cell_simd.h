// Kernel body (simd/simd.h), compiled once per vector width by
// lstm_cell.cpp: the fused LSTM cell update (lstm_cell.h).

namespace dlrt::cpu::simd::DLRT_SIMD_NS {

namespace lstm_cell_body {
namespace {
#include "backends/cpu/kernels/simd/math_simd.h"
}  // namespace
}  // namespace lstm_cell_body

void lstm_cell(int64_t n, const float* gates, float* c, float* h) {
  using namespace lstm_cell_body;
  const float* gi = gates;
  const float* go = gates + n;
  const float* gf = gates + 2 * n;
  const float* gg = gates + 3 * n;
  for (int64_t j = 0; j < n; j += kLanes) {
    const int64_t m = n - j;
    const Vf i = math::sigmoid(load_first(gi + j, m));
    const Vf f = math::sigmoid(load_first(gf + j, m));
    const Vf g = math::tanh(load_first(gg + j, m));
    const Vf o = math::sigmoid(load_first(go + j, m));
    // f c rounded, then i g added to it fused: what the former AVX-512 kernel compiled to.
    const Vf cn = fmadd(i, g, mul(f, load_first(c + j, m)));
    store_first(c + j, cn, m);
    store_first(h + j, mul(o, math::tanh(cn)), m);
  }
}

}  // namespace dlrt::cpu::simd::DLRT_SIMD_NS
