// Siglip2ImageProcessor's preprocessing (SigLIP 2's NaFlex variable
// resolution), with the semantics of the config's backend (PIL's or
// torchvision's, preprocess.h): each image resized (the config's filter) to the largest size of
// whole patches, near its aspect ratio, with at most max_num_patches patches;
// rescaled and normalised; cut into patches, each flattened (row, column,
// channel); rows of zeros after them up to max_num_patches, which the mask marks.
//
// Thread-safety: free functions and plain values; any number of threads.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "dlrt/status.h"
#include "embed/image/image.h"
#include "embed/image/preprocess.h"

namespace dlrt::embed::image {

// get_image_size_for_max_num_patches: the binary search (in doubles, as
// Python's floats) for the scale whose sizes, rounded up to whole patches
// (at least one), give at most max_patches patches.
void patch_grid_size(int height, int width, int patch, int max_patches, int& out_height, int& out_width);

// A batch as SigLIP 2's vision tower takes it: pixel_values [batch,
// max_num_patches, patch * patch * 3], pixel_attention_mask [batch,
// max_num_patches] (1 for an image's patches), spatial_shapes [batch, 2]
// (its patch rows and columns).
struct PatchBatch {
  int batch = 0;
  int patches = 0;    // max_num_patches
  int patch_dim = 0;  // patch * patch * 3
  std::vector<float> pixels;
  std::vector<int64_t> mask;
  std::vector<int64_t> shapes;
};

// `config` must be a Siglip2ImageProcessor's (max_num_patches > 0).
// kInvalidArgument for an image that, without do_resize, is not whole
// patches or has too many.
Result<PatchBatch> preprocess_patches(std::span<const Image> images, const ProcessorConfig& config);

}  // namespace dlrt::embed::image
