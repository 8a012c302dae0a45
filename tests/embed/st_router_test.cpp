// Router folders sentence-transformers 5.x and 6.x saved
// (tests/models/st_modules/st<N>_router*, written by make_st_modules.py)
// against that library's encode_query / encode_document / encode: an
// asymmetric dense model (static query route, transformer document route)
// and an inference-free SPLADE model, through the registry's model and
// `dlrt embed --query / --document`; and the Router folders dlrt refuses.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "../tools/cli_test_util.h"
#include "embed/models/dense.h"
#include "embed/models/embedder.h"
#include "embed/models/prepare_inputs.h"
#include "embed/models/registry.h"
#include "embed/models/router.h"
#include "embed_test_util.h"
#include "st_folders.h"
#include "retrieval_reference.h"

// A namespace of its own: the unity build puts this file beside others with the same helper names.
namespace dlrt::embed::st_router_test {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

using testing::st_cpu_options;
using testing::st_folder;
using testing::st_reference;

// Vectors equal to torch's: cosine >= 0.99999 and each value within 1e-4
// (a static route's empty text is zeros in both).
void expect_vectors(const std::vector<std::vector<float>>& got, const json& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < want.size(); ++i) {
    const auto w = want[i].get<std::vector<double>>();
    ASSERT_EQ(got[i].size(), w.size()) << what << " text " << i;
    double ab = 0, aa = 0, bb = 0;
    for (size_t k = 0; k < w.size(); ++k) {
      ab += got[i][k] * w[k], aa += static_cast<double>(got[i][k]) * got[i][k], bb += w[k] * w[k];
      EXPECT_NEAR(got[i][k], w[k], 1e-4) << what << " text " << i;
    }
    if (bb > 0) {
      EXPECT_GE(ab / std::sqrt(std::max(aa * bb, 1e-300)), 0.99999) << what << " text " << i;
    }
  }
}

// The texts as a request gives them: the task's prompt, then the route.
std::vector<Encoding> inputs(const EmbedModel& m, std::vector<std::string> texts, std::optional<bool> is_query) {
  InputOptions in;
  in.is_query = is_query;
  if (is_query) in.prompt = m.prompt(task_prompt_name(m, *is_query).value_or("")).value_or("");
  std::vector<Encoding> out;
  auto e = prepare_inputs(m, texts, in, out);
  EXPECT_FALSE(e) << (e ? e->status.to_string() : "");
  return out;
}

class StRouter : public ::testing::TestWithParam<int> {};

TEST_P(StRouter, AsymmetricDenseMatchesEncodeQueryAndDocument) {
  const json ref = st_reference(GetParam());
  const auto texts = ref["texts"].get<std::vector<std::string>>();
  auto opened = open_model(st_folder(GetParam(), "router").string(), st_cpu_options());
  ASSERT_TRUE(opened.ok()) << opened.status().to_string();
  const EmbedModel& m = **opened;
  EXPECT_EQ(m.kind(), ModelKind::kDense);
  EXPECT_EQ(m.dimension(), 24u);
  EXPECT_TRUE(m.normalizes());
  const json& want = ref["folders"]["router"];
  const std::pair<const char*, std::optional<bool>> tasks[] = {
      {"query", true}, {"document", false}, {"default", std::nullopt}};
  for (const auto& [name, is_query] : tasks) {
    std::vector<std::vector<float>> got(texts.size());
    Status s = embed_inputs(*m.as<DenseOut>(), inputs(m, texts, is_query), 3, m.normalizes(),
                            [&](size_t i, std::vector<float>&& v) {
                              got[i] = std::move(v);
                              return Status::Ok();
                            });
    ASSERT_TRUE(s.ok()) << s.to_string();
    expect_vectors(got, want[name], name);
  }
  // One batch of queries and documents: each runs its own route.
  std::vector<Encoding> mixed = inputs(m, {texts[1]}, true);
  std::vector<Encoding> doc = inputs(m, {texts[1]}, false);
  mixed.push_back(doc[0]);
  auto r = m.as<DenseOut>()->embed_encoded(mixed, {});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  for (auto& v : r->vectors) normalize_l2(v);
  expect_vectors({r->vectors[0]}, json::array({want["query"][1]}), "mixed query");
  expect_vectors({r->vectors[1]}, json::array({want["document"][1]}), "mixed document");
}

