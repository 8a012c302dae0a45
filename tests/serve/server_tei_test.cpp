// The server's text-embeddings-inference surface over the fake model:
// truncation on by default, /similarity, /tokenize offsets, /docs (and its Swagger UI files) and the
// te_* metrics beside dlrt's.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <sstream>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "embed/serve/metrics.h"
#include "embed/serve/swagger_ui.h"
#include "test_server.h"

namespace dlrt::embed {
namespace {

using json = nlohmann::json;
using testing::body_json;
using testing::TestServer;

// Sample lines of a Prometheus text: "name{labels}" -> value.
std::map<std::string, double> samples(const std::string& text) {
  std::map<std::string, double> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const size_t space = line.rfind(' ');
    out[line.substr(0, space)] = std::stod(line.substr(space + 1));
  }
  return out;
}

TEST(ServeTei, TruncatesByDefaultAndRefusesWhenAskedNotTo) {
  TestServer t;  // the fake model's limit is 16 tokens
  std::string long_text;
  for (int i = 0; i < 400; ++i) long_text += "word ";
  auto r = t.post("/v1/embeddings", json({{"input", long_text}, {"normalize", false}}).dump());
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(body_json(r)["data"][0]["embedding"][0], 16.0);  // cut to the model's 16 tokens
  EXPECT_EQ(body_json(t.get("/info"))["truncate"], true);
  // A request can still ask for the 413.
  r = t.post("/embed", json({{"inputs", long_text}, {"truncate", false}}).dump());
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 413) << r->body;
  EXPECT_NE(r->body.find("the limit is 16"), std::string::npos) << r->body;
  // So can the server (--no-truncate, truncate = false).
  ServiceConfig c;
  c.truncate = false;
  TestServer strict(c);
  r = strict.post("/v1/embeddings", json({{"input", long_text}}).dump());
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 413) << r->body;
}

TEST(ServeTei, SimilarityScoresEachSentenceAgainstTheSource) {
  TestServer t;
  // The fake model's vector is {tokens, first word's id, batch size, 1}: "a b"
  // and "c d" embed alike, "longer words here" less so.
  auto r = t.post("/similarity", R"({"inputs":{"source_sentence":"a b","sentences":["c d","longer words here"]}})");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  json j = body_json(r);
  ASSERT_EQ(j.size(), 2u) << r->body;
  EXPECT_NEAR(j[0].get<double>(), 1.0, 1e-6);
  // The same three texts through /embed: the cosine of the first and third.
  json v = body_json(t.post("/embed", R"({"inputs":["a b","c d","longer words here"]})"));
  double ab = 0, aa = 0, bb = 0;
  for (size_t i = 0; i < 4; ++i) {
    const double a = v[0][i].get<double>(), b = v[2][i].get<double>();
    ab += a * b, aa += a * a, bb += b * b;
  }
  EXPECT_NEAR(j[1].get<double>(), ab / std::sqrt(aa * bb), 1e-6);
  EXPECT_LT(j[1].get<double>(), 1.0);
  // Parameters as TEI's; errors in TEI's shape.
  r = t.post("/similarity", R"({"inputs":{"source_sentence":"a","sentences":["b"]},"parameters":{"prompt_name":"query","truncate":true}})");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
  r = t.post("/similarity", R"({"inputs":{"source_sentence":"a","sentences":[]}})");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400) << r->body;  // TEI's Empty
  EXPECT_EQ(body_json(r)["error_type"], "Empty") << r->body;
  for (const char* bad : {R"({"inputs":{"sentences":["b"]}})",
                          R"({"inputs":"a"})", R"({"inputs":{"source_sentence":"a","sentences":["b"]},"parameters":{"prompt_name":"nope"}})",
                          R"({"inputs":{"source_sentence":"a","sentences":["b"]},"parameters":{"truncation_direction":"left"}})"}) {
    r = t.post("/similarity", bad);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 422) << bad << " -> " << r->body;
    EXPECT_TRUE(body_json(r)["error"].is_string()) << r->body;
  }
}

