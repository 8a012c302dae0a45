// Linear algebra beyond GEMM: Det.
#include <cmath>

#include "backends/cpu/kernel_families.h"
#include "backends/cpu/kernel_util.h"

namespace dlrt::cpu {

namespace {

// Determinant by LU decomposition with partial pivoting, in double.
double determinant(std::vector<double>& a, int64_t n) {
  double det = 1.0;
  for (int64_t c = 0; c < n; ++c) {
    int64_t piv = c;
    for (int64_t r = c + 1; r < n; ++r)
      if (std::abs(a[r * n + c]) > std::abs(a[piv * n + c])) piv = r;
    if (a[piv * n + c] == 0.0) return 0.0;
    if (piv != c) {
      for (int64_t k = 0; k < n; ++k) std::swap(a[c * n + k], a[piv * n + k]);
      det = -det;
    }
    double d = a[c * n + c];
    det *= d;
    for (int64_t r = c + 1; r < n; ++r) {
      double f = a[r * n + c] / d;
      if (f == 0.0) continue;
      for (int64_t k = c; k < n; ++k) a[r * n + k] -= f * a[c * n + k];
    }
  }
  return det;
}

Status det_kernel(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
  const auto& s = x->shape();
  if (s.size() < 2 || s[s.size() - 1] != s[s.size() - 2])
    return ctx.invalid("input must be [..., M, M], got " + shape_to_string(s));
  const int64_t n = s.back();
  Shape os(s.begin(), s.end() - 2);
  DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), os));
  const int64_t batch = y->size();
  return dispatch_float(x->dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    std::vector<double> m(static_cast<size_t>(n * n));
    for (int64_t b = 0; b < batch; ++b) {
      const T* src = x->data<T>() + b * n * n;
      for (int64_t i = 0; i < n * n; ++i) m[i] = static_cast<double>(src[i]);
      y->data<T>()[b] = static_cast<T>(determinant(m, n));
    }
    return Status::Ok();
  });
}

}  // namespace

Status register_linalg_kernels(KernelRegistry& r) { return r.add_fn("Det", det_kernel, 11); }

}  // namespace dlrt::cpu
