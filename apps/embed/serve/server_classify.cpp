// dlrt serve's scoring routes: POST /rerank and POST /predict in TEI's
// request and answer shapes, POST /v1/rerank and /v2/rerank in Cohere's and
// Jina's, for sequence classifiers (cross-encoders) and LLM rerankers, and
// /rerank by MaxSim for a multi-vector model: their parsers and handlers (handlers.h).
#include <httplib.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include <nlohmann/json.hpp>

#include "embed/models/multi_vector.h"
#include "embed/models/prepare_inputs.h"
#include "embed/serve/handlers.h"
#include "embed/serve/server.h"
#include "embed/serve/server_util.h"

namespace dlrt::embed {
namespace {

using json = nlohmann::json;

// A row's scores: the logits when `raw`, else the activation the folder names
// for sentence-transformers' CrossEncoder (score_activation.h), except that
// an Identity over several labels gives TEI's softmax.
std::vector<float> scores(std::vector<float> row, bool raw, const ScoreActivation& activation) {
  if (raw) return row;
  ScoreActivation softmax;
  softmax.softmax = true;
  (row.size() > 1 && activation.is_identity() ? softmax : activation).apply(row.data(), row.size());
  return row;
}

// A document object's "text" when it is a string, else null.
const json* document_text(const json& v) {
  auto f = v.find("text");
  return f != v.end() && f->is_string() ? &*f : nullptr;
}

// What both rerank routes share: `query` against each document (model m's
// pair or LLM-reranker prompt, `instruction` for the latter), over-long pairs
// cut when `truncate`, else a 413; the run takes a shared slot. Fills `score`
// (the folder's activation of the one logit, or the logit when `raw`) and `tokens`; the reply
// is an error when its status is not 200.
Reply score_documents(const Call& c, const std::string& query, const std::vector<std::string>& documents,
                      const std::string& instruction, bool truncate, bool raw, std::vector<float>& score,
                      size_t& tokens) {
  const EmbedModel& m = c.model();
  const PairScorer* scorer = m.as<PairScorer>();
  if (!scorer) return c.no_capability();
  std::vector<uint8_t> truncated;
  auto encoded = scorer->tokenize_rerank_all(query, documents, instruction, &truncated);
  if (!encoded.ok() && encoded.status().code() == StatusCode::kOutOfRange)
    return c.error(413, "invalid_request_error", encoded.status().message());
  if (!encoded.ok()) return c.tokenize_error(encoded.status());
  std::vector<Encoding>& batch = *encoded;
  if (auto late = c.past_deadline("tokenizing")) return *late;
  tokens = 0;
  for (size_t i = 0; i < batch.size(); ++i) {
    if (truncated[i] && !truncate)
      return c.error(413, "invalid_request_error",
                         "the query with document " + std::to_string(i) + " has more than " +
                             std::to_string(m.max_length()) + " tokens; shorten it or send \"truncate\": true");
    tokens += batch[i].ids.size();
  }
  score.clear();
  score.reserve(batch.size());
  const ScoreActivation activation = scorer->score_activation();
  Status run =
      c.in_run_slots(m, batch, [&](const std::vector<Encoding>& chunk, const dlrt::RunOptions& bounds) -> Status {
        auto logits = scorer->classify(chunk, bounds);
        if (!logits.ok()) return logits.status();
        for (const auto& row : *logits) score.push_back(scores(row, raw, activation)[0]);
        return Status::Ok();
      });
  if (!run.ok()) return c.run_error(run, "scoring");
  return Reply{};
}

// Indices 0..n-1 by score, highest first (ties in input order).
std::vector<size_t> by_score(const std::vector<float>& score) {
  std::vector<size_t> order(score.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return score[a] > score[b]; });
  return order;
}

// /rerank of a model with the kMaxSim capability: the query's and each
// text's token vectors, scored by MaxSim (MeanMaxSim for a folder naming it).
Reply rerank_by_maxsim(Call& c, RerankRequest& req) {
  // raw_scores and truncate are accepted as for a cross-encoder: MaxSim has
  // no activation, and texts are cut at the model's query and document lengths.
  const EmbedModel* m = &c.model();
  const PerTokenOut* per_token = m->as<PerTokenOut>();
  if (!per_token) return c.no_capability();
  const std::vector<std::string>* t = &req.texts;
  const bool return_text = req.return_text;
  auto query = per_token->tokenize_tokens(per_token_task_prompt(*m, true) + req.query, true, nullptr);
  if (!query.ok()) return c.tokenize_error(query.status());
  std::vector<Encoding> docs;
  const std::string document_prompt = per_token_task_prompt(*m, false);
  for (size_t i = 0; i < t->size(); ++i) {
    auto enc = per_token->tokenize_tokens(document_prompt + (*t)[i], false, nullptr);
    if (!enc.ok()) return c.tokenize_error(enc.status());
    docs.push_back(std::move(enc).value());
  }
  if (auto late = c.past_deadline("tokenizing")) return *late;
  // The query, then the texts in chunks within the batcher's bounds.
  TokenEmbedResult qv;
  Status run = c.in_run_slot([&](const dlrt::RunOptions& bounds) -> Status {
    auto q = per_token->embed_tokens({*query}, true, bounds);
    if (!q.ok()) return q.status();
    qv = std::move(q).value();
    return Status::Ok();
  });
  const std::string fn = m->similarity_fn_name();  // "maxsim" or 6.x's "meanmaxsim"
  std::vector<float> score;
  score.reserve(docs.size());
  if (run.ok())
    run = c.in_run_slots(*m, docs, [&](const std::vector<Encoding>& chunk, const dlrt::RunOptions& bounds) -> Status {
      auto d = per_token->embed_tokens(chunk, false, bounds);
      if (!d.ok()) return d.status();
      for (const auto& doc : d->tokens) score.push_back(late_interaction_score(fn, qv.tokens[0], doc));
      return Status::Ok();
    });
  if (!run.ok()) return c.run_error(run, "scoring");
  json out = json::array();
  for (size_t i : by_score(score)) {
    json r = {{"index", i}, {"score", score[i]}};
    if (return_text) r["text"] = (*t)[i];
    out.push_back(std::move(r));
  }
  Reply reply;
  reply.body = server_util::dump_json(out);
  return reply;
}

}  // namespace

