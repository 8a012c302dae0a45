// dlrt serve's per-token routes: a MultiVectorEmbedder behind the server
// (server.h's EmbedModel), POST /embed_all (TEI's shape: per input, a list of
// per-token vectors) for any embedding model, and /rerank by MaxSim for a
// multi-vector model.
#include <algorithm>
#include <numeric>

#include <nlohmann/json.hpp>

#include "embed/serve/body_json.h"
#include "embed/models/multi_vector.h"
#include "embed/serve/route_kinds.h"
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

// An optional boolean field: `def` when absent or null; *error when not a boolean.
bool flag(const json& body, const char* name, bool def, std::string& error) {
  auto f = body.find(name);
  if (f == body.end() || f->is_null()) return def;
  if (!f->is_boolean()) {
    error = std::string("'") + name + "' must be a boolean";
    return def;
  }
  return f->get<bool>();
}

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

EmbedServer::Reply EmbedServer::handle_embed_all(const std::string& body) {
  if (draining()) return error_reply(Api::kTei, 503, "unavailable", "the server is shutting down");
  json req;
  if (std::string e = parse_body_json(body, req); !e.empty()) return error_reply(Api::kTei, 400, "invalid_request_error", e);
  if (!req.is_object()) return error_reply(Api::kTei, 422, "invalid_request_error", "the body must be a JSON object");
  Reply unavailable;
  std::optional<ModelRef> ref = request_model(Api::kTei, req, &unavailable);
  if (!ref) return unavailable;
  const EmbedModel* m = ref->model.get();
  if (std::string e = route_kind_error("/embed_all", m->kind(), model_label(*ref)); !e.empty())
    return error_reply(Api::kTei, 400, "invalid_request_error", e);
  auto in = req.find("inputs");
  std::vector<std::string> texts;
  if (in != req.end() && in->is_string()) {
    texts.push_back(in->get<std::string>());
  } else if (in != req.end() && in->is_array() && !in->empty()) {
    if (in->size() > config_.max_inputs_per_request)
      return error_reply(Api::kTei, 413, "invalid_request_error",
                         std::to_string(in->size()) + " inputs in one request; the limit is " +
                             std::to_string(config_.max_inputs_per_request) + kInputsLimitNote);
    for (size_t i = 0; i < in->size(); ++i) {
      if (!(*in)[i].is_string())
        return error_reply(Api::kTei, 422, "invalid_request_error", "'inputs'[" + std::to_string(i) + "] is not a string");
      texts.push_back((*in)[i].get<std::string>());
    }
  } else if (in != req.end() && in->is_array()) {
    return error_reply(Api::kTei, 400, "empty", "'inputs' is empty: send at least one input");
  } else {
    return error_reply(Api::kTei, 422, "invalid_request_error", "'inputs' must be a string or a non-empty array of strings");
  }
  std::string field_error;
  const bool truncate = flag(req, "truncate", config_.truncate, field_error);
  const bool is_query = flag(req, "is_query", true, field_error);
  if (!field_error.empty()) return error_reply(Api::kTei, 422, "invalid_request_error", field_error);
  if (auto q = req.find("is_query"); q != req.end() && !q->is_null() && !has_capability(m->kind(), Capability::kMaxSim))
    return error_reply(Api::kTei, 422, "invalid_request_error",
                       "'is_query' applies to multi-vector (ColBERT) models only; " + model_label(*ref) + " is not one");
  std::optional<std::string> prompt_name;
  if (auto p = req.find("prompt_name"); p != req.end() && !p->is_null()) {
    if (!p->is_string()) return error_reply(Api::kTei, 422, "invalid_request_error", "'prompt_name' must be a string");
    prompt_name = p->get<std::string>();
  }
  const auto prompt_text = server_util::resolve_prompt(*m, prompt_name, config_.default_prompt_name);
  if (!prompt_text)
    return error_reply(Api::kTei, 422, "invalid_request_error", "the model has no prompt named '" + *prompt_name + "'");
  const std::string& prompt = *prompt_text;
  std::vector<Encoding> batch;
  for (size_t i = 0; i < texts.size(); ++i) {
    bool truncated = false;
    auto enc = m->tokenize_tokens(prompt + texts[i], is_query, &truncated);
    if (!enc.ok()) return tokenize_error(Api::kTei, enc.status());
    // A multi-vector model cuts texts at its query or document length, as PyLate does.
    if (truncated && !truncate && !has_capability(m->kind(), Capability::kMaxSim))
      return error_reply(Api::kTei, 413, "invalid_request_error",
                         "input " + std::to_string(i) + " has more than " + std::to_string(m->max_length()) +
                             " tokens; shorten it or send \"truncate\": true");
    batch.push_back(std::move(enc).value());
  }
  if (auto late = past_deadline(Api::kTei, "tokenizing")) return *late;
  std::vector<std::vector<std::vector<float>>> vectors;
  Status run =
      in_run_slots(*m, batch, [&](const std::vector<Encoding>& chunk, const dlrt::RunOptions& bounds) -> Status {
        auto r = m->embed_tokens(chunk, is_query, bounds);
        if (!r.ok()) return r.status();
        for (auto& v : r->tokens) vectors.push_back(std::move(v));
        return Status::Ok();
      });
  if (!run.ok()) return run_error_reply(Api::kTei, run, "embedding");
  Reply reply;
  reply.body = token_vectors_json(vectors);
  return reply;
}

