// WebP through libwebp's animation decoder, as PIL reads every WebP (lossy,
// lossless, with alpha, animated): the first frame on its canvas, RGBA, whose
// alpha convert("RGB") drops. The canvas size is checked before the decoder
// allocates it.
#include <cstring>
#include <memory>

#include <webp/decode.h>
#include <webp/demux.h>

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
  DLRT_RETURN_IF_ERROR(check_size(Format::kWebp, static_cast<uint64_t>(features.width),
                                  static_cast<uint64_t>(features.height), limits));
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
  Decoded out;
  const int w = static_cast<int>(info.canvas_width);
  const int h = static_cast<int>(info.canvas_height);
  DLRT_RETURN_IF_ERROR(allocate_rgb(out.image, w, h));
  const size_t n = static_cast<size_t>(w) * h;
  for (size_t i = 0; i < n; ++i) std::memcpy(&out.image.rgb[3 * i], rgba + 4 * i, 3);
  out.orientation = exif_orientation(find_exif(bytes));
  return out;
}

}  // namespace dlrt::embed::image
