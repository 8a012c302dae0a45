#include "embed/server.h"

#include <httplib.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cctype>
#include <random>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <thread>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <nlohmann/json.hpp>

#include "dlrt/dlrt.h"
#include "embed/http_server.h"
#include "embed/openapi.h"
#include "embed/server_util.h"

namespace dlrt::embed {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;
using server_util::is_device_failure;
using server_util::json_string;

std::string iso_time(std::chrono::system_clock::time_point t) {
  std::time_t tt = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// The client's X-Request-Id when it is 1-128 characters of [A-Za-z0-9._:-],
// else 16 random hex digits.
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

// Every route: its path, the methods it answers, whether its errors take
// TEI's shape (else OpenAI's), and whether a 404 lists it (aliases do not).
struct RouteInfo {
  const char* path;
  const char* methods;
  bool tei;
  bool listed;
};
constexpr const char* kPost = "POST";
constexpr const char* kGet = "GET, HEAD";
constexpr RouteInfo kRoutes[] = {
    {"/v1/embeddings", kPost, false, true}, {"/embeddings", kPost, false, false},
    {"/embed", kPost, true, true},          {"/embed_sparse", kPost, true, true},
    {"/embed_all", kPost, true, true},      {"/similarity", kPost, true, true},
    {"/tokenize", kPost, true, true},       {"/decode", kPost, true, true},
    {"/rerank", kPost, true, true},         {"/v1/rerank", kPost, false, true},
    {"/predict", kPost, true, true},        {"/v1/models", kGet, false, true},
    {"/info", kGet, false, true},           {"/health", kGet, false, true},
    {"/ready", kGet, false, true},          {"/live", kGet, false, true},
    {"/metrics", kGet, false, true},        {"/openapi.json", kGet, false, true},
    {"/docs", kGet, false, true},
};

const RouteInfo* find_route(const std::string& path) {
  for (const RouteInfo& r : kRoutes)
    if (path == r.path) return &r;
  return nullptr;
}

// The methods a route answers ("" for a path that is not a route).
const char* allowed_methods(const std::string& path) {
  const RouteInfo* r = find_route(path);
  return r ? r->methods : "";
}

// TEI's routes answer errors in TEI's shape, the others in OpenAI's.
bool tei_route(const std::string& path) {
  const RouteInfo* r = find_route(path);
  return r && r->tei;
}

// "POST /v1/embeddings, POST /embed, ..., GET /openapi.json" (a 404's list).
std::string route_list() {
  std::string s;
  for (const RouteInfo& r : kRoutes)
    if (r.listed) s += std::string(s.empty() ? "" : ", ") + (r.methods == kPost ? "POST " : "GET ") + r.path;
  return s;
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

std::string route_label(const std::string& path) {
  const RouteInfo* r = find_route(path);
  return r ? r->path : "other";
}

// The listening TCP socket of this process on `port` (httplib does not expose
// it), or -1.
int find_listening_socket(int port) {
  for (int fd = 0; fd < 4096; ++fd) {
    int listening = 0;
    socklen_t len = sizeof listening;
    if (::getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) != 0 || !listening) continue;
    sockaddr_storage addr{};
    socklen_t alen = sizeof addr;
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &alen) != 0) continue;
    int p = addr.ss_family == AF_INET    ? ntohs(reinterpret_cast<sockaddr_in*>(&addr)->sin_port)
            : addr.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port)
                                         : -1;
    if (p == port) return fd;
  }
  return -1;
}

// Connections the kernel has completed on a listening socket that nobody has
// accepted yet (Linux reports the accept queue's length in tcpi_unacked for a
// socket in the LISTEN state); 0 when unknown.
size_t accept_queue_length(int fd) {
  tcp_info info{};
  socklen_t len = sizeof info;
  if (fd < 0 || ::getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &len) != 0 || info.tcpi_state != TCP_LISTEN) return 0;
  return info.tcpi_unacked;
}

}  // namespace

void server_util::note_request_size(size_t inputs, size_t tokens) {
  t_inputs = inputs;
  t_tokens = tokens;
}

std::string report_device(const dlrt::RunReport& report) {
  for (const auto& p : report.partitions)
    if (p.backend != "cpu") return p.device;
  return "cpu:0";
}

