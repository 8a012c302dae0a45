// The image half of `dlrt embed`: a clip folder (embed/models/clip.h) embeds
// its TEXTs through the text tower, or with --image its image files through
// the vision tower, into one space.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "embed/models/embedder.h"

namespace dlrt::cli {

struct ClipEmbedJob {
  std::string model;
  embed::EmbedderOptions options;
  std::vector<std::string> inputs;  // texts, or image files with `images`
  bool images = false;
  size_t batch = 32;
  std::string npy;  // write a float32 [count, dimension] .npy here ("": print)
  bool json = false;
};

// Embeds and prints (text, --json or --npy); returns the exit code.
int embed_clip(const ClipEmbedJob& job);

}  // namespace dlrt::cli
