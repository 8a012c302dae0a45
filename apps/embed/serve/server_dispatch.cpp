// dlrt serve's HTTP front: the routes of the table (routes.h) installed, and
// what every request passes through: its id, CORS, 405 for a method a route
// does not answer, the API key, the /models/NAME/ prefix taken off (the model
// it names), the errors httplib answers itself, the request metrics (per
// model too) and the access log. See server.h.
#include "embed/serve/server.h"

#include <httplib.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <optional>
#include <random>

#include <nlohmann/json.hpp>

#include "dlrt/dlrt.h"
#include "embed/serve/routes.h"
#include "embed/serve/server_util.h"
#include "embed/tokenizer/tokenizer.h"

namespace dlrt::embed {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;
using server_util::json_string;

// The client's X-Request-Id when it is 1-128 characters of [A-Za-z0-9._:-],
// else 16 random hex digits.
// httplib compresses an answer with brotli at its highest quality when the client accepts
// "br" (browsers do): 12 s of CPU for a 280 KB /v1/embeddings answer, about a minute for
// /docs' 1.7 MB script on a loaded machine. Such a client is answered with gzip instead
// (under a second for either), or uncompressed when it does not take gzip either.
void offer_gzip_not_brotli(httplib::Request& req) {
  auto [first, last] = req.headers.equal_range("Accept-Encoding");
  bool br = false, gzip = false;
  for (auto it = first; it != last; ++it) {
    br = br || it->second.find("br") != std::string::npos;
    gzip = gzip || it->second.find("gzip") != std::string::npos;
  }
  if (!br) return;
  req.headers.erase(first, last);
  if (gzip) req.headers.emplace("Accept-Encoding", "gzip");
}

std::string request_id(const httplib::Request& req) {
  const std::string given = req.get_header_value("X-Request-Id");
  bool ok = !given.empty() && given.size() <= 128;
  for (char c : given) ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == ':' || c == '-');
  if (ok) return given;
  thread_local std::mt19937_64 rng{std::random_device{}() ^ static_cast<uint64_t>(Clock::now().time_since_epoch().count())};
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(rng()));
  return buf;
}

// The methods a route answers ("" for a path that is not a route).
const char* allowed_methods(const std::string& path) {
  const Route* r = find_route(path);
  return r ? r->methods() : "";
}

// TEI's routes answer errors in TEI's shape, the others in OpenAI's.
bool tei_route(const std::string& path) {
  const Route* r = find_route(path);
  return r && r->api == Api::kTei;
}

// Compares without an early exit, so the time taken does not tell how much of a guess was right.
bool constant_time_equal(const std::string& a, const std::string& b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  const size_t n = std::max(a.size(), b.size());
  for (size_t i = 0; i < n; ++i)
    diff |= static_cast<unsigned char>((i < a.size() ? a[i] : 0) ^ (i < b.size() ? b[i] : 0));
  return diff == 0;
}

// The Access-Control-Allow-Origin answer for `origin` under `allowed`
// ("*" or a comma list); "" when the origin is not allowed.
std::string cors_origin(const std::string& allowed, const std::string& origin) {
  if (allowed == "*") return "*";
  size_t start = 0;
  while (start <= allowed.size()) {
    size_t end = allowed.find(',', start);
    if (end == std::string::npos) end = allowed.size();
    std::string item = allowed.substr(start, end - start);
    item.erase(0, item.find_first_not_of(' '));
    item.erase(item.find_last_not_of(' ') + 1);
    if (!item.empty() && item == origin) return origin;
    start = end + 1;
  }
  return "";
}


// Start of the request being handled on this thread (pre-routing -> logger).
thread_local Clock::time_point t_request_start;
// The request's id (X-Request-Id, or made here) and, for embedding routes,
// its inputs and tokens: for the access log.
thread_local std::string t_request_id;
thread_local size_t t_inputs = 0, t_tokens = 0;
// Set when a route handler counted its request itself (the logger skips it).
thread_local bool t_request_counted = false;
// The model a /models/NAME/... route prefix names ("" for none), and the
// model the request went to (for the per-model metrics; "" when not known).
thread_local std::string t_path_model, t_request_model;

