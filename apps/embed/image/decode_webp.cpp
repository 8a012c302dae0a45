// WebP through libwebp, as PIL reads it: a still image straight to RGB (the
// alpha convert("RGB") drops is not even decoded), an animation through the
// animation decoder (PIL's path for every WebP): its first frame on the
// canvas, RGBA, alpha dropped. The size is checked before libwebp allocates.
#include <webp/decode.h>
#include <webp/demux.h>

#include <cstring>
#include <memory>

#include "embed/image/codecs.h"

namespace dlrt::embed::image {
namespace {

// The EXIF chunk's data, found by walking the RIFF chunks; empty if none.
std::span<const uint8_t> find_exif(std::span<const uint8_t> b) {
  size_t at = 12;
  while (at + 8 <= b.size()) {
    const uint64_t len = b[at + 4] | (b[at + 5] << 8) | (b[at + 6] << 16) | (uint64_t{b[at + 7]} << 24);
    if (len > b.size() - at - 8) break;
    if (std::memcmp(&b[at], "EXIF", 4) == 0) return b.subspan(at + 8, len);
    at += 8 + len + (len & 1);  // chunks are padded to even sizes
  }
  return {};
}

struct AnimDeleter {
  void operator()(WebPAnimDecoder* d) const { WebPAnimDecoderDelete(d); }
};

}  // namespace

Result<Decoded> decode_webp(std::span<const uint8_t> bytes, const DecodeLimits& limits) {
  WebPBitstreamFeatures features;
  const VP8StatusCode code = WebPGetFeatures(bytes.data(), bytes.size(), &features);
  if (code == VP8_STATUS_NOT_ENOUGH_DATA) return InvalidArgument("malformed WebP image: the file is truncated");
  if (code != VP8_STATUS_OK)
    return InvalidArgument("malformed WebP image: its header does not parse (libwebp status " +
                           std::to_string(static_cast<int>(code)) + ")");
  DLRT_RETURN_IF_ERROR(
      check_size(Format::kWebp, static_cast<uint64_t>(features.width), static_cast<uint64_t>(features.height), limits));
  Decoded out;
  if (!features.has_animation) {
    DLRT_RETURN_IF_ERROR(allocate_rgb(out.image, features.width, features.height));
    const size_t stride = static_cast<size_t>(features.width) * 3;
    if (!WebPDecodeRGBInto(bytes.data(), bytes.size(), out.image.rgb.data(), out.image.rgb.size(),
                           static_cast<int>(stride)))
      return InvalidArgument("malformed WebP image: its pixels do not decode (truncated or corrupt)");
    out.orientation = exif_orientation(find_exif(bytes));
    return out;
  }
  WebPAnimDecoderOptions options;
  if (!WebPAnimDecoderOptionsInit(&options)) return Internal("libwebp: the animation decoder's version differs");
  options.color_mode = MODE_RGBA;
  options.use_threads = 0;
  const WebPData data{bytes.data(), bytes.size()};
  std::unique_ptr<WebPAnimDecoder, AnimDeleter> dec(WebPAnimDecoderNew(&data, &options));
  if (!dec) return InvalidArgument("malformed WebP image: libwebp cannot read its chunks");
  WebPAnimInfo info;
  if (!WebPAnimDecoderGetInfo(dec.get(), &info)) return InvalidArgument("malformed WebP image: no canvas");
  DLRT_RETURN_IF_ERROR(check_size(Format::kWebp, info.canvas_width, info.canvas_height, limits));
  uint8_t* rgba = nullptr;
  int timestamp = 0;
  if (!WebPAnimDecoderGetNext(dec.get(), &rgba, &timestamp))
    return InvalidArgument("malformed WebP image: its first frame does not decode (truncated or corrupt)");
  const int w = static_cast<int>(info.canvas_width);
  const int h = static_cast<int>(info.canvas_height);
  DLRT_RETURN_IF_ERROR(allocate_rgb(out.image, w, h));
  const size_t n = static_cast<size_t>(w) * h;
  for (size_t i = 0; i < n; ++i) std::memcpy(&out.image.rgb[3 * i], rgba + 4 * i, 3);
  out.orientation = exif_orientation(find_exif(bytes));
  return out;
}

}  // namespace dlrt::embed::image