EmbedServer::EmbedServer(ServiceConfig config) : config_(std::move(config)), log_(config_.json_logs) {
  auto limit = [this](auto server) {
    server->set_max_pending_heads(config_.http_threads / 2);
    server->set_waiting_connections(waiting_connections_);
    http_ = std::move(server);
  };
  if (!config_.tls_cert.empty())
    limit(std::make_unique<PipeliningTlsServer>(config_.tls_cert.c_str(), config_.tls_key.c_str()));
  else
    limit(std::make_unique<PipeliningServer>());
  health_since_ = std::chrono::system_clock::now();
  install_routes();
}

EmbedServer::~EmbedServer() {
  shutdown();
  if (drainer_.joinable()) drainer_.join();
  std::unique_ptr<Batcher> b;
  {
    std::lock_guard<std::mutex> lk(mu_);
    b = std::move(batcher_);
  }
  if (b) b->stop();
}

std::shared_ptr<const EmbedModel> EmbedServer::model() const {
  std::lock_guard<std::mutex> lk(mu_);
  return model_;
}

Batcher* EmbedServer::batcher() const {
  std::lock_guard<std::mutex> lk(mu_);
  return batcher_.get();
}

void EmbedServer::set_model(std::shared_ptr<const EmbedModel> model) {
  BatcherOptions o;
  o.max_batch_size = config_.max_batch_size;
  o.max_batch_tokens = config_.max_batch_tokens;
  o.max_wait = std::chrono::milliseconds(config_.max_wait_ms);
  o.max_queue = config_.max_queue;
  o.workers = config_.pool_size;
  // A batch-dependent model (dynamic quantization) runs each input alone, so
  // every text gets its own vector; the workers still run inputs in parallel.
  if (model && model->batch_dependent()) o.max_batch_size = 1;
  const EmbedModel* m = model.get();
  auto b = std::make_unique<Batcher>(
      [m](const std::vector<Encoding>& batch, const dlrt::RunOptions& bounds) { return m->embed_encoded(batch, bounds); },
      o, [this](const BatchInfo& info) { on_batch(info); });
  std::lock_guard<std::mutex> lk(mu_);
  model_ = std::move(model);
  batcher_ = std::move(b);
}

void EmbedServer::set_load_error(const std::string& reason) {
  std::lock_guard<std::mutex> lk(mu_);
  load_error_ = reason;
}

void EmbedServer::on_batch(const BatchInfo& info) {
  std::string device;
  if (info.report) {
    device = report_device(*info.report);
  } else if (auto m = model()) {
    device = report_device(m->placement());
  }
  metrics_.observe_batch(info.inputs, info.padded_tokens, info.tokens, device, info.seconds, info.status.ok());
  std::lock_guard<std::mutex> lk(mu_);
  if (info.status.ok()) device_error_.clear();
  else if (is_device_failure(info.status.code())) device_error_ = info.status.message();
}

HealthInfo EmbedServer::health() const {
  HealthInfo h;
  std::shared_ptr<const EmbedModel> m;
  std::string device_error, load_error;
  {
    std::lock_guard<std::mutex> lk(mu_);
    m = model_;
    device_error = device_error_;
    load_error = load_error_;
  }
  if (m) {
    dlrt::RunReport p = m->placement();
    h.backend = "cpu";
    h.device = "cpu:0";
    for (const auto& part : p.partitions) {
      if (part.backend != "cpu") {
        h.backend = part.backend;
        h.device = part.device;
      }
      if (part.degraded && !h.degraded) {
        h.degraded = true;
        h.reason = part.reason;
      }
    }
    if (!device_error.empty() && !h.degraded) {
      h.degraded = true;
      h.reason = "strict mode: the last batch failed: " + device_error;
    }
  }
  if (draining_.load()) {
    h.status = "draining";
    h.http_status = 503;
    if (h.reason.empty()) h.reason = "shutting down: finishing in-flight requests, refusing new ones";
  } else if (!m && !load_error.empty()) {
    h.status = "failed";
    h.http_status = 503;
    h.reason = load_error;
  } else if (!m) {
    h.status = "loading";
    h.http_status = 503;
    h.reason = "loading and compiling the model";
  } else if (h.degraded) {
    h.status = h.reason.rfind("warm start", 0) == 0 ? "warming" : "degraded";
  } else {
    h.status = "ok";
  }
  std::lock_guard<std::mutex> lk(mu_);
  std::string key = h.status + "|" + h.backend + "|" + h.device + "|" + h.reason;
  if (key != health_key_) {
    health_key_ = key;
    health_since_ = std::chrono::system_clock::now();
  }
  h.since = iso_time(health_since_);
  return h;
}

