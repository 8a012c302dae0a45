// Request bodies that RFC 8259 allows but nlohmann::json refuses
// (apps/embed/serve/body_json.h): a lone surrogate escape decodes as U+FFFD, a
// number beyond a double is refused naming it, not as "not valid JSON".
#include "embed/serve/body_json.h"

#include <gtest/gtest.h>

#include <string>

#include "test_server.h"

namespace dlrt::embed {
namespace {

using nlohmann::json;

TEST(ServeBodyJson, LoneSurrogatesDecodeAsReplacementCharacter) {
  json j;
  EXPECT_EQ(parse_body_json(R"({"input":"a\ud800b"})", j), "");
  EXPECT_EQ(j["input"], "a\xEF\xBF\xBD" "b");
  EXPECT_EQ(parse_body_json(R"({"input":"\udc00"})", j), "");
  EXPECT_EQ(j["input"], "\xEF\xBF\xBD");
  EXPECT_EQ(parse_body_json(R"(["\ud800", "\\ud800", "\ud800\udc00"])", j), "");
  EXPECT_EQ(j[0], "\xEF\xBF\xBD");
  EXPECT_EQ(j[1], "\\ud800");  // an escaped backslash, not an escape
  EXPECT_EQ(j[2], "\xF0\x90\x80\x80");  // a pair is U+10000
  EXPECT_EQ(parse_body_json(R"({"input":"\ud800)", j).find("the body is not valid JSON"), 0u);  // unterminated
}

TEST(ServeBodyJson, NumbersBeyondADoubleAreNamed) {
  json j;
  const std::string e = parse_body_json(R"({"input":"x","dimensions":1e999})", j);
  EXPECT_NE(e.find("out of range"), std::string::npos) << e;
  EXPECT_NE(e.find("1e999"), std::string::npos) << e;
  EXPECT_EQ(parse_body_json(R"({"a":1e308,"b":-0.0,"c":1e-999})", j), "");  // 1e-999 is 0
  const std::string broken = parse_body_json(R"({"input": )", j);
  EXPECT_EQ(broken.find("the body is not valid JSON"), 0u) << broken;
}

TEST(ServeBodyJson, ServerAnswers) {
  testing::TestServer t;
  auto ok = t.post("/v1/embeddings", R"({"input":"a\ud800b"})");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200) << ok->body;
  auto big = t.post("/v1/embeddings", R"({"input":"x","dimensions":1e999})");
  ASSERT_TRUE(big);
  EXPECT_EQ(big->status, 400);
  EXPECT_NE(big->body.find("1e999"), std::string::npos) << big->body;
  EXPECT_EQ(big->body.find("not valid JSON"), std::string::npos) << big->body;
}

}  // namespace
}  // namespace dlrt::embed
