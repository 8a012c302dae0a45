// libFuzzer harness: bytes -> the image decoder (format sniffing, libjpeg-turbo,
// libpng, libwebp, giflib, the EXIF orientation), then, for what decodes, a
// CLIP preprocessing (resize, crop, normalize). A small pixel limit keeps each
// input fast; the limit's own check is what bombs reach.
#include <cstddef>
#include <cstdint>

#include "embed/image/image.h"
#include "embed/image/preprocess.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace img = dlrt::embed::image;
  img::DecodeLimits limits;
  limits.max_pixels = 1 << 20;
  auto image = img::decode({data, size}, limits);
  if (!image.ok()) return 0;
  img::ProcessorConfig config;
  config.shortest_edge = 16;
  config.do_center_crop = true;
  config.crop_height = config.crop_width = 16;
  auto pv = img::preprocess(*image, config);
  (void)pv;
  return 0;
}
