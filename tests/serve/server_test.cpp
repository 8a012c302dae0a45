// The embedding server's HTTP surface over the fake model, on loopback:
// routes, response shapes, error cases, batching, back-pressure, health,
// metrics, strict-mode failures and graceful shutdown.
#include "embed/serve/server.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>

#include "fake_model.h"
#include "raw_http.h"
#include "test_server.h"

namespace dlrt::embed {
namespace {

using json = nlohmann::json;
using testing::body_json;
using testing::FakeModel;
using testing::raw_exchange;
using testing::TestServer;

// An OpenAI-style error object with a message containing `part`.
void expect_openai_error(const httplib::Result& r, int status, const std::string& part) {
  ASSERT_TRUE(r) << "no response: " << httplib::to_string(r.error());
  EXPECT_EQ(r->status, status) << r->body;
  EXPECT_EQ(r->get_header_value("Content-Type"), "application/json");
  json j = body_json(r);
  ASSERT_TRUE(j.contains("error") && j["error"].is_object()) << r->body;
  EXPECT_EQ(j["error"]["code"], status);
  EXPECT_NE(j["error"]["message"].get<std::string>().find(part), std::string::npos) << r->body;
}

TEST(ServeRoutes, OpenAIEmbeddingsSingleString) {
  TestServer t;
  auto r = t.post("/v1/embeddings", R"({"model":"x","input":"hello big world","normalize":false})");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  json j = body_json(r);
  EXPECT_EQ(j["object"], "list");
  EXPECT_EQ(j["model"], "fake-model");
  ASSERT_EQ(j["data"].size(), 1u);
  EXPECT_EQ(j["data"][0]["object"], "embedding");
  EXPECT_EQ(j["data"][0]["index"], 0);
  ASSERT_EQ(j["data"][0]["embedding"].size(), FakeModel::kDim);
  EXPECT_EQ(j["data"][0]["embedding"][0], 5.0);  // [CLS] hello big world [SEP]
  EXPECT_EQ(j["data"][0]["embedding"][1], 1005.0);
  EXPECT_EQ(j["usage"]["prompt_tokens"], 5);
  EXPECT_EQ(j["usage"]["total_tokens"], 5);
}

TEST(ServeRoutes, OpenAIEmbeddingsArrayKeepsOrder) {
  TestServer t;
  auto r = t.post("/v1/embeddings", R"({"input":["a","bb bb","ccc ccc ccc",""],"normalize":false})");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  json j = body_json(r);
  ASSERT_EQ(j["data"].size(), 4u);
  const float tokens[] = {3, 4, 5, 2};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(j["data"][i]["index"], i);
    EXPECT_EQ(j["data"][i]["embedding"][0], tokens[i]) << i;
  }
  EXPECT_EQ(j["usage"]["prompt_tokens"], 14);
}

TEST(ServeRoutes, OpenAIBase64IsLittleEndianFloat32) {
  TestServer t;
  auto r = t.post("/v1/embeddings", R"({"input":"one two","encoding_format":"base64","normalize":false})");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  std::string b64 = body_json(r)["data"][0]["embedding"];
  // Decode by hand.
  auto val = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    return c == '+' ? 62 : c == '/' ? 63 : -1;
  };
  std::string bytes;
  uint32_t acc = 0;
  int bits = 0;
  for (char c : b64) {
    if (c == '=') break;
    acc = (acc << 6) | static_cast<uint32_t>(val(c));
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      bytes += static_cast<char>((acc >> bits) & 0xff);
    }
  }
  ASSERT_EQ(bytes.size(), FakeModel::kDim * 4);
  float v[FakeModel::kDim];
  std::memcpy(v, bytes.data(), bytes.size());
  EXPECT_EQ(v[0], 4.f);
  EXPECT_EQ(v[1], 1003.f);
  EXPECT_EQ(v[3], 1.f);
}

TEST(ServeRoutes, TeiEmbed) {
  TestServer t;
  auto r = t.post("/embed", R"({"inputs":"hi there","normalize":false})");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  json j = body_json(r);
  ASSERT_TRUE(j.is_array());
  ASSERT_EQ(j.size(), 1u);
  ASSERT_EQ(j[0].size(), FakeModel::kDim);
  EXPECT_EQ(j[0][0], 4.0);

  r = t.post("/embed", R"({"inputs":["a","b c"],"normalize":false})");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  j = body_json(r);
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[0][0], 3.0);
  EXPECT_EQ(j[1][0], 4.0);
}

