// The clip kind on the committed tiny CLIP and SigLIP (tests/models/image/,
// made by tests/models/make_image_models.py): texts and images against
// transformers' get_text_features / get_image_features in torch, through the
// library and `dlrt embed`; the folder's refusals naming what is missing; and
// `dlrt embed --image` on every bomb and malformed file, peak RSS bounded.
#include <gtest/gtest.h>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "../tools/cli_test_util.h"
#include "embed/image/image.h"
#include "embed/models/clip.h"
#include "embed/models/registry.h"
#include "embed_test_util.h"

// Own namespace: the unity build puts this file beside others with the same helper names.
namespace dlrt::embed::clip_test {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using dlrt::testing::quote;
using dlrt::testing::run_command;

const fs::path kRepo = fs::path(DLRT_TEST_DIR).parent_path();
const fs::path kDir = fs::path(DLRT_TEST_DIR) / "models" / "image";
const fs::path kClip = kDir / "clip_tiny";

const json& reference() {
  static const json r = json::parse(testing::slurp(kDir / "clip_tiny_reference.json"));
  return r;
}

double cosine(const std::vector<float>& a, const std::vector<double>& b) {
  double dot = 0, na = 0, nb = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    dot += a[i] * b[i];
    na += double(a[i]) * a[i];
    nb += b[i] * b[i];
  }
  return dot / std::sqrt(na * nb);
}

void expect_rows(const std::vector<std::vector<float>>& got, const json& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    const auto w = want[i].get<std::vector<double>>();
    ASSERT_EQ(got[i].size(), w.size()) << what << " " << i;
    EXPECT_GE(cosine(got[i], w), 0.99999) << what << " " << i;
  }
}

std::unique_ptr<ClipEmbedder> open_clip_embedder(const fs::path& dir = kClip) {
  EmbedderOptions o;
  o.device = "cpu";
  o.threads = 2;
  auto m = ClipEmbedder::create(dir.string(), o);
  EXPECT_TRUE(m.ok()) << m.status().to_string();
  return m.ok() ? std::move(m).value() : nullptr;
}

// `ref`'s images (paths from the repository root) in one run of `m`, against its image_embeds.
void expect_image_rows(ClipEmbedder& m, const json& ref, const std::string& what) {
  std::vector<image::Image> images;
  for (const auto& p : ref["images"]) {
    auto img = image::load_file((kRepo / p.get<std::string>()).string());
    ASSERT_TRUE(img.ok()) << img.status().to_string();
    images.push_back(std::move(img).value());
  }
  auto r = m.embed_images(images);
  ASSERT_TRUE(r.ok()) << what << ": " << r.status().to_string();
  expect_rows(r->vectors, ref["image_embeds"], what);
}

fs::path scratch(const std::string& name) {
  return fs::temp_directory_path() / ("dlrt_clip_test_" + std::to_string(::getpid())) / name;
}

TEST(Clip, FolderIsTheClipKind) {
  EXPECT_EQ(detect_kind(kClip.string()), ModelKind::kClip);
  EXPECT_TRUE(has_capability(ModelKind::kClip, Capability::kImage));
  EXPECT_TRUE(has_capability(ModelKind::kClip, Capability::kDense));
  EXPECT_FALSE(has_capability(ModelKind::kDense, Capability::kImage));
  EXPECT_STREQ(model_kind_name(ModelKind::kClip), "clip");
  EmbedderOptions o;
  o.device = "cpu";
  auto m = open_model(kClip.string(), o);
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  EXPECT_EQ((*m)->kind(), ModelKind::kClip);
  EXPECT_NE((*m)->as<ImageOut>(), nullptr);
  EXPECT_NE((*m)->as<DenseOut>(), nullptr);
  EXPECT_EQ((*m)->dimension(), 16u);
  EXPECT_TRUE(warm_up(**m).ok());
  // The text Embedder does not take it, and says where it is served.
  auto e = Embedder::create(kClip.string(), o);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("CLIP"), std::string::npos) << e.status().to_string();
}

