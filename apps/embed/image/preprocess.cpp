// The processor config (defaults of transformers' CLIPImageProcessor and
// SiglipImageProcessor for what a file leaves out, sizes read as their
// get_size_dict reads them) and the pipeline: resize, center crop, rescale,
// normalize, channels first.
#include "embed/image/preprocess.h"

#include <cstring>
#include <filesystem>
#include <new>
#include <nlohmann/json.hpp>

#include "embed/image/codecs.h"
#include "embed/tokenizer/json_util.h"

namespace dlrt::embed::image {
namespace {

using nlohmann::json;

// OPENAI_CLIP_MEAN / _STD and IMAGENET_STANDARD_MEAN / _STD of transformers.
constexpr std::array<double, 3> kClipMean{0.48145466, 0.4578275, 0.40821073};
constexpr std::array<double, 3> kClipStd{0.26862954, 0.26130258, 0.27577711};
constexpr std::array<double, 3> kHalf{0.5, 0.5, 0.5};

// The largest side a config may ask for (a model's input is a few hundred pixels).
constexpr int64_t kMaxConfigSide = 8192;
// The largest image a resize may make: a shortest-edge resize of a 1 x 65535
// strip would otherwise ask for 224 x 14.7 M pixels.
constexpr int64_t kMaxResizedPixels = int64_t{1} << 26;

// The most values a NaFlex config may ask for an image (max_num_patches x patch_size^2).
constexpr int64_t kMaxPatchPixels = int64_t{1} << 24;

enum class Family { kClip, kSiglip, kSiglip2 };

Result<Family> family_of(const std::string& type, const std::string& where) {
  if (type == "CLIPImageProcessor" || type == "CLIPImageProcessorFast" || type == "CLIPFeatureExtractor")
    return Family::kClip;
  if (type == "SiglipImageProcessor" || type == "SiglipImageProcessorFast") return Family::kSiglip;
  if (type == "Siglip2ImageProcessor" || type == "Siglip2ImageProcessorFast") return Family::kSiglip2;
  if (type.empty())
    return Unsupported(where +
                       ": no image_processor_type; dlrt preprocesses images as CLIPImageProcessor and "
                       "SiglipImageProcessor do");
  return Unsupported(where + ": image_processor_type \"" + type +
                     "\" is not implemented; dlrt preprocesses images as CLIPImageProcessor, "
                     "SiglipImageProcessor and Siglip2ImageProcessor (and their Fast variants) do");
}

Result<int> side(const json& v, const std::string& what) {
  if (!v.is_number_integer() || v.get<int64_t>() <= 0 || v.get<int64_t>() > kMaxConfigSide)
    return InvalidModel(what + " must be an integer from 1 to " + std::to_string(kMaxConfigSide) + ", not " + v.dump());
  return static_cast<int>(v.get<int64_t>());
}

// transformers' get_size_dict: an int is a square (default_to_square) or a
// shortest edge, a list is (height, width), a dict is kept. Sets either
// `shortest` or `h` and `w`.
Status read_size(const json& v, bool default_to_square, const std::string& what, int& shortest, int& h, int& w) {
  shortest = h = w = 0;
  if (v.is_number_integer()) {
    DLRT_ASSIGN_OR_RETURN(int s, side(v, what));
    if (default_to_square) {
      h = w = s;
    } else {
      shortest = s;
    }
    return Status::Ok();
  }
  if (v.is_array() && v.size() == 2) {
    DLRT_ASSIGN_OR_RETURN(h, side(v[0], what + "[0]"));
    DLRT_ASSIGN_OR_RETURN(w, side(v[1], what + "[1]"));
    return Status::Ok();
  }
  if (v.is_object()) {
    if (v.contains("shortest_edge")) {
      if (v.contains("longest_edge"))
        return Unsupported(what + ": longest_edge is not implemented (dlrt resizes to a shortest edge or a size)");
      DLRT_ASSIGN_OR_RETURN(shortest, side(v["shortest_edge"], what + ".shortest_edge"));
      return Status::Ok();
    }
    if (v.contains("height") && v.contains("width")) {
      DLRT_ASSIGN_OR_RETURN(h, side(v["height"], what + ".height"));
      DLRT_ASSIGN_OR_RETURN(w, side(v["width"], what + ".width"));
      return Status::Ok();
    }
  }
  return InvalidModel(what +
                      " must be an integer, [height, width], {\"shortest_edge\"} or {\"height\", \"width\"}, "
                      "not " +
                      v.dump());
}

Status read_triple(const json& j, const char* key, std::array<double, 3>& out, bool positive,
                   const std::string& where) {
  const json* v = jsonu::member(j, key);
  if (!v || v->is_null()) return Status::Ok();
  const auto bad = [&] {
    return InvalidModel(where + ": " + key + " must be a number or 3 numbers" + (positive ? " above 0" : "") +
                        ", not " + v->dump());
  };
  std::array<double, 3> t{};
  if (v->is_number()) {
    t.fill(v->get<double>());
  } else if (v->is_array() && v->size() == 3) {
    for (size_t i = 0; i < 3; ++i) {
      if (!(*v)[i].is_number()) return bad();
      t[i] = (*v)[i].get<double>();
    }
  } else {
    return bad();
  }
  for (double x : t)
    if (positive && !(x > 0)) return bad();
  out = t;
  return Status::Ok();
}

// Siglip2ImageProcessor's patch_size and max_num_patches (its size is computed per image).
Result<ProcessorConfig> read_patches(const json& j, const std::string& where, ProcessorConfig c) {
  const json* p = jsonu::member(j, "patch_size");
  const json* n = jsonu::member(j, "max_num_patches");
  DLRT_ASSIGN_OR_RETURN(c.patch_size, side(p && !p->is_null() ? *p : json(16), where + ": patch_size"));
  if (n && !n->is_null() && (!n->is_number_integer() || n->get<int64_t>() <= 0))
    return InvalidModel(where + ": max_num_patches must be a positive integer, not " + n->dump());
  const int64_t max_patches = n && !n->is_null() ? n->get<int64_t>() : 256;
  if (max_patches > kMaxPatchPixels / (int64_t{c.patch_size} * c.patch_size))
    return InvalidModel(where + ": max_num_patches " + std::to_string(max_patches) + " of " +
                        std::to_string(c.patch_size) + " x " + std::to_string(c.patch_size) + " pixels is past " +
                        std::to_string(kMaxPatchPixels) + " pixels an image");
  c.max_num_patches = static_cast<int>(max_patches);
  return c;
}

}  // namespace

Result<ProcessorConfig> parse_processor_config(const std::string& text, const std::string& where) {
  DLRT_RETURN_IF_ERROR(jsonu::check_json_depth(text, where));
  json top = json::parse(text, nullptr, false);
  if (top.is_discarded() || !top.is_object()) return InvalidModel(where + ": not a JSON object");
  // processor_config.json nests the image processor's settings.
  const json* nested = jsonu::member(top, "image_processor");
  const json& j = nested && nested->is_object() ? *nested : top;
  ProcessorConfig c;
  c.type = jsonu::get_string(j, "image_processor_type", jsonu::get_string(j, "feature_extractor_type", ""));
  DLRT_ASSIGN_OR_RETURN(Family family, family_of(c.type, where));
  const bool clip = family == Family::kClip;
  c.do_resize = jsonu::get_bool(j, "do_resize", true);
  c.do_rescale = jsonu::get_bool(j, "do_rescale", true);
  c.do_normalize = jsonu::get_bool(j, "do_normalize", true);
  c.do_convert_rgb = jsonu::get_bool(j, "do_convert_rgb", clip);
  c.do_center_crop = clip && jsonu::get_bool(j, "do_center_crop", true);
  c.mean = clip ? kClipMean : kHalf;
  c.std = clip ? kClipStd : kHalf;
  DLRT_RETURN_IF_ERROR(read_triple(j, "image_mean", c.mean, false, where));
  DLRT_RETURN_IF_ERROR(read_triple(j, "image_std", c.std, true, where));
  if (const json* f = jsonu::member(j, "rescale_factor"); f && !f->is_null()) {
    if (!f->is_number() || !(f->get<double>() > 0)) return InvalidModel(where + ": rescale_factor must be above 0");
    c.rescale_factor = f->get<double>();
  }
  const int64_t resample = jsonu::get_int(j, "resample", family == Family::kSiglip2 ? 2 : 3);
  if (resample < 0 || resample > 5)
    return InvalidModel(where + ": resample " + std::to_string(resample) + " is not one of PIL's filters (0 to 5)");
  c.resample = static_cast<Resample>(resample);
  // The name picks the arithmetic (docs/images.md "Two backends"): "...Fast" torchvision's, as
  // transformers 4 loads it; plain names PIL's. torchvision's resize has no box or Hamming filter
  // (transformers' torchvision backend fails on them), so those configs only ever run with PIL's.
  const bool fast = c.type.size() > 4 && c.type.compare(c.type.size() - 4, 4, "Fast") == 0;
  const bool box_or_hamming = c.resample == Resample::kBox || c.resample == Resample::kHamming;
  c.backend = fast && !box_or_hamming ? Backend::kTorchvision : Backend::kPil;
  if (family == Family::kSiglip2) return read_patches(j, where, c);
  const json* size = jsonu::member(j, "size");
  const json default_size = clip ? json{{"shortest_edge", 224}} : json{{"height", 224}, {"width", 224}};
  DLRT_RETURN_IF_ERROR(read_size(size && !size->is_null() ? *size : default_size, false, where + ": size",
                                 c.shortest_edge, c.height, c.width));
  if (clip && jsonu::get_bool(j, "use_square_size", false) && c.shortest_edge > 0) {
    c.height = c.width = c.shortest_edge;
    c.shortest_edge = 0;
  }
  if (!clip && c.shortest_edge > 0)
    return InvalidModel(where + ": SiglipImageProcessor resizes to size {\"height\", \"width\"}, not a shortest edge");
  if (c.do_center_crop) {
    const json* crop = jsonu::member(j, "crop_size");
    int unused = 0;
    DLRT_RETURN_IF_ERROR(read_size(crop && !crop->is_null() ? *crop : json{{"height", 224}, {"width", 224}}, true,
                                   where + ": crop_size", unused, c.crop_height, c.crop_width));
    if (unused) return InvalidModel(where + ": crop_size must be a height and a width");
  }
  return c;
}

Result<ProcessorConfig> load_processor_config(const std::string& folder) {
  namespace fs = std::filesystem;
  for (const char* name : {"preprocessor_config.json", "processor_config.json"}) {
    const fs::path path = fs::path(folder) / name;
    std::error_code ec;
    if (!fs::exists(path, ec)) continue;
    DLRT_ASSIGN_OR_RETURN(std::string text, read_folder_file(path.string()));
    return parse_processor_config(text, path.string());
  }
  return NotFound(folder +
                  " has no preprocessor_config.json or processor_config.json (the image processor's settings)");
}

void shortest_edge_size(int width, int height, int shortest_edge, int& out_width, int& out_height) {
  const int64_t shorter = std::min(width, height);
  const int64_t longer = std::max(width, height);
  // Python's int(size * long / short): a true division, then truncation.
  const auto other =
      static_cast<int>(static_cast<double>(int64_t{shortest_edge} * longer) / static_cast<double>(shorter));
  if (width <= height) {
    out_width = shortest_edge, out_height = other;
  } else {
    out_width = other, out_height = shortest_edge;
  }
}

Result<Image> resize_as(const Image& image, int width, int height, const ProcessorConfig& c) {
  if (c.backend == Backend::kTorchvision) return resize_torchvision(image, width, height, c.resample);
  return resize(image, width, height, c.resample);
}

ValueTable value_table(const ProcessorConfig& c) {
  ValueTable lut{};
  for (int ch = 0; ch < 3; ++ch) {
    const auto mean = static_cast<float>(c.mean[ch]);
    const auto std = static_cast<float>(c.std[ch]);
    for (int b = 0; b < 256; ++b) {
      float v = static_cast<float>(b);
      if (c.backend == Backend::kPil) {
        // PIL backend (numpy): float32(byte * factor), then (v - mean) / std in float32.
        if (c.do_rescale) v = static_cast<float>(static_cast<double>(b) * c.rescale_factor);
        if (c.do_normalize) v = (v - mean) / std;
      } else if (c.do_normalize) {
        // torchvision backend: a rescale folds into the normalisation, mean and std
        // multiplied by 1 / factor (float32 tensors times a float32 scalar).
        const float k = c.do_rescale ? static_cast<float>(1.0 / c.rescale_factor) : 1.0f;
        v = (v - (c.do_rescale ? mean * k : mean)) / (c.do_rescale ? std * k : std);
      } else if (c.do_rescale) {
        v = v * static_cast<float>(c.rescale_factor);
      }
      lut[ch][b] = v;
    }
  }
  return lut;
}

Result<PixelValues> preprocess(const Image& image, const ProcessorConfig& c) {
  if (image.width <= 0 || image.height <= 0 || image.rgb.size() != size_t{3} * image.width * image.height)
    return InvalidArgument("an empty or inconsistent image");
  Image resized;
  const Image* img = &image;
  if (c.do_resize) {
    int w = c.width;
    int h = c.height;
    if (c.shortest_edge > 0) shortest_edge_size(image.width, image.height, c.shortest_edge, w, h);
    if (w <= 0 || h <= 0 || int64_t{w} * h > kMaxResizedPixels)
      return InvalidArgument("an image of " + std::to_string(image.width) + " x " + std::to_string(image.height) +
                             " resizes to " + std::to_string(w) + " x " + std::to_string(h) +
                             ": its aspect ratio is too extreme (at most " + std::to_string(kMaxResizedPixels) +
                             " pixels after the resize)");
    DLRT_ASSIGN_OR_RETURN(resized, resize_as(image, w, h, c));
    img = &resized;
  }
  // transformers' center_crop: offsets floor((size - crop) / 2); where the crop is
  // larger, the image is first centred on zeros, padded before by ceil((crop - size) / 2)
  // in the PIL backend, by floor(...) in the torchvision one.
  int out_h = img->height;
  int out_w = img->width;
  int top = 0;
  int left = 0;
  if (c.do_center_crop) {
    out_h = c.crop_height;
    out_w = c.crop_width;
    const int round_up = c.backend == Backend::kPil ? 1 : 0;
    const auto offset = [round_up](int size, int crop) {
      const int d = size - crop;
      return d >= 0 ? d / 2 : -((-d + round_up) / 2);
    };
    top = offset(img->height, out_h);
    left = offset(img->width, out_w);
  }
  PixelValues out;
  out.height = out_h;
  out.width = out_w;
  const size_t plane = static_cast<size_t>(out_h) * out_w;
  try {
    out.data.resize(plane * 3);
  } catch (const std::bad_alloc&) {
    return Status(StatusCode::kOutOfMemory, "out of memory for an image's pixel values");
  }
  const ValueTable lut = value_table(c);
  for (int y = 0; y < out_h; ++y) {
    const int sy = y + top;
    for (int x = 0; x < out_w; ++x) {
      const int sx = x + left;
      const bool inside = sy >= 0 && sy < img->height && sx >= 0 && sx < img->width;
      const uint8_t* px = inside ? &img->rgb[(static_cast<size_t>(sy) * img->width + sx) * 3] : nullptr;
      for (int ch = 0; ch < 3; ++ch)
        out.data[ch * plane + static_cast<size_t>(y) * out_w + x] = px ? lut[ch][px[ch]] : lut[ch][0];
    }
  }
  return out;
}

Result<PixelBatch> preprocess_batch(std::span<const Image> images, const ProcessorConfig& config) {
  PixelBatch batch;
  batch.batch = static_cast<int>(images.size());
  for (size_t i = 0; i < images.size(); ++i) {
    DLRT_ASSIGN_OR_RETURN(PixelValues one, preprocess(images[i], config));
    if (i == 0) {
      batch.height = one.height, batch.width = one.width;
    } else if (one.height != batch.height || one.width != batch.width) {
      return InvalidArgument("image " + std::to_string(i) + " preprocesses to " + std::to_string(one.height) + " x " +
                             std::to_string(one.width) + ", image 0 to " + std::to_string(batch.height) + " x " +
                             std::to_string(batch.width) + ": a batch needs one size (the config has no crop)");
    }
    batch.data.insert(batch.data.end(), one.data.begin(), one.data.end());
  }
  return batch;
}

}  // namespace dlrt::embed::image
