// ClipEmbedder: CLIP folders of separate ONNX towers (see clip.h).
#include "embed/models/clip.h"

#include <algorithm>
#include <system_error>

#include <nlohmann/json.hpp>

#include "dlrt/tensor.h"
#include "embed/image/patches.h"
#include "embed/models/clip_folder.h"
#include "embed/models/clip_text.h"
#include "embed/models/token_inputs.h"
#include "embed/tokenizer/json_util.h"
#include "embed/tokenizer/tokenizer.h"

namespace dlrt::embed {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

// The output named `name`, else the only output of rank 2 ([batch, projection]).
Result<size_t> vector_output(const Session& session, const char* name, const fs::path& path) {
  const auto& outs = session.outputs();
  for (size_t i = 0; i < outs.size(); ++i)
    if (outs[i].name == name) return i;
  size_t found = outs.size();
  for (size_t i = 0; i < outs.size(); ++i) {
    if (!outs[i].is_tensor || outs[i].shape.size() != 2) continue;
    if (found != outs.size())
      return InvalidModel(path.string() + ": no \"" + name + "\" output and more than one 2-D output to take instead");
    found = i;
  }
  if (found == outs.size())
    return InvalidModel(path.string() + ": no \"" + name + "\" (or other 2-D [batch, projection]) output");
  return found;
}

// The fixed length of a [batch, projection] output (0: not fixed).
size_t fixed_width(const Session& session, size_t output) {
  const auto& shape = session.outputs()[output].shape;
  return shape.size() == 2 && shape[1] > 0 ? static_cast<size_t>(shape[1]) : 0;
}

// Rows of a float32 [batch, width] output into `out`.
Status take_rows(const Tensor& t, size_t batch, std::vector<std::vector<float>>& out) {
  if (t.dtype() != DType::kFloat32 || t.rank() != 2 || t.dim(0) != static_cast<int64_t>(batch) || t.dim(1) <= 0)
    return RuntimeError("the tower's output is " + std::string(dtype_name(t.dtype())) + " " +
                        shape_to_string(t.shape()) + ", expected float32 [" + std::to_string(batch) + ", projection]");
  const size_t width = static_cast<size_t>(t.dim(1));
  const float* x = t.data<float>();
  for (size_t i = 0; i < batch; ++i) out.emplace_back(x + i * width, x + (i + 1) * width);
  return Status::Ok();
}

// SigLIP's padding token, which its texts attend to: tokenizer_config.json's
// (or special_tokens_map.json's) pad_token, else text_config.pad_token_id.
Result<int64_t> siglip_pad_id(const fs::path& dir, const Tokenizer& tok, const json& config) {
  for (const char* file : {"tokenizer_config.json", "special_tokens_map.json"}) {
    auto j = jsonu::read_optional_json(dir / file);
    if (!j.ok() || !j->is_object() || !j->contains("pad_token")) continue;
    const json& p = (*j)["pad_token"];
    const std::string name = p.is_string() ? p.get<std::string>() : p.is_object() ? jsonu::get_string(p, "content", "") : "";
    if (auto id = tok.token_to_id(name)) return *id;
    for (const AddedToken& t : tok.added_tokens())
      if (t.content == name) return t.id;
    return InvalidModel((dir / file).string() + ": the pad_token \"" + name + "\" is not a token of the tokenizer");
  }
  if (config.is_object() && config.contains("text_config") && config["text_config"].is_object())
    if (int64_t id = jsonu::get_int(config["text_config"], "pad_token_id", -1); id >= 0) return id;
  return InvalidModel(dir.string() + ": a SigLIP folder needs its pad token (tokenizer_config.json's pad_token)");
}

// The vision tower's inputs: pixel_values [batch, 3, height, width], or with
// a Siglip2ImageProcessor (NaFlex) pixel_values [batch, patches, values],
// pixel_attention_mask and spatial_shapes, as transformers' Siglip2VisionModel takes them.
Status check_vision_inputs(const Session& vision, const image::ProcessorConfig& processor, const fs::path& path,
                           std::string& pixel_input) {
  const auto& vin = vision.inputs();
  if (processor.max_num_patches == 0) {
    if (vin.size() != 1 || vin[0].shape.size() != 4 || vin[0].dtype != DType::kFloat32)
      return InvalidModel(
          path.string() + ": expected one input, float32 pixel_values [batch, 3, height, width]" +
          (vin.size() == 3 ? " (a SigLIP 2 NaFlex tower needs the folder's Siglip2ImageProcessor)" : ""));
    pixel_input = vin[0].name;
    return Status::Ok();
  }
  const auto has = [&](const char* name, size_t rank, bool integer) {
    for (const auto& i : vin)
      if (i.name == name)
        return i.shape.size() == rank &&
               (integer ? i.dtype == DType::kInt64 || i.dtype == DType::kInt32 : i.dtype == DType::kFloat32);
    return false;
  };
  if (vin.size() != 3 || !has("pixel_values", 3, false) || !has("pixel_attention_mask", 2, true) ||
      !has("spatial_shapes", 2, true))
    return InvalidModel(
        path.string() +
        ": the folder's Siglip2ImageProcessor (NaFlex) needs a vision tower of three inputs, float32 "
        "pixel_values [batch, patches, values], pixel_attention_mask [batch, patches] and spatial_shapes "
        "[batch, 2] (int32 or int64)");
  pixel_input = "pixel_values";
  return Status::Ok();
}

// An int64 batch as the graph's input `name` wants it (int32 or int64).
Tensor index_tensor(const Session& session, const char* name, std::vector<int64_t> shape,
                    const std::vector<int64_t>& v) {
  DType dtype = DType::kInt64;
  for (const auto& i : session.inputs())
    if (i.name == name) dtype = i.dtype;
  if (dtype == DType::kInt64) return Tensor::from_vector(std::move(shape), v);
  return Tensor::from_vector(std::move(shape), std::vector<int32_t>(v.begin(), v.end()));
}

}  // namespace

