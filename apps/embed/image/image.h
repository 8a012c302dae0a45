// Image decoding for the image model kinds: encoded bytes (JPEG, PNG, WebP,
// GIF) -> an 8-bit RGB image, as transformers' `load_image` gives a processor
// a file or bytes: PIL decodes, `ImageOps.exif_transpose` applies the EXIF
// orientation, then `convert("RGB")` (palette lookup, alpha dropped, CMYK
// inverted through K, 16-bit grey clipped to 255, 16-bit colour's high byte).
// The codecs are Debian's libjpeg-turbo, libpng, libwebp and giflib; dlrt only
// reads the orientation tag of the EXIF block itself (bounded, docs/images.md).
//
// Thread-safety: free functions without shared state; any number of threads
// may decode at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "dlrt/status.h"

namespace dlrt::embed::image {

// 8-bit RGB, rows top to bottom, 3 bytes a pixel, no padding.
struct Image {
  int width = 0;
  int height = 0;
  std::vector<uint8_t> rgb;
};

// What one decode may take (docs/limits.md). The pixel bound is checked on the
// header's dimensions, before any pixel buffer is allocated.
struct DecodeLimits {
  // Pillow refuses images over twice its MAX_IMAGE_PIXELS (89,478,485) as
  // decompression bombs; dlrt refuses at about a third of that, 64 Mi pixels
  // (8192 x 8192): the decoder's buffers stay under 600 MiB whatever the format.
  uint64_t max_pixels = uint64_t{1} << 26;
  // Either side, as the codecs' own limits are 16383 (WebP) and 65535 (JPEG, GIF).
  int max_side = 65535;
  // The encoded bytes (a file or a request's image).
  size_t max_bytes = size_t{64} << 20;
};

enum class Format { kUnknown, kJpeg, kPng, kWebp, kGif };
const char* format_name(Format f);
// The format the leading bytes announce (magic numbers), kUnknown if none.
Format sniff_format(std::span<const uint8_t> bytes);

// Decodes `bytes` into RGB with its EXIF orientation applied. Errors:
// kInvalidArgument for a malformed, truncated or unsupported file and for one
// over `limits` (naming the bound), kOutOfMemory when an allocation fails.
Result<Image> decode(std::span<const uint8_t> bytes, const DecodeLimits& limits = {});

// decode() of a file's contents (a regular file of at most limits.max_bytes).
Result<Image> load_file(const std::string& path, const DecodeLimits& limits = {});

}  // namespace dlrt::embed::image
