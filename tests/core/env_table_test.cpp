// The environment table (core/env.h) is complete and is what the docs show:
// every "DLRT_..." string in src/ and tools/ names a variable of the table,
// std::getenv appears only in core/env.cpp, and docs/environment.md holds
// the table as `dlrt --help-env --markdown` prints it.
#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "../tools/cli_test_util.h"
#include "core/env.h"

namespace dlrt {
namespace {

namespace fs = std::filesystem;

const fs::path kRoot = fs::path(DLRT_TEST_DIR).parent_path();

std::string read(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::vector<fs::path> sources() {
  std::vector<fs::path> out;
  for (const char* dir : {"src", "tools"})
    for (const auto& e : fs::recursive_directory_iterator(kRoot / dir)) {
      const std::string ext = e.path().extension().string();
      if (e.is_regular_file() && (ext == ".cpp" || ext == ".h")) out.push_back(e.path());
    }
  return out;
}

TEST(EnvTable, EveryDlrtNameInSourcesIsInTheTable) {
  std::set<std::string> missing;
  int seen = 0;
  for (const fs::path& p : sources()) {
    const std::string text = read(p);
    // Every "DLRT_[A-Z0-9_]+ in the text. (No <regex> here: it would make
    // this test binary copy-relocate libstdc++'s locale type info, which an
    // RTLD_DEEPBIND-loaded OpenVINO then does not see: RealOpenVino.* crash.)
    for (size_t at = text.find("\"DLRT_"); at != std::string::npos; at = text.find("\"DLRT_", at + 1)) {
      size_t end = at + 1;
      while (end < text.size() && (std::isupper(static_cast<unsigned char>(text[end])) ||
                                   std::isdigit(static_cast<unsigned char>(text[end])) || text[end] == '_'))
        ++end;
      std::string n = text.substr(at + 1, end - at - 1);
      ++seen;
      if (n.back() == '_') {  // a prefix ("DLRT_SERVE_" + key): some entry must start with it
        bool found = false;
        for (const env::Variable& v : env::variables()) found |= std::string(v.name).rfind(n, 0) == 0;
        if (!found) missing.insert(n + " (" + p.lexically_relative(kRoot).string() + ")");
      } else if (!env::known(n)) {
        missing.insert(n + " (" + p.lexically_relative(kRoot).string() + ")");
      }
    }
  }
  EXPECT_GT(seen, 20);
  for (const std::string& m : missing) ADD_FAILURE() << m << " is read but not in src/core/env.cpp's table";
}

TEST(EnvTable, OnlyEnvCppCallsGetenv) {
  for (const fs::path& p : sources()) {
    if (p.filename() == "env.cpp") continue;
    EXPECT_EQ(read(p).find("getenv("), std::string::npos)
        << p.lexically_relative(kRoot).string() << " reads the environment itself; use core/env.h";
  }
}

TEST(EnvTable, EntriesHaveDefaultsAndMeanings) {
  std::set<std::string> names;
  for (const env::Variable& v : env::variables()) {
    EXPECT_TRUE(names.insert(v.name).second) << v.name << " is in the table twice";
    EXPECT_STRNE(v.default_value, "") << v.name;
    EXPECT_STRNE(v.meaning, "") << v.name;
    EXPECT_NE(env::help_text().find(v.name), std::string::npos) << v.name;
  }
  EXPECT_TRUE(env::known("DLRT_PLUGIN_GOOD_LIB"));
  EXPECT_TRUE(env::known("DLRT_SERVE_PORT"));
  EXPECT_FALSE(env::known("DLRT_PLUGIN__LIB"));
  EXPECT_FALSE(env::known("DLRT_NO_SUCH_THING"));
}

TEST(EnvTable, DocsHoldTheGeneratedTable) {
  const std::string doc = read(kRoot / "docs/environment.md");
  EXPECT_NE(doc.find(env::markdown_table()), std::string::npos)
      << "docs/environment.md is out of date: regenerate its table with `dlrt --help-env --markdown`";
}

TEST(EnvTable, CliPrintsTheTable) {
  auto r = testing::run_command(testing::quote(testing::dlrt_binary()) + " --help-env");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("DLRT_CACHE_MAX_MB"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("default: 2048"), std::string::npos) << r.output;
  auto md = testing::run_command(testing::quote(testing::dlrt_binary()) + " --help-env --markdown 2>/dev/null");
  ASSERT_EQ(md.exit_code, 0);
  EXPECT_EQ(md.output, env::markdown_table());
}

}  // namespace
}  // namespace dlrt
