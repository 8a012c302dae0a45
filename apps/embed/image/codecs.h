// The per-format decoders behind decode() (image.h), each over one Debian
// library, and what they share: the size check made on a header's dimensions
// before any pixel buffer exists, and the EXIF orientation.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "embed/image/image.h"

namespace dlrt::embed::image {

// A decoded image in RGB (PIL's convert("RGB") already applied) and the
// orientation of the EXIF block the file carries (1 if none), which decode() applies.
struct Decoded {
  Image image;
  int orientation = 1;
};

Result<Decoded> decode_jpeg(std::span<const uint8_t> bytes, const DecodeLimits& limits);
Result<Decoded> decode_png(std::span<const uint8_t> bytes, const DecodeLimits& limits);
Result<Decoded> decode_webp(std::span<const uint8_t> bytes, const DecodeLimits& limits);
Result<Decoded> decode_gif(std::span<const uint8_t> bytes, const DecodeLimits& limits);

// Ok when a width x height image of `format` is within `limits`; else
// kInvalidArgument naming the dimensions and the bound.
Status check_size(Format format, uint64_t width, uint64_t height, const DecodeLimits& limits);

// Sizes the RGB buffer of `image` (width x height x 3); a failed allocation is
// a Status, not an exception.
Status allocate_rgb(Image& image, int width, int height);

// The Orientation tag (0x0112) of IFD0 of an EXIF block (a TIFF structure,
// with or without the "Exif\0\0" prefix), 1 when absent or unreadable: only
// the header and IFD0's entry table are read, each offset checked.
int exif_orientation(std::span<const uint8_t> exif);

// `image` turned as PIL's ImageOps.exif_transpose does for `orientation`
// (2: mirror, 3: 180 degrees, 4: flip, 5: transpose, 6: 90 clockwise, 7:
// transverse, 8: 90 counter-clockwise); other values leave it as it is.
Status apply_orientation(Image& image, int orientation);

}  // namespace dlrt::embed::image
