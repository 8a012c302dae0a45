// dlrt serve's text-embeddings-inference aliases: TEI's launcher flags and
// environment variables, refusals with reasons, --no-<switch>, misspelling
// suggestions and the unknown DLRT_* variable warnings.
#include "embed/serve/tei_compat.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>

#include "core/env.h"
#include "core/spelling.h"
#include "embed/serve/service_config.h"

namespace dlrt::embed {
namespace {

using Args = std::vector<std::string>;

GetEnv env_of(std::map<std::string, std::string> vars) {
  auto shared = std::make_shared<std::map<std::string, std::string>>(std::move(vars));
  return [shared](const char* n) -> const char* {
    auto it = shared->find(n);
    return it == shared->end() ? nullptr : it->second.c_str();
  };
}

Args translated(const Args& in) {
  auto r = translate_serve_args(in);
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  return r.ok() ? *r : Args{};
}

TEST(TeiCompat, LauncherFlagsBecomeDlrtSettings) {
  EXPECT_EQ(translated({"--model-id", "/m", "--hostname", "0.0.0.0", "-p", "3000", "--max-client-batch-size=8"}),
            (Args{"--model", "/m", "--host", "0.0.0.0", "--port", "3000", "--max-inputs-per-request=8"}));
  EXPECT_EQ(translated({"--auto-truncate", "--json-output", "--max-concurrent-requests", "512"}),
            (Args{"--truncate", "--json-logs", "--max-queue", "512"}));
  EXPECT_EQ(translated({"--auto-truncate=false", "--served-model-name", "gte", "--payload-limit", "1000000"}),
            (Args{"--truncate=false", "--model-name", "gte", "--max-body-bytes", "1000000"}));
  EXPECT_EQ(translated({"--max-batch-requests", "4", "--default-prompt-name", "query"}),
            (Args{"--max-batch-size", "4", "--default-prompt-name", "query"}));
  // float32 is what dlrt runs anyway; the flag is dropped.
  EXPECT_EQ(translated({"--dtype", "float32", "--port", "1"}), (Args{"--port", "1"}));
  EXPECT_EQ(translated({"--dtype=float32"}), Args{});
  // dlrt's own flags, values that look like flags and positionals pass unchanged.
  EXPECT_EQ(translated({"--model", "--model-id", "--api-key", "-p", "--", "--pooling"}),
            (Args{"--model", "--model-id", "--api-key", "-p", "--", "--pooling"}));
}

TEST(TeiCompat, NoSwitchTurnsABooleanOff) {
  EXPECT_EQ(translated({"--no-truncate", "--no-access-log", "--no-auto-truncate"}),
            (Args{"--truncate=false", "--access-log=false", "--truncate=false"}));
  EXPECT_EQ(translated({"--no-port"}), Args{"--no-port"});  // not a switch: left to the parser's error
}

TEST(TeiCompat, FlagsDlrtHasNoMeaningForAreRefusedWithTheReason) {
  for (const char* flag : {"--pooling", "--revision", "--hf-token", "--uds-path", "--prometheus-port",
                           "--otlp-endpoint", "--tokenization-workers", "--default-prompt", "--dense-path",
                           "--huggingface-hub-cache", "--disable-spans"}) {
    auto r = translate_serve_args({flag, "x"});
    ASSERT_FALSE(r.ok()) << flag;
    EXPECT_NE(r.status().message().find(std::string(flag) + " is a text-embeddings-inference option"), std::string::npos)
        << r.status().message();
    EXPECT_GT(r.status().message().size(), std::string(flag).size() + 60) << "no reason: " << r.status().message();
  }
  auto r = translate_serve_args({"--dtype", "float16"});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("--dtype float16"), std::string::npos) << r.status().message();
}

TEST(TeiCompat, EveryAliasNamesARealSetting) {
  for (const TeiOption& t : tei_options()) {
    if (!*t.key) continue;
    ServiceConfig c;
    const char* value = std::string(t.key) == "truncate" || std::string(t.key) == "json_logs" ? "true"
                        : std::string(t.key) == "model" || std::string(t.key) == "model_name" ||
                                std::string(t.key) == "host" || std::string(t.key) == "default_prompt_name"
                            ? "x"
                            : "1000";
    EXPECT_TRUE(set_service_config_value(c, t.key, value, t.flag).ok()) << t.flag << " -> " << t.key;
  }
}

TEST(TeiCompat, EnvironmentVariablesSitUnderDlrtOnes) {
  // TEI's variables apply; DLRT_* and flags win over them.
  auto c = resolve_service_config("",
                                  env_of({{"MODEL_ID", "/tei-model"}, {"AUTO_TRUNCATE", "false"},
                                          {"MAX_CLIENT_BATCH_SIZE", "16"}, {"MAX_BATCH_TOKENS", "4096"},
                                          {"DLRT_SERVE_MAX_INPUTS_PER_REQUEST", "20"}, {"JSON_OUTPUT", "true"}}),
                                  {{"max_batch_tokens", "2048"}});
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  EXPECT_EQ(c->model, "/tei-model");
  EXPECT_FALSE(c->truncate);
  EXPECT_EQ(c->max_inputs_per_request, 20u);  // DLRT_SERVE_* over MAX_CLIENT_BATCH_SIZE
  EXPECT_EQ(c->max_batch_tokens, 2048u);      // the flag over MAX_BATCH_TOKENS
  EXPECT_TRUE(c->json_logs);
  // Variables a shell or a container sets for other reasons are not read.
  c = resolve_service_config("", env_of({{"MODEL_ID", "/m"}, {"HOSTNAME", "a1b2c3"}, {"PORT", "1"}, {"API_KEY", "k"}}), {});
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  EXPECT_EQ(c->host, "127.0.0.1");
  EXPECT_EQ(c->port, 8080);
  EXPECT_EQ(c->api_key, "");
  // A bad value names the variable.
  c = resolve_service_config("", env_of({{"MODEL_ID", "/m"}, {"MAX_CLIENT_BATCH_SIZE", "many"}}), {});
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("MAX_CLIENT_BATCH_SIZE"), std::string::npos) << c.status().message();
}

