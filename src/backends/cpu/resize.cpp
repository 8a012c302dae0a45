// Resize (opsets 10..19), Upsample (7..9) and GridSample (16+).
//
// Resize is separable: for every resized axis we precompute, per output
// coordinate, the input indices and weights it reads (nearest: one tap;
// linear: 2; cubic: 4; antialiased: a footprint stretched by 1/scale), then
// apply the axes one pass at a time over an [outer, length, inner] view.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "backends/cpu/kernel_families.h"
#include "backends/cpu/kernel_util.h"

namespace dlrt::cpu {
namespace {

enum class Mode { kNearest, kLinear, kCubic };
enum class Coord { kHalfPixel, kHalfPixelSymmetric, kPytorchHalfPixel, kAlignCorners, kAsymmetric, kTfHalfPixelForNn, kTfCropAndResize };
enum class NearestMode { kRoundPreferFloor, kRoundPreferCeil, kFloor, kCeil };

struct ResizeAttrs {
  Mode mode = Mode::kNearest;
  Coord coord = Coord::kHalfPixel;
  NearestMode nearest = NearestMode::kRoundPreferFloor;
  double cubic_a = -0.75;
  bool exclude_outside = false;
  double extrapolation = 0;
  bool antialias = false;
};

// The taps one output coordinate reads along one axis.
struct AxisTaps {
  int64_t out_len = 0;
  int64_t ntaps = 1;
  std::vector<int64_t> index;  // out_len * ntaps, clamped into range
  std::vector<double> weight;  // out_len * ntaps
  std::vector<uint8_t> outside;  // tf_crop_and_resize: coordinate outside the input
  bool identity = false;
};

double transform(Coord c, double x, double scale, double len_resized, int64_t len_in, double roi_start, double roi_end) {
  const double len_orig = static_cast<double>(len_in);
  switch (c) {
    case Coord::kHalfPixel: return (x + 0.5) / scale - 0.5;
    case Coord::kHalfPixelSymmetric: {
      const double adjustment = len_resized / (scale * len_orig);
      const double center = len_orig / 2;
      const double offset = center * (1 - adjustment);
      return offset + (x + 0.5) / scale - 0.5;
    }
    case Coord::kPytorchHalfPixel: return len_resized > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
    case Coord::kAlignCorners: return len_resized == 1 ? 0.0 : x * (len_orig - 1) / (len_resized - 1);
    case Coord::kAsymmetric: return x / scale;
    case Coord::kTfHalfPixelForNn: return (x + 0.5) / scale;
    case Coord::kTfCropAndResize:
      return len_resized > 1 ? roi_start * (len_orig - 1) + x * (roi_end - roi_start) * (len_orig - 1) / (len_resized - 1)
                             : 0.5 * (roi_start + roi_end) * (len_orig - 1);
  }
  return x;
}

int64_t nearest_index(NearestMode m, double x) {
  switch (m) {
    case NearestMode::kRoundPreferFloor:
      return (x - std::floor(x) == 0.5) ? static_cast<int64_t>(std::floor(x)) : static_cast<int64_t>(std::round(x));
    case NearestMode::kRoundPreferCeil:
      return (x - std::floor(x) == 0.5) ? static_cast<int64_t>(std::ceil(x)) : static_cast<int64_t>(std::round(x));
    case NearestMode::kFloor: return static_cast<int64_t>(std::floor(x));
    case NearestMode::kCeil: return static_cast<int64_t>(std::ceil(x));
  }
  return 0;
}

double cubic_weight(double x, double a) {
  x = std::fabs(x);
  if (x <= 1) return ((a + 2) * x - (a + 3)) * x * x + 1;
  if (x < 2) return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
  return 0;
}

AxisTaps make_taps(const ResizeAttrs& at, int64_t in_len, int64_t out_len, double scale, double len_resized, double roi_start,
                   double roi_end) {
  AxisTaps t;
  t.out_len = out_len;
  const double len_in_d = static_cast<double>(in_len);
  // Antialiasing only widens the filter when downsampling.
  const double filter_scale = (at.antialias && at.mode != Mode::kNearest && scale < 1) ? scale : 1.0;
  int64_t start = 0;
  if (at.mode == Mode::kNearest) {
    t.ntaps = 1;
  } else if (at.mode == Mode::kLinear) {
    start = static_cast<int64_t>(std::floor(-1 / filter_scale) + 1);
    t.ntaps = 2 - 2 * start;
  } else {
    start = static_cast<int64_t>(std::floor(-2 / filter_scale) + 1);
    t.ntaps = 2 - 2 * start;
  }
  t.index.assign(static_cast<size_t>(out_len * t.ntaps), 0);
  t.weight.assign(static_cast<size_t>(out_len * t.ntaps), 0.0);
  t.outside.assign(static_cast<size_t>(out_len), 0);
  for (int64_t j = 0; j < out_len; ++j) {
    // tf_crop_and_resize divides by the integer output length, the others by input * scale.
    const double lr = at.coord == Coord::kTfCropAndResize ? static_cast<double>(out_len) : len_resized;
    double x = transform(at.coord, static_cast<double>(j), scale, lr, in_len, roi_start, roi_end);
    if (at.coord == Coord::kTfCropAndResize && !(x >= 0 && x <= len_in_d - 1)) t.outside[j] = 1;
    if (!std::isfinite(x)) x = 0;
    x = std::clamp(x, -1e12, 1e12);  // keeps the integer conversions below defined
    int64_t* idx = &t.index[j * t.ntaps];
    double* w = &t.weight[j * t.ntaps];
    if (at.mode == Mode::kNearest) {
      idx[0] = std::clamp<int64_t>(nearest_index(at.nearest, x), 0, std::max<int64_t>(in_len - 1, 0));
      w[0] = 1;
      continue;
    }
    // Prefer the pixel on the left: ratio lies in (0, 1].
    double xf = std::floor(x);
    double ratio = x - xf;
    if (ratio == 0) {
      xf -= 1;
      ratio = 1;
    }
    const int64_t xi = static_cast<int64_t>(xf);
    double sum = 0;
    for (int64_t k = 0; k < t.ntaps; ++k) {
      const int64_t off = start + k;  // tap offset relative to xi
      const double dist = (static_cast<double>(off) - ratio) * filter_scale;
      double wk = at.mode == Mode::kLinear ? std::clamp(1 - std::fabs(dist), 0.0, 1.0) : cubic_weight(dist, at.cubic_a);
      const int64_t p = xi + off;
      if (at.exclude_outside && (p < 0 || p >= in_len)) wk = 0;
      idx[k] = std::clamp<int64_t>(p, 0, std::max<int64_t>(in_len - 1, 0));
      w[k] = wk;
      sum += wk;
    }
    if (sum != 0 && (at.exclude_outside || filter_scale != 1.0))
      for (int64_t k = 0; k < t.ntaps; ++k) w[k] /= sum;
  }
  // An axis whose every output reads exactly its own input is skipped.
  if (out_len == in_len && at.coord != Coord::kTfCropAndResize) {
    bool id = true;
    for (int64_t j = 0; j < out_len && id; ++j)
      for (int64_t k = 0; k < t.ntaps && id; ++k) {
        const double wk = t.weight[j * t.ntaps + k];
        if (wk != 0 && !(t.index[j * t.ntaps + k] == j && std::fabs(wk - 1) < 1e-12)) id = false;
      }
    t.identity = id;
  }
  return t;
}

// One pass along `axis`: dst[o, j, i] = sum_k w[j,k] * src[o, idx[j,k], i].
template <typename C>
void resample_axis(KernelContext& ctx, const C* src, C* dst, int64_t outer, int64_t in_len, int64_t inner, const AxisTaps& t,
                   double extrapolation) {
  const int64_t out_len = t.out_len;
  const int64_t grain = std::max<int64_t>(1, 8192 / std::max<int64_t>(1, inner * t.ntaps));
  ctx.pool().parallel_for(outer * out_len, grain, [&](int64_t b, int64_t e) {
    for (int64_t u = b; u < e; ++u) {
      const int64_t o = u / out_len, j = u % out_len;
      C* orow = dst + (o * out_len + j) * inner;
      if (t.outside[j]) {
        std::fill(orow, orow + inner, static_cast<C>(extrapolation));
        continue;
      }
      const C* base = src + o * in_len * inner;
      if (t.ntaps == 1) {
        const C* irow = base + t.index[j] * inner;
        std::copy(irow, irow + inner, orow);
        continue;
      }
      std::fill(orow, orow + inner, C(0));
      for (int64_t k = 0; k < t.ntaps; ++k) {
        const C wk = static_cast<C>(t.weight[j * t.ntaps + k]);
        if (wk == C(0)) continue;
        const C* irow = base + t.index[j * t.ntaps + k] * inner;
        for (int64_t i = 0; i < inner; ++i) orow[i] += wk * irow[i];
      }
    }
  });
}

// Nearest for any dtype: pure gathers, no arithmetic.
template <typename T>
void gather_axis(KernelContext& ctx, const T* src, T* dst, int64_t outer, int64_t in_len, int64_t inner, const AxisTaps& t,
                 const T& extrapolation) {
  const int64_t out_len = t.out_len;
  ctx.pool().parallel_for(outer * out_len, std::max<int64_t>(1, 8192 / std::max<int64_t>(1, inner)), [&](int64_t b, int64_t e) {
    for (int64_t u = b; u < e; ++u) {
      const int64_t o = u / out_len, j = u % out_len;
      T* orow = dst + (o * out_len + j) * inner;
      if (t.outside[j]) {
        std::fill(orow, orow + inner, extrapolation);
        continue;
      }
      const T* irow = src + (o * in_len + t.index[j]) * inner;
      std::copy(irow, irow + inner, orow);
    }
  });
}

template <typename T>
T cast_result(double v) {
  if constexpr (std::is_integral_v<T>) {
    if (std::isnan(v)) return T(0);
    v = std::nearbyint(v);
    if (v <= static_cast<double>(std::numeric_limits<T>::lowest())) return std::numeric_limits<T>::lowest();
    if (v >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
    return static_cast<T>(v);
  } else if constexpr (std::is_same_v<T, double>) {
    return v;
  } else {
    return T(static_cast<float>(v));
  }
}

// Applies every non-identity axis in turn (downsampling axes first, which
// keeps the intermediate buffers small).
Status run_resize(KernelContext& ctx, const Tensor& x, const std::vector<AxisTaps>& taps, const ResizeAttrs& at, Tensor& y) {
  const int64_t rank = static_cast<int64_t>(x.rank());
  std::vector<int64_t> order;
  for (int64_t d = 0; d < rank; ++d)
    if (!taps[d].identity) order.push_back(d);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    return static_cast<double>(taps[a].out_len) / std::max<int64_t>(1, x.dim(a)) <
           static_cast<double>(taps[b].out_len) / std::max<int64_t>(1, x.dim(b));
  });
  if (y.size() == 0) return Status::Ok();
  auto run_passes = [&](auto& buf, auto pass) {
    using C = typename std::decay_t<decltype(buf)>::value_type;
    Shape cur = x.shape();
    std::vector<C> next;
    for (int64_t a : order) {
      int64_t outer = 1, inner = 1;
      for (int64_t d = 0; d < a; ++d) outer *= cur[d];
      for (int64_t d = a + 1; d < rank; ++d) inner *= cur[d];
      next.assign(static_cast<size_t>(outer * taps[a].out_len * inner), C());
      pass(buf.data(), next.data(), outer, cur[a], inner, taps[a]);
      cur[a] = taps[a].out_len;
      buf.swap(next);
    }
  };
  if (at.mode == Mode::kNearest) {
    return dispatch_all(x.dtype(), [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      if constexpr (std::is_same_v<T, bool>) {
        // Stored as bytes; gather them as uint8.
        std::vector<uint8_t> buf(x.data<uint8_t>(), x.data<uint8_t>() + x.size());
        const uint8_t ex = at.extrapolation != 0;
        run_passes(buf, [&](const uint8_t* s, uint8_t* d, int64_t o, int64_t l, int64_t i, const AxisTaps& t) {
          gather_axis<uint8_t>(ctx, s, d, o, l, i, t, ex);
        });
        std::copy(buf.begin(), buf.end(), y.data<uint8_t>());
      } else {
        std::vector<T> buf(x.data<T>(), x.data<T>() + x.size());
        T ex{};
        if constexpr (!std::is_same_v<T, std::string>) ex = cast_result<T>(at.extrapolation);
        run_passes(buf, [&](const T* s, T* d, int64_t o, int64_t l, int64_t i, const AxisTaps& t) {
          gather_axis<T>(ctx, s, d, o, l, i, t, ex);
        });
        std::copy(buf.begin(), buf.end(), y.data<T>());
      }
      return Status::Ok();
    });
  }
  return dispatch_numeric(x.dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    using C = std::conditional_t<std::is_same_v<T, double>, double, float>;
    std::vector<C> buf(static_cast<size_t>(x.size()));
    const T* src = x.data<T>();
    for (int64_t i = 0; i < x.size(); ++i) {
      if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) buf[i] = static_cast<float>(src[i]);
      else buf[i] = static_cast<C>(src[i]);
    }
    run_passes(buf, [&](const C* s, C* d, int64_t o, int64_t l, int64_t i, const AxisTaps& t) {
      resample_axis<C>(ctx, s, d, o, l, i, t, at.extrapolation);
    });
    T* dst = y.data<T>();
    for (int64_t i = 0; i < y.size(); ++i) dst[i] = cast_result<T>(buf[i]);
    return Status::Ok();
  });
}

