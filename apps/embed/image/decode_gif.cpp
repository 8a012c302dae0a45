// GIF through giflib: the first frame only, as PIL opens it: the canvas is
// the logical screen grown to hold the frame, filled with the frame's
// transparent index (else index 0) where the frame does not cover it, and
// looked up in the frame's colour table (else the global one; indices past
// its end are black). Without any colour table the indices are grey levels.
// Later frames are never read, so an animation costs what its first frame does.
#include <gif_lib.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "embed/image/codecs.h"

namespace dlrt::embed::image {
namespace {

struct Reader {
  std::span<const uint8_t> bytes;
  size_t pos = 0;
};

int on_read(GifFileType* gif, GifByteType* out, int n) {
  auto* r = static_cast<Reader*>(gif->UserData);
  const size_t take = std::min(static_cast<size_t>(n < 0 ? 0 : n), r->bytes.size() - r->pos);
  std::memcpy(out, r->bytes.data() + r->pos, take);
  r->pos += take;
  return static_cast<int>(take);
}

struct GifCloser {
  void operator()(GifFileType* gif) const {
    int err = 0;
    DGifCloseFile(gif, &err);
  }
};

Status gif_error(const char* what, int code) {
  const char* why = GifErrorString(code);
  return InvalidArgument(std::string("malformed GIF image: ") + what + (why ? std::string(": ") + why : ""));
}

// Skips an extension's data blocks; the transparent index of a graphic
// control extension goes to `transparency`.
Status read_extension(GifFileType* gif, int& transparency) {
  int code = 0;
  GifByteType* block = nullptr;
  if (DGifGetExtension(gif, &code, &block) == GIF_ERROR) return gif_error("an extension", gif->Error);
  if (code == GRAPHICS_EXT_FUNC_CODE && block && block[0] >= 4) transparency = (block[1] & 1) ? block[4] : -1;
  while (block) {
    if (DGifGetExtensionNext(gif, &block) == GIF_ERROR) return gif_error("an extension", gif->Error);
  }
  return Status::Ok();
}

}  // namespace

Result<Decoded> decode_gif(std::span<const uint8_t> bytes, const DecodeLimits& limits) {
  Reader reader{bytes};
  int err = 0;
  std::unique_ptr<GifFileType, GifCloser> gif(DGifOpen(&reader, on_read, &err));
  if (!gif) return gif_error("its header", err);
  int transparency = -1;
  for (;;) {
    GifRecordType type = UNDEFINED_RECORD_TYPE;
    if (DGifGetRecordType(gif.get(), &type) == GIF_ERROR) return gif_error("its records", gif->Error);
    if (type == EXTENSION_RECORD_TYPE) {
      DLRT_RETURN_IF_ERROR(read_extension(gif.get(), transparency));
      continue;
    }
    if (type == TERMINATE_RECORD_TYPE) return InvalidArgument("malformed GIF image: it holds no frame");
    if (type == IMAGE_DESC_RECORD_TYPE) break;
    return InvalidArgument("malformed GIF image: an unknown record");
  }
  DLRT_RETURN_IF_ERROR(check_size(Format::kGif, static_cast<uint64_t>(gif->SWidth < 0 ? 0 : gif->SWidth),
                                  static_cast<uint64_t>(gif->SHeight < 0 ? 0 : gif->SHeight), limits));
  if (DGifGetImageDesc(gif.get()) == GIF_ERROR) return gif_error("its first frame's descriptor", gif->Error);
  const GifImageDesc& desc = gif->Image;
  if (desc.Width <= 0 || desc.Height <= 0) return InvalidArgument("malformed GIF image: its first frame is empty");
  const int64_t right = int64_t{desc.Left} + desc.Width;
  const int64_t bottom = int64_t{desc.Top} + desc.Height;
  const int64_t w = std::max<int64_t>(gif->SWidth, right);
  const int64_t h = std::max<int64_t>(gif->SHeight, bottom);
  DLRT_RETURN_IF_ERROR(check_size(Format::kGif, static_cast<uint64_t>(w), static_cast<uint64_t>(h), limits));
  const ColorMapObject* map = desc.ColorMap ? desc.ColorMap : gif->SColorMap;
  // The canvas in palette indices, then looked up.
  std::vector<uint8_t> index(static_cast<size_t>(w) * h, static_cast<uint8_t>(transparency >= 0 ? transparency : 0));
  std::vector<GifPixelType> line(static_cast<size_t>(desc.Width));
  const auto put_row = [&](int y) -> Status {
    if (DGifGetLine(gif.get(), line.data(), desc.Width) == GIF_ERROR)
      return gif_error("its first frame's pixels (truncated or corrupt)", gif->Error);
    std::memcpy(&index[static_cast<size_t>(desc.Top + y) * w + desc.Left], line.data(), line.size());
    return Status::Ok();
  };
  if (desc.Interlace) {
    static constexpr int kStart[4] = {0, 4, 2, 1};
    static constexpr int kStep[4] = {8, 8, 4, 2};
    for (int pass = 0; pass < 4; ++pass)
      for (int y = kStart[pass]; y < desc.Height; y += kStep[pass]) DLRT_RETURN_IF_ERROR(put_row(y));
  } else {
    for (int y = 0; y < desc.Height; ++y) DLRT_RETURN_IF_ERROR(put_row(y));
  }
  Decoded out;
  DLRT_RETURN_IF_ERROR(allocate_rgb(out.image, static_cast<int>(w), static_cast<int>(h)));
  const int colors = map ? map->ColorCount : 0;
  for (size_t i = 0; i < index.size(); ++i) {
    uint8_t* px = &out.image.rgb[3 * i];
    const int c = index[i];
    if (!map) {
      px[0] = px[1] = px[2] = static_cast<uint8_t>(c);
    } else if (c < colors) {
      px[0] = map->Colors[c].Red, px[1] = map->Colors[c].Green, px[2] = map->Colors[c].Blue;
    }
  }
  return out;
}

}  // namespace dlrt::embed::image
