// Request framing and connection handling of dlrt serve's HTTP server
// (apps/embed/serve/http_server.cpp, http_message.cpp), with raw bytes in and the
// exact statuses out: a body is always read or the connection closed (no
// request smuggling), chunked framing per RFC 9112 section 7.1, Host and field
// value rules, Transfer-Encoding rules, idle keep-alive connections that make
// way for new ones, and the same framing over TLS.
#include <gtest/gtest.h>

#include <cctype>
#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/ssl.h>

#include "raw_http.h"
#include "test_server.h"

namespace dlrt::embed {
namespace {

using testing::connect_loopback;
using testing::send_all;
using testing::TestServer;

struct Answer {
  std::string data;
  bool closed = false;  // the server closed the connection
};

// What the server sends on `fd` until it closes, or until nothing more came
// for `quiet_ms` after something did (10 s for the first byte).
Answer receive(int fd, int quiet_ms = 600) {
  Answer a;
  char buf[65536];
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, a.data.empty() ? 10000 : quiet_ms) <= 0) break;
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) {
      a.closed = true;
      break;
    }
    a.data.append(buf, static_cast<size_t>(n));
  }
  return a;
}

Answer exchange(int port, const std::string& request, int quiet_ms = 600) {
  const int fd = connect_loopback(port);
  if (fd < 0) return {};
  send_all(fd, request);  // the server may close before all is sent
  Answer a = receive(fd, quiet_ms);
  ::close(fd);
  return a;
}

// The status of every response in `data`, in order.
std::vector<int> statuses(const std::string& data) {
  std::vector<int> out;
  for (size_t p = data.find("HTTP/1.1 "); p != std::string::npos; p = data.find("HTTP/1.1 ", p + 1))
    if (p + 13 <= data.size() && std::isdigit(static_cast<unsigned char>(data[p + 9])) && data[p + 12] == ' ')
      out.push_back(std::atoi(data.c_str() + p + 9));
  return out;
}

const std::string kSmuggled = "GET /v1/models HTTP/1.1\r\nHost: x\r\n\r\n";
// Ends a connection's requests: /live's answer, then the server closes.
const std::string kLast = "GET /live HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";