Result<ResizeAttrs> parse_resize_attrs(const KernelContext& ctx, bool upsample) {
  const auto& node = ctx.node();
  ResizeAttrs at;
  std::string mode = node.attr_string("mode", "nearest");
  if (mode == "nearest") at.mode = Mode::kNearest;
  else if (mode == "linear" || mode == "bilinear" || mode == "trilinear") at.mode = Mode::kLinear;
  else if (mode == "cubic" && !upsample) at.mode = Mode::kCubic;
  else return ctx.invalid("unsupported mode '" + mode + "'");
  if (upsample || ctx.opset() < 11) {
    // Upsample and Resize-10: x_original = x_resized / scale, nearest rounds down.
    at.coord = Coord::kAsymmetric;
    at.nearest = NearestMode::kFloor;
    return at;
  }
  std::string c = node.attr_string("coordinate_transformation_mode", "half_pixel");
  if (c == "half_pixel") at.coord = Coord::kHalfPixel;
  else if (c == "half_pixel_symmetric") at.coord = Coord::kHalfPixelSymmetric;
  else if (c == "pytorch_half_pixel") at.coord = Coord::kPytorchHalfPixel;
  else if (c == "align_corners") at.coord = Coord::kAlignCorners;
  else if (c == "asymmetric") at.coord = Coord::kAsymmetric;
  else if (c == "tf_half_pixel_for_nn") at.coord = Coord::kTfHalfPixelForNn;
  else if (c == "tf_crop_and_resize") at.coord = Coord::kTfCropAndResize;
  else return ctx.invalid("unsupported coordinate_transformation_mode '" + c + "'");
  std::string nm = node.attr_string("nearest_mode", "round_prefer_floor");
  if (nm == "round_prefer_floor") at.nearest = NearestMode::kRoundPreferFloor;
  else if (nm == "round_prefer_ceil") at.nearest = NearestMode::kRoundPreferCeil;
  else if (nm == "floor") at.nearest = NearestMode::kFloor;
  else if (nm == "ceil") at.nearest = NearestMode::kCeil;
  else return ctx.invalid("unsupported nearest_mode '" + nm + "'");
  at.cubic_a = node.attr_float("cubic_coeff_a", -0.75f);
  at.exclude_outside = node.attr_int("exclude_outside", 0) != 0;
  at.extrapolation = node.attr_float("extrapolation_value", 0.0f);
  at.antialias = ctx.opset() >= 18 && node.attr_int("antialias", 0) != 0;
  return at;
}

