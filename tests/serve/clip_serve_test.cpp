// dlrt serve with the committed tiny CLIP (tests/models/image/clip_tiny):
// image inputs on /v1/embeddings and /embed as data URLs and base64, in
// Jina's {"image"} and OpenAI's image_url forms, against transformers'
// get_image_features in torch; texts on the same model; the 4xx of remote
// URLs, bad base64, malformed images (every bomb and malformed file of
// tests/image/data, peak RSS bounded) and image inputs to a text model.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "../embed/embed_test_util.h"
#include "embed/models/registry.h"
#include "embed/serve/handlers.h"
#include "test_server.h"

// Own namespace: the unity build puts this file beside others with the same helper names.
namespace dlrt::embed::clip_serve_test {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using testing::body_json;
using testing::TestServer;

const fs::path kRepo = fs::path(DLRT_TEST_DIR).parent_path();
const fs::path kDir = fs::path(DLRT_TEST_DIR) / "models" / "image";

const json& reference() {
  static const json r = json::parse(testing::slurp(kDir / "clip_tiny_reference.json"));
  return r;
}

std::string base64(const std::string& bytes) {
  static const char* k = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const uint32_t n = (uint8_t(bytes[i]) << 16) | (uint8_t(bytes[i + 1]) << 8) | uint8_t(bytes[i + 2]);
    for (int s : {18, 12, 6, 0}) out += k[(n >> s) & 63];
  }
  if (const size_t rest = bytes.size() - i) {
    uint32_t n = uint8_t(bytes[i]) << 16;
    if (rest == 2) n |= uint8_t(bytes[i + 1]) << 8;
    out += k[n >> 18];
    out += k[(n >> 12) & 63];
    out += rest == 2 ? k[(n >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

std::string image_bytes(size_t i) { return testing::slurp(kRepo / reference()["images"][i].get<std::string>()); }

double cosine(const std::vector<float>& a, const std::vector<double>& b) {
  double dot = 0, na = 0, nb = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    dot += a[i] * b[i];
    na += double(a[i]) * a[i];
    nb += b[i] * b[i];
  }
  return dot / std::sqrt(na * nb);
}

struct ClipServer : TestServer {
  explicit ClipServer(const std::string& folder = "clip_tiny") : TestServer(ServiceConfig{}, /*with_model=*/false) {
    EmbedderOptions o;
    o.device = "cpu";
    o.threads = 2;
    auto m = open_model((kDir / folder).string(), o);
    EXPECT_TRUE(m.ok()) << m.status().to_string();
    if (m.ok()) server->set_model(*m);
  }
};

// The vectors of an OpenAI (data[].embedding) or TEI (array of arrays) answer.
std::vector<std::vector<float>> vectors_of(const json& body) {
  std::vector<std::vector<float>> out;
  if (body.is_array())
    for (const json& v : body) out.push_back(v.get<std::vector<float>>());
  else
    for (const json& d : body["data"]) out.push_back(d["embedding"].get<std::vector<float>>());
  return out;
}

void expect_images(const std::vector<std::vector<float>>& got, const std::vector<size_t>& which) {
  ASSERT_EQ(got.size(), which.size());
  for (size_t k = 0; k < which.size(); ++k) {
    const auto want = reference()["image_embeds"][which[k]].get<std::vector<double>>();
    EXPECT_GE(cosine(got[k], want), 0.99999) << "image " << which[k];
    double norm = 0;
    for (float v : got[k]) norm += double(v) * v;
    EXPECT_NEAR(norm, 1.0, 1e-5);
  }
}

TEST(ServeClip, ImagesOnV1EmbeddingsAndEmbed) {
  ClipServer s;
  const size_t n = reference()["images"].size();
  std::vector<size_t> all;
  json jina = json::array(), openai = json::array(), tei = json::array();
  for (size_t i = 0; i < n; ++i) {
    all.push_back(i);
    const std::string b64 = base64(image_bytes(i));
    jina.push_back({{"image", "data:image/x;base64," + b64}});
    openai.push_back({{"type", "image_url"}, {"image_url", {{"url", "data:image/x;base64," + b64}}}});
    tei.push_back({{"image", b64}});  // bare base64
  }
  auto r = s.post("/v1/embeddings", json{{"input", jina}}.dump());
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  expect_images(vectors_of(body_json(r)), all);
  r = s.post("/v1/embeddings", json{{"input", openai}}.dump());
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  expect_images(vectors_of(body_json(r)), all);
  r = s.post("/embed", json{{"inputs", tei}}.dump());
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  expect_images(vectors_of(body_json(r)), all);
  // One image, not in an array.
  r = s.post("/embed", json{{"inputs", tei[2]}}.dump());
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  expect_images(vectors_of(body_json(r)), {2});
}

TEST(ServeClip, TextsInTheSameModel) {
  ClipServer s;
  const json& texts = reference()["texts"];
  auto r = s.post("/v1/embeddings", json{{"input", texts}}.dump());
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  const auto got = vectors_of(body_json(r));
  ASSERT_EQ(got.size(), texts.size());
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_GE(cosine(got[i], reference()["text_embeds"][i].get<std::vector<double>>()), 0.99999) << i;
}

// Texts and images in one request: a vector per input, in order, each from its tower.
TEST(ServeClip, TextsAndImagesMixed) {
  ClipServer s;
  const json& texts = reference()["texts"];
  const json input = json::array({{{"image", base64(image_bytes(3))}}, texts[0], texts[1],
                                  {{"type", "image_url"}, {"image_url", {{"url", base64(image_bytes(1))}}}}});
  for (const char* path : {"/v1/embeddings", "/embed"}) {
    auto r = s.post(path, json{{path[1] == 'v' ? "input" : "inputs", input}}.dump());
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 200) << r->body;
    const auto got = vectors_of(body_json(r));
    ASSERT_EQ(got.size(), 4u);
    expect_images({got[0], got[3]}, {3, 1});
    for (size_t k : {1, 2})
      EXPECT_GE(cosine(got[k], reference()["text_embeds"][k - 1].get<std::vector<double>>()), 0.99999) << path << k;
  }
}

TEST(ServeClip, BadImageInputsAre4xx) {
  ClipServer s;
  const std::string good = base64(image_bytes(0));
  struct Case {
    json input;
    int status;
    const char* message;
  } cases[] = {
      {json::array({{{"image", "https://example.com/cat.jpg"}}}), 422, "remote image URLs are not fetched"},
      {json::array({{{"type", "image_url"}, {"image_url", {{"url", "http://10.0.0.1/x.png"}}}}}), 422,
       "remote image URLs are not fetched"},
      {json::array({{{"image", "file:///etc/passwd"}}}), 422, "only data URLs and base64"},
      {json::array({{{"image", "not base64!"}}}), 422, "not valid base64"},
      {json::array({{{"image", "data:image/png,rawbytes"}}}), 422, "must be base64"},
      {json::array({{{"image", base64("GIF89a truncated")}}}), 422, "input 0"},
      {json::array({{{"image", base64("plain text, no image")}}}), 422, "not an image dlrt decodes"},
      {json::array({{{"image", good}}, json::array({5, 6})}), 422, "neither a string nor an image input"},
      {json::array({{{"image", 5}}}), 422, "must be a string"},
  };
  for (const Case& c : cases) {
    auto r = s.post("/v1/embeddings", json{{"input", c.input}}.dump());
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, c.status) << c.input.dump().substr(0, 120) << ": " << r->body;
    EXPECT_NE(r->body.find(c.message), std::string::npos) << r->body;
  }
  // A truncated real image: the decoder's error, a 422.
  std::string cut = image_bytes(0);
  cut.resize(cut.size() / 2);
  auto r = s.post("/embed", json{{"inputs", json::array({{{"image", base64(cut)}}})}}.dump());
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 422) << r->body;
  // Sparse vectors are not for images.
  r = s.post("/v1/embeddings", json{{"input", json::array({{{"image", good}}})}, {"encoding_format", "sparse"}}.dump());
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 422) << r->body;
}

