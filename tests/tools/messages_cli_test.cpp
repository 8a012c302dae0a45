// Messages a user reads when something is missing: a backend's vendor
// library not found is one short line (the places searched listed once, by
// `dlrt devices --verbose`, and at DLRT_LOG_LEVEL=debug), and dlrt serve's
// boolean options all read alike (--truncate alone means true).
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_test_util.h"

namespace dlrt {
namespace {

namespace fs = std::filesystem;
using testing::CommandResult;
using testing::quote;
using testing::run_command;

// OpenVINO searched for where it cannot be: no OPENVINO_LIB_PATH, an empty
// home and no python site-packages.
std::string no_openvino_env() {
  static const std::string home = [] {
    fs::path h = fs::path(DLRT_BINARY_DIR) / "messages_test" / "home";
    fs::create_directories(h);
    return h.string();
  }();
  return "env -u OPENVINO_LIB_PATH HOME=" + quote(home) + " DLRT_OPENVINO_NO_PYTHON=1 ";
}

// The openvino backend's entry of `dlrt devices --json`; null when absent.
nlohmann::json openvino_entry() {
  auto r = run_command(no_openvino_env() + quote(testing::dlrt_binary()) + " devices --json 2>/dev/null");
  auto j = nlohmann::json::parse(r.output, nullptr, false);
  if (j.is_discarded()) return nullptr;
  for (const auto& b : j["backends"])
    if (b["name"] == "openvino") return b;
  return nullptr;
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

size_t longest_line(const std::string& text) {
  std::istringstream ss(text);
  size_t n = 0;
  for (std::string line; std::getline(ss, line);) n = std::max(n, line.size());
  return n;
}

class MissingOpenVino : public ::testing::Test {
 protected:
  void SetUp() override {
    entry_ = openvino_entry();
    if (entry_.is_null()) GTEST_SKIP() << "this build has no openvino backend";
    if (entry_["available"].get<bool>()) GTEST_SKIP() << "OpenVINO is installed here: " << entry_.dump();
  }
  nlohmann::json entry_;
};

TEST_F(MissingOpenVino, ReasonIsOneShortLineAndDevicesListsThePlacesOnce) {
  const std::string reason = entry_["reason"];
  EXPECT_LT(reason.size(), 200u) << reason;
  EXPECT_NE(reason.find("OpenVINO runtime (libopenvino_c.so) not found ("), std::string::npos) << reason;
  EXPECT_NE(reason.find(std::to_string(entry_["tried"].size()) + " places searched; `dlrt devices --verbose` lists them"),
            std::string::npos)
      << reason;
  ASSERT_GT(entry_["tried"].size(), 3u);
  const std::string place = entry_["tried"][entry_["tried"].size() - 1];

  const std::string devices = no_openvino_env() + quote(testing::dlrt_binary()) + " devices";
  CommandResult plain = run_command(devices);
  ASSERT_EQ(plain.exit_code, 0) << plain.output;
  EXPECT_EQ(count(plain.output, place), 0u) << plain.output;
  EXPECT_EQ(plain.output.find("tried:"), std::string::npos) << plain.output;
  EXPECT_LT(longest_line(plain.output.substr(plain.output.find("Backends"), plain.output.find("Backend devices") -
                                                                                plain.output.find("Backends"))),
            400u)
      << plain.output;
  for (const std::string flag : {"--verbose", "-v"}) {
    CommandResult verbose = run_command(devices + " " + flag);
    ASSERT_EQ(verbose.exit_code, 0) << verbose.output;
    EXPECT_EQ(count(verbose.output, place), 1u) << verbose.output;  // once, on its own line
    EXPECT_NE(verbose.output.find("     " + place + "\n"), std::string::npos) << verbose.output;
  }
}

TEST_F(MissingOpenVino, FallbackWarningIsShortAndDebugLogsThePlaces) {
  std::string err;
  const std::string models = testing::test_models_dir(&err);
  ASSERT_FALSE(models.empty()) << err;
  const std::string run = quote(testing::dlrt_binary()) + " run --device openvino --json " +
                          quote(models + "/conv_net.onnx");
  CommandResult warned = run_command(no_openvino_env() + run + " 2>&1 >/dev/null");
  ASSERT_EQ(warned.exit_code, 0) << warned.output;
  EXPECT_NE(warned.output.find("places searched"), std::string::npos) << warned.output;
  EXPECT_EQ(count(warned.output, "\n"), 1u) << warned.output;  // one line
  EXPECT_LT(warned.output.size(), 600u) << warned.output;
  const std::string place = entry_["tried"][entry_["tried"].size() - 1];
  EXPECT_EQ(warned.output.find(place), std::string::npos) << warned.output;

  CommandResult json = run_command(no_openvino_env() + run + " 2>/dev/null");
  auto j = nlohmann::json::parse(json.output, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << json.output;
  const std::string reason = j["report"][0]["reason"];
  EXPECT_LT(reason.size(), 300u) << reason;

  CommandResult debug = run_command("DLRT_LOG_LEVEL=debug " + no_openvino_env() + run + " 2>&1 >/dev/null");
  EXPECT_NE(debug.output.find(place), std::string::npos) << debug.output;
}

// serve's boolean options: --truncate alone, --strict=false, --access-log false;
// a bad value is a usage error naming it. The model folder is missing, so a
// command that parsed ends with exit 3 (bad model folder), not 2 (usage).
TEST(ServeFlags, BooleanOptionsAllReadAlike) {
  const std::string serve = quote(testing::dlrt_binary()) + " serve --port 0 --model /nonexistent/folder ";
  for (const std::string flags : {"--truncate", "--truncate=false", "--truncate true", "--warm-start --strict=false",
                                  "--access-log false", "--access-log", "--json-logs=1 --truncate"}) {
    SCOPED_TRACE(flags);
    CommandResult r = run_command("timeout 60 " + serve + flags);
    EXPECT_EQ(r.exit_code, 3) << r.output;
  }
  CommandResult bad = run_command("timeout 60 " + serve + "--truncate=maybe");
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_NE(bad.output.find("maybe"), std::string::npos) << bad.output;
  CommandResult help = run_command(quote(testing::dlrt_binary()) + " serve --help");
  EXPECT_NE(help.output.find("--truncate[=B]"), std::string::npos) << help.output;
}

}  // namespace
}  // namespace dlrt
