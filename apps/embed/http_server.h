// The plain-HTTP server behind `dlrt serve`: cpp-httplib's routing and
// request parsing with dlrt's own connection loop.
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
// The head of each request (request line and header fields) is read here
// before httplib parses it, and held to RFC 9112: a field line without a colon,
// whitespace before the colon, an obs-fold line (one starting with a space or a
// tab) and Content-Length values that are not one and the same number are
// answered 400 and the connection is closed (request smuggling behind a proxy
// relies on such heads being read differently). The head must arrive within
// the read timeout in all (431 past 64 KiB); while more than half the
// connection threads wait for heads, a new connection whose head has not come
// within 100 ms is answered 503 and closed, so slow clients cannot hold every
// thread and /health, /ready stay answered.
#pragma once

#include <atomic>

#include <httplib.h>

namespace dlrt::embed {

class PipeliningServer final : public httplib::Server {
 public:
  // Connections that may wait for an incomplete head at once (at least 1).
  void set_max_pending_heads(int n) { max_pending_heads_ = n < 1 ? 1 : n; }

 private:
  // httplib::Server's private virtual hook, run on a pool thread per accepted
  // connection; closes the socket before it returns.
  bool process_and_close_socket(socket_t sock) override;

  int max_pending_heads_ = 32;
  std::atomic<int> pending_heads_{0};
};

}  // namespace dlrt::embed