// A field of /proc/self/status in KiB ("VmRSS", "VmHWM"), -1 if absent.
long status_kib(const char* field) {
  std::ifstream f("/proc/self/status");
  const std::string key = std::string(field) + ":";
  for (std::string line; std::getline(f, line);)
    if (line.rfind(key, 0) == 0) return std::stol(line.substr(key.size()));
  return -1;
}

// Every bomb and malformed file of tests/image/data/manifest.json as a base64 image input: a 422
// naming the input and the decoder's reason, with this process's peak RSS (the server's threads
// decode in it) within 16 MiB of its resident memory before (a 50,000 x 50,000 PNG's pixels
// would be 7 GB).
TEST(ServeClip, BombsAndMalformedImagesAre422WithinMemory) {
  const fs::path data = kRepo / "tests" / "image" / "data";
  const json manifest = json::parse(testing::slurp(data / "manifest.json"));
  ASSERT_GE(manifest["bad"].size(), 15u);
  ClipServer s;
  auto warm = s.post("/v1/embeddings", json{{"input", json::array({{{"image", base64(image_bytes(0))}}})}}.dump());
  ASSERT_TRUE(warm);
  ASSERT_EQ(warm->status, 200) << warm->body;
  const long before = status_kib("VmRSS");
  std::ofstream("/proc/self/clear_refs") << "5";  // VmHWM := VmRSS
  if (status_kib("VmHWM") > before + 4 * 1024)
    GTEST_SKIP() << "the kernel did not reset the peak RSS (/proc/self/clear_refs): the bound cannot be measured";
  for (const json& e : manifest["bad"]) {
    const std::string file = e["file"];
    const std::string bytes = testing::slurp(data / file);
    // An empty file is an empty string, which the request refuses before decoding.
    const std::string reason = bytes.empty() ? "the image is empty" : e["error"].get<std::string>();
    for (const char* route : {"/v1/embeddings", "/embed"}) {
      const json input = json::array({{{"image", "data:image/png;base64," + base64(bytes)}}});
      auto r = s.post(route, json{{std::string(route) == "/embed" ? "inputs" : "input", input}}.dump());
      ASSERT_TRUE(r) << file;
      EXPECT_EQ(r->status, 422) << route << " " << file << ": " << r->body;
      EXPECT_NE(r->body.find(reason), std::string::npos) << route << " " << file << ": " << r->body;
    }
  }
  const long growth = status_kib("VmHWM") - before;
  EXPECT_LT(growth, 16 * 1024) << "peak RSS grew by " << growth << " KiB";
  std::printf("dlrt serve on bombs and malformed images: peak RSS growth %ld KiB\n", growth);
}