TEST(Clip, TextsMatchTransformers) {
  auto m = open_clip_embedder();
  ASSERT_TRUE(m);
  EXPECT_EQ(m->max_length(), 32u);
  std::vector<Encoding> batch;
  const auto texts = reference()["texts"].get<std::vector<std::string>>();
  const auto counts = reference()["token_counts"].get<std::vector<size_t>>();
  for (size_t i = 0; i < texts.size(); ++i) {
    bool truncated = false;
    auto e = m->tokenize(texts[i], &truncated);
    ASSERT_TRUE(e.ok()) << e.status().to_string();
    EXPECT_EQ(e->ids.size(), counts[i]) << texts[i];
    batch.push_back(std::move(e).value());
  }
  auto r = m->embed_texts(batch);  // one padded batch, as the reference
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_rows(r->vectors, reference()["text_embeds"], "text");
  // Each alone gives the same vector.
  for (size_t i = 0; i < batch.size(); ++i) {
    auto one = m->embed_texts({batch[i]});
    ASSERT_TRUE(one.ok());
    expect_rows(one->vectors, json::array({reference()["text_embeds"][i]}), "text alone");
  }
}

TEST(Clip, ImagesMatchTransformers) {
  auto m = open_clip_embedder();
  ASSERT_TRUE(m);
  expect_image_rows(*m, reference(), "image");
}

// SigLIP (tests/models/image/siglip_tiny): texts padded to max_length with the
// pad token and attended in full; without that rule its vectors differ
// (cosine 0.56 to 0.90 on these texts).
TEST(Siglip, TextsPaddedToMaxLengthAndImagesMatchTransformers) {
  const json ref = json::parse(testing::slurp(kDir / "siglip_tiny_reference.json"));
  EXPECT_EQ(detect_kind((kDir / "siglip_tiny").string()), ModelKind::kClip);
  auto m = open_clip_embedder(kDir / "siglip_tiny");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->max_length(), ref["max_length"].get<size_t>());
  std::vector<Encoding> batch;
  for (const auto& t : ref["texts"]) {
    auto e = m->tokenize(t.get<std::string>());
    ASSERT_TRUE(e.ok()) << e.status().to_string();
    EXPECT_EQ(e->ids.size(), m->max_length());
    for (int64_t a : e->attention_mask) EXPECT_EQ(a, 1);
    batch.push_back(std::move(e).value());
  }
  auto r = m->embed_texts(batch);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_rows(r->vectors, ref["text_embeds"], "siglip text");
  expect_image_rows(*m, ref, "siglip image");
}

TEST(Clip, FolderErrorsNameWhatIsMissing) {
  struct Case {
    const char* name;
    const char* remove;
    const char* message;
  } cases[] = {
      {"no_text", "onnx/text_model.onnx", "without onnx/text_model.onnx"},
      {"no_processor", "preprocessor_config.json", "preprocessor_config.json or processor_config.json"},
  };
  for (const Case& c : cases) {
    const fs::path dir = testing::copy_folder(kClip, scratch(c.name));
    fs::remove(dir / c.remove);
    EXPECT_EQ(detect_kind(dir.string()), ModelKind::kClip) << c.name;
    EmbedderOptions o;
    o.device = "cpu";
    auto m = open_model(dir.string(), o);
    ASSERT_FALSE(m.ok()) << c.name;
    EXPECT_EQ(m.status().code(), StatusCode::kNotFound) << m.status().to_string();
    EXPECT_NE(m.status().message().find(c.message), std::string::npos) << m.status().to_string();
  }
  // Only config.json says CLIP and the one model.onnx is not optimum's (a
  // vision tower alone): refused naming the output it lacks, not run as text.
  const fs::path single = testing::copy_folder(kClip, scratch("single"));
  fs::rename(single / "onnx" / "vision_model.onnx", single / "model.onnx");
  fs::remove(single / "onnx" / "text_model.onnx");
  EXPECT_EQ(detect_kind(single.string()), ModelKind::kClip);
  auto m = open_model(single.string(), EmbedderOptions{});
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("\"text_embeds\", which is not an output of the model"), std::string::npos)
      << m.status().to_string();
  fs::remove_all(scratch(""));
}