// The fake's vector for "hi there" is {4, 1002, 1, 1} (tokens, second id,
// batch size, 1), its folder without a Normalize module: as TEI, /embed and
// /v1/embeddings normalise it unless the request says "normalize": false.
TEST(ServeRoutes, NormalizeDimensionsPromptsAndTokenIds) {
  TestServer t;
  auto vec = [&](const std::string& path, const std::string& body) {
    auto r = t.post(path, body);
    EXPECT_TRUE(r);
    EXPECT_EQ(r->status, 200) << body << " -> " << r->body;
    json j = body_json(r);
    return path == "/embed" ? j[0].get<std::vector<double>>() : j["data"][0]["embedding"].get<std::vector<double>>();
  };
  ASSERT_FALSE(t.model->normalizes());
  EXPECT_EQ(vec("/embed", R"({"inputs":"hi there","normalize":false})"), (std::vector<double>{4, 1002, 1, 1}));
  EXPECT_EQ(vec("/v1/embeddings", R"({"input":"hi there","normalize":false})"), (std::vector<double>{4, 1002, 1, 1}));
  const double n = std::sqrt(16.0 + 1002.0 * 1002.0 + 2.0);
  for (const auto& [path, body] : {std::pair<std::string, std::string>{"/embed", R"({"inputs":"hi there","normalize":true})"},
                                   {"/embed", R"({"inputs":"hi there"})"},
                                   {"/v1/embeddings", R"({"input":"hi there"})"},
                                   {"/embeddings", R"({"input":"hi there"})"}}) {
    std::vector<double> unit = vec(path, body);
    ASSERT_EQ(unit.size(), 4u) << path << " " << body;
    EXPECT_NEAR(unit[0], 4 / n, 1e-6) << path << " " << body;
    EXPECT_NEAR(unit[1], 1002 / n, 1e-6) << path << " " << body;
  }
  // Matryoshka: the first 2 values, normalised again when normalising.
  EXPECT_EQ(vec("/embed", R"({"inputs":"hi there","dimensions":2,"normalize":false})"), (std::vector<double>{4, 1002}));
  std::vector<double> two = vec("/v1/embeddings", R"({"input":"hi there","dimensions":2,"normalize":true})");
  ASSERT_EQ(two.size(), 2u);
  EXPECT_NEAR(two[0] * two[0] + two[1] * two[1], 1.0, 1e-6);
  EXPECT_NEAR(two[0], 4 / std::sqrt(16.0 + 1002.0 * 1002.0), 1e-6);
  // A prompt goes in front of the text: "query: hi there" is 3 words.
  EXPECT_EQ(vec("/embed", R"({"inputs":"hi there","prompt_name":"query","normalize":false})")[0], 5.0);
  // Token ids are used as given (no [CLS]/[SEP] added).
  std::vector<double> ids = vec("/v1/embeddings", R"({"input":[7,8,9],"normalize":false})");
  EXPECT_EQ(ids[0], 3.0);
  EXPECT_EQ(ids[1], 8.0);
  auto r = t.post("/embed", R"({"inputs":[[7,8],[9]],"normalize":false})");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(body_json(r)[1][0], 1.0);
  r = t.post("/embed", R"({"inputs":"x","truncation_direction":"left"})");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 422);
  EXPECT_NE(body_json(r)["error"].get<std::string>().find("not supported"), std::string::npos) << r->body;
}

TEST(ServeRoutes, ModelsInfoAndTokenize) {
  TestServer t;
  auto r = t.get("/v1/models");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  json j = body_json(r);
  EXPECT_EQ(j["object"], "list");
  ASSERT_EQ(j["data"].size(), 1u);
  EXPECT_EQ(j["data"][0]["id"], "fake-model");
  EXPECT_EQ(j["data"][0]["object"], "model");
  EXPECT_TRUE(j["data"][0]["created"].is_number_integer());

  r = t.get("/info");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  j = body_json(r);
  EXPECT_EQ(j["model_id"], "fake");  // the --model value (TEI's --model-id)
  EXPECT_EQ(j["served_model_name"], "fake-model");
  // TEI's other fields.
  EXPECT_EQ(j["auto_truncate"], true);
  EXPECT_EQ(j["max_batch_requests"], 32);
  EXPECT_EQ(j["max_client_batch_size"], 2048);  // OpenAI's limit
  EXPECT_EQ(j["model_dtype"], "float32");
  EXPECT_EQ(j["tokenization_workers"], 64);
  for (const char* key : {"model_sha", "sha", "docker_label"}) EXPECT_TRUE(j[key].is_null()) << key;
  EXPECT_EQ(j["dimension"], FakeModel::kDim);
  EXPECT_EQ(j["max_input_length"], 16);
  EXPECT_EQ(j["model_type"]["embedding"]["pooling"], "mean");
  EXPECT_EQ(j["truncate"], true);  // as TEI since 1.9
  EXPECT_TRUE(j["version"].is_string());
  EXPECT_EQ(j["device"], "cpu:0");

  r = t.post("/tokenize", R"({"inputs":"hi there"})");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  j = body_json(r);
  ASSERT_EQ(j.size(), 1u);
  ASSERT_EQ(j[0].size(), 4u);
  EXPECT_EQ(j[0][0]["id"], 101);
  EXPECT_EQ(j[0][0]["special"], true);
  EXPECT_EQ(j[0][1]["id"], 1002);
  EXPECT_EQ(j[0][1]["text"], "hi");  // the part of the text (as TEI), not the vocabulary's token
  EXPECT_EQ(j[0][1]["special"], false);
  r = t.post("/tokenize", R"({"inputs":["a","b c"],"add_special_tokens":false})");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  j = body_json(r);
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[0].size(), 1u);
  EXPECT_EQ(j[1].size(), 2u);
  r = t.post("/decode", R"({"ids":[101,1002,1003,102]})");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(body_json(r), json::array({"t1002 t1003"}));
  r = t.post("/decode", R"({"ids":[[101,7],[8]],"skip_special_tokens":false})");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(body_json(r), json::array({"t101 t7", "t8"}));
  for (const char* bad : {R"({"ids":[]})", R"({"ids":[1,"a"]})", R"({"ids":[[1],2]})", R"({"ids":[5000]})",
                          R"({"ids":[1],"skip_special_tokens":1})"}) {
    r = t.post("/decode", bad);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 422) << bad << " -> " << r->body;
  }
  r = t.post("/tokenize", R"({"inputs":[[1,2]]})");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 422);
  r = t.post("/tokenize", R"({"inputs":"a","prompt_name":"nope"})");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 422);
}