EmbedServer::Reply EmbedServer::handle_rerank_maxsim(const json& req, const EmbedModel& model) {
  const EmbedModel* m = &model;
  auto q = req.find("query");
  if (q == req.end() || !q->is_string()) return error_reply(Api::kTei, 422, "invalid_request_error", "'query' must be a string");
  auto t = req.find("texts");
  if (t != req.end() && t->is_array() && t->empty())
    return error_reply(Api::kTei, 400, "empty", "'texts' is empty: send at least one text");
  if (t == req.end() || !t->is_array())
    return error_reply(Api::kTei, 422, "invalid_request_error", "'texts' must be a non-empty array of strings");
  if (t->size() > config_.max_inputs_per_request)
    return error_reply(Api::kTei, 413, "invalid_request_error",
                       std::to_string(t->size()) + " texts in one request; the limit is " +
                           std::to_string(config_.max_inputs_per_request) + kInputsLimitNote);
  // raw_scores and truncate are accepted as for a cross-encoder: MaxSim has
  // no activation, and texts are cut at the model's query and document lengths.
  std::string field_error;
  flag(req, "raw_scores", false, field_error);
  flag(req, "truncate", config_.truncate, field_error);
  const bool return_text = flag(req, "return_text", false, field_error);
  if (!field_error.empty()) return error_reply(Api::kTei, 422, "invalid_request_error", field_error);
  auto query = m->tokenize_tokens(q->get<std::string>(), true, nullptr);
  if (!query.ok()) return tokenize_error(Api::kTei, query.status());
  std::vector<Encoding> docs;
  for (size_t i = 0; i < t->size(); ++i) {
    if (!(*t)[i].is_string())
      return error_reply(Api::kTei, 422, "invalid_request_error", "'texts'[" + std::to_string(i) + "] is not a string");
    auto enc = m->tokenize_tokens((*t)[i].get<std::string>(), false, nullptr);
    if (!enc.ok()) return tokenize_error(Api::kTei, enc.status());
    docs.push_back(std::move(enc).value());
  }
  if (auto late = past_deadline(Api::kTei, "tokenizing")) return *late;
  // The query, then the texts in chunks within the batcher's bounds.
  TokenEmbedResult qv;
  Status run = in_run_slot([&](const dlrt::RunOptions& bounds) -> Status {
    auto q = m->embed_tokens({*query}, true, bounds);
    if (!q.ok()) return q.status();
    qv = std::move(q).value();
    return Status::Ok();
  });
  std::vector<float> score;
  score.reserve(docs.size());
  if (run.ok())
    run = in_run_slots(*m, docs, [&](const std::vector<Encoding>& chunk, const dlrt::RunOptions& bounds) -> Status {
      auto d = m->embed_tokens(chunk, false, bounds);
      if (!d.ok()) return d.status();
      for (const auto& doc : d->tokens) score.push_back(maxsim(qv.tokens[0], doc));
      return Status::Ok();
    });
  if (!run.ok()) return run_error_reply(Api::kTei, run, "scoring");
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