TEST_P(StRouter, InferenceFreeSpladeMatchesEncodeQueryAndDocument) {
  const json ref = st_reference(GetParam());
  const auto texts = ref["texts"].get<std::vector<std::string>>();
  auto opened = open_model(st_folder(GetParam(), "router_sparse").string(), st_cpu_options());
  ASSERT_TRUE(opened.ok()) << opened.status().to_string();
  const EmbedModel& m = **opened;
  EXPECT_EQ(m.kind(), ModelKind::kSparse);
  EXPECT_EQ(m.similarity_fn_name(), "dot");
  for (const auto& [name, is_query] : {std::pair{"query", true}, std::pair{"document", false}}) {
    std::vector<SparseVector> got(texts.size());
    Status s =
        encode_sparse_inputs(*m.as<SparseOut>(), inputs(m, texts, is_query), 4, 0, [&](size_t i, SparseVector&& v) {
          got[i] = std::move(v);
          return Status::Ok();
        });
    ASSERT_TRUE(s.ok()) << s.to_string();
    for (size_t i = 0; i < texts.size(); ++i)
      testing::expect_sparse_row(got[i].indices, got[i].values, ref["folders"]["router_sparse"][name][i],
                                 std::string(name) + " text " + std::to_string(i));
  }
}

std::string embed_cmd(const fs::path& model, const std::string& args) {
  return dlrt::testing::quote(dlrt::testing::dlrt_binary()) + " embed --model " + dlrt::testing::quote(model.string()) +
         " --device cpu --threads 2 --quiet " + args;
}

