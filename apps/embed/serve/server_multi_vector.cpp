// dlrt serve's per-token routes: a MultiVectorEmbedder behind the server
// (server.h's EmbedModel), POST /embed_all (TEI's shape: per input, a list of
// per-token vectors) for any embedding model, and /rerank by MaxSim for a
// multi-vector model.
#include <algorithm>
#include <numeric>

#include <nlohmann/json.hpp>

#include "embed/models/multi_vector.h"
#include "embed/serve/handlers.h"
#include "embed/serve/server.h"
#include "embed/serve/server_util.h"
#include "embed/tokenizer/tokenizer.h"

namespace dlrt::embed {
namespace {

using json = nlohmann::json;

class MultiVectorModel final : public EmbedModel {
 public:
  explicit MultiVectorModel(std::shared_ptr<const MultiVectorEmbedder> m) : m_(std::move(m)) {}
  // /tokenize shows a text as a document.
  Result<Encoding> tokenize(std::string_view text, bool* truncated) const override {
    return m_->tokenize(text, false, truncated);
  }
  Result<EmbedResult> embed_encoded(const std::vector<Encoding>&, const dlrt::RunOptions&) const override {
    return InvalidArgument("the served model is a multi-vector (ColBERT) model: use /embed_all or /rerank");
  }
  ModelKind kind() const override { return ModelKind::kMultiVector; }
  Result<Encoding> tokenize_tokens(std::string_view text, bool is_query, bool* truncated) const override {
    return m_->tokenize(text, is_query, truncated);
  }
  Result<TokenEmbedResult> embed_tokens(const std::vector<Encoding>& batch, bool is_query,
                                        const dlrt::RunOptions& bounds) const override {
    return m_->embed_encoded(batch, is_query, bounds);
  }
  size_t dimension() const override { return m_->dimension(); }
  std::string model_name() const override { return m_->base().model_name(); }
  size_t max_length() const override { return std::max(m_->config().query_length, m_->config().document_length); }
  dlrt::RunReport placement() const override { return m_->base().placement(); }
  bool normalizes() const override { return true; }
  std::string pooling() const override { return "none"; }
  std::optional<std::string> prompt(const std::string& name) const override {
    auto it = m_->base().prompts().find(name);
    if (it == m_->base().prompts().end()) return std::nullopt;
    return it->second;
  }
  std::string default_prompt_name() const override { return m_->base().default_prompt_name(); }
  std::vector<std::string> prompt_names() const override {
    std::vector<std::string> names;
    for (const auto& [name, text] : m_->base().prompts()) names.push_back(name);
    return names;
  }
  size_t vocab_size() const override { return m_->base().tokenizer().vocab_size(); }
  size_t count_tokens(std::string_view text) const override { return m_->base().tokenizer().encode(text, 0).ids.size(); }
  std::string token_text(int64_t id) const override { return m_->base().tokenizer().id_to_token(id); }
  bool is_special_token(int64_t id) const override { return m_->base().tokenizer().is_special(id); }
  Result<std::string> decode(const std::vector<int64_t>& ids, bool skip_special_tokens) const override {
    return m_->base().tokenizer().decode(ids, skip_special_tokens);
  }

