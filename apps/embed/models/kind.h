// What a model folder is (its kind), what each kind can do (its capabilities),
// and the one refusal every route and entry point gives for a kind that
// lacks what it needs. The kinds' rows (names, capabilities, how a folder is
// recognised and opened) are the registry's (registry.h): serve, the CLI, Python and
// the C API open there and tell kinds apart only by their capabilities.
//
// Thread-safety: free of shared state.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "dlrt/status.h"

namespace dlrt::embed {

// dense: Transformer + Pooling (sentence-transformers), or StaticEmbedding, one vector per text.
// sparse: SPLADE (MLMTransformer + SpladePooling) or SparseStaticEmbedding, one vocabulary-wide
// vector per text (sparse.h, static_embedding.h).
// multi_vector: ColBERT / PyLate, one vector per token (multi_vector.h).
// cross_encoder: a sequence classifier (config.json's *ForSequenceClassification), logits per text or pair.
// llm_reranker: a causal LM scoring (query, document) pairs by its answer tokens (llm_reranker.h).
// clip: CLIP's text and vision towers, texts and images into one space (clip.h).
// Open: a kind added in its own file names its value there, past these
// (`constexpr ModelKind kMine{6};`, a value no other row has: EmbedKind.RegistryRowsAreDistinctKinds);
// its registry row gives it its names.
enum class ModelKind : int { kDense, kSparse, kMultiVector, kCrossEncoder, kLlmReranker, kClip };
// "dense", "sparse", "multi_vector", "cross_encoder", "llm_reranker", "clip".
const char* model_kind_name(ModelKind kind);
// How a message names the kind: "a dense embedding model", "a sparse (SPLADE) encoder", ...
const char* model_kind_phrase(ModelKind kind);

// The kind of the folder `model` names (a folder, or its model file), from its
// files: an LLM reranker (llm_reranker.h), else a sequence classifier, else a
// multi-vector folder, else sparse when modules.json lists SpladePooling or
// SparseStaticEmbedding, else
// dense. Reads only small JSON files; a file it cannot read counts as absent
// (the loader then reports it).
ModelKind detect_kind(const std::string& model);

// What a request or an entry point needs of a model.
enum class Capability {
  kDense,      // text in -> one dense vector (/embed, /v1/embeddings, /similarity, dlrt embed)
  kSparse,     // text in -> one sparse vector (/embed_sparse, "encoding_format": "sparse", --sparse)
  kPerToken,   // text in -> one vector per token (/embed_all, dlrt embed --tokens)
  kPairScore,  // (query, document) in -> one score (/rerank, /v1/rerank, dlrt rerank)
  kMaxSim,     // query and document token vectors -> one late-interaction score (/rerank, dlrt rerank)
  kClassify,   // text or pair in -> logits per label (/predict)
  kTokenize,   // text in -> tokens (/tokenize, /decode)
  kImage,      // image in -> one dense vector (/embed and /v1/embeddings image inputs, dlrt embed --image)
};
const char* capability_name(Capability capability);  // "dense", "sparse", "per_token", ...

bool has_capability(ModelKind kind, Capability capability);

// "" when `kind` has one of `any_of`; else the one message a route or entry
// point answers: "<who> is <kind phrase> (kind KIND): <what> needs <capability>;
// <what the kind serves>". `who` names the model ("model 'x'", "the served
// model", a folder), `what` the route or command ("/embed_all", "dlrt embed").
std::string kind_refusal(ModelKind kind, const std::vector<Capability>& any_of, const std::string& who,
                         std::string_view what);

// kUnsupported with kind_refusal's message for the model folder `model`
// opened by an entry point that needs one of `any_of` (Ok when its kind has one).
Status require_capability(const std::string& model, const std::vector<Capability>& any_of, std::string_view what);

}  // namespace dlrt::embed
