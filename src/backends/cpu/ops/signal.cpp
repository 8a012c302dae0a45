// Signal processing: DFT, STFT, window functions, MelWeightMatrix (opset 17+).
#include <cmath>
#include <complex>
#include <numbers>

#include "backends/cpu/kernel_families.h"
#include "backends/cpu/kernel_util.h"

namespace dlrt::cpu {

namespace {

using cd = std::complex<double>;

bool is_pow2(int64_t n) { return n > 0 && (n & (n - 1)) == 0; }

// In-place transform of `x` (length n). Powers of two use an iterative
// radix-2 FFT; other lengths a direct DFT with a precomputed twiddle table.
void transform(std::vector<cd>& x, bool inverse) {
  const int64_t n = static_cast<int64_t>(x.size());
  const double sign = inverse ? 1.0 : -1.0;
  if (n <= 1) return;
  if (is_pow2(n)) {
    for (int64_t i = 1, j = 0; i < n; ++i) {
      int64_t bit = n >> 1;
      for (; j & bit; bit >>= 1) j ^= bit;
      j ^= bit;
      if (i < j) std::swap(x[i], x[j]);
    }
    for (int64_t len = 2; len <= n; len <<= 1) {
      double ang = sign * 2 * std::numbers::pi / static_cast<double>(len);
      cd wl(std::cos(ang), std::sin(ang));
      for (int64_t i = 0; i < n; i += len) {
        cd w(1);
        for (int64_t k = 0; k < len / 2; ++k) {
          cd u = x[i + k], v = x[i + k + len / 2] * w;
          x[i + k] = u + v;
          x[i + k + len / 2] = u - v;
          w *= wl;
        }
      }
    }
    return;
  }
  std::vector<cd> tw(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k) {
    double ang = sign * 2 * std::numbers::pi * static_cast<double>(k) / static_cast<double>(n);
    tw[k] = cd(std::cos(ang), std::sin(ang));
  }
  std::vector<cd> out(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k) {
    cd acc = 0;
    for (int64_t t = 0; t < n; ++t) acc += x[t] * tw[(k * t) % n];
    out[k] = acc;
  }
  x.swap(out);
}

Result<int64_t> scalar_int(const Tensor& t, const KernelContext& ctx, const char* what) {
  DLRT_ASSIGN_OR_RETURN(auto v, read_int_tensor(t, ctx));
  if (v.size() != 1) return ctx.invalid(std::string(what) + " must be a scalar");
  return v[0];
}

Result<double> scalar_double(const Tensor& t, const KernelContext& ctx, const char* what) {
  if (t.size() != 1) return ctx.invalid(std::string(what) + " must be a scalar");
  double v = 0;
  Status s = dispatch_numeric(t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    v = static_cast<double>(static_cast<float>(t.data<T>()[0]));
    if constexpr (std::is_integral_v<T> || std::is_same_v<T, double>) v = static_cast<double>(t.data<T>()[0]);
    return Status::Ok();
  });
  DLRT_RETURN_IF_ERROR(s);
  return v;
}

template <typename T>
Status dft_typed(KernelContext& ctx, const Tensor& x, int64_t axis, int64_t length, bool inverse, bool onesided) {
  const auto& s = x.shape();
  const int64_t rank = static_cast<int64_t>(s.size());
  const int64_t comps = s.back();
  const int64_t n_in = s[axis];
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < axis; ++i) outer *= s[i];
  for (int64_t i = axis + 1; i < rank - 1; ++i) inner *= s[i];
  // A one-sided inverse (IRFFT): the input holds bins 0..length/2 of a
  // Hermitian spectrum and the output is the real signal of `length` values.
  const bool irfft = inverse && onesided;
  const int64_t n_out = irfft ? length : onesided ? length / 2 + 1 : length;
  Shape os = s;
  os[axis] = n_out;
  os.back() = irfft ? 1 : 2;
  DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), os));
  const T* src = x.data<T>();
  T* dst = y->data<T>();
  std::vector<cd> buf(static_cast<size_t>(length));
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t in = 0; in < inner; ++in) {
      for (int64_t k = 0; k < length; ++k) {
        // IRFFT: bin k > length/2 is the conjugate of bin length - k.
        const bool mirrored = irfft && k > length / 2;
        const int64_t kk = mirrored ? length - k : k;
        if (kk >= n_in) {
          buf[k] = 0;
          continue;
        }
        const T* e = src + ((o * n_in + kk) * inner + in) * comps;
        buf[k] = cd(static_cast<double>(e[0]), comps == 2 ? static_cast<double>(e[1]) : 0.0);
        if (mirrored) buf[k] = std::conj(buf[k]);
      }
      transform(buf, inverse);
      double scale = inverse ? 1.0 / static_cast<double>(length) : 1.0;
      if (irfft) {
        for (int64_t k = 0; k < n_out; ++k)
          dst[(o * n_out + k) * inner + in] = static_cast<T>(buf[k].real() * scale);
        continue;
      }
      for (int64_t k = 0; k < n_out; ++k) {
        T* e = dst + ((o * n_out + k) * inner + in) * 2;
        e[0] = static_cast<T>(buf[k].real() * scale);
        e[1] = static_cast<T>(buf[k].imag() * scale);
      }
    }
  return Status::Ok();
}

