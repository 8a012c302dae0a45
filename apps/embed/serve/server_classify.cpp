// dlrt serve's routes for sequence classifiers (cross-encoders) and LLM
// rerankers: POST /rerank and POST /predict in TEI's request and answer shapes,
// POST /v1/rerank in Cohere's and Jina's (see server.h).
#include <httplib.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include <nlohmann/json.hpp>

#include "embed/serve/body_json.h"
#include "embed/serve/route_kinds.h"
#include "embed/serve/server.h"
#include "embed/serve/server_util.h"

namespace dlrt::embed {
namespace {

using json = nlohmann::json;

// Softmax over a row of logits, or the sigmoid of a single one (TEI's scores).
std::vector<float> scores(const std::vector<float>& logits, bool raw) {
  if (raw) return logits;
  if (logits.size() == 1) return {static_cast<float>(1 / (1 + std::exp(-static_cast<double>(logits[0]))))};
  const double top = *std::max_element(logits.begin(), logits.end());
  std::vector<double> e(logits.size());
  double sum = 0;
  for (size_t i = 0; i < logits.size(); ++i) sum += (e[i] = std::exp(logits[i] - top));
  std::vector<float> out(logits.size());
  for (size_t i = 0; i < logits.size(); ++i) out[i] = static_cast<float>(e[i] / sum);
  return out;
}

// A document object's "text" when it is a string, else null.
const json* document_text(const json& v) {
  auto f = v.find("text");
  return f != v.end() && f->is_string() ? &*f : nullptr;
}

bool optional_bool(const json& body, const char* name, bool def, std::string& error) {
  auto f = body.find(name);
  if (f == body.end() || f->is_null()) return def;
  if (!f->is_boolean()) {
    error = std::string("'") + name + "' must be a boolean";
    return def;
  }
  return f->get<bool>();
}

}  // namespace

EmbedServer::Reply EmbedServer::score_documents(Api api, const EmbedModel& m, const std::string& query,
                                                const std::vector<std::string>& documents,
                                                const std::string& instruction, bool truncate, bool raw,
                                                std::vector<float>& score, size_t& tokens) {
  std::vector<uint8_t> truncated;
  auto encoded = m.tokenize_rerank_all(query, documents, instruction, &truncated);
  if (!encoded.ok() && encoded.status().code() == StatusCode::kOutOfRange)
    return error_reply(api, 413, "invalid_request_error", encoded.status().message());
  if (!encoded.ok()) return tokenize_error(api, encoded.status());
  std::vector<Encoding>& batch = *encoded;
  if (auto late = past_deadline(api, "tokenizing")) return *late;
  tokens = 0;
  for (size_t i = 0; i < batch.size(); ++i) {
    if (truncated[i] && !truncate)
      return error_reply(api, 413, "invalid_request_error",
                         "the query with document " + std::to_string(i) + " has more than " +
                             std::to_string(m.max_length()) + " tokens; shorten it or send \"truncate\": true");
    tokens += batch[i].ids.size();
  }
  score.clear();
  score.reserve(batch.size());
  Status run =
      in_run_slots(m, batch, [&](const std::vector<Encoding>& chunk, const dlrt::RunOptions& bounds) -> Status {
        auto logits = m.classify(chunk, bounds);
        if (!logits.ok()) return logits.status();
        for (const auto& row : *logits) score.push_back(scores(row, raw)[0]);
        return Status::Ok();
      });
  if (!run.ok()) return run_error_reply(api, run, "scoring");
  return Reply{};
}

namespace {

// The reranker checks both routes make before scoring; "" when the model
// (named `who` in the message) can rerank.
std::string rerank_model_error(const EmbedModel& m, const std::string& who, const char* route) {
  if (std::string e = route_kind_error(route, m.kind(), who); !e.empty()) return e;
  if (m.labels().size() != 1)
    return who + " is a classifier with " + std::to_string(m.labels().size()) + " labels; " + route +
           " needs a model with one score (use /predict)";
  return "";
}

// An optional string field ("" when absent or null).
std::string optional_string(const json& body, const char* name, std::string& error) {
  auto f = body.find(name);
  if (f == body.end() || f->is_null()) return "";
  if (!f->is_string()) {
    error = std::string("'") + name + "' must be a string";
    return "";
  }
  return f->get<std::string>();
}

// Indices 0..n-1 by score, highest first (ties in input order).
std::vector<size_t> by_score(const std::vector<float>& score) {
  std::vector<size_t> order(score.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return score[a] > score[b]; });
  return order;
}

}  // namespace

