// Where a CLIP (or SigLIP) model's files lie in the folders people publish
// (clip.h takes them):
//   the model folder itself (transformers.js / FastEmbed towers, optimum's
//   export), or the folder of modules.json's model module: a
//   sentence-transformers 5.x CLIPModel (e.g. 0_CLIPModel/, or the folder
//   itself) or a 5.4+ / 6.x Transformer whose config.json's model_type is
//   clip, siglip or siglip2. A Normalize module may follow it; no other module.
// The ONNX graphs: onnx/text_model.onnx + onnx/vision_model.onnx (separate
// towers) or one onnx/model.onnx with both (optimum's zero-shot export:
// input_ids, attention_mask, pixel_values -> text_embeds, image_embeds, ...),
// in that folder's onnx/, the folder itself, or the model folder's onnx/.
#pragma once

#include <filesystem>
#include <string>

#include "dlrt/status.h"

namespace dlrt::embed {

struct ClipLayout {
  std::filesystem::path dir;           // config.json, the processor and the tokenizer files
  std::filesystem::path text, vision;  // the separate towers (both, or neither)
  std::filesystem::path single;        // one graph with both towers (when there are no separate towers)
  std::string module;                  // modules.json's type of the model module ("": none)
};

// config.json's model_type in DIR ("" without one).
std::string folder_model_type(const std::filesystem::path& dir);

// True when `root` is a folder the clip kind takes (clip_layout then says
// what it lacks): a vision tower, a config.json of model_type clip or siglip
// (or siglip2) in the model module's folder, or a CLIPModel module.
bool is_clip_folder(const std::filesystem::path& root);

// The layout of the CLIP folder `root`. Errors: kNotFound naming the missing
// graphs (and, for a folder of PyTorch weights, how to export them);
// kUnsupported for a module after the model other than Normalize;
// kInvalidModel for a broken modules.json or a module path outside the folder.
Result<ClipLayout> clip_layout(const std::filesystem::path& root);

}  // namespace dlrt::embed