TEST(TeiCompat, TruncationIsOnByDefault) {
  auto c = resolve_service_config("", env_of({{"DLRT_SERVE_MODEL", "/m"}}), {});
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(c->truncate);
  c = resolve_service_config("", env_of({{"DLRT_SERVE_MODEL", "/m"}}), {{"truncate", "false"}});
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(c->truncate);
  ServiceConfig t;
  ASSERT_TRUE(apply_service_config_toml(t, "[serve]\ntruncate = false\n", "s.toml").ok());
  EXPECT_FALSE(t.truncate);
  // TEI's key in the file is still refused (the file is dlrt's own).
  EXPECT_FALSE(apply_service_config_toml(t, "[serve]\nauto_truncate = true\n", "s.toml").ok());
}

std::vector<std::string> serve_variables() {
  std::vector<std::string> names;
  for (const auto& k : service_config_keys()) names.push_back(k.env);
  return names;
}

TEST(TeiCompat, UnknownDlrtVariablesAreNamedWithTheNearestKnownOne) {
  auto w = env::unknown_variable_warnings({"DLRT_SERVE_AUTO_TRUNCATE", "DLRT_SERVE_PORT", "DLRT_DEVICE", "DLRT_DEVCE",
                                           "DLRT_PLUGIN_EXECFAIL_LIB", "DLRT_TEST_FAIL_AFTER", "HOME",
                                           "DLRT_SERVE_ZZZZZZZZZZZZ"},
                                          serve_variables());
  ASSERT_EQ(w.size(), 3u) << ::testing::PrintToString(w);
  EXPECT_EQ(w[0], "DLRT_SERVE_AUTO_TRUNCATE is not a dlrt variable and is ignored (did you mean DLRT_SERVE_TRUNCATE?)");
  EXPECT_EQ(w[1], "DLRT_DEVCE is not a dlrt variable and is ignored (did you mean DLRT_DEVICE?)");
  EXPECT_EQ(w[2].rfind("DLRT_SERVE_ZZZZZZZZZZZZ is not a dlrt variable and is ignored", 0), 0u) << w[2];
  // Every [serve] key's variable is known, and every concrete name of the table.
  std::vector<std::string> names = serve_variables();
  for (const env::Variable& v : env::variables())
    if (std::string(v.name).find('<') == std::string::npos) names.push_back(v.name);
  EXPECT_EQ(env::unknown_variable_warnings(names, serve_variables()), std::vector<std::string>{});
}

TEST(TeiCompat, MigrationGuideListsEveryTeiFlag) {
  std::ifstream in(std::string(DLRT_TEST_DIR) + "/../docs/migrate.md");
  ASSERT_TRUE(in) << "docs/migrate.md";
  const std::string doc((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (const TeiOption& t : tei_options())
    EXPECT_NE(doc.find(std::string("`--") + t.flag + "`"), std::string::npos) << "--" << t.flag << " not in docs/migrate.md";
}

TEST(Spelling, ClosestName) {
  EXPECT_EQ(spelling::edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(spelling::edit_distance("", "abc"), 3u);
  EXPECT_EQ(spelling::closest("modle", {"model", "port"}), "model");
  EXPECT_EQ(spelling::closest("max-batch-token", {"max-batch-size", "max-batch-tokens"}), "max-batch-tokens");
  EXPECT_EQ(spelling::closest("xyz", {"model", "port"}), "");
}

}  // namespace
}  // namespace dlrt::embed
