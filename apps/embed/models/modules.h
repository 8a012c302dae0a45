// The sentence-transformers modules a model folder's modules.json lists, and
// the module types dlrt implements. A folder that lists any other type is
// refused at load (kUnsupported naming the type), never run as a plain dense
// embedder that would skip the module and return a wrong vector.
//
// Each type under its sentence-transformers 5.x name (sentence_transformers.models.X,
// sentence_transformers.sparse_encoder.models.X) and its 6.x name (the class's
// module path, as 6.x saves it: sentence_transformers.base.modules.transformer.Transformer, ...):
//   Transformer            the ONNX model (hidden states; MLM logits in a sparse folder)
//   Pooling                dense pooling (1_Pooling/config.json)
//   WeightedLayerPooling   a weighted average of the Transformer's per-layer
//                          hidden states before the Pooling (layer_pooling.h)
//   Dense                  a linear layer and activation after pooling (dense.h)
//   pylate.models.Dense.Dense  a multi-vector (ColBERT) folder's per-token projection
//                          (multi_vector.h; Embedder::create refuses such folders before reading modules)
//   LayerNorm              torch's LayerNorm of the sentence vector (dense.h)
//   Normalize              L2 normalisation
//   MLMTransformer         the ONNX model (MLM logits)
//   SpladePooling          SPLADE pooling (sparse.h)
//   StaticEmbedding        a token table and a mean, no ONNX model (static_embedding.h)
//   SparseStaticEmbedding  a weight per token, no ONNX model (static_embedding.h)
//   Router                 module 0: a list of modules per route (query, document), router.h
//   Dropout                nothing at inference
//   MultiVectorMask        6.x's multi-vector encoder: the tokens a query or document keeps (multi_vector.h)
//   HierarchicalTokenPooling  6.x's multi-vector encoder: with pool_factor 1 a normalisation (multi_vector.h)
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "dlrt/status.h"

namespace dlrt::embed {

enum class ModuleType {
  kTransformer,
  kPooling,
  kDense,
  kNormalize,
  kMLMTransformer,
  kSpladePooling,
  kLayerNorm,
  kStaticEmbedding,
  kSparseStaticEmbedding,
  kRouter,
  kDropout,
  kWeightedLayerPooling,
  kMultiVectorMask,
  kTokenPooling,
};

// The implemented types: modules.json's "type" string of each.
struct ModuleTypeName {
  const char* name;
  ModuleType type;
};
const std::vector<ModuleTypeName>& implemented_module_types();

// One module of modules.json: its type and its folder inside the model folder.
struct Module {
  ModuleType type;
  std::string type_name;
  std::filesystem::path dir;
};

// The modules of DIR/modules.json in their order; empty when there is no
// modules.json. Errors: kInvalidModel (broken JSON, a module path outside
// the folder or naming a file), kUnsupported (a type dlrt does not
// implement, named with the module's index and path); kInvalidModel for an
// order sentence-transformers would not run as dlrt does (no input module
// (Transformer, MLMTransformer, StaticEmbedding, SparseStaticEmbedding)
// first, a second input or pooling module, a Pooling after a static module,
// a Dense or LayerNorm before the Pooling or after a Normalize, a
// WeightedLayerPooling anywhere but between the Transformer and the Pooling).
Result<std::vector<Module>> read_modules(const std::filesystem::path& dir);

// One module named by `type` (as modules.json or router_config.json spells
// it) in the folder `rel` of `dir`; `where` names it in errors ("FILE: module
// 2"). A Router's sub-module types (5.x: "sentence_transformers.models.Dense.Dense",
// the class's module path) are read as their modules.json names.
Result<Module> read_module(const std::filesystem::path& dir, const std::string& type, std::string rel,
                           const std::string& where);
// read_modules' check of the order, on a list made elsewhere (a Router's route).
Status check_module_order(const std::filesystem::path& path, const std::vector<Module>& modules);

}  // namespace dlrt::embed
