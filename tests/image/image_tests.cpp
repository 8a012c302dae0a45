// The image library (apps/embed/image/) against the references of
// tests/image/make_image_set.py: every image of tests/image/data/ decodes to
// the RGB transformers' load_image gives (PIL), and preprocesses to the
// pixel_values of CLIPImageProcessor / SiglipImageProcessor within 1e-3
// (PIL's backend for the plain type names, torchvision's for "...Fast");
// bombs and malformed files end in their error, within a memory bound.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "core/npy.h"
#include "dlrt/tensor.h"
#include "embed/image/codecs.h"
#include "embed/image/image.h"
#include "embed/image/patches.h"
#include "embed/image/preprocess.h"

namespace img = dlrt::embed::image;

namespace {

const std::string kData = std::string(DLRT_IMAGE_TEST_DATA);

std::string read_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

std::span<const uint8_t> span_of(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

nlohmann::json manifest() { return nlohmann::json::parse(read_bytes(kData + "/manifest.json")); }

std::string stem(const std::string& file) { return file.substr(0, file.rfind('.')); }

// The largest |dlrt - reference| over the RGB bytes; -1 when the shapes differ.
int rgb_max_diff(const img::Image& got, const std::string& npy) {
  auto ref = dlrt::read_npy_file(npy);
  EXPECT_TRUE(ref.ok()) << ref.status().to_string();
  if (!ref.ok()) return -1;
  const auto& shape = ref->shape();
  if (shape.size() != 3 || shape[0] != got.height || shape[1] != got.width || shape[2] != 3) return -1;
  const auto* r = ref->data<uint8_t>();
  int worst = 0;
  for (size_t i = 0; i < got.rgb.size(); ++i) worst = std::max(worst, std::abs(int{got.rgb[i]} - int{r[i]}));
  return worst;
}

TEST(ImageDecode, EveryImageEqualsPillowsRgb) {
  const auto m = manifest();
  ASSERT_GE(m["images"].size(), 40u);
  int checked = 0;
  for (const auto& e : m["images"]) {
    const std::string file = e["file"];
    SCOPED_TRACE(file);
    auto image = img::load_file(kData + "/" + file);
    ASSERT_TRUE(image.ok()) << image.status().to_string();
    EXPECT_EQ(image->width, e["width"].get<int>());
    EXPECT_EQ(image->height, e["height"].get<int>());
    // Byte for byte: the codecs are deterministic and the conversions PIL's.
    EXPECT_EQ(rgb_max_diff(*image, kData + "/" + stem(file) + ".rgb.npy"), 0);
    ++checked;
  }
  EXPECT_EQ(checked, static_cast<int>(m["images"].size()));
}

TEST(ImageDecode, HostileExifDecodesUnturned) {
  const auto m = manifest();
  ASSERT_EQ(m["exif_hostile"].size(), 3u);
  for (const auto& e : m["exif_hostile"]) {
    const std::string file = e["file"];
    SCOPED_TRACE(file);
    auto image = img::load_file(kData + "/" + file);
    ASSERT_TRUE(image.ok()) << image.status().to_string();
    EXPECT_EQ(rgb_max_diff(*image, kData + "/" + stem(file) + ".rgb.npy"), 0);
  }
}

TEST(ImageDecode, OrientationsTurnAsExifTranspose) {
  // The same picture under orientations 1..8: 5 to 8 swap the sides.
  for (int o = 1; o <= 8; ++o) {
    auto image = img::load_file(kData + "/jpeg_exif_orientation" + std::to_string(o) + "_40x24.jpg");
    ASSERT_TRUE(image.ok());
    EXPECT_EQ(image->width, o >= 5 ? 24 : 40) << o;
  }
  const std::string one = read_bytes(kData + "/jpeg_exif_orientation1_40x24.jpg");
  EXPECT_EQ(img::exif_orientation({}), 1);
  const uint8_t be[] = {'M', 'M', 0, 42, 0, 0, 0, 8, 0, 1, 0x01, 0x12, 0, 3, 0, 0, 0, 1, 0, 6, 0, 0};
  EXPECT_EQ(img::exif_orientation(be), 6);
  const uint8_t le[] = {'I', 'I', 42, 0, 8, 0, 0, 0, 1, 0, 0x12, 0x01, 3, 0, 1, 0, 0, 0, 8, 0, 0, 0};
  EXPECT_EQ(img::exif_orientation(le), 8);
  // The entry table running past the block's end.
  EXPECT_EQ(img::exif_orientation(std::span<const uint8_t>(le, 14)), 1);
}

TEST(ImageDecode, BombsAndMalformedFilesAreRefusedByName) {
  const auto m = manifest();
  ASSERT_GE(m["bad"].size(), 15u);
  for (const auto& e : m["bad"]) {
    const std::string file = e["file"];
    SCOPED_TRACE(file);
    auto image = img::load_file(kData + "/" + file);
    ASSERT_FALSE(image.ok());
    EXPECT_EQ(image.status().code(), dlrt::StatusCode::kInvalidArgument);
    EXPECT_NE(image.status().message().find(e["error"].get<std::string>()), std::string::npos)
        << image.status().to_string();
  }
}

TEST(ImageDecode, LimitsAreTheCallers) {
  const std::string jpeg = read_bytes(kData + "/jpeg_baseline_160x120.jpg");
  img::DecodeLimits small;
  small.max_pixels = 160 * 120 - 1;
  auto r = img::decode(span_of(jpeg), small);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("19200 pixels, more than the 19199"), std::string::npos)
      << r.status().to_string();
  small = {};
  small.max_bytes = 100;
  r = img::decode(span_of(jpeg), small);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("more than the 100"), std::string::npos);
  small = {};
  small.max_pixels = 160 * 120;
  EXPECT_TRUE(img::decode(span_of(jpeg), small).ok());
}

