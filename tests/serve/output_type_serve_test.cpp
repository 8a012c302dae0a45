// /v1/embeddings' output types over the fake model (docs/serve-embeddings.md "Output types"): the request
// forms (encoding_format, Mistral's output_dtype and output_dimension, ranges) and their refusals.
// tests/python/test_output_types.py compares the values with sentence-transformers' own.
#include <gtest/gtest.h>
#include <httplib.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

#include "embed/serve/handlers.h"
#include "fake_model.h"
#include "test_server.h"

namespace dlrt::embed {
namespace {

using json = nlohmann::json;
using testing::body_json;
using testing::TestServer;

json embedding(const TestServer& t, const std::string& body, int status = 200) {
  auto r = t.post("/v1/embeddings", body);
  EXPECT_TRUE(r);
  if (!r) return {};
  EXPECT_EQ(r->status, status) << body << " -> " << r->body;
  return status == 200 ? body_json(r)["data"][0]["embedding"] : body_json(r)["error"]["message"];
}

TEST(ServeOutputTypes, RequestForms) {
  TestServer t;
  // The fake model's vector for one input: {tokens, second id, 1, 1}, all positive.
  const json f = embedding(t, R"({"input":"one two","normalize":false})");
  ASSERT_EQ(f.size(), 4u);
  // Ranges 0..255 step by 1: uint8 is floor(x) clipped; int8 that minus 128.
  const std::string ranges = R"("ranges":[[0,0,0,0],[255,255,255,255]])";
  const json u = embedding(t, R"({"input":"one two","normalize":false,"output_dtype":"uint8",)" + ranges + "}");
  const json i = embedding(t, R"({"input":"one two","normalize":false,"encoding_format":"int8",)" + ranges + "}");
  for (size_t d = 0; d < 4; ++d) {
    const int want = static_cast<int>(std::min(std::floor(f[d].get<float>()), 255.0f));
    EXPECT_EQ(u[d], want) << d;
    EXPECT_EQ(i[d], want - 128) << d;
  }
  // Four positive values: bits 1111 padded with 0000.
  EXPECT_EQ(embedding(t, R"({"input":"one two","output_dtype":"ubinary"})"), json::array({0xF0}));
  EXPECT_EQ(embedding(t, R"({"input":"one two","encoding_format":"binary"})"), json::array({0xF0 - 128}));
  EXPECT_EQ(embedding(t, R"({"input":"one two","output_dtype":"binary","encoding_format":"base64"})"), "cA==");  // 0x70
  EXPECT_EQ(embedding(t, R"({"input":"one two","output_dtype":"float","output_dimension":2})").size(), 2u);
}

TEST(ServeOutputTypes, Refusals) {
  TestServer t;
  auto has = [&](const std::string& body, const std::string& part, int status = 422) {
    const json m = embedding(t, body, status);
    EXPECT_NE(m.get<std::string>().find(part), std::string::npos) << body << " -> " << m;
  };
  has(R"({"input":"one","encoding_format":"int8"})", "single embedding");
  has(R"({"input":["a","b"],"encoding_format":"int4"})", "'encoding_format' must be");
  has(R"({"input":["a","b"],"output_dtype":"float32"})", "'output_dtype' must be");
  has(R"({"input":["a","b"],"output_dtype":"int8","encoding_format":"uint8"})", "different output types");
  has(R"({"input":["a","b"],"output_dtype":"ubinary","ranges":[[0],[1]]})", "applies to the int8 and uint8");
  has(R"({"input":["a","b"],"output_dtype":"int8","ranges":[[0,0,0,0]]})", "'ranges' must be");
  has(R"({"input":["a","b"],"output_dtype":"int8","ranges":[[0,0],[1,1]]})", "2 values per row");
  has(R"({"input":["a","b"],"output_dtype":"int8","ranges":[[0,0,0,0],[1e39,1,1,1]]})", "'ranges' must be");
  has(R"({"input":["a","b"],"output_dtype":"int8","calibration_embeddings":[]})", "'calibration_embeddings' must be");
  has(R"({"input":["a","b"],"dimensions":2,"output_dimension":2})", "not both");
  auto r = t.post("/embed", R"({"inputs":"a","output_dtype":"int8"})");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 422) << r->body;
  EXPECT_NE(r->body.find("'output_dtype' is a field of /v1/embeddings"), std::string::npos) << r->body;
  std::string rows = "[0,0,0,0]";
  for (size_t k = 0; k < kMaxCalibrationRows; ++k) rows += ",[0,0,0,0]";
  has(R"({"input":["a","b"],"output_dtype":"int8","calibration_embeddings":[)" + rows + "]}", "the limit is 65536",
      413);
}

}  // namespace
}  // namespace dlrt::embed