Result<std::vector<double>> read_float_tensor(const Tensor& t, const KernelContext& ctx, const char* what) {
  std::vector<double> v(static_cast<size_t>(t.size()));
  if (t.dtype() == DType::kFloat32) {
    for (int64_t i = 0; i < t.size(); ++i) v[i] = t.data<float>()[i];
  } else if (t.dtype() == DType::kFloat64) {
    for (int64_t i = 0; i < t.size(); ++i) v[i] = t.data<double>()[i];
  } else if (t.dtype() == DType::kFloat16) {
    for (int64_t i = 0; i < t.size(); ++i) v[i] = static_cast<float>(t.data<Float16>()[i]);
  } else {
    return ctx.invalid(std::string(what) + " must be a float tensor, got " + dtype_name(t.dtype()));
  }
  return v;
}

// Shared by Resize and Upsample once scales/sizes/roi are known for every axis.
Status resize_with(KernelContext& ctx, const Tensor& x, const ResizeAttrs& at, std::vector<double> scales, const std::vector<int64_t>* sizes,
                   const std::vector<double>& roi) {
  const int64_t rank = static_cast<int64_t>(x.rank());
  Shape out_shape(static_cast<size_t>(rank));
  std::vector<double> len_resized(static_cast<size_t>(rank));
  for (int64_t d = 0; d < rank; ++d) {
    if (sizes) {
      out_shape[d] = (*sizes)[d];
      len_resized[d] = static_cast<double>(x.dim(d)) * scales[d];
    } else {
      if (!(scales[d] > 0) || !std::isfinite(scales[d])) return ctx.invalid("scales must be positive, got " + std::to_string(scales[d]));
      const double o = std::floor(static_cast<double>(x.dim(d)) * scales[d] + 1e-9);
      if (o > 1e15) return ctx.invalid("output dimension too large");
      out_shape[d] = static_cast<int64_t>(o);
      // The reference interpolates with the un-rounded length.
      len_resized[d] = static_cast<double>(x.dim(d)) * scales[d];
    }
    if (out_shape[d] < 0) return ctx.invalid("sizes must be non-negative");
    if (out_shape[d] > 0 && x.dim(d) == 0) return ctx.invalid("cannot resize an empty dimension to a non-empty one");
  }
  DLRT_ASSIGN_OR_RETURN(auto count, checked_element_count(out_shape));
  (void)count;
  std::vector<AxisTaps> taps;
  for (int64_t d = 0; d < rank; ++d) {
    const double rs = roi.empty() ? 0.0 : roi[d], re = roi.empty() ? 1.0 : roi[rank + d];
    if (x.dim(d) == 0 || out_shape[d] == 0) {
      AxisTaps t;
      t.out_len = out_shape[d];
      t.identity = out_shape[d] == x.dim(d);
      taps.push_back(std::move(t));
      continue;
    }
    taps.push_back(make_taps(at, x.dim(d), out_shape[d], scales[d], len_resized[d], rs, re));
  }
  DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x.dtype(), out_shape));
  Status s = run_resize(ctx, x, taps, at, *y);
  if (!s.ok() && s.code() == StatusCode::kUnsupported) return ctx.unsupported(s.message());
  return s;
}

