// Cohere's /v2/embed and /v1/embed (docs/serve-embeddings.md): the request forms over the fake model
// (texts, inputs, input_type -> prompts, embedding_types, truncate, max_tokens) against
// /v1/embeddings and /embed of the same inputs, their refusals, and images on the committed
// tiny CLIP (tests/models/image/clip_tiny) against transformers' image features.
// tests/serve/test_client_libraries.py runs the same routes with cohere's own clients.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "../embed/embed_test_util.h"
#include "embed/models/registry.h"
#include "embed/serve/handlers.h"
#include "test_server.h"

// Own namespace: the unity build puts this file beside others with the same helper names.
namespace dlrt::embed::cohere_embed_test {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using testing::body_json;
using testing::TestServer;

json post(const TestServer& t, const std::string& path, const json& body, int status = 200) {
  auto r = t.post(path, body.dump());
  EXPECT_TRUE(r) << path;
  if (!r) return {};
  EXPECT_EQ(r->status, status) << path << " " << body.dump() << " -> " << r->body;
  return body_json(r);
}

const json kTexts = {"one two", "three four five", "six"};

// xxxxxxxx-xxxx-4xxx-[89ab]xxx-xxxxxxxxxxxx in lower-case hex. (Not std::regex:
// its instantiations in this binary would be exported for cpp-httplib's, and
// OpenVINO, loaded later by other tests, would bind its own regex code to them.)
bool is_uuid4(const std::string& s) {
  if (s.size() != 36) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      if (c != '-') return false;
    } else if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
      return false;
    }
  }
  return s[14] == '4' && (s[19] == '8' || s[19] == '9' || s[19] == 'a' || s[19] == 'b');
}

TEST(ServeCohereEmbed, V2TextsEveryEmbeddingType) {
  TestServer t;
  const json r = post(t, "/v2/embed",
                      {{"model", "fake"},
                       {"input_type", "search_document"},
                       {"texts", kTexts},
                       {"embedding_types", {"float", "int8", "uint8", "binary", "ubinary", "base64", "float"}}});
  EXPECT_EQ(r["response_type"], "embeddings_by_type");
  EXPECT_TRUE(is_uuid4(r["id"].get<std::string>())) << r["id"];
  EXPECT_EQ(r["texts"], kTexts);
  EXPECT_EQ(r["meta"]["api_version"]["version"], "2");
  EXPECT_EQ(r["meta"]["billed_units"]["input_tokens"], 4 + 5 + 3);  // the words and two special tokens each
  const json& e = r["embeddings"];
  EXPECT_EQ(e.size(), 6u) << e;  // "float" asked twice, answered once
  // Each type equals /v1/embeddings' of the same inputs (both quantize on the request's vectors).
  for (const char* type : {"int8", "uint8", "binary", "ubinary"}) {
    const json want = post(t, "/v1/embeddings", {{"input", kTexts}, {"encoding_format", type}});
    ASSERT_EQ(e[type].size(), 3u) << type;
    for (size_t i = 0; i < 3; ++i) EXPECT_EQ(e[type][i], want["data"][i]["embedding"]) << type << " " << i;
  }
  const json floats = post(t, "/v1/embeddings", {{"input", kTexts}});
  const json b64 = post(t, "/v1/embeddings", {{"input", kTexts}, {"encoding_format", "base64"}});
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(e["float"][i], floats["data"][i]["embedding"]) << i;
    EXPECT_EQ(e["base64"][i], b64["data"][i]["embedding"]) << i;
  }
  // Two inputs of one word (3 tokens) and one of two: uint8 buckets of the request's own ranges.
  EXPECT_EQ(e["ubinary"][0], json::array({0xF0}));
}

TEST(ServeCohereEmbed, InputTypeChoosesThePrompt) {
  TestServer t;  // the fake model's one prompt is "query" ("query: ", one more word)
  auto first = [&](const json& r, const char* field) { return r["embeddings"][field][0]; };
  const json query = post(t, "/v2/embed", {{"input_type", "search_query"}, {"texts", {"one two"}}});
  const json document = post(t, "/v2/embed", {{"input_type", "search_document"}, {"texts", {"one two"}}});
  const json with_prompt = post(t, "/embed", {{"inputs", {"one two"}}, {"prompt_name", "query"}});
  const json without = post(t, "/embed", {{"inputs", {"one two"}}});
  EXPECT_EQ(first(query, "float"), with_prompt[0]);
  EXPECT_EQ(first(document, "float"), without[0]);  // no "document" prompt: none
  EXPECT_NE(with_prompt[0], without[0]);
  EXPECT_EQ(query["meta"]["billed_units"]["input_tokens"], 5);
  for (const char* type : {"classification", "clustering"})
    EXPECT_EQ(first(post(t, "/v2/embed", {{"input_type", type}, {"texts", {"one two"}}}), "float"), without[0]) << type;
}