uint32_t crc32(const std::string& s) {
  uint32_t c = 0xFFFFFFFFu;
  for (unsigned char b : s) {
    c ^= b;
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
  }
  return ~c;
}

std::string be32(uint32_t v) {
  return {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8), static_cast<char>(v)};
}

// A PNG with a 16 MiB eXIf chunk of junk after IHDR.
std::string png_with_huge_exif() {
  const std::string png = read_bytes(kData + "/png_rgb_64x48.png");
  std::string body = "eXIf" + std::string("MM\0\x2a\0\0\0\x08", 8) + std::string(size_t{16} << 20, '\x5a');
  const std::string chunk = be32(static_cast<uint32_t>(body.size() - 4)) + body + be32(crc32(body));
  return png.substr(0, 33) + chunk + png.substr(33);
}

// A field of /proc/self/status in KiB ("VmRSS", "VmHWM"), -1 if absent.
long status_kib(const char* field) {
  std::ifstream f("/proc/self/status");
  std::string line;
  const std::string key = std::string(field) + ":";
  while (std::getline(f, line))
    if (line.rfind(key, 0) == 0) return std::stol(line.substr(key.size()));
  return -1;
}

// How far above its resident memory at the start the peak of a child process
// running `fn` goes, in KiB (the peak is reset first where the kernel allows).
long peak_growth_kib(void (*fn)()) {
  int fds[2];
  if (pipe(fds) != 0) return -1;
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    const long before = status_kib("VmRSS");
    std::ofstream("/proc/self/clear_refs") << "5";  // VmHWM := VmRSS
    fn();
    const long growth = status_kib("VmHWM") - before;
    (void)!write(fds[1], &growth, sizeof growth);
    _exit(0);
  }
  close(fds[1]);
  long growth = -1;
  const bool got = read(fds[0], &growth, sizeof growth) == sizeof growth;
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the child failed: " << status;
  EXPECT_TRUE(got);
  return growth;
}

