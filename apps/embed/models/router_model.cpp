// A Router folder's model (router.h): an Embedder per route; a batch's
// encodings run through the route each was tokenized for, and come back in
// the batch's order.
#include <algorithm>
#include <map>
#include <memory>
#include <utility>

#include "embed/models/embedder_model.h"
#include "embed/models/registry.h"
#include "embed/models/router.h"
#include "embed/models/token_inputs.h"

namespace dlrt::embed {
namespace {

class RouterModel final : public TokenizerModel, public DenseOut, public SparseOut, public PerTokenOut {
 public:
  RouterModel(RouterSpec spec, std::vector<std::shared_ptr<const Embedder>> routes, std::string name, size_t first)
      : spec_(std::move(spec)), routes_(std::move(routes)), name_(std::move(name)), first_(first) {
    all_normalize_ = std::all_of(routes_.begin(), routes_.end(), [](const auto& e) { return e->normalize(); });
  }
  Status read_top(const std::filesystem::path& dir) {
    return read_prompts(dir, prompts_, default_prompt_, similarity_);
  }

  ModelKind kind() const override { return routes_[0]->kind(); }
  Result<Encoding> tokenize(std::string_view text, bool* truncated) const override {
    size_t tokens = 0;
    return tokenize_for(text, std::nullopt, truncated, &tokens);
  }
  Result<Encoding> tokenize_counted(std::string_view text, bool* truncated, size_t* tokens) const override {
    return tokenize_for(text, std::nullopt, truncated, tokens);
  }
  Result<Encoding> tokenize_for(std::string_view text, std::optional<bool> is_query, bool* truncated,
                                size_t* tokens) const override {
    DLRT_ASSIGN_OR_RETURN(size_t r, spec_.resolve(is_query));
    const Embedder& e = *routes_[r];
    DLRT_ASSIGN_OR_RETURN(
        Encoding enc,
        encode_within(
            e.max_length(), truncated,
            [&](size_t limit, size_t* n) { return e.tokenizer().encode_checked(text, limit, nullptr, n); }, tokens));
    enc.route = static_cast<uint8_t>(r + 1);
    return enc;
  }
  Result<Encoding> tokenize_with_offsets(std::string_view text,
                                         std::vector<std::pair<size_t, size_t>>& offsets) const override {
    DLRT_ASSIGN_OR_RETURN(Encoding enc, first().tokenizer().encode_checked(text, first().max_length(), &offsets));
    enc.route = static_cast<uint8_t>(first_ + 1);
    return enc;
  }
  size_t dimension() const override { return routes_[0]->dimension(); }
  std::string model_name() const override { return name_; }
  size_t max_length() const override {
    size_t n = 0;
    for (const auto& e : routes_) n = std::max(n, e->max_length());
    return n;
  }
  // The placement and precision of a route with a session (a static route has none).
  dlrt::RunReport placement() const override { return with_session().placement(); }
  const dlrt::PrecisionChoice* precision_choice() const override { return &with_session().precision_choice(); }
  size_t token_row_bytes() const override {
    size_t n = 0;
    for (const auto& e : routes_) n = std::max(n, e->token_row_bytes());
    return n;
  }
  // Routes that differ in normalising normalise their own vectors (embed_encoded).
  bool normalizes() const override { return all_normalize_; }
  std::string pooling() const override {
    return kind() == ModelKind::kSparse ? "splade" : pooling_name(first().pooling());
  }
  bool batch_dependent() const override {
    return std::any_of(routes_.begin(), routes_.end(), [](const auto& e) { return e->runs_alone(); });
  }
  std::string batching() const override { return with_session().batching(); }
  std::optional<std::string> prompt(const std::string& name) const override {
    auto it = prompts_.find(name);
    if (it == prompts_.end()) return std::nullopt;
    return it->second;
  }
  std::string default_prompt_name() const override { return default_prompt_; }
  std::vector<std::string> prompt_names() const override {
    std::vector<std::string> names;
    for (const auto& [name, text] : prompts_) names.push_back(name);
    return names;
  }
  std::string similarity_fn_name() const override { return similarity_; }