TEST(ServeSecurity, ApiKeyCorsAndRequestId) {
  ServiceConfig c;
  c.api_key = "s3cret";
  c.cors_allow_origin = "https://a.example, https://b.example";
  TestServer t(c);
  // No key, a wrong key, a key of another length: 401; /health stays open.
  expect_openai_error(t.post("/v1/embeddings", R"({"input":"a"})"), 401, "API key");
  httplib::Headers wrong = {{"Authorization", "Bearer s3creT"}};
  auto r = t.client().Post("/v1/embeddings", wrong, R"({"input":"a"})", "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 401);
  EXPECT_EQ(r->get_header_value("WWW-Authenticate"), "Bearer");
  r = t.client().Get("/info", {{"Authorization", "Bearer s3cret-and-more"}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 401);
  EXPECT_EQ(t.get("/health")->status, 200);
  httplib::Headers good = {{"Authorization", "Bearer s3cret"}, {"Origin", "https://b.example"},
                           {"X-Request-Id", "client-id-42"}};
  r = t.client().Post("/v1/embeddings", good, R"({"input":"a"})", "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(r->get_header_value("Access-Control-Allow-Origin"), "https://b.example");
  EXPECT_EQ(r->get_header_value("X-Request-Id"), "client-id-42");
  // An origin not listed gets no CORS header; a bad request id is replaced.
  r = t.client().Get("/info", {{"Authorization", "Bearer s3cret"}, {"Origin", "https://evil.example"},
                               {"X-Request-Id", "bad id with spaces"}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_FALSE(r->has_header("Access-Control-Allow-Origin"));
  const std::string id = r->get_header_value("X-Request-Id");
  EXPECT_EQ(id.size(), 16u) << id;
  EXPECT_NE(id, "bad id with spaces");
  // A browser's preflight needs no key.
  r = t.client().Options("/v1/embeddings", {{"Origin", "https://a.example"}, {"Access-Control-Request-Method", "POST"}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 204);
  EXPECT_EQ(r->get_header_value("Access-Control-Allow-Origin"), "https://a.example");
  EXPECT_NE(r->get_header_value("Access-Control-Allow-Headers").find("Authorization"), std::string::npos);
  r = t.client().Options("/v1/embeddings", {{"Origin", "https://evil.example"}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 403);
}

TEST(ServeSecurity, LogLinesTextAndJson) {
  ServeLog text(false), js(true);
  const ServeLog::Fields f = {{"method", "POST"}, {"status", 200}, {"request_id", "r1"}};
  const std::string t = text.format(ServeLog::Level::kInfo, "request", f);
  // 2026-11-26T07:40:00.123Z dlrt serve: request method=POST status=200 request_id=r1
  EXPECT_EQ(t.size(), 24 + std::string(" dlrt serve: request method=POST status=200 request_id=r1").size()) << t;
  EXPECT_EQ(t[23], 'Z') << t;
  EXPECT_NE(t.find(" dlrt serve: request method=POST status=200 request_id=r1"), std::string::npos) << t;
  json j = json::parse(js.format(ServeLog::Level::kWarning, "slow", f));
  EXPECT_EQ(j["level"], "warning");
  EXPECT_EQ(j["msg"], "slow");
  EXPECT_EQ(j["status"], 200);
  EXPECT_EQ(j["ts"].get<std::string>().size(), 24u);
}

// HTTPS with a certificate made by the openssl tool for the test.
TEST(ServeSecurity, Tls) {
  const std::string dir = ::testing::TempDir() + "/dlrt_tls_" + std::to_string(::getpid());
  const std::string cmd = "mkdir -p " + dir + " && openssl req -x509 -newkey rsa:2048 -nodes -keyout " + dir +
                          "/key.pem -out " + dir + "/cert.pem -days 1 -subj /CN=localhost >/dev/null 2>&1";
  if (std::system(cmd.c_str()) != 0) GTEST_SKIP() << "the openssl tool could not make a test certificate";
  ServiceConfig c;
  c.tls_cert = dir + "/cert.pem";
  c.tls_key = dir + "/key.pem";
  c.host = "127.0.0.1";
  c.port = 0;
  c.model = "fake";
  EmbedServer server(c);
  ASSERT_TRUE(server.bind().ok());
  auto model = std::make_shared<FakeModel>();
  server.set_model(model);
  std::thread th([&] { server.run(); });
  httplib::SSLClient cli("127.0.0.1", server.port());
  cli.enable_server_certificate_verification(false);
  auto r = cli.Post("/v1/embeddings", R"({"input":"over tls","normalize":false})", "application/json");
  ASSERT_TRUE(r) << httplib::to_string(r.error());
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(json::parse(r->body)["data"][0]["embedding"][0], 4.0);
  // Plain HTTP to the HTTPS port gets no answer.
  httplib::Client plain("127.0.0.1", server.port());
  plain.set_read_timeout(2, 0);
  EXPECT_FALSE(plain.Get("/health"));
  server.shutdown();
  th.join();
  // A missing key file: a clear error at bind.
  c.tls_key = dir + "/missing.pem";
  EmbedServer bad(c);
  Status s = bad.bind();
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("HTTPS"), std::string::npos) << s.message();
}

TEST(ServeRoutes, WrongMethodIs405AndOpenApiDocument) {
  TestServer t;
  auto r = t.client().Put("/v1/embeddings", R"({"input":"a"})", "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 405);
  EXPECT_EQ(r->get_header_value("Allow"), "POST");
  r = t.client().Delete("/info");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 405);
  EXPECT_EQ(r->get_header_value("Allow"), "GET, HEAD");
  r = t.client().Put("/embed", R"({"inputs":"a"})", "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 405);
  EXPECT_TRUE(body_json(r)["error"].is_string()) << r->body;  // TEI's shape on TEI's route
  r = t.get("/openapi.json");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200);
  json doc = body_json(r);
  EXPECT_EQ(doc["openapi"], "3.0.3");
  for (const char* path : {"/v1/embeddings", "/embeddings", "/embed", "/tokenize", "/v1/models", "/info", "/health",
                           "/metrics", "/openapi.json"})
    EXPECT_TRUE(doc["paths"].contains(path)) << path;
  // The served model's limits are in the schemas.
  EXPECT_EQ(doc["components"]["schemas"]["EmbedRequest"]["properties"]["dimensions"]["maximum"], FakeModel::kDim);
  const json prompts = doc["components"]["schemas"]["EmbedRequest"]["properties"]["prompt_name"]["enum"];
  EXPECT_NE(std::find(prompts.begin(), prompts.end(), "query"), prompts.end()) << prompts.dump();
  // Every request body's optional fields take null (the handlers read it as not given), so a
  // client that writes None as null is inside the document (schemathesis checks the reverse).
  int requests = 0;
  for (const auto& [name, schema] : doc["components"]["schemas"].items()) {
    if (!name.ends_with("Request")) continue;
    ++requests;
    const json required = schema.value("required", json::array());
    for (const auto& [field, prop] : schema["properties"].items()) {
      if (std::find(required.begin(), required.end(), field) != required.end()) continue;
      EXPECT_EQ(prop.value("nullable", false), true) << name << "." << field;
    }
  }
  EXPECT_GE(requests, 10);
}

TEST(ServeRoutes, HealthAndMetrics) {
  TestServer t;
  auto h = t.get("/health");
  ASSERT_TRUE(h);
  ASSERT_EQ(h->status, 200) << h->body;
  json j = body_json(h);
  EXPECT_EQ(j["status"], "ok");
  EXPECT_EQ(j["backend"], "cpu");
  EXPECT_EQ(j["device"], "cpu:0");
  EXPECT_EQ(j["degraded"], false);
  EXPECT_EQ(j["reason"], "");
  EXPECT_EQ(j["since"].get<std::string>().size(), 20u);  // 2024-01-01T00:00:00Z
  EXPECT_EQ(j["dimension"], FakeModel::kDim);

  ASSERT_EQ(t.post("/v1/embeddings", R"({"input":["a","b"]})")->status, 200);
  ASSERT_EQ(t.post("/v1/embeddings", R"(nope)")->status, 400);
  auto m = t.get("/metrics");
  ASSERT_TRUE(m);
  ASSERT_EQ(m->status, 200);
  EXPECT_NE(m->get_header_value("Content-Type").find("text/plain"), std::string::npos);
  for (const char* line : {"dlrt_http_requests_total{route=\"/v1/embeddings\",code=\"200\"} 1",
                           "dlrt_http_requests_total{route=\"/v1/embeddings\",code=\"400\"} 1",
                           "dlrt_http_errors_total{route=\"/v1/embeddings\",code=\"400\"} 1",
                           "dlrt_http_request_duration_seconds_bucket{route=\"/v1/embeddings\",le=\"+Inf\"} 2",
                           "dlrt_http_request_duration_seconds_count{route=\"/v1/embeddings\"} 2",
                           "dlrt_batch_size_count 1", "dlrt_inputs_total 2", "dlrt_queue_depth 0",
                           "dlrt_device_batches_total{device=\"cpu:0\"} 1",
                           "dlrt_device_inputs_total{device=\"cpu:0\"} 2", "dlrt_degraded 0", "dlrt_ready 1",
                           "# TYPE dlrt_batch_size histogram", "dlrt_requests_in_flight 0"})
    EXPECT_NE(m->body.find(line), std::string::npos) << "missing: " << line << "\n" << m->body;
}

TEST(ServeErrors, BadRequests) {
  ServiceConfig c;
  c.max_inputs_per_request = 4;
  TestServer t(c);
  expect_openai_error(t.post("/v1/embeddings", "{\"input\": "), 400, "not valid JSON");
  expect_openai_error(t.post("/v1/embeddings", "[1,2]"), 422, "JSON object");
  expect_openai_error(t.post("/v1/embeddings", R"({"text":"x"})"), 422, "missing field 'input'");
  expect_openai_error(t.post("/v1/embeddings", R"({"input":5})"), 422, "string or an array of strings");
  expect_openai_error(t.post("/v1/embeddings", R"({"input":[]})"), 400, "is empty");
  expect_openai_error(t.post("/v1/embeddings", R"({"input":["a",7]})"), 422, "'input'[1] is not a string");
  expect_openai_error(t.post("/v1/embeddings", R"({"input":[[101,"a"]]})"), 422, "list of token ids");
  expect_openai_error(t.post("/v1/embeddings", R"({"input":[101,1.5]})"), 422, "token ids");
  expect_openai_error(t.post("/v1/embeddings", R"({"input":[[101,-1]]})"), 422, "list of token ids");
  expect_openai_error(t.post("/v1/embeddings", R"({"input":[[101,5000]]})"), 422, "outside the vocabulary");
  expect_openai_error(t.post("/v1/embeddings", R"({"input":[[101,102],"a"]})"), 422, "all ids");
  expect_openai_error(t.post("/v1/embeddings", R"({"input":["a","b","c","d","e"]})"), 413, "limit is 4");
  expect_openai_error(t.post("/v1/embeddings", R"({"input":"a","encoding_format":"int4"})"), 422, "encoding_format");
  expect_openai_error(t.post("/v1/embeddings", R"({"input":"a","dimensions":5})"), 422, "the model's vectors have 4");
  expect_openai_error(t.post("/v1/embeddings", R"({"input":"a","dimensions":0})"), 422, "positive integer");
  EXPECT_EQ(t.post("/v1/embeddings", R"({"input":"a","dimensions":4})")->status, 200);
  expect_openai_error(t.post("/v1/embeddings", R"({"input":"a","prompt_name":"nope"})"), 422, "no prompt named 'nope'");
  expect_openai_error(t.post("/v1/embeddings", R"({"input":[[101]],"prompt_name":"query"})"), 422, "not token ids");
  expect_openai_error(t.post("/v1/embeddings", R"({"input":"a","normalize":"yes"})"), 422, "'normalize' must be a boolean");
  expect_openai_error(t.get("/nope"), 404, "no route GET /nope");
  // Invalid UTF-8 in a string.
  expect_openai_error(t.post("/v1/embeddings", "{\"input\":\"\xff\xfe\"}"), 400, "not valid JSON");
  // TEI errors use TEI's shape.
  auto r = t.post("/embed", R"({"inputs":7})");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 422);
  json j = body_json(r);
  EXPECT_TRUE(j["error"].is_string()) << r->body;
  EXPECT_EQ(j["error_type"], "Validation") << r->body;
  // TEI's error_type values: an empty input list is 400 Empty on TEI's routes,
  // a 400 invalid_request_error on OpenAI's.
  r = t.post("/embed", R"({"inputs":[]})");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  EXPECT_EQ(body_json(r)["error_type"], "Empty") << r->body;
  r = t.post("/tokenize", R"({"inputs":[]})");
  ASSERT_TRUE(r);
  EXPECT_EQ(body_json(r)["error_type"], "Empty") << r->body;
  r = t.post("/embeddings", R"({"input":[]})");
  expect_openai_error(r, 400, "is empty");
  EXPECT_EQ(body_json(r)["error"]["type"], "invalid_request_error") << r->body;
  // The server still works after all that.
  EXPECT_EQ(t.post("/v1/embeddings", R"({"input":"fine"})")->status, 200);
}

TEST(ServeErrors, BodyTooLarge) {
  ServiceConfig c;
  c.max_body_bytes = 1024;
  TestServer t(c);
  std::string big = "{\"input\":\"" + std::string(2000, 'a') + "\"}";
  expect_openai_error(t.post("/v1/embeddings", big), 413, "larger than 1024 bytes");
  EXPECT_EQ(t.post("/v1/embeddings", R"({"input":"small"})")->status, 200);
}

// A request's inputs are bounded by max_request_tokens (after truncation) and,
// by default, by OpenAI's 2048 inputs within max_queue; the 413s name the flags.
TEST(ServeErrors, RequestTokenBudgetAndInputCount) {
  ServiceConfig c;
  c.max_request_tokens = 10;
  c.max_queue = 100;  // the default input limit is then 100, not 2048
  TestServer t(c);
  EXPECT_EQ(t.post("/embed", R"({"inputs":["a b c","d e f"]})")->status, 200);  // 5 + 5 tokens
  auto r = t.post("/v1/embeddings", R"({"input":["a b c","d e f","g"]})");
  expect_openai_error(r, 413, "13 tokens in all; the limit is 10 per request");
  EXPECT_NE(r->body.find("--max-request-tokens"), std::string::npos) << r->body;
  json many = json::array();
  for (int i = 0; i < 101; ++i) many.push_back("a");
  r = t.post("/embed", json({{"inputs", many}}).dump());
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 413);
  EXPECT_NE(r->body.find("the limit is 100 (max_inputs_per_request, flag --max-inputs-per-request; TEI's "
                         "--max-client-batch-size)"),
            std::string::npos)
      << r->body;
  EXPECT_EQ(body_json(r)["error_type"], "Validation");
  EXPECT_EQ(body_json(t.get("/info"))["max_client_batch_size"], 100);
}

// Slow clients (a header line, then silence) hold a connection thread only
// for read_timeout_s: with every thread taken by them, /health still answers.
TEST(ServeErrors, SlowClientsDoNotStarveTheServer) {
  ServiceConfig c;
  c.http_threads = 4;
  c.read_timeout_s = 1;
  TestServer t(c);
  std::vector<int> slow;
  for (int i = 0; i < 8; ++i) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(t.server->port()));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    const std::string partial = "GET /health HTTP/1.1\r\nHost: x\r\n";
    ASSERT_GT(::send(fd, partial.data(), partial.size(), MSG_NOSIGNAL), 0);
    slow.push_back(fd);
  }
  const auto start = std::chrono::steady_clock::now();
  auto r = t.get("/health");
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_LT(seconds, 8.0);  // the slow ones are dropped after 1 s each round
  for (int fd : slow) ::close(fd);
}

// A chunked body is held to max_body_bytes like one with a Content-Length.
TEST(ServeErrors, ChunkedBodyTooLarge) {
  ServiceConfig c;
  c.max_body_bytes = 1024;
  TestServer t(c);
  const std::string head =
      "POST /v1/embeddings HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nConnection: close\r\n"
      "Transfer-Encoding: chunked\r\n\r\n";
  std::string chunks;
  const std::string body = "{\"input\":\"" + std::string(8000, 'a') + "\"}";
  for (size_t i = 0; i < body.size(); i += 500) {
    const std::string part = body.substr(i, 500);
    char len[16];
    std::snprintf(len, sizeof len, "%zx\r\n", part.size());
    chunks += len + part + "\r\n";
  }
  chunks += "0\r\n\r\n";
  const std::string answer = raw_exchange(t.server->port(), head + chunks);
  EXPECT_EQ(answer.rfind("HTTP/1.1 413", 0), 0u) << answer.substr(0, 200);
  EXPECT_NE(answer.find("larger than 1024 bytes"), std::string::npos) << answer.substr(0, 400);
  // A small chunked body is fine.
  const std::string small = "{\"input\":\"ok\"}";
  char len[16];
  std::snprintf(len, sizeof len, "%zx\r\n", small.size());
  const std::string ok = raw_exchange(t.server->port(), head + len + small + "\r\n0\r\n\r\n" , 5);
  EXPECT_EQ(ok.rfind("HTTP/1.1 200", 0), 0u) << ok.substr(0, 200);
  EXPECT_EQ(t.post("/v1/embeddings", R"({"input":"small"})")->status, 200);
}

// Requests pipelined in one write on one connection are all answered, in order.
TEST(ServeErrors, PipelinedRequestsAreAnsweredInOrder) {
  TestServer t;
  auto post = [](const std::string& path, const std::string& body, bool close) {
    return "POST " + path + " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: " +
           std::to_string(body.size()) + "\r\n" + (close ? "Connection: close\r\n" : "") + "\r\n" + body;
  };
  const std::string one = R"({"input":"first"})";
  const std::string two = R"({"inputs":["second","third"]})";
  const std::string three = R"({"inputs":"fourth"})";
  const std::string answer = raw_exchange(t.server->port(),
                                          post("/v1/embeddings", one, false) +
                                              "GET /live HTTP/1.1\r\nHost: x\r\n\r\n" + post("/embed", two, false) +
                                              post("/tokenize", three, true),
                                          10);
  // Four status lines, in the order asked: the embeddings list, /live's
  // status, two TEI vectors, then the tokens of "fourth".
  std::vector<size_t> at;
  for (size_t p = answer.find("HTTP/1.1 "); p != std::string::npos; p = answer.find("HTTP/1.1 ", p + 1)) at.push_back(p);
  ASSERT_EQ(at.size(), 4u) << answer.substr(0, 600);
  for (size_t p : at) EXPECT_EQ(answer.compare(p, 12, "HTTP/1.1 200"), 0) << answer.substr(p, 80);
  EXPECT_NE(answer.find("\"object\":\"list\"", at[0]), std::string::npos);
  EXPECT_LT(answer.find("\"object\":\"list\"", at[0]), at[1]);
  EXPECT_LT(answer.find("\"status\"", at[1]), at[2]);
  EXPECT_LT(answer.find("[[", at[2]), at[3]);
  EXPECT_NE(answer.find("\"special\"", at[3]), std::string::npos) << answer.substr(at[3]);
  // Two requests without bodies in one write.
  const std::string req = "GET /live HTTP/1.1\r\nHost: x\r\n\r\nGET /live HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
  const std::string gets = raw_exchange(t.server->port(), req, 10);
  EXPECT_EQ(gets.rfind("HTTP/1.1 200", 0), 0u) << gets.substr(0, 200);
  EXPECT_NE(gets.find("HTTP/1.1 200", 1), std::string::npos) << gets;
}

// A Range header is ignored: /metrics answers whole, however many ranges are asked for.
TEST(ServeErrors, RangeHeaderIsIgnored) {
  TestServer t;
  auto whole = t.get("/metrics");
  ASSERT_TRUE(whole);
  // (1200 ranges: the header stays under httplib's 8 KB line limit.)
  std::string ranges = "bytes=0-99";
  for (int i = 1; i < 1200; ++i) ranges += ",0-99";
  httplib::Headers h = {{"Range", ranges}};
  auto r = t.client().Get("/metrics", h);
  ASSERT_TRUE(r) << httplib::to_string(r.error());
  EXPECT_EQ(r->status, 200);
  EXPECT_LT(r->body.size(), whole->body.size() * 2);
  EXPECT_EQ(r->get_header_value("Content-Type").rfind("text/plain", 0), 0u);
}

TEST(ServeErrors, TokenLimitPerInput) {
  ServiceConfig c;
  c.truncate = false;
  c.max_input_tokens = 6;
  TestServer t(c);
  EXPECT_EQ(t.post("/v1/embeddings", R"({"input":"one two three four"})")->status, 200);  // 6 tokens
  expect_openai_error(t.post("/v1/embeddings", R"({"input":["ok","one two three four five"]})"), 413,
                      "input 1 has 7 tokens");  // the count of the one tokenization
  expect_openai_error(t.post("/v1/embeddings", R"({"input":[[1,2,3,4,5,6,7]]})"), 413, "input 0 has 7 tokens");
  // TEI's per-request truncate overrides the config.
  auto r = t.post("/embed", R"({"inputs":"one two three four five six","truncate":true,"normalize":false})");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(body_json(r)[0][0], 6.0);  // truncated to the limit
  // Past the model's own maximum (16) with truncation on: cut to 6.
  ServiceConfig c2;
  c2.max_input_tokens = 6;
  c2.truncate = true;
  TestServer t2(c2);
  r = t2.post("/v1/embeddings", R"({"input":"a b c d e f g h i j k l m n o p q r s t","normalize":false})");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(body_json(r)["data"][0]["embedding"][0], 6.0);
  EXPECT_EQ(body_json(r)["usage"]["prompt_tokens"], 6);
}

TEST(ServeRoutes, LoadingUntilTheModelIsSet) {
  TestServer t({}, /*with_model=*/false);
  auto h = t.get("/health");
  ASSERT_TRUE(h);
  EXPECT_EQ(h->status, 503);
  EXPECT_EQ(body_json(h)["status"], "loading");
  expect_openai_error(t.post("/v1/embeddings", R"({"input":"a"})"), 503, "still loading");
  t.server->set_model(t.model);
  EXPECT_EQ(t.get("/health")->status, 200);
  EXPECT_EQ(t.post("/v1/embeddings", R"({"input":"a"})")->status, 200);
}

TEST(ServeBatching, ConcurrentRequestsShareBatches) {
  ServiceConfig c;
  c.max_wait_ms = 300;
  c.max_batch_size = 8;
  c.pool_size = 1;
  TestServer t(c);
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int i = 0; i < 8; ++i)
    threads.emplace_back([&] {
      auto r = t.post("/v1/embeddings", R"({"input":"x y"})");
      if (r && r->status == 200) ++ok;
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(ok.load(), 8);
  auto sizes = t.model->batch_sizes();
  EXPECT_LT(sizes.size(), 8u) << "requests were not batched together";
  EXPECT_GE(*std::max_element(sizes.begin(), sizes.end()), 4u);
}

TEST(ServeBackPressure, FullQueueAnswers429WithRetryAfter) {
  ServiceConfig c;
  c.pool_size = 1;
  c.max_batch_size = 1;
  c.max_wait_ms = 0;
  c.max_queue = 2;
  c.max_inputs_per_request = 2;
  TestServer t(c);
  t.model->close_gate();
  std::thread running([&] { EXPECT_EQ(t.post("/v1/embeddings", R"({"input":"a"})")->status, 200); });
  ASSERT_TRUE(t.model->wait_batches(1));
  std::thread queued([&] { EXPECT_EQ(t.post("/v1/embeddings", R"({"input":["b","c"]})")->status, 200); });
  // Wait until the second request's inputs are queued.
  bool full = false;
  for (int i = 0; i < 500 && !full; ++i) {
    full = t.get("/metrics")->body.find("dlrt_queue_depth 2") != std::string::npos;
    if (!full) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_TRUE(full);
  auto r = t.post("/v1/embeddings", R"({"input":"d"})");
  expect_openai_error(r, 429, "queue is full");
  EXPECT_EQ(r->get_header_value("Retry-After"), "1");
  EXPECT_NE(t.get("/metrics")->body.find("dlrt_queue_rejected_total 1"), std::string::npos);
  t.model->open_gate();
  running.join();
  queued.join();
  EXPECT_EQ(t.post("/v1/embeddings", R"({"input":"d"})")->status, 200);
}

TEST(ServeFaults, StrictDeviceFailureIs503AndShowsInHealth) {
  TestServer t;
  t.model->fail_code = StatusCode::kBackendError;
  expect_openai_error(t.post("/v1/embeddings", R"({"input":"a"})"), 503, "strict mode forbids falling back");
  json h = body_json(t.get("/health"));
  EXPECT_EQ(h["status"], "degraded");
  EXPECT_EQ(h["degraded"], true);
  EXPECT_NE(h["reason"].get<std::string>().find("fake device failure"), std::string::npos);
  EXPECT_NE(t.get("/metrics")->body.find("dlrt_device_batch_failures_total{device=\"cpu:0\"} 1"), std::string::npos);
  // Other failures are 500.
  t.model->fail_code = StatusCode::kInternal;
  expect_openai_error(t.post("/v1/embeddings", R"({"input":"a"})"), 500, "embedding failed");
  // Recovered.
  t.model->fail_code = StatusCode::kOk;
  EXPECT_EQ(t.post("/v1/embeddings", R"({"input":"a"})")->status, 200);
  EXPECT_EQ(body_json(t.get("/health"))["status"], "ok");
}

TEST(ServeFaults, HealthReportsPlacement) {
  TestServer t;
  dlrt::RunReport on_gpu;
  on_gpu.partitions.push_back({"cpu", "cpu:0", 3, false, "", 0, "f32", "avx2"});
  on_gpu.partitions.push_back({"good", "good:0", 40, false, "", 0, "", ""});
  t.model->set_placement(on_gpu);
  json h = body_json(t.get("/health"));
  EXPECT_EQ(h["status"], "ok");
  EXPECT_EQ(h["backend"], "good");
  EXPECT_EQ(h["device"], "good:0");
  std::string since_ok = h["since"];

  dlrt::RunReport warming;
  warming.partitions.push_back({"cpu", "cpu:0", 40, true, "warm start: compiling for good:0; serving on cpu meanwhile", 0, "f32", "avx2"});
  t.model->set_placement(warming);
  h = body_json(t.get("/health"));
  EXPECT_EQ(h["status"], "warming");
  EXPECT_EQ(h["degraded"], true);
  EXPECT_EQ(h["backend"], "cpu");

  dlrt::RunReport degraded;
  degraded.partitions.push_back({"cpu", "cpu:0", 40, true, "execute on good:0 failed: boom", 0, "f32", "avx2"});
  t.model->set_placement(degraded);
  auto r = t.get("/health");
  EXPECT_EQ(r->status, 200);
  h = body_json(r);
  EXPECT_EQ(h["status"], "degraded");
  EXPECT_EQ(h["reason"], "execute on good:0 failed: boom");
  EXPECT_NE(t.get("/metrics")->body.find("dlrt_degraded 1"), std::string::npos);
  // The vectors still come (the session fell back to the CPU).
  EXPECT_EQ(t.post("/v1/embeddings", R"({"input":"a"})")->status, 200);
  EXPECT_NE(t.get("/metrics")->body.find("dlrt_device_batches_total{device=\"cpu:0\"} 1"), std::string::npos);
}

TEST(ServeShutdown, FinishesInFlightAndRefusesNew) {
  TestServer t;
  t.model->close_gate();
  int in_flight_status = 0;
  std::thread in_flight([&] {
    auto r = t.post("/v1/embeddings", R"({"input":"slow one"})");
    in_flight_status = r ? r->status : -1;
  });
  ASSERT_TRUE(t.model->wait_batches(1));
  std::thread stopper([&] {
    t.server->shutdown();
    t.thread.join();  // run() returns once the in-flight request is answered
  });
  // New connections are refused once the listening socket is closed.
  bool refused = false;
  for (int i = 0; i < 200 && !refused; ++i) {
    auto r = t.get("/health");
    refused = !r || r->status == 503;
    if (!refused) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(refused);
  EXPECT_TRUE(t.server->draining());
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(in_flight_status, 0) << "the in-flight request finished before its batch did";
  t.model->open_gate();
  in_flight.join();
  stopper.join();
  EXPECT_EQ(in_flight_status, 200);
  auto r = t.get("/health");
  EXPECT_FALSE(r) << "still accepting connections after shutdown";
}

// Connections accepted but still queued when the drain starts are answered
// (503: retryable) instead of being closed unanswered; /ready says 503 too.
TEST(ServeShutdown, QueuedConnectionsAreAnsweredWhileDraining) {
  ServiceConfig c;
  c.http_threads = 2;
  TestServer t(c);
  ASSERT_EQ(t.get("/ready")->status, 200);
  ASSERT_EQ(t.get("/live")->status, 200);
  t.model->close_gate();
  constexpr int kClients = 6;  // 2 held by the gate's batch, 4 queued behind them
  std::vector<int> status(kClients, 0);
  std::vector<std::thread> clients;
  for (int i = 0; i < kClients; ++i)
    clients.emplace_back([&, i] {
      auto r = t.post("/v1/embeddings", R"({"input":"queued"})");
      status[static_cast<size_t>(i)] = r ? r->status : -1;
    });
  ASSERT_TRUE(t.model->wait_batches(1));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the others reach the queue
  t.server->shutdown();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  t.model->open_gate();
  for (auto& th : clients) th.join();
  t.thread.join();
  int ok = 0, retryable = 0;
  for (int s : status) {
    ok += s == 200;
    retryable += s == 503;
  }
  EXPECT_EQ(ok + retryable, kClients) << "some accepted connection got no answer";
  EXPECT_GE(ok, 1);
}

TEST(ServeRoutes, ReadyAndLive) {
  TestServer loading({}, /*with_model=*/false);
  EXPECT_EQ(loading.get("/ready")->status, 503);
  EXPECT_EQ(loading.get("/live")->status, 200);
  loading.server->set_load_error("broken folder");
  EXPECT_EQ(loading.get("/live")->status, 503);
  EXPECT_EQ(body_json(loading.get("/ready"))["status"], "failed");
  ServiceConfig c;
  c.api_key = "k";
  TestServer t(c);
  auto r = t.get("/ready");  // probes need no API key
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(body_json(r)["ready"], true);
  EXPECT_EQ(t.get("/live")->status, 200);
}

}  // namespace
}  // namespace dlrt::embed