// Made before the child starts, so that its pages are not the child's growth.
std::string g_huge_exif_png;

void decode_every_bad_file() {
  const auto m = manifest();
  for (const auto& e : m["bad"]) {
    if (img::load_file(kData + "/" + e["file"].get<std::string>()).ok()) _exit(2);
  }
  if (!img::decode(span_of(g_huge_exif_png)).ok()) _exit(3);  // the pixels decode; the EXIF is junk
}

TEST(ImageDecode, BombsStayWithinMemory) {
  // The files are refused from their headers: nothing near their pixel count is
  // allocated, and the 16 MiB EXIF block is read where it lies.
  g_huge_exif_png = png_with_huge_exif();
  const long growth = peak_growth_kib(decode_every_bad_file);
  EXPECT_GE(growth, 0);
  EXPECT_LT(growth, 16 * 1024) << "peak RSS grew by " << growth << " KiB";
  std::printf("bombs and malformed files: peak RSS growth %ld KiB\n", growth);
}

float npy_max_diff(const img::PixelValues& got, const std::string& npy, std::string& shape_error) {
  auto ref = dlrt::read_npy_file(npy);
  if (!ref.ok()) {
    shape_error = ref.status().to_string();
    return INFINITY;
  }
  const auto& s = ref->shape();
  const bool patches = s.size() == 2 && s[0] * s[1] == int64_t{got.height} * got.width;  // compared flat
  if (!patches && (s.size() != 3 || s[0] != 3 || s[1] != got.height || s[2] != got.width)) {
    shape_error = "shape differs: dlrt " + std::to_string(got.height) + " x " + std::to_string(got.width);
    return INFINITY;
  }
  const auto* r = ref->data<float>();
  float worst = 0;
  for (size_t i = 0; i < got.data.size(); ++i) worst = std::max(worst, std::fabs(got.data[i] - r[i]));
  return worst;
}

TEST(ImagePreprocess, PixelValuesMatchTransformers) {
  const auto m = manifest();
  int compared = 0;
  int fast = 0;
  float worst = 0;
  for (const auto& e : m["images"]) {
    const std::string file = e["file"];
    auto image = img::load_file(kData + "/" + file);
    ASSERT_TRUE(image.ok()) << file << ": " << image.status().to_string();
    for (const auto& cname : e["references"]) {
      SCOPED_TRACE(file + " with " + cname.get<std::string>());
      auto config = img::load_processor_config(kData + "/configs/" + cname.get<std::string>());
      ASSERT_TRUE(config.ok()) << config.status().to_string();
      img::PixelValues pv;
      if (config->max_num_patches > 0) {  // SigLIP 2's patches: [max_num_patches, patch * patch * 3]
        auto pb = img::preprocess_patches(std::span<const img::Image>(&*image, 1), *config);
        ASSERT_TRUE(pb.ok()) << pb.status().to_string();
        pv = {1, pb->patches * pb->patch_dim, std::move(pb->pixels)};
      } else {
        auto one = img::preprocess(*image, *config);
        ASSERT_TRUE(one.ok()) << one.status().to_string();
        pv = std::move(one).value();
      }
      std::string err;
      const float d = npy_max_diff(pv, kData + "/" + stem(file) + "." + cname.get<std::string>() + ".npy", err);
      EXPECT_LE(d, 1e-3f) << err;
      worst = std::max(worst, d);
      ++compared;
      const std::string& name = cname.get_ref<const std::string&>();
      fast += name.size() > 5 && name.compare(name.size() - 5, 5, "_fast") == 0;
    }
  }
  EXPECT_GE(compared, 600);
  EXPECT_GE(fast, 300);  // torchvision's arithmetic ("...Fast" configs)
  std::printf("%d pixel_values arrays compared (%d of torchvision's backend), largest difference %g\n", compared, fast,
              worst);
}

