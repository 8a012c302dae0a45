#include "embed/models/modules.h"

#include <nlohmann/json.hpp>

#include "embed/tokenizer/json_util.h"

namespace dlrt::embed {

namespace fs = std::filesystem;
using json = nlohmann::json;

const std::vector<ModuleTypeName>& implemented_module_types() {
  // 5.x's names, then 6.x's (each class's module path, which 6.x saves).
  static const std::vector<ModuleTypeName> types = {
      {"sentence_transformers.models.Transformer", ModuleType::kTransformer},
      {"sentence_transformers.models.Pooling", ModuleType::kPooling},
      {"sentence_transformers.models.Dense", ModuleType::kDense},
      {"pylate.models.Dense.Dense", ModuleType::kDense},  // a multi-vector (ColBERT) folder's projection
      {"sentence_transformers.models.LayerNorm", ModuleType::kLayerNorm},
      {"sentence_transformers.models.Normalize", ModuleType::kNormalize},
      {"sentence_transformers.models.StaticEmbedding", ModuleType::kStaticEmbedding},
      {"sentence_transformers.sparse_encoder.models.MLMTransformer", ModuleType::kMLMTransformer},
      {"sentence_transformers.sparse_encoder.models.SpladePooling", ModuleType::kSpladePooling},
      {"sentence_transformers.sparse_encoder.models.SparseStaticEmbedding", ModuleType::kSparseStaticEmbedding},
      {"sentence_transformers.models.Router", ModuleType::kRouter},
      {"sentence_transformers.models.Dropout", ModuleType::kDropout},
      {"sentence_transformers.models.WeightedLayerPooling", ModuleType::kWeightedLayerPooling},
      {"sentence_transformers.base.modules.transformer.Transformer", ModuleType::kTransformer},
      {"sentence_transformers.sentence_transformer.modules.pooling.Pooling", ModuleType::kPooling},
      {"sentence_transformers.base.modules.dense.Dense", ModuleType::kDense},
      {"sentence_transformers.sentence_transformer.modules.layer_norm.LayerNorm", ModuleType::kLayerNorm},
      {"sentence_transformers.base.modules.normalize.Normalize", ModuleType::kNormalize},
      {"sentence_transformers.sentence_transformer.modules.static_embedding.StaticEmbedding",
       ModuleType::kStaticEmbedding},
      {"sentence_transformers.sparse_encoder.modules.mlm_transformer.MLMTransformer", ModuleType::kMLMTransformer},
      {"sentence_transformers.sparse_encoder.modules.splade_pooling.SpladePooling", ModuleType::kSpladePooling},
      {"sentence_transformers.sparse_encoder.modules.sparse_static_embedding.SparseStaticEmbedding",
       ModuleType::kSparseStaticEmbedding},
      {"sentence_transformers.base.modules.router.Router", ModuleType::kRouter},
      {"sentence_transformers.sentence_transformer.modules.dropout.Dropout", ModuleType::kDropout},
      {"sentence_transformers.sentence_transformer.modules.weighted_layer_pooling.WeightedLayerPooling",
       ModuleType::kWeightedLayerPooling},
      {"sentence_transformers.multi_vector_encoder.modules.multi_vector_mask.MultiVectorMask",
       ModuleType::kMultiVectorMask},
      {"sentence_transformers.multi_vector_encoder.modules.token_pooling.HierarchicalTokenPooling",
       ModuleType::kTokenPooling},
  };
  return types;
}

namespace {

// `rel`, a path modules.json or router_config.json names (`where` in errors), as a path inside the model folder `dir`:
// no absolute path and no "..". Symbolic links are followed (a module folder
// linked from elsewhere is the folder's owner's choice).
Result<fs::path> inside_folder(const fs::path& dir, const std::string& rel, const std::string& where) {
  const fs::path p(rel);
  bool ok = !rel.empty() && !p.has_root_path();
  for (const auto& part : p) ok = ok && part != "..";
  if (!ok)
    return InvalidModel(where + ": the module path \"" + rel + "\" is not a path inside the model folder " +
                        dir.string() + " (absolute, or with \"..\")");
  std::error_code ec;
  if (fs::exists(dir / p, ec) && !fs::is_directory(dir / p, ec))
    return InvalidModel(where + ": the module path \"" + rel + "\" in " + dir.string() + " is a file, not a folder");
  return dir / p;
}

// What a type dlrt does not implement is, when it is known, for the message.
std::string known_family(const std::string& type) {
  if (type.rfind("pylate.", 0) == 0) return " (a PyLate module)";
  if (type.rfind("sentence_transformers.sparse_encoder.", 0) == 0) return " (a sparse-encoder module)";
  if (type.rfind("sentence_transformers.multi_vector_encoder.", 0) == 0) return " (a multi-vector encoder module)";
  if (type.rfind("sentence_transformers.cross_encoder.", 0) == 0) return " (a cross-encoder module)";
  return "";
}

bool is_input_module(ModuleType t) {
  return t == ModuleType::kRouter || t == ModuleType::kTransformer || t == ModuleType::kMLMTransformer ||
         t == ModuleType::kStaticEmbedding || t == ModuleType::kSparseStaticEmbedding;
}

}  // namespace

// The modules in an order sentence-transformers runs as dlrt does: one input
// module (Transformer, MLMTransformer or a static one, or a Router of them), first; one Pooling at
// most (and one SpladePooling), none after a static module (it gives the
// sentence vector itself); no Dense, LayerNorm or Normalize before the
// Pooling (they read its sentence vector), no Dense or LayerNorm after a
// Normalize (dlrt normalises last); one WeightedLayerPooling at most, before
// the pooling (it makes the token vectors the pooling reads).

Status check_module_order(const fs::path& path, const std::vector<Module>& modules) {
  auto bad = [&](const std::string& what) {
    return InvalidModel(path.string() + ": " + what + " (sentence-transformers runs the modules in their order)");
  };
  if (modules.empty()) return Status::Ok();
  if (!is_input_module(modules[0].type))
    return bad("module 0 is a " + modules[0].type_name + ", not the Transformer (or another input module)");
  const bool is_static =
      modules[0].type == ModuleType::kStaticEmbedding || modules[0].type == ModuleType::kSparseStaticEmbedding;
  const size_t none = modules.size();
  size_t pooling = none, splade = none, normalize = none, layers = none;
  for (size_t i = 1; i < modules.size(); ++i) {
    const ModuleType t = modules[i].type;
    const std::string at = "module " + std::to_string(i) + " (" + modules[i].type_name + ")";
    if (is_input_module(t)) return bad(at + " is a second Transformer or other input module");
    if (t == ModuleType::kWeightedLayerPooling) {
      if (is_static) return bad(at + " averages hidden states, which the static module 0 does not give");
      if (layers != none) return bad(at + " is a second WeightedLayerPooling after module " + std::to_string(layers));
      if (pooling != none || splade != none) return bad(at + " comes after the pooling module, whose input it makes");
      layers = i;
    }
    const bool pools = t == ModuleType::kPooling || t == ModuleType::kSpladePooling;
    if (pools && is_static) return bad(at + " pools token vectors, which the static module 0 does not give");
    size_t& first = t == ModuleType::kPooling ? pooling : t == ModuleType::kSpladePooling ? splade : normalize;
    if (pools && first != none) return bad(at + " is a second pooling module after module " + std::to_string(first));
    if ((pools || t == ModuleType::kNormalize) && first == none) first = i;
    if ((t == ModuleType::kDense || t == ModuleType::kLayerNorm) && normalize != none)
      return bad(at + " comes after the Normalize module " + std::to_string(normalize));
  }
  for (size_t i = 1; i < pooling && pooling != none; ++i)
    if (modules[i].type == ModuleType::kDense || modules[i].type == ModuleType::kNormalize ||
        modules[i].type == ModuleType::kLayerNorm)
      return bad("module " + std::to_string(i) + " (" + modules[i].type_name + ") comes before the Pooling module " +
                 std::to_string(pooling) + ", whose sentence vector it reads");
  return Status::Ok();
}

Result<Module> read_module(const fs::path& dir, const std::string& type, std::string rel, const std::string& where) {
  // A Router saves its modules' types as module path and class ("...models.Dense.Dense" in 5.x).
  std::string name = type;
  if (const size_t dot = name.rfind('.'); dot != std::string::npos && dot > 0) {
    const size_t prev = name.rfind('.', dot - 1);
    if (prev != std::string::npos && name.compare(prev + 1, dot - prev - 1, name, dot + 1) == 0) name.resize(dot);
  }
  const ModuleTypeName* found = nullptr;
  for (const ModuleTypeName& t : implemented_module_types())
    if (type == t.name || name == t.name) found = &t;
  if (!found) {
    std::string names;
    for (const ModuleTypeName& t : implemented_module_types()) names += std::string(names.empty() ? "" : ", ") + t.name;
    return Unsupported(where + " (path \"" + rel + "\") has type \"" + type + "\"" + known_family(type) +
                       ", which dlrt does not implement; it implements " + names);
  }
  // The modules that read a config of their own have a folder; without a
  // path, the pooling modules' usual one (a static module without one is in
  // the model folder itself, where sentence-transformers saves module 0).
  const bool has_config = found->type == ModuleType::kPooling || found->type == ModuleType::kDense ||
                          found->type == ModuleType::kSpladePooling || found->type == ModuleType::kLayerNorm ||
                          found->type == ModuleType::kWeightedLayerPooling ||
                          found->type == ModuleType::kMultiVectorMask || found->type == ModuleType::kTokenPooling;
  if (rel.empty() && found->type == ModuleType::kPooling) rel = "1_Pooling";
  if (rel.empty() && found->type == ModuleType::kSpladePooling) rel = "1_SpladePooling";
  Module mod{found->type, type, dir};
  if (has_config || !rel.empty()) {
    DLRT_ASSIGN_OR_RETURN(mod.dir, inside_folder(dir, rel, where));
  }
  return mod;
}

Result<std::vector<Module>> read_modules(const fs::path& dir) {
  const fs::path path = dir / "modules.json";
  DLRT_ASSIGN_OR_RETURN(json modules, jsonu::read_optional_json(path));
  std::vector<Module> out;
  if (modules.is_null()) return out;
  if (!modules.is_array()) return InvalidModel(path.string() + ": expected a list of modules");
  for (size_t i = 0; i < modules.size(); ++i) {
    const json& m = modules[i];
    DLRT_ASSIGN_OR_RETURN(Module mod,
                          read_module(dir, jsonu::get_string(m, "type", ""), jsonu::get_string(m, "path", ""),
                                      path.string() + ": module " + std::to_string(i)));
    out.push_back(std::move(mod));
  }
  DLRT_RETURN_IF_ERROR(check_module_order(path, out));
  return out;
}

}  // namespace dlrt::embed