struct ClipEmbedder::Impl {
  std::string name;
  std::unique_ptr<Tokenizer> tokenizer;
  image::ProcessorConfig processor;
  std::unique_ptr<Session> text, vision;
  TokenInputs text_inputs;
  size_t text_output = 0, vision_output = 0;
  std::string pixel_input;
  size_t max_length = 77;
  size_t dimension = 0;
  // SigLIP: texts padded to max_length with pad_id, on the side the
  // tokenizer pads; the padding masked only when the tokenizer returns a mask
  // and the tower takes one (else attended in full, as SigLIP was trained).
  bool pad_to_max_length = false;
  int64_t pad_id = 0;
  ClipTextRule text_rule;
  bool mask_padding = false;
};

ClipEmbedder::ClipEmbedder(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ClipEmbedder::~ClipEmbedder() = default;

Result<std::unique_ptr<ClipEmbedder>> ClipEmbedder::create(const std::string& model_dir,
                                                           const EmbedderOptions& options) {
  DLRT_ASSIGN_OR_RETURN(ModelFile file, find_model_folder(model_dir));
  DLRT_ASSIGN_OR_RETURN(ClipLayout layout, clip_layout(file.dir));
  const fs::path dir = layout.dir;
  const std::string type = folder_model_type(dir);
  if (!type.empty() && type != "clip" && type != "siglip" && type != "siglip2")
    return Unsupported(dir.string() + ": config.json's model_type is \"" + type +
                       "\"; dlrt's image kind takes CLIP, SigLIP and SigLIP 2 (model_type \"clip\", \"siglip\", "
                       "\"siglip2\")");
  auto impl = std::make_unique<Impl>();
  impl->name = file.name;
  {
    std::error_code ec;
    if (!fs::is_regular_file(dir / "preprocessor_config.json", ec) && !fs::is_regular_file(dir / "processor_config.json", ec))
      return NotFound(dir.string() + " has no preprocessor_config.json or processor_config.json: the image "
                      "processor's settings (resize, crop, normalisation) are needed to embed images");
  }
  DLRT_ASSIGN_OR_RETURN(impl->processor, image::load_processor_config(dir.string()));
  auto tok = load_clip_tokenizer(dir, type, impl->text_rule);
  if (!tok.ok()) return tok.status();
  impl->tokenizer = std::make_unique<Tokenizer>(std::move(tok).value());

  // Length: the option, else the processor's (Siglip2Processor: 64), else the tokenizer's, within the
  // text tower's positions.
  DLRT_ASSIGN_OR_RETURN(json config, jsonu::read_optional_json(dir / "config.json"));
  size_t max_len = options.max_length                     ? options.max_length
                   : impl->text_rule.processor_max_length ? impl->text_rule.processor_max_length
                                                          : impl->tokenizer->configured_max_length();
  int64_t positions = 0;
  if (config.is_object() && config.contains("text_config") && config["text_config"].is_object())
    positions = jsonu::get_int(config["text_config"], "max_position_embeddings", 0);
  if (max_len == 0) max_len = positions > 0 ? static_cast<size_t>(positions) : 77;
  if (positions > 0) max_len = std::min(max_len, static_cast<size_t>(positions));
  impl->max_length = std::max<size_t>(max_len, 2);
  if (type == "siglip" || type == "siglip2") {
    impl->pad_to_max_length = true;
    DLRT_ASSIGN_OR_RETURN(impl->pad_id, siglip_pad_id(dir, *impl->tokenizer, config));
  }

  // One graph with both towers: a session for each tower's output, which
  // runs only that tower and takes only its inputs.
  const bool single = !layout.single.empty();
  const fs::path text_path = single ? layout.single : layout.text;
  const fs::path vision_path = single ? layout.single : layout.vision;
  const std::vector<std::string> text_out = single ? std::vector<std::string>{"text_embeds"} : std::vector<std::string>{};
  const std::vector<std::string> vision_out =
      single ? std::vector<std::string>{"image_embeds"} : std::vector<std::string>{};
  DLRT_ASSIGN_OR_RETURN(impl->text, open_model_session(text_path, options, nullptr, 0, text_out));
  DLRT_ASSIGN_OR_RETURN(impl->text_inputs, TokenInputs::from_session(*impl->text, text_path.string()));
  DLRT_ASSIGN_OR_RETURN(impl->text_output, vector_output(*impl->text, "text_embeds", text_path));
  for (const auto& i : impl->text->inputs())
    if (i.name == "attention_mask") impl->mask_padding = impl->pad_to_max_length && impl->text_rule.returns_mask;
  DLRT_ASSIGN_OR_RETURN(impl->vision, open_model_session(vision_path, options, nullptr, 0, vision_out));
  DLRT_RETURN_IF_ERROR(check_vision_inputs(*impl->vision, impl->processor, vision_path, impl->pixel_input));
  DLRT_ASSIGN_OR_RETURN(impl->vision_output, vector_output(*impl->vision, "image_embeds", vision_path));
  const size_t tw = fixed_width(*impl->text, impl->text_output);
  const size_t vw = fixed_width(*impl->vision, impl->vision_output);
  if (tw && vw && tw != vw)
    return InvalidModel(dir.string() + ": the text tower gives " + std::to_string(tw) + " values and the vision tower " +
                        std::to_string(vw) + "; both must project into one space");
  impl->dimension = tw ? tw : vw;
  if (impl->dimension == 0) {
    // Neither width is fixed in the graphs: ask the text tower once.
    std::unique_ptr<ClipEmbedder> probe(new ClipEmbedder(std::move(impl)));
    DLRT_ASSIGN_OR_RETURN(Encoding e, probe->tokenize("a"));
    DLRT_ASSIGN_OR_RETURN(EmbedResult r, probe->embed_texts({e}));
    probe->impl_->dimension = r.vectors.at(0).size();
    return probe;
  }
  return std::unique_ptr<ClipEmbedder>(new ClipEmbedder(std::move(impl)));
}

Result<Encoding> ClipEmbedder::tokenize(std::string_view text, bool* truncated, size_t* tokens) const {
  DLRT_ASSIGN_OR_RETURN(Encoding e, encode_within(
                                        impl_->max_length, truncated,
                                        [&](size_t limit, size_t* n) {
                                          return impl_->tokenizer->encode_checked(text, limit, nullptr, n);
                                        },
                                        tokens));
  if (e.attention_mask.size() != e.ids.size() || impl_->pad_to_max_length) e.attention_mask.assign(e.ids.size(), 1);
  if (e.type_ids.size() != e.ids.size()) e.type_ids.assign(e.ids.size(), 0);
  if (impl_->pad_to_max_length && e.ids.size() < impl_->max_length) {
    const size_t pad = impl_->max_length - e.ids.size();
    const auto at = [&](auto& v) { return impl_->text_rule.pad_left ? v.begin() : v.end(); };
    e.ids.insert(at(e.ids), pad, impl_->pad_id);
    e.attention_mask.insert(at(e.attention_mask), pad, impl_->mask_padding ? 0 : 1);
    e.type_ids.insert(at(e.type_ids), pad, 0);
  }
  return e;
}

Result<EmbedResult> ClipEmbedder::embed_texts(const std::vector<Encoding>& batch, const RunOptions& bounds) const {
  EmbedResult result;
  if (batch.empty()) return result;
  TokenInputs::Batch in;
  DLRT_RETURN_IF_ERROR(impl_->text_inputs.make_batch(batch, impl_->tokenizer->pad_id(), impl_->tokenizer->vocab_size(),
                                                     impl_->max_length, in));
  DLRT_ASSIGN_OR_RETURN(std::vector<Tensor> outs, impl_->text->run(in.feeds, bounds, &result.report));
  if (impl_->text_output >= outs.size()) return Internal("the text tower returned too few outputs");
  DLRT_RETURN_IF_ERROR(take_rows(outs[impl_->text_output], batch.size(), result.vectors));
  result.total_tokens = in.tokens;
  return result;
}

Result<EmbedResult> ClipEmbedder::embed_images(std::span<const image::Image> images, const RunOptions& bounds) const {
  EmbedResult result;
  if (images.empty()) return result;
  std::map<std::string, Tensor> feeds;
  image::PixelBatch pixels;
  image::PatchBatch patches;
  if (impl_->processor.max_num_patches > 0) {
    DLRT_ASSIGN_OR_RETURN(patches, image::preprocess_patches(images, impl_->processor));
    const int64_t n = patches.batch;
    feeds["pixel_values"] =
        Tensor::view(DType::kFloat32, {n, patches.patches, patches.patch_dim}, patches.pixels.data());
    feeds["pixel_attention_mask"] =
        index_tensor(*impl_->vision, "pixel_attention_mask", {n, patches.patches}, patches.mask);
    feeds["spatial_shapes"] = index_tensor(*impl_->vision, "spatial_shapes", {n, 2}, patches.shapes);
  } else {
    DLRT_ASSIGN_OR_RETURN(pixels, image::preprocess_batch(images, impl_->processor));
    feeds[impl_->pixel_input] =
        Tensor::view(DType::kFloat32, {pixels.batch, 3, pixels.height, pixels.width}, pixels.data.data());
  }
  DLRT_ASSIGN_OR_RETURN(std::vector<Tensor> outs, impl_->vision->run(feeds, bounds, &result.report));
  if (impl_->vision_output >= outs.size()) return Internal("the vision tower returned too few outputs");
  DLRT_RETURN_IF_ERROR(take_rows(outs[impl_->vision_output], images.size(), result.vectors));
  return result;
}

size_t ClipEmbedder::dimension() const { return impl_->dimension; }
size_t ClipEmbedder::max_length() const { return impl_->max_length; }
std::string ClipEmbedder::model_name() const { return impl_->name; }
RunReport ClipEmbedder::placement() const { return impl_->text->placement(); }
const Tokenizer& ClipEmbedder::tokenizer() const { return *impl_->tokenizer; }
const image::ProcessorConfig& ClipEmbedder::processor() const { return impl_->processor; }

}  // namespace dlrt::embed