TEST_P(StRouter, CliQueryAndDocumentFlags) {
  const json ref = st_reference(GetParam());
  std::string quoted;
  std::vector<size_t> at;  // the non-empty texts (an empty argument is no text for the CLI)
  for (size_t i = 0; i < ref["texts"].size(); ++i)
    if (!ref["texts"][i].get<std::string>().empty())
      quoted += " " + dlrt::testing::quote(ref["texts"][i].get<std::string>()), at.push_back(i);
  for (const auto& [flag, name] :
       {std::pair{"--query", "query"}, std::pair{"--document", "document"}, std::pair{"", "default"}}) {
    auto r =
        dlrt::testing::run_command(embed_cmd(st_folder(GetParam(), "router"), std::string(flag) + " --json" + quoted));
    ASSERT_EQ(r.exit_code, 0) << flag << ": " << r.output;
    const json j = json::parse(r.output, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << r.output;
    ASSERT_EQ(j["data"].size(), at.size());
    std::vector<std::vector<float>> got;
    json want = json::array();
    for (size_t k = 0; k < at.size(); ++k) {
      got.push_back(j["data"][k]["embedding"].get<std::vector<float>>());
      want.push_back(ref["folders"]["router"][name][at[k]]);
    }
    expect_vectors(got, want, std::string("cli ") + name);
  }
  for (const auto& [flag, name] : {std::pair{"--query", "query"}, std::pair{"--document", "document"}}) {
    auto r = dlrt::testing::run_command(
        embed_cmd(st_folder(GetParam(), "router_sparse"), std::string(flag) + " --sparse --json" + quoted));
    ASSERT_EQ(r.exit_code, 0) << flag << ": " << r.output;
    const json j = json::parse(r.output, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << r.output;
    ASSERT_EQ(j["data"].size(), at.size());
    for (size_t k = 0; k < at.size(); ++k)
      testing::expect_sparse_row(j["data"][k]["indices"].get<std::vector<int64_t>>(),
                                 j["data"][k]["values"].get<std::vector<float>>(),
                                 ref["folders"]["router_sparse"][name][at[k]], std::string("cli ") + name);
  }
}

INSTANTIATE_TEST_SUITE_P(SentenceTransformers, StRouter, ::testing::Values(5, 6),
                         [](const ::testing::TestParamInfo<int>& i) { return "st" + std::to_string(i.param); });

// A copy of the 6.x Router folder whose router_config.json `edit` changes.
struct EditedRouter {
  explicit EditedRouter(const std::function<void(json&)>& edit) {
    dir = fs::temp_directory_path() / ("dlrt_st_router_" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::copy(st_folder(6, "router"), dir, fs::copy_options::recursive);
    json config = json::parse(testing::slurp(dir / "router_config.json"));
    edit(config);
    std::ofstream(dir / "router_config.json") << config.dump();
  }
  ~EditedRouter() { fs::remove_all(dir); }
  fs::path dir;
};

TEST(StRouterRefusals, TasksWithoutARouteAndUnimplementedTypes) {
  {  // No query route and no default: encode_query and encode are refused, as the library refuses them.
    EditedRouter f([](json& c) {
      c["structure"].erase("query");
      c["parameters"]["default_route"] = nullptr;
      c["parameters"]["allow_empty_key"] = false;
    });
    auto m = open_model(f.dir.string(), st_cpu_options());
    ASSERT_TRUE(m.ok()) << m.status().to_string();
    bool cut = false;
    size_t n = 0;
    auto q = (*m)->tokenize_for("a query", true, &cut, &n);
    ASSERT_FALSE(q.ok());
    EXPECT_EQ(q.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(q.status().message().find("no route for task \"query\""), std::string::npos) << q.status().message();
    auto plain = (*m)->tokenize_for("a text", std::nullopt, &cut, &n);
    ASSERT_FALSE(plain.ok());
    EXPECT_NE(plain.status().message().find("no default route"), std::string::npos) << plain.status().message();
    EXPECT_TRUE((*m)->tokenize_for("a document", false, &cut, &n).ok());
  }
  {  // 6.x's route_mappings send queries to the document route.
    EditedRouter f([](json& c) { c["parameters"]["route_mappings"] = {{"('query', None)", "document"}}; });
    auto spec = read_router(f.dir);
    ASSERT_TRUE(spec.ok()) << spec.status().to_string();
    auto r = (*spec)->resolve(true);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ((*spec)->routes[*r].name, "document");
  }
  {  // A route module of a type dlrt does not implement is named.
    const char* type = "sentence_transformers.sentence_transformer.modules.lstm.LSTM";
    EditedRouter f([&](json& c) { c["types"]["document_2_Dense"] = type; });
    auto m = open_model(f.dir.string(), st_cpu_options());
    ASSERT_FALSE(m.ok());
    EXPECT_EQ(m.status().code(), StatusCode::kUnsupported);
    EXPECT_NE(m.status().message().find(type), std::string::npos) << m.status().message();
    EXPECT_NE(m.status().message().find("route \"document\""), std::string::npos) << m.status().message();
  }
  {  // A WeightedLayerPooling in a route reads its Transformer's per-layer outputs: skipped, as the library
     // skips it, while that Transformer's config.json does not ask for them; refused, saying how to export
     // them, when it does and the route's graph has the last layer's only.
    const std::string wlp = "document_1_WeightedLayerPooling";
    EditedRouter f([&](json& c) {
      c["types"][wlp] = "sentence_transformers.sentence_transformer.modules.weighted_layer_pooling.WeightedLayerPooling";
      c["structure"]["document"] = {"document_0_Transformer", wlp, "document_1_Pooling", "document_2_Dense"};
    });
    fs::copy(st_folder(6, "wlp") / "1_WeightedLayerPooling", f.dir / wlp);
    EXPECT_TRUE(open_model(f.dir.string(), st_cpu_options()).ok());
    const fs::path config = f.dir / "document_0_Transformer" / "config.json";
    json c = json::parse(testing::slurp(config));
    c["output_hidden_states"] = true;
    std::ofstream(config) << c.dump();
    auto m = open_model(f.dir.string(), st_cpu_options());
    ASSERT_FALSE(m.ok());
    EXPECT_EQ(m.status().code(), StatusCode::kUnsupported) << m.status().to_string();
    EXPECT_NE(m.status().message().find("hidden_states.0"), std::string::npos) << m.status().message();
  }
  {  // A module folder outside the model folder.
    EditedRouter f([](json& c) {
      c["types"]["../x"] = c["types"]["query_0_StaticEmbedding"];
      c["structure"]["query"] = {"../x"};
    });
    auto m = open_model(f.dir.string(), st_cpu_options());
    ASSERT_FALSE(m.ok());
    EXPECT_EQ(m.status().code(), StatusCode::kInvalidModel) << m.status().to_string();
  }
  {  // Broken router_config.json.
    EditedRouter f([](json& c) { c = json::array(); });
    auto m = open_model(f.dir.string(), st_cpu_options());
    ASSERT_FALSE(m.ok());
    EXPECT_EQ(m.status().code(), StatusCode::kInvalidModel) << m.status().to_string();
  }
  // The Embedder takes one pipeline: it names the Router and where it is opened.
  auto e = Embedder::create(st_folder(6, "router").string(), st_cpu_options());
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(e.status().message().find("Router"), std::string::npos) << e.status().message();
}

// Dropout does nothing at inference: the dense folder with one after its Pooling gives its vectors.
TEST(StModuleDropout, IsNothingAtInference) {
  const fs::path dir = fs::temp_directory_path() / ("dlrt_st_dropout_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::copy(st_folder(6, "dense"), dir, fs::copy_options::recursive);
  fs::create_directories(dir / "9_Dropout");
  std::ofstream(dir / "9_Dropout" / "config.json") << R"({"dropout": 0.5})";
  json modules = json::parse(testing::slurp(dir / "modules.json"));
  modules.insert(modules.begin() + 2,
                 json{{"idx", 9},
                      {"name", "9"},
                      {"path", "9_Dropout"},
                      {"type", "sentence_transformers.sentence_transformer.modules.dropout.Dropout"}});
  std::ofstream(dir / "modules.json") << modules.dump();
  const json ref = st_reference(6);
  auto e = Embedder::create(dir.string(), st_cpu_options());
  ASSERT_TRUE(e.ok()) << e.status().to_string();
  auto got = (*e)->embed(ref["texts"].get<std::vector<std::string>>());
  ASSERT_TRUE(got.ok()) << got.status().to_string();
  expect_vectors(got->vectors, ref["folders"]["dense"]["embeddings"], "dense with Dropout");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace dlrt::embed::st_router_test
