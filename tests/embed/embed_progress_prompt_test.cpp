// `dlrt embed` on many texts: progress and a final summary on stderr (on a
// terminal, or forced with --progress / DLRT_PROGRESS=1; never with --quiet),
// and prompts: --prompt-name NAME (the folder's named prompts, as dlrt serve's
// prompt_name), --prompt TEXT, and the folder's default prompt.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "../tools/cli_test_util.h"

namespace dlrt::embed {
namespace {

namespace fs = std::filesystem;
using dlrt::testing::quote;
using dlrt::testing::run_command;

const std::string kTiny = std::string(DLRT_EMBED_TEST_DATA) + "/tiny_bert";

std::string embed(const std::string& model, const std::string& args) {
  return quote(dlrt::testing::dlrt_binary()) + " embed --device cpu --model " + quote(model) + " " + args;
}

fs::path lines_file(size_t n) {
  fs::path dir = fs::path(DLRT_BINARY_DIR) / "embed_test" / "progress";
  fs::create_directories(dir);
  fs::path p = dir / ("lines_" + std::to_string(n) + ".txt");
  std::ofstream f(p);
  for (size_t i = 0; i < n; ++i) f << "the cat sat on mat number " << i << "\n";
  return p;
}

TEST(EmbedProgress, SummaryOnStderrWhenAskedNeverOnStdout) {
  const fs::path file = lines_file(300);
  // stderr is a pipe here: nothing unless forced.
  auto quiet_default = run_command(embed(kTiny, "--file " + quote(file.string())) + " >/dev/null");
  EXPECT_EQ(quiet_default.exit_code, 0) << quiet_default.output;
  EXPECT_EQ(quiet_default.output.find("embedded"), std::string::npos) << quiet_default.output;

  for (const std::string how : {"flag", "env"}) {
    SCOPED_TRACE(how);
    const std::string cmd = how == "flag" ? embed(kTiny, "--progress --file " + quote(file.string()))
                                          : "DLRT_PROGRESS=1 " + embed(kTiny, "--file " + quote(file.string()));
    auto err = run_command(cmd + " 2>&1 >/dev/null");  // stderr only
    ASSERT_EQ(err.exit_code, 0) << err.output;
    EXPECT_NE(err.output.find("embedding 300/300 texts (100%)"), std::string::npos) << err.output;
    EXPECT_NE(err.output.find("embedded 300 texts ("), std::string::npos) << err.output;
    EXPECT_NE(err.output.find(" tokens) in "), std::string::npos) << err.output;
    EXPECT_NE(err.output.find("texts/s on cpu:0"), std::string::npos) << err.output;
    auto out = run_command(cmd + " 2>/dev/null");  // stdout: the vectors only
    EXPECT_EQ(out.output.find("embedded"), std::string::npos);
  }
  auto quiet = run_command("DLRT_PROGRESS=1 " + embed(kTiny, "--quiet --file " + quote(file.string())) + " 2>&1 >/dev/null");
  EXPECT_EQ(quiet.exit_code, 0) << quiet.output;
  EXPECT_EQ(quiet.output, "");
  EXPECT_EQ(run_command(embed(kTiny, "--quiet --progress hi")).exit_code, 2);
}

fs::path prompted_folder(const std::string& default_name) {
  fs::path dir = fs::path(DLRT_BINARY_DIR) / "embed_test" / "prompted" / (default_name.empty() ? "plain" : default_name);
  fs::remove_all(dir);
  fs::create_directories(dir.parent_path());
  fs::copy(kTiny, dir, fs::copy_options::recursive);
  nlohmann::json c = {{"prompts", {{"query", "query: "}, {"passage", "passage: "}}}};
  if (!default_name.empty()) c["default_prompt_name"] = default_name;
  std::ofstream(dir / "config_sentence_transformers.json") << c.dump();
  return dir;
}

nlohmann::json vector_of(const std::string& model, const std::string& args) {
  auto r = run_command(embed(model, "--json " + args) + " 2>/dev/null");
  auto j = nlohmann::json::parse(r.output, nullptr, false);
  return r.exit_code == 0 && !j.is_discarded() ? j["data"][0]["embedding"] : nlohmann::json();
}

TEST(EmbedPrompt, NamedAndLiteralPromptsGoInFrontOfEachText) {
  const fs::path dir = prompted_folder("");
  const nlohmann::json by_hand = vector_of(dir.string(), quote("query: the cat"));
  const nlohmann::json bare = vector_of(dir.string(), quote("the cat"));
  ASSERT_TRUE(by_hand.is_array());
  ASSERT_NE(by_hand, bare);
  EXPECT_EQ(vector_of(dir.string(), "--prompt-name query " + quote("the cat")), by_hand);
  EXPECT_EQ(vector_of(dir.string(), "--prompt " + quote("query: ") + " " + quote("the cat")), by_hand);

  auto unknown = run_command(embed(dir.string(), "--prompt-name nope hi"));
  EXPECT_EQ(unknown.exit_code, 2) << unknown.output;
  EXPECT_NE(unknown.output.find("no prompt named 'nope'"), std::string::npos) << unknown.output;
  EXPECT_NE(unknown.output.find("passage, query"), std::string::npos) << unknown.output;
  EXPECT_EQ(run_command(embed(dir.string(), "--prompt x --prompt-name query hi")).exit_code, 2);
}

TEST(EmbedPrompt, TheFoldersDefaultPromptAppliesAsInTheServer) {
  const fs::path dir = prompted_folder("query");
  const nlohmann::json by_hand = vector_of(dir.string(), "--prompt " + quote("") + " " + quote("query: the cat"));
  ASSERT_TRUE(by_hand.is_array());
  EXPECT_EQ(vector_of(dir.string(), quote("the cat")), by_hand);
  EXPECT_EQ(vector_of(dir.string(), "--prompt-name passage " + quote("the cat")),
            vector_of(dir.string(), "--prompt " + quote("") + " " + quote("passage: the cat")));
}

}  // namespace
}  // namespace dlrt::embed