std::string embed_cmd(const std::string& rest) {
  return quote(dlrt::testing::dlrt_binary()) + " embed --model " + quote(kClip.string()) + " --device cpu --threads 2 " +
         rest;
}

TEST(ClipCli, ImagesAndTextsMatchTransformers) {
  std::string files;
  for (const auto& p : reference()["images"]) files += " " + quote((kRepo / p.get<std::string>()).string());
  auto r = run_command(embed_cmd("--json --batch 3 --image" + files) + " 2>&1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  json j = json::parse(r.output);
  EXPECT_EQ(j["kind"], "clip");
  EXPECT_EQ(j["input"], "image");
  EXPECT_EQ(j["dimension"], 16);
  std::vector<std::vector<float>> got;
  for (const auto& d : j["data"]) got.push_back(d["embedding"].get<std::vector<float>>());
  expect_rows(got, reference()["image_embeds"], "cli image");

  std::string texts;
  for (const auto& t : reference()["texts"]) texts += " " + quote(t.get<std::string>());
  r = run_command(embed_cmd("--json" + texts) + " 2>&1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  j = json::parse(r.output);
  got.clear();
  for (const auto& d : j["data"]) got.push_back(d["embedding"].get<std::vector<float>>());
  expect_rows(got, reference()["text_embeds"], "cli text");
  // Unit vectors, as CLIP compares them.
  double norm = 0;
  for (float v : got[0]) norm += double(v) * v;
  EXPECT_NEAR(norm, 1.0, 1e-5);
}

TEST(ClipCli, Refusals) {
  // --image on a text model names its kind.
  auto r = run_command(quote(dlrt::testing::dlrt_binary()) + " embed --model " +
                       quote((fs::path(DLRT_TEST_DIR) / "models" / "retrieval" / "dense_embed").string()) +
                       " --image x.jpg 2>&1");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("kind dense"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("--image needs an image embedding model"), std::string::npos) << r.output;
  // A malformed image: a run error naming the file.
  const fs::path bad = kRepo / "tests" / "image" / "data" / "bad" / "empty.png";
  r = run_command(embed_cmd("--image " + quote(bad.string())) + " 2>&1");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("empty.png"), std::string::npos) << r.output;
  // Flags of the text kinds.
  r = run_command(embed_cmd("--sparse hello") + " 2>&1");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--sparse does not apply to a CLIP folder"), std::string::npos) << r.output;
}

// The folders of sentence-transformers 5.x (CLIPModel) and 6.x (a multimodal
// Transformer) and optimum's one-graph export (tests/models/image/, made by
// make_st_image_models.py) against the family's own vectors.
const char* const kFamilyFolders[] = {"clip_optimum_tiny", "st5_clip_tiny",       "st57_clip_tiny",
                                      "st6_clip_tiny",     "siglip_optimum_tiny", "st57_siglip_tiny",
                                      "st6_siglip_tiny",   "siglip2_tiny",        "st57_siglip2_tiny",
                                      "st6_siglip2_tiny"};

// The folder's texts (one padded batch) and images through ClipEmbedder.
void expect_reference(const fs::path& dir, const json& ref, const std::string& what) {
  EXPECT_EQ(detect_kind(dir.string()), ModelKind::kClip) << what;
  auto m = open_clip_embedder(dir);
  ASSERT_TRUE(m) << what;
  std::vector<Encoding> batch;
  for (const auto& t : ref["texts"]) {
    auto e = m->tokenize(t.get<std::string>());
    ASSERT_TRUE(e.ok()) << e.status().to_string();
    batch.push_back(std::move(e).value());
  }
  auto r = m->embed_texts(batch);
  ASSERT_TRUE(r.ok()) << what << ": " << r.status().to_string();
  expect_rows(r->vectors, ref["text_embeds"], what + " text");
  expect_image_rows(*m, ref, what + " image");
}

json family_reference(const std::string& name) {
  return json::parse(testing::slurp(kDir / (name + "_reference.json")));
}

TEST(ClipFolders, SentenceTransformersAndOptimumMatchTheirReferences) {
  for (const char* name : kFamilyFolders) expect_reference(kDir / name, family_reference(name), name);
}

// SigLIP in optimum's one graph (input_ids and pixel_values, no attention
// mask), as sentence-transformers 5.7 and 6.2 save it: texts padded to
// max_length and attended in full, as SigLIP was trained (the references'
// text_embeds); sentence-transformers' own text vectors pad a batch to its
// longest text and mask the rest, which differs (st_text_cosines). SigLIP 2:
// padded to Siglip2Processor's 64, no mask (Siglip2TextsFollowTransformers).
TEST(ClipFolders, SiglipTextsArePaddedToMaxLength) {
  for (const char* name : {"siglip_optimum_tiny", "st57_siglip_tiny", "st6_siglip_tiny", "siglip2_tiny",
                           "st57_siglip2_tiny", "st6_siglip2_tiny"}) {
    const json ref = family_reference(name);
    auto m = open_clip_embedder(kDir / name);
    ASSERT_TRUE(m) << name;
    const bool siglip2 = std::string(name).find("siglip2") != std::string::npos;
    EXPECT_EQ(m->max_length(), siglip2 ? 64u : 16u) << name;
    for (const auto& t : ref["texts"]) {
      auto e = m->tokenize(t.get<std::string>());
      ASSERT_TRUE(e.ok()) << e.status().to_string();
      EXPECT_EQ(e->ids.size(), m->max_length()) << name;
      EXPECT_EQ(std::count(e->attention_mask.begin(), e->attention_mask.end(), 1), int64_t(m->max_length())) << name;
    }
    if (siglip2 || !ref.contains("st_text_cosines")) continue;
    EXPECT_LT(*std::min_element(ref["st_text_cosines"].begin(), ref["st_text_cosines"].end()), 0.99) << name;
  }
}

// SigLIP 2 texts as transformers prepares them (make_image_models.py's
// siglip2_text_reference): its Siglip2Tokenizer lowercases, pads on the
// right to 64 and returns no mask, as the folder's tokenizer_config.json
// says; the same ids, and the vectors of transformers and of
// sentence-transformers 5.7 / 6.2's encode. siglip2_mask_tiny's config
// leaves the class's defaults (left, a mask) and its tower takes the mask.
TEST(ClipFolders, Siglip2TextsFollowTransformers) {
  for (const char* name : {"siglip2_tiny", "st57_siglip2_tiny", "st6_siglip2_tiny", "siglip2_mask_tiny"}) {
    const json ref = family_reference(name);
    auto m = open_clip_embedder(kDir / name);
    ASSERT_TRUE(m) << name;
    std::vector<Encoding> batch;
    for (size_t i = 0; i < ref["texts"].size(); ++i) {
      auto e = m->tokenize(ref["texts"][i].get<std::string>());
      ASSERT_TRUE(e.ok()) << e.status().to_string();
      EXPECT_EQ(e->ids, ref["input_ids"][i].get<std::vector<int64_t>>()) << name << " text " << i;
      if (ref.contains("attention_mask")) {
        EXPECT_EQ(e->attention_mask, ref["attention_mask"][i].get<std::vector<int64_t>>()) << name << " text " << i;
      }
      batch.push_back(std::move(e).value());
    }
    auto r = m->embed_texts(batch);
    ASSERT_TRUE(r.ok()) << name << ": " << r.status().to_string();
    expect_rows(r->vectors, ref["text_embeds"], std::string(name) + " transformers");
    if (ref.contains("st_text_embeds")) expect_rows(r->vectors, ref["st_text_embeds"], std::string(name) + " encode");
  }
  // Without the config's padding_side, Siglip2Tokenizer's own: the left.
  const fs::path left = testing::copy_folder(kDir / "siglip2_tiny", scratch("siglip2_left"));
  json config = json::parse(testing::slurp(left / "tokenizer_config.json"));
  config.erase("padding_side");
  testing::write_file(left / "tokenizer_config.json", config.dump());
  auto m = open_clip_embedder(left);
  ASSERT_TRUE(m);
  const json ref = family_reference("siglip2_tiny");
  auto e = m->tokenize(ref["texts"][0].get<std::string>());
  ASSERT_TRUE(e.ok()) << e.status().to_string();
  std::vector<int64_t> right = ref["input_ids"][0].get<std::vector<int64_t>>();
  std::rotate(right.begin(), std::find(right.begin(), right.end(), 0), right.end());
  EXPECT_EQ(e->ids, right);
  fs::remove_all(scratch(""));
}

// transformers builds a Siglip2Tokenizer for any model_type "siglip2"
// folder, a BPE: another tokenizer.json model is refused, naming the class.
TEST(ClipFolders, Siglip2TokenizerNeedsABpe) {
  const fs::path dir = testing::copy_folder(kDir / "siglip2_tiny", scratch("siglip2_wordlevel"));
  testing::write_file(dir / "tokenizer.json",
                      R"({"version": "1.0", "model": {"type": "WordLevel", "vocab": {"<pad>": 0, "a": 1},
                          "unk_token": "<pad>"}})");
  EmbedderOptions o;
  o.device = "cpu";
  auto m = ClipEmbedder::create(dir.string(), o);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), StatusCode::kUnsupported) << m.status().to_string();
  EXPECT_NE(m.status().message().find("Siglip2Tokenizer"), std::string::npos) << m.status().to_string();
  fs::remove_all(scratch(""));
}

