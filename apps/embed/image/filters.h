// PIL's resampling filters (Pillow's Resample.c), which torchvision's
// antialiased resize of uint8 tensors shares for bilinear, bicubic (a = -0.5)
// and Lanczos (a = 3): the kernels and their supports, in input pixels at scale 1.
//
// Thread-safety: pure functions.
#pragma once

#include <cmath>

#include "embed/image/preprocess.h"

namespace dlrt::embed::image::filters {

inline double box(double x) { return (x > -0.5 && x <= 0.5) ? 1.0 : 0.0; }
inline double bilinear(double x) {
  if (x < 0.0) x = -x;
  return x < 1.0 ? 1.0 - x : 0.0;
}
inline double hamming(double x) {
  if (x < 0.0) x = -x;
  if (x == 0.0) return 1.0;
  if (x >= 1.0) return 0.0;
  x = x * M_PI;
  return std::sin(x) / x * (0.54f + 0.46f * std::cos(x));  // float constants, as Pillow has them
}
inline double bicubic(double x) {
  constexpr double a = -0.5;
  if (x < 0.0) x = -x;
  if (x < 1.0) return ((a + 2.0) * x - (a + 3.0)) * x * x + 1;
  if (x < 2.0) return (((x - 5) * x + 8) * x - 4) * a;
  return 0.0;
}
inline double sinc(double x) {
  if (x == 0.0) return 1.0;
  x = x * M_PI;
  return std::sin(x) / x;
}
inline double lanczos(double x) { return (-3.0 <= x && x < 3.0) ? sinc(x) * sinc(x / 3) : 0.0; }

struct Filter {
  double (*f)(double) = nullptr;
  double support = 0.0;
};

// The filter of a PIL resample number; f is null for kNearest.
inline Filter of(Resample r) {
  switch (r) {
    case Resample::kBox:
      return {box, 0.5};
    case Resample::kBilinear:
      return {bilinear, 1.0};
    case Resample::kHamming:
      return {hamming, 1.0};
    case Resample::kBicubic:
      return {bicubic, 2.0};
    case Resample::kLanczos:
      return {lanczos, 3.0};
    case Resample::kNearest:
      break;
  }
  return {};
}

}  // namespace dlrt::embed::image::filters