Status EmbedServer::bind() {
  if (!http_->is_valid())
    return InvalidArgument("cannot serve HTTPS with tls_cert " + config_.tls_cert + " and tls_key " + config_.tls_key +
                           ": unreadable, not PEM, or the key does not match the certificate");
  if (config_.port == 0) {
    int p = http_->bind_to_any_port(config_.host);
    if (p <= 0) return IoError("cannot listen on " + config_.host + " (any port)");
    port_ = p;
  } else {
    if (!http_->bind_to_port(config_.host, config_.port))
      return IoError("cannot listen on " + config_.host + ":" + std::to_string(config_.port) +
                     " (in use, or not an address of this machine)");
    port_ = config_.port;
  }
  // cpp-httplib 0.11 listens with a backlog of 5 (compiled into Debian's
  // library): a burst of new clients overflows it and some of their first
  // requests fail. listen() again on the bound socket raises the backlog.
  listen_fd_ = find_listening_socket(port_);
  if (listen_fd_ >= 0) ::listen(listen_fd_, SOMAXCONN);
  bound_.store(true);
  return Status::Ok();
}

void EmbedServer::run() {
  run_state_.store(1);
  if (bound_.load() && !draining_.load()) http_->listen_after_bind();
  run_state_.store(2);
  std::unique_ptr<Batcher> b;
  {
    std::lock_guard<std::mutex> lk(mu_);
    b = std::move(batcher_);
    model_.reset();
  }
  if (b) b->stop();
}

