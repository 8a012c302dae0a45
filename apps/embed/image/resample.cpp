// PIL's resampling of 8-bit images (the semantics of Pillow 13's Resample.c):
// separable, horizontal pass then vertical (vertical first when the height
// shrinks by more than twice the width); per output pixel a window of the
// filter's support times the downscale factor, weights normalised to sum 1,
// then turned into 22-bit fixed point and accumulated in int with rounding,
// clipped to 0..255 after each pass. Matching that arithmetic is what makes
// the result equal PIL's byte for byte, not just close.
#include <cmath>
#include <cstring>
#include <new>
#include <vector>

#include "embed/image/codecs.h"
#include "embed/image/filters.h"
#include "embed/image/preprocess.h"

namespace dlrt::embed::image {
namespace {

constexpr int kPrecisionBits = 32 - 8 - 2;

// Per output position: the first input index, the count, and the fixed-point weights.
struct Coeffs {
  int ksize = 0;
  std::vector<int> bounds;  // (first, count) per output
  std::vector<int32_t> k;   // ksize per output
};

Coeffs precompute(int in_size, int out_size, const filters::Filter& filter) {
  // Pillow's box is float (0, in_size); the scale is computed from their difference.
  const float in0 = 0.0f;
  const float in1 = static_cast<float>(in_size);
  const double scale = static_cast<double>(in1 - in0) / out_size;
  const double filterscale = scale < 1.0 ? 1.0 : scale;
  const double support = filter.support * filterscale;
  Coeffs c;
  c.ksize = static_cast<int>(std::ceil(support)) * 2 + 1;
  c.bounds.resize(static_cast<size_t>(out_size) * 2);
  c.k.assign(static_cast<size_t>(out_size) * c.ksize, 0);
  std::vector<double> w(static_cast<size_t>(c.ksize));
  const double inv_filterscale = 1.0 / filterscale;
  for (int xx = 0; xx < out_size; ++xx) {
    const double center = in0 + (xx + 0.5) * scale;
    int xmin = static_cast<int>(center - support + 0.5);
    if (xmin < 0) xmin = 0;
    int xmax = static_cast<int>(center + support + 0.5);
    if (xmax > in_size) xmax = in_size;
    xmax -= xmin;
    double ww = 0.0;
    for (int x = 0; x < xmax; ++x) {
      w[x] = filter.f((x + xmin - center + 0.5) * inv_filterscale);
      ww += w[x];
    }
    int32_t* k = &c.k[static_cast<size_t>(xx) * c.ksize];
    for (int x = 0; x < xmax; ++x) {
      const double v = ww != 0.0 ? w[x] / ww : w[x];
      k[x] = static_cast<int32_t>(v < 0 ? -0.5 + v * (1 << kPrecisionBits) : 0.5 + v * (1 << kPrecisionBits));
    }
    c.bounds[2 * xx] = xmin;
    c.bounds[2 * xx + 1] = xmax;
  }
  return c;
}

uint8_t clip8(int ss) {
  const int v = ss >> kPrecisionBits;
  return static_cast<uint8_t>(v <= 0 ? 0 : v >= 255 ? 255 : v);
}

// Rows [y0, y0 + out.height) of `in`, resampled along x into `out`.
void horizontal(const Image& in, int y0, Image& out, const Coeffs& c) {
  for (int yy = 0; yy < out.height; ++yy) {
    const uint8_t* line = &in.rgb[static_cast<size_t>(yy + y0) * in.width * 3];
    uint8_t* dst = &out.rgb[static_cast<size_t>(yy) * out.width * 3];
    for (int xx = 0; xx < out.width; ++xx) {
      const int xmin = c.bounds[2 * xx];
      const int xmax = c.bounds[2 * xx + 1];
      const int32_t* k = &c.k[static_cast<size_t>(xx) * c.ksize];
      int ss[3] = {1 << (kPrecisionBits - 1), 1 << (kPrecisionBits - 1), 1 << (kPrecisionBits - 1)};
      for (int x = 0; x < xmax; ++x)
        for (int ch = 0; ch < 3; ++ch) ss[ch] += line[(x + xmin) * 3 + ch] * k[x];
      for (int ch = 0; ch < 3; ++ch) dst[xx * 3 + ch] = clip8(ss[ch]);
    }
  }
}

void vertical(const Image& in, Image& out, const Coeffs& c, int shift) {
  const size_t row = static_cast<size_t>(out.width) * 3;
  for (int yy = 0; yy < out.height; ++yy) {
    const int ymin = c.bounds[2 * yy] - shift;
    const int ymax = c.bounds[2 * yy + 1];
    const int32_t* k = &c.k[static_cast<size_t>(yy) * c.ksize];
    uint8_t* dst = &out.rgb[yy * row];
    for (size_t i = 0; i < row; ++i) {
      int ss = 1 << (kPrecisionBits - 1);
      for (int y = 0; y < ymax; ++y) ss += in.rgb[(y + ymin) * row + i] * k[y];
      dst[i] = clip8(ss);
    }
  }
}

// PIL's nearest resize (an affine scale: ImagingScaleAffine): the source of
// output x is int(0.5 a + x a), a = in / out, accumulated as PIL adds it; a
// source past the edge leaves the pixel 0.
Status nearest(const Image& in, Image& out) {
  const double ax = static_cast<double>(static_cast<float>(in.width)) / out.width;
  const double ay = static_cast<double>(static_cast<float>(in.height)) / out.height;
  const auto coord = [](double v) { return v < 0.0 ? -1 : static_cast<int>(v); };
  std::vector<int> xin(static_cast<size_t>(out.width));
  double xo = 0.0 + ax * 0.5;
  for (int x = 0; x < out.width; ++x, xo += ax) xin[x] = coord(xo);
  double yo = 0.0 + ay * 0.5;
  for (int y = 0; y < out.height; ++y, yo += ay) {
    const int yi = coord(yo);
    if (yi < 0 || yi >= in.height) continue;
    const uint8_t* src = &in.rgb[static_cast<size_t>(yi) * in.width * 3];
    uint8_t* dst = &out.rgb[static_cast<size_t>(y) * out.width * 3];
    for (int x = 0; x < out.width; ++x)
      if (xin[x] >= 0 && xin[x] < in.width) std::memcpy(dst + 3 * x, src + 3 * xin[x], 3);
  }
  return Status::Ok();
}

}  // namespace

Result<Image> resize(const Image& image, int width, int height, Resample filter) {
  if (width <= 0 || height <= 0)
    return InvalidArgument("resize to " + std::to_string(width) + " x " + std::to_string(height) +
                           ": sizes must be positive");
  const filters::Filter f = filters::of(filter);
  if (width == image.width && height == image.height) return image;
  try {
    if (filter == Resample::kNearest) {
      Image out;
      DLRT_RETURN_IF_ERROR(allocate_rgb(out, width, height));
      DLRT_RETURN_IF_ERROR(nearest(image, out));
      return out;
    }
    const Coeffs cv = precompute(image.height, height, f);
    // Pillow 13 runs the vertical pass first when the height shrinks by more
    // than twice the width does; the clip to 8 bits between passes makes the
    // order visible (a level here and there), so it is followed.
    if (height < image.height && width != image.width &&
        image.height - height > 2 * (static_cast<int64_t>(image.width) - width)) {
      Image tmp;
      DLRT_RETURN_IF_ERROR(allocate_rgb(tmp, image.width, height));
      vertical(image, tmp, cv, 0);
      Image out;
      DLRT_RETURN_IF_ERROR(allocate_rgb(out, width, height));
      horizontal(tmp, 0, out, precompute(image.width, width, f));
      return out;
    }
    const int first = cv.bounds[0];
    const int last = cv.bounds[2 * (height - 1)] + cv.bounds[2 * (height - 1) + 1];
    Image tmp;
    const Image* src = &image;
    int shift = 0;
    if (width != image.width) {
      const Coeffs ch = precompute(image.width, width, f);
      DLRT_RETURN_IF_ERROR(allocate_rgb(tmp, width, last - first));
      horizontal(image, first, tmp, ch);
      src = &tmp;
      shift = first;
    }
    if (height == image.height) return tmp;
    Image out;
    DLRT_RETURN_IF_ERROR(allocate_rgb(out, width, height));
    vertical(*src, out, cv, shift);
    return out;
  } catch (const std::bad_alloc&) {
    return Status(StatusCode::kOutOfMemory,
                  "out of memory resizing an image to " + std::to_string(width) + " x " + std::to_string(height));
  }
}

}  // namespace dlrt::embed::image