TEST(ServeCohereEmbed, ContentInputsTruncationAndDimensions) {
  TestServer t;  // the fake model's vector is {tokens, second id, batch size, 1} before normalising
  json inputs = json::array();
  for (const json& s : kTexts) inputs.push_back({{"content", {{{"type", "text"}, {"text", s}}}}});
  const json by_inputs = post(t, "/v2/embed", {{"input_type", "clustering"}, {"inputs", inputs}});
  const json by_texts = post(t, "/v2/embed", {{"input_type", "clustering"}, {"texts", kTexts}});
  EXPECT_EQ(by_inputs["embeddings"], by_texts["embeddings"]);
  EXPECT_EQ(by_inputs["texts"], kTexts);
  // max_tokens cuts each input (END, the default) to 3 tokens, its last one kept: "three four five" as "three".
  const json cut =
      post(t, "/v2/embed", {{"input_type", "clustering"}, {"texts", {"three four five"}}, {"max_tokens", 3}});
  EXPECT_EQ(cut["embeddings"]["float"][0], post(t, "/embed", {{"inputs", {"three"}}})[0]);
  EXPECT_EQ(cut["meta"]["billed_units"]["input_tokens"], 3);
  const json refused = post(
      t, "/v2/embed",
      {{"input_type", "clustering"}, {"texts", {"three four five"}}, {"max_tokens", 3}, {"truncate", "NONE"}}, 413);
  EXPECT_NE(refused["error"]["message"].get<std::string>().find("the limit is 3 per input: shorten it or send "
                                                                "\"truncate\": \"END\""),
            std::string::npos)
      << refused;
  const json two = post(t, "/v2/embed", {{"input_type", "clustering"}, {"texts", {"six"}}, {"output_dimension", 2}});
  EXPECT_EQ(two["embeddings"]["float"][0].size(), 2u);
  // int8 of one text takes the ranges the request gives (dlrt's field, as on /v1/embeddings).
  const json ranged = post(t, "/v2/embed",
                           {{"input_type", "clustering"},
                            {"texts", {"six"}},
                            {"embedding_types", {"int8"}},
                            {"ranges", {{0, 0, 0, 0}, {1, 1, 1, 1}}}});
  EXPECT_EQ(ranged["embeddings"]["int8"][0].size(), 4u);
}

TEST(ServeCohereEmbed, V1FloatsOrByType) {
  TestServer t;
  const json floats = post(t, "/v1/embed", {{"texts", kTexts}});  // input_type is optional in v1
  EXPECT_EQ(floats["response_type"], "embeddings_floats");
  EXPECT_EQ(floats["meta"]["api_version"]["version"], "1");
  const json v2 = post(t, "/v2/embed", {{"input_type", "search_document"}, {"texts", kTexts}});
  EXPECT_EQ(floats["embeddings"], v2["embeddings"]["float"]);
  const json typed = post(t, "/v1/embed", {{"texts", kTexts}, {"embedding_types", {"ubinary"}}});
  EXPECT_EQ(typed["response_type"], "embeddings_by_type");
  EXPECT_EQ(typed["embeddings"]["ubinary"].size(), 3u);
  EXPECT_FALSE(typed["embeddings"].contains("float"));
}

TEST(ServeCohereEmbed, Refusals) {
  TestServer t;
  auto has = [&](const json& body, const std::string& part, int status = 422) {
    const json r = post(t, "/v2/embed", body, status);
    const std::string m = r["error"]["message"].get<std::string>();
    EXPECT_NE(m.find(part), std::string::npos) << body.dump() << " -> " << m;
  };
  const json texts = {"a b", "c"};
  has({{"texts", texts}}, "missing field 'input_type'");
  has({{"texts", texts}, {"input_type", "search"}}, "'input_type' must be");
  has({{"texts", texts}, {"input_type", "image"}}, "'input_type' \"image\" is for images");
  has({{"input_type", "search_query"}}, "missing field 'texts'");
  has({{"input_type", "search_query"}, {"texts", texts}, {"images", {"data:image/png;base64,AAAA"}}}, "not several");
  has({{"input_type", "search_query"}, {"texts", json::array()}}, "is empty", 400);
  has({{"input_type", "search_query"}, {"texts", {1}}}, "'texts'[0] is not a string");
  has({{"input_type", "search_query"}, {"texts", texts}, {"embedding_types", {"int4"}}}, "'embedding_types' holds");
  has({{"input_type", "search_query"}, {"texts", texts}, {"embedding_types", json::array()}}, "non-empty array");
  has({{"input_type", "search_query"}, {"texts", texts}, {"truncate", "START"}}, "\"START\" is not supported");
  has({{"input_type", "search_query"}, {"texts", texts}, {"truncate", "end"}}, "'truncate' must be");
  has({{"input_type", "search_query"}, {"texts", texts}, {"max_tokens", 0}}, "'max_tokens' must be a positive");
  has({{"input_type", "search_query"}, {"texts", texts}, {"output_dimension", 9}}, "the model's vectors have 4");
  has({{"input_type", "search_query"}, {"texts", {"a"}}, {"embedding_types", {"int8"}}}, "single embedding");
  has({{"input_type", "search_query"}, {"texts", texts}, {"ranges", {{0}, {1}}}}, "applies to the int8 and uint8");
  has({{"input_type", "image"}, {"images", {"https://example.com/cat.png"}}}, "remote image URLs are not fetched");
  has({{"input_type", "image"}, {"images", {7}}}, "'images'[0] is not a string");
  const json two_items = {{{"content", {{{"type", "text"}, {"text", "a"}}, {{"type", "text"}, {"text", "b"}}}}}};
  has({{"input_type", "search_query"}, {"inputs", two_items}}, "has 2 content items");
  has({{"input_type", "search_query"}, {"inputs", {{{"content", {{{"type", "video"}}}}}}}},
      "must be {\"type\": \"text\"");
  // An image input to a model without an image tower: refused by kind, as on /v1/embeddings.
  const json image = {{{"content", {{{"type", "image_url"}, {"image_url", {{"url", "data:image/png;base64,AAAA"}}}}}}}};
  has({{"input_type", "image"}, {"inputs", image}}, "an image input", 400);
}

