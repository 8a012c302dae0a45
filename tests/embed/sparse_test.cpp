// Sparse (SPLADE) model folders: Embedder::encode_sparse against
// sentence-transformers' SparseEncoder.encode (the committed reference of
// tests/models/retrieval/splade_tiny), dlrt embed --sparse, and the module
// types modules.json may list (anything dlrt does not implement is refused).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../tools/cli_test_util.h"
#include "embed/models/embedder.h"
#include "embed/models/modules.h"
#include "embed/models/sparse.h"
#include "embed_test_util.h"
#include "retrieval_reference.h"

namespace dlrt::embed {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using testing::expect_sparse_row;

EmbedderOptions sparse_cpu_options() {
  EmbedderOptions o;
  o.device = "cpu";
  o.threads = 2;
  return o;
}

fs::path scratch(const std::string& name) {
  return fs::temp_directory_path() / ("dlrt_sparse_test_" + std::to_string(::getpid())) / name;
}

std::vector<std::string> texts(const json& ref) { return ref["texts"].get<std::vector<std::string>>(); }

void expect_rows(const SparseResult& got, const json& want, const std::string& what) {
  ASSERT_EQ(got.vectors.size(), want.size()) << what;
  for (size_t i = 0; i < want.size(); ++i)
    expect_sparse_row(got.vectors[i].indices, got.vectors[i].values, want[i], what + " text " + std::to_string(i));
}

TEST(EmbedSparse, MatchesSentenceTransformersSparseEncoder) {
  const json ref = testing::splade_reference();
  auto e = Embedder::create(testing::splade_tiny().string(), sparse_cpu_options());
  ASSERT_TRUE(e.ok()) << e.status().to_string();
  const Embedder& emb = **e;
  EXPECT_EQ(emb.kind(), ModelKind::kSparse);
  EXPECT_EQ(emb.dimension(), ref["vocab_size"].get<size_t>());
  EXPECT_EQ(emb.max_length(), ref["max_seq_length"].get<size_t>());
  ASSERT_NE(emb.splade_pooling(), nullptr);
  EXPECT_STREQ(emb.splade_pooling()->strategy_name(), "max");

  // One padded batch of mixed lengths (one text past max_seq_length), as the reference ran.
  auto all = emb.encode_sparse(texts(ref));
  ASSERT_TRUE(all.ok()) << all.status().to_string();
  expect_rows(*all, ref["outputs"]["max_relu"], "one batch");
  // Each text alone gives the same.
  for (size_t i = 0; i < texts(ref).size(); ++i) {
    auto one = emb.encode_sparse({texts(ref)[i]});
    ASSERT_TRUE(one.ok()) << one.status().to_string();
    expect_sparse_row(one->vectors[0].indices, one->vectors[0].values, ref["outputs"]["max_relu"][i], "alone");
  }
  // max_active_dims = 5.
  auto top = emb.encode_sparse(texts(ref), 5);
  ASSERT_TRUE(top.ok()) << top.status().to_string();
  expect_rows(*top, ref["outputs"]["max_relu_top5"], "top_k 5");
  // By length, two at a time, each back in its place.
  std::vector<Encoding> enc;
  for (const std::string& t : texts(ref)) enc.push_back(*emb.tokenize(t));
  SparseResult by_length;
  by_length.vectors.resize(enc.size());
  Status s = emb.encode_sparse_by_length(enc, 2, 0, [&](size_t i, SparseVector&& v) {
    by_length.vectors[i] = std::move(v);
    return Status::Ok();
  });
  ASSERT_TRUE(s.ok()) << s.to_string();
  expect_rows(by_length, ref["outputs"]["max_relu"], "by length");
}

TEST(EmbedSparse, PoolingStrategyAndActivationFromTheConfig) {
  const json ref = testing::splade_reference();
  const struct {
    const char* strategy;
    const char* activation;
    const char* key;
  } cases[] = {{"sum", "relu", "sum_relu"}, {"max", "log1p_relu", "max_log1p_relu"}};
  for (const auto& c : cases) {
    fs::path dir = testing::copy_folder(testing::splade_tiny(), scratch(c.key));
    testing::write_file(dir / "1_SpladePooling" / "config.json",
                        json{{"pooling_strategy", c.strategy}, {"activation_function", c.activation},
                             {"word_embedding_dimension", ref["vocab_size"]}}
                            .dump());
    auto e = Embedder::create(dir.string(), sparse_cpu_options());
    ASSERT_TRUE(e.ok()) << e.status().to_string();
    auto r = (*e)->encode_sparse(texts(ref));
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    expect_rows(*r, ref["outputs"][c.key], c.key);
  }
}

TEST(EmbedSparse, BadSpladeConfigsAreRefused) {
  const struct {
    const char* name;
    const char* config;
    StatusCode code;
    const char* says;
  } cases[] = {
      {"mean", R"({"pooling_strategy": "mean"})", StatusCode::kUnsupported, "pooling_strategy \"mean\""},
      {"gelu", R"({"activation_function": "gelu"})", StatusCode::kUnsupported, "activation_function \"gelu\""},
      {"typed", R"({"pooling_strategy": 3})", StatusCode::kInvalidModel, "pooling_strategy"},
      {"width", R"({"word_embedding_dimension": 30522})", StatusCode::kInvalidModel, "word_embedding_dimension is 30522"},
  };
  for (const auto& c : cases) {
    fs::path dir = testing::copy_folder(testing::splade_tiny(), scratch(std::string("bad_") + c.name));
    testing::write_file(dir / "1_SpladePooling" / "config.json", c.config);
    auto e = Embedder::create(dir.string(), sparse_cpu_options());
    ASSERT_FALSE(e.ok()) << c.name;
    EXPECT_EQ(e.status().code(), c.code) << e.status().to_string();
    EXPECT_NE(e.status().message().find(c.says), std::string::npos) << e.status().to_string();
  }
}

TEST(EmbedSparse, KindsDoNotMix) {
  auto sparse = Embedder::create(testing::splade_tiny().string(), sparse_cpu_options());
  ASSERT_TRUE(sparse.ok()) << sparse.status().to_string();
  auto dense_call = (*sparse)->embed({"a text"});
  ASSERT_FALSE(dense_call.ok());
  EXPECT_EQ(dense_call.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(dense_call.status().message().find("sparse (SPLADE) encoder"), std::string::npos);

  auto dense = Embedder::create((fs::path(DLRT_EMBED_TEST_DATA) / "tiny_bert").string(), sparse_cpu_options());
  ASSERT_TRUE(dense.ok()) << dense.status().to_string();
  EXPECT_EQ((*dense)->kind(), ModelKind::kDense);
  EXPECT_EQ((*dense)->splade_pooling(), nullptr);
  auto sparse_call = (*dense)->encode_sparse({"a text"});
  ASSERT_FALSE(sparse_call.ok());
  EXPECT_EQ(sparse_call.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(sparse_call.status().message().find("dense embedding model"), std::string::npos);
}

TEST(EmbedSparse, SparsifyKeepsTheLargestByMagnitude) {
  const std::vector<float> dense = {0.0f, 0.5f, -2.0f, 0.0f, 0.5f, 1.0f};
  SparseVector all = sparsify(dense);
  EXPECT_EQ(all.indices, (std::vector<int64_t>{1, 2, 4, 5}));
  EXPECT_EQ(all.values, (std::vector<float>{0.5f, -2.0f, 0.5f, 1.0f}));
  // Ties go to the lower index; indices stay ascending.
  SparseVector top = sparsify(dense, 3);
  EXPECT_EQ(top.indices, (std::vector<int64_t>{1, 2, 5}));
  EXPECT_EQ(sparsify(dense, 10).indices, all.indices);
  EXPECT_EQ(densify(top, 6), (std::vector<float>{0.0f, 0.5f, -2.0f, 0.0f, 0.0f, 1.0f}));
}

// keep_top_k cuts a sparse vector as sparsify(dense, top_k) cuts the dense one
// (the server's sparse routes cut the model's sparse vectors without densifying).
TEST(EmbedSparse, KeepTopKCutsAsSparsifyDoes) {
  const std::vector<float> dense = {0.0f, 0.5f, -2.0f, 0.0f, 0.5f, 1.0f, -0.5f, 3.0f, 0.0f, 0.5f};
  for (size_t k = 0; k <= 9; ++k) {
    const SparseVector want = sparsify(dense, k);
    const SparseVector got = keep_top_k(sparsify(dense), k);
    EXPECT_EQ(got.indices, want.indices) << "top_k " << k;
    EXPECT_EQ(got.values, want.values) << "top_k " << k;
  }
}

// modules.json: the implemented types load; any other is refused naming it.
TEST(EmbedModules, UnimplementedTypesAreRefusedAtLoad) {
  const fs::path tiny = fs::path(DLRT_EMBED_TEST_DATA) / "tiny_bert";
  auto with_modules = [&](const std::string& name, const std::string& modules) {
    fs::path dir = testing::copy_folder(tiny, scratch(name));
    testing::write_file(dir / "modules.json", modules);
    auto e = Embedder::create(dir.string(), sparse_cpu_options());
    return e.ok() ? Status::Ok() : e.status();
  };
  const std::string transformer = R"({"idx":0,"name":"0","path":"","type":"sentence_transformers.models.Transformer"})";
  // A PyLate ColBERT folder: Transformer + PyLate's own Dense (no pooling: one vector per token).
  // read_modules takes its Dense (MultiVectorEmbedder reads it), but Embedder::create refuses
  // the folder: its vectors are per token (multi_vector.h), not one per text.
  const std::string colbert_modules =
      "[" + transformer + R"(,{"idx":1,"name":"1","path":"1_Dense","type":"pylate.models.Dense.Dense"}])";
  {
    fs::path dir = testing::copy_folder(tiny, scratch("colbert_modules"));
    testing::write_file(dir / "modules.json", colbert_modules);
    auto modules = read_modules(dir);
    ASSERT_TRUE(modules.ok()) << modules.status().to_string();
    ASSERT_EQ(modules->size(), 2u);
    EXPECT_EQ((*modules)[1].type, ModuleType::kDense);
    EXPECT_EQ((*modules)[1].dir, dir / "1_Dense");
  }
  Status s = with_modules("colbert", colbert_modules);
  EXPECT_EQ(s.code(), StatusCode::kUnsupported) << s.to_string();
  EXPECT_NE(s.message().find("(kind multi_vector)"), std::string::npos) << s.message();
  // Another PyLate module is refused naming it.
  s = with_modules("pylate_other", "[" + transformer + R"(,{"idx":1,"name":"1","path":"1_X","type":"pylate.models.Other"}])");
  EXPECT_EQ(s.code(), StatusCode::kUnsupported) << s.to_string();
  EXPECT_NE(s.message().find("\"pylate.models.Other\" (a PyLate module)"), std::string::npos) << s.message();
  // Any other type, named with its module's index and path.
  s = with_modules("unknown", "[" + transformer + R"(,{"idx":1,"name":"1","path":"1_X","type":"my_package.MyPooling"}])");
  EXPECT_EQ(s.code(), StatusCode::kUnsupported) << s.to_string();
  EXPECT_NE(s.message().find("module 1 (path \"1_X\") has type \"my_package.MyPooling\""), std::string::npos) << s.message();
  // The type names are whole: a suffix that looks like one dlrt knows is not enough.
  s = with_modules("suffix", "[" + transformer + R"(,{"idx":1,"name":"1","path":"1_Dense","type":"other.models.Dense"}])");
  EXPECT_EQ(s.code(), StatusCode::kUnsupported) << s.to_string();
  // An MLM head without SPLADE pooling, and SPLADE pooling mixed with dense modules.
  s = with_modules("mlm_only", R"([{"idx":0,"name":"0","path":"","type":"sentence_transformers.sparse_encoder.models.MLMTransformer"}])");
  EXPECT_EQ(s.code(), StatusCode::kUnsupported) << s.to_string();
  EXPECT_NE(s.message().find("without a SpladePooling"), std::string::npos) << s.message();
  s = with_modules("mixed", "[" + transformer + R"(,{"idx":1,"name":"1","path":"1_Pooling","type":"sentence_transformers.models.Pooling"},
      {"idx":2,"name":"2","path":"2_Splade","type":"sentence_transformers.sparse_encoder.models.SpladePooling"}])");
  EXPECT_EQ(s.code(), StatusCode::kUnsupported) << s.to_string();
  // Every implemented dense type still loads.
  s = with_modules("dense_ok", "[" + transformer + R"(,{"idx":1,"name":"1","path":"1_Pooling","type":"sentence_transformers.models.Pooling"},
      {"idx":2,"name":"2","path":"2_Normalize","type":"sentence_transformers.models.Normalize"}])");
  EXPECT_TRUE(s.ok()) << s.to_string();
  EXPECT_EQ(implemented_module_types().size(), 27u);  // 13 under 5.x's and PyLate's names, 14 under 6.x's
}

// modules.json as sentence-transformers runs it (issue 80): one Transformer
// first, one Pooling, no Dense or Normalize before it and no Dense after a
// Normalize, one WeightedLayerPooling at most, before the Pooling; each other
// order is InvalidModel naming the module. A
// default_prompt_name that is not a string is InvalidModel too.
TEST(EmbedModules, OrderIsSentenceTransformers) {
  const fs::path dense = testing::retrieval_dir() / "dense_embed";
  const json mods =
      json::parse(testing::slurp(dense / "modules.json"));  // Transformer, Pooling, Dense, Dense, Normalize
  ASSERT_EQ(mods.size(), 5u);
  auto load = [&](const std::string& name, const json& modules) {
    fs::path dir = testing::copy_folder(dense, scratch(name));
    testing::write_file(dir / "modules.json", modules.dump());
    auto e = Embedder::create(dir.string(), sparse_cpu_options());
    return e.ok() ? Status::Ok() : e.status();
  };
  EXPECT_TRUE(load("in_order", mods).ok());
  const json wlp = {{"idx", 1}, {"name", "1"}, {"path", "1_WeightedLayerPooling"},
                    {"type", "sentence_transformers.models.WeightedLayerPooling"}};
  const struct {
    const char* name;
    json modules;
    const char* says;
  } cases[] = {
      {"dense_before_pooling",
       {mods[0], mods[2], mods[1], mods[3], mods[4]},
       "module 1 (sentence_transformers.models.Dense) comes before the Pooling module 2"},
      {"two_poolings",
       {mods[0], mods[1], mods[1], mods[2], mods[3], mods[4]},
       "module 2 (sentence_transformers.models.Pooling) is a second pooling module"},
      {"no_transformer",
       {mods[1], mods[2], mods[3], mods[4]},
       "module 0 is a sentence_transformers.models.Pooling, not the Transformer"},
      {"two_transformers",
       {mods[0], mods[1], mods[2], mods[3], mods[0], mods[4]},
       "module 4 (sentence_transformers.models.Transformer) is a second Transformer"},
      {"dense_after_normalize", {mods[0], mods[1], mods[2], mods[4], mods[3]}, "comes after the Normalize module 3"},
      {"layers_after_pooling",
       {mods[0], mods[1], wlp, mods[2], mods[3], mods[4]},
       "module 2 (sentence_transformers.models.WeightedLayerPooling) comes after the pooling module"},
      {"two_layer_poolings",
       {mods[0], wlp, wlp, mods[1], mods[2], mods[3], mods[4]},
       "is a second WeightedLayerPooling after module 1"},
  };
  for (const auto& c : cases) {
    Status s = load(c.name, c.modules);
    EXPECT_EQ(s.code(), StatusCode::kInvalidModel) << c.name << ": " << s.to_string();
    EXPECT_NE(s.message().find(c.says), std::string::npos) << c.name << ": " << s.message();
  }
  fs::path prompt = testing::copy_folder(dense, scratch("default_prompt_7"));
  testing::write_file(prompt / "config_sentence_transformers.json",
                      R"({"prompts": {"q": "query: "}, "default_prompt_name": 7})");
  auto e = Embedder::create(prompt.string(), sparse_cpu_options());
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().code(), StatusCode::kInvalidModel) << e.status().to_string();
  EXPECT_NE(e.status().message().find("\"default_prompt_name\" must be a string"), std::string::npos)
      << e.status().message();
}

