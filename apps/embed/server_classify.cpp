// dlrt serve's routes for sequence classifiers (cross-encoders): POST /rerank
// and POST /predict, TEI's request and answer shapes (see server.h).
#include <httplib.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include <nlohmann/json.hpp>

#include "embed/body_json.h"
#include "embed/server.h"

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

EmbedServer::Reply EmbedServer::handle_rerank(const std::string& body) {
  auto m = model();
  if (!m) return error_reply(Api::kTei, 503, "unavailable", "the model is still loading; retry shortly");
  if (m->is_multi_vector()) return handle_rerank_maxsim(body);
  if (!m->is_classifier())
    return error_reply(Api::kTei, 400, "invalid_request_error",
                       "the served model is an embedding model: /rerank needs a cross-encoder (a sequence classifier) "
                       "or a multi-vector model");
  if (m->labels().size() != 1)
    return error_reply(Api::kTei, 400, "invalid_request_error",
                       "the served classifier has " + std::to_string(m->labels().size()) +
                           " labels; /rerank needs a model with one score (use /predict)");
  json req;
  if (std::string e = parse_body_json(body, req); !e.empty()) return error_reply(Api::kTei, 400, "invalid_request_error", e);
  if (!req.is_object()) return error_reply(Api::kTei, 422, "invalid_request_error", "the body must be a JSON object");
  auto q = req.find("query");
  if (q == req.end() || !q->is_string()) return error_reply(Api::kTei, 422, "invalid_request_error", "'query' must be a string");
  auto t = req.find("texts");
  if (t == req.end() || !t->is_array() || t->empty())
    return error_reply(Api::kTei, 422, "invalid_request_error", "'texts' must be a non-empty array of strings");
  if (t->size() > config_.max_inputs_per_request)
    return error_reply(Api::kTei, 413, "invalid_request_error",
                       std::to_string(t->size()) + " texts in one request; the limit is " +
                           std::to_string(config_.max_inputs_per_request) + " (max_inputs_per_request)");
  std::string field_error;
  const bool raw = optional_bool(req, "raw_scores", false, field_error);
  const bool return_text = optional_bool(req, "return_text", false, field_error);
  const bool truncate = optional_bool(req, "truncate", config_.truncate, field_error);
  if (!field_error.empty()) return error_reply(Api::kTei, 422, "invalid_request_error", field_error);
  std::vector<Encoding> batch;
  for (size_t i = 0; i < t->size(); ++i) {
    if (!(*t)[i].is_string())
      return error_reply(Api::kTei, 422, "invalid_request_error", "'texts'[" + std::to_string(i) + "] is not a string");
    bool truncated = false;
    auto enc = m->tokenize_pair(q->get<std::string>(), (*t)[i].get<std::string>(), &truncated);
    if (!enc.ok()) return error_reply(Api::kTei, 422, "invalid_request_error", enc.status().message());
    if (truncated && !truncate)
      return error_reply(Api::kTei, 413, "invalid_request_error",
                         "the query with text " + std::to_string(i) + " has more than " + std::to_string(m->max_length()) +
                             " tokens; shorten it or send \"truncate\": true");
    batch.push_back(std::move(enc).value());
  }
  auto logits = m->classify(batch, request_bounds());
  if (!logits.ok()) return run_error_reply(Api::kTei, logits.status(), "scoring");
  std::vector<size_t> order(batch.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::vector<float> score(batch.size());
  for (size_t i = 0; i < batch.size(); ++i) score[i] = scores((*logits)[i], raw)[0];
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return score[a] > score[b]; });
  json out = json::array();
  for (size_t i : order) {
    json r = {{"index", i}, {"score", score[i]}};
    if (return_text) r["text"] = (*t)[i];
    out.push_back(std::move(r));
  }
  Reply reply;
  reply.body = out.dump(-1, ' ', false, json::error_handler_t::replace);
  return reply;
}

EmbedServer::Reply EmbedServer::handle_predict(const std::string& body) {
  auto m = model();
  if (!m) return error_reply(Api::kTei, 503, "unavailable", "the model is still loading; retry shortly");
  if (!m->is_classifier())
    return error_reply(Api::kTei, 400, "invalid_request_error",
                       "the served model is an embedding model: /predict needs a sequence classifier");
  json req;
  if (std::string e = parse_body_json(body, req); !e.empty()) return error_reply(Api::kTei, 400, "invalid_request_error", e);
  if (!req.is_object()) return error_reply(Api::kTei, 422, "invalid_request_error", "the body must be a JSON object");
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
                             std::to_string(config_.max_inputs_per_request) + " (max_inputs_per_request)");
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
    if (!enc.ok()) return error_reply(Api::kTei, 422, "invalid_request_error", enc.status().message());
    if (truncated && !truncate)
      return error_reply(Api::kTei, 413, "invalid_request_error",
                         "input " + std::to_string(i) + " has more than " + std::to_string(m->max_length()) +
                             " tokens; shorten it or send \"truncate\": true");
    batch.push_back(std::move(enc).value());
  }
  auto logits = m->classify(batch, request_bounds());
  if (!logits.ok()) return run_error_reply(Api::kTei, logits.status(), "scoring");
  const std::vector<std::string> labels = m->labels();
  json out = json::array();
  for (const auto& row : *logits) {
    const std::vector<float> s = scores(row, raw);
    std::vector<size_t> order(s.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return s[a] > s[b]; });
    json preds = json::array();
    for (size_t k : order) preds.push_back({{"score", s[k]}, {"label", k < labels.size() ? labels[k] : ""}});
    out.push_back(std::move(preds));
  }
  Reply reply;
  reply.body = (batch_request ? out : out[0]).dump(-1, ' ', false, json::error_handler_t::replace);
  return reply;
}

}  // namespace dlrt::embed
