// The request head held to RFC 9112 by the plain-HTTP server
// (apps/embed/serve/http_server.cpp): malformed field lines and conflicting
// Content-Length values are 400, and connections that never finish their
// head cannot keep /health from being answered.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "raw_http.h"
#include "test_server.h"

namespace dlrt::embed {
namespace {

using testing::connect_loopback;
using testing::raw_exchange;
using testing::TestServer;

std::string post_head(const std::string& extra) {
  return "POST /v1/embeddings HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" + extra;
}

TEST(ServeHttpHead, MalformedHeadsAre400) {
  TestServer t;
  const std::string body = R"({"input":"hello"})";  // 17 bytes
  struct Case {
    const char* what;
    std::string request;
    const char* message;
  };
  const std::vector<Case> cases = {
      {"two different Content-Length", post_head("Content-Length: 17\r\nContent-Length: 3\r\n\r\n") + body,
       "different values"},
      {"a Content-Length list that differs", post_head("Content-Length: 17, 3\r\n\r\n") + body, "different values"},
      {"a Content-Length that is not a number", post_head("Content-Length: 1x\r\n\r\n") + body, "not a number"},
      {"Content-Length with Transfer-Encoding",
       post_head("Content-Length: 17\r\nTransfer-Encoding: chunked\r\n\r\n") + "11\r\n" + body + "\r\n0\r\n\r\n",
       "Transfer-Encoding"},
      {"a line without a colon", post_head("X-No-Colon\r\nContent-Length: 17\r\n\r\n") + body, "without a colon"},
      {"obs-fold", post_head("X-A: one\r\n  two\r\nContent-Length: 17\r\n\r\n") + body, "line folding"},
      {"obs-fold with a tab", post_head("X-A: one\r\n\ttwo\r\nContent-Length: 17\r\n\r\n") + body, "line folding"},
      {"whitespace before the colon", post_head("Content-Length : 17\r\n\r\n") + body, "header name"},
      {"a bare LF", post_head("X-A: one\nX-B: two\r\nContent-Length: 17\r\n\r\n") + body, "bare CR or LF"},
  };
  for (const Case& c : cases) {
    const std::string answer = raw_exchange(t.server->port(), c.request);
    EXPECT_EQ(answer.rfind("HTTP/1.1 400", 0), 0u) << c.what << ": " << answer.substr(0, 200);
    EXPECT_NE(answer.find(c.message), std::string::npos) << c.what << ": " << answer;
  }
  // The same requests written correctly are answered: the same length twice is one length.
  for (const std::string& fine : {post_head("Content-Length: 17\r\nConnection: close\r\n\r\n") + body,
                                  post_head("Content-Length: 17\r\nContent-Length: 17\r\nConnection: close\r\n\r\n") + body,
                                  post_head("Content-Length: 17, 017\r\nX-Empty:\r\nConnection: close\r\n\r\n") + body}) {
    const std::string answer = raw_exchange(t.server->port(), fine);
    EXPECT_EQ(answer.rfind("HTTP/1.1 200", 0), 0u) << answer.substr(0, 300);
  }
}

// 100 connections that send a request line and then nothing: /health and
// /ready are answered at once all the same (before: after the read timeout).
TEST(ServeHttpHead, PendingHeadsDoNotDelayHealth) {
  TestServer t;  // http_threads 64, read_timeout_s 5
  std::vector<int> slow;
  for (int i = 0; i < 100; ++i) {
    const int fd = connect_loopback(t.server->port());
    ASSERT_GE(fd, 0);
    const std::string line = "GET /health HTTP/1.1\r\n";
    ASSERT_GT(::send(fd, line.data(), line.size(), MSG_NOSIGNAL), 0);
    slow.push_back(fd);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // every slow one is past the grace period
  for (const char* path : {"/health", "/ready"}) {
    const auto start = std::chrono::steady_clock::now();
    auto r = t.get(path);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ASSERT_TRUE(r) << path;
    EXPECT_EQ(r->status, 200) << path;
    EXPECT_LT(seconds, 2.0) << path;
  }
  // The connections past the bound were told so and closed (within a grace
  // period each, 32 threads at a time; the others have nothing to read yet).
  std::this_thread::sleep_for(std::chrono::seconds(1));
  int refused = 0;
  for (int fd : slow) {
    char buf[512];
    const ssize_t n = ::recv(fd, buf, sizeof buf, MSG_DONTWAIT);
    if (n > 0 && std::string(buf, static_cast<size_t>(n)).rfind("HTTP/1.1 503", 0) == 0) ++refused;
    ::close(fd);
  }
  EXPECT_GE(refused, 100 - 32);
}

}  // namespace
}  // namespace dlrt::embed