// ---- dlrt embed --sparse -----------------------------------------------------

std::string sparse_embed_cmd(const fs::path& model, const std::string& args) {
  return dlrt::testing::quote(dlrt::testing::dlrt_binary()) + " embed --model " + dlrt::testing::quote(model.string()) +
         " --device cpu --threads 2 --quiet " + args;
}

TEST(EmbedSparseCli, JsonMatchesTheReference) {
  const json ref = testing::splade_reference();
  std::string args = "--sparse --json --batch 3";
  for (const std::string& t : texts(ref)) args += " " + dlrt::testing::quote(t);
  auto r = dlrt::testing::run_command(sparse_embed_cmd(testing::splade_tiny(), args));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  json j = json::parse(r.output, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.output;
  EXPECT_EQ(j["kind"], "sparse");
  EXPECT_EQ(j["pooling"]["strategy"], "max");
  ASSERT_EQ(j["data"].size(), texts(ref).size());
  for (size_t i = 0; i < j["data"].size(); ++i) {
    EXPECT_EQ(j["data"][i]["tokens"], ref["token_counts"][i]);
    expect_sparse_row(j["data"][i]["indices"].get<std::vector<int64_t>>(), j["data"][i]["values"].get<std::vector<float>>(),
                      ref["outputs"]["max_relu"][i], "cli text " + std::to_string(i));
  }
  // Plain output: INDEX:VALUE pairs, one line per text; --top-k keeps the largest.
  r = dlrt::testing::run_command(sparse_embed_cmd(testing::splade_tiny(), "--sparse --top-k 5 " + dlrt::testing::quote(texts(ref)[0])));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::vector<int64_t> got;
  std::istringstream line(r.output);
  for (std::string pair; line >> pair;) got.push_back(std::stoll(pair.substr(0, pair.find(':'))));
  const auto want = ref["outputs"]["max_relu_top5"][0]["indices"].get<std::vector<int64_t>>();
  EXPECT_EQ(got, want) << r.output;
}

TEST(EmbedSparseCli, KindMismatchesAndBadFlagsAreUsageErrors) {
  const fs::path tiny = fs::path(DLRT_EMBED_TEST_DATA) / "tiny_bert";
  const struct {
    fs::path model;
    const char* args;
    int exit_code;
    const char* says;
  } cases[] = {
      {testing::splade_tiny(), "hello", 2, "sparse (SPLADE) encoder: add --sparse"},
      {tiny, "--sparse hello", 2, "dense embedding model"},
      {tiny, "--top-k 3 hello", 2, "--top-k needs --sparse"},
      {testing::splade_tiny(), "--sparse --top-k 0 hello", 2, "--top-k must be at least 1"},
      {testing::splade_tiny(), "--sparse --npy /dev/null hello", 2, "--npy"},
  };
  for (const auto& c : cases) {
    auto r = dlrt::testing::run_command(sparse_embed_cmd(c.model, c.args));
    EXPECT_EQ(r.exit_code, c.exit_code) << c.args << ": " << r.output;
    EXPECT_NE(r.output.find(c.says), std::string::npos) << c.args << ": " << r.output;
  }
  // An unimplemented module type: exit 3 (bad model folder), naming the type.
  fs::path other = testing::copy_folder(tiny, scratch("cli_pylate_other"));
  testing::write_file(other / "modules.json",
                      R"([{"idx":0,"name":"0","path":"","type":"sentence_transformers.models.Transformer"},
                          {"idx":1,"name":"1","path":"1_X","type":"pylate.models.Other"}])");
  auto r = dlrt::testing::run_command(sparse_embed_cmd(other, "hello"));
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_NE(r.output.find("pylate.models.Other"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace dlrt::embed
