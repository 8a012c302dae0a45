// JPEG through libjpeg-turbo (baseline, progressive, arithmetic; grey, YCbCr,
// CMYK and YCCK), to RGB as PIL gives it: grey replicated, CMYK through K
// (cmyk2rgb), Adobe CMYK files read inverted as PIL reads them ("CMYK;I").
// libjpeg reports errors through a callback that must not return: it
// longjmps back to decode_jpeg_into, whose frame holds nothing that needs a
// destructor between the setjmp and the jump.
#include <csetjmp>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

// jpeglib.h uses size_t and FILE without including their headers; jerror.h needs jpeglib.h.
// clang-format off
#include <jpeglib.h>
#include <jerror.h>
// clang-format on

#include "embed/image/codecs.h"

namespace dlrt::embed::image {
namespace {

// More scans than any encoder writes (a progressive file has about 10): a
// file of thousands of tiny scans costs a full pass over the image each.
constexpr long kMaxScans = 1000;

struct ErrorManager {
  jpeg_error_mgr pub;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX + 64];
};

[[noreturn]] void on_error(j_common_ptr cinfo) {
  auto* err = reinterpret_cast<ErrorManager*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, err->message);
  std::longjmp(err->jump, 1);
}

// Warnings are ignored as PIL ignores them, except the one libjpeg gives a
// truncated file (it would pad the rest grey): PIL refuses such a file.
void on_message(j_common_ptr cinfo, int level) {
  if (level == -1 && cinfo->err->msg_code == JWRN_JPEG_EOF) {
    auto* err = reinterpret_cast<ErrorManager*>(cinfo->err);
    std::snprintf(err->message, sizeof err->message, "the file is truncated");
    std::longjmp(err->jump, 1);
  }
}

void on_progress(j_common_ptr cinfo) {
  auto* d = reinterpret_cast<j_decompress_ptr>(cinfo);
  if (d->input_scan_number > kMaxScans) {
    auto* err = reinterpret_cast<ErrorManager*>(cinfo->err);
    std::snprintf(err->message, sizeof err->message, "more than %ld scans", kMaxScans);
    std::longjmp(err->jump, 1);
  }
}

uint8_t clip8(int v) { return static_cast<uint8_t>(v <= 0 ? 0 : v < 256 ? v : 255); }
// PIL's MULDIV255: a * b / 255, rounded as PIL rounds it.
int muldiv255(int a, int b) {
  const int t = a * b + 128;
  return ((t >> 8) + t) >> 8;
}

// Everything the jump may leave half-done, owned outside the setjmp frame.
struct State {
  jpeg_decompress_struct cinfo;
  ErrorManager err;
  jpeg_progress_mgr progress;
  std::vector<uint8_t> row;
  Decoded out;
  Status status;
};

// Returns false after a libjpeg error (err.message says which).
bool decode_jpeg_into(State& s, std::span<const uint8_t> bytes, const DecodeLimits& limits) {
  jpeg_decompress_struct& cinfo = s.cinfo;
  if (setjmp(s.err.jump)) return false;
  jpeg_create_decompress(&cinfo);
  cinfo.progress = &s.progress;
  jpeg_mem_src(&cinfo, bytes.data(), static_cast<unsigned long>(bytes.size()));
  jpeg_save_markers(&cinfo, JPEG_APP0 + 1, 0xFFFF);
  jpeg_read_header(&cinfo, TRUE);
  for (jpeg_saved_marker_ptr m = cinfo.marker_list; m; m = m->next) {
    if (m->marker == JPEG_APP0 + 1 && m->data_length >= 6 && std::memcmp(m->data, "Exif\0\0", 6) == 0) {
      s.out.orientation = exif_orientation({m->data, m->data_length});
      break;  // PIL keeps the first
    }
  }
  s.status = check_size(Format::kJpeg, cinfo.image_width, cinfo.image_height, limits);
  if (!s.status.ok()) return true;
  const bool cmyk = cinfo.jpeg_color_space == JCS_CMYK || cinfo.jpeg_color_space == JCS_YCCK;
  const bool grey = cinfo.jpeg_color_space == JCS_GRAYSCALE;
  cinfo.out_color_space = cmyk ? JCS_CMYK : grey ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_start_decompress(&cinfo);
  const int w = static_cast<int>(cinfo.output_width);
  const int h = static_cast<int>(cinfo.output_height);
  const int channels = cinfo.output_components;
  s.status = allocate_rgb(s.out.image, w, h);
  if (!s.status.ok()) return true;
  s.row.resize(static_cast<size_t>(w) * channels);
  // PIL reads a CMYK JPEG with an Adobe marker as inverted CMYK.
  const bool inverted = cmyk && cinfo.saw_Adobe_marker;
  while (cinfo.output_scanline < cinfo.output_height) {
    uint8_t* in = s.row.data();
    uint8_t* out = &s.out.image.rgb[static_cast<size_t>(cinfo.output_scanline) * w * 3];
    JSAMPROW rows[1] = {in};
    jpeg_read_scanlines(&cinfo, rows, 1);
    for (int x = 0; x < w; ++x, out += 3) {
      if (channels == 1) {
        out[0] = out[1] = out[2] = in[x];
      } else if (channels == 3) {
        std::memcpy(out, in + 3 * x, 3);
      } else {
        const uint8_t* p = in + 4 * x;
        const int c[4] = {inverted ? 255 - p[0] : p[0], inverted ? 255 - p[1] : p[1], inverted ? 255 - p[2] : p[2],
                          inverted ? 255 - p[3] : p[3]};
        const int nk = 255 - c[3];
        for (int k = 0; k < 3; ++k) out[k] = clip8(nk - muldiv255(c[k], nk));
      }
    }
  }
  jpeg_finish_decompress(&cinfo);
  return true;
}

}  // namespace

Result<Decoded> decode_jpeg(std::span<const uint8_t> bytes, const DecodeLimits& limits) {
  auto s = std::make_unique<State>();
  std::memset(&s->cinfo, 0, sizeof s->cinfo);
  s->cinfo.err = jpeg_std_error(&s->err.pub);
  s->err.pub.error_exit = on_error;
  s->err.pub.emit_message = on_message;
  s->err.message[0] = '\0';
  s->progress = {};
  s->progress.progress_monitor = on_progress;
  const bool ok = decode_jpeg_into(*s, bytes, limits);
  jpeg_destroy_decompress(&s->cinfo);
  if (!ok) return InvalidArgument(std::string("malformed JPEG image: ") + s->err.message);
  if (!s->status.ok()) return s->status;
  return std::move(s->out);
}

}  // namespace dlrt::embed::image
