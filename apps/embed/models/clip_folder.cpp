// Where a CLIP folder's files lie (clip_folder.h).
#include "embed/models/clip_folder.h"

#include <system_error>
#include <vector>

#include <nlohmann/json.hpp>

#include "embed/models/modules.h"
#include "embed/tokenizer/json_util.h"

namespace dlrt::embed {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

// sentence-transformers' CLIP module: 5.x's class, and 6.x's (kept to load
// older folders; it now subclasses Transformer).
bool is_clip_module(const std::string& type) {
  return type == "sentence_transformers.models.CLIPModel" ||
         type == "sentence_transformers.sentence_transformer.modules.clip_model.CLIPModel";
}

bool is_type(const std::string& type, ModuleType want) {
  for (const ModuleTypeName& t : implemented_module_types())
    if (type == t.name) return t.type == want;
  return false;
}

bool clip_type(const std::string& type) { return type == "clip" || type == "siglip" || type == "siglip2"; }

bool is_file(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}

// The first of `dirs` holding NAME (as onnx/NAME or NAME), else "".
fs::path find_graph(const std::vector<fs::path>& dirs, const char* name) {
  for (const fs::path& d : dirs)
    for (const fs::path& p : {d / "onnx" / name, d / name})
      if (is_file(p)) return p;
  return {};
}

// The model module of modules.json (its folder and type), and whether a
// module other than Normalize follows it. `found` false: no modules.json.
struct ModelModule {
  bool found = false;
  fs::path dir;
  std::string type, after;
};

Result<ModelModule> model_module(const fs::path& root) {
  const fs::path path = root / "modules.json";
  DLRT_ASSIGN_OR_RETURN(json modules, jsonu::read_optional_json(path));
  ModelModule m;
  if (modules.is_null()) return m;
  if (!modules.is_array() || modules.empty() || !modules[0].is_object())
    return InvalidModel(path.string() + ": expected a list of modules");
  m.found = true;
  m.type = jsonu::get_string(modules[0], "type", "");
  const fs::path rel(jsonu::get_string(modules[0], "path", ""));
  bool inside = !rel.has_root_path();
  for (const auto& part : rel) inside = inside && part != "..";
  if (!inside)
    return InvalidModel(path.string() + ": the module path \"" + rel.string() + "\" is not a path inside the model folder");
  m.dir = rel.empty() ? root : root / rel;
  for (size_t i = 1; i < modules.size() && m.after.empty(); ++i) {
    const std::string t = modules[i].is_object() ? jsonu::get_string(modules[i], "type", "") : "";
    if (!is_type(t, ModuleType::kNormalize)) m.after = "module " + std::to_string(i) + " has type \"" + t + "\"";
  }
  return m;
}

// How to make the missing graphs from PyTorch weights.
std::string export_hint(const fs::path& dir) {
  return "; export it once with optimum (pip install optimum-onnx): optimum-cli export onnx --model " + dir.string() +
         " --library transformers --task zero-shot-image-classification " + (dir / "onnx").string() +
         " (writes onnx/model.onnx, which dlrt takes), or as separate towers onnx/text_model.onnx and "
         "onnx/vision_model.onnx as transformers.js and FastEmbed ship them";
}

}  // namespace

std::string folder_model_type(const fs::path& dir) {
  auto config = jsonu::read_optional_json(dir / "config.json");
  return config.ok() && config->is_object() ? jsonu::get_string(*config, "model_type", "") : "";
}

bool is_clip_folder(const fs::path& root) {
  if (!find_graph({root}, "vision_model.onnx").empty() || clip_type(folder_model_type(root))) return true;
  auto m = model_module(root);
  return m.ok() && m->found && (is_clip_module(m->type) || clip_type(folder_model_type(m->dir)));
}

Result<ClipLayout> clip_layout(const fs::path& root) {
  DLRT_ASSIGN_OR_RETURN(ModelModule m, model_module(root));
  ClipLayout out;
  out.dir = root;
  std::vector<fs::path> dirs = {root};
  if (m.found && (is_clip_module(m.type) || clip_type(folder_model_type(m.dir)))) {
    if (!m.after.empty())
      return Unsupported((root / "modules.json").string() + ": " + m.after +
                         " after the CLIP model; dlrt's image kind takes the model module alone or followed by Normalize");
    out.dir = m.dir;
    out.module = m.type;
    dirs = {m.dir, root};
  }
  out.text = find_graph(dirs, "text_model.onnx");
  out.vision = find_graph(dirs, "vision_model.onnx");
  if (!out.text.empty() && !out.vision.empty()) return out;
  if (out.text.empty() && out.vision.empty()) {
    out.single = find_graph(dirs, "model.onnx");
    if (!out.single.empty()) return out;
  }
  std::string missing = out.vision.empty() ? "onnx/vision_model.onnx" : "";
  if (out.text.empty()) missing += std::string(missing.empty() ? "" : " and ") + "onnx/text_model.onnx";
  if (out.text.empty() && out.vision.empty()) missing += " (or one onnx/model.onnx with both towers)";
  std::string weights;
  for (const char* w : {"model.safetensors", "pytorch_model.bin"})
    if (weights.empty() && is_file(out.dir / w)) weights = w;
  std::string what = out.dir.string() + " is a CLIP folder";
  if (!out.module.empty()) what += " (sentence-transformers module " + out.module + ")";
  return NotFound(what + " without " + missing +
                  (weights.empty() ? ""
                                   : ": it holds PyTorch weights (" + weights + "), which dlrt does not run" +
                                         export_hint(out.dir)));
}

}  // namespace dlrt::embed