Status resize_kernel(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
  DLRT_ASSIGN_OR_RETURN(ResizeAttrs at, parse_resize_attrs(ctx, false));
  const auto& node = ctx.node();
  const int64_t rank = static_cast<int64_t>(x->rank());
  if (ctx.opset() < 11) {
    DLRT_ASSIGN_OR_RETURN(const Tensor* st, required_input(ctx, 1));
    DLRT_ASSIGN_OR_RETURN(auto scales, read_float_tensor(*st, ctx, "scales"));
    if (static_cast<int64_t>(scales.size()) != rank) return ctx.invalid("scales must have one value per input dimension");
    return resize_with(ctx, *x, at, scales, nullptr, {});
  }
  // Axes (opset 18): scales/sizes/roi name only these axes; the others keep scale 1.
  std::vector<int64_t> axes;
  if (ctx.opset() >= 18 && node.has_attr("axes")) {
    for (int64_t a : node.attr_ints("axes")) {
      DLRT_ASSIGN_OR_RETURN(int64_t na, normalize_axis(a, rank, ctx));
      if (std::find(axes.begin(), axes.end(), na) != axes.end()) return ctx.invalid("axes has a repeated axis");
      axes.push_back(na);
    }
  } else {
    for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
  }
  const size_t na = axes.size();
  std::vector<double> roi;
  if (const Tensor* rt = ctx.input(1); rt && rt->size() > 0 && at.coord == Coord::kTfCropAndResize) {
    DLRT_ASSIGN_OR_RETURN(auto r, read_float_tensor(*rt, ctx, "roi"));
    if (r.size() != 2 * na) return ctx.invalid("roi must have 2 * " + std::to_string(na) + " values");
    roi.assign(static_cast<size_t>(2 * rank), 0.0);
    for (int64_t d = 0; d < rank; ++d) roi[rank + d] = 1.0;
    for (size_t i = 0; i < na; ++i) {
      roi[axes[i]] = r[i];
      roi[rank + axes[i]] = r[na + i];
    }
  }
  std::vector<double> scales(static_cast<size_t>(rank), 1.0);
  const Tensor* st = ctx.input(2);
  const Tensor* sz = ctx.input(3);
  const bool have_scales = st && st->size() > 0;
  const bool have_sizes = sz && sz->size() > 0;
  if (have_scales == have_sizes) return ctx.invalid("exactly one of scales and sizes must be given");
  if (have_scales) {
    DLRT_ASSIGN_OR_RETURN(auto s, read_float_tensor(*st, ctx, "scales"));
    if (s.size() != na) return ctx.invalid("scales must have " + std::to_string(na) + " values, got " + std::to_string(s.size()));
    for (size_t i = 0; i < na; ++i) scales[axes[i]] = s[i];
    return resize_with(ctx, *x, at, scales, nullptr, roi);
  }
  DLRT_ASSIGN_OR_RETURN(auto s, read_int_tensor(*sz, ctx));
  if (s.size() != na) return ctx.invalid("sizes must have " + std::to_string(na) + " values, got " + std::to_string(s.size()));
  std::vector<int64_t> sizes = x->shape();
  for (size_t i = 0; i < na; ++i) {
    if (s[i] < 0) return ctx.invalid("sizes must be non-negative");
    sizes[axes[i]] = s[i];
  }
  const std::string policy = ctx.opset() >= 18 ? node.attr_string("keep_aspect_ratio_policy", "stretch") : "stretch";
  if (policy != "stretch") {
    if (policy != "not_larger" && policy != "not_smaller") return ctx.invalid("unsupported keep_aspect_ratio_policy '" + policy + "'");
    double scale = policy == "not_larger" ? std::numeric_limits<double>::infinity() : 0.0;
    for (size_t i = 0; i < na; ++i) {
      if (x->dim(axes[i]) == 0) return ctx.invalid("keep_aspect_ratio_policy needs non-empty dimensions");
      const double r = static_cast<double>(s[i]) / static_cast<double>(x->dim(axes[i]));
      scale = policy == "not_larger" ? std::min(scale, r) : std::max(scale, r);
    }
    for (size_t i = 0; i < na; ++i) {
      scales[axes[i]] = scale;
      sizes[axes[i]] = static_cast<int64_t>(std::nearbyint(scale * static_cast<double>(x->dim(axes[i]))));
    }
  } else {
    for (int64_t d = 0; d < rank; ++d)
      scales[d] = x->dim(d) == 0 ? 1.0 : static_cast<double>(sizes[d]) / static_cast<double>(x->dim(d));
  }
  for (auto& v : scales)
    if (v == 0) v = 1.0;  // a zero-length output never evaluates a coordinate
  return resize_with(ctx, *x, at, scales, &sizes, roi);
}

