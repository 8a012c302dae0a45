// `dlrt embed` driven as a user would: texts, --file, --json, --npy, --batch,
// usage errors and a broken model folder (clear message, non-zero exit).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "../tools/cli_test_util.h"
#include "embed/models/embedder.h"
#include "embed_test_util.h"

namespace dlrt::embed {
namespace {

namespace fs = std::filesystem;
using dlrt::testing::quote;
using dlrt::testing::run_command;

const std::string kTiny = std::string(DLRT_EMBED_TEST_DATA) + "/tiny_bert";

std::string embed_cmd(const std::string& args) {
  return quote(dlrt::testing::dlrt_binary()) + " embed --model " + quote(kTiny) + " --device cpu " + args;
}

std::vector<float> api_vector(const std::string& text) {
  EmbedderOptions o;
  o.device = "cpu";
  auto e = Embedder::create(kTiny, o);
  if (!e.ok()) return {};
  auto r = (*e)->embed({text});
  return r.ok() ? r->vectors[0] : std::vector<float>{};
}

TEST(EmbedCli, JsonOutputMatchesTheApi) {
  auto r = run_command(embed_cmd("--json 'hello world' 'the cat sat.'"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto j = nlohmann::json::parse(r.output, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.output;
  EXPECT_EQ(j["model"], "tiny_bert");
  EXPECT_EQ(j["dimension"], 8);
  EXPECT_EQ(j["pooling"], "mean");
  EXPECT_EQ(j["normalized"], true);
  ASSERT_EQ(j["data"].size(), 2u);
  EXPECT_EQ(j["data"][1]["index"], 1);
  EXPECT_EQ(j["data"][0]["tokens"], 4);  // [CLS] hello world [SEP]
  auto v = j["data"][0]["embedding"].get<std::vector<float>>();
  auto want = api_vector("hello world");
  ASSERT_EQ(v.size(), want.size());
  for (size_t i = 0; i < v.size(); ++i) EXPECT_NEAR(v[i], want[i], 1e-6);
}

// Texts run in batches of similar token counts; the output keeps the input's order.
TEST(EmbedCli, OutputKeepsTheInputOrderWhateverTheLengths) {
  const std::vector<std::string> texts = {"a", "the cat sat on the big red mat", "b c", "hello world", "dog"};
  std::string cmd = "--json --batch 2";
  for (const auto& t : texts) cmd += " '" + t + "'";
  auto r = run_command(embed_cmd(cmd));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto j = nlohmann::json::parse(r.output, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.output;
  ASSERT_EQ(j["data"].size(), texts.size());
  for (size_t i = 0; i < texts.size(); ++i) {
    EXPECT_EQ(j["data"][i]["index"], i);
    auto v = j["data"][i]["embedding"].get<std::vector<float>>();
    auto want = api_vector(texts[i]);
    ASSERT_EQ(v.size(), want.size());
    for (size_t k = 0; k < v.size(); ++k) EXPECT_NEAR(v[k], want[k], 1e-6) << texts[i];
  }
  EXPECT_EQ(j["data"][0]["tokens"], 3);  // [CLS] a [SEP]
  EXPECT_GT(j["data"][1]["tokens"].get<int>(), j["data"][3]["tokens"].get<int>());
}

TEST(EmbedCli, TextOutputFileAndNpy) {
  fs::path dir = fs::path(DLRT_BINARY_DIR) / "embed_test" / "cli";
  fs::create_directories(dir);
  std::ofstream(dir / "lines.txt") << "hello world\r\nthe cat sat.\n\na big dog\n";
  auto text = run_command(embed_cmd("--batch 2 --file " + quote((dir / "lines.txt").string())));
  ASSERT_EQ(text.exit_code, 0) << text.output;
  std::vector<std::string> rows;
  std::istringstream ss(text.output);
  for (std::string line; std::getline(ss, line);) rows.push_back(line);
  ASSERT_EQ(rows.size(), 4u) << text.output;  // the empty line is a text too
  std::istringstream first(rows[0]);
  std::vector<float> v;
  for (float f; first >> f;) v.push_back(f);
  auto want = api_vector("hello world");
  ASSERT_EQ(v.size(), 8u);
  for (size_t i = 0; i < v.size(); ++i) EXPECT_NEAR(v[i], want[i], 1e-6);

  fs::path npy = dir / "out.npy";
  fs::remove(npy);
  auto r = run_command(embed_cmd("--batch 3 --npy " + quote(npy.string()) + " --file " + quote((dir / "lines.txt").string())));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::string bytes = testing::slurp(npy);
  ASSERT_GT(bytes.size(), 10u);
  EXPECT_EQ(bytes.substr(0, 6), "\x93NUMPY");
  size_t header = 10 + (static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8));
  EXPECT_EQ(header % 64, 0u);
  EXPECT_NE(bytes.find("'shape': (4, 8)"), std::string::npos);
  ASSERT_EQ(bytes.size(), header + 4 * 8 * sizeof(float));
  float got[8];
  std::memcpy(got, bytes.data() + header, sizeof got);
  for (size_t i = 0; i < 8; ++i) EXPECT_NEAR(got[i], want[i], 1e-6);
}

TEST(EmbedCli, ErrorsAreClearAndNonZero) {
  std::string bin = quote(dlrt::testing::dlrt_binary());
  auto missing = run_command(bin + " embed --model /nonexistent/folder hello");
  EXPECT_EQ(missing.exit_code, 3) << missing.output;
  EXPECT_NE(missing.output.find("does not exist"), std::string::npos) << missing.output;

  fs::path broken = fs::path(DLRT_BINARY_DIR) / "embed_test" / "cli_broken";
  fs::remove_all(broken);
  fs::create_directories(broken);
  std::ofstream(broken / "vocab.txt") << "[PAD]\n[UNK]\n[CLS]\n[SEP]\n";
  auto no_model = run_command(bin + " embed --model " + quote(broken.string()) + " hello");
  EXPECT_EQ(no_model.exit_code, 3) << no_model.output;
  EXPECT_NE(no_model.output.find("model.onnx"), std::string::npos) << no_model.output;

  EXPECT_EQ(run_command(bin + " embed hello").exit_code, 2);                       // no --model
  EXPECT_EQ(run_command(embed_cmd("")).exit_code, 2);                              // no text
  EXPECT_EQ(run_command(embed_cmd("--batch 0 hi")).exit_code, 2);
  EXPECT_EQ(run_command(embed_cmd("--json --npy x.npy hi")).exit_code, 2);
  EXPECT_EQ(run_command(embed_cmd("--file /nonexistent/lines.txt")).exit_code, 2);
  auto help = run_command(bin + " embed --help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.output.find("--model DIR"), std::string::npos);
}

// Files that never end, or are not files: bounded reads and clear errors, never a read until
// memory runs out (memory_limit_prefix makes such a read fail fast).
TEST(EmbedCli, EndlessAndOddFilesAreRefused) {
  auto limited = [](const std::string& cmd) { return run_command(dlrt::testing::memory_limit_prefix() + cmd); };
  auto endless = limited(embed_cmd("--file /dev/zero"));
  EXPECT_FALSE(endless.signaled) << endless.output;
  EXPECT_EQ(endless.exit_code, 2) << endless.output;
  EXPECT_NE(endless.output.find("longer than"), std::string::npos) << endless.output;

  auto folder = run_command(embed_cmd("--file " + quote(DLRT_EMBED_TEST_DATA)));
  EXPECT_EQ(folder.exit_code, 2) << folder.output;
  EXPECT_NE(folder.output.find("is a folder"), std::string::npos) << folder.output;

  fs::path linked = fs::path(DLRT_BINARY_DIR) / "embed_test" / "tokenizer_to_dev_zero";
  fs::remove_all(linked);
  fs::create_directories(linked.parent_path());  // this test may run before any other makes embed_test
  fs::copy(kTiny, linked, fs::copy_options::recursive);
  fs::remove(linked / "vocab.txt");
  fs::create_symlink("/dev/zero", linked / "tokenizer.json");
  auto zero = limited(quote(dlrt::testing::dlrt_binary()) + " embed --model " + quote(linked.string()) + " hello");
  EXPECT_FALSE(zero.signaled) << zero.output;
  EXPECT_EQ(zero.exit_code, 3) << zero.output;
  EXPECT_NE(zero.output.find("not a regular file"), std::string::npos) << zero.output;
}

}  // namespace
}  // namespace dlrt::embed
