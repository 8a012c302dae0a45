// dlrt serve's server: its lifecycle (listening, the models set as they load,
// graceful shutdown), the connections it holds and each batch's outcome. The
// routes are installed by server_dispatch.cpp from the table (routes.h);
// health is in server_health.cpp.
#include "embed/serve/server.h"

#include <httplib.h>

#include <algorithm>
#include <functional>
#include <thread>

#include <arpa/inet.h>
#include <linux/filter.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include "embed/serve/http_server.h"
#include "embed/serve/server_util.h"

namespace dlrt::embed {
namespace {

using Clock = std::chrono::steady_clock;
using server_util::is_device_failure;

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

// Makes a listening socket drop every incoming packet (a classic BPF filter
// that keeps nothing): no new connection completes its handshake from then on
// (a client's SYN goes unanswered, and once the socket closes its retry is
// refused), while those already in the accept queue can still be accepted. So
// the queue only empties, and closing the socket after it has emptied resets
// no connection whose client saw connect() succeed.
void stop_new_handshakes(int fd) {
  if (fd < 0) return;
  sock_filter drop_all[] = {{BPF_RET | BPF_K, 0, 0, 0}};
  sock_fprog program{1, drop_all};
  ::setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &program, sizeof program);
}
}  // namespace

std::string report_device(const dlrt::RunReport& report) {
  for (const auto& p : report.partitions)
    if (p.backend != "cpu") return p.device;
  return "cpu:0";
}


EmbedServer::EmbedServer(ServiceConfig config)
    : config_(std::move(config)),
      log_(config_.json_logs),
      registry_(served_models(config_)),
      slots_(std::make_shared<RunSlots>(config_.pool_size)) {
  auto limit = [this](auto server) {
    server->set_max_pending_heads(config_.http_threads / 2);
    server->set_request_timeout_ms(config_.request_timeout_ms);
    server->set_waiting_connections(waiting_connections_);
    http_ = std::move(server);
  };
  if (!config_.tls_cert.empty())
    limit(std::make_unique<PipeliningTlsServer>(config_.tls_cert.c_str(), config_.tls_key.c_str()));
  else
    limit(std::make_unique<PipeliningServer>());
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
  config_.max_inputs_per_request = inputs_per_request_limit(config_);  // 0: the default, resolved once
  install_routes();
  install_hooks();
}

EmbedServer::~EmbedServer() {
  shutdown();
  if (drainer_.joinable()) drainer_.join();
  for (auto& b : registry_.release()) b->stop();
}

std::chrono::steady_clock::time_point EmbedServer::request_deadline() const {
  auto arrival = request_arrival();
  if (arrival == std::chrono::steady_clock::time_point{}) arrival = std::chrono::steady_clock::now();
  return arrival + std::chrono::milliseconds(config_.request_timeout_ms);
}

std::shared_ptr<const EmbedModel> EmbedServer::model() const { return registry_.default_model().model; }

Batcher* EmbedServer::batcher() const { return registry_.default_model().batcher.get(); }

void EmbedServer::set_model(std::shared_ptr<const EmbedModel> model) { set_model_at(0, std::move(model)); }

void EmbedServer::set_model(const std::string& name, std::shared_ptr<const EmbedModel> model) {
  if (auto i = registry_.index_of(name)) set_model_at(*i, std::move(model));
}

void EmbedServer::set_model_at(size_t index, std::shared_ptr<const EmbedModel> model) {
  BatcherOptions o;
  o.max_batch_size = config_.max_batch_size;
  o.max_batch_tokens = model ? batch_tokens(*model) : config_.max_batch_tokens;
  o.max_wait = std::chrono::milliseconds(config_.max_wait_ms);
  o.max_queue = config_.max_queue;
  o.workers = config_.pool_size;
  o.slots = slots_;  // shared with the other models' batchers
  // A batch-dependent model (dynamic quantization) runs each input alone, so
  // every text gets its own vector; the workers still run inputs in parallel.
  if (model && model->batch_dependent()) o.max_batch_size = 1;
  const EmbedModel* m = model.get();
  // The name a bare folder is served by: model_name, else the folder's.
  const std::string display = config_.model_name.empty() && m ? m->model_name() : config_.model_name;
  std::string name = registry_.all()[index].config.name;
  if (name.empty()) name = display;
  // The batcher carries what the model's capability gives: sparse vectors stay sparse.
  BatchObserver observe = [this, index, name](const BatchInfo& info) { on_batch(index, name, info); };
  std::shared_ptr<Batcher> b;
  if (const SparseOut* sparse = m ? m->as<SparseOut>() : nullptr) {
    b = std::make_shared<Batcher>(
        SparseBatchFn([sparse](const std::vector<Encoding>& batch, const dlrt::RunOptions& bounds) {
          return sparse->encode_sparse(batch, bounds);
        }),
        o, observe);
  } else {
    const DenseOut* dense = m ? m->as<DenseOut>() : nullptr;
    b = std::make_shared<Batcher>(
        BatchFn([dense](const std::vector<Encoding>& batch, const dlrt::RunOptions& bounds) -> Result<EmbedResult> {
          if (!dense) return Unsupported("the model gives no vectors to batch");  // its routes refuse it first
          return dense->embed_encoded(batch, bounds);
        }),
        o, observe);
  }
  registry_.set_model(index, std::move(model), std::move(b), display);
}

void EmbedServer::set_load_error(const std::string& reason) { registry_.set_load_error(0, reason); }

void EmbedServer::set_load_error(const std::string& name, const std::string& reason) {
  if (auto i = registry_.index_of(name)) registry_.set_load_error(*i, reason);
}

void EmbedServer::on_batch(size_t index, const std::string& name, const BatchInfo& info) {
  std::string device;
  if (info.report) {
    device = report_device(*info.report);
  } else if (auto m = registry_.all()[index].model) {
    device = report_device(m->placement());
  }
  metrics_.observe_batch(info.inputs, info.padded_tokens, info.tokens, device, info.seconds, info.status.ok());
  metrics_.observe_model_batch(name, info.inputs, info.tokens, info.status.ok());
  if (info.status.ok()) registry_.set_device_error(index, "");
  else if (is_device_failure(info.status.code())) registry_.set_device_error(index, info.status.message());
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
  for (auto& b : registry_.release()) b->stop();
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
    // accepted yet (their clients saw connect() succeed), so no handshake
    // completes from here on, and it waits for both to be empty, then closes.
    stop_new_handshakes(listen_fd_);
    const auto deadline = Clock::now() + std::chrono::milliseconds(config_.drain_timeout_ms);
    while ((connections_->load() > 0 || accept_queue_length(listen_fd_) > 0) && http_->is_running() &&
           Clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    http_->stop();
  });
}

}  // namespace dlrt::embed