Status dft_kernel(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
  if (x->rank() < 2 || (x->shape().back() != 1 && x->shape().back() != 2))
    return ctx.invalid("input must have rank >= 2 with a last dim of 1 (real) or 2 (complex), got " +
                       shape_to_string(x->shape()));
  int64_t axis = ctx.node().attr_int("axis", 1);
  if (ctx.opset() >= 20) {
    axis = -2;
    if (const Tensor* a = ctx.input(2)) {
      DLRT_ASSIGN_OR_RETURN(axis, scalar_int(*a, ctx, "axis"));
    }
  }
  const int64_t rank = static_cast<int64_t>(x->rank());
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank - 1)
    return ctx.invalid("axis is out of range for input shape " + shape_to_string(x->shape()));
  bool inverse = ctx.node().attr_int("inverse", 0) != 0;
  bool onesided = ctx.node().attr_int("onesided", 0) != 0;
  if (onesided && !inverse && x->shape().back() == 2)
    return ctx.invalid("a one-sided forward DFT needs a real input (last dim 1)");
  if (onesided && inverse && x->shape().back() != 2)
    return ctx.invalid("a one-sided inverse DFT needs a complex input (last dim 2)");
  // IRFFT's default length: the full signal of a one-sided spectrum.
  int64_t length = onesided && inverse ? 2 * (x->dim(axis) - 1) : x->dim(axis);
  if (const Tensor* l = ctx.input(1)) {
    DLRT_ASSIGN_OR_RETURN(length, scalar_int(*l, ctx, "dft_length"));
  }
  if (length <= 0) return ctx.invalid("dft_length must be positive");
  return dispatch_float(x->dtype(), [&](auto tag) {
    return dft_typed<typename decltype(tag)::type>(ctx, *x, axis, length, inverse, onesided);
  });
}

template <typename T>
Status stft_typed(KernelContext& ctx, const Tensor& sig, int64_t step, const Tensor* window, int64_t frame_len,
                  bool onesided) {
  const int64_t batch = sig.dim(0), len = sig.dim(1), comps = sig.dim(2);
  const int64_t frames = (len - frame_len) / step + 1;
  const int64_t bins = onesided ? frame_len / 2 + 1 : frame_len;
  DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, sig.dtype(), {batch, frames, bins, 2}));
  const T* src = sig.data<T>();
  T* dst = y->data<T>();
  std::vector<cd> buf(static_cast<size_t>(frame_len));
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t f = 0; f < frames; ++f) {
      for (int64_t k = 0; k < frame_len; ++k) {
        const T* e = src + (b * len + f * step + k) * comps;
        double w = window ? static_cast<double>(window->data<T>()[k]) : 1.0;
        buf[k] = cd(static_cast<double>(e[0]) * w, comps == 2 ? static_cast<double>(e[1]) * w : 0.0);
      }
      transform(buf, false);
      for (int64_t k = 0; k < bins; ++k) {
        T* e = dst + ((b * frames + f) * bins + k) * 2;
        e[0] = static_cast<T>(buf[k].real());
        e[1] = static_cast<T>(buf[k].imag());
      }
    }
  return Status::Ok();
}