TEST(ServeTei, TokenizeGivesByteOffsetsIntoTheText) {
  TestServer t;
  auto r = t.post("/tokenize", R"({"inputs":"h\u00e9llo  world"})");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  json j = body_json(r)[0];
  ASSERT_EQ(j.size(), 4u) << j.dump();
  EXPECT_TRUE(j[0]["special"].get<bool>());
  EXPECT_TRUE(j[0]["start"].is_null());
  EXPECT_EQ(j[1]["start"], 0);
  EXPECT_EQ(j[1]["stop"], 6);  // "héllo": 6 bytes
  EXPECT_EQ(j[1]["text"], "h\u00e9llo");
  EXPECT_EQ(j[2]["start"], 8);
  EXPECT_EQ(j[2]["stop"], 13);
  EXPECT_EQ(j[2]["text"], "world");
  EXPECT_TRUE(j[3]["stop"].is_null());
  // With a prompt, offsets are into the prompted text (as TEI).
  r = t.post("/tokenize", R"({"inputs":"cat","prompt_name":"query"})");
  ASSERT_TRUE(r);
  j = body_json(r)[0];
  ASSERT_EQ(j.size(), 4u) << j.dump();
  EXPECT_EQ(j[2]["text"], "cat");
  EXPECT_EQ(j[2]["start"], 7);
}

TEST(ServeTei, DocsPageShowsTheOpenApiDocumentWithoutDownloads) {
  TestServer t;
  auto r = t.get("/docs");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200);
  EXPECT_EQ(r->get_header_value("Content-Type").rfind("text/html", 0), 0u);
  EXPECT_EQ(r->get_header_value("Cache-Control"), "no-cache");
  EXPECT_NE(r->body.find("fetch(\"openapi.json\")"), std::string::npos);  // relative: works behind a prefix
  EXPECT_EQ(r->body.find("http://"), std::string::npos);  // nothing fetched from elsewhere
  EXPECT_EQ(r->body.find("https://"), std::string::npos);
  json doc = body_json(t.get("/openapi.json"));
  for (const char* path : {"/similarity", "/docs"}) EXPECT_TRUE(doc["paths"].contains(path)) << path;
  EXPECT_FALSE(doc["paths"].contains("/docs/swagger-ui-bundle.js"));  // files of the page, not routes
  EXPECT_TRUE(doc["components"]["schemas"].contains("SimilarityRequest"));
}

// With Swagger UI embedded (the build's default when scripts/fetch_swagger_ui.sh ran), /docs
// loads its files from this server, each cacheable and revalidated by ETag; without it the
// plain page says so and the files are 404s naming why.
TEST(ServeTei, DocsServesTheEmbeddedSwaggerUiFilesWithETags) {
  TestServer t;
  const SwaggerUi& ui = swagger_ui();
  const std::string page = t.get("/docs")->body;
  const std::vector<std::tuple<std::string, std::string_view, std::string_view, std::string>> files = {
      {"/docs/swagger-ui-bundle.js", ui.bundle_js, ui.bundle_md5, "text/javascript"},
      {"/docs/swagger-ui.css", ui.css, ui.css_md5, "text/css"},
      {"/docs/LICENSE", ui.license, ui.license_md5, "text/plain"}};
  if (ui.version.empty()) {
    EXPECT_NE(page.find("built without\nSwagger UI"), std::string::npos) << page;
    for (const auto& f : files) {
      auto r = t.get(std::get<0>(f));
      ASSERT_TRUE(r);
      EXPECT_EQ(r->status, 404);
      EXPECT_NE(r->body.find("built without Swagger UI"), std::string::npos) << r->body;
    }
    GTEST_SKIP() << "this build has no Swagger UI: " << ui.missing;
  }
  EXPECT_NE(page.find("SwaggerUIBundle("), std::string::npos);
  EXPECT_NE(page.find("docs/swagger-ui-bundle.js?v=" + std::string(ui.bundle_md5)), std::string::npos);
  EXPECT_NE(page.find("docs/swagger-ui.css?v=" + std::string(ui.css_md5)), std::string::npos);
  EXPECT_NE(page.find("validatorUrl: null"), std::string::npos);  // no badge from swagger.io
  EXPECT_GT(ui.bundle_js.size(), 100000u);
  EXPECT_NE(ui.license.find("Apache License"), std::string::npos);
  for (const auto& [path, body, md5, type] : files) {
    auto r = t.get(path + "?v=" + std::string(md5));
    ASSERT_TRUE(r) << path;
    ASSERT_EQ(r->status, 200) << path;
    EXPECT_TRUE(r->body == body) << path;
    EXPECT_EQ(r->get_header_value("Content-Type").rfind(type, 0), 0u) << path;
    const std::string etag = "\"" + std::string(md5) + "\"";
    EXPECT_EQ(r->get_header_value("ETag"), etag) << path;
    EXPECT_EQ(r->get_header_value("Cache-Control"), "public, max-age=604800") << path;
    auto again = t.client().Get(path.c_str(), {{"If-None-Match", etag}});
    ASSERT_TRUE(again) << path;
    EXPECT_EQ(again->status, 304) << path;
    EXPECT_TRUE(again->body.empty()) << path;
    EXPECT_EQ(t.client().Get(path.c_str(), {{"If-None-Match", "\"other\""}})->status, 200) << path;
  }
  EXPECT_EQ(t.get("/models/fake/docs/LICENSE")->status, 404);  // the server's, not a model's
}

