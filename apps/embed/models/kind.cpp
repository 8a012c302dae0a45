// The kinds of model folder and their capabilities (see kind.h).
#include "embed/models/kind.h"

#include <filesystem>
#include <vector>

#include "embed/models/classifier.h"
#include "embed/models/llm_reranker.h"
#include "embed/models/modules.h"
#include "embed/models/multi_vector.h"
#include "embed/models/token_inputs.h"

namespace dlrt::embed {

namespace fs = std::filesystem;

namespace {

// One row per kind: its names, its capabilities and what it serves (for refusals).
struct KindRow {
  ModelKind kind;
  const char* name;
  const char* phrase;
  std::vector<Capability> capabilities;
  const char* serves;
};

const std::vector<KindRow>& kind_table() {
  using C = Capability;
  static const std::vector<KindRow> rows = {
      {ModelKind::kDense, "dense", "a dense embedding model", {C::kDense, C::kPerToken, C::kTokenize},
       "it serves /embed, /v1/embeddings, /similarity and /embed_all (dlrt embed)"},
      {ModelKind::kSparse, "sparse", "an embedding model, a sparse (SPLADE) encoder", {C::kSparse, C::kTokenize},
       "use POST /embed_sparse, or /v1/embeddings with \"encoding_format\": \"sparse\" (dlrt embed --sparse)"},
      {ModelKind::kMultiVector, "multi_vector", "a multi-vector (ColBERT) model, one vector per token",
       {C::kPerToken, C::kMaxSim, C::kTokenize},
       "use /embed_all for its per-token vectors (dlrt embed); it scores by MaxSim on POST /rerank (rank texts "
       "against a query by MaxSim with /rerank, or dlrt rerank)"},
      {ModelKind::kCrossEncoder, "cross_encoder", "a sequence classifier (cross-encoder)",
       {C::kPairScore, C::kClassify, C::kTokenize}, "use /rerank, /v1/rerank or /predict (dlrt rerank)"},
      {ModelKind::kLlmReranker, "llm_reranker", "a sequence classifier, an LLM reranker scoring (query, document) pairs",
       {C::kPairScore, C::kClassify, C::kTokenize}, "use /rerank or /v1/rerank (dlrt rerank)"},
  };
  return rows;
}

const KindRow& row_of(ModelKind kind) {
  for (const KindRow& r : kind_table())
    if (r.kind == kind) return r;
  return kind_table().front();  // unreachable: every enumerator has a row
}

// What each capability's requests are, for "WHAT needs ...".
const char* capability_need(Capability c) {
  switch (c) {
    case Capability::kDense: return "a dense embedding model (one vector per text)";
    case Capability::kSparse: return "a sparse (SPLADE) model";
    case Capability::kPerToken: return "per-token vectors (a dense embedding model or a multi-vector model)";
    case Capability::kPairScore: return "a reranker (a cross-encoder or an LLM reranker)";
    case Capability::kMaxSim: return "a multi-vector (ColBERT) model";
    case Capability::kClassify: return "a sequence classifier";
    case Capability::kTokenize: return "a tokenizer";
  }
  return "";
}

// modules.json lists SpladePooling or SparseStaticEmbedding (as Embedder::create's read_pooling finds them).
bool lists_sparse_module(const fs::path& dir) {
  auto modules = read_modules(dir);
  if (!modules.ok()) return false;
  for (const Module& m : *modules)
    if (m.type == ModuleType::kSpladePooling || m.type == ModuleType::kSparseStaticEmbedding) return true;
  return false;
}

}  // namespace

const char* model_kind_name(ModelKind kind) { return row_of(kind).name; }
const char* model_kind_phrase(ModelKind kind) { return row_of(kind).phrase; }

ModelKind detect_kind(const std::string& model) {
  if (is_llm_reranker_folder(model)) return ModelKind::kLlmReranker;
  if (is_classifier_folder(model)) return ModelKind::kCrossEncoder;
  const fs::path dir = model_folder_of(model);
  if (is_multi_vector_folder(dir)) return ModelKind::kMultiVector;
  if (lists_sparse_module(dir)) return ModelKind::kSparse;
  return ModelKind::kDense;
}

const char* capability_name(Capability capability) {
  switch (capability) {
    case Capability::kDense: return "dense";
    case Capability::kSparse: return "sparse";
    case Capability::kPerToken: return "per_token";
    case Capability::kPairScore: return "pair_score";
    case Capability::kMaxSim: return "maxsim";
    case Capability::kClassify: return "classify";
    case Capability::kTokenize: return "tokenize";
  }
  return "";
}

bool has_capability(ModelKind kind, Capability capability) {
  for (Capability c : row_of(kind).capabilities)
    if (c == capability) return true;
  return false;
}

std::string kind_refusal(ModelKind kind, const std::vector<Capability>& any_of, const std::string& who,
                         std::string_view what) {
  std::string needs;
  for (Capability c : any_of) {
    if (has_capability(kind, c)) return "";
    needs += (needs.empty() ? "" : " or ") + std::string(capability_need(c));
  }
  const KindRow& r = row_of(kind);
  return who + " is " + r.phrase + " (kind " + r.name + "): " + std::string(what) + " needs " + needs + "; " + r.serves;
}

Status require_capability(const std::string& model, const std::vector<Capability>& any_of, std::string_view what) {
  const std::string e = kind_refusal(detect_kind(model), any_of, model, what);
  return e.empty() ? Status::Ok() : Unsupported(e);
}

}  // namespace dlrt::embed
