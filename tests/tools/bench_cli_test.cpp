// `dlrt bench` as a user sees it: the JSON object's keys and their sanity,
// the text report, --profile, and clean usage errors. Timings are only
// checked for consistency (min <= median <= p90 <= max), never for speed.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_test_util.h"

namespace dlrt {
namespace {

using testing::CommandResult;
using testing::quote;
using testing::run_command;

namespace fs = std::filesystem;

class BenchCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(testing::dlrt_binary()))
      GTEST_FAIL() << testing::dlrt_binary() << " is missing: build the dlrt_cli target (ninja dlrt_cli)";
    std::string err;
    models_ = testing::test_models_dir(&err);
    ASSERT_FALSE(models_.empty()) << err;
  }

  // stdout only (stderr dropped), so the JSON can be parsed.
  CommandResult bench_stdout(const std::string& args) {
    return run_command(quote(testing::dlrt_binary()) + " bench " + args + " 2>/dev/null");
  }
  CommandResult bench(const std::string& args) { return run_command(quote(testing::dlrt_binary()) + " bench " + args); }
  std::string model(const std::string& name) { return quote(models_ + "/" + name); }

  std::string models_;
};

void expect_clean_error(const CommandResult& r, int code, const std::vector<std::string>& needles) {
  EXPECT_FALSE(r.signaled) << "crashed with signal " << r.signal << ":\n" << r.output;
  EXPECT_EQ(r.exit_code, code) << r.output;
  for (const auto& n : needles) EXPECT_NE(r.output.find(n), std::string::npos) << "missing '" << n << "' in:\n" << r.output;
}