 private:
  std::shared_ptr<const MultiVectorEmbedder> m_;
};

// Per input, per token vectors as JSON, floats at float32's shortest precision.
std::string token_vectors_json(const std::vector<std::vector<std::vector<float>>>& inputs) {
  std::string out = "[";
  for (size_t i = 0; i < inputs.size(); ++i) {
    out += i ? ",[" : "[";
    for (size_t t = 0; t < inputs[i].size(); ++t) {
      out += t ? ",[" : "[";
      for (size_t k = 0; k < inputs[i][t].size(); ++k) {
        if (k) out += ',';
        server_util::append_json_float(out, inputs[i][t][k]);
      }
      out += ']';
    }
    out += ']';
  }
  return out + "]";
}

}  // namespace

std::shared_ptr<const EmbedModel> multi_vector_model(std::shared_ptr<const MultiVectorEmbedder> embedder) {
  return std::make_shared<MultiVectorModel>(std::move(embedder));
}

ParseError parse_embed_all(const json& req, size_t max_inputs, EmbedAllRequest* out) {
  if (auto e = read_texts(req, "inputs", true, max_inputs, &out->texts)) return e;
  if (auto e = read_bool(req, "truncate", out->truncate)) return e;
  if (auto e = read_bool(req, "is_query", out->is_query)) return e;
  return read_string(req, "prompt_name", out->prompt_name);
}

Reply handle_embed_all(Call& c, EmbedAllRequest& req) {
  const EmbedModel* m = &c.model();
  const std::vector<std::string>& texts = req.texts;
  const bool truncate = req.truncate.value_or(c.config().truncate);
  const bool is_query = req.is_query.value_or(true);
  if (req.is_query && !has_capability(m->kind(), Capability::kMaxSim))
    return c.invalid("'is_query' applies to multi-vector (ColBERT) models only; " + c.model_label() + " is not one");
  const std::optional<std::string>& prompt_name = req.prompt_name;
  const auto prompt_text = server_util::resolve_prompt(*m, prompt_name, c.config().default_prompt_name);
  if (!prompt_text) return c.invalid("the model has no prompt named '" + *prompt_name + "'");
  const std::string& prompt = *prompt_text;
  std::vector<Encoding> batch;
  for (size_t i = 0; i < texts.size(); ++i) {
    bool truncated = false;
    auto enc = m->tokenize_tokens(prompt + texts[i], is_query, &truncated);
    if (!enc.ok()) return c.tokenize_error(enc.status());
    // A multi-vector model cuts texts at its query or document length, as PyLate does.
    if (truncated && !truncate && !has_capability(m->kind(), Capability::kMaxSim))
      return c.error(413, "invalid_request_error",
                         "input " + std::to_string(i) + " has more than " + std::to_string(m->max_length()) +
                             " tokens; shorten it or send \"truncate\": true");
    batch.push_back(std::move(enc).value());
  }
  if (auto late = c.past_deadline("tokenizing")) return *late;
  std::vector<std::vector<std::vector<float>>> vectors;
  Status run =
      c.in_run_slots(*m, batch, [&](const std::vector<Encoding>& chunk, const dlrt::RunOptions& bounds) -> Status {
        auto r = m->embed_tokens(chunk, is_query, bounds);
        if (!r.ok()) return r.status();
        for (auto& v : r->tokens) vectors.push_back(std::move(v));
        return Status::Ok();
      });
  if (!run.ok()) return c.run_error(run, "embedding");
  Reply reply;
  reply.body = token_vectors_json(vectors);
  return reply;
}

Reply handle_rerank_maxsim(Call& c, RerankRequest& req) {
  // raw_scores and truncate are accepted as for a cross-encoder: MaxSim has
  // no activation, and texts are cut at the model's query and document lengths.
  const EmbedModel* m = &c.model();
  const std::vector<std::string>* t = &req.texts;
  const bool return_text = req.return_text;
  auto query = m->tokenize_tokens(req.query, true, nullptr);
  if (!query.ok()) return c.tokenize_error(query.status());
  std::vector<Encoding> docs;
  for (size_t i = 0; i < t->size(); ++i) {
    auto enc = m->tokenize_tokens((*t)[i], false, nullptr);
    if (!enc.ok()) return c.tokenize_error(enc.status());
    docs.push_back(std::move(enc).value());
  }
  if (auto late = c.past_deadline("tokenizing")) return *late;
  // The query, then the texts in chunks within the batcher's bounds.
  TokenEmbedResult qv;
  Status run = c.in_run_slot([&](const dlrt::RunOptions& bounds) -> Status {
    auto q = m->embed_tokens({*query}, true, bounds);
    if (!q.ok()) return q.status();
    qv = std::move(q).value();
    return Status::Ok();
  });
  std::vector<float> score;
  score.reserve(docs.size());
  if (run.ok())
    run = c.in_run_slots(*m, docs, [&](const std::vector<Encoding>& chunk, const dlrt::RunOptions& bounds) -> Status {
      auto d = m->embed_tokens(chunk, false, bounds);
      if (!d.ok()) return d.status();
      for (const auto& doc : d->tokens) score.push_back(maxsim(qv.tokens[0], doc));
      return Status::Ok();
    });
  if (!run.ok()) return c.run_error(run, "scoring");
  std::vector<size_t> order(docs.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return score[a] > score[b]; });
  json out = json::array();
  for (size_t i : order) {
    json r = {{"index", i}, {"score", score[i]}};
    if (return_text) r["text"] = (*t)[i];
    out.push_back(std::move(r));
  }
  Reply reply;
  reply.body = server_util::dump_json(out);
  return reply;
}

}  // namespace dlrt::embed