std::string with_body(const std::string& request_line, const std::string& extra, const std::string& body) {
  return request_line + "\r\nHost: x\r\n" + extra + "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

// S1: a body announced with Content-Length is read whatever answers the
// request (a GET route, the 404 of OPTIONS, the pre-routing hook's 405 and
// 401), so the request it holds is never run: one response per request.
TEST(ServeHttpFraming, BodyIsReadWhateverTheAnswer) {
  TestServer t;
  const std::vector<std::pair<std::string, int>> cases = {
      {"GET /health HTTP/1.1", 200}, {"HEAD /health HTTP/1.1", 200},           {"OPTIONS /embed HTTP/1.1", 404},
      {"PUT /embed HTTP/1.1", 405},  {"DELETE /v1/embeddings HTTP/1.1", 405}, {"GET /nowhere HTTP/1.1", 404},
  };
  for (const auto& [line, status] : cases) {
    const Answer a = exchange(t.server->port(), with_body(line, "", kSmuggled) + kLast);
    EXPECT_EQ(statuses(a.data), (std::vector<int>{status, 200})) << line << ":\n" << a.data.substr(0, 600);
    EXPECT_EQ(a.data.find("\"object\":\"list\""), std::string::npos) << line << ": the smuggled request ran";
    EXPECT_TRUE(a.closed) << line;
  }
  ServiceConfig c;
  c.api_key = "sekret";
  TestServer keyed(c);
  const Answer a = exchange(keyed.server->port(),
                            with_body("POST /v1/embeddings HTTP/1.1",
                                      "Authorization: Bearer wrong\r\nContent-Type: application/json\r\n", kSmuggled) +
                                kLast);
  EXPECT_EQ(statuses(a.data), (std::vector<int>{401, 200})) << a.data.substr(0, 600);
}

const std::string kBody = R"({"inputs": "cat"})";  // 17 bytes, 0x11
const std::string kChunkedHead =
    "POST /embed HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n"
    "Connection: close\r\n\r\n";

// S2: chunked framing per RFC 9112 section 7.1; anything else is 400 and the
// connection is closed, so nothing after the bad framing runs.
TEST(ServeHttpFraming, ChunkedFramingIsStrict) {
  TestServer t;
  const std::vector<std::pair<const char*, std::string>> refused = {
      {"chunk data not followed by CRLF", "11\r\n" + kBody + "XX\r\n" + kSmuggled},
      {"chunk-size 0x11", "0x11\r\n" + kBody + "\r\n0\r\n\r\n"},
      {"chunk-size +11", "+11\r\n" + kBody + "\r\n0\r\n\r\n"},
      {"chunk-size ' 11'", " 11\r\n" + kBody + "\r\n0\r\n\r\n"},
      {"chunk-size -1", "-1\r\n" + kBody + "\r\n0\r\n\r\n"},
      {"bare LF after the chunk-size", "11\n" + kBody + "\r\n0\r\n\r\n"},
      {"bare LF chunk lines", "11\n" + kBody + "\n0\n\n"},
      {"bare LF after the last chunk", "11\r\n" + kBody + "\r\n0\n\r\n"},
      {"chunk data shorter than its size", "12\r\n" + kBody + "\r\n0\r\n\r\n"},
      {"junk after the chunk-size", "11 x\r\n" + kBody + "\r\n0\r\n\r\n"},
      {"a trailer line without a colon", "11\r\n" + kBody + "\r\n0\r\nX-T\r\n\r\n"},
      {"a NUL in a trailer value", "11\r\n" + kBody + "\r\n0\r\nX-T: a" + std::string(1, '\0') + "b\r\n\r\n"},
  };
  for (const auto& [what, chunks] : refused) {
    const Answer a = exchange(t.server->port(), kChunkedHead + chunks);
    EXPECT_EQ(statuses(a.data), std::vector<int>{400}) << what << ":\n" << a.data.substr(0, 600);
    EXPECT_TRUE(a.closed) << what;
  }
  const std::vector<std::pair<const char*, std::string>> accepted = {
      {"one chunk", "11\r\n" + kBody + "\r\n0\r\n\r\n"},
      {"a trailer field", "11\r\n" + kBody + "\r\n0\r\nX-T: 1\r\n\r\n"},
      {"two trailer fields", "11\r\n" + kBody + "\r\n0\r\nX-T: 1\r\nX-U:\r\n\r\n"},
      {"chunk extensions", "11;name=value\r\n" + kBody + "\r\n0 ; last=\"yes\"\r\n\r\n"},
      {"leading zeros, upper-case hex, two chunks", "0000A\r\n" + kBody.substr(0, 10) + "\r\n7\r\n" + kBody.substr(10) +
                                                         "\r\n000\r\n\r\n"},
  };
  for (const auto& [what, chunks] : accepted) {
    const Answer a = exchange(t.server->port(), kChunkedHead + chunks);
    EXPECT_EQ(statuses(a.data), std::vector<int>{200}) << what << ":\n" << a.data.substr(0, 600);
    // The fake's [3, 1003, 1, 1], normalised as /embed does by default.
    EXPECT_NE(a.data.find("[[0.0029910107,0.9999945,0.0009970035,0.0009970035]]"), std::string::npos) << what << ": " << a.data;
  }
}

// S3: Transfer-Encoding whose final coding is not chunked, on a GET or HEAD,
// or on HTTP/1.0: 400 and close; codings before chunked: 501.
TEST(ServeHttpFraming, TransferEncodingRules) {
  TestServer t;
  for (const std::string te : {"chunked, identity", "gzip", "identity", "chunked"}) {
    for (const std::string method : {"GET", "HEAD"}) {
      const Answer a = exchange(t.server->port(), method + " /health HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: " + te +
                                                      "\r\n\r\n0\r\n\r\n" + kLast);
      EXPECT_EQ(statuses(a.data), std::vector<int>{400}) << method << " " << te << ":\n" << a.data.substr(0, 400);
      EXPECT_TRUE(a.closed) << method << " " << te;
    }
  }
  const std::string post = "POST /embed HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n";
  Answer a = exchange(t.server->port(), post + "Transfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n" + kLast);
  EXPECT_EQ(statuses(a.data), std::vector<int>{501}) << a.data.substr(0, 400);
  a = exchange(t.server->port(), post + "Transfer-Encoding: identity\r\n\r\n" + kLast);
  EXPECT_EQ(statuses(a.data), std::vector<int>{400}) << a.data.substr(0, 400);
  a = exchange(t.server->port(), "POST /embed HTTP/1.0\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n11\r\n" +
                                     kBody + "\r\n0\r\n\r\n");
  EXPECT_EQ(statuses(a.data), std::vector<int>{400}) << a.data.substr(0, 400);
  // Case does not matter: "Chunked" is chunked.
  a = exchange(t.server->port(), post + "Transfer-Encoding: Chunked\r\nConnection: close\r\n\r\n11\r\n" + kBody + "\r\n0\r\n\r\n");
  EXPECT_EQ(statuses(a.data), std::vector<int>{200}) << a.data.substr(0, 400);
}

// S4: Host (RFC 9112 section 3.2), field values (RFC 9110 section 5.5) and the request line.
TEST(ServeHttpFraming, HostFieldValueAndRequestLineRules) {
  TestServer t;
  const std::vector<std::pair<const char*, std::string>> refused = {
      {"no Host", "GET /health HTTP/1.1\r\n\r\n"},
      {"two Host lines", "GET /health HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n"},
      {"two Host lines on HTTP/1.0", "GET /health HTTP/1.0\r\nHost: a\r\nHost: a\r\n\r\n"},
      {"Host: a b/c", "GET /health HTTP/1.1\r\nHost: a b/c\r\n\r\n"},
      {"Host: a@b", "GET /health HTTP/1.1\r\nHost: a@b\r\n\r\n"},
      {"Host with a port that is not a number", "GET /health HTTP/1.1\r\nHost: a:8x\r\n\r\n"},
      {"NUL in a field value", "GET /health HTTP/1.1\r\nHost: x\r\nX-A: a" + std::string(1, '\0') + "b\r\n\r\n"},
      {"a control character in a field value", "GET /health HTTP/1.1\r\nHost: x\r\nX-A: a\x01z\r\n\r\n"},
      {"a bare CR in a field value", "GET /health HTTP/1.1\r\nHost: x\r\nX-A: a\rb\r\n\r\n"},
      {"two spaces in the request line", "GET  /health HTTP/1.1\r\nHost: x\r\n\r\n"},
      {"a tab in the request line", "GET\t/health HTTP/1.1\r\nHost: x\r\n\r\n"},
      {"a trailing space in the request line", "GET /health HTTP/1.1 \r\nHost: x\r\n\r\n"},
      {"a malformed version", "GET /health HTTP/1\r\nHost: x\r\n\r\n"},
  };
  for (const auto& [what, request] : refused) {
    const Answer a = exchange(t.server->port(), request + kLast);
    EXPECT_EQ(statuses(a.data), std::vector<int>{400}) << what << ":\n" << a.data.substr(0, 400);
    EXPECT_TRUE(a.closed) << what;
  }
  Answer a = exchange(t.server->port(), "GET /health HTTP/2.0\r\nHost: x\r\n\r\n");
  EXPECT_EQ(statuses(a.data), std::vector<int>{505}) << a.data.substr(0, 400);
  for (const std::string host : {"x", "example.com:8080", "127.0.0.1", "[::1]:80", "a%41b", ""}) {
    a = exchange(t.server->port(), "GET /health HTTP/1.1\r\nHost: " + host + "\r\nConnection: close\r\n\r\n");
    EXPECT_EQ(statuses(a.data), std::vector<int>{200}) << "Host: " << host << "\n" << a.data.substr(0, 400);
  }
  a = exchange(t.server->port(), "GET /health HTTP/1.0\r\n\r\n");  // HTTP/1.0 needs no Host
  EXPECT_EQ(statuses(a.data), std::vector<int>{200}) << a.data.substr(0, 400);
  a = exchange(t.server->port(), "GET /health HTTP/1.1\r\nHost: x\r\nX-A: caf\xc3\xa9\tok\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(statuses(a.data), std::vector<int>{200}) << "obs-text and a tab are field-value characters";
}

// HTTP/1.0 keep-alive in any case, a leading empty line, and a Content-Length
// over max_body_bytes answered 413 at once (not after the body's read timeout).
TEST(ServeHttpFraming, MinorConnectionRules) {
  ServiceConfig c;
  c.max_body_bytes = 1024;
  TestServer t(c);
  for (const std::string ka : {"keep-alive", "Keep-Alive", "KEEP-ALIVE"}) {
    const std::string keep = "GET /health HTTP/1.0\r\nConnection: " + ka + "\r\n\r\n";
    const Answer a = exchange(t.server->port(), keep + keep + "GET /health HTTP/1.0\r\n\r\n");
    EXPECT_EQ(statuses(a.data), (std::vector<int>{200, 200, 200})) << ka << ":\n" << a.data.substr(0, 600);
    EXPECT_TRUE(a.closed) << ka << ": HTTP/1.0 without keep-alive closes";
  }
  for (const std::string length : {"1025", "2097153", "99999999999999999999999"}) {
    const auto start = std::chrono::steady_clock::now();
    const Answer a = exchange(t.server->port(), "POST /embed HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                                                "Content-Length: " + length + "\r\n\r\n{}");
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_EQ(statuses(a.data), std::vector<int>{413}) << length << ":\n" << a.data.substr(0, 400);
    EXPECT_NE(a.data.find("larger than 1024 bytes"), std::string::npos) << a.data;
    EXPECT_TRUE(a.closed) << length;
    EXPECT_LT(seconds, 2.0) << length;
  }
  Answer a = exchange(t.server->port(), "\r\nGET /health HTTP/1.1\r\nHost: x\r\n\r\n" + kLast);
  EXPECT_EQ(statuses(a.data), (std::vector<int>{200, 200})) << a.data.substr(0, 400);
  // Expect: 100-continue: the interim answer, then the body is read.
  const int fd = connect_loopback(t.server->port());
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(send_all(fd, "POST /embed HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nExpect: 100-continue\r\n"
                           "Content-Length: 17\r\nConnection: close\r\n\r\n"));
  a = receive(fd);
  EXPECT_EQ(a.data, "HTTP/1.1 100 Continue\r\n\r\n");
  ASSERT_TRUE(send_all(fd, kBody));
  a = receive(fd);
  ::close(fd);
  EXPECT_EQ(statuses(a.data), std::vector<int>{200}) << a.data.substr(0, 400);
}

// H1: connections idle between keep-alive requests give their thread up as
// soon as another accepted connection waits for one, so /health on a new
// connection is answered at once with every thread taken by idle clients.
TEST(ServeHttpFraming, IdleKeepAliveConnectionsDoNotStarveHealth) {
  ServiceConfig c;
  c.http_threads = 4;
  c.read_timeout_s = 5;  // keep-alive timeout 5 s
  TestServer t(c);
  std::vector<int> idle;
  for (int i = 0; i < 6; ++i) {
    const int fd = connect_loopback(t.server->port());
    ASSERT_GE(fd, 0);
    ASSERT_TRUE(send_all(fd, "GET /health HTTP/1.1\r\nHost: x\r\n\r\n"));
    idle.push_back(fd);
  }
  // Four are answered at once and then hold the four threads, idle.
  for (int i = 0; i < 4; ++i) EXPECT_EQ(statuses(receive(idle[i], 200).data), std::vector<int>{200}) << i;
  const auto start = std::chrono::steady_clock::now();
  auto r = t.get("/health");
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_LT(seconds, 1.0);  // (before: after the keep-alive timeout, 5 s)
  // The two that waited were answered too.
  for (int i = 4; i < 6; ++i) EXPECT_EQ(statuses(receive(idle[i], 200).data), std::vector<int>{200}) << i;
  // Without anyone waiting, a keep-alive connection stays usable.
  const int fd = connect_loopback(t.server->port());
  ASSERT_GE(fd, 0);
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(send_all(fd, "GET /live HTTP/1.1\r\nHost: x\r\n\r\n"));
    EXPECT_EQ(statuses(receive(fd, 200).data), std::vector<int>{200}) << "request " << i;
  }
  ::close(fd);
  for (int i : idle) ::close(i);
}

// Out of memory in a route: 507 insufficient_storage, in the route's error shape, and the server goes on.
TEST(ServeHttpFraming, OutOfMemoryInARouteIs507) {
  TestServer t;
  t.model->throw_bad_alloc = true;
  auto r = t.post("/v1/embeddings", R"({"input":"a"})");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 507);
  auto j = testing::body_json(r);
  EXPECT_EQ(j["error"]["type"], "insufficient_storage") << r->body;
  EXPECT_NE(j["error"]["message"].get<std::string>().find("out of memory"), std::string::npos) << r->body;
  r = t.post("/embed", R"({"inputs":"a"})");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 507);
  EXPECT_EQ(testing::body_json(r)["error_type"], "Backend") << r->body;  // TEI's error_type of a 5xx
  t.model->throw_bad_alloc = false;
  EXPECT_EQ(t.post("/embed", R"({"inputs":"a"})")->status, 200);
  r = t.get("/metrics");
  ASSERT_TRUE(r);
  EXPECT_NE(r->body.find("dlrt_requests_in_flight 0\n"), std::string::npos);
}