void EmbedServer::shutdown() {
  if (draining_.exchange(true)) return;
  drainer_ = std::thread([this] {
    // run() may be between its draining_ check and listening: wait for it to
    // listen (or end) so stop() is not lost.
    if (run_state_.load() == 1) {
      auto until = Clock::now() + std::chrono::seconds(2);
      while (run_state_.load() == 1 && !http_->is_running() && Clock::now() < until)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    // Connections already accepted are answered (503 or their result) before
    // the listening socket closes: httplib drops the queued ones once it is,
    // and closing it resets those the kernel has completed but nobody has
    // accepted yet (their clients saw connect() succeed), so it waits for
    // both to be empty, then closes at once.
    const auto deadline = Clock::now() + std::chrono::milliseconds(config_.drain_timeout_ms);
    while ((connections_->load() > 0 || accept_queue_length(listen_fd_) > 0) && http_->is_running() &&
           Clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    http_->stop();
  });
}

EmbedServer::Reply EmbedServer::run_error_reply(Api api, const Status& s, const std::string& what) const {
  if (s.code() == StatusCode::kCancelled)
    return error_reply(api, 504, "timeout",
                       "the request was not answered within its deadline of " + std::to_string(config_.request_timeout_ms) +
                           " ms (request_timeout_ms), so its model run was stopped (" + s.message() +
                           "): retry later, send fewer or shorter inputs, or raise request_timeout_ms");
  if (s.code() == StatusCode::kOutOfMemory)  // the server stays up; a smaller request may fit
    return error_reply(api, 507, "insufficient_storage",
                       what + " ran out of memory: " + s.to_string() +
                           "; send fewer or shorter inputs, or raise the memory limit (max_tensor_mb, the container's)");
  if (is_device_failure(s.code()))
    return error_reply(api, 503, "device_unavailable",
                       "the accelerator failed and strict mode forbids falling back to the CPU: " + s.message());
  return error_reply(api, 500, "internal_error", what + " failed: " + s.to_string());
}

EmbedServer::Reply EmbedServer::error_reply(Api api, int status, const std::string& type,
                                            const std::string& message) const {
  Reply r;
  r.status = status;
  if (api == Api::kTei) {
    r.body = "{\"error\":" + json_string(message) + ",\"error_type\":" + json_string(type) + "}";
  } else {
    r.body = "{\"error\":{\"message\":" + json_string(message) + ",\"type\":" + json_string(type) +
             ",\"code\":" + std::to_string(status) + "}}";
  }
  return r;
}

void EmbedServer::install_routes() {
  httplib::Server& s = *http_;
  // httplib's pool, counting the connections it holds (see shutdown()) and
  // those still waiting for a thread (idle keep-alive connections make way
  // for them, see http_server.h).
  class CountingPool final : public httplib::TaskQueue {
   public:
    CountingPool(size_t n, std::shared_ptr<std::atomic<size_t>> count, std::shared_ptr<std::atomic<size_t>> waiting)
        : pool_(n), count_(std::move(count)), waiting_(std::move(waiting)) {}
    void enqueue(std::function<void()> fn) override {
      ++*count_;
      ++*waiting_;
      pool_.enqueue([fn = std::move(fn), count = count_, waiting = waiting_] {
        --*waiting;
        fn();
        --*count;
      });
    }
    void shutdown() override { pool_.shutdown(); }

   private:
    httplib::ThreadPool pool_;
    std::shared_ptr<std::atomic<size_t>> count_;
    std::shared_ptr<std::atomic<size_t>> waiting_;
  };
  s.new_task_queue = [n = config_.http_threads, count = connections_, waiting = waiting_connections_] {
    return new CountingPool(static_cast<size_t>(n), count, waiting);
  };
  s.set_payload_max_length(config_.max_body_bytes);
  s.set_keep_alive_max_count(100000);
  // An idle keep-alive connection holds a thread too: no longer than a silent request.
  s.set_keep_alive_timeout(std::min(5, config_.read_timeout_s));
  // A client silent mid-request (slowloris: a header line now and then) holds
  // one of the http_threads; read_timeout_s bounds how long.
  s.set_read_timeout(config_.read_timeout_s, 0);
  s.set_tcp_nodelay(true);

  auto send = [](httplib::Response& res, const Reply& r) {
    res.status = r.status;
    if (r.retry_after_s > 0) res.set_header("Retry-After", std::to_string(r.retry_after_s));
    res.set_content(r.body, r.content_type.c_str());
  };
  // What a route answers when it throws: out of memory (a request that needs
  // more than the process may allocate) is 507 like OutOfMemory from a model
  // run; anything else is a 500 that names it. The server keeps serving.
  auto exception_reply = [this](Api api, std::exception_ptr ep) {
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
      Reply r = handled(api, [&] { return handle(body); });
      --in_flight_;
      // Counted before the response goes out, so a client that reads
      // /metrics right after sees its own request.
      double seconds = t_request_start == Clock::time_point{}
                           ? 0.0
                           : std::chrono::duration<double>(Clock::now() - t_request_start).count();
      metrics_.observe_request(route_label(req.path), r.status, seconds);
      t_request_counted = true;
      if (draining_.load()) res.set_header("Connection", "close");
      send(res, r);
    };
  };
  auto embeddings = [this, with_body](Api api) {
    return with_body(api, [this, api](const std::string& body) { return handle_embeddings(body, api); });
  };
  s.Post("/v1/embeddings", embeddings(Api::kOpenAI));
  s.Post("/embeddings", embeddings(Api::kOpenAI));
  s.Post("/embed", embeddings(Api::kTei));
  s.Post("/embed_sparse", with_body(Api::kTei, [this](const std::string& body) { return handle_embeddings(body, Api::kTei, true); }));
  s.Post("/similarity", with_body(Api::kTei, [this](const std::string& body) { return handle_similarity(body); }));
  s.Post("/tokenize", with_body(Api::kTei, [this](const std::string& body) { return handle_tokenize(body); }));
  s.Post("/decode", with_body(Api::kTei, [this](const std::string& body) { return handle_decode(body); }));
  s.Post("/rerank", with_body(Api::kTei, [this](const std::string& body) { return handle_rerank(body); }));
  s.Post("/v1/rerank", with_body(Api::kOpenAI, [this](const std::string& body) { return handle_v1_rerank(body); }));
  s.Post("/predict", with_body(Api::kTei, [this](const std::string& body) { return handle_predict(body); }));
  s.Post("/embed_all", with_body(Api::kTei, [this](const std::string& body) { return handle_embed_all(body); }));
  s.Get("/v1/models", [this, send](const httplib::Request&, httplib::Response& res) { send(res, info_reply(true)); });
  s.Get("/info", [this, send](const httplib::Request&, httplib::Response& res) { send(res, info_reply(false)); });
  // Readiness and liveness for a load balancer or Kubernetes' probes.
  s.Get("/ready", [this](const httplib::Request&, httplib::Response& res) {
    const HealthInfo h = health();
    const bool ready = h.status == "ok" || h.status == "degraded";
    res.status = ready ? 200 : 503;
    res.set_content(json({{"ready", ready}, {"status", h.status}}).dump(), "application/json");
  });
  s.Get("/live", [this](const httplib::Request&, httplib::Response& res) {
    const HealthInfo h = health();
    res.status = h.status == "failed" ? 503 : 200;
    res.set_content(json({{"live", res.status == 200}, {"status", h.status}}).dump(), "application/json");
  });
  // While draining, every answer closes its connection (keep-alive clients move on).
  s.set_post_routing_handler([this](const httplib::Request&, httplib::Response& res) {
    if (draining_.load()) res.set_header("Connection", "close");
  });
  s.Get("/openapi.json", [this](const httplib::Request&, httplib::Response& res) {
    ModelLimits limits;
    auto m = model();
    if (m) {
      limits.dimension = m->dimension();
      limits.vocab_size = m->vocab_size();
      limits.prompt_names = m->prompt_names();
    }
    res.set_content(openapi_document(dlrt::version(), m ? &limits : nullptr), "application/json");
  });
  s.Get("/docs", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(openapi_docs_page(), "text/html; charset=utf-8");
  });
  s.Get("/health", [this](const httplib::Request&, httplib::Response& res) {
    HealthInfo h = health();
    json j = {{"status", h.status},   {"backend", h.backend}, {"device", h.device},
              {"degraded", h.degraded}, {"since", h.since},   {"reason", h.reason}};
    if (auto m = model()) {
      j["model"] = config_.model_name.empty() ? m->model_name() : config_.model_name;
      j["dimension"] = m->dimension();
      j["max_tokens"] = m->max_length();
    }
    res.status = h.http_status;
    res.set_content(j.dump(-1, ' ', false, json::error_handler_t::replace), "application/json");
  });
  s.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    MetricsGauges g;
    if (Batcher* b = batcher()) {
      g.queue_depth = b->queue_depth();
      g.batches_running = b->batches_running();
    }
    g.requests_in_flight = in_flight_.load();
    HealthInfo h = health();
    g.degraded = h.degraded;
    g.ready = model() != nullptr;
    g.draining = draining_.load();
    res.set_content(metrics_.render(g), "text/plain; version=0.0.4");
  });

  s.set_pre_routing_handler(httplib::Server::HandlerWithResponse([this](const httplib::Request& req,
                                                                        httplib::Response& res) {
    t_request_start = Clock::now();
    t_request_counted = false;
    t_inputs = t_tokens = 0;
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
                          ? "{\"error\":" + json_string(message) + ",\"error_type\":\"invalid_request_error\"}"
                          : "{\"error\":{\"message\":" + json_string(message) + ",\"type\":\"invalid_request_error\",\"code\":405}}",
                      "application/json");
      return httplib::Server::HandlerResponse::Handled;
    }
    if (!config_.api_key.empty() && req.path != "/health" && req.path != "/ready" && req.path != "/live") {
      const std::string auth = req.get_header_value("Authorization");
      const bool bearer = auth.size() > 7 && auth.compare(0, 7, "Bearer ") == 0;
      if (!bearer || !constant_time_equal(auth.substr(7), config_.api_key)) {
        res.status = 401;
        res.set_header("WWW-Authenticate", "Bearer");
        const std::string message = "missing or wrong API key: send \"Authorization: Bearer <key>\"";
        res.set_content(tei_route(req.path)
                            ? "{\"error\":" + json_string(message) + ",\"error_type\":\"authentication_error\"}"
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
                "; routes: " + route_list();
    else
      message = "HTTP " + std::to_string(res.status) + (res.status == 400 ? ": malformed request" : "");
    if (tei_route(req.path))
      res.set_content("{\"error\":" + json_string(message) + ",\"error_type\":\"invalid_request_error\"}", "application/json");
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
    if (!t_request_counted) metrics_.observe_request(route_label(req.path), res.status, seconds);
    t_request_counted = false;
    if (config_.access_log)
      log_.info("request", {{"method", req.method},
                            {"path", req.path},
                            {"status", res.status},
                            {"latency_ms", std::round(seconds * 1e5) / 100},
                            {"inputs", t_inputs},
                            {"tokens", t_tokens},
                            {"request_id", t_request_id},
                            {"remote", req.remote_addr}});
  });
}

}  // namespace dlrt::embed
