// dlrt serve's routes, in one table (routes.cpp): each row owns a route's
// path, methods, error shape, the capability its model needs (models/kind.h),
// its typed request parser and free-function handler (handlers.h), and its
// OpenAPI entry. The server installs from it (server_dispatch.cpp), the
// OpenAPI document (openapi.cpp) and the route x kind refusals
// (route_kinds.cpp) are generated from it.
//
// A POST route runs as: the shared opening (serve_post: 503 while draining
// where the row says, the body as JSON, a JSON object, the model the request
// names, the capability it needs), the row's parser, then its handler. Which
// goes first of the model and the fields is the row's (fields_first). The
// parsers' error (RequestError) and the field readers they share are here too.
//
// Thread-safety: the table is immutable.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "embed/models/kind.h"
#include "embed/serve/call.h"

namespace dlrt::embed {

struct Route;

// Why a parser refused a request: HTTP status and message.
struct RequestError {
  int status = 422;
  std::string message;
  std::string type = "invalid_request_error";  // "empty": no inputs (TEI's Empty, a 400)
};
using ParseError = std::optional<RequestError>;

// A POST route's parse and handle, after the opening's JSON checks (routes.cpp's typed<>).
using PostFn = Reply (*)(Call& call, const Route& route, const nlohmann::json& body);
// A GET route's handler.
using GetFn = Reply (*)(Call& call);
// A check of the model beyond its kind ("" when it serves the route, else the
// 400's message; `who` names the model).
using ModelCheck = std::string (*)(const EmbedModel& model, const std::string& who, const char* path);

// The route's entry in the OpenAPI document.
struct RouteDoc {
  const char* summary;
  const char* request = nullptr;   // the request body's schema (components/schemas), POST routes
  const char* response = nullptr;  // the 200 answer's: a schema name, or an inline schema as JSON text ("{...}")
  const char* content_type = "application/json";
  const char* unavailable = nullptr;  // the 503's description where the route answers one with its own schema
};

struct Route {
  const char* path;
  PostFn post = nullptr;  // one of post and get, or both
  GetFn get = nullptr;
  Api api = Api::kTei;  // the shape of its errors
  // POST routes: what the model must be able to do (any of), checked before
  // the parser runs (or after, fields_first); empty for none. `variant_field`:
  // the body field whose value `variant_value` asks for `variant_needs` instead.
  std::vector<Capability> needs = {};
  const char* variant_field = "";
  const char* variant_value = "";
  std::vector<Capability> variant_needs = {};
  ModelCheck check = nullptr;  // after the capability
  bool fields_first = false;   // the parser runs before the model is looked up
  bool drains = false;         // 503 while the server shuts down, before the body is read
  bool per_model = true;       // a model's route: also served as /models/NAME/<path> for model NAME
  bool listed = true;          // a 404's list of routes names it (aliases are not named)
  bool open = false;           // its GET answered without the API key (load balancers' probes)
  bool documented = true;      // in the OpenAPI document (TEI's root routes are not, as in TEI's)
  RouteDoc doc = {""};

  const char* methods() const { return post && get ? "GET, HEAD, POST" : post ? "POST" : "GET, HEAD"; }
  // `"encoding_format": "sparse"`: how a message names the variant ("" for none).
  std::string variant() const;
};

// Every route, in the order a 404 lists them.
const std::vector<Route>& routes();
// The route at `path` (without a /models/NAME prefix), or null.
const Route* find_route(std::string_view path);
// "POST /v1/embeddings, POST /embed, ..., GET /openapi.json" (a 404's list).
std::string route_list();
// Whether `body` asks for `route`'s variant (its variant_field is variant_value).
bool in_variant(const Route& route, const nlohmann::json& body);

// A POST route's request: the opening, the row's parser and handler.
Reply serve_post(Call& call, const Route& route, const std::string& body);
// The POST route TEI's root route (POST /, /invocations) answers a model
// as, by what it can do: /embed, /embed_sparse, /predict (a classifier of
// several labels), /rerank (one score per pair) or /embed_all (multi-vector).
const Route& route_for(const EmbedModel& model);

// ---- the field readers every route's parser shares (handlers.h) ----------------
// An optional field is unset when absent or null, and a 422 naming it when of another type.
ParseError read_bool(const nlohmann::json& body, const char* name, std::optional<bool>& out);
ParseError read_string(const nlohmann::json& body, const char* name, std::optional<std::string>& out);
// How a 413 for too many inputs names the setting and its flags.
inline constexpr const char* kInputsLimitNote =
    " (max_inputs_per_request, flag --max-inputs-per-request; TEI's --max-client-batch-size)";
// The 413 of a request of `n` `noun` (inputs, texts, ...) over `max_inputs` (max_inputs_per_request).
RequestError too_many_inputs(size_t n, const char* noun, size_t max_inputs);
// `body`'s `field`: a non-empty array of strings (or one string when
// `one_allowed`), at most `max_inputs` of them, into *out.
ParseError read_texts(const nlohmann::json& body, const char* field, bool one_allowed, size_t max_inputs,
                      std::vector<std::string>* out);

}  // namespace dlrt::embed
