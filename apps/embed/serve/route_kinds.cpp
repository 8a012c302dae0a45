// The capability each model route needs (see route_kinds.h).
#include "embed/serve/route_kinds.h"

namespace dlrt::embed {

namespace {
constexpr const char* kSparseVariant = "\"encoding_format\": \"sparse\"";
}  // namespace

const std::vector<RouteNeeds>& route_needs() {
  using C = Capability;
  static const std::vector<RouteNeeds> rows = {
      {"/v1/embeddings", "", {C::kDense}},
      {"/v1/embeddings", kSparseVariant, {C::kSparse}},
      {"/embeddings", "", {C::kDense}},
      {"/embeddings", kSparseVariant, {C::kSparse}},
      {"/embed", "", {C::kDense}},
      {"/embed_sparse", "", {C::kSparse}},
      {"/embed_all", "", {C::kPerToken}},
      {"/similarity", "", {C::kDense}},
      {"/tokenize", "", {C::kTokenize}},
      {"/decode", "", {C::kTokenize}},
      {"/rerank", "", {C::kPairScore, C::kMaxSim}},
      {"/v1/rerank", "", {C::kPairScore}},
      {"/predict", "", {C::kClassify}},
  };
  return rows;
}

const RouteNeeds* find_route_needs(std::string_view path, bool sparse) {
  const RouteNeeds* plain = nullptr;
  for (const RouteNeeds& r : route_needs()) {
    if (path != r.path) continue;
    if (sparse && *r.variant) return &r;
    if (!*r.variant) plain = &r;
  }
  return plain;
}

std::string route_kind_error(std::string_view path, ModelKind kind, const std::string& who, bool sparse) {
  const RouteNeeds* r = find_route_needs(path, sparse);
  if (!r) return "";
  std::string what(path);
  if (*r->variant) what += std::string(" with ") + r->variant;
  return kind_refusal(kind, r->any_of, who, what);
}

}  // namespace dlrt::embed
