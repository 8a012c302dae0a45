// The kinds' names and capabilities (kind.h), read from the registry's table (registry.cpp).
#include "embed/models/kind.h"

#include <vector>

#include "embed/models/registry.h"

namespace dlrt::embed {

namespace {

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
    case Capability::kImage: return "an image embedding model (CLIP)";
  }
  return "";
}

}  // namespace

const char* model_kind_name(ModelKind kind) { return kind_row(kind).name; }
const char* model_kind_phrase(ModelKind kind) { return kind_row(kind).phrase; }

const char* capability_name(Capability capability) {
  switch (capability) {
    case Capability::kDense: return "dense";
    case Capability::kSparse: return "sparse";
    case Capability::kPerToken: return "per_token";
    case Capability::kPairScore: return "pair_score";
    case Capability::kMaxSim: return "maxsim";
    case Capability::kClassify: return "classify";
    case Capability::kTokenize: return "tokenize";
    case Capability::kImage: return "image";
  }
  return "";
}

bool has_capability(ModelKind kind, Capability capability) {
  for (Capability c : kind_row(kind).capabilities)
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
  const KindRow& r = kind_row(kind);
  return who + " is " + r.phrase + " (kind " + r.name + "): " + std::string(what) + " needs " + needs + "; " + r.serves;
}

Status require_capability(const std::string& model, const std::vector<Capability>& any_of, std::string_view what) {
  const std::string e = kind_refusal(detect_kind(model), any_of, model, what);
  return e.empty() ? Status::Ok() : Unsupported(e);
}

}  // namespace dlrt::embed
