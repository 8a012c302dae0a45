// PNG through libpng (every colour type and bit depth, interlaced or not), to
// RGB as PIL gives it: grey of 1, 2 and 4 bits scaled to 8 (x255, x85, x17),
// 16-bit grey ("I;16") clipped to 255, every other 16-bit type's high byte,
// palette indices looked up (black past the palette's end), alpha and tRNS
// dropped, gAMA and colour profiles not applied. libpng reports errors by a
// longjmp back to decode_png_into; what it would leave half-done lives in
// State, outside that frame.
#include <png.h>

#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

#include "embed/image/codecs.h"

namespace dlrt::embed::image {
namespace {

// A chunk libpng would allocate (a critical one: PLTE; the others are skipped).
constexpr png_alloc_size_t kMaxChunkBytes = png_alloc_size_t{16} << 20;

// The ancillary chunks libpng knows: none changes PIL's RGB, so libpng skips
// them without allocating (a text chunk or a profile may be megabytes).
constexpr png_byte kIgnoredChunks[] =
    "bKGD\0cHRM\0eXIf\0gAMA\0hIST\0iCCP\0iTXt\0oFFs\0pCAL\0pHYs\0sBIT\0sCAL\0"
    "sPLT\0sRGB\0sTER\0tEXt\0tIME\0tRNS\0zTXt";

struct State {
  std::span<const uint8_t> bytes;
  size_t pos = 0;
  char message[256] = "";
  png_structp png = nullptr;
  png_infop info = nullptr;
  std::vector<uint8_t> raw;  // the raw rows: one row, or all of an interlaced image
  Decoded out;
  Status status;
};

void on_read(png_structp png, png_bytep data, size_t n) {
  auto* s = static_cast<State*>(png_get_io_ptr(png));
  if (s->bytes.size() - s->pos < n) png_error(png, "the file is truncated");
  std::memcpy(data, s->bytes.data() + s->pos, n);
  s->pos += n;
}

void on_error(png_structp png, png_const_charp msg) {
  auto* s = static_cast<State*>(png_get_error_ptr(png));
  std::snprintf(s->message, sizeof s->message, "%s", msg);
  png_longjmp(png, 1);
}

void on_warning(png_structp, png_const_charp) {}

// The eXIf chunk's data, found by walking the chunk list (PIL reads it
// before or after the image data); empty if none. Each length is checked.
std::span<const uint8_t> find_exif(std::span<const uint8_t> b) {
  size_t at = 8;
  while (at + 12 <= b.size()) {
    const uint64_t len = (uint64_t{b[at]} << 24) | (b[at + 1] << 16) | (b[at + 2] << 8) | b[at + 3];
    if (len > b.size() - at - 12) break;
    if (std::memcmp(&b[at + 4], "eXIf", 4) == 0) return b.subspan(at + 8, len);
    if (std::memcmp(&b[at + 4], "IEND", 4) == 0) break;
    at += 12 + len;
  }
  return {};
}

// One raw row (after png_set_packing: a byte per sample below 8 bits) to RGB.
void row_to_rgb(const uint8_t* in, uint8_t* out, int w, int color_type, int depth, png_colorp palette,
                int palette_size) {
  const int scale = depth == 1 ? 255 : depth == 2 ? 85 : depth == 4 ? 17 : 1;
  const int bytes = depth == 16 ? 2 : 1;
  const int samples = color_type == PNG_COLOR_TYPE_GRAY         ? 1
                      : color_type == PNG_COLOR_TYPE_GRAY_ALPHA ? 2
                      : color_type == PNG_COLOR_TYPE_RGB        ? 3
                      : color_type == PNG_COLOR_TYPE_RGB_ALPHA  ? 4
                                                                : 1;
  for (int x = 0; x < w; ++x, out += 3) {
    const uint8_t* p = in + static_cast<size_t>(x) * samples * bytes;
    if (color_type == PNG_COLOR_TYPE_PALETTE) {
      const int i = p[0];
      if (i < palette_size) {
        out[0] = palette[i].red, out[1] = palette[i].green, out[2] = palette[i].blue;
      } else {
        out[0] = out[1] = out[2] = 0;
      }
    } else if (color_type == PNG_COLOR_TYPE_GRAY) {
      // PIL opens 16-bit grey as I;16, whose RGB conversion clips.
      const uint8_t v = bytes == 2 ? (p[0] == 0 ? p[1] : 255) : static_cast<uint8_t>(p[0] * scale);
      out[0] = out[1] = out[2] = v;
    } else if (color_type == PNG_COLOR_TYPE_GRAY_ALPHA) {
      out[0] = out[1] = out[2] = p[0];  // the high byte of 16 bits
    } else {
      out[0] = p[0], out[1] = p[bytes], out[2] = p[2 * bytes];
    }
  }
}

bool decode_png_into(State& s, const DecodeLimits& limits) {
  if (setjmp(png_jmpbuf(s.png))) return false;
  png_set_read_fn(s.png, &s, on_read);
  // PNG's own maximum: check_size, below, refuses by dlrt's bounds with a message that names them.
  png_set_user_limits(s.png, PNG_UINT_31_MAX, PNG_UINT_31_MAX);
  png_set_chunk_malloc_max(s.png, kMaxChunkBytes);
  png_set_keep_unknown_chunks(s.png, PNG_HANDLE_CHUNK_NEVER, nullptr, 0);
  png_set_keep_unknown_chunks(s.png, PNG_HANDLE_CHUNK_NEVER, kIgnoredChunks, sizeof kIgnoredChunks / 5);
  png_read_info(s.png, s.info);
  const png_uint_32 w = png_get_image_width(s.png, s.info);
  const png_uint_32 h = png_get_image_height(s.png, s.info);
  s.status = check_size(Format::kPng, w, h, limits);
  if (!s.status.ok()) return true;
  const int color_type = png_get_color_type(s.png, s.info);
  const int depth = png_get_bit_depth(s.png, s.info);
  if (depth < 8) png_set_packing(s.png);
  const int passes = png_set_interlace_handling(s.png);
  png_read_update_info(s.png, s.info);
  const size_t rowbytes = png_get_rowbytes(s.png, s.info);
  png_colorp palette = nullptr;
  int palette_size = 0;
  if (color_type == PNG_COLOR_TYPE_PALETTE && !png_get_PLTE(s.png, s.info, &palette, &palette_size))
    png_error(s.png, "a palette image without a PLTE chunk");
  s.status = allocate_rgb(s.out.image, static_cast<int>(w), static_cast<int>(h));
  if (!s.status.ok()) return true;
  uint8_t* rgb = s.out.image.rgb.data();
  const auto convert = [&](const uint8_t* row, png_uint_32 y) {
    row_to_rgb(row, rgb + static_cast<size_t>(y) * w * 3, static_cast<int>(w), color_type, depth, palette,
               palette_size);
  };
  if (passes == 1) {
    s.raw.resize(rowbytes);
    for (png_uint_32 y = 0; y < h; ++y) {
      png_read_row(s.png, s.raw.data(), nullptr);
      convert(s.raw.data(), y);
    }
    return true;
  }
  // Interlaced: each pass adds pixels to every row, complete after the last.
  s.raw.resize(rowbytes * h);
  for (int pass = 0; pass < passes; ++pass)
    for (png_uint_32 y = 0; y < h; ++y) png_read_row(s.png, &s.raw[rowbytes * y], nullptr);
  for (png_uint_32 y = 0; y < h; ++y) convert(&s.raw[rowbytes * y], y);
  return true;
}

}  // namespace

Result<Decoded> decode_png(std::span<const uint8_t> bytes, const DecodeLimits& limits) {
  auto s = std::make_unique<State>();
  s->bytes = bytes;
  s->png = png_create_read_struct(PNG_LIBPNG_VER_STRING, s.get(), on_error, on_warning);
  if (!s->png) return Status(StatusCode::kOutOfMemory, "libpng could not start");
  s->info = png_create_info_struct(s->png);
  const bool ok = s->info && decode_png_into(*s, limits);
  png_destroy_read_struct(&s->png, s->info ? &s->info : nullptr, nullptr);
  if (!ok) return InvalidArgument(std::string("malformed PNG image: ") + s->message);
  if (!s->status.ok()) return s->status;
  s->out.orientation = exif_orientation(find_exif(bytes));
  return std::move(s->out);
}

}  // namespace dlrt::embed::image