Status stft_kernel(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* sig, required_input(ctx, 0));
  DLRT_ASSIGN_OR_RETURN(const Tensor* step_t, required_input(ctx, 1));
  if (sig->rank() != 3 || (sig->dim(2) != 1 && sig->dim(2) != 2))
    return ctx.invalid("signal must be [batch, length, 1 or 2], got " + shape_to_string(sig->shape()));
  DLRT_ASSIGN_OR_RETURN(int64_t step, scalar_int(*step_t, ctx, "frame_step"));
  const Tensor* window = ctx.input(2);
  int64_t frame_len = -1;
  if (const Tensor* fl = ctx.input(3)) {
    DLRT_ASSIGN_OR_RETURN(frame_len, scalar_int(*fl, ctx, "frame_length"));
  }
  if (window) {
    if (window->rank() != 1) return ctx.invalid("window must be 1-D");
    if (window->dtype() != sig->dtype()) return ctx.invalid("window must have the signal's dtype");
    if (frame_len < 0) frame_len = window->dim(0);
    if (window->dim(0) != frame_len) return ctx.invalid("window length differs from frame_length");
  }
  if (frame_len <= 0) return ctx.invalid("frame_length (or a window) is required and must be positive");
  if (step <= 0) return ctx.invalid("frame_step must be positive");
  if (frame_len > sig->dim(1)) return ctx.invalid("frame_length is longer than the signal");
  bool onesided = ctx.node().attr_int("onesided", 1) != 0;
  if (onesided && sig->dim(2) == 2) return ctx.invalid("onesided output needs a real signal");
  return dispatch_float(sig->dtype(), [&](auto tag) {
    return stft_typed<typename decltype(tag)::type>(ctx, *sig, step, window, frame_len, onesided);
  });
}

enum class Window { kHann, kHamming, kBlackman };

template <Window W>
Status window_kernel(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* size_t_, required_input(ctx, 0));
  DLRT_ASSIGN_OR_RETURN(int64_t n, scalar_int(*size_t_, ctx, "size"));
  if (n < 0) return ctx.invalid("window size must not be negative");
  bool periodic = ctx.node().attr_int("periodic", 1) != 0;
  int64_t out_type = ctx.node().attr_int("output_datatype", 1);
  if (!dtype_is_valid(static_cast<int>(out_type))) return ctx.invalid("bad output_datatype");
  DType dt = static_cast<DType>(out_type);
  DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, dt, {n}));
  double denom = periodic ? static_cast<double>(n) : static_cast<double>(n - 1);
  return dispatch_numeric(dt, [&](auto tag) {
    using T = typename decltype(tag)::type;
    for (int64_t i = 0; i < n; ++i) {
      double a = denom > 0 ? 2 * std::numbers::pi * static_cast<double>(i) / denom : 0;
      double w = 0;
      if constexpr (W == Window::kHann) w = 0.5 - 0.5 * std::cos(a);
      if constexpr (W == Window::kHamming) w = 25.0 / 46.0 - (1 - 25.0 / 46.0) * std::cos(a);
      if constexpr (W == Window::kBlackman) w = 0.42 - 0.5 * std::cos(a) + 0.08 * std::cos(2 * a);
      y->data<T>()[i] = static_cast<T>(static_cast<float>(w));
    }
    return Status::Ok();
  });
}