// SigLIP 2 NaFlex (siglip2_tiny): the tower takes patches, their mask and
// grid; a processor config and a tower of the other kind are refused, naming why.
TEST(ClipFolders, Siglip2ProcessorAndTowerMustAgree) {
  const fs::path naflex = testing::copy_folder(kDir / "siglip2_tiny", scratch("naflex_fixed_processor"));
  EXPECT_EQ(detect_kind(naflex.string()), ModelKind::kClip);
  testing::write_file(naflex / "preprocessor_config.json",
                      R"({"image_processor_type": "SiglipImageProcessor", "size": {"height": 32, "width": 32}})");
  EmbedderOptions o;
  o.device = "cpu";
  auto m = ClipEmbedder::create(naflex.string(), o);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), StatusCode::kInvalidModel) << m.status().to_string();
  EXPECT_NE(m.status().message().find("a SigLIP 2 NaFlex tower needs the folder's Siglip2ImageProcessor"),
            std::string::npos)
      << m.status().to_string();
  const fs::path fixed = testing::copy_folder(kDir / "siglip_tiny", scratch("fixed_tower_naflex_processor"));
  fs::copy_file(kDir / "siglip2_tiny" / "preprocessor_config.json", fixed / "preprocessor_config.json",
                fs::copy_options::overwrite_existing);
  m = ClipEmbedder::create(fixed.string(), o);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("Siglip2ImageProcessor (NaFlex) needs a vision tower of three inputs"),
            std::string::npos)
      << m.status().to_string();
  fs::remove_all(scratch(""));
}