// "/models/NAME/ROUTE" -> NAME, with *route set to ROUTE (the shortest NAME
// that leaves a route); nullopt for any other path.
std::optional<std::string> split_model_prefix(const std::string& path, std::string* route) {
  static const std::string kPrefix = "/models/";
  if (path.compare(0, kPrefix.size(), kPrefix) != 0) return std::nullopt;
  for (size_t slash = path.find('/', kPrefix.size() + 1); slash != std::string::npos; slash = path.find('/', slash + 1)) {
    std::string rest = path.substr(slash);
    if (const Route* r = find_route(rest); r && r->per_model) {
      *route = std::move(rest);
      return path.substr(kPrefix.size(), slash - kPrefix.size());
    }
  }
  return std::nullopt;
}

std::string route_label(const std::string& path) {
  const Route* r = find_route(path);
  return r ? r->path : "other";
}

}  // namespace

void server_util::note_request_size(size_t inputs, size_t tokens) {
  t_inputs = inputs;
  t_tokens = tokens;
}

void server_util::add_request_size(size_t inputs, size_t tokens) {
  t_inputs += inputs;
  t_tokens += tokens;
}

const std::string& server_util::path_model() { return t_path_model; }

const std::string& server_util::request_model() { return t_request_model; }

void server_util::note_request_model(const std::string& name) { t_request_model = name; }

void EmbedServer::install_routes() {
  httplib::Server& s = *http_;
  auto send = [](httplib::Response& res, const Reply& r) {
    res.status = r.status;
    if (r.retry_after_s > 0) res.set_header("Retry-After", std::to_string(r.retry_after_s));
    if (!r.cache_control.empty()) res.set_header("Cache-Control", r.cache_control);
    if (!r.etag.empty()) res.set_header("ETag", r.etag);
    if (r.status != 304) res.set_content(r.body, r.content_type.c_str());
  };
  // What a route answers when it throws: out of memory (a request that needs
  // more than the process may allocate) is 507 like OutOfMemory from a model
  // run; anything else is a 500 that names it. The server keeps serving.
  auto exception_reply = [](Api api, std::exception_ptr ep) {
    try {
      std::rethrow_exception(ep);
    } catch (const std::bad_alloc&) {
      return error_reply(api, 507, "insufficient_storage",
                         "the server ran out of memory handling this request; send fewer or shorter inputs, or raise "
                         "the memory limit (the container's)");
    } catch (const std::exception& e) {
      return error_reply(api, 500, "internal_error", std::string("internal error handling the request: ") + e.what());
    } catch (...) {
      return error_reply(api, 500, "internal_error", "internal error handling the request");
    }
  };
  auto handled = [exception_reply](Api api, const std::function<Reply()>& handle) {
    try {
      return handle();
    } catch (...) {
      return exception_reply(api, std::current_exception());
    }
  };
  s.set_exception_handler([this, send, exception_reply](const httplib::Request& req, httplib::Response& res,
                                                        std::exception_ptr ep) {
    send(res, exception_reply(tei_route(req.path) ? Api::kTei : Api::kOpenAI, ep));
  });
  // A POST route: the body read under max_body_bytes, then handle(body).
  auto with_body = [this, send, handled](Api api, std::function<Reply(const std::string&)> handle) {
    return [this, send, handled, api, handle](const httplib::Request& req, httplib::Response& res,
                                     const httplib::ContentReader& content) {
      // The body is read here, under max_body_bytes: the connection loop
      // (http_server.h) has bounded the body as sent already; this bounds it
      // as httplib hands it over (decompressed, for a Content-Encoding).
      std::string body;
      bool too_large = false;
      const bool complete = content([&](const char* data, size_t n) {
        if (body.size() + n > config_.max_body_bytes) {
          too_large = true;
          return false;
        }
        body.append(data, n);
        return true;
      });
      if (!complete) {
        const bool over = too_large || res.status == 413 ||
                          (req.has_header("Content-Length") &&
                           std::strtoull(req.get_header_value("Content-Length").c_str(), nullptr, 10) >
                               config_.max_body_bytes);
        const std::string message =
            over ? "the request body is larger than " + std::to_string(config_.max_body_bytes) + " bytes (max_body_bytes)"
                 : std::string("the request body could not be read");
        const int status = over ? 413 : 400;
        metrics_.observe_request(route_label(req.path), status, 0.0);
        t_request_counted = true;
        res.set_header("Connection", "close");  // the rest of the body is not read
        send(res, error_reply(api, status, "invalid_request_error", message));
        return;
      }
      ++in_flight_;
      const TokenizeDeadline tokenizing(request_deadline());  // the tokenizer stops at the request's deadline
      Reply r = handled(api, [&] { return handle(body); });
      --in_flight_;
      // Counted before the response goes out, so a client that reads
      // /metrics right after sees its own request.
      double seconds = t_request_start == Clock::time_point{}
                           ? 0.0
                           : std::chrono::duration<double>(Clock::now() - t_request_start).count();
      metrics_.observe_request(route_label(req.path), r.status, seconds);
      if (!t_request_model.empty()) metrics_.observe_model_request(t_request_model, route_label(req.path), r.status);
      t_request_counted = true;
      if (draining_.load()) res.set_header("Connection", "close");
      send(res, r);
    };
  };
  for (const Route& r : routes()) {
    if (r.post)
      s.Post(r.path, with_body(r.api, [this, &r](const std::string& body) {
        Call call(*this, r.api);
        return serve_post(call, r, body);
      }));
    if (r.get) {
      s.Get(r.path, [this, send, &r](const httplib::Request& req, httplib::Response& res) {
        Call call(*this, r.api);
        Reply reply = r.get(call);
        if (!reply.etag.empty() && reply.status == 200 && req.get_header_value("If-None-Match") == reply.etag) {
          reply.status = 304;  // the client's copy is current
          reply.body.clear();
        }
        send(res, reply);
      });
    }
  }
  // While draining, every answer closes its connection (keep-alive clients move on).
  s.set_post_routing_handler([this](const httplib::Request&, httplib::Response& res) {
    if (draining_.load()) res.set_header("Connection", "close");
  });
}

