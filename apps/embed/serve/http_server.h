// The HTTP server behind `dlrt serve`, plain and over TLS: dlrt's own
// connection loop and request framing, cpp-httplib's routing.
//
// cpp-httplib 0.11 (Debian 12) reads each request of a keep-alive connection
// through a new buffered stream, so bytes read ahead of one request (a second
// request pipelined in the same packet) are dropped with that stream: the
// client waits for an answer that never comes. This server keeps one buffered
// stream per connection, so pipelined requests are answered in order
// (RFC 9112 section 9.3.2), and otherwise keeps httplib's rules: read and write
// timeouts per call, keep_alive_max_count requests per connection, an idle
// connection closed after keep_alive_timeout, and the loop ends when the
// server stops or a response closes the connection.
//
// Each request is read whole here before httplib sees it (embed/http_message.h):
// the head is held to RFC 9112 (request line, field lines, Host, Content-Length,
// Transfer-Encoding), the body is read by its framing under max_body_bytes
// (chunked decoded strictly), and httplib is handed a canonical copy framed by
// Content-Length; whatever it leaves unread (a GET's body, the body of a
// request the pre-routing hook answers) goes with that copy. A refused request
// is answered 400/413/501/505 and the connection is closed (request smuggling
// behind a proxy relies on messages being framed differently).
//
// Threads: the head must arrive within the read timeout in all (431 past
// 64 KiB); the body within the request's deadline and, once the read timeout
// has passed since it began, at 1 KiB/s on average (else 408). While more
// than half the connection threads wait for a slow head or body, a new
// connection whose head or body has not come within 100 ms is answered 503
// and closed.
// A connection idle between keep-alive requests gives its thread up (closes)
// as soon as another accepted connection waits for a thread. So neither slow
// nor idle clients can hold every thread, and /health, /ready stay answered.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>

#include <httplib.h>

namespace dlrt::embed {

// Base is httplib::Server (plain HTTP) or httplib::SSLServer (TLS).
template <typename Base>
class Pipelining final : public Base {
 public:
  using Base::Base;

  // Connections that may wait for an incomplete head at once (at least 1).
  void set_max_pending_heads(int n) { max_pending_heads_ = n < 1 ? 1 : n; }
  // Each request's deadline from its arrival (0: none): its body must have
  // arrived by then (408), and its answer be written within a second after.
  void set_request_timeout_ms(int ms) { request_timeout_ms_ = ms; }
  // Accepted connections waiting for a thread (counted by the server's task
  // queue): while there are any, idle keep-alive connections are closed.
  void set_waiting_connections(std::shared_ptr<const std::atomic<size_t>> waiting) { waiting_ = std::move(waiting); }

 private:
  // httplib::Server's private virtual hook, run on a pool thread per accepted
  // connection; closes the socket before it returns.
  bool process_and_close_socket(socket_t sock) override;

  template <typename Stream>
  bool serve_connection(Stream& strm);

  int max_pending_heads_ = 32;
  int request_timeout_ms_ = 0;
  std::atomic<int> pending_heads_{0};
  std::shared_ptr<const std::atomic<size_t>> waiting_;
};

// When the request being handled on this thread began to arrive (its head's
// first read; the epoch outside a request): the start of its deadline.
std::chrono::steady_clock::time_point request_arrival();

using PipeliningServer = Pipelining<httplib::Server>;
using PipeliningTlsServer = Pipelining<httplib::SSLServer>;

extern template class Pipelining<httplib::Server>;
extern template class Pipelining<httplib::SSLServer>;

}  // namespace dlrt::embed
