// Every phase of a request bounded (issue 80): a body that trickles in ends
// with 408 (its deadline, or under the minimum rate once the read timeout has
// passed) and slow bodies cannot hold every thread, so /health stays
// answered; the request's deadline counts from its arrival; an unknown
// Content-Encoding is 415; /rerank, /predict and /embed_all run their inputs
// in chunks within max_batch_size and max_batch_tokens.
#include <gtest/gtest.h>

#include <poll.h>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "raw_http.h"
#include "test_server.h"

namespace dlrt::embed {
namespace {

using json = nlohmann::json;
using testing::body_json;
using testing::connect_loopback;
using testing::FakeReranker;
using testing::raw_exchange;
using testing::send_all;
using testing::TestServer;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

std::string trickle_head(size_t length) {
  return "POST /embed HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: " +
         std::to_string(length) + "\r\n\r\n{\"inputs\":\"";
}

// The status of what the server answered on `fd` so far (0: nothing yet, -1:
// closed or reset without an answer read).
int answer_status(int fd) {
  char buf[64];
  const ssize_t n = ::recv(fd, buf, sizeof buf, MSG_DONTWAIT);
  if (n < 0) return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
  if (n < 12) return -1;
  return std::atoi(std::string(buf + 9, 3).c_str());
}

// A slow-client driver: `clients` connections send a head announcing 100,000
// bytes and then one body byte per connection every 200 ms (the attack of
// slow_body_holds_http_threads); /health is probed on new connections the
// while. Every trickling connection must be answered (503 when too many are
// slow, 408 once under the minimum rate) within `limit_s`, at most
// http_threads / 2 of them by 408 (the others never held a thread past the
// 100 ms grace), and every probe within 1 s.
void trickling_bodies_leave_health_answered(int http_threads, int clients) {
  ServiceConfig c;
  c.http_threads = http_threads;
  c.read_timeout_s = 1;  // the minimum rate applies after it
  TestServer t(c);
  std::vector<int> fds;
  for (int i = 0; i < clients; ++i) {
    const int fd = connect_loopback(t.server->port());
    ASSERT_GE(fd, 0);
    ASSERT_TRUE(send_all(fd, trickle_head(100000)));
    fds.push_back(fd);
  }
  std::vector<int> status(fds.size(), 0);
  std::vector<double> probes;
  const auto start = Clock::now();
  const double limit_s = 10;
  size_t answered = 0;
  auto last_byte = Clock::now();
  while (answered < fds.size() && seconds_since(start) < limit_s) {
    const auto probe = Clock::now();
    auto r = t.get("/health");
    probes.push_back(seconds_since(probe));
    EXPECT_TRUE(r && r->status == 200);
    if (seconds_since(last_byte) >= 0.2) {
      for (size_t i = 0; i < fds.size(); ++i)
        if (status[i] == 0) send_all(fds[i], "a");
      last_byte = Clock::now();
    }
    for (size_t i = 0; i < fds.size(); ++i) {
      if (status[i] != 0) continue;
      pollfd p{fds[i], POLLIN, 0};
      if (::poll(&p, 1, 0) > 0 && (status[i] = answer_status(fds[i])) != 0) ++answered;
    }
  }
  int refused = 0, too_slow = 0, closed = 0;
  for (size_t i = 0; i < fds.size(); ++i) {
    refused += status[i] == 503;
    too_slow += status[i] == 408;
    closed += status[i] == -1;  // reset as it sent more after the 503
    ::close(fds[i]);
  }
  EXPECT_EQ(refused + too_slow + closed, clients)
      << "trickling connections still open, or answered otherwise, after " << limit_s << " s";
  EXPECT_GE(refused, clients - http_threads);
  EXPECT_LE(too_slow, http_threads / 2);
  ASSERT_FALSE(probes.empty());
  EXPECT_LT(*std::max_element(probes.begin(), probes.end()), 1.0) << probes.size() << " probes";
}

TEST(ServeBounds, TricklingBodiesLeaveHealthAnsweredAtTheDefaults) { trickling_bodies_leave_health_answered(64, 64); }

TEST(ServeBounds, TricklingBodiesLeaveHealthAnsweredWithEightThreads) { trickling_bodies_leave_health_answered(8, 64); }

// The body must have arrived by the request's deadline, whatever its rate.
TEST(ServeBounds, BodyPastTheDeadlineIs408) {
  ServiceConfig c;
  c.request_timeout_ms = 300;
  TestServer t(c);
  const int fd = connect_loopback(t.server->port());
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(send_all(fd, trickle_head(100000)));
  const auto start = Clock::now();
  int status = 0;
  while (status == 0 && seconds_since(start) < 5) {
    send_all(fd, std::string(100, 'a'));  // fast enough for the minimum rate, too slow for the deadline
    pollfd p{fd, POLLIN, 50};
    if (::poll(&p, 1, 50) > 0) status = answer_status(fd);
  }
  ::close(fd);
  EXPECT_EQ(status, 408);
  EXPECT_LT(seconds_since(start), 2.0);
}

// The deadline counts from the request's arrival: a body that took most of
// it, then a run that would fit the deadline alone, is a 504. The margins
// leave the server a second to notice the connection (qemu under load took
// more than the 200 ms the first version left).
TEST(ServeBounds, DeadlineCountsFromArrival) {
  ServiceConfig c;
  c.request_timeout_ms = 2000;
  TestServer t(c);
  t.model->delay_ms = 1500;
  const std::string body = R"({"inputs":"hello"})";
  const int fd = connect_loopback(t.server->port());
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(send_all(fd,
                       "POST /embed HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nConnection: close\r\n"
                       "Content-Length: " +
                           std::to_string(body.size()) + "\r\n\r\n" + body.substr(0, 5)));
  pollfd p{fd, POLLIN, 0};
  EXPECT_EQ(::poll(&p, 1, 1500), 0);  // the first part of the body, then 1.5 s
  ASSERT_TRUE(send_all(fd, body.substr(5)));
  std::string answer;
  char buf[4096];
  timeval tv{10, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;) answer.append(buf, static_cast<size_t>(n));
  ::close(fd);
  EXPECT_EQ(answer.rfind("HTTP/1.1 504", 0), 0u) << answer.substr(0, 300);
  // The same request sent at once fits.
  t.model->delay_ms = 0;
  auto r = t.post("/embed", body);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
}

// RFC 9110 section 15.5.16: a content coding the server does not decode is 415
// (never read as identity), with Accept-Encoding naming those it does.
TEST(ServeBounds, UnknownContentEncodingIs415) {
  TestServer t;
  const std::string body = R"({"inputs":"hello"})";
  auto request = [&](const std::string& fields) {
    return "POST /embed HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nConnection: close\r\n" + fields +
           "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
  };
  for (const char* coding : {"x-foo", "br", "gzip, deflate", "compress", ""}) {
    const std::string answer =
        raw_exchange(t.server->port(), request(std::string("Content-Encoding: ") + coding + "\r\n"));
    EXPECT_EQ(answer.rfind("HTTP/1.1 415", 0), 0u) << coding << ": " << answer.substr(0, 200);
    EXPECT_NE(answer.find("Accept-Encoding: gzip, deflate"), std::string::npos) << coding;
  }
  const std::string twice =
      raw_exchange(t.server->port(), request("Content-Encoding: gzip\r\nContent-Encoding: gzip\r\n"));
  EXPECT_EQ(twice.rfind("HTTP/1.1 415", 0), 0u) << twice.substr(0, 200);
  for (const char* coding : {"identity", "Identity"}) {
    const std::string answer =
        raw_exchange(t.server->port(), request(std::string("Content-Encoding: ") + coding + "\r\n"));
    EXPECT_EQ(answer.rfind("HTTP/1.1 200", 0), 0u) << coding << ": " << answer.substr(0, 200);
  }
}

// /rerank and /predict run a request's inputs in chunks of at most
// max_batch_size inputs and max_batch_tokens padded tokens, in order, and
// score each as alone.
TEST(ServeBounds, RerankAndPredictRunInChunks) {
  ServiceConfig c;
  c.max_batch_size = 4;
  c.max_batch_tokens = 24;
  TestServer t(c, /*with_model=*/false);
  auto m = std::make_shared<FakeReranker>("ce", 1.f);
  t.server->set_model(m);
  json texts = json::array();
  for (int i = 0; i < 30; ++i)
    texts.push_back(std::string("w") + std::string(static_cast<size_t>(i % 7) * 2, ' ') +
                    (i % 3 ? " w w w w w w w w" : ""));
  auto r = t.post("/rerank", json{{"query", "q"}, {"texts", texts}, {"raw_scores", true}}.dump());
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  size_t inputs = 0;
  for (const auto& batch : m->batches()) {
    size_t longest = 0;
    for (const Encoding& e : batch) longest = std::max(longest, e.ids.size());
    EXPECT_LE(batch.size(), 4u);
    EXPECT_TRUE(batch.size() == 1 || batch.size() * longest <= 24) << batch.size() << " x " << longest;
    inputs += batch.size();
  }
  EXPECT_EQ(inputs, texts.size());
  EXPECT_GT(m->batches().size(), texts.size() / 4);
  for (const json& s : body_json(r)) {
    const size_t i = s["index"].get<size_t>();
    EXPECT_EQ(s["score"].get<double>(), i % 3 ? 9.0 : 1.0) << i;  // its words, whatever the chunk
  }
  // Scores print at float32's shortest round-trip precision, not a double's 17 digits.
  auto sigmoid = t.post("/rerank", json{{"query", "q"}, {"texts", {"w w", "w"}}}.dump());
  ASSERT_TRUE(sigmoid);
  ASSERT_EQ(sigmoid->status, 200) << sigmoid->body;
  for (const json& s : body_json(sigmoid)) {
    char want[32];
    auto end = std::to_chars(want, want + sizeof want, s["score"].get<float>()).ptr;
    EXPECT_NE(sigmoid->body.find("\"score\":" + std::string(want, end)), std::string::npos) << sigmoid->body;
  }
  const size_t runs = m->batches().size();
  json inputs_list = json::array();
  for (int i = 0; i < 9; ++i) inputs_list.push_back("one two");
  auto p = t.post("/predict", json{{"inputs", inputs_list}}.dump());
  ASSERT_TRUE(p);
  ASSERT_EQ(p->status, 200) << p->body;
  EXPECT_EQ(body_json(p).size(), 9u);
  EXPECT_EQ(m->batches().size() - runs, 3u);  // 4 + 4 + 1
}

// The memory budget (max_batch_mb): a run's padded tokens times the model's
// widest per-token output row stay within it, through the batcher (/embed)
// and in the chunked routes (/rerank); each input still runs.
TEST(ServeBounds, RunsStayWithinTheMemoryBudget) {
  ServiceConfig c;
  c.max_batch_mb = 8;  // with 1 MiB rows: 8 padded tokens per run
  {
    TestServer t(c, /*with_model=*/false);
    auto m = std::make_shared<FakeReranker>("ce", 1.f);
    m->row_bytes = size_t{1} << 20;
    t.server->set_model(m);
    json texts = json::array();
    for (int i = 0; i < 16; ++i) texts.push_back(i % 4 ? "w w" : "w w w w w w w w w w");  // 4 or 12 tokens
    auto r = t.post("/rerank", json{{"query", "q"}, {"texts", texts}}.dump());
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 200) << r->body;
    size_t inputs = 0;
    for (const auto& batch : m->batches()) {
      size_t longest = 0;
      for (const Encoding& e : batch) longest = std::max(longest, e.ids.size());
      EXPECT_TRUE(batch.size() == 1 || batch.size() * longest <= 8) << batch.size() << " x " << longest;
      inputs += batch.size();
    }
    EXPECT_EQ(inputs, texts.size());
  }
  TestServer t(c, /*with_model=*/false);
  t.model->row_bytes = size_t{1} << 20;
  t.server->set_model(t.model);
  auto r = t.post("/embed", json{{"inputs", {"a", "b", "c", "d", "e", "f"}}}.dump());  // 3 tokens each
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(body_json(r).size(), 6u);
  const std::vector<size_t> sizes = t.model->batch_sizes();
  ASSERT_FALSE(sizes.empty());
  EXPECT_LE(*std::max_element(sizes.begin(), sizes.end()), 2u);  // 3 x 3 tokens would be past 8
}

TEST(ServeBounds, EmbedAllRunsInChunks) {
  ServiceConfig c;
  c.max_batch_size = 8;
  TestServer t(c, /*with_model=*/false);
  auto m = std::make_shared<testing::FakeModel>();
  m->multi_vector = true;
  t.server->set_model(m);
  json inputs = json::array();
  for (int i = 0; i < 20; ++i) inputs.push_back("a b c");
  const int before = m->token_runs.load();
  auto r = t.post("/embed_all", json{{"inputs", inputs}}.dump());
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(m->token_runs.load() - before, 3);  // 8 + 8 + 4
  const json j = body_json(r);
  ASSERT_EQ(j.size(), 20u);
  EXPECT_EQ(j[19].size(), 5u);  // 101, three words, 102
}

}  // namespace
}  // namespace dlrt::embed