TEST_F(BenchCliTest, JsonHasEveryKeyAndSaneValues) {
  auto r = bench_stdout(model("mlp.onnx") + " --threads 1 --warmup 2 --iterations 7 --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto j = nlohmann::json::parse(r.output, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << "not one JSON object:\n" << r.output;
  for (const char* key : {"session_create_ms", "session_create_warm_ms", "first_run_ms", "latency_ms", "iterations",
                          "warmup", "throughput_per_s", "peak_rss_mb", "threads", "report", "inputs", "model"})
    EXPECT_TRUE(j.contains(key)) << "missing key " << key << " in " << r.output;
  EXPECT_EQ(j["iterations"], 7);
  EXPECT_EQ(j["warmup"], 2);
  EXPECT_EQ(j["threads"], 1);
  EXPECT_FALSE(j.contains("profile"));
  const auto& lat = j["latency_ms"];
  for (const char* key : {"min", "median", "p90", "max", "mean"}) {
    ASSERT_TRUE(lat.contains(key)) << key;
    EXPECT_GT(lat[key].get<double>(), 0.0) << key;
  }
  EXPECT_LE(lat["min"].get<double>(), lat["median"].get<double>());
  EXPECT_LE(lat["median"].get<double>(), lat["p90"].get<double>());
  EXPECT_LE(lat["p90"].get<double>(), lat["max"].get<double>());
  EXPECT_LE(lat["min"].get<double>(), lat["mean"].get<double>());
  EXPECT_LE(lat["mean"].get<double>(), lat["max"].get<double>());
  EXPECT_GT(j["session_create_ms"].get<double>(), 0.0);
  EXPECT_GT(j["session_create_warm_ms"].get<double>(), 0.0);
  EXPECT_GT(j["throughput_per_s"].get<double>(), 0.0);
  // Some MiB, less than a TiB.
  EXPECT_GT(j["peak_rss_mb"].get<double>(), 1.0);
  EXPECT_LT(j["peak_rss_mb"].get<double>(), 1024.0 * 1024.0);
  // The report has the shape of `dlrt run --json`'s.
  ASSERT_TRUE(j["report"].is_array());
  ASSERT_FALSE(j["report"].empty());
  for (const char* key : {"backend", "device", "node_count", "degraded", "reason", "time_ms"})
    EXPECT_TRUE(j["report"][0].contains(key)) << key;
  EXPECT_EQ(j["report"][0]["node_count"], 6);
  ASSERT_EQ(j["inputs"].size(), 1u);
  EXPECT_EQ(j["inputs"][0]["name"], "x");
  EXPECT_EQ(j["inputs"][0]["source"], "random");
}

// The profile times the graph the session runs: with the optimiser on, the
// fused nodes; with it off (checked first), every node of the model.
TEST_F(BenchCliTest, ProfileShowsTheFusedGraphTheSessionRuns) {
  auto r = bench_stdout(model("mlp.onnx") + " --threads 1 --warmup 0 --iterations 3 --profile --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto j = nlohmann::json::parse(r.output, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.output;
  const auto& p = j["profile"];
  // MatMul + Add (+ Relu) -> FusedMatMul twice, then Softmax.
  EXPECT_EQ(p["node_count"], 3) << p.dump();
  std::set<std::string> types;
  for (const auto& t : p["op_types"]) types.insert(t["op_type"].get<std::string>());
  EXPECT_EQ(types, (std::set<std::string>{"com.dlrt.FusedMatMul", "Softmax"})) << p.dump();
}

TEST_F(BenchCliTest, ProfileCoversEveryNodeAndOpType) {
  setenv("DLRT_OPTIMIZE", "0", 1);  // inherited by the dlrt process
  auto r = bench_stdout(model("mlp.onnx") + " --threads 1 --warmup 0 --iterations 3 --profile --json");
  unsetenv("DLRT_OPTIMIZE");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto j = nlohmann::json::parse(r.output, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.output;
  ASSERT_TRUE(j.contains("profile")) << r.output;
  const auto& p = j["profile"];
  EXPECT_EQ(p["runs"], 3);
  EXPECT_EQ(p["node_count"], 6);
  // mlp.onnx: MatMul x2, Add x2, Relu, Softmax -> 4 op types, 6 nodes (all under the top 20).
  ASSERT_EQ(p["op_types"].size(), 4u) << p.dump();
  ASSERT_EQ(p["nodes"].size(), 6u) << p.dump();
  int nodes = 0;
  double sum = 0;
  for (const auto& t : p["op_types"]) {
    nodes += t["count"].get<int>();
    sum += t["ms"].get<double>();
    if (t["op_type"] == "MatMul" || t["op_type"] == "Add") {
      EXPECT_EQ(t["count"], 2) << t.dump();
    }
  }
  EXPECT_EQ(nodes, 6);
  EXPECT_NEAR(sum, p["total_ms"].get<double>(), 1e-6 + 1e-9 * sum);
  std::vector<std::string> names;
  for (const auto& n : p["nodes"]) names.push_back(n["name"]);
  for (const char* want : {"fc1", "fc1_bias", "relu", "fc2", "fc2_bias", "softmax"})
    EXPECT_NE(std::find(names.begin(), names.end(), want), names.end()) << want;
  // Slowest first.
  for (size_t i = 1; i < p["nodes"].size(); ++i)
    EXPECT_GE(p["nodes"][i - 1]["ms"].get<double>(), p["nodes"][i]["ms"].get<double>());
}

TEST_F(BenchCliTest, TextReportAndInputs) {
  auto r = bench(model("mlp.onnx") + " --threads 1 --warmup 1 --iterations 2 --input x=" + model("mlp_input.npy") +
                 " --profile");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const char* needle : {"session create:", "median", "p90", "throughput:", "peak RSS:", "profile", "MatMul", "fc1",
                             "mlp_input.npy"})
    EXPECT_NE(r.output.find(needle), std::string::npos) << "missing '" << needle << "' in:\n" << r.output;
  // Not a terminal: no progress bar escape codes.
  EXPECT_EQ(r.output.find("\033["), std::string::npos) << r.output;

  auto d = bench_stdout(model("dynamic_batch.onnx") + " --threads 1 --warmup 0 --iterations 1 --shape x=3x5 --json");
  ASSERT_EQ(d.exit_code, 0) << d.output;
  auto j = nlohmann::json::parse(d.output, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << d.output;
  EXPECT_EQ(j["inputs"][0]["shape"], nlohmann::json::array({3, 5}));
}

TEST_F(BenchCliTest, BadArgumentsAreUsageErrors) {
  const std::string m = model("mlp.onnx");
  expect_clean_error(bench(""), 2, {"missing MODEL"});
  expect_clean_error(bench(m + " " + m), 2, {"expected one MODEL"});
  expect_clean_error(bench(m + " --bogus"), 2, {"unknown option '--bogus'"});
  expect_clean_error(bench(m + " --iterations 0"), 2, {"--iterations"});
  expect_clean_error(bench(m + " --iterations abc"), 2, {"--iterations"});
  expect_clean_error(bench(m + " --iterations -3"), 2, {"--iterations"});
  expect_clean_error(bench(m + " --warmup x"), 2, {"--warmup"});
  expect_clean_error(bench(m + " --threads 1.5"), 2, {"--threads"});
  expect_clean_error(bench(m + " --iterations"), 2, {"needs a value"});
  expect_clean_error(bench(m + " --json=1"), 2, {"takes no value"});
  expect_clean_error(bench(m + " --input x"), 2, {"NAME=VALUE"});
  expect_clean_error(bench(m + " --input nope=a.npy --iterations 1"), 2, {"no input 'nope'"});
  expect_clean_error(bench(m + " --shape x=2xq --iterations 1"), 2, {"--shape"});
  expect_clean_error(bench(m + " --shape x=2x4x1 --iterations 1"), 2, {"rank"});
  expect_clean_error(bench(m + " --device bogus"), 2, {"bogus"});
  auto help = bench("--help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.output.find("--iterations"), std::string::npos);
}

TEST_F(BenchCliTest, BadModelsAndFiles) {
  expect_clean_error(bench(model("bad/not_onnx.onnx") + " --iterations 1"), 3, {"cannot load model"});
  expect_clean_error(bench(quote(models_ + "/no_such_model.onnx") + " --iterations 1"), 3, {"cannot load model"});
  expect_clean_error(bench(model("mlp.onnx") + " --input x=" + quote(models_ + "/no_such.npy") + " --iterations 1"), 1,
                     {"input 'x'"});
}

// A BERT's inputs share named dims ([batch, sequence]): --shape on one input
// sizes the others, --shape DIM=N sizes a named dim everywhere, and the
// throughput is given per sample (batch x runs/s) besides per run.
TEST_F(BenchCliTest, NamedDimsSizeEveryInputAndSamplesPerSecond) {
  const std::string bert = quote(std::string(DLRT_EMBED_TEST_DATA) + "/tiny_bert/model.onnx");
  auto shapes_of = [](const nlohmann::json& j) {
    std::map<std::string, std::vector<int64_t>> m;
    for (const auto& in : j["inputs"]) m[in["name"]] = in["shape"].get<std::vector<int64_t>>();
    return m;
  };
  const std::map<std::string, std::vector<int64_t>> want = {
      {"input_ids", {2, 16}}, {"attention_mask", {2, 16}}, {"token_type_ids", {2, 16}}};
  for (const std::string args : {"--shape input_ids=2x16", "--shape sequence=16 --shape batch=2",
                                 "--shape batch=2 --shape attention_mask=2x16"}) {
    SCOPED_TRACE(args);
    auto r = bench_stdout(bert + " --device cpu --threads 1 --warmup 0 --iterations 2 --json " + args);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    auto j = nlohmann::json::parse(r.output, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << r.output;
    EXPECT_EQ(shapes_of(j), want) << r.output;
    EXPECT_EQ(j["batch"], 2);
    EXPECT_DOUBLE_EQ(j["samples_per_s"].get<double>(), 2 * j["throughput_per_s"].get<double>());
  }
  auto text = bench(bert + " --device cpu --threads 1 --warmup 0 --iterations 2 --shape batch=4");
  ASSERT_EQ(text.exit_code, 0) << text.output;
  EXPECT_NE(text.output.find("samples/s (batch 4)"), std::string::npos) << text.output;

  expect_clean_error(bench(bert + " --shape seq=16"), 2, {"no input or named dim 'seq'", "named dims: batch, sequence"});
  expect_clean_error(bench(bert + " --shape sequence=1x16"), 2, {"is a named dim"});
  expect_clean_error(bench(bert + " --shape sequence=8 --shape input_ids=1x16"), 2, {"dim 'sequence' is 8"});
}

// "?" (paddle2onnx's word for every unknown dim) names no dim: an input [?, ?]
// takes any shape, and "?" is not offered as a named dim.
TEST_F(BenchCliTest, QuestionMarkDimsAreEachTheirOwn) {
  auto r = bench_stdout(model("unknown_dims.onnx") + " --threads 1 --warmup 0 --iterations 1 --shape x=3x5 --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto j = nlohmann::json::parse(r.output, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.output;
  EXPECT_EQ(j["inputs"][0]["shape"], nlohmann::json::array({3, 5}));
  expect_clean_error(bench(model("unknown_dims.onnx") + " --shape ?=4 --iterations 1"), 2, {"named dims: none"});
}

}  // namespace
}  // namespace dlrt