EmbedServer::Reply EmbedServer::handle_rerank(const std::string& body) {
  json req;
  if (std::string e = parse_body_json(body, req); !e.empty()) return error_reply(Api::kTei, 400, "invalid_request_error", e);
  if (!req.is_object()) return error_reply(Api::kTei, 422, "invalid_request_error", "the body must be a JSON object");
  Reply unavailable;
  std::optional<ModelRef> ref = request_model(Api::kTei, req, &unavailable);
  if (!ref) return unavailable;
  const EmbedModel& m = *ref->model;
  if (has_capability(m.kind(), Capability::kMaxSim)) return handle_rerank_maxsim(req, m);
  if (std::string e = rerank_model_error(m, model_label(*ref), "/rerank"); !e.empty())
    return error_reply(Api::kTei, 400, "invalid_request_error", e);
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
  std::string field_error;
  const bool raw = optional_bool(req, "raw_scores", false, field_error);
  const bool return_text = optional_bool(req, "return_text", false, field_error);
  const bool truncate = optional_bool(req, "truncate", config_.truncate, field_error);
  const std::string instruction = optional_string(req, "instruction", field_error);
  if (!field_error.empty()) return error_reply(Api::kTei, 422, "invalid_request_error", field_error);
  std::vector<std::string> texts;
  for (size_t i = 0; i < t->size(); ++i) {
    if (!(*t)[i].is_string())
      return error_reply(Api::kTei, 422, "invalid_request_error", "'texts'[" + std::to_string(i) + "] is not a string");
    texts.push_back((*t)[i].get<std::string>());
  }
  std::vector<float> score;
  size_t tokens = 0;
  if (Reply r = score_documents(Api::kTei, m, q->get<std::string>(), texts, instruction, truncate, raw, score, tokens);
      r.status != 200)
    return r;
  json out = json::array();
  for (size_t i : by_score(score)) {
    json r = {{"index", i}, {"score", score[i]}};
    if (return_text) r["text"] = texts[i];
    out.push_back(std::move(r));
  }
  Reply reply;
  reply.body = server_util::dump_json(out);
  return reply;
}

EmbedServer::Reply EmbedServer::handle_v1_rerank(const std::string& body) {
  const Api api = Api::kOpenAI;
  json req;
  if (std::string e = parse_body_json(body, req); !e.empty()) return error_reply(api, 400, "invalid_request_error", e);
  if (!req.is_object()) return error_reply(api, 422, "invalid_request_error", "the body must be a JSON object");
  Reply unavailable;
  std::optional<ModelRef> ref = request_model(api, req, &unavailable);
  if (!ref) return unavailable;
  const EmbedModel& m = *ref->model;
  if (std::string e = rerank_model_error(m, model_label(*ref), "/v1/rerank"); !e.empty())
    return error_reply(api, 400, "invalid_request_error", e);
  auto q = req.find("query");
  if (q == req.end() || !q->is_string()) return error_reply(api, 422, "invalid_request_error", "'query' must be a string");
  auto d = req.find("documents");
  if (d != req.end() && d->is_array() && d->empty())
    return error_reply(api, 400, "empty", "'documents' is empty: send at least one document");
  if (d == req.end() || !d->is_array())
    return error_reply(api, 422, "invalid_request_error",
                       "'documents' must be a non-empty array of strings or {\"text\": string} objects");
  if (d->size() > config_.max_inputs_per_request)
    return error_reply(api, 413, "invalid_request_error",
                       std::to_string(d->size()) + " documents in one request; the limit is " +
                           std::to_string(config_.max_inputs_per_request) + kInputsLimitNote);
  std::string field_error;
  const bool return_documents = optional_bool(req, "return_documents", false, field_error);
  const bool truncate = optional_bool(req, "truncate", true, field_error);
  const std::string instruction = optional_string(req, "instruction", field_error);
  (void)optional_string(req, "model", field_error);  // checked for its type; request_model chose the model
  if (!field_error.empty()) return error_reply(api, 422, "invalid_request_error", field_error);
  size_t top_n = d->size();
  if (auto n = req.find("top_n"); n != req.end() && !n->is_null()) {
    if (!n->is_number_integer() || n->get<int64_t>() < 1)
      return error_reply(api, 422, "invalid_request_error", "'top_n' must be an integer >= 1");
    top_n = std::min(top_n, static_cast<size_t>(n->get<int64_t>()));
  }
  std::vector<std::string> docs;
  for (size_t i = 0; i < d->size(); ++i) {
    const json& v = (*d)[i];
    const json* text = v.is_object() ? document_text(v) : nullptr;
    if (v.is_string()) docs.push_back(v.get<std::string>());
    else if (text) docs.push_back(text->get<std::string>());
    else
      return error_reply(api, 422, "invalid_request_error",
                         "'documents'[" + std::to_string(i) + "] is neither a string nor an object with a \"text\" string");
  }
  std::vector<float> score;
  size_t tokens = 0;
  if (Reply r = score_documents(api, m, q->get<std::string>(), docs, instruction, truncate, false, score, tokens);
      r.status != 200)
    return r;
  json results = json::array();
  for (size_t i : by_score(score)) {
    if (results.size() == top_n) break;
    json r = {{"index", i}, {"relevance_score", score[i]}};
    if (return_documents) r["document"] = {{"text", docs[i]}};
    results.push_back(std::move(r));
  }
  json out = {{"model", ref->name}, {"results", std::move(results)}, {"usage", {{"total_tokens", tokens}}}};
  Reply reply;
  reply.body = server_util::dump_json(out);
  return reply;
}

