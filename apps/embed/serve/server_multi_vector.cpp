// dlrt serve's per-token route (models/model.h's PerTokenOut): POST
// /embed_all (TEI's shape: per input, a list of per-token vectors) for any
// model with per-token vectors: its parser and handler (handlers.h).
#include <algorithm>
#include <numeric>

#include <nlohmann/json.hpp>

#include "embed/models/prepare_inputs.h"
#include "embed/serve/handlers.h"
#include "embed/serve/server.h"
#include "embed/serve/server_util.h"

namespace dlrt::embed {
namespace {

using json = nlohmann::json;

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

ParseError parse_embed_all(const json& req, size_t max_inputs, EmbedAllRequest* out) {
  if (auto e = read_texts(req, "inputs", true, max_inputs, &out->texts)) return e;
  if (auto e = read_bool(req, "truncate", out->truncate)) return e;
  if (auto e = read_bool(req, "is_query", out->is_query)) return e;
  return read_string(req, "prompt_name", out->prompt_name);
}

Reply handle_embed_all(Call& c, EmbedAllRequest& req) {
  const EmbedModel* m = &c.model();
  const PerTokenOut* per_token = m->as<PerTokenOut>();
  if (!per_token) return c.no_capability();
  const std::vector<std::string>& texts = req.texts;
  const bool truncate = req.truncate.value_or(c.config().truncate);
  const bool is_query = req.is_query.value_or(true);
  if (req.is_query && !has_capability(m->kind(), Capability::kMaxSim))
    return c.invalid("'is_query' applies to multi-vector (ColBERT) models only; " + c.model_label() + " is not one");
  // A sentence-transformers 6.x encoder's task prompt, as encode_query / encode_document pick it.
  if (!req.prompt_name && per_token->prompts_by_task()) req.prompt_name = task_prompt_name(*m, is_query);
  const std::optional<std::string>& prompt_name = req.prompt_name;
  const auto prompt_text = resolve_prompt(*m, prompt_name, c.config().default_prompt_name);
  if (!prompt_text) return c.invalid("the model has no prompt named '" + *prompt_name + "'");
  const std::string& prompt = *prompt_text;
  std::vector<Encoding> batch;
  for (size_t i = 0; i < texts.size(); ++i) {
    bool truncated = false;
    auto enc = per_token->tokenize_tokens(prompt + texts[i], is_query, &truncated);
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
        auto r = per_token->embed_tokens(chunk, is_query, bounds);
        if (!r.ok()) return r.status();
        for (auto& v : r->tokens) vectors.push_back(std::move(v));
        return Status::Ok();
      });
  if (!run.ok()) return c.run_error(run, "embedding");
  Reply reply;
  reply.body = token_vectors_json(vectors);
  return reply;
}

}  // namespace dlrt::embed