  Result<EmbedResult> embed_encoded(const std::vector<Encoding>& batch, const dlrt::RunOptions& bounds) const override {
    EmbedResult out;
    out.vectors.resize(batch.size());
    DLRT_RETURN_IF_ERROR(
        by_route(batch, [&](size_t r, const std::vector<Encoding>& part, const std::vector<size_t>& at) {
          const bool own = !all_normalize_ && routes_[r]->normalize();
          DLRT_ASSIGN_OR_RETURN(EmbedResult res, routes_[r]->embed_encoded(part, own, bounds));
          for (size_t k = 0; k < at.size(); ++k) out.vectors[at[k]] = std::move(res.vectors[k]);
          out.total_tokens += res.total_tokens;
          out.report = std::move(res.report);
          return Status::Ok();
        }));
    return out;
  }
  Result<SparseResult> encode_sparse(const std::vector<Encoding>& batch,
                                     const dlrt::RunOptions& bounds) const override {
    SparseResult out;
    out.vectors.resize(batch.size());
    DLRT_RETURN_IF_ERROR(
        by_route(batch, [&](size_t r, const std::vector<Encoding>& part, const std::vector<size_t>& at) {
          DLRT_ASSIGN_OR_RETURN(SparseResult res, routes_[r]->encode_sparse_encoded(part, 0, bounds));
          for (size_t k = 0; k < at.size(); ++k) out.vectors[at[k]] = std::move(res.vectors[k]);
          out.total_tokens += res.total_tokens;
          out.report = std::move(res.report);
          return Status::Ok();
        }));
    return out;
  }
  const SpladePooling* splade_pooling() const override { return first().splade_pooling(); }
  size_t token_dimension() const override { return first().hidden_size(); }
  Result<Encoding> tokenize_tokens(std::string_view text, bool, bool* truncated) const override {
    return tokenize(text, truncated);
  }
  Result<TokenEmbedResult> embed_tokens(const std::vector<Encoding>& batch, bool,
                                        const dlrt::RunOptions& bounds) const override {
    TokenEmbedResult out;
    out.tokens.resize(batch.size());
    DLRT_RETURN_IF_ERROR(
        by_route(batch, [&](size_t r, const std::vector<Encoding>& part, const std::vector<size_t>& at) {
          DLRT_ASSIGN_OR_RETURN(TokenEmbedResult res, routes_[r]->embed_tokens(part, bounds));
          for (size_t k = 0; k < at.size(); ++k) out.tokens[at[k]] = std::move(res.tokens[k]);
          out.total_tokens += res.total_tokens;
          out.report = std::move(res.report);
          return Status::Ok();
        }));
    return out;
  }

 protected:
  const Tokenizer& tokenizer() const override { return first().tokenizer(); }

 private:
  const Embedder& first() const { return *routes_[first_]; }
  const Embedder& with_session() const {
    for (const auto& e : routes_)
      if (e->token_row_bytes() > 0) return *e;
    return first();
  }
  // fn(route, its encodings, their places in `batch`) for each route in the batch.
  template <class Fn>
  Status by_route(const std::vector<Encoding>& batch, Fn fn) const {
    std::map<size_t, std::vector<size_t>> groups;
    for (size_t i = 0; i < batch.size(); ++i) {
      const size_t r = batch[i].route == 0 ? first_ : batch[i].route - 1u;
      if (r >= routes_.size())
        return InvalidArgument("an input names route " + std::to_string(r) + "; the Router has " +
                               std::to_string(routes_.size()));
      groups[r].push_back(i);
    }
    for (const auto& [r, at] : groups) {
      std::vector<Encoding> part;
      part.reserve(at.size());
      for (size_t i : at) part.push_back(batch[i]);
      DLRT_RETURN_IF_ERROR(fn(r, part, at));
    }
    return Status::Ok();
  }

  RouterSpec spec_;
  std::vector<std::shared_ptr<const Embedder>> routes_;
  std::string name_;
  size_t first_;  // the route of encode() without a task (the first route when there is none)
  bool all_normalize_ = false;
  std::map<std::string, std::string> prompts_;
  std::string default_prompt_, similarity_ = "cosine";
};

}  // namespace

Result<std::shared_ptr<const EmbedModel>> open_router(const std::string& path, const RouterSpec& spec,
                                                      const EmbedderOptions& options) {
  DLRT_ASSIGN_OR_RETURN(ModelFile file, find_model_folder(path));
  if (spec.routes.size() > 255)  // Encoding::route holds a route in a byte
    return Unsupported(spec.config.string() + ": " + std::to_string(spec.routes.size()) +
                       " routes; dlrt takes at most 255");
  std::vector<std::shared_ptr<const Embedder>> routes;
  for (const RouterSpec::Route& route : spec.routes) {
    EmbedderOptions o = options;
    o.modules = &route.modules;
    auto e = Embedder::create_transformer(route.modules[0].dir.string(), o);
    if (!e.ok()) return e.status().with_context("the Router's route \"" + route.name + "\"");
    const Embedder& made = **e;
    if (!routes.empty() && (made.kind() != routes[0]->kind() || made.dimension() != routes[0]->dimension()))
      return Unsupported(spec.config.string() + ": the route \"" + route.name + "\" gives " +
                         model_kind_name(made.kind()) + " vectors of " + std::to_string(made.dimension()) +
                         " values but the route \"" + spec.routes[0].name + "\" " + model_kind_name(routes[0]->kind()) +
                         " vectors of " + std::to_string(routes[0]->dimension()) +
                         " (dlrt serves one kind and size per model)");
    routes.push_back(std::shared_ptr<const Embedder>(std::move(e).value()));
  }
  auto first = spec.resolve(std::nullopt);
  auto model = std::make_shared<RouterModel>(spec, std::move(routes), file.name, first.ok() ? *first : 0);
  DLRT_RETURN_IF_ERROR(model->read_top(file.dir));
  return std::shared_ptr<const EmbedModel>(std::move(model));
}

}  // namespace dlrt::embed