void EmbedServer::install_hooks() {
  httplib::Server& s = *http_;
  s.set_pre_routing_handler(httplib::Server::HandlerWithResponse([this](const httplib::Request& req,
                                                                        httplib::Response& res) {
    t_request_start = Clock::now();
    t_request_counted = false;
    t_inputs = t_tokens = 0;
    t_request_model.clear();
    t_path_model.clear();
    // /models/NAME/embed and the like: routed as /embed for model NAME. The
    // request object is httplib's own, non-const one (as for `ranges` below).
    if (std::string route; auto name = split_model_prefix(req.path, &route)) {
      t_path_model = *name;
      const_cast<httplib::Request&>(req).path = route;
    }
    t_request_id = request_id(req);
    res.set_header("X-Request-Id", t_request_id);
    if (!config_.cors_allow_origin.empty()) {
      const std::string origin = req.get_header_value("Origin");
      const std::string allow = origin.empty() ? "" : cors_origin(config_.cors_allow_origin, origin);
      if (!allow.empty()) {
        res.set_header("Access-Control-Allow-Origin", allow);
        res.set_header("Access-Control-Expose-Headers", "X-Request-Id");
        if (allow != "*") res.set_header("Vary", "Origin");
      }
      if (req.method == "OPTIONS") {  // a browser's preflight: no credentials
        res.status = allow.empty() ? 403 : 204;
        res.set_header("Access-Control-Allow-Methods", "GET, POST, OPTIONS");
        res.set_header("Access-Control-Allow-Headers", "Content-Type, Authorization, X-Request-Id");
        res.set_header("Access-Control-Max-Age", "600");
        return httplib::Server::HandlerResponse::Handled;
      }
    }
    // A method the route does not answer: 405 with Allow (httplib would say 400 or 404).
    if (const std::string allowed = allowed_methods(req.path); !allowed.empty() && req.method != "OPTIONS" &&
                                                                allowed.find(req.method) == std::string::npos) {
      res.status = 405;
      res.set_header("Allow", allowed);
      const std::string message = req.method + " " + req.path + " is not supported; use " + allowed;
      res.set_content(tei_route(req.path)
                          ? "{\"error\":" + json_string(message) + ",\"error_type\":\"Validation\"}"
                          : "{\"error\":{\"message\":" + json_string(message) + ",\"type\":\"invalid_request_error\",\"code\":405}}",
                      "application/json");
      return httplib::Server::HandlerResponse::Handled;
    }
    if (const Route* r = find_route(req.path); !config_.api_key.empty() && !(r && r->open && req.method != "POST")) {
      const std::string auth = req.get_header_value("Authorization");
      const bool bearer = auth.size() > 7 && auth.compare(0, 7, "Bearer ") == 0;
      if (!bearer || !constant_time_equal(auth.substr(7), config_.api_key)) {
        res.status = 401;
        res.set_header("WWW-Authenticate", "Bearer");
        const std::string message = "missing or wrong API key: send \"Authorization: Bearer <key>\"";
        res.set_content(tei_route(req.path)
                            ? "{\"error\":" + json_string(message) + ",\"error_type\":\"Validation\"}"
                            : "{\"error\":{\"message\":" + json_string(message) +
                                  ",\"type\":\"authentication_error\",\"code\":401}}",
                        "application/json");
        return httplib::Server::HandlerResponse::Handled;
      }
    }
    // No route serves byte ranges: a Range header is ignored, or httplib would
    // answer it with one multipart part per range (an 8 KB request of a few
    // thousand ranges turned into a 16 MB answer). The request object is
    // httplib's own, non-const one, handed to this hook as const.
    const_cast<httplib::Request&>(req).ranges.clear();
    offer_gzip_not_brotli(const_cast<httplib::Request&>(req));
    return httplib::Server::HandlerResponse::Unhandled;
  }));
  // Errors httplib answers itself (404, 405, 413 body too large, 400 bad request): a JSON body.
  s.set_error_handler(httplib::Server::HandlerWithResponse([this](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
    // A method httplib does not know (QUERY, ...) on a route: 405, as for the known ones.
    if (const std::string allowed = allowed_methods(req.path);
        res.status == 400 && !allowed.empty() && !req.method.empty() && allowed.find(req.method) == std::string::npos) {
      res.status = 405;
      res.set_header("Allow", allowed);
    }
    // A request that could not be read (malformed, or too slow): no second one on that connection.
    if (res.status == 400) res.set_header("Connection", "close");
    std::string message;
    if (res.status == 405)
      message = req.method + " " + req.path + " is not supported; use " + allowed_methods(req.path);
    else if (res.status == 413)
      message = "the request body is larger than " + std::to_string(config_.max_body_bytes) + " bytes (max_body_bytes)";
    else if (res.status == 404)
      message = "no route " + req.method + " " + req.path +
                "; routes: " + route_list() + "; the model routes also under /models/NAME/ for the model served as NAME";
    else
      message = "HTTP " + std::to_string(res.status) + (res.status == 400 ? ": malformed request" : "");
    if (tei_route(req.path))
      res.set_content("{\"error\":" + json_string(message) + ",\"error_type\":\"Validation\"}", "application/json");
    else
      res.set_content("{\"error\":{\"message\":" + json_string(message) + ",\"type\":\"invalid_request_error\",\"code\":" +
                          std::to_string(res.status) + "}}",
                      "application/json");
    return httplib::Server::HandlerResponse::Handled;
  }));
  s.set_logger([this](const httplib::Request& req, const httplib::Response& res) {
    const double seconds = t_request_start == Clock::time_point{}
                               ? 0.0
                               : std::chrono::duration<double>(Clock::now() - t_request_start).count();
    t_request_start = Clock::time_point{};
    if (!t_request_counted) {
      metrics_.observe_request(route_label(req.path), res.status, seconds);
      if (!t_request_model.empty()) metrics_.observe_model_request(t_request_model, route_label(req.path), res.status);
    }
    t_request_counted = false;
    if (config_.access_log) {
      ServeLog::Fields fields = {{"method", req.method},
                                 {"path", req.path},
                                 {"status", res.status},
                                 {"latency_ms", std::round(seconds * 1e5) / 100},
                                 {"inputs", t_inputs},
                                 {"tokens", t_tokens},
                                 {"request_id", t_request_id},
                                 {"remote", req.remote_addr}};
      if (registry_.size() > 1 && !t_request_model.empty()) fields.emplace_back("model", t_request_model);
      log_.info("request", fields);
    }
  });
}


}  // namespace dlrt::embed
