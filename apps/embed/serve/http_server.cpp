#include "embed/serve/http_server.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "embed/serve/http_message.h"

namespace dlrt::embed {
namespace {

using Clock = std::chrono::steady_clock;

int to_ms(time_t sec, time_t usec) {
  const long long ms = static_cast<long long>(sec) * 1000 + static_cast<long long>(usec) / 1000;
  return static_cast<int>(std::clamp<long long>(ms, 0, 24LL * 3600 * 1000));
}

long long ms_since(Clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
}

// Waits up to `timeout_ms` for `events` on `sock`: > 0 ready, 0 timed out, < 0 error.
int wait_for(socket_t sock, short events, int timeout_ms) {
  pollfd p{sock, events, 0};
  for (;;) {
    const int n = ::poll(&p, 1, timeout_ms);
    if (n < 0 && errno == EINTR) continue;
    if (n > 0 && (p.revents & POLLNVAL)) return -1;
    return n;
  }
}

void ip_and_port(const sockaddr_storage& addr, socklen_t len, std::string& ip, int& port) {
  std::array<char, NI_MAXHOST> host{};
  std::array<char, NI_MAXSERV> serv{};
  if (::getnameinfo(reinterpret_cast<const sockaddr*>(&addr), len, host.data(), host.size(), serv.data(),
                    serv.size(), NI_NUMERICHOST | NI_NUMERICSERV) != 0)
    return;
  ip = host.data();
  port = std::atoi(serv.data());
}

constexpr size_t kMaxHead = 64 * 1024;  // request line and header fields
constexpr int kHeadGraceMs = 100;       // a head slower than this counts as pending
constexpr int kBusyGraceMs = 20;        // a body's grace while the pending ones are at their bound
constexpr int kLingerMs = 250;           // after an error answer, unread input is discarded this long
constexpr size_t kMaxLingerBytes = 1 << 20;  // or up to this much
// A request body must average this rate once read_timeout has passed since it
// started (a trickling body ends with 408 instead of holding its thread).
constexpr long long kMinBodyBytesPerSecond = 1024;
// A response may still be written this long after its request's deadline
// (the 504 or 408 that says the deadline passed).
constexpr int kWriteGraceMs = 1000;

thread_local Clock::time_point t_arrival;

// What ended a body read early (ConnectionStream::BodyWatch).
enum class BodyStop { kNone, kDeadline, kTooSlow, kBusy };

// The bounds of one body as it is read: the request's deadline, the minimum
// rate after a grace, and the connections slow to send their request
// (counted past kHeadGraceMs, at most max_pending of them at once).
struct BodyWatch {
  Clock::time_point start, deadline;  // deadline: the epoch when none
  int grace_ms = 0;
  std::atomic<int>* pending = nullptr;
  int max_pending = 0;
  bool counted = false;
  size_t received = 0;
  BodyStop stop = BodyStop::kNone;
};

// One connection (a socket, or TLS over it) with a read buffer that lives as
// long as the connection, so whatever was read past the end of one request is
// the start of the next.
class ConnectionStream final : public httplib::Stream {
 public:
  ConnectionStream(socket_t sock, SSL* ssl, int read_timeout_ms, int write_timeout_ms)
      : sock_(sock), ssl_(ssl), read_timeout_ms_(read_timeout_ms), write_timeout_ms_(write_timeout_ms) {}

  // Bytes read and not consumed yet, here or (TLS) decrypted and not taken.
  bool buffered() const { return begin_ < end_ || (ssl_ != nullptr && SSL_pending(ssl_) > 0); }
  std::string_view pending() const { return {buffer_.data() + begin_, end_ - begin_}; }
  void consume(size_t n) { begin_ += std::min(n, end_ - begin_); }

  // > 0 something to read, 0 nothing within timeout_ms, < 0 an error.
  int wait_readable(int timeout_ms) const { return buffered() ? 1 : wait_input(timeout_ms); }
  // The same for input not in the buffer yet (what fill() would read).
  int wait_input(int timeout_ms) const {
    return ssl_ != nullptr && SSL_pending(ssl_) > 0 ? 1 : wait_for(sock_, POLLIN, timeout_ms);
  }