// One graph with both towers: each tower's session runs its nodes only and
// takes its inputs only (a text run feeds no pixel_values).
TEST(ClipFolders, OneGraphRunsOneTowerASession) {
  auto m = open_clip_embedder(kDir / "clip_optimum_tiny");
  ASSERT_TRUE(m);
  const RunReport text = m->placement();
  auto whole = Session::create((kDir / "clip_optimum_tiny" / "model.onnx").string(), SessionOptions{});
  ASSERT_TRUE(whole.ok()) << whole.status().to_string();
  EXPECT_EQ((*whole)->inputs().size(), 3u);
  int whole_nodes = 0, text_nodes = 0;
  for (const auto& p : (*whole)->placement().partitions) whole_nodes += p.node_count;
  for (const auto& p : text.partitions) text_nodes += p.node_count;
  EXPECT_GT(text_nodes, 0);
  EXPECT_LT(text_nodes, whole_nodes * 3 / 4) << text_nodes << " of " << whole_nodes;
}

// sentence-transformers 5.x folders as older versions and the hub keep them:
// the CLIP module in 0_CLIPModel/, optimum's graph in its onnx/ or the root's;
// a Normalize after it. Any other module after it is refused by name.
TEST(ClipFolders, St5ModuleFolderLayouts) {
  const json ref = family_reference("st5_clip_tiny");
  for (bool graph_in_module : {false, true}) {
    const fs::path dir = scratch(graph_in_module ? "st5_module_graph" : "st5_root_graph");
    fs::remove_all(dir);
    testing::copy_folder(kDir / "st5_clip_tiny", dir / "0_CLIPModel");
    fs::rename(dir / "0_CLIPModel" / "modules.json", dir / "modules.json");
    if (!graph_in_module) fs::rename(dir / "0_CLIPModel" / "onnx", dir / "onnx");
    json modules = json::parse(testing::slurp(dir / "modules.json"));
    modules[0]["path"] = "0_CLIPModel";
    modules.push_back({{"idx", 1}, {"name", "1"}, {"path", "1_Normalize"}, {"type", "sentence_transformers.models.Normalize"}});
    testing::write_file(dir / "modules.json", modules.dump());
    expect_reference(dir, ref, dir.filename().string());
    if (graph_in_module) continue;
    modules[1]["type"] = "sentence_transformers.models.Dense";
    testing::write_file(dir / "modules.json", modules.dump());
    auto m = open_model(dir.string(), EmbedderOptions{});
    ASSERT_FALSE(m.ok());
    EXPECT_EQ(m.status().code(), StatusCode::kUnsupported) << m.status().to_string();
    EXPECT_NE(m.status().message().find("module 1 has type \"sentence_transformers.models.Dense\""), std::string::npos)
        << m.status().to_string();
  }
  fs::remove_all(scratch(""));
}