// Triangular mel filters, following the ONNX reference construction: mel
// points spaced evenly between the edges, mapped back to DFT bins.
Status mel_weight_matrix_kernel(KernelContext& ctx) {
  for (size_t i = 0; i < 5; ++i)
    if (!ctx.input(i)) return ctx.invalid("all five inputs are required");
  DLRT_ASSIGN_OR_RETURN(int64_t mel_bins, scalar_int(*ctx.input(0), ctx, "num_mel_bins"));
  DLRT_ASSIGN_OR_RETURN(int64_t dft_len, scalar_int(*ctx.input(1), ctx, "dft_length"));
  DLRT_ASSIGN_OR_RETURN(int64_t rate, scalar_int(*ctx.input(2), ctx, "sample_rate"));
  DLRT_ASSIGN_OR_RETURN(double low_hz, scalar_double(*ctx.input(3), ctx, "lower_edge_hertz"));
  DLRT_ASSIGN_OR_RETURN(double high_hz, scalar_double(*ctx.input(4), ctx, "upper_edge_hertz"));
  if (mel_bins <= 0 || dft_len <= 0 || rate <= 0 || mel_bins > (1 << 20) || dft_len > (1 << 26))
    return ctx.invalid("num_mel_bins, dft_length and sample_rate must be positive and reasonable");
  int64_t spec_bins = dft_len / 2 + 1;
  int64_t out_type = ctx.node().attr_int("output_datatype", 1);
  if (!dtype_is_valid(static_cast<int>(out_type))) return ctx.invalid("bad output_datatype");
  DType dt = static_cast<DType>(out_type);
  auto to_mel = [](double hz) { return 2595.0 * std::log10(1.0 + hz / 700.0); };
  double low_mel = to_mel(low_hz), high_mel = to_mel(high_hz);
  double step = (high_mel - low_mel) / static_cast<double>(mel_bins + 2);
  std::vector<int64_t> points(static_cast<size_t>(mel_bins + 2));
  for (int64_t i = 0; i < mel_bins + 2; ++i) {
    double hz = 700.0 * (std::pow(10.0, (static_cast<double>(i) * step + low_mel) / 2595.0) - 1.0);
    points[i] = static_cast<int64_t>(std::floor(static_cast<double>(dft_len + 1) * hz / static_cast<double>(rate)));
  }
  std::vector<double> w(static_cast<size_t>(spec_bins * mel_bins), 0.0);
  auto at = [&](int64_t bin, int64_t m) -> double* {
    return bin >= 0 && bin < spec_bins ? &w[bin * mel_bins + m] : nullptr;
  };
  for (int64_t m = 0; m < mel_bins; ++m) {
    int64_t lo = points[m], c = points[m + 1], hi = points[m + 2];
    if (c - lo == 0) {
      if (double* p = at(c, m)) *p = 1.0;
    } else {
      for (int64_t j = lo; j <= c; ++j)
        if (double* p = at(j, m)) *p = static_cast<double>(j - lo) / static_cast<double>(c - lo);
    }
    if (hi - c > 0)
      for (int64_t j = c; j < hi; ++j)
        if (double* p = at(j, m)) *p = static_cast<double>(hi - j) / static_cast<double>(hi - c);
  }
  DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, dt, {spec_bins, mel_bins}));
  return dispatch_numeric(dt, [&](auto tag) {
    using T = typename decltype(tag)::type;
    for (size_t i = 0; i < w.size(); ++i) y->data<T>()[i] = static_cast<T>(static_cast<float>(w[i]));
    return Status::Ok();
  });
}

}  // namespace

Status register_signal_kernels(KernelRegistry& r) {
  DLRT_RETURN_IF_ERROR(r.add_fn("DFT", dft_kernel, 17));
  DLRT_RETURN_IF_ERROR(r.add_fn("STFT", stft_kernel, 17));
  DLRT_RETURN_IF_ERROR(r.add_fn("HannWindow", window_kernel<Window::kHann>, 17));
  DLRT_RETURN_IF_ERROR(r.add_fn("HammingWindow", window_kernel<Window::kHamming>, 17));
  DLRT_RETURN_IF_ERROR(r.add_fn("BlackmanWindow", window_kernel<Window::kBlackman>, 17));
  return r.add_fn("MelWeightMatrix", mel_weight_matrix_kernel, 17);
}

}  // namespace dlrt::cpu