  // Reads what the connection has into the buffer (growing it up to kMaxHead):
  // > 0 bytes read, 0 the peer closed, < 0 an error.
  ssize_t fill() {
    if (begin_ > 0) {
      std::memmove(buffer_.data(), buffer_.data() + begin_, end_ - begin_);
      end_ -= begin_;
      begin_ = 0;
    }
    if (end_ == buffer_.size()) buffer_.resize(std::min(buffer_.size() * 2, kMaxHead));
    if (end_ == buffer_.size()) return -1;
    const ssize_t n = receive(buffer_.data() + end_, buffer_.size() - end_);
    if (n > 0) end_ += static_cast<size_t>(n);
    return n;
  }

  // Writes all of `data` (false when the peer is gone or too slow).
  bool write_all(std::string_view data) {
    for (size_t sent = 0; sent < data.size();) {
      const ssize_t n = write(data.data() + sent, data.size() - sent);
      if (n <= 0) return false;
      sent += static_cast<size_t>(n);
    }
    return true;
  }

  // Ends the connection at once after an answer: what the client sent
  // already is discarded first, so that closing does not reset the connection
  // over unread input (the client may still miss the answer if it sends more).
  void drain_close() {
    if (ssl_ != nullptr) SSL_shutdown(ssl_);
    ::shutdown(sock_, SHUT_WR);
    std::array<char, 16384> sink;
    for (size_t drained = 0; drained < kMaxLingerBytes;) {
      const ssize_t n = ::recv(sock_, sink.data(), sink.size(), MSG_DONTWAIT);
      if (n <= 0) break;
      drained += static_cast<size_t>(n);
    }
  }

  // Ends the connection after an error answer: the write side is shut
  // (close_notify first over TLS), then what the client still sends (the rest
  // of a refused body) is discarded for a short while, so closing does not
  // reset the connection before the client has read the answer.
  void linger_close() {
    if (ssl_ != nullptr) SSL_shutdown(ssl_);
    ::shutdown(sock_, SHUT_WR);
    const auto start = Clock::now();
    std::array<char, 16384> sink;
    for (size_t drained = 0; drained < kMaxLingerBytes;) {
      const long long left = kLingerMs - ms_since(start);
      if (left <= 0 || wait_for(sock_, POLLIN, static_cast<int>(left)) <= 0) break;
      const ssize_t n = ::recv(sock_, sink.data(), sink.size(), MSG_DONTWAIT);
      if (n <= 0) break;
      drained += static_cast<size_t>(n);
    }
  }

  // Reads of a body go by `watch` (until unwatched with nullptr); writes
  // fail past `write_deadline` (the epoch: none).
  void watch_body(BodyWatch* watch) { body_ = watch; }
  void set_write_deadline(Clock::time_point t) { write_deadline_ = t; }

  bool is_readable() const override { return body_ != nullptr ? wait_body() : wait_readable(read_timeout_ms_) > 0; }
  bool is_writable() const override {
    int ms = write_timeout_ms_;
    if (write_deadline_ != Clock::time_point{}) {
      const long long left = -ms_since(write_deadline_);
      if (left <= 0) return false;
      ms = static_cast<int>(std::min<long long>(ms, left));
    }
    return wait_for(sock_, POLLOUT, ms) > 0;
  }

  ssize_t read(char* ptr, size_t size) override {
    if (begin_ == end_) {
      if (!is_readable()) return -1;
      if (size >= buffer_.size()) return counted(receive(ptr, size));  // large reads skip the buffer
      const ssize_t n = receive(buffer_.data(), buffer_.size());
      if (n <= 0) return n;
      begin_ = 0;
      end_ = static_cast<size_t>(n);
    }
    const size_t n = std::min(size, end_ - begin_);
    std::memcpy(ptr, buffer_.data() + begin_, n);
    begin_ += n;
    return counted(static_cast<ssize_t>(n));
  }

