// The EXIF orientation: the one tag dlrt reads of an EXIF block (a TIFF
// structure: byte order, IFD0 offset, 12-byte entries), and the turn PIL's
// ImageOps.exif_transpose makes for it.
#include <cstring>
#include <new>

#include "embed/image/codecs.h"

namespace dlrt::embed::image {

int exif_orientation(std::span<const uint8_t> exif) {
  if (exif.size() >= 6 && std::memcmp(exif.data(), "Exif\0\0", 6) == 0) exif = exif.subspan(6);
  if (exif.size() < 8) return 1;
  bool little;
  if (exif[0] == 'I' && exif[1] == 'I') {
    little = true;
  } else if (exif[0] == 'M' && exif[1] == 'M') {
    little = false;
  } else {
    return 1;
  }
  const auto u16 = [&](size_t at) -> uint32_t {
    return little ? exif[at] | (exif[at + 1] << 8) : (exif[at] << 8) | exif[at + 1];
  };
  const auto u32 = [&](size_t at) -> uint64_t {
    return little ? u16(at) | (uint64_t{u16(at + 2)} << 16) : (uint64_t{u16(at)} << 16) | u16(at + 2);
  };
  if (u16(2) != 42) return 1;
  const uint64_t ifd = u32(4);
  if (ifd + 2 > exif.size()) return 1;
  const uint64_t entries = u16(ifd);
  for (uint64_t i = 0; i < entries; ++i) {
    const uint64_t at = ifd + 2 + 12 * i;
    if (at + 12 > exif.size()) return 1;
    if (u16(at) != 0x0112) continue;
    const uint32_t type = u16(at + 2);
    // SHORT as the standard says; LONG as some writers store it.
    if (type == 3) return static_cast<int>(u16(at + 8));
    if (type == 4) return u32(at + 8) <= 8 ? static_cast<int>(u32(at + 8)) : 1;
    return 1;
  }
  return 1;
}

Status apply_orientation(Image& image, int orientation) {
  if (orientation < 2 || orientation > 8) return Status::Ok();
  const int w = image.width;
  const int h = image.height;
  // 5 to 8 swap the sides.
  const bool swap = orientation >= 5;
  const int ow = swap ? h : w;
  const int oh = swap ? w : h;
  Image out;
  DLRT_RETURN_IF_ERROR(allocate_rgb(out, ow, oh));
  for (int y = 0; y < oh; ++y) {
    for (int x = 0; x < ow; ++x) {
      // The source pixel of output (x, y).
      int sx = 0;
      int sy = 0;
      switch (orientation) {
        case 2:
          sx = w - 1 - x;
          sy = y;
          break;  // FLIP_LEFT_RIGHT
        case 3:
          sx = w - 1 - x;
          sy = h - 1 - y;
          break;  // ROTATE_180
        case 4:
          sx = x;
          sy = h - 1 - y;
          break;  // FLIP_TOP_BOTTOM
        case 5:
          sx = y;
          sy = x;
          break;  // TRANSPOSE
        case 6:
          sx = y;
          sy = h - 1 - x;
          break;  // ROTATE_270 (90 clockwise)
        case 7:
          sx = w - 1 - y;
          sy = h - 1 - x;
          break;  // TRANSVERSE
        case 8:
          sx = w - 1 - y;
          sy = x;
          break;  // ROTATE_90 (counter-clockwise)
        default:
          break;
      }
      const size_t from = (static_cast<size_t>(sy) * w + sx) * 3;
      const size_t to = (static_cast<size_t>(y) * ow + x) * 3;
      std::memcpy(&out.rgb[to], &image.rgb[from], 3);
    }
  }
  image = std::move(out);
  return Status::Ok();
}

}  // namespace dlrt::embed::image
