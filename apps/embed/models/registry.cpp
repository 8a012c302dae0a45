// The registry of model kinds (registry.h): one line per kind, its row in its own file.
#include "embed/models/registry.h"

#include "embed/models/classifier.h"
#include "embed/models/multi_vector.h"
#include "embed/models/router.h"
#include "embed/models/token_inputs.h"

namespace dlrt::embed {

// Every kind, in the order detect_kind asks them (the first whose folder test
// answers wins): a CLIP folder has towers no other kind has, an LLM reranker
// is also a classifier folder, a sequence classifier may list modules, and the
// dense row takes any other folder. Each line names `KindRow NAME_row()`,
// defined in its kind's model file (*_model.cpp).
#define DLRT_EMBED_KINDS(X) \
  X(clip) \
  X(llm_reranker) \
  X(cross_encoder) \
  X(multi_vector) \
  X(sparse) \
  X(dense)

#define DLRT_EMBED_DECLARE_ROW(name) KindRow name##_row();
DLRT_EMBED_KINDS(DLRT_EMBED_DECLARE_ROW)
#undef DLRT_EMBED_DECLARE_ROW

const std::vector<KindRow>& kind_rows() {
#define DLRT_EMBED_ROW(name) name##_row(),
  static const std::vector<KindRow> rows = {DLRT_EMBED_KINDS(DLRT_EMBED_ROW)};
#undef DLRT_EMBED_ROW
  return rows;
}

const KindRow& kind_row(ModelKind kind) {
  for (const KindRow& r : kind_rows())
    if (r.kind == kind) return r;
  return kind_rows().back();  // unreachable: every enumerator has a row
}

ModelKind detect_kind(const std::string& model) {
  for (const KindRow& r : kind_rows())
    if (r.detect(model)) return r.kind;
  return ModelKind::kDense;
}

Result<std::shared_ptr<const EmbedModel>> open_model(const std::string& path, const EmbedderOptions& options) {
  const KindRow& row = kind_row(detect_kind(path));
  return row.open(path, options, row.kind);
}

Result<std::shared_ptr<const EmbedModel>> open_model(const std::string& path, const EmbedderOptions& options,
                                                     const std::vector<Capability>& any_of, std::string_view what) {
  const ModelKind kind = detect_kind(path);
  // The last row takes any folder: one without its model file is kNotFound, not a kind
  // (the other rows' detectors found their own files, e.g. CLIP's two towers).
  if (&kind_row(kind) == &kind_rows().back()) DLRT_RETURN_IF_ERROR(find_model_folder(path).status());
  if (std::string refusal = kind_refusal(kind, any_of, path, what); !refusal.empty()) return Unsupported(refusal);
  return kind_row(kind).open(path, options, kind);
}

std::shared_ptr<const EmbedModel> embedder_model(std::shared_ptr<const Embedder> embedder) {
  if (embedder->kind() == ModelKind::kSparse) return sparse_model(std::move(embedder));
  return dense_model(std::move(embedder));
}

Result<std::shared_ptr<const EmbedModel>> open_embedder(const std::string& path, const EmbedderOptions& options,
                                                        ModelKind) {
  DLRT_ASSIGN_OR_RETURN(std::optional<RouterSpec> router, read_router(model_folder_of(path)));
  if (router) return open_router(path, *router, options);
  DLRT_ASSIGN_OR_RETURN(std::unique_ptr<Embedder> e, Embedder::create(path, options));
  return embedder_model(std::shared_ptr<const Embedder>(std::move(e)));
}

Status warm_up(const EmbedModel& model) {
  const char* text = "warm up the model before serving";
  bool truncated = false;
  if (const PairScorer* s = model.as<PairScorer>()) {
    // An LLM reranker takes pairs only; a sequence classifier one text.
    const bool pairs = model.kind() == ModelKind::kLlmReranker;
    DLRT_ASSIGN_OR_RETURN(Encoding enc, pairs ? s->tokenize_pair("warm up", "the model before serving", &truncated)
                                              : model.tokenize(text, &truncated));
    DLRT_ASSIGN_OR_RETURN(auto logits, s->classify({enc}, {}));
    if (logits.size() != 1 || (!pairs && logits[0].size() != s->labels().size()))
      return Internal("warm-up run returned " + std::to_string(logits.size()) + " rows");
    return Status::Ok();
  }
  if (model.as<DenseOut>() == nullptr && model.as<SparseOut>() == nullptr) {
    const PerTokenOut* t = model.as<PerTokenOut>();
    if (!t) return Internal("the model has no capability to warm up");
    DLRT_ASSIGN_OR_RETURN(Encoding query, t->tokenize_tokens(text, true, &truncated));
    DLRT_ASSIGN_OR_RETURN(TokenEmbedResult r, t->embed_tokens({query}, true, {}));
    if (r.tokens.size() != 1 || r.tokens[0].empty() || r.tokens[0][0].size() != model.dimension())
      return Internal("warm-up run returned " + std::to_string(r.tokens.size()) + " token lists");
    return Status::Ok();
  }
  DLRT_ASSIGN_OR_RETURN(Encoding enc, model.tokenize(text, &truncated));
  if (const SparseOut* s = model.as<SparseOut>()) {
    DLRT_ASSIGN_OR_RETURN(SparseResult r, s->encode_sparse({enc}, {}));
    if (r.vectors.size() != 1) return Internal("warm-up run returned " + std::to_string(r.vectors.size()) + " vectors");
    return Status::Ok();
  }
  DLRT_ASSIGN_OR_RETURN(EmbedResult r, model.as<DenseOut>()->embed_encoded({enc}, {}));
  if (r.vectors.size() != 1 || r.vectors[0].size() != model.dimension())
    return Internal("warm-up run returned " + std::to_string(r.vectors.size()) + " vectors");
  return Status::Ok();
}

Result<std::vector<Encoding>> PairScorer::tokenize_rerank_all(std::string_view query,
                                                              const std::vector<std::string>& documents,
                                                              const std::string& instruction,
                                                              std::vector<uint8_t>* truncated) const {
  std::vector<Encoding> out;
  if (truncated) truncated->assign(documents.size(), 0);
  for (size_t i = 0; i < documents.size(); ++i) {
    bool cut = false;
    auto e = tokenize_rerank(query, documents[i], instruction, &cut);
    if (!e.ok()) return e.status();
    if (truncated) (*truncated)[i] = cut ? 1 : 0;
    out.push_back(std::move(e).value());
  }
  return out;
}

}  // namespace dlrt::embed