// A browser accepts brotli, which httplib would run at its slowest quality (about a minute of
// CPU for /docs' script on a loaded machine): gzip is used instead, or nothing.
TEST(ServeTei, AnswersAreGzippedNotBrotliCompressed) {
  TestServer t;
  auto c = t.client();
  c.set_decompress(false);
  for (const char* path : {"/openapi.json", "/docs/swagger-ui-bundle.js"}) {
    if (std::string(path).rfind("/docs/", 0) == 0 && swagger_ui().version.empty()) continue;
    auto r = c.Get(path, {{"Accept-Encoding", "gzip, deflate, br, zstd"}});
    ASSERT_TRUE(r) << path;
    ASSERT_EQ(r->status, 200) << path;
    EXPECT_EQ(r->get_header_value("Content-Encoding"), "gzip") << path;
    r = c.Get(path, {{"Accept-Encoding", "br"}});
    ASSERT_TRUE(r) << path;
    EXPECT_EQ(r->status, 200) << path;
    EXPECT_FALSE(r->has_header("Content-Encoding")) << path;
    EXPECT_EQ(r->body, t.get(path)->body) << path;
  }
}

TEST(ServeTei, TeiMetricsAddUpToDlrtOnes) {
  ServiceConfig c;
  c.max_inputs_per_request = 4;
  TestServer t(c);
  ASSERT_EQ(t.post("/v1/embeddings", R"({"input":["a","b"]})")->status, 200);
  ASSERT_EQ(t.post("/embed", R"({"inputs":"c"})")->status, 200);
  ASSERT_EQ(t.post("/similarity", R"({"inputs":{"source_sentence":"a","sentences":["b"]}})")->status, 200);
  ASSERT_EQ(t.post("/embed", R"({"inputs":["1","2","3","4","5"]})")->status, 413);
  ASSERT_EQ(t.post("/v1/embeddings", "nope")->status, 400);
  ASSERT_EQ(t.post("/tokenize", R"({"inputs":"x"})")->status, 200);  // not an inference request
  t.model->fail_code = StatusCode::kInternal;
  ASSERT_EQ(t.post("/embed", R"({"inputs":"d"})")->status, 500);
  auto s = samples(t.get("/metrics")->body);
  EXPECT_EQ(s["te_request_count"], 6);
  EXPECT_EQ(s["te_request_success"], 3);
  EXPECT_EQ(s["te_request_failure{err=\"validation\"}"], 2);
  EXPECT_EQ(s["te_request_failure{err=\"inference\"}"], 1);
  EXPECT_EQ(s["te_request_failure{err=\"overloaded\"}"], 0);
  double dlrt_requests = 0;
  for (const auto& [name, v] : s)
    if (name.rfind("dlrt_http_requests_total{", 0) == 0 && name.find("/tokenize") == std::string::npos) dlrt_requests += v;
  EXPECT_EQ(s["te_request_count"], dlrt_requests);
  EXPECT_EQ(s["te_request_count"], s["te_request_success"] + s["te_request_failure{err=\"validation\"}"] +
                                       s["te_request_failure{err=\"inference\"}"] +
                                       s["te_request_failure{err=\"overloaded\"}"]);
  EXPECT_EQ(s["te_embed_success"], s["dlrt_inputs_total"]);
  EXPECT_EQ(s["te_embed_success"], 5);
  EXPECT_EQ(s["te_embed_count"], 6);  // and the failed batch's input
  EXPECT_EQ(s["te_batch_next_size_count"], s["dlrt_batch_size_count"]);
  EXPECT_EQ(s["te_batch_next_size_sum"], s["dlrt_batch_size_sum"]);
  EXPECT_EQ(s["te_batch_next_tokens_sum"], s["dlrt_batch_padded_tokens_sum"]);
  EXPECT_EQ(s["te_embed_inference_duration_count"], s["dlrt_batch_duration_seconds_count"]);
  EXPECT_EQ(s["te_queue_size"], s["dlrt_queue_depth"]);
  // One te_embed_duration observation per embedding request (every answer, as dlrt's per route).
  EXPECT_EQ(s["te_embed_duration_count"], s["dlrt_http_request_duration_seconds_count{route=\"/v1/embeddings\"}"] +
                                              s["dlrt_http_request_duration_seconds_count{route=\"/embed\"}"] +
                                              s["dlrt_http_request_duration_seconds_count{route=\"/similarity\"}"]);
}