Status upsample_kernel(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
  DLRT_ASSIGN_OR_RETURN(ResizeAttrs at, parse_resize_attrs(ctx, true));
  std::vector<double> scales;
  if (ctx.opset() < 9) {
    for (float f : ctx.node().attr_floats("scales")) scales.push_back(f);
  } else {
    DLRT_ASSIGN_OR_RETURN(const Tensor* st, required_input(ctx, 1));
    DLRT_ASSIGN_OR_RETURN(scales, read_float_tensor(*st, ctx, "scales"));
  }
  if (scales.size() != x->rank()) return ctx.invalid("scales must have one value per input dimension");
  return resize_with(ctx, *x, at, scales, nullptr, {});
}

// ---- GridSample ----

enum class GridPad { kZeros, kBorder, kReflection };

double reflect_coord(double v, double twice_low, double twice_high) {
  if (twice_low == twice_high) return 0;
  const double mn = twice_low / 2, span = (twice_high - twice_low) / 2;
  v = std::fabs(v - mn);
  const double extra = std::fmod(v, span);
  const int64_t flips = static_cast<int64_t>(std::floor(v / span));
  return flips % 2 == 0 ? extra + mn : span - extra + mn;
}

// Applies border/reflection padding to a coordinate along an axis of `len`.
double pad_coord(double v, int64_t len, GridPad pad, bool align) {
  const double hi = static_cast<double>(len - 1);
  if (pad == GridPad::kBorder) return std::clamp(v, 0.0, hi);
  if (pad == GridPad::kReflection) {
    v = align ? reflect_coord(v, 0, 2 * hi) : reflect_coord(v, -1, 2 * static_cast<double>(len) - 1);
    return std::clamp(v, 0.0, hi);
  }
  return v;
}

