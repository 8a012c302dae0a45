// Siglip2ImageProcessor's patches (patches.h).
#include "embed/image/patches.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <new>
#include <string>

namespace dlrt::embed::image {

void patch_grid_size(int height, int width, int patch, int max_patches, int& out_height, int& out_width) {
  const auto scaled = [patch](double scale, int size) {
    const double s = std::ceil(static_cast<double>(size) * scale / patch) * patch;
    return static_cast<int>(std::max<double>(patch, s));
  };
  constexpr double kEps = 1e-5;
  double lo = kEps / 10;
  double hi = 100.0;
  while (hi - lo >= kEps) {
    const double scale = (lo + hi) / 2;
    const double n =
        (scaled(scale, height) / static_cast<double>(patch)) * (scaled(scale, width) / static_cast<double>(patch));
    (n <= max_patches ? lo : hi) = scale;
  }
  out_height = scaled(lo, height);
  out_width = scaled(lo, width);
}

namespace {

// One image's patches into the batch's row `index`.
Status one_image(const Image& image, const ProcessorConfig& c, size_t index, PatchBatch& out) {
  const int p = c.patch_size;
  Image resized;
  const Image* img = &image;
  if (c.do_resize) {
    int h = 0, w = 0;
    patch_grid_size(image.height, image.width, p, c.max_num_patches, h, w);
    DLRT_ASSIGN_OR_RETURN(resized, resize_as(image, w, h, c));
    img = &resized;
  }
  const int rows = img->height / p;
  const int cols = img->width / p;
  if (img->height % p || img->width % p || int64_t{rows} * cols > c.max_num_patches || rows == 0 || cols == 0)
    return InvalidArgument("an image of " + std::to_string(img->width) + " x " + std::to_string(img->height) +
                           " is not at most " + std::to_string(c.max_num_patches) + " whole patches of " +
                           std::to_string(p) + " x " + std::to_string(p) + " (the config has do_resize false)");
  const ValueTable lut = value_table(c);
  const size_t dim = static_cast<size_t>(out.patch_dim);
  float* base = out.pixels.data() + index * out.patches * dim;
  for (int y = 0; y < img->height; ++y) {
    const uint8_t* line = &img->rgb[static_cast<size_t>(y) * img->width * 3];
    for (int x = 0; x < img->width; ++x) {
      float* dst =
          base + (static_cast<size_t>(y / p) * cols + x / p) * dim + (static_cast<size_t>(y % p) * p + x % p) * 3;
      for (int ch = 0; ch < 3; ++ch) dst[ch] = lut[ch][line[x * 3 + ch]];
    }
  }
  std::fill_n(out.mask.begin() + static_cast<ptrdiff_t>(index * out.patches), static_cast<size_t>(rows) * cols, 1);
  out.shapes[index * 2] = rows;
  out.shapes[index * 2 + 1] = cols;
  return Status::Ok();
}

}  // namespace

Result<PatchBatch> preprocess_patches(std::span<const Image> images, const ProcessorConfig& c) {
  if (c.max_num_patches <= 0 || c.patch_size <= 0) return InvalidArgument("not a Siglip2ImageProcessor config");
  PatchBatch out;
  out.batch = static_cast<int>(images.size());
  out.patches = c.max_num_patches;
  out.patch_dim = c.patch_size * c.patch_size * 3;
  try {
    out.pixels.assign(images.size() * out.patches * static_cast<size_t>(out.patch_dim), 0.0f);
    out.mask.assign(images.size() * out.patches, 0);
    out.shapes.assign(images.size() * 2, 0);
  } catch (const std::bad_alloc&) {
    return Status(StatusCode::kOutOfMemory, "out of memory for a batch's image patches");
  }
  for (size_t i = 0; i < images.size(); ++i) {
    const Image& im = images[i];
    if (im.width <= 0 || im.height <= 0 || im.rgb.size() != size_t{3} * im.width * im.height)
      return InvalidArgument("an empty or inconsistent image");
    DLRT_RETURN_IF_ERROR(one_image(im, c, i, out));
  }
  return out;
}

}  // namespace dlrt::embed::image
