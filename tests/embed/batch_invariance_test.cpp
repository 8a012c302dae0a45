// Batch invariance (issue 53): each text gets the vector it gets alone,
// whatever its batch-mates, through every path that batches: the Embedder's
// embed_encoded (what the server's batcher calls) and embed_by_length (what
// `dlrt embed` and the Python Embedder call), the server's Batcher, `dlrt
// serve`'s /embed and /info, and the `dlrt embed` binary. For the zoo's MiniLM in float32, float16 and
// dynamic-int8 (per-tensor DynamicQuantizeLinear, whose scale spans the whole
// batch: the Embedder quantizes per text, RunOptions::item_lengths, and then
// each text gets its alone vector bit for bit) variants, and ONNX Runtime's
// QAttention form, which still runs one text per run (the trained int8 MiniLM,
// pooled inside its graph, is tools/trained_int8_batch_test.cpp's).
#include <gtest/gtest.h>
#include <httplib.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <random>
#include <thread>

#include <nlohmann/json.hpp>

#include "../tools/cli_test_util.h"
#include "embed/models/batch_dependence.h"
#include "embed/serve/batcher.h"
#include "embed/models/embedder.h"
#include "embed/serve/server.h"
#include "embed_test_util.h"

namespace dlrt::embed {
namespace {

namespace fs = std::filesystem;

double cosine(const std::vector<float>& a, const std::vector<float>& b) {
  double dot = 0, na = 0, nb = 0;
  for (size_t k = 0; k < a.size() && k < b.size(); ++k) {
    dot += static_cast<double>(a[k]) * b[k];
    na += static_cast<double>(a[k]) * a[k];
    nb += static_cast<double>(b[k]) * b[k];
  }
  return a.size() == b.size() && na > 0 && nb > 0 ? dot / std::sqrt(na * nb) : -2.0;
}

// A sentence-transformers folder (mean pooling, normalised) around `onnx`
// with the shared BERT vocabulary, in the build tree.
fs::path make_folder(const fs::path& onnx, const std::string& name) {
  const fs::path dir = fs::path(DLRT_BINARY_DIR) / "embed_test" / "batch_invariance" / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::create_symlink(fs::absolute(onnx), dir / "model.onnx");
  std::ofstream v(dir / "vocab.txt");
  for (const auto& t : testing::bert_layout(testing::read_lines(testing::shared_dir() / "data" / "bert-uncased-vocab.txt")))
    v << t << "\n";
  std::ofstream(dir / "tokenizer_config.json") << R"({"do_lower_case": true, "model_max_length": 128})";
  return dir;
}

const std::vector<std::string> kTexts = {
    "A man is eating food.",
    "",
    "Semantic search with sentence embeddings on the CPU.",
    "The quick brown fox jumps over the lazy dog while the children watch from the old wooden bridge near the river.",
    "Hi",
    "Ein Mann isst Essen.",
    "Padding tokens must not change what a short sentence means, nor its batch-mates' scale.",
    "cats",
    "A service whose answer depends on its neighbours' requests is hard to trust and to cache, so every text "
    "should get the same vector alone or in a batch of any size, in any order, with any other texts around it.",
    "Two words",
    "The weather is lovely today.",
    "Numbers 1 2 3 4 5 6 7 8 9 10 11 12.",
};

struct Variant {
  const char* name;
  const char* env;   // folder variable
  const char* file;  // model file in it
  bool batch_dependent;
  bool runs_alone;  // one text per run (else padded batches)
};

void PrintTo(const Variant& v, std::ostream* os) { *os << v.name; }

class BatchInvariance : public ::testing::TestWithParam<Variant> {};

TEST_P(BatchInvariance, EveryTextGetsItsAloneVector) {
  const Variant& var = GetParam();
  const char* dir_env = std::getenv(var.env);
  if (!dir_env || !*dir_env)
    GTEST_SKIP() << var.env << " is not set, so the " << var.name
                 << " batch-invariance check did not run (scripts/run_tests.sh sets it)";
  const fs::path onnx = fs::path(dir_env) / var.file;
  ASSERT_TRUE(fs::exists(onnx)) << onnx << " is absent from " << var.env;
  ASSERT_TRUE(fs::exists(testing::shared_dir() / "data" / "bert-uncased-vocab.txt")) << "set DLRT_SHARED_DIR";
  const fs::path folder = make_folder(onnx, var.name);

  auto info = read_model_info(onnx.string());
  ASSERT_TRUE(info.ok()) << info.status().to_string();
  const std::string op = batch_dependent_op(*info);
  EXPECT_EQ(!op.empty(), var.batch_dependent) << op;

  EmbedderOptions o;
  o.device = "cpu";
  o.threads = 2;
  auto created = Embedder::create(folder.string(), o);
  ASSERT_TRUE(created.ok()) << created.status().to_string();
  const Embedder& e = **created;
  EXPECT_EQ(e.batching().find("one text per run") == 0, var.runs_alone) << e.batching();
  EXPECT_EQ(e.runs_alone(), var.runs_alone);
  // Quantized per text: the alone vector's bits, not merely close (JSON
  // numbers below are written to read back as the same floats).
  const bool exact = var.batch_dependent && !var.runs_alone;

  std::vector<Encoding> enc;
  std::vector<std::vector<float>> alone;
  for (const auto& t : kTexts) {
    enc.push_back(*e.tokenize(t));
    auto r = e.embed_encoded({enc.back()});
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    alone.push_back(r->vectors[0]);
  }
  // 1 - 1e-6 for float models (float16 included): kernels may block a batch
  // differently, nothing more.
  const double kMin = 1.0 - 1e-6;
  double worst = 1.0;
  size_t compared = 0;
  auto check = [&](size_t i, const std::vector<float>& v, const std::string& how) {
    const double c = cosine(v, alone[i]);
    worst = std::min(worst, c);
    ++compared;
    EXPECT_GE(c, kMin) << var.name << ": text " << i << " (" << enc[i].ids.size() << " tokens) " << how;
    if (exact) {
      EXPECT_TRUE(v == alone[i]) << var.name << ": text " << i << " differs from its alone vector " << how;
    }
  };

  std::mt19937 rng(53);
  std::vector<size_t> order(kTexts.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  for (size_t batch : {2u, 3u, 5u, 12u}) {
    std::shuffle(order.begin(), order.end(), rng);
    // embed_encoded on shuffled, padded batches (the server's batches).
    for (size_t start = 0; start < order.size(); start += batch) {
      std::vector<Encoding> b;
      for (size_t k = start; k < std::min(order.size(), start + batch); ++k) b.push_back(enc[order[k]]);
      auto r = e.embed_encoded(b);
      ASSERT_TRUE(r.ok()) << r.status().to_string();
      for (size_t k = 0; k < b.size(); ++k)
        check(order[start + k], r->vectors[k], "in a shuffled batch of " + std::to_string(b.size()));
    }
    // embed_by_length (dlrt embed, the Python Embedder) over the shuffled list.
    std::vector<Encoding> shuffled;
    for (size_t i : order) shuffled.push_back(enc[i]);
    Status s = e.embed_by_length(shuffled, batch, std::nullopt, [&](size_t i, std::vector<float>&& v) {
      check(order[i], v, "by length, batch " + std::to_string(batch));
      return Status::Ok();
    });
    ASSERT_TRUE(s.ok()) << s.to_string();
  }

  // The server's dynamic batcher, with the rule the server applies.
  BatcherOptions bo;
  bo.max_batch_size = var.runs_alone ? 1 : 5;
  bo.max_wait = std::chrono::milliseconds(20);
  Batcher batcher([&](const std::vector<Encoding>& b, const RunOptions& bounds) { return e.embed_encoded(b, std::nullopt, bounds); },
                  bo);
  std::shuffle(order.begin(), order.end(), rng);
  std::vector<Encoding> req;
  for (size_t i : order) req.push_back(enc[i]);
  auto fut = batcher.submit(req);
  ASSERT_TRUE(fut.ok()) << fut.status().to_string();
  auto got = fut->get();
  ASSERT_TRUE(got.ok()) << got.status().to_string();
  for (size_t k = 0; k < order.size(); ++k) check(order[k], got->vectors[k], "through the server's batcher");

  // `dlrt embed --json --batch 4`: the vectors and the batching it reports.
  std::string cmd = dlrt::testing::quote(dlrt::testing::dlrt_binary()) + " embed --model " +
                    dlrt::testing::quote(folder.string()) + " --device cpu --threads 2 --json --batch 4";
  for (size_t i : order) cmd += " " + dlrt::testing::quote(kTexts[i]);
  auto run = dlrt::testing::run_command(cmd);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  auto j = nlohmann::json::parse(run.output, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << run.output;
  EXPECT_EQ(j["batching"], e.batching());
  ASSERT_EQ(j["data"].size(), order.size());
  for (size_t k = 0; k < order.size(); ++k)
    check(order[k], j["data"][k]["embedding"].get<std::vector<float>>(), "from dlrt embed --batch 4");

  // dlrt serve over the same folder: its own batcher settings, its /info.
  {
    ServiceConfig c;
    c.host = "127.0.0.1";
    c.port = 0;
    c.model = folder.string();
    c.max_batch_size = 5;
    c.max_wait_ms = 20;
    EmbedServer server(c);
    ASSERT_TRUE(server.bind().ok());
    auto served = Embedder::create(folder.string(), o);
    ASSERT_TRUE(served.ok()) << served.status().to_string();
    server.set_model(embedder_model(std::shared_ptr<const Embedder>(std::move(*served))));
    std::thread th([&] { server.run(); });
    struct Stop {
      EmbedServer& s;
      std::thread& t;
      ~Stop() {
        s.shutdown();
        t.join();
      }
    } stop{server, th};
    httplib::Client cli("127.0.0.1", server.port());
    cli.set_read_timeout(120, 0);
    std::vector<size_t> sent;  // the server refuses empty inputs
    nlohmann::json inputs = nlohmann::json::array();
    for (size_t i : order)
      if (!kTexts[i].empty()) {
        sent.push_back(i);
        inputs.push_back(kTexts[i]);
      }
    auto r = cli.Post("/embed", nlohmann::json{{"inputs", inputs}}.dump(), "application/json");
    ASSERT_TRUE(r) << httplib::to_string(r.error());
    ASSERT_EQ(r->status, 200) << r->body;
    auto vectors = nlohmann::json::parse(r->body);
    ASSERT_EQ(vectors.size(), sent.size());
    for (size_t k = 0; k < sent.size(); ++k)
      check(sent[k], vectors[k].get<std::vector<float>>(), "from dlrt serve's /embed");
    auto info = cli.Get("/info");
    ASSERT_TRUE(info) << httplib::to_string(info.error());
    EXPECT_EQ(nlohmann::json::parse(info->body)["batching"], e.batching()) << info->body;
  }

  std::printf("%s: %s; %zu vectors compared, worst cosine to the alone vector %.9f\n", var.name, e.batching().c_str(),
              compared, worst);
}

INSTANTIATE_TEST_SUITE_P(ZooMiniLm, BatchInvariance,
                         ::testing::Values(Variant{"float32", "DLRT_ZOO_DIR", "minilm_l6.onnx", false, false},
                                           Variant{"float16", "DLRT_QUANT_ZOO_DIR", "minilm_l6_ort_optimized_fp16.onnx", false,
                                                   false},
                                           Variant{"dynamic_qint8", "DLRT_QUANT_ZOO_DIR", "minilm_l6_dynamic_qint8.onnx", true,
                                                   false},
                                           Variant{"dynamic_qint8_fused", "DLRT_QUANT_ZOO_DIR",
                                                   "minilm_l6_dynamic_qint8_ort_fused.onnx", true, false},
                                           Variant{"dynamic_qint8_qattention", "DLRT_QUANT_ZOO_DIR",
                                                   "minilm_l6_ort_optimized_dynamic_qint8.onnx", true, true}),
                         [](const ::testing::TestParamInfo<Variant>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace dlrt::embed