EmbedServer::Reply EmbedServer::handle_predict(const std::string& body) {
  json req;
  if (std::string e = parse_body_json(body, req); !e.empty()) return error_reply(Api::kTei, 400, "invalid_request_error", e);
  if (!req.is_object()) return error_reply(Api::kTei, 422, "invalid_request_error", "the body must be a JSON object");
  Reply unavailable;
  std::optional<ModelRef> ref = request_model(Api::kTei, req, &unavailable);
  if (!ref) return unavailable;
  const std::shared_ptr<const EmbedModel>& m = ref->model;
  if (std::string e = route_kind_error("/predict", m->kind(), model_label(*ref)); !e.empty())
    return error_reply(Api::kTei, 400, "invalid_request_error", e);
  auto in = req.find("inputs");
  if (in == req.end()) return error_reply(Api::kTei, 422, "invalid_request_error", "missing field 'inputs'");
  std::string field_error;
  const bool raw = optional_bool(req, "raw_scores", false, field_error);
  const bool truncate = optional_bool(req, "truncate", config_.truncate, field_error);
  if (!field_error.empty()) return error_reply(Api::kTei, 422, "invalid_request_error", field_error);
  // "text", ["a", "b"] (one pair), or a batch: [["text"], ["a", "b"], "text", ...].
  struct Item {
    std::string first, second;
    bool pair = false;
  };
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
  std::vector<Item> items;
  bool batch_request = false;
  Item one;
  if (item_of(*in, one) && !(in->is_array() && in->size() == 1)) {
    items.push_back(one);
  } else if (in->is_array() && !in->empty()) {
    batch_request = true;
    if (in->size() > config_.max_inputs_per_request)
      return error_reply(Api::kTei, 413, "invalid_request_error",
                         std::to_string(in->size()) + " inputs in one request; the limit is " +
                             std::to_string(config_.max_inputs_per_request) + kInputsLimitNote);
    for (size_t i = 0; i < in->size(); ++i) {
      Item it;
      if (!item_of((*in)[i], it))
        return error_reply(Api::kTei, 422, "invalid_request_error",
                           "'inputs'[" + std::to_string(i) + "] is not a text, [text] or [text, text]");
      items.push_back(std::move(it));
    }
  } else {
    return error_reply(Api::kTei, 422, "invalid_request_error",
                       "'inputs' must be a text, a pair [text, text], or a non-empty list of them");
  }
  std::vector<Encoding> batch;
  for (size_t i = 0; i < items.size(); ++i) {
    bool truncated = false;
    auto enc = items[i].pair ? m->tokenize_pair(items[i].first, items[i].second, &truncated)
                             : m->tokenize(items[i].first, &truncated);
    if (!enc.ok()) return tokenize_error(Api::kTei, enc.status());
    if (truncated && !truncate)
      return error_reply(Api::kTei, 413, "invalid_request_error",
                         "input " + std::to_string(i) + " has more than " + std::to_string(m->max_length()) +
                             " tokens; shorten it or send \"truncate\": true");
    batch.push_back(std::move(enc).value());
  }
  if (auto late = past_deadline(Api::kTei, "tokenizing")) return *late;
  std::vector<std::vector<float>> logits;
  Status run =
      in_run_slots(*m, batch, [&](const std::vector<Encoding>& chunk, const dlrt::RunOptions& bounds) -> Status {
        auto rows = m->classify(chunk, bounds);
        if (!rows.ok()) return rows.status();
        for (auto& row : *rows) logits.push_back(std::move(row));
        return Status::Ok();
      });
  if (!run.ok()) return run_error_reply(Api::kTei, run, "scoring");
  const std::vector<std::string> labels = m->labels();
  json out = json::array();
  for (const auto& row : logits) {
    const std::vector<float> s = scores(row, raw);
    std::vector<size_t> order(s.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return s[a] > s[b]; });
    json preds = json::array();
    for (size_t k : order) preds.push_back({{"score", s[k]}, {"label", k < labels.size() ? labels[k] : ""}});
    out.push_back(std::move(preds));
  }
  Reply reply;
  reply.body = server_util::dump_json(batch_request ? out : out[0]);
  return reply;
}

}  // namespace dlrt::embed