  ssize_t write(const char* ptr, size_t size) override {
    if (!is_writable()) return -1;
    if (ssl_ != nullptr) {
      ERR_clear_error();
      const int n = SSL_write(ssl_, ptr, static_cast<int>(std::min<size_t>(size, INT_MAX)));
      return n > 0 ? n : -1;
    }
    for (;;) {
      const ssize_t n = ::send(sock_, ptr, size, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      return n;
    }
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    sockaddr_storage addr{};
    socklen_t len = sizeof addr;
    if (::getpeername(sock_, reinterpret_cast<sockaddr*>(&addr), &len) == 0) ip_and_port(addr, len, ip, port);
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    sockaddr_storage addr{};
    socklen_t len = sizeof addr;
    if (::getsockname(sock_, reinterpret_cast<sockaddr*>(&addr), &len) == 0) ip_and_port(addr, len, ip, port);
  }
  socket_t socket() const override { return sock_; }

 private:
  ssize_t receive(char* ptr, size_t size) {
    if (ssl_ != nullptr) {  // the socket has SO_RCVTIMEO: a record that stops arriving ends the read
      ERR_clear_error();
      const int n = SSL_read(ssl_, ptr, static_cast<int>(std::min<size_t>(size, INT_MAX)));
      if (n > 0) return n;
      return SSL_get_error(ssl_, n) == SSL_ERROR_ZERO_RETURN ? 0 : -1;
    }
    for (;;) {
      const ssize_t n = ::recv(sock_, ptr, size, 0);
      if (n < 0 && errno == EINTR) continue;
      return n;
    }
  }

  ssize_t counted(ssize_t n) {
    if (body_ != nullptr && n > 0) body_->received += static_cast<size_t>(n);
    return n;
  }

  // Waits for more of a watched body: false after read_timeout of silence,
  // or when the watch stops it (body_->stop says why).
  bool wait_body() const {
    if (buffered()) return true;
    BodyWatch& w = *body_;
    const auto silent_since = Clock::now();
    for (;;) {
      const auto now = Clock::now();
      if (w.deadline != Clock::time_point{} && now >= w.deadline) {
        w.stop = BodyStop::kDeadline;
        return false;
      }
      const long long elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(now - w.start).count();
      if (elapsed > w.grace_ms &&
          static_cast<long long>(w.received) < kMinBodyBytesPerSecond * (elapsed - w.grace_ms) / 1000) {
        w.stop = BodyStop::kTooSlow;
        return false;
      }
      const int grace = w.pending != nullptr && w.pending->load() >= w.max_pending ? kBusyGraceMs : kHeadGraceMs;
      if (!w.counted && elapsed >= grace && w.pending != nullptr) {
        if (w.pending->fetch_add(1) >= w.max_pending) {
          --*w.pending;
          w.stop = BodyStop::kBusy;
          return false;
        }
        w.counted = true;
      }
      if (ms_since(silent_since) >= read_timeout_ms_) return false;
      const int ready = wait_input(w.counted ? 50 : 10);
      if (ready != 0) return ready > 0;
    }
  }

  socket_t sock_;
  SSL* ssl_;
  int read_timeout_ms_;
  int write_timeout_ms_;
  BodyWatch* body_ = nullptr;
  Clock::time_point write_deadline_{};
  std::vector<char> buffer_ = std::vector<char>(4096);
  size_t begin_ = 0;
  size_t end_ = 0;
};

// One request, canonically framed (http::canonical_request), as httplib reads
// it; the response goes out on the connection. Whatever httplib does not read
// of it is dropped with it.
class MessageStream final : public httplib::Stream {
 public:
  MessageStream(std::string message, ConnectionStream& conn) : message_(std::move(message)), conn_(conn) {}

  // Whether the response's head said "Connection: close" (a route may set it).
  bool response_closes() const { return response_closes_; }

  bool is_readable() const override { return at_ < message_.size(); }
  bool is_writable() const override { return conn_.is_writable(); }
  ssize_t read(char* ptr, size_t size) override {
    const size_t n = std::min(size, message_.size() - at_);
    std::memcpy(ptr, message_.data() + at_, n);
    at_ += n;
    return static_cast<ssize_t>(n);
  }
  ssize_t write(const char* ptr, size_t size) override {
    if (!wrote_) {  // httplib writes the response head in one call
      wrote_ = true;
      std::string head(ptr, std::min(size, std::string_view(ptr, size).find("\r\n\r\n")));
      std::transform(head.begin(), head.end(), head.begin(), [](char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); });
      response_closes_ = head.find("\r\nconnection: close") != std::string::npos;
    }
    return conn_.write(ptr, size);
  }
  void get_remote_ip_and_port(std::string& ip, int& port) const override { conn_.get_remote_ip_and_port(ip, port); }
  void get_local_ip_and_port(std::string& ip, int& port) const override { conn_.get_local_ip_and_port(ip, port); }
  socket_t socket() const override { return conn_.socket(); }

