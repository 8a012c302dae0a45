// An image model's preprocessing, as its folder's preprocessor_config.json
// (or processor_config.json's "image_processor") asks, with the semantics of
// transformers' CLIPImageProcessor and SiglipImageProcessor
// (Siglip2ImageProcessor's patches: patches.h): resize (shortest edge or a
// fixed size), center crop (zero padding where the crop is larger), rescale,
// normalize, channels first. Two backends, as transformers has them: PIL's
// arithmetic on a PIL image, or torchvision's on a uint8 tensor (Backend).
//
// Thread-safety: free functions and plain values; any number of threads.
#pragma once

#include <array>
#include <span>
#include <string>
#include <vector>

#include "dlrt/status.h"
#include "embed/image/image.h"

namespace dlrt::embed::image {

// PIL's Image.Resampling numbers, as processor configs store them.
enum class Resample { kNearest = 0, kLanczos = 1, kBilinear = 2, kBicubic = 3, kBox = 4, kHamming = 5 };

// Whose arithmetic resize, crop and rescale follow: PIL's for the slow type
// names, torchvision's for the "...Fast" ones (docs/images.md, "Two backends").
enum class Backend { kPil, kTorchvision };

struct ProcessorConfig {
  std::string type;  // image_processor_type: "CLIPImageProcessor", "SiglipImageProcessor", "Siglip2ImageProcessor"
  bool do_resize = true;
  int shortest_edge = 0;  // > 0: resize the shorter side to it, keeping the aspect ratio
  int height = 0;         // else a fixed height x width
  int width = 0;
  Resample resample = Resample::kBicubic;
  bool do_center_crop = false;
  int crop_height = 0;
  int crop_width = 0;
  bool do_rescale = true;
  double rescale_factor = 1.0 / 255.0;
  bool do_normalize = true;
  std::array<double, 3> mean{};
  std::array<double, 3> std{1.0, 1.0, 1.0};
  bool do_convert_rgb = true;  // images are RGB here already (decode()); kept for the record
  Backend backend = Backend::kPil;
  // Siglip2ImageProcessor (NaFlex, patches.h): > 0 for it, which takes no size or crop.
  int patch_size = 0;
  int max_num_patches = 0;
};

// The config of a JSON text (preprocessor_config.json, or processor_config.json
// with an "image_processor" object), with the processor class's defaults for
// what it leaves out. kUnsupported for a processor type or option dlrt does
// not implement (named), kInvalidModel for malformed values.
Result<ProcessorConfig> parse_processor_config(const std::string& json_text, const std::string& where);

// The config of a model folder: preprocessor_config.json, else processor_config.json.
Result<ProcessorConfig> load_processor_config(const std::string& folder);

// PIL's Image.resize(size, resample) of an RGB image (reducing_gap None):
// kNearest as PIL's affine scale, the others as its separable resampling.
Result<Image> resize(const Image& image, int width, int height, Resample filter);

// torchvision's resize of a uint8 tensor on CPU (antialias=True): bilinear,
// bicubic and Lanczos as torch's antialiased uint8 kernel computes them,
// kNearest as "nearest-exact". kInvalidArgument for kBox and kHamming, which
// torch's interpolate does not have.
Result<Image> resize_torchvision(const Image& image, int width, int height, Resample filter);

// The resize of the config's backend and filter.
Result<Image> resize_as(const Image& image, int width, int height, const ProcessorConfig& config);

// Per channel, the pixel value of each byte after the config's rescale and
// normalize, in float32 as its backend computes it.
using ValueTable = std::array<std::array<float, 256>, 3>;
ValueTable value_table(const ProcessorConfig& config);

// The size CLIPImageProcessor resizes to: the shorter side `shortest_edge`,
// the longer one int(shortest_edge * long / short).
void shortest_edge_size(int width, int height, int shortest_edge, int& out_width, int& out_height);

// One image's pixel values, channels first: [3, height, width].
struct PixelValues {
  int height = 0;
  int width = 0;
  std::vector<float> data;
};

// kInvalidArgument for an image whose resize would pass 2^26 pixels (an
// extreme aspect ratio under a shortest-edge resize).
Result<PixelValues> preprocess(const Image& image, const ProcessorConfig& config);

// A batch as a model's pixel_values input, [N, 3, height, width] (row-major
// in `data`); every image must come out the same size (a crop or a fixed size).
struct PixelBatch {
  int batch = 0;
  int height = 0;
  int width = 0;
  std::vector<float> data;
};
Result<PixelBatch> preprocess_batch(std::span<const Image> images, const ProcessorConfig& config);

}  // namespace dlrt::embed::image