Status grid_sample_kernel(KernelContext& ctx) {
  DLRT_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
  DLRT_ASSIGN_OR_RETURN(const Tensor* grid, required_input(ctx, 1));
  const auto& node = ctx.node();
  if (x->rank() != 4) return ctx.unsupported("only 4-D input [N, C, H, W] is supported, got " + shape_to_string(x->shape()));
  if (grid->rank() != 4 || grid->dim(0) != x->dim(0) || grid->dim(3) != 2)
    return ctx.invalid("grid must have shape [N, H_out, W_out, 2], got " + shape_to_string(grid->shape()));
  std::string mode = node.attr_string("mode", ctx.opset() >= 20 ? "linear" : "bilinear");
  int imode;
  if (mode == "bilinear" || mode == "linear") imode = 1;
  else if (mode == "nearest") imode = 0;
  else if (mode == "bicubic" || mode == "cubic") imode = 2;
  else return ctx.invalid("unsupported mode '" + mode + "'");
  std::string pm = node.attr_string("padding_mode", "zeros");
  GridPad pad;
  if (pm == "zeros") pad = GridPad::kZeros;
  else if (pm == "border") pad = GridPad::kBorder;
  else if (pm == "reflection") pad = GridPad::kReflection;
  else return ctx.invalid("unsupported padding_mode '" + pm + "'");
  const bool align = node.attr_int("align_corners", 0) != 0;
  const int64_t N = x->dim(0), C = x->dim(1), H = x->dim(2), W = x->dim(3);
  const int64_t Ho = grid->dim(1), Wo = grid->dim(2);
  DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output(0, x->dtype(), {N, C, Ho, Wo}));
  if (y->size() == 0) return Status::Ok();
  DLRT_ASSIGN_OR_RETURN(auto g, read_float_tensor(*grid, ctx, "grid"));
  auto unnorm = [&](double v, int64_t len) {
    return align ? (v + 1) / 2 * static_cast<double>(len - 1) : ((v + 1) * static_cast<double>(len) - 1) / 2;
  };
  Status s = dispatch_float(x->dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    const T* src = x->data<T>();
    T* dst = y->data<T>();
    ctx.pool().parallel_for(N * C, 1, [&](int64_t b, int64_t e) {
      for (int64_t nc = b; nc < e; ++nc) {
        const int64_t n = nc / C;
        const T* img = src + nc * H * W;
        T* out = dst + nc * Ho * Wo;
        // Out-of-range (and NaN) coordinates read as zero padding.
        auto at = [&](double r, double c) -> double {
          if (!(r >= 0 && r < static_cast<double>(H) && c >= 0 && c < static_cast<double>(W))) return 0.0;
          const T& px = img[static_cast<int64_t>(r) * W + static_cast<int64_t>(c)];
          if constexpr (std::is_same_v<T, double>) return px;
          else return static_cast<float>(px);
        };
        for (int64_t p = 0; p < Ho * Wo; ++p) {
          const double gx = g[(n * Ho * Wo + p) * 2], gy = g[(n * Ho * Wo + p) * 2 + 1];
          double ix = unnorm(gx, W), iy = unnorm(gy, H);
          double v = 0;
          if (imode == 2) {
            // Bicubic pads each tap, not the source coordinate.
            const double fx = std::floor(ix), fy = std::floor(iy);
            const double tx = ix - fx, ty = iy - fy;
            double wx[4], wy[4];
            for (int k = 0; k < 4; ++k) {
              wx[k] = cubic_weight(tx - (k - 1), -0.75);
              wy[k] = cubic_weight(ty - (k - 1), -0.75);
            }
            for (int r = 0; r < 4; ++r) {
              double row = 0;
              for (int c = 0; c < 4; ++c) {
                double cx = fx - 1 + c, cy = fy - 1 + r;
                if (pad != GridPad::kZeros) {
                  cx = pad_coord(cx, W, pad, align);
                  cy = pad_coord(cy, H, pad, align);
                }
                row += wx[c] * at(cy, cx);
              }
              v += wy[r] * row;
            }
          } else {
            ix = pad_coord(ix, W, pad, align);
            iy = pad_coord(iy, H, pad, align);
            if (imode == 0) {
              v = at(std::nearbyint(iy), std::nearbyint(ix));
            } else {
              const double x0 = std::floor(ix), y0 = std::floor(iy);
              const double tx = ix - x0, ty = iy - y0;
              v = (1 - ty) * ((1 - tx) * at(y0, x0) + tx * at(y0, x0 + 1)) + ty * ((1 - tx) * at(y0 + 1, x0) + tx * at(y0 + 1, x0 + 1));
            }
          }
          if constexpr (std::is_same_v<T, double>) out[p] = v;
          else out[p] = T(static_cast<float>(v));
        }
      }
    });
    return Status::Ok();
  });
  if (!s.ok() && s.code() == StatusCode::kUnsupported) return ctx.unsupported(s.message());
  return s;
}

}  // namespace

Status register_resize_kernels(KernelRegistry& r) {
  DLRT_RETURN_IF_ERROR(r.add_fn("Resize", resize_kernel, 10, 21));
  DLRT_RETURN_IF_ERROR(r.add_fn("Upsample", upsample_kernel, 7, 9));
  DLRT_RETURN_IF_ERROR(r.add_fn("GridSample", grid_sample_kernel, 16, 21));
  return Status::Ok();
}

}  // namespace dlrt::cpu