// A sentence-transformers folder of PyTorch weights only (as both versions
// save it): the missing graph named, and how to export it.
TEST(ClipFolders, WithoutAGraphTheRefusalSaysHowToExport) {
  for (const char* name : {"st5_clip_tiny", "st57_clip_tiny", "st6_clip_tiny", "st57_siglip_tiny", "st6_siglip_tiny"}) {
    const fs::path dir = testing::copy_folder(kDir / name, scratch(name));
    fs::remove_all(dir / "onnx");
    EXPECT_EQ(detect_kind(dir.string()), ModelKind::kClip) << name;
    auto m = open_model(dir.string(), EmbedderOptions{});
    ASSERT_FALSE(m.ok()) << name;
    EXPECT_EQ(m.status().code(), StatusCode::kNotFound) << m.status().to_string();
    for (const char* part : {"sentence-transformers module", "without onnx/vision_model.onnx and onnx/text_model.onnx",
                             "PyTorch weights (model.safetensors)", "optimum-cli export onnx --model "})
      EXPECT_NE(m.status().message().find(part), std::string::npos) << part << " in " << m.status().to_string();
  }
  fs::remove_all(scratch(""));
}

TEST(ClipCli, FamilyFoldersMatchTheirReferences) {
  for (const char* name : kFamilyFolders) {
    const json ref = family_reference(name);
    const std::string model = quote(dlrt::testing::dlrt_binary()) + " embed --model " + quote((kDir / name).string()) +
                              " --device cpu --threads 2 --json";
    std::string files, texts;
    for (const auto& p : ref["images"]) files += " " + quote((kRepo / p.get<std::string>()).string());
    for (const auto& t : ref["texts"]) texts += " " + quote(t.get<std::string>());
    for (const auto& [args, key] : {std::pair{" --image" + files, "image_embeds"}, std::pair{texts, "text_embeds"}}) {
      auto r = run_command(model + args + " 2>&1");
      ASSERT_EQ(r.exit_code, 0) << name << ": " << r.output;
      const json j = json::parse(r.output);
      EXPECT_EQ(j["kind"], "clip");
      std::vector<std::vector<float>> got;
      for (const auto& d : j["data"]) got.push_back(d["embedding"].get<std::vector<float>>());
      expect_rows(got, ref[key], std::string(name) + " cli " + key);
    }
  }
}