// ---- images on the tiny CLIP ------------------------------------------------------------

const fs::path kRepo = fs::path(DLRT_TEST_DIR).parent_path();
const fs::path kDir = fs::path(DLRT_TEST_DIR) / "models" / "image";

const json& reference() {
  static const json r = json::parse(testing::slurp(kDir / "clip_tiny_reference.json"));
  return r;
}

std::string data_url(size_t i) {
  std::string quoted;
  append_base64_bytes(quoted, testing::slurp(kRepo / reference()["images"][i].get<std::string>()));
  return "data:image/png;base64," + quoted.substr(1, quoted.size() - 2);
}

double cosine(const json& a, const json& b) {
  double dot = 0, na = 0, nb = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    const double x = a[i].get<double>(), y = b[i].get<double>();
    dot += x * y, na += x * x, nb += y * y;
  }
  return dot / std::sqrt(na * nb);
}

struct ClipServer : TestServer {
  ClipServer() : TestServer(ServiceConfig{}, /*with_model=*/false) {
    EmbedderOptions o;
    o.device = "cpu";
    o.threads = 2;
    auto m = open_model((kDir / "clip_tiny").string(), o);
    EXPECT_TRUE(m.ok()) << m.status().to_string();
    if (m.ok()) server->set_model(*m);
  }
};

TEST(ServeCohereEmbed, ImagesOnClip) {
  ClipServer s;
  const size_t n = reference()["images"].size();
  json images = json::array(), inputs = json::array();
  for (size_t i = 0; i < n; ++i) {
    images.push_back(data_url(i));
    inputs.push_back({{"content", {{{"type", "image_url"}, {"image_url", {{"url", data_url(i)}}}}}}});
  }
  for (const json& body : {json{{"input_type", "image"}, {"images", images}, {"embedding_types", {"float", "ubinary"}}},
                           json{{"input_type", "search_document"}, {"inputs", inputs}}}) {
    const json r = post(s, "/v2/embed", body);
    const json& got = r["embeddings"]["float"];
    ASSERT_EQ(got.size(), n) << r;
    for (size_t i = 0; i < n; ++i) EXPECT_GE(cosine(got[i], reference()["image_embeds"][i]), 0.99999) << i;
    EXPECT_EQ(r["texts"], json::array());
    EXPECT_EQ(r["meta"]["billed_units"]["images"], n);
  }
  // Texts and images among one request's inputs: a vector per input, in order.
  const json& texts = reference()["texts"];
  const json mixed = {inputs[2], {{"content", {{{"type", "text"}, {"text", texts[1]}}}}}, inputs[0]};
  const json m = post(s, "/v2/embed", {{"input_type", "search_document"}, {"inputs", mixed}});
  ASSERT_EQ(m["embeddings"]["float"].size(), 3u) << m;
  EXPECT_GE(cosine(m["embeddings"]["float"][0], reference()["image_embeds"][2]), 0.99999);
  EXPECT_GE(cosine(m["embeddings"]["float"][1], reference()["text_embeds"][1]), 0.99999);
  EXPECT_GE(cosine(m["embeddings"]["float"][2], reference()["image_embeds"][0]), 0.99999);
  EXPECT_EQ(m["texts"], json::array({texts[1]}));
  EXPECT_EQ(m["meta"]["billed_units"]["images"], 2);
  EXPECT_GT(m["meta"]["billed_units"]["input_tokens"], 0);
  // Texts on the same model: the text tower.
  const json r = post(s, "/v2/embed", {{"input_type", "search_query"}, {"texts", texts}});
  for (size_t i = 0; i < texts.size(); ++i)
    EXPECT_GE(cosine(r["embeddings"]["float"][i], reference()["text_embeds"][i]), 0.99999) << i;
}

}  // namespace
}  // namespace dlrt::embed::cohere_embed_test
