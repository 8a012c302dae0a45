// decode(): the format from the magic bytes, its decoder, then the EXIF
// orientation, as transformers' load_image (PIL.Image.open, exif_transpose,
// convert("RGB")) treats a file.
#include <cstring>
#include <new>

#include "embed/image/codecs.h"
#include "embed/image/image.h"
#include "embed/tokenizer/file_util.h"

namespace dlrt::embed::image {

const char* format_name(Format f) {
  switch (f) {
    case Format::kJpeg:
      return "JPEG";
    case Format::kPng:
      return "PNG";
    case Format::kWebp:
      return "WebP";
    case Format::kGif:
      return "GIF";
    case Format::kUnknown:
      break;
  }
  return "unknown";
}

Format sniff_format(std::span<const uint8_t> b) {
  const auto starts = [&](const char* magic, size_t at = 0) {
    const size_t n = std::strlen(magic);
    return b.size() >= at + n && std::memcmp(b.data() + at, magic, n) == 0;
  };
  if (b.size() >= 3 && b[0] == 0xFF && b[1] == 0xD8 && b[2] == 0xFF) return Format::kJpeg;
  if (starts("\x89PNG\r\n\x1a\n")) return Format::kPng;
  if (starts("RIFF") && starts("WEBP", 8)) return Format::kWebp;
  if (starts("GIF87a") || starts("GIF89a")) return Format::kGif;
  return Format::kUnknown;
}

Status check_size(Format format, uint64_t width, uint64_t height, const DecodeLimits& limits) {
  const std::string dims = std::to_string(width) + " x " + std::to_string(height);
  if (width == 0 || height == 0)
    return InvalidArgument(std::string("malformed ") + format_name(format) + " image: its size is " + dims);
  const auto max_side = static_cast<uint64_t>(limits.max_side);
  if (width > max_side || height > max_side)
    return InvalidArgument(std::string(format_name(format)) + " image of " + dims + " pixels: a side over " +
                           std::to_string(max_side) + " pixels is refused (docs/limits.md)");
  if (width * height > limits.max_pixels)
    return InvalidArgument(std::string(format_name(format)) + " image of " + dims + " = " +
                           std::to_string(width * height) + " pixels, more than the " +
                           std::to_string(limits.max_pixels) +
                           " dlrt decodes (a decompression bomb or an oversized image; docs/limits.md)");
  return Status::Ok();
}

Status allocate_rgb(Image& image, int width, int height) {
  try {
    image.rgb.assign(static_cast<size_t>(width) * static_cast<size_t>(height) * 3, 0);
  } catch (const std::bad_alloc&) {
    return Status(StatusCode::kOutOfMemory,
                  "cannot allocate a " + std::to_string(width) + " x " + std::to_string(height) + " RGB image");
  }
  image.width = width;
  image.height = height;
  return Status::Ok();
}

Result<Image> decode(std::span<const uint8_t> bytes, const DecodeLimits& limits) {
  if (bytes.size() > limits.max_bytes)
    return InvalidArgument("an image of " + std::to_string(bytes.size()) + " bytes, more than the " +
                           std::to_string(limits.max_bytes) + " dlrt reads (docs/limits.md)");
  const Format format = sniff_format(bytes);
  Result<Decoded> decoded = InvalidArgument("");
  try {
    switch (format) {
      case Format::kJpeg:
        decoded = decode_jpeg(bytes, limits);
        break;
      case Format::kPng:
        decoded = decode_png(bytes, limits);
        break;
      case Format::kWebp:
        decoded = decode_webp(bytes, limits);
        break;
      case Format::kGif:
        decoded = decode_gif(bytes, limits);
        break;
      case Format::kUnknown:
        return InvalidArgument(bytes.empty() ? "an empty image (0 bytes)"
                                             : "not an image dlrt decodes: the bytes are none of JPEG, PNG, "
                                               "WebP or GIF (by their first bytes)");
    }
  } catch (const std::bad_alloc&) {
    return Status(StatusCode::kOutOfMemory, std::string("out of memory decoding a ") + format_name(format) + " image");
  }
  if (!decoded.ok()) return decoded.status();
  Decoded& d = decoded.value();
  DLRT_RETURN_IF_ERROR(apply_orientation(d.image, d.orientation));
  return std::move(d.image);
}

Result<Image> load_file(const std::string& path, const DecodeLimits& limits) {
  DLRT_ASSIGN_OR_RETURN(std::string bytes, read_folder_file(path, limits.max_bytes));
  auto image = decode({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, limits);
  if (!image.ok()) return image.status().with_context(path);
  return image;
}

}  // namespace dlrt::embed::image