 private:
  std::string message_;
  size_t at_ = 0;
  ConnectionStream& conn_;
  bool wrote_ = false;
  bool response_closes_ = false;
};

// Writes a whole error answer and nothing else (the connection closes after;
// `linger` when the client may still be sending the refused request).
void send_error(ConnectionStream& strm, int status, const std::string& message, bool linger = true) {
  const std::string body = "{\"error\":{\"message\":\"" + message + "\",\"type\":\"invalid_request_error\",\"code\":" +
                           std::to_string(status) + "}}";
  std::string out = "HTTP/1.1 " + std::to_string(status) + " " + http::reason_phrase(status) +
                    "\r\nContent-Type: application/json\r\nConnection: close\r\n";
  if (status == 503) out += "Retry-After: 1\r\n";
  if (status == 415) out += "Accept-Encoding: gzip, deflate\r\n";
  out += "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
  if (!strm.write_all(out)) return;
  if (linger)
    strm.linger_close();
  else
    strm.drain_close();
}

// The TLS handshake, within `timeout_ms` in all; nullptr when it fails. The
// socket is left blocking with SO_RCVTIMEO / SO_SNDTIMEO, so a TLS record
// that stops arriving (or cannot be sent) ends the call.
SSL* tls_accept(SSL_CTX* ctx, socket_t sock, int timeout_ms, int write_timeout_ms) {
  SSL* ssl = ctx != nullptr ? SSL_new(ctx) : nullptr;
  if (ssl == nullptr) return nullptr;
  const int flags = ::fcntl(sock, F_GETFL, 0);
  bool ok = flags >= 0 && ::fcntl(sock, F_SETFL, flags | O_NONBLOCK) == 0 && SSL_set_fd(ssl, sock) == 1;
  const auto start = Clock::now();
  while (ok) {
    ERR_clear_error();
    const int r = SSL_accept(ssl);
    if (r == 1) break;
    const int err = SSL_get_error(ssl, r);
    const short events = err == SSL_ERROR_WANT_READ ? POLLIN : err == SSL_ERROR_WANT_WRITE ? POLLOUT : 0;
    const long long left = timeout_ms - ms_since(start);
    ok = events != 0 && left > 0 && wait_for(sock, events, static_cast<int>(left)) > 0;
  }
  ok = ok && ::fcntl(sock, F_SETFL, flags) == 0;
  auto set_timeout = [sock](int opt, int ms) {
    timeval tv{ms / 1000, (ms % 1000) * 1000};
    return ::setsockopt(sock, SOL_SOCKET, opt, &tv, sizeof tv) == 0;
  };
  ok = ok && set_timeout(SO_RCVTIMEO, timeout_ms) && set_timeout(SO_SNDTIMEO, write_timeout_ms);
  if (!ok) {
    SSL_free(ssl);
    return nullptr;
  }
  return ssl;
}

}  // namespace

std::chrono::steady_clock::time_point request_arrival() { return t_arrival; }

template <typename Base>
bool Pipelining<Base>::process_and_close_socket(socket_t sock) {
  const int read_ms = to_ms(this->read_timeout_sec_, this->read_timeout_usec_);
  const int write_ms = to_ms(this->write_timeout_sec_, this->write_timeout_usec_);
  SSL* ssl = nullptr;
  bool ok = false;
  if constexpr (std::is_same_v<Base, httplib::SSLServer>) ssl = tls_accept(this->ssl_context(), sock, read_ms, write_ms);
  if (ssl != nullptr || !std::is_same_v<Base, httplib::SSLServer>) {
    ConnectionStream strm(sock, ssl, read_ms, write_ms);
    ok = serve_connection(strm);
  }
  if (ssl != nullptr) {
    if (ok) SSL_shutdown(ssl);
    SSL_free(ssl);
  }
  ::shutdown(sock, SHUT_RDWR);
  ::close(sock);
  return ok;
}

template <typename Base>
template <typename Stream>
bool Pipelining<Base>::serve_connection(Stream& strm) {
  const int read_ms = to_ms(this->read_timeout_sec_, this->read_timeout_usec_);
  const auto idle_limit = std::chrono::seconds(this->keep_alive_timeout_sec_);
  auto stopping = [this] { return this->svr_sock_ == INVALID_SOCKET; };
  enum class Head { kComplete, kGone, kTimeout, kTooLarge, kBusy };
  // The head of the next request into strm's buffer, within read_ms in all;
  // past kHeadGraceMs it counts against max_pending_heads_. Empty lines before
  // it are dropped (RFC 9112 section 2.2).
  auto read_head = [&]() {
    const auto start = Clock::now();
    bool counted = false;
    Head h = Head::kGone;
    for (;;) {
      while (strm.pending().substr(0, 2) == "\r\n") strm.consume(2);
      if (strm.pending().find("\r\n\r\n") != std::string_view::npos) {
        h = Head::kComplete;
        break;
      }
      if (strm.pending().size() >= kMaxHead) {
        h = Head::kTooLarge;
        break;
      }
      if (stopping()) break;
      const long long waited = ms_since(start);
      if (waited >= read_ms) {
        h = Head::kTimeout;
        break;
      }
      if (!counted && waited >= kHeadGraceMs) {
        if (pending_heads_.fetch_add(1) >= max_pending_heads_) {
          --pending_heads_;
          h = Head::kBusy;
          break;
        }
        counted = true;
      }
      const long long until = counted ? read_ms : std::min(read_ms, kHeadGraceMs);
      const int ready = strm.wait_input(static_cast<int>(std::clamp<long long>(until - waited, 1, 50)));
      if (ready < 0 || (ready > 0 && strm.fill() <= 0)) break;
    }
    if (counted) --pending_heads_;
    return h;
  };
  // Between keep-alive requests: true when the next one starts; false when
  // the connection is to close (idle too long, the server stops, or another
  // accepted connection waits for this thread).
  auto next_request = [&]() {
    const auto idle_since = Clock::now();
    for (;;) {
      if (stopping()) return false;
      const bool give_up = (waiting_ && waiting_->load() > 0) || Clock::now() - idle_since > idle_limit;
      const int ready = strm.wait_readable(give_up ? 0 : 50);
      if (ready != 0) return ready > 0;
      if (give_up) return false;
    }
  };
  const uint64_t max_body = this->payload_max_length_;
  bool ok = false;
  for (size_t left = this->keep_alive_max_count_; left > 0 && !stopping(); --left) {
    if (left != this->keep_alive_max_count_ && !strm.buffered() && !next_request()) break;
    t_arrival = Clock::now();
    const auto deadline =
        request_timeout_ms_ > 0 ? t_arrival + std::chrono::milliseconds(request_timeout_ms_) : Clock::time_point{};
    strm.set_write_deadline(deadline == Clock::time_point{} ? deadline
                                                            : deadline + std::chrono::milliseconds(kWriteGraceMs));
    const Head head = read_head();
    if (head != Head::kComplete) {
      if (head == Head::kBusy) send_error(strm, 503, "too many connections are sending their request head; retry", false);
      if (head == Head::kTooLarge) send_error(strm, 431, "the request head is over 64 KiB");
      if (head == Head::kTimeout && strm.buffered())
        send_error(strm, 408, "the request head did not arrive within the read timeout", false);
      break;
    }
    const size_t head_size = strm.pending().find("\r\n\r\n");
    http::RequestHead request;
    http::Refusal refusal = http::parse_head(strm.pending().substr(0, head_size), max_body, request);
    if (refusal) {
      send_error(strm, refusal.status, refusal.message);
      break;
    }
    strm.consume(head_size + 4);
    if (request.expect_continue && !strm.buffered() && !strm.write_all("HTTP/1.1 100 Continue\r\n\r\n")) break;
    std::string body;
    BodyWatch watch{Clock::now(), deadline, read_ms, &pending_heads_, max_pending_heads_};
    strm.watch_body(&watch);
    refusal = http::read_body(strm, request, max_body, body);
    strm.watch_body(nullptr);
    if (watch.counted) --pending_heads_;
    if (refusal && watch.stop == BodyStop::kDeadline)
      refusal = {408, "the request body did not arrive within the request's deadline (request_timeout_ms)"};
    if (refusal && watch.stop == BodyStop::kTooSlow)
      refusal = {408, "the request body arrived slower than " + std::to_string(kMinBodyBytesPerSecond) +
                          " bytes per second after the read timeout"};
    if (refusal && watch.stop == BodyStop::kBusy) {
      send_error(strm, 503, "too many connections are sending their request slowly; retry", false);
      break;
    }
    if (refusal) {
      send_error(strm, refusal.status, refusal.message);
      break;
    }
    MessageStream message(http::canonical_request(request, body), strm);
    body = std::string();
    const bool close = !request.keep_alive || left == 1;
    bool connection_closed = false;
    ok = this->process_request(message, close, connection_closed, nullptr);
    if (!ok || close || connection_closed || message.response_closes()) break;
  }
  return ok;
}

template class Pipelining<httplib::Server>;
template class Pipelining<httplib::SSLServer>;

}  // namespace dlrt::embed