TEST(ImagePreprocess, ConfigsAreReadAsTransformersReadsThem) {
  // processor_config.json nests the image processor.
  auto c = img::parse_processor_config(
      R"({"image_processor": {"image_processor_type": "SiglipImageProcessor", "size": {"height": 384, "width": 384},
          "resample": 2}, "processor_class": "SiglipProcessor"})",
      "processor_config.json");
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  EXPECT_EQ(c->height, 384);
  EXPECT_EQ(c->resample, img::Resample::kBilinear);
  EXPECT_FALSE(c->do_center_crop);
  EXPECT_DOUBLE_EQ(c->mean[0], 0.5);
  // The old integer sizes of CLIP configs.
  c = img::parse_processor_config(
      R"({"feature_extractor_type": "CLIPFeatureExtractor", "size": 224, "crop_size": 224})", "x");
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  EXPECT_EQ(c->shortest_edge, 224);
  EXPECT_EQ(c->crop_height, 224);
  EXPECT_NEAR(c->std[2], 0.27577711, 1e-9);
  // SigLIP 2's NaFlex processor: its defaults (16 x 16 patches, at most 256, bilinear).
  c = img::parse_processor_config(R"({"image_processor_type": "Siglip2ImageProcessor"})", "x");
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  EXPECT_EQ(c->patch_size, 16);
  EXPECT_EQ(c->max_num_patches, 256);
  EXPECT_EQ(c->resample, img::Resample::kBilinear);
  c = img::parse_processor_config(R"({"image_processor_type": "Siglip2ImageProcessor", "max_num_patches": 1e9})", "x");
  EXPECT_EQ(c.status().code(), dlrt::StatusCode::kInvalidModel);
  // Refusals name what is missing.
  c = img::parse_processor_config(R"({"image_processor_type": "ViTImageProcessor"})", "x");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), dlrt::StatusCode::kUnsupported);
  EXPECT_NE(c.status().message().find("ViTImageProcessor"), std::string::npos);
  c = img::parse_processor_config(R"({"image_processor_type": "CLIPImageProcessor", "resample": 6})", "x");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("resample 6"), std::string::npos);
  c = img::parse_processor_config(R"({"image_processor_type": "CLIPImageProcessor", "size": {"shortest_edge": -1}})",
                                  "x");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), dlrt::StatusCode::kInvalidModel);
  c = img::parse_processor_config(R"({"image_processor_type": "CLIPImageProcessor", "image_std": [1, 0, 1]})", "x");
  ASSERT_FALSE(c.ok());
  c = img::parse_processor_config("[1, 2", "x");
  ASSERT_FALSE(c.ok());
  EXPECT_FALSE(img::load_processor_config(kData + "/bad").ok());
}

// The backend follows the type name: "...Fast" is torchvision's arithmetic
// (the _fast references above), other names PIL's; torchvision has no box or
// Hamming filter, so those stay PIL's under any name.
TEST(ImagePreprocess, FastTypesTakeTorchvisionsArithmetic) {
  const auto backend = [](const std::string& json) {
    auto c = img::parse_processor_config(json, "x");
    EXPECT_TRUE(c.ok()) << c.status().to_string();
    return c.ok() ? c->backend : img::Backend::kPil;
  };
  EXPECT_EQ(backend(R"({"image_processor_type": "CLIPImageProcessor"})"), img::Backend::kPil);
  EXPECT_EQ(backend(R"({"image_processor_type": "CLIPImageProcessorFast"})"), img::Backend::kTorchvision);
  EXPECT_EQ(backend(R"({"image_processor_type": "SiglipImageProcessorFast", "resample": 0})"),
            img::Backend::kTorchvision);
  EXPECT_EQ(backend(R"({"image_processor_type": "Siglip2ImageProcessorFast"})"), img::Backend::kTorchvision);
  EXPECT_EQ(backend(R"({"image_processor_type": "CLIPImageProcessorFast", "resample": 4})"), img::Backend::kPil);
  EXPECT_EQ(backend(R"({"image_processor_type": "SiglipImageProcessorFast", "resample": 5})"), img::Backend::kPil);
  auto a = img::load_file(kData + "/png_rgb_64x48.png");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(img::resize_torchvision(*a, 10, 10, img::Resample::kBox).status().code(),
            dlrt::StatusCode::kInvalidArgument);
  // The two backends' bicubic downscales of the same image differ (by a level here and there).
  auto pil = img::resize(*a, 20, 15, img::Resample::kBicubic);
  auto tv = img::resize_torchvision(*a, 20, 15, img::Resample::kBicubic);
  ASSERT_TRUE(pil.ok() && tv.ok());
  EXPECT_NE(pil->rgb, tv->rgb);
}

