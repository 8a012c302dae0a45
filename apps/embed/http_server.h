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
#pragma once

#include <httplib.h>

namespace dlrt::embed {

class PipeliningServer final : public httplib::Server {
 private:
  // httplib::Server's private virtual hook, run on a pool thread per accepted
  // connection; closes the socket before it returns.
  bool process_and_close_socket(socket_t sock) override;
};

}  // namespace dlrt::embed