TEST(ServeTei, MetricsTypesAreDeclared) {
  Metrics m;
  const std::string text = m.render({});
  for (const char* line : {"# TYPE te_request_count counter", "# TYPE te_request_success counter",
                           "# TYPE te_request_failure counter", "# TYPE te_embed_count counter",
                           "# TYPE te_embed_success counter", "# TYPE te_embed_duration histogram",
                           "# TYPE te_embed_inference_duration histogram", "# TYPE te_batch_next_size histogram",
                           "# TYPE te_batch_next_tokens histogram", "# TYPE te_queue_size gauge"})
    EXPECT_NE(text.find(line), std::string::npos) << line;
}

TEST(ServeTei, DefaultPromptNameSettingIsUsedWhenARequestNamesNone) {
  ServiceConfig c;
  c.default_prompt_name = "query";
  TestServer t(c);
  auto r = t.post("/tokenize", R"({"inputs":"cat"})");
  ASSERT_TRUE(r);
  json j = body_json(r)[0];
  ASSERT_EQ(j.size(), 4u) << j.dump();  // [CLS] "query:" "cat" [SEP]
  EXPECT_EQ(j[1]["text"], "query:");
  EXPECT_EQ(body_json(t.get("/info"))["default_prompt_name"], "query");
  // /embed_all takes the same default: a vector per token, the prompt's included.
  auto all = t.post("/embed_all", R"({"inputs":"cat"})");
  ASSERT_TRUE(all);
  ASSERT_EQ(all->status, 200) << all->body;
  EXPECT_EQ(body_json(all)[0].size(), 4u) << all->body;
}

// /info's cpu_precision: the model's choice as dlrt/precision_choice.h holds it.
TEST(ServeTei, InfoSaysWhichCpuPrecisionRunsAndWhatAutoMeasured) {
  TestServer t;
  EXPECT_EQ(body_json(t.get("/info"))["cpu_precision"], json({{"chosen", ""}, {"automatic", false}}));
  PrecisionChoice& c = t.model->precision_;
  c.automatic = true;
  c.chosen = "f32";
  c.reason = "f32: no other precision is both within the bound and faster; bf16 ...";
  c.canary = "given";
  c.canary_sets = 2;
  c.rounds = 5;
  PrecisionTrial f32{"f32", true, 10.0, 1, 0, false, false, "chosen"};
  PrecisionTrial bf16{"bf16", true, 13.1, 0.99999, 4e-3, true, false, "not faster (needs < 0.95x f32's time)"};
  PrecisionTrial amx{"bf16x3", false, 0, 1, 0, false, false, "not available: no AMX"};
  c.trials = {f32, amx, bf16};
  const json info = body_json(t.get("/info"))["cpu_precision"];
  EXPECT_EQ(info["chosen"], "f32");
  EXPECT_EQ(info["canary_sets"], 2);
  EXPECT_EQ(info["bound"]["min_cosine"], 0.9999);
  ASSERT_EQ(info["trials"].size(), 3u) << info.dump();
  EXPECT_EQ(info["trials"][2]["median_ms"], 13.1);
  EXPECT_EQ(info["trials"][2]["max_rel_error"], 4e-3);
  EXPECT_EQ(info["trials"][2]["faster"], false);
  EXPECT_FALSE(info["trials"][1].contains("median_ms")) << "a precision that did not run has no figures";
  EXPECT_EQ(info["trials"][1]["verdict"], "not available: no AMX");
}

}  // namespace
}  // namespace dlrt::embed
