// Resize (opsets 10 and later; its last definition is 19), Upsample (7..9) and GridSample (16+).
//
// Resize is separable: for every resized axis we precompute, per output coordinate, the input indices and weights it
// reads (nearest: one tap; linear: 2; cubic: 4; antialiased: a footprint stretched by 1/scale), then apply the axes
// one pass at a time over an [outer, length, inner] view (nearest on two adjacent axes: one pass, resize_nearest.h).
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "backends/cpu/kernel.h"
#include "backends/cpu/kernel_families.h"
#include "backends/cpu/kernel_util.h"
#include "backends/cpu/ops/resize_nearest.h"

namespace dlrt::cpu {
namespace {

enum class ResizeMode { kNearest, kLinear, kCubic };
enum class Coord { kHalfPixel, kHalfPixelSymmetric, kPytorchHalfPixel, kAlignCorners, kAsymmetric, kTfHalfPixelForNn, kTfCropAndResize };
enum class NearestMode { kRoundPreferFloor, kRoundPreferCeil, kFloor, kCeil };

struct ResizeAttrs {
  ResizeMode mode = ResizeMode::kNearest;
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

// The number of taps per output coordinate for this mode and scale.
int64_t tap_start(const ResizeAttrs& at, double filter_scale) {
  if (at.mode == ResizeMode::kNearest) return 0;
  return static_cast<int64_t>(std::floor((at.mode == ResizeMode::kLinear ? -1 : -2) / filter_scale) + 1);
}

// Fills `t` (reusing its buffers) with the taps of one axis.
void make_taps(const ResizeAttrs& at, int64_t in_len, int64_t out_len, double scale, double len_resized, double roi_start,
               double roi_end, AxisTaps& t) {
  t.out_len = out_len;
  t.identity = false;
  const double len_in_d = static_cast<double>(in_len);
  // Antialiasing only widens the filter when downsampling.
  const double filter_scale = (at.antialias && at.mode != ResizeMode::kNearest && scale < 1) ? scale : 1.0;
  const int64_t start = tap_start(at, filter_scale);
  t.ntaps = at.mode == ResizeMode::kNearest ? 1 : 2 - 2 * start;
  t.index.assign(static_cast<size_t>(out_len * t.ntaps), 0);
  t.weight.assign(static_cast<size_t>(out_len * t.ntaps), 0.0);
  t.outside.assign(static_cast<size_t>(out_len), 0);
  for (int64_t j = 0; j < out_len; ++j) {
    // tf_crop_and_resize divides by the integer output length, the others by
    // input * scale; half_pixel_symmetric's adjustment is the integer output
    // length over input * scale.
    const double lr = at.coord == Coord::kTfCropAndResize || at.coord == Coord::kHalfPixelSymmetric
                          ? static_cast<double>(out_len)
                          : len_resized;
    double x = transform(at.coord, static_cast<double>(j), scale, lr, in_len, roi_start, roi_end);
    if (at.coord == Coord::kTfCropAndResize && !(x >= 0 && x <= len_in_d - 1)) t.outside[j] = 1;
    if (!std::isfinite(x)) x = 0;
    x = std::clamp(x, -1e12, 1e12);  // keeps the integer conversions below defined
    int64_t* idx = &t.index[j * t.ntaps];
    double* w = &t.weight[j * t.ntaps];
    if (at.mode == ResizeMode::kNearest) {
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
      double wk = at.mode == ResizeMode::kLinear ? std::clamp(1 - std::fabs(dist), 0.0, 1.0) : cubic_weight(dist, at.cubic_a);
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
}

// One pass along `axis`: dst[o, j, i] = sum_k w[j,k] * src[o, idx[j,k], i].
template <typename C>
void resample_axis(KernelContext& ctx, const C* src, C* dst, int64_t outer, int64_t in_len, int64_t inner, const AxisTaps& t,
                   double extrapolation) {
  const int64_t out_len = t.out_len;
  const int64_t grain = std::max<int64_t>(1, 8192 / std::max<int64_t>(1, inner * t.ntaps));
  ctx.pool().parallel_for(outer * out_len, grain, [&](int64_t b, int64_t e) {
    if (inner == 1) {
      // The innermost axis: one output element per (o, j), summed in a register (the same
      // additions, in the same order, as the row loop below).
      for (int64_t u = b; u < e; ++u) {
        const int64_t o = u / out_len, j = u % out_len;
        if (t.outside[j]) {
          dst[u] = static_cast<C>(extrapolation);
          continue;
        }
        const C* base = src + o * in_len;
        const int64_t* idx = &t.index[j * t.ntaps];
        const double* w = &t.weight[j * t.ntaps];
        C acc = C(0);
        for (int64_t k = 0; k < t.ntaps; ++k) {
          const C wk = static_cast<C>(w[k]);
          if (wk != C(0)) acc += wk * base[idx[k]];
        }
        dst[u] = acc;
      }
      return;
    }
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

// Per-thread buffers Resize reuses from call to call: once a thread has run a node's shapes, the run allocates nothing.
struct ResizeWork {
  std::vector<double> scales, roi, len_resized, given;
  std::vector<AxisTaps> taps;  // grows only, so that its buffers are kept
  IntList order, sizes;
};

ResizeWork& resize_work() {
  static thread_local ResizeWork w;
  return w;
}

// Runs `pass` once per non-identity axis in `order`, ping-ponging between two per-thread buffers; the last pass
// writes to `final_dst` when it is given. Returns where the result is.
template <typename C, typename Pass>
const C* run_passes(const C* src, const Shape& in_shape, const IntList& order, const std::vector<AxisTaps>& taps,
                    C* final_dst, Pass pass) {
  static thread_local std::vector<C> bufs[2];
  Shape cur = in_shape;
  const int64_t rank = static_cast<int64_t>(cur.size());
  const C* s = src;
  for (size_t k = 0; k < order.size(); ++k) {
    const int64_t a = order[k];
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < a; ++d) outer *= cur[d];
    for (int64_t d = a + 1; d < rank; ++d) inner *= cur[d];
    C* d = final_dst;
    if (k + 1 < order.size() || !d) {
      std::vector<C>& buf = bufs[k % 2];
      buf.resize(static_cast<size_t>(outer * taps[a].out_len * inner));
      d = buf.data();
    }
    pass(s, d, outer, cur[a], inner, taps[a]);
    cur[a] = taps[a].out_len;
    s = d;
  }
  return s;
}

// Applies every non-identity axis in turn (downsampling axes first, which
// keeps the intermediate buffers small; the innermost first among equals).
Status run_resize(KernelContext& ctx, const Tensor& x, const std::vector<AxisTaps>& taps, const ResizeAttrs& at,
                  IntList& order, Tensor& y) {
  const int64_t rank = static_cast<int64_t>(x.rank());
  order.clear();
  for (int64_t d = 0; d < rank; ++d)
    if (!taps[d].identity) order.push_back(d);
  // Insertion sort by the axis's resize ratio (std::sort would take a temporary buffer from the heap); equal ratios
  // go innermost axis first, so that the one pass that cannot run along contiguous rows works on the smallest tensor.
  auto ratio = [&](int64_t a) { return static_cast<double>(taps[a].out_len) / std::max<int64_t>(1, x.dim(a)); };
  auto before = [&](int64_t a, int64_t b) { return ratio(a) < ratio(b) || (ratio(a) == ratio(b) && a > b); };
  for (size_t i = 1; i < order.size(); ++i)
    for (size_t j = i; j > 0 && before(order[j], order[j - 1]); --j) std::swap(order[j], order[j - 1]);
  if (y.size() == 0) return Status::Ok();
  // Nearest on two adjacent axes and no other, the trailing (unresized) axes folded into the elements: one pass
  // over the same index maps.
  const DType dt = x.dtype();
  const int64_t last = order.empty() ? -1 : *std::max_element(order.begin(), order.end());
  if (at.mode == ResizeMode::kNearest && at.coord != Coord::kTfCropAndResize && last >= 1 &&
      std::all_of(order.begin(), order.end(), [&](int64_t a) { return a >= last - 1; }) &&
      (dt == DType::kBool || dtype_is_float(dt) || dtype_is_int(dt))) {
    int64_t outer = 1, trail = 1;
    for (int64_t d = 0; d < last - 1; ++d) outer *= x.dim(d);
    for (int64_t d = last + 1; d < rank; ++d) trail *= x.dim(d);
    if (nearest_gather_2d(ctx.pool(), x.raw_data(), y.raw_data(), dtype_size(dt) * trail, outer, x.dim(last - 1),
                          x.dim(last), taps[last - 1].index.data(), y.dim(last - 1), taps[last].index.data(), y.dim(last)))
      return Status::Ok();
  }
  if (at.mode == ResizeMode::kNearest) {
    return dispatch_all(x.dtype(), [&](auto tag) -> Status {
      using T = typename decltype(tag)::type;
      // bool is stored as bytes: gather them as uint8.
      using G = std::conditional_t<std::is_same_v<T, bool>, uint8_t, T>;
      G ex{};
      if constexpr (std::is_same_v<T, bool>) ex = at.extrapolation != 0;
      else if constexpr (!std::is_same_v<T, std::string>) ex = cast_result<T>(at.extrapolation);
      G* dst = y.data<G>();
      const G* r = run_passes<G>(x.data<G>(), x.shape(), order, taps, dst,
                                 [&](const G* s, G* d, int64_t o, int64_t l, int64_t i, const AxisTaps& t) {
                                   gather_axis<G>(ctx, s, d, o, l, i, t, ex);
                                 });
      if (r != dst) std::copy(r, r + y.size(), dst);
      return Status::Ok();
    });
  }
  return dispatch_numeric(x.dtype(), [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    using C = std::conditional_t<std::is_same_v<T, double>, double, float>;
    auto pass = [&](const C* s, C* d, int64_t o, int64_t l, int64_t i, const AxisTaps& t) {
      resample_axis<C>(ctx, s, d, o, l, i, t, at.extrapolation);
    };
    if constexpr (std::is_same_v<T, C>) {
      // float / double: straight from the input into the output.
      const C* r = run_passes<C>(x.data<C>(), x.shape(), order, taps, y.data<C>(), pass);
      if (r != y.data<C>()) std::copy(r, r + y.size(), y.data<C>());
    } else {
      static thread_local std::vector<C> in;
      in.resize(static_cast<size_t>(x.size()));
      const T* src = x.data<T>();
      for (int64_t i = 0; i < x.size(); ++i) {
        if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) in[i] = static_cast<float>(src[i]);
        else in[i] = static_cast<C>(src[i]);
      }
      const C* r = run_passes<C>(in.data(), x.shape(), order, taps, nullptr, pass);
      T* dst = y.data<T>();
      for (int64_t i = 0; i < y.size(); ++i) dst[i] = cast_result<T>(r[i]);
    }
    return Status::Ok();
  });
}

Status node_invalid(const ir::Node& node, const std::string& message) {
  return InvalidArgument(node.describe() + ": " + message);
}

Result<ResizeAttrs> parse_resize_attrs(const ir::Node& node, bool upsample) {
  ResizeAttrs at;
  const std::string mode = node.attr_string("mode", "nearest");
  if (mode == "nearest") at.mode = ResizeMode::kNearest;
  else if (mode == "linear" || mode == "bilinear" || mode == "trilinear") at.mode = ResizeMode::kLinear;
  else if (mode == "cubic" && !upsample) at.mode = ResizeMode::kCubic;
  else return node_invalid(node, "unsupported mode '" + mode + "'");
  if (upsample || node.opset < 11) {
    // Upsample and Resize-10: x_original = x_resized / scale, nearest rounds down.
    at.coord = Coord::kAsymmetric;
    at.nearest = NearestMode::kFloor;
    return at;
  }
  const std::string c = node.attr_string("coordinate_transformation_mode", "half_pixel");
  if (c == "half_pixel") at.coord = Coord::kHalfPixel;
  else if (c == "half_pixel_symmetric") at.coord = Coord::kHalfPixelSymmetric;
  else if (c == "pytorch_half_pixel") at.coord = Coord::kPytorchHalfPixel;
  else if (c == "align_corners") at.coord = Coord::kAlignCorners;
  else if (c == "asymmetric") at.coord = Coord::kAsymmetric;
  else if (c == "tf_half_pixel_for_nn") at.coord = Coord::kTfHalfPixelForNn;
  else if (c == "tf_crop_and_resize") at.coord = Coord::kTfCropAndResize;
  else return node_invalid(node, "unsupported coordinate_transformation_mode '" + c + "'");
  const std::string nm = node.attr_string("nearest_mode", "round_prefer_floor");
  if (nm == "round_prefer_floor") at.nearest = NearestMode::kRoundPreferFloor;
  else if (nm == "round_prefer_ceil") at.nearest = NearestMode::kRoundPreferCeil;
  else if (nm == "floor") at.nearest = NearestMode::kFloor;
  else if (nm == "ceil") at.nearest = NearestMode::kCeil;
  else return node_invalid(node, "unsupported nearest_mode '" + nm + "'");
  at.cubic_a = node.attr_float("cubic_coeff_a", -0.75f);
  at.exclude_outside = node.attr_int("exclude_outside", 0) != 0;
  at.extrapolation = node.attr_float("extrapolation_value", 0.0f);
  at.antialias = node.opset >= 18 && node.attr_int("antialias", 0) != 0;
  return at;
}

// Reads a float tensor into `out`, reusing its buffer.
Status read_float_tensor(const Tensor& t, const KernelContext& ctx, const char* what, std::vector<double>& out) {
  out.resize(static_cast<size_t>(t.size()));
  if (t.dtype() == DType::kFloat32) {
    for (int64_t i = 0; i < t.size(); ++i) out[i] = t.data<float>()[i];
  } else if (t.dtype() == DType::kFloat64) {
    for (int64_t i = 0; i < t.size(); ++i) out[i] = t.data<double>()[i];
  } else if (t.dtype() == DType::kFloat16) {
    for (int64_t i = 0; i < t.size(); ++i) out[i] = static_cast<float>(t.data<Float16>()[i]);
  } else {
    return ctx.invalid(std::string(what) + " must be a float tensor, got " + dtype_name(t.dtype()));
  }
  return Status::Ok();
}

// Shared by Resize and Upsample once w.scales (and `sizes`, w.roi) are known for every axis.
Status resize_with(KernelContext& ctx, const Tensor& x, const ResizeAttrs& at, ResizeWork& w, const IntList* sizes) {
  const int64_t rank = static_cast<int64_t>(x.rank());
  Shape out_shape(static_cast<size_t>(rank));
  w.len_resized.resize(static_cast<size_t>(rank));
  for (int64_t d = 0; d < rank; ++d) {
    const double scale = w.scales[d];
    if (sizes) {
      out_shape[d] = (*sizes)[d];
    } else {
      if (!(scale > 0) || !std::isfinite(scale)) return ctx.invalid("scales must be positive, got " + std::to_string(scale));
      const double o = std::floor(static_cast<double>(x.dim(d)) * scale + 1e-9);
      if (o > 1e15) return ctx.invalid("output dimension too large");
      out_shape[d] = static_cast<int64_t>(o);
    }
    // The reference interpolates with the un-rounded length.
    w.len_resized[d] = static_cast<double>(x.dim(d)) * scale;
    if (out_shape[d] < 0) return ctx.invalid("sizes must be non-negative");
    if (out_shape[d] > 0 && x.dim(d) == 0) return ctx.invalid("cannot resize an empty dimension to a non-empty one");
  }
  DLRT_ASSIGN_OR_RETURN(auto count, checked_element_count(out_shape));
  (void)count;
  // The output first: its size is checked against the memory budget before the taps are made.
  DLRT_ASSIGN_OR_RETURN(Tensor * y, ctx.allocate_output_uninitialized(0, x.dtype(), out_shape));
  if (w.taps.size() < static_cast<size_t>(rank)) w.taps.resize(static_cast<size_t>(rank));
  for (int64_t d = 0; d < rank; ++d) {
    const double rs = w.roi.empty() ? 0.0 : w.roi[d], re = w.roi.empty() ? 1.0 : w.roi[rank + d];
    AxisTaps& t = w.taps[d];
    if (x.dim(d) == 0 || out_shape[d] == 0) {
      t.out_len = out_shape[d];
      t.ntaps = 1;
      t.identity = out_shape[d] == x.dim(d);
      continue;
    }
    make_taps(at, x.dim(d), out_shape[d], w.scales[d], w.len_resized[d], rs, re, t);
  }
  Status s = run_resize(ctx, x, w.taps, at, w.order, *y);
  if (!s.ok() && s.code() == StatusCode::kUnsupported) return ctx.unsupported(s.message());
  return s;
}

enum class AspectPolicy { kStretch, kNotLarger, kNotSmaller };

// Resize (10+): the attributes are parsed once, when the session is prepared.
class ResizeKernel final : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> create(const ir::Node& node) {
    auto k = std::make_unique<ResizeKernel>();
    DLRT_ASSIGN_OR_RETURN(k->at_, parse_resize_attrs(node, false));
    k->has_axes_ = node.opset >= 18 && node.has_attr("axes");
    if (k->has_axes_) k->axes_ = ints_attr(node, "axes", 0, 0);
    const std::string policy = node.opset >= 18 ? node.attr_string("keep_aspect_ratio_policy", "stretch") : "stretch";
    if (policy == "stretch") k->policy_ = AspectPolicy::kStretch;
    else if (policy == "not_larger") k->policy_ = AspectPolicy::kNotLarger;
    else if (policy == "not_smaller") k->policy_ = AspectPolicy::kNotSmaller;
    else return node_invalid(node, "unsupported keep_aspect_ratio_policy '" + policy + "'");
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  Status compute(KernelContext& ctx) const override {
    DLRT_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    ResizeWork& w = resize_work();
    w.roi.clear();
    const int64_t rank = static_cast<int64_t>(x->rank());
    if (ctx.opset() < 11) {
      DLRT_ASSIGN_OR_RETURN(const Tensor* st, required_input(ctx, 1));
      DLRT_RETURN_IF_ERROR(read_float_tensor(*st, ctx, "scales", w.scales));
      if (static_cast<int64_t>(w.scales.size()) != rank) return ctx.invalid("scales must have one value per input dimension");
      return resize_with(ctx, *x, at_, w, nullptr);
    }
    // Axes (opset 18): scales/sizes/roi name only these axes; the others keep scale 1.
    IntList axes;
    if (has_axes_) {
      for (int64_t a : axes_) {
        DLRT_ASSIGN_OR_RETURN(int64_t na, normalize_axis(a, rank, ctx));
        if (std::find(axes.begin(), axes.end(), na) != axes.end()) return ctx.invalid("axes has a repeated axis");
        axes.push_back(na);
      }
    } else {
      for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
    }
    const size_t na = axes.size();
    if (const Tensor* rt = ctx.input(1); rt && rt->size() > 0 && at_.coord == Coord::kTfCropAndResize) {
      DLRT_RETURN_IF_ERROR(read_float_tensor(*rt, ctx, "roi", w.given));
      if (w.given.size() != 2 * na) return ctx.invalid("roi must have 2 * " + std::to_string(na) + " values");
      w.roi.assign(static_cast<size_t>(2 * rank), 0.0);
      for (int64_t d = 0; d < rank; ++d) w.roi[rank + d] = 1.0;
      for (size_t i = 0; i < na; ++i) {
        w.roi[axes[i]] = w.given[i];
        w.roi[rank + axes[i]] = w.given[na + i];
      }
    }
    w.scales.assign(static_cast<size_t>(rank), 1.0);
    const Tensor* st = ctx.input(2);
    const Tensor* sz = ctx.input(3);
    const bool have_scales = st && st->size() > 0;
    const bool have_sizes = sz && sz->size() > 0;
    if (have_scales == have_sizes) return ctx.invalid("exactly one of scales and sizes must be given");
    if (have_scales) {
      DLRT_RETURN_IF_ERROR(read_float_tensor(*st, ctx, "scales", w.given));
      if (w.given.size() != na)
        return ctx.invalid("scales must have " + std::to_string(na) + " values, got " + std::to_string(w.given.size()));
      for (size_t i = 0; i < na; ++i) w.scales[axes[i]] = w.given[i];
      return resize_with(ctx, *x, at_, w, nullptr);
    }
    DLRT_ASSIGN_OR_RETURN(IntList s, read_int_tensor(*sz, ctx));
    if (s.size() != na) return ctx.invalid("sizes must have " + std::to_string(na) + " values, got " + std::to_string(s.size()));
    w.sizes = x->shape();
    for (size_t i = 0; i < na; ++i) {
      if (s[i] < 0) return ctx.invalid("sizes must be non-negative");
      w.sizes[axes[i]] = s[i];
    }
    if (policy_ != AspectPolicy::kStretch) {
      const bool not_larger = policy_ == AspectPolicy::kNotLarger;
      double scale = not_larger ? std::numeric_limits<double>::infinity() : 0.0;
      for (size_t i = 0; i < na; ++i) {
        if (x->dim(axes[i]) == 0) return ctx.invalid("keep_aspect_ratio_policy needs non-empty dimensions");
        const double r = static_cast<double>(s[i]) / static_cast<double>(x->dim(axes[i]));
        scale = not_larger ? std::min(scale, r) : std::max(scale, r);
      }
      for (size_t i = 0; i < na; ++i) {
        w.scales[axes[i]] = scale;
        w.sizes[axes[i]] = static_cast<int64_t>(std::nearbyint(scale * static_cast<double>(x->dim(axes[i]))));
      }
    } else {
      for (int64_t d = 0; d < rank; ++d)
        w.scales[d] = x->dim(d) == 0 ? 1.0 : static_cast<double>(w.sizes[d]) / static_cast<double>(x->dim(d));
    }
    for (auto& v : w.scales)
      if (v == 0) v = 1.0;  // a zero-length output never evaluates a coordinate
    return resize_with(ctx, *x, at_, w, &w.sizes);
  }

 private:
  ResizeAttrs at_;
  bool has_axes_ = false;
  IntList axes_;
  AspectPolicy policy_ = AspectPolicy::kStretch;
};

// Upsample (7..9).
class UpsampleKernel final : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> create(const ir::Node& node) {
    auto k = std::make_unique<UpsampleKernel>();
    DLRT_ASSIGN_OR_RETURN(k->at_, parse_resize_attrs(node, true));
    for (float f : node.attr_floats("scales")) k->attr_scales_.push_back(f);
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  Status compute(KernelContext& ctx) const override {
    DLRT_ASSIGN_OR_RETURN(const Tensor* x, required_input(ctx, 0));
    ResizeWork& w = resize_work();
    w.roi.clear();
    if (ctx.opset() < 9) {
      w.scales.assign(attr_scales_.begin(), attr_scales_.end());
    } else {
      DLRT_ASSIGN_OR_RETURN(const Tensor* st, required_input(ctx, 1));
      DLRT_RETURN_IF_ERROR(read_float_tensor(*st, ctx, "scales", w.scales));
    }
    if (w.scales.size() != x->rank()) return ctx.invalid("scales must have one value per input dimension");
    return resize_with(ctx, *x, at_, w, nullptr);
  }

 private:
  ResizeAttrs at_;
  std::vector<double> attr_scales_;
};

// GridSample's padding of out-of-range coordinates.
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
  std::vector<double>& g = resize_work().given;
  DLRT_RETURN_IF_ERROR(read_float_tensor(*grid, ctx, "grid", g));
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
  // Resize's latest definition is opset 19's: every later opset the importer takes keeps it.
  DLRT_RETURN_IF_ERROR(r.add({"Resize", "", 10, 1000, ResizeKernel::create}));
  DLRT_RETURN_IF_ERROR(r.add({"Upsample", "", 7, 9, UpsampleKernel::create}));
  DLRT_RETURN_IF_ERROR(r.add_fn("GridSample", grid_sample_kernel, 16));
  return Status::Ok();
}

}  // namespace dlrt::cpu
