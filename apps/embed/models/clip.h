// dlrt::embed::ClipEmbedder: a CLIP model folder (the layouts of
// clip_folder.h: separate ONNX towers, as transformers.js and FastEmbed
// repositories ship them, or optimum's one graph; sentence-transformers 5.x
// and 6.x folders holding either) turned into text -> vector and image ->
// vector in one space (docs/images.md):
//   onnx/text_model.onnx    input_ids (and attention_mask) -> text_embeds
//                           [batch, projection] (CLIPTextModelWithProjection)
//   onnx/vision_model.onnx  pixel_values [batch, 3, H, W] -> image_embeds
//                           [batch, projection] (CLIPVisionModelWithProjection)
//   the tokenizer files, preprocessor_config.json (or processor_config.json)
//   and config.json (model_type "clip", or "siglip" / "siglip2": SigLIP's
//   towers, whose texts are padded to max_length with the pad token as
//   transformers pads them (clip_text.h: SigLIP 2's Siglip2Tokenizer, the
//   padding side, the mask); with a Siglip2ImageProcessor the
//   vision tower takes NaFlex patches: pixel_values [batch, patches, values],
//   pixel_attention_mask, spatial_shapes). The towers may also lie beside config.json, or
//   be one graph (optimum's export) whose text_embeds and image_embeds each
//   get a session that runs only their tower.
// Images are decoded and preprocessed by embed/image/ as the folder's image
// processor does; the vectors come out unnormalised (CLIP compares them by cosine).
//
// Thread-safety: create() builds an immutable object; every other method may
// be called from many threads at once.
#pragma once

#include <cstddef>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dlrt/session.h"
#include "dlrt/status.h"
#include "embed/image/image.h"
#include "embed/image/preprocess.h"
#include "embed/models/clip_folder.h"
#include "embed/models/embedder.h"
#include "embed/tokenizer/encoding.h"

namespace dlrt::embed {

class Tokenizer;

class ClipEmbedder {
 public:
  // Errors: kNotFound naming a missing graph (clip_layout), processor config
  // or tokenizer; kUnsupported for a model_type other than clip, siglip or siglip2; kInvalidModel for towers without
  // the inputs and outputs above or whose vectors differ in length; Session::create's.
  static Result<std::unique_ptr<ClipEmbedder>> create(const std::string& model_dir, const EmbedderOptions& options);
  ~ClipEmbedder();
  ClipEmbedder(const ClipEmbedder&) = delete;
  ClipEmbedder& operator=(const ClipEmbedder&) = delete;

  // One text cut to max_length() tokens; *truncated says whether it was longer.
  Result<Encoding> tokenize(std::string_view text, bool* truncated = nullptr, size_t* tokens = nullptr) const;
  // The text tower's vectors of a padded batch (unnormalised).
  Result<EmbedResult> embed_texts(const std::vector<Encoding>& batch, const RunOptions& bounds = {}) const;
  // The vision tower's vectors of decoded images, preprocessed as the folder
  // asks (unnormalised). kInvalidArgument for an image the processor refuses.
  Result<EmbedResult> embed_images(std::span<const image::Image> images, const RunOptions& bounds = {}) const;

  size_t dimension() const;
  size_t max_length() const;
  std::string model_name() const;
  RunReport placement() const;
  const Tokenizer& tokenizer() const;
  const image::ProcessorConfig& processor() const;

 private:
  struct Impl;
  explicit ClipEmbedder(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace dlrt::embed
