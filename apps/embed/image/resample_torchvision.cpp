// torchvision's resize of a uint8 image tensor on CPU, as transformers'
// torchvision backend calls it (transforms.v2.functional.resize, antialias=True):
// bilinear, bicubic and Lanczos go through torch's native uint8 antialiased
// kernel, nearest through torch's "nearest-exact". The antialiased kernel is
// separable like PIL's and has PIL's filters, windows and weights, but turns
// the weights into int16 with a precision chosen per pass (the most bits that
// keep twice the largest weight under 2^15) instead of PIL's 22 bits, and always
// runs the horizontal pass first. Each pass rounds and clips to 8 bits.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <new>
#include <vector>

#include "embed/image/codecs.h"
#include "embed/image/filters.h"
#include "embed/image/preprocess.h"

namespace dlrt::embed::image {
namespace {

// torch's antialiased bicubic (a = -0.5): PIL's kernel, its outer piece written as torch writes it.
double bicubic(double x) {
  constexpr double a = -0.5;
  x = std::abs(x);
  if (x < 1.0) return ((a + 2) * x - (a + 3)) * x * x + 1;
  if (x < 2.0) return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
  return 0.0;
}

// One pass's taps: per output, the first input index and the count, and ksize int16 weights.
struct Taps {
  int precision = 0;
  int ksize = 0;
  std::vector<int> first;
  std::vector<int> count;
  std::vector<int16_t> k;
};

Taps taps(int in_size, int out_size, const filters::Filter& filter) {
  const double scale = static_cast<double>(in_size) / out_size;
  const double filterscale = std::max(scale, 1.0);
  const double support = filter.support * filterscale;
  const double inv = 1.0 / filterscale;
  Taps t;
  t.ksize = static_cast<int>(std::ceil(support)) * 2 + 1;
  t.first.resize(static_cast<size_t>(out_size));
  t.count.resize(static_cast<size_t>(out_size));
  std::vector<double> w(static_cast<size_t>(out_size) * t.ksize, 0.0);
  double w_max = 0.0;
  for (int i = 0; i < out_size; ++i) {
    const double center = scale * (i + 0.5);
    const int lo = std::max(static_cast<int>(center - support + 0.5), 0);
    const int n = std::min(static_cast<int>(center + support + 0.5), in_size) - lo;
    double* wi = &w[static_cast<size_t>(i) * t.ksize];
    double total = 0.0;
    for (int j = 0; j < n; ++j) total += wi[j] = filter.f((j + lo - center + 0.5) * inv);
    for (int j = 0; j < n; ++j) {
      if (total != 0.0) wi[j] /= total;
      w_max = std::max(w_max, wi[j]);
    }
    t.first[i] = lo;
    t.count[i] = n;
  }
  // The most fraction bits (at most 22) for which twice the largest weight stays under 2^15.
  for (t.precision = 0; t.precision < 22; ++t.precision)
    if (static_cast<int>(0.5 + w_max * (1 << (t.precision + 1))) >= (1 << 15)) break;
  t.k.resize(w.size());
  const double one = static_cast<double>(1 << t.precision);
  for (size_t i = 0; i < w.size(); ++i)
    t.k[i] = static_cast<int16_t>(w[i] < 0 ? static_cast<int>(-0.5 + w[i] * one) : static_cast<int>(0.5 + w[i] * one));
  return t;
}

uint8_t clip8(int32_t sum, int precision) {
  const int32_t v = sum >> precision;
  return static_cast<uint8_t>(std::clamp(v, 0, 255));
}

void horizontal(const Image& in, Image& out, const Taps& t) {
  for (int y = 0; y < out.height; ++y) {
    const uint8_t* line = &in.rgb[static_cast<size_t>(y) * in.width * 3];
    uint8_t* dst = &out.rgb[static_cast<size_t>(y) * out.width * 3];
    for (int x = 0; x < out.width; ++x) {
      const int16_t* k = &t.k[static_cast<size_t>(x) * t.ksize];
      const uint8_t* src = line + static_cast<size_t>(t.first[x]) * 3;
      int32_t ss[3] = {1 << (t.precision - 1), 1 << (t.precision - 1), 1 << (t.precision - 1)};
      for (int j = 0; j < t.count[x]; ++j)
        for (int ch = 0; ch < 3; ++ch) ss[ch] += src[j * 3 + ch] * k[j];
      for (int ch = 0; ch < 3; ++ch) dst[x * 3 + ch] = clip8(ss[ch], t.precision);
    }
  }
}

void vertical(const Image& in, Image& out, const Taps& t) {
  const size_t row = static_cast<size_t>(out.width) * 3;
  for (int y = 0; y < out.height; ++y) {
    const int16_t* k = &t.k[static_cast<size_t>(y) * t.ksize];
    const uint8_t* src = &in.rgb[static_cast<size_t>(t.first[y]) * row];
    uint8_t* dst = &out.rgb[static_cast<size_t>(y) * row];
    for (size_t i = 0; i < row; ++i) {
      int32_t ss = 1 << (t.precision - 1);
      for (int j = 0; j < t.count[y]; ++j) ss += src[j * row + i] * k[j];
      dst[i] = clip8(ss, t.precision);
    }
  }
}

// torch's nearest-exact on a CPU tensor of 3 channels has two kernels with two
// formulas, s = in / out in float: for outputs whose height + width is at most
// 128, input floor((i + 0.5) * s) (the product in double, rounded to float);
// for larger ones, floor(max(s * (i + 0.5) - 0.5, 0) + 0.5) in float, with the
// multiply-add fused as torch's AVX2 and ARM builds compile it. The two differ
// where the product lands within a float's rounding of a whole number.
std::vector<int> nearest_exact(int in_size, int out_size, bool small_output) {
  const float s = static_cast<float>(in_size) / static_cast<float>(out_size);
  std::vector<int> src(static_cast<size_t>(out_size));
  for (int i = 0; i < out_size; ++i) {
    float v = 0;
    if (small_output) {
      v = static_cast<float>((i + 0.5) * static_cast<double>(s));
    } else {
      const float r = std::max(std::fma(s, static_cast<float>(i) + 0.5f, -0.5f), 0.0f);
      v = static_cast<float>(static_cast<double>(r) + 0.5);
    }
    src[i] = std::min(static_cast<int>(std::floor(v)), in_size - 1);
  }
  return src;
}

}  // namespace

Result<Image> resize_torchvision(const Image& image, int width, int height, Resample filter) {
  if (width <= 0 || height <= 0)
    return InvalidArgument("resize to " + std::to_string(width) + " x " + std::to_string(height) +
                           ": sizes must be positive");
  if (filter == Resample::kBox || filter == Resample::kHamming)
    return InvalidArgument("torchvision's resize has no box or Hamming filter");
  if (width == image.width && height == image.height) return image;
  try {
    Image out;
    if (filter == Resample::kNearest) {
      DLRT_RETURN_IF_ERROR(allocate_rgb(out, width, height));
      const bool small_output = int64_t{width} + height <= 128;
      const std::vector<int> xs = nearest_exact(image.width, width, small_output);
      const std::vector<int> ys = nearest_exact(image.height, height, small_output);
      for (int y = 0; y < height; ++y) {
        const uint8_t* src = &image.rgb[static_cast<size_t>(ys[y]) * image.width * 3];
        uint8_t* dst = &out.rgb[static_cast<size_t>(y) * width * 3];
        for (int x = 0; x < width; ++x) std::memcpy(dst + 3 * x, src + 3 * xs[x], 3);
      }
      return out;
    }
    filters::Filter f = filters::of(filter);
    if (filter == Resample::kBicubic) f.f = bicubic;
    Image tmp;
    const Image* src = &image;
    if (width != image.width) {
      DLRT_RETURN_IF_ERROR(allocate_rgb(tmp, width, image.height));
      horizontal(image, tmp, taps(image.width, width, f));
      if (height == image.height) return tmp;
      src = &tmp;
    }
    DLRT_RETURN_IF_ERROR(allocate_rgb(out, width, height));
    vertical(*src, out, taps(image.height, height, f));
    return out;
  } catch (const std::bad_alloc&) {
    return Status(StatusCode::kOutOfMemory,
                  "out of memory resizing an image to " + std::to_string(width) + " x " + std::to_string(height));
  }
}

}  // namespace dlrt::embed::image