std::string one_score_check(const EmbedModel& m, const std::string& who, const char* route) {
  const PairScorer* scorer = m.as<PairScorer>();
  if (!scorer) return "";  // one MaxSim score per text
  if (const size_t labels = scorer->labels().size(); labels != 1)
    return who + " is a classifier with " + std::to_string(labels) + " labels; " + route +
           " needs a model with one score (use /predict)";
  return "";
}

ParseError parse_rerank(const json& req, size_t max_inputs, RerankRequest* out) {
  auto q = req.find("query");
  if (q == req.end() || !q->is_string()) return RequestError{422, "'query' must be a string"};
  out->query = q->get<std::string>();
  if (auto e = read_texts(req, "texts", false, max_inputs, &out->texts)) return e;
  std::optional<bool> raw, return_text;
  std::optional<std::string> instruction;
  if (auto e = read_bool(req, "raw_scores", raw)) return e;
  if (auto e = read_bool(req, "return_text", return_text)) return e;
  if (auto e = read_bool(req, "truncate", out->truncate)) return e;
  if (auto e = read_string(req, "instruction", instruction)) return e;
  out->raw_scores = raw.value_or(false);
  out->return_text = return_text.value_or(false);
  out->instruction = instruction.value_or("");
  return std::nullopt;
}

Reply handle_rerank(Call& c, RerankRequest& req) {
  if (!c.model().as<PairScorer>()) return rerank_by_maxsim(c, req);  // the route's opening let kMaxSim in
  const bool truncate = req.truncate.value_or(c.config().truncate);
  const std::vector<std::string>& texts = req.texts;
  std::vector<float> score;
  size_t tokens = 0;
  if (Reply r = score_documents(c, req.query, texts, req.instruction, truncate, req.raw_scores, score, tokens);
      r.status != 200)
    return r;
  json out = json::array();
  for (size_t i : by_score(score)) {
    json r = {{"index", i}, {"score", score[i]}};
    if (req.return_text) r["text"] = texts[i];
    out.push_back(std::move(r));
  }
  Reply reply;
  reply.body = server_util::dump_json(out);
  return reply;
}

