// Kernel body (simd/simd.h), compiled once per vector width by rows_vec.cpp:
// Softmax / LogSoftmax along a row and down columns, and a LayerNorm row
// (rows_vec.h). At 512 bits these are the operations of the former
// AVX-512-only kernels of ops/softmax.cpp and ops/normalization.cpp, with
// the masks kept to the tails.

namespace dlrt::cpu::simd::DLRT_SIMD_NS {

namespace rows_body {
namespace {

#include "backends/cpu/kernels/simd/math_simd.h"

// Vectors in lockstep: exp is one dependent chain a vector, 4 keep the FMA ports busy.
constexpr int U = 4;

__attribute__((always_inline)) inline void add_wide(Vd& lo, Vd& hi, Vf e) {
  lo = add_d(lo, widen_lo(e));
  hi = add_d(hi, widen_hi(e));
}

// Sums of d = v - x0 and of d * d, in double, into the lower / upper half accumulators.
__attribute__((always_inline)) inline void moments_add(Vf v, Vd x0, Vd& sa, Vd& sb, Vd& qa, Vd& qb) {
  const Vd lo = sub_d(widen_lo(v), x0), hi = sub_d(widen_hi(v), x0);
  sa = add_d(sa, lo);
  sb = add_d(sb, hi);
  qa = fmadd_d(lo, lo, qa);
  qb = fmadd_d(hi, hi, qb);
}

// Mean and 1 / sqrt(var + eps) of a float row in one pass, in double: the
// sums of d = x - x[0] and of d * d (each float converts to double exactly),
// two vectors a step into four accumulators of each, then the last ones one
// vector at a time (lanes past n take x[0]: d = 0 adds nothing); mean =
// x[0] + mean(d), var = mean(d * d) - mean(d)^2. Shifting by a value of the
// row bounds the cancellation: x[0] lies at most sqrt(n) standard
// deviations from the mean, so the difference loses at most log2(n) of
// double's 53 bits.
__attribute__((always_inline)) inline void moments(const float* x, int64_t n, double eps, double* mean_out,
                                                   double* inv_std_out) {
  if (n <= 0) {
    *mean_out = 0;
    *inv_std_out = 1.0 / std::sqrt(eps);
    return;
  }
  const Vd x0 = set1_d(static_cast<double>(x[0]));
  Vd s0 = zero_d(), s1 = s0, s2 = s0, s3 = s0, q0 = s0, q1 = s0, q2 = s0, q3 = s0;
  int64_t i = 0;
  for (; i + 2 * kLanes <= n; i += 2 * kLanes) {
    moments_add(loadu(x + i), x0, s0, s1, q0, q1);
    moments_add(loadu(x + i + kLanes), x0, s2, s3, q2, q3);
  }
  for (; i < n; i += kLanes)
    moments_add(select(first_lanes(n - i), load_first(x + i, n - i), set1(x[0])), x0, s0, s1, q0, q1);
  const double inv_n = 1.0 / static_cast<double>(n);
  const double md = hsum_d(add_d(add_d(s0, s1), add_d(s2, s3))) * inv_n;
  const double mq = hsum_d(add_d(add_d(q0, q1), add_d(q2, q3))) * inv_n;
  *mean_out = static_cast<double>(x[0]) + md;
  *inv_std_out = 1.0 / std::sqrt(std::max(0.0, mq - md * md) + eps);
}

}  // namespace
}  // namespace rows_body

// Max, exp and sum (the sum in double, each vector's halves apart), then the
// scale by 1 / sum (Softmax) or the shift by max + log(sum) (LogSoftmax).
void softmax_row(bool log, const float* in, float* out, int64_t n) {
  using namespace rows_body;
  constexpr int64_t kStep = int64_t{kLanes} * U;
  const Vf ninf = set1(-std::numeric_limits<float>::infinity());
  Vf vmx[U];
  for (int u = 0; u < U; ++u) vmx[u] = ninf;
  int64_t r = 0;
  for (; r + kStep <= n; r += kStep)
    for (int u = 0; u < U; ++u) vmx[u] = max(vmx[u], loadu(in + r + kLanes * u));
  for (int u = 0; r < n; r += kLanes, ++u)
    vmx[u] = max(vmx[u], select(first_lanes(n - r), load_first(in + r, n - r), ninf));
  // A NaN input may drop out of the max, but its exp is NaN, so the sum and every output are NaN (as scalar).
  const Vf vm = set1(hmax(max(max(vmx[0], vmx[1]), max(vmx[2], vmx[3]))));
  Vd s0[U], s1[U];
  for (int u = 0; u < U; ++u) s0[u] = s1[u] = zero_d();
  for (r = 0; r + kStep <= n; r += kStep) {
    Vf x[U];
    for (int u = 0; u < U; ++u) x[u] = sub(loadu(in + r + kLanes * u), vm);  // <= 0 or NaN
    math::exp_nonpositive_lockstep<U>(x);
    for (int u = 0; u < U; ++u) {
      if (!log) storeu(out + r + kLanes * u, x[u]);
      add_wide(s0[u], s1[u], x[u]);
    }
  }
  if (r < n) {
    Vf x[U];
    for (int u = 0; u < U; ++u) x[u] = sub(load_first(in + r + kLanes * u, n - r - kLanes * u), vm);
    math::exp_nonpositive_lockstep<U>(x);
    for (int u = 0; u < U; ++u) {
      const int64_t m = n - r - kLanes * u;
      const Vf e = select(first_lanes(m), x[u], zero());  // lanes past n may be positive: dropped
      if (!log) store_first(out + r + kLanes * u, e, m);
      add_wide(s0[u], s1[u], e);
    }
  }
  Vd s = zero_d();
  for (int u = 0; u < U; ++u) s = add_d(s, add_d(s0[u], s1[u]));
  const double total = hsum_d(s);
  if (log) {
    // (x - max) - log(sum): folding max into the shift would lose precision for large inputs.
    const Vf lse = set1(static_cast<float>(std::log(total)));
    for (r = 0; r + kLanes <= n; r += kLanes) storeu(out + r, sub(sub(loadu(in + r), vm), lse));
    if (r < n) store_first(out + r, sub(sub(load_first(in + r, n - r), vm), lse), n - r);
    return;
  }
  const Vf inv = set1(static_cast<float>(1.0 / total));
  for (r = 0; r + kLanes <= n; r += kLanes) storeu(out + r, mul(loadu(out + r), inv));
  if (r < n) store_first(out + r, mul(load_first(out + r, n - r), inv), n - r);
}

// One lane per column, U vectors of columns: max, exp and sum down the n
// rows (the sum in double), then the scale or the shift as softmax_row.
void softmax_cols(bool log, const float* in, float* out, int64_t n, int64_t inner, int64_t cols) {
  using namespace rows_body;
  Vf vmx[U];
  for (int u = 0; u < U; ++u) vmx[u] = set1(-std::numeric_limits<float>::infinity());
  for (int64_t r = 0; r < n; ++r)
    for (int u = 0; u < U; ++u) vmx[u] = max(vmx[u], load_first(in + r * inner + kLanes * u, cols - kLanes * u));
  Vd s0[U], s1[U];
  for (int u = 0; u < U; ++u) s0[u] = s1[u] = zero_d();
  for (int64_t r = 0; r < n; ++r) {
    Vf x[U];
    for (int u = 0; u < U; ++u) x[u] = sub(load_first(in + r * inner + kLanes * u, cols - kLanes * u), vmx[u]);
    math::exp_nonpositive_lockstep<U>(x);
    for (int u = 0; u < U; ++u) {
      if (!log) store_first(out + r * inner + kLanes * u, x[u], cols - kLanes * u);
      add_wide(s0[u], s1[u], x[u]);
    }
  }
  Vf f[U];  // Softmax: 1 / sum; LogSoftmax: log(sum)
  for (int u = 0; u < U; ++u) {
    if (!log) {
      f[u] = narrow(div_d(set1_d(1.0), s0[u]), div_d(set1_d(1.0), s1[u]));
    } else {
      double s[kLanes];
      float l[kLanes];
      storeu_d(s, s0[u]);
      storeu_d(s + kLanes / 2, s1[u]);
      for (int i = 0; i < kLanes; ++i) l[i] = static_cast<float>(std::log(s[i]));
      f[u] = loadu(l);
    }
  }
  for (int64_t r = 0; r < n; ++r)
    for (int u = 0; u < U; ++u) {
      float* o = out + r * inner + kLanes * u;
      const int64_t m = cols - kLanes * u;
      if (!log) store_first(o, mul(load_first(o, m), f[u]), m);
      else store_first(o, sub(sub(load_first(in + r * inner + kLanes * u, m), vmx[u]), f[u]), m);
    }
}

// y = (x - mean) * inv * s + b on one row, b optional.
void layer_norm_row(const float* x, const float* s, const float* b, int64_t n, double eps, float* y, double* mean,
                    double* inv) {
  rows_body::moments(x, n, eps, mean, inv);
  const Vf m = set1(static_cast<float>(*mean)), iv = set1(static_cast<float>(*inv));
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    const Vf t = mul(sub(loadu(x + i), m), iv);
    storeu(y + i, fmadd(t, loadu(s + i), b ? loadu(b + i) : zero()));
  }
  if (i < n) {
    const int64_t r = n - i;
    const Vf t = mul(sub(load_first(x + i, r), m), iv);
    store_first(y + i, fmadd(t, load_first(s + i, r), b ? load_first(b + i, r) : zero()), r);
  }
}

}  // namespace dlrt::cpu::simd::DLRT_SIMD_NS