// get_image_size_for_max_num_patches's binary search: whole patches, at
// most the budget, the aspect ratio kept as the search finds it.
TEST(ImagePreprocess, PatchGridSizesAsTransformersFindsThem) {
  struct Case {
    int h, w, patch, max, want_h, want_w;
  };
  // Values of transformers 5.24's get_image_size_for_max_num_patches.
  for (const Case& c : {Case{224, 224, 16, 256, 256, 256}, Case{480, 640, 16, 256, 224, 288},
                        Case{10, 200, 4, 12, 4, 48}, Case{1, 1, 16, 256, 112, 112}, Case{40, 24, 8, 16, 40, 24}}) {
    int h = 0, w = 0;
    img::patch_grid_size(c.h, c.w, c.patch, c.max, h, w);
    EXPECT_EQ(h, c.want_h) << c.h << " x " << c.w;
    EXPECT_EQ(w, c.want_w) << c.h << " x " << c.w;
  }
}

TEST(ImagePreprocess, BatchIsNchwOfOneSize) {
  auto a = img::load_file(kData + "/jpeg_baseline_160x120.jpg");
  auto b = img::load_file(kData + "/png_strip_200x10.png");
  ASSERT_TRUE(a.ok() && b.ok());
  auto clip = img::load_processor_config(kData + "/configs/clip_bicubic");
  ASSERT_TRUE(clip.ok());
  const std::vector<img::Image> both{*a, *b};
  auto batch = img::preprocess_batch(both, *clip);
  ASSERT_TRUE(batch.ok()) << batch.status().to_string();
  EXPECT_EQ(batch->batch, 2);
  EXPECT_EQ(batch->data.size(), size_t{2} * 3 * 32 * 32);
  auto one = img::preprocess(*b, *clip);
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(0, std::memcmp(batch->data.data() + 3 * 32 * 32, one->data.data(), one->data.size() * sizeof(float)));
  // Without a crop, a shortest-edge resize keeps each image's aspect ratio.
  img::ProcessorConfig no_crop = *clip;
  no_crop.do_center_crop = false;
  auto mixed = img::preprocess_batch(both, no_crop);
  ASSERT_FALSE(mixed.ok());
  EXPECT_NE(mixed.status().message().find("a batch needs one size"), std::string::npos);
  // A 1 x 65535 strip under a shortest-edge resize to 40 would be 40 x 2.6 M pixels.
  img::Image strip;
  ASSERT_TRUE(img::allocate_rgb(strip, 1, 65535).ok());
  auto refused = img::preprocess(strip, *clip);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("resizes to 40 x 2621400"), std::string::npos)
      << refused.status().to_string();
}

TEST(ImagePreprocess, ResizeToTheSameSizeCopies) {
  auto a = img::load_file(kData + "/png_rgb_64x48.png");
  ASSERT_TRUE(a.ok());
  auto same = img::resize(*a, 64, 48, img::Resample::kBicubic);
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(same->rgb, a->rgb);
  int w = 0;
  int h = 0;
  img::shortest_edge_size(160, 120, 224, w, h);
  EXPECT_EQ(w, 298);  // int(224 * 160 / 120) = int(298.67)
  EXPECT_EQ(h, 224);
}

}  // namespace