ParseError parse_v1_rerank(const json& req, size_t max_inputs, V1RerankRequest* out) {
  auto q = req.find("query");
  if (q == req.end() || !q->is_string()) return RequestError{422, "'query' must be a string"};
  out->query = q->get<std::string>();
  auto d = req.find("documents");
  if (d != req.end() && d->is_array() && d->empty())
    return RequestError{400, "'documents' is empty: send at least one document", "empty"};
  if (d == req.end() || !d->is_array())
    return RequestError{422, "'documents' must be a non-empty array of strings or {\"text\": string} objects"};
  if (d->size() > max_inputs) return too_many_inputs(d->size(), "documents", max_inputs);
  std::optional<bool> return_documents, truncate;
  std::optional<std::string> instruction, model;
  if (auto e = read_bool(req, "return_documents", return_documents)) return e;
  if (auto e = read_bool(req, "truncate", truncate)) return e;
  if (auto e = read_string(req, "instruction", instruction)) return e;
  if (auto e = read_string(req, "model", model)) return e;  // checked for its type; find_model chose the model
  out->return_documents = return_documents.value_or(false);
  out->truncate = truncate.value_or(true);
  out->instruction = instruction.value_or("");
  out->top_n = d->size();
  if (auto n = req.find("top_n"); n != req.end() && !n->is_null()) {
    if (!n->is_number_integer() || n->get<int64_t>() < 1) return RequestError{422, "'top_n' must be an integer >= 1"};
    out->top_n = std::min(out->top_n, static_cast<size_t>(n->get<int64_t>()));
  }
  for (size_t i = 0; i < d->size(); ++i) {
    const json& v = (*d)[i];
    const json* text = v.is_object() ? document_text(v) : nullptr;
    if (v.is_string()) out->documents.push_back(v.get<std::string>());
    else if (text) out->documents.push_back(text->get<std::string>());
    else
      return RequestError{422, "'documents'[" + std::to_string(i) +
                                   "] is neither a string nor an object with a \"text\" string"};
  }
  return std::nullopt;
}

namespace {

// The documents of `req` ranked (/v1/rerank's answer), or the error reply.
std::optional<Reply> ranked_documents(Call& c, V1RerankRequest& req, json& out) {
  const std::vector<std::string>& docs = req.documents;
  std::vector<float> score;
  size_t tokens = 0;
  if (Reply r = score_documents(c, req.query, docs, req.instruction, req.truncate, false, score, tokens);
      r.status != 200)
    return r;
  json results = json::array();
  for (size_t i : by_score(score)) {
    if (results.size() == req.top_n) break;
    json r = {{"index", i}, {"relevance_score", score[i]}};
    if (req.return_documents) r["document"] = {{"text", docs[i]}};
    results.push_back(std::move(r));
  }
  out = {{"model", c.ref().name}, {"results", std::move(results)}, {"usage", {{"total_tokens", tokens}}}};
  return std::nullopt;
}

}  // namespace

Reply handle_v1_rerank(Call& c, V1RerankRequest& req) {
  json out;
  if (auto error = ranked_documents(c, req, out)) return *error;
  Reply reply;
  reply.body = server_util::dump_json(out);
  return reply;
}

ParseError parse_v2_rerank(const json& req, size_t max_inputs, V1RerankRequest* out) {
  if (auto m = req.find("max_tokens_per_doc"); m != req.end() && !m->is_null())
    return RequestError{422, "'max_tokens_per_doc' is not supported: dlrt cuts each (query, document) pair at the "
                             "model's maximum length, as /v1/rerank does; leave it out"};
  return parse_v1_rerank(req, max_inputs, out);
}

Reply handle_v2_rerank(Call& c, V1RerankRequest& req) {
  json out;
  if (auto error = ranked_documents(c, req, out)) return *error;
  out["meta"] = {{"api_version", {{"version", "2"}}}};
  Reply reply;
  reply.body = server_util::dump_json(out);
  return reply;
}