// `dlrt embed --image FILE` on clip_tiny under the tests' address-space limit: its exit code,
// output and peak RSS in KiB (wait4's ru_maxrss of the process the shell execs into).
struct ImageRun {
  int exit_code = -1;
  long peak_kib = -1;
  std::string output;
};

ImageRun embed_one_image(const fs::path& file) {
  const std::string log = (fs::temp_directory_path() / ("dlrt_clip_bomb_" + std::to_string(::getpid()) + ".log")).string();
  const std::string cmd = dlrt::testing::memory_limit_prefix() + "exec " + quote(dlrt::testing::dlrt_binary()) +
                          " embed --model " + quote(kClip.string()) + " --device cpu --threads 2 --quiet --image " +
                          quote(file.string()) + " >" + quote(log) + " 2>&1";
  ImageRun r;
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  int status = 0;
  struct rusage ru {};
  if (pid > 0 && ::wait4(pid, &status, 0, &ru) == pid) {
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.peak_kib = ru.ru_maxrss;
  }
  r.output = testing::slurp(log);
  fs::remove(log);
  return r;
}

// Every bomb and malformed file of tests/image/data/manifest.json through `dlrt embed --image`:
// a run error (exit 1) naming the file and the decoder's reason, the process's peak RSS within
// 16 MiB of a run on a real image (a 50,000 x 50,000 PNG's pixels would be 7 GB).
TEST(ClipCli, BombsAndMalformedImagesFailWithinMemory) {
  const fs::path data = kRepo / "tests" / "image" / "data";
  const ImageRun good = embed_one_image(kRepo / reference()["images"][0].get<std::string>());
  ASSERT_EQ(good.exit_code, 0) << good.output;
  ASSERT_GT(good.peak_kib, 0);
  const json manifest = json::parse(testing::slurp(data / "manifest.json"));
  ASSERT_GE(manifest["bad"].size(), 15u);
  long worst = 0;  // the largest peak of a refused file
  for (const json& e : manifest["bad"]) {
    const std::string file = e["file"];
    const ImageRun r = embed_one_image(data / file);
    EXPECT_EQ(r.exit_code, 1) << file << ": " << r.output;
    EXPECT_NE(r.output.find(fs::path(file).filename().string()), std::string::npos) << file << ": " << r.output;
    EXPECT_NE(r.output.find(e["error"].get<std::string>()), std::string::npos) << file << ": " << r.output;
    EXPECT_LT(r.peak_kib - good.peak_kib, 16 * 1024) << file << ": peak RSS " << r.peak_kib << " KiB, a real image's "
                                                     << good.peak_kib << " KiB";
    worst = std::max(worst, r.peak_kib);
  }
  std::printf("dlrt embed --image on bombs and malformed files: peak RSS at most %ld KiB, on a real image %ld KiB\n",
              worst, good.peak_kib);
}

}  // namespace
}  // namespace dlrt::embed::clip_test