TEST(ServeClip, ImageToATextModelIsRefusedByKind) {
  TestServer s;  // the fake dense model
  auto r = s.post("/v1/embeddings", json{{"input", json::array({{{"image", base64(image_bytes(0))}}})}}.dump());
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400) << r->body;  // as the routes refuse a kind
  EXPECT_NE(r->body.find("(kind dense): an image input needs an image embedding model"), std::string::npos) << r->body;
}

TEST(ServeClip, Base64Decoding) {
  std::string out;
  EXPECT_TRUE(decode_base64("aGVsbG8=", &out));
  EXPECT_EQ(out, "hello");
  EXPECT_TRUE(decode_base64("aGVsbG8", &out));  // padding optional
  EXPECT_EQ(out, "hello");
  EXPECT_FALSE(decode_base64("aGVsb!8=", &out));
  EXPECT_FALSE(decode_base64("a", &out));
  for (const std::string& s : std::vector<std::string>{"", "a", "ab", "abc", std::string("\0\xff\x10", 3)}) {
    ASSERT_TRUE(decode_base64(base64(s), &out));
    EXPECT_EQ(out, s);
  }
}

// sentence-transformers 5.x and 6.x folders and optimum's one graph
// (tests/models/image/, make_st_image_models.py): texts and images on
// /v1/embeddings against the family's own vectors.
TEST(ServeClip, FamilyFoldersMatchTheirReferences) {
  for (const char* name :
       {"clip_optimum_tiny", "st5_clip_tiny", "st57_clip_tiny", "st6_clip_tiny", "siglip_optimum_tiny",
        "st57_siglip_tiny", "st6_siglip_tiny", "siglip2_tiny", "st57_siglip2_tiny", "st6_siglip2_tiny",
        "siglip2_mask_tiny"}) {
    const json ref = json::parse(testing::slurp(kDir / (std::string(name) + "_reference.json")));
    ClipServer s(name);
    json images = json::array();
    for (const auto& p : ref["images"])
      images.push_back({{"image", "data:image/x;base64," + base64(testing::slurp(kRepo / p.get<std::string>()))}});
    for (const auto& [input, key] : {std::pair{images, "image_embeds"}, std::pair{ref["texts"], "text_embeds"}}) {
      auto r = s.post("/v1/embeddings", json{{"input", input}}.dump());
      ASSERT_TRUE(r);
      ASSERT_EQ(r->status, 200) << name << ": " << r->body;
      const auto got = vectors_of(body_json(r));
      ASSERT_EQ(got.size(), ref[key].size()) << name;
      for (size_t i = 0; i < got.size(); ++i)
        EXPECT_GE(cosine(got[i], ref[key][i].get<std::vector<double>>()), 0.99999) << name << " " << key << " " << i;
    }
  }
}

}  // namespace
}  // namespace dlrt::embed::clip_serve_test