ParseError parse_predict(const json& req, size_t max_inputs, PredictRequest* out) {
  auto in = req.find("inputs");
  if (in == req.end()) return RequestError{422, "missing field 'inputs'"};
  std::optional<bool> raw;
  if (auto e = read_bool(req, "raw_scores", raw)) return e;
  if (auto e = read_bool(req, "truncate", out->truncate)) return e;
  out->raw_scores = raw.value_or(false);
  // "text", ["a", "b"] (one pair), or a batch: [["text"], ["a", "b"], "text", ...].
  using Item = PredictRequest::Item;
  auto item_of = [](const json& v, Item& out) {
    if (v.is_string()) return out.first = v.get<std::string>(), true;
    if (v.is_array() && (v.size() == 1 || v.size() == 2) && v[0].is_string() && (v.size() == 1 || v[1].is_string())) {
      out.first = v[0].get<std::string>();
      out.pair = v.size() == 2;
      if (out.pair) out.second = v[1].get<std::string>();
      return true;
    }
    return false;
  };
  std::vector<Item>& items = out->items;
  Item one;
  if (item_of(*in, one) && !(in->is_array() && in->size() == 1)) {
    items.push_back(one);
  } else if (in->is_array() && !in->empty()) {
    out->batch = true;
    if (in->size() > max_inputs) return too_many_inputs(in->size(), "inputs", max_inputs);
    for (size_t i = 0; i < in->size(); ++i) {
      Item it;
      if (!item_of((*in)[i], it))
        return RequestError{422, "'inputs'[" + std::to_string(i) + "] is not a text, [text] or [text, text]"};
      items.push_back(std::move(it));
    }
  } else {
    return RequestError{422, "'inputs' must be a text, a pair [text, text], or a non-empty list of them"};
  }
  return std::nullopt;
}

Reply handle_predict(Call& c, PredictRequest& req) {
  const EmbedModel* m = &c.model();
  const PairScorer* scorer = m->as<PairScorer>();
  if (!scorer) return c.no_capability();
  const bool raw = req.raw_scores;
  const bool truncate = req.truncate.value_or(c.config().truncate);
  const std::vector<PredictRequest::Item>& items = req.items;
  std::vector<Encoding> batch;
  for (size_t i = 0; i < items.size(); ++i) {
    bool truncated = false;
    auto enc = items[i].pair ? scorer->tokenize_pair(items[i].first, items[i].second, &truncated)
                             : m->tokenize(items[i].first, &truncated);
    if (!enc.ok()) return c.tokenize_error(enc.status());
    if (truncated && !truncate)
      return c.error(413, "invalid_request_error",
                         "input " + std::to_string(i) + " has more than " + std::to_string(m->max_length()) +
                             " tokens; shorten it or send \"truncate\": true");
    batch.push_back(std::move(enc).value());
  }
  if (auto late = c.past_deadline("tokenizing")) return *late;
  std::vector<std::vector<float>> logits;
  Status run =
      c.in_run_slots(*m, batch, [&](const std::vector<Encoding>& chunk, const dlrt::RunOptions& bounds) -> Status {
        auto rows = scorer->classify(chunk, bounds);
        if (!rows.ok()) return rows.status();
        for (auto& row : *rows) logits.push_back(std::move(row));
        return Status::Ok();
      });
  if (!run.ok()) return c.run_error(run, "scoring");
  const std::vector<std::string> labels = scorer->labels();
  const ScoreActivation activation = scorer->score_activation();
  json out = json::array();
  for (const auto& row : logits) {
    const std::vector<float> s = scores(row, raw, activation);
    std::vector<size_t> order(s.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return s[a] > s[b]; });
    json preds = json::array();
    for (size_t k : order) preds.push_back({{"score", s[k]}, {"label", k < labels.size() ? labels[k] : ""}});
    out.push_back(std::move(preds));
  }
  Reply reply;
  reply.body = server_util::dump_json(req.batch ? out : out[0]);
  return reply;
}

}  // namespace dlrt::embed