// TLS: the same loop and framing (pipelined requests answered, a body never
// becomes a request, malformed heads refused).
TEST(ServeHttpFraming, TlsConnectionsAreFramedTheSameWay) {
  const std::string dir = ::testing::TempDir() + "/dlrt_tls_framing_" + std::to_string(::getpid());
  const std::string cmd = "mkdir -p " + dir + " && openssl req -x509 -newkey rsa:2048 -nodes -keyout " + dir +
                          "/key.pem -out " + dir + "/cert.pem -days 1 -subj /CN=localhost >/dev/null 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << "the openssl tool could not make a test certificate";
  ServiceConfig c;
  c.tls_cert = dir + "/cert.pem";
  c.tls_key = dir + "/key.pem";
  TestServer t(c);
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  ASSERT_NE(ctx, nullptr);
  auto tls_exchange = [&](const std::string& request) {
    Answer a;
    const int fd = connect_loopback(t.server->port());
    SSL* ssl = fd >= 0 ? SSL_new(ctx) : nullptr;
    if (ssl != nullptr && SSL_set_fd(ssl, fd) == 1 && SSL_connect(ssl) == 1 &&
        SSL_write(ssl, request.data(), static_cast<int>(request.size())) == static_cast<int>(request.size())) {
      timeval tv{5, 0};
      ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
      char buf[16384];
      for (int n; (n = SSL_read(ssl, buf, sizeof buf)) > 0;) a.data.append(buf, static_cast<size_t>(n));
      a.closed = true;
    }
    if (ssl != nullptr) SSL_free(ssl);
    if (fd >= 0) ::close(fd);
    return a;
  };
  Answer a = tls_exchange("GET /live HTTP/1.1\r\nHost: x\r\n\r\n" + with_body("GET /health HTTP/1.1", "", kSmuggled) + kLast);
  EXPECT_EQ(statuses(a.data), (std::vector<int>{200, 200, 200})) << a.data.substr(0, 600);
  EXPECT_EQ(a.data.find("\"object\":\"list\""), std::string::npos) << "the smuggled request ran";
  a = tls_exchange("GET /health HTTP/1.1\r\n\r\n");
  EXPECT_EQ(statuses(a.data), std::vector<int>{400}) << a.data.substr(0, 400);
  a = tls_exchange(kChunkedHead + "11\r\n" + kBody + "\r\n0\r\nX-T: 1\r\n\r\n");
  EXPECT_EQ(statuses(a.data), std::vector<int>{200}) << a.data.substr(0, 400);
  SSL_CTX_free(ctx);
}

}  // namespace
}  // namespace dlrt::embed
