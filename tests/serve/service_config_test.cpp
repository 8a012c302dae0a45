// dlrt serve settings: TOML file, env vars over it, flags over env, checks.
#include "embed/serve/service_config.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>

#include <unistd.h>

namespace dlrt::embed {
namespace {

GetEnv env_of(std::map<std::string, std::string> vars) {
  auto shared = std::make_shared<std::map<std::string, std::string>>(std::move(vars));
  return [shared](const char* n) -> const char* {
    auto it = shared->find(n);
    return it == shared->end() ? nullptr : it->second.c_str();
  };
}

const char* kToml = R"(
device = "gpu,cpu"
strict = true
threads = 3
cache_dir = "/tmp/dlrt-cache"
max_tensor_mb = 512

[serve]
model = "/models/minilm"
host = "0.0.0.0"
port = 9000
pool_size = 4
max_batch_size = 64
max_batch_tokens = 16384
max_wait_ms = 7
max_queue = 500
max_inputs_per_request = 100
truncate = false
warm_start = true

[other_app]
anything = "ignored"
)";

TEST(ServeConfig, TomlFile) {
  ServiceConfig c;
  Status s = apply_service_config_toml(c, kToml, "serve.toml");
  ASSERT_TRUE(s.ok()) << s.to_string();
  EXPECT_EQ(c.device, "gpu,cpu");
  EXPECT_TRUE(c.strict);
  EXPECT_EQ(c.threads, 3);
  EXPECT_EQ(c.cache_dir, "/tmp/dlrt-cache");
  EXPECT_EQ(c.max_tensor_mb, 512u);  // the runtime's key: the same file works for dlrt run
  ServiceConfig zero;
  EXPECT_FALSE(apply_service_config_toml(zero, "max_tensor_mb = 0\n", "z.toml").ok());
  EXPECT_EQ(c.model, "/models/minilm");
  EXPECT_EQ(c.host, "0.0.0.0");
  EXPECT_EQ(c.port, 9000);
  EXPECT_EQ(c.pool_size, 4);
  EXPECT_EQ(c.max_batch_size, 64u);
  EXPECT_EQ(c.max_batch_tokens, 16384u);
  EXPECT_EQ(c.max_wait_ms, 7);
  EXPECT_EQ(c.max_queue, 500u);
  EXPECT_EQ(c.max_inputs_per_request, 100u);
  EXPECT_FALSE(c.truncate);
  EXPECT_TRUE(c.warm_start);
  EXPECT_EQ(c.max_body_bytes, size_t{2} << 20);  // default kept
}

TEST(ServeConfig, PrecedenceFileThenEnvThenFlags) {
  auto dir = std::filesystem::temp_directory_path() / ("dlrt_serve_cfg_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  auto file = (dir / "serve.toml").string();
  std::ofstream(file) << kToml;
  auto env = env_of({{"DLRT_SERVE_PORT", "9100"}, {"DLRT_DEVICE", "cpu"}, {"DLRT_SERVE_MAX_WAIT_MS", "1"},
                     {"DLRT_STRICT", "0"}, {"DLRT_SERVE_POOL_SIZE", ""}});
  auto c = resolve_service_config(file, env, {{"port", "9200"}, {"max_batch_size", "8"}});
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  EXPECT_EQ(c->port, 9200);           // flag over env over file
  EXPECT_EQ(c->device, "cpu");        // env over file
  EXPECT_FALSE(c->strict);            // env over file
  EXPECT_EQ(c->max_wait_ms, 1);       // env over file
  EXPECT_EQ(c->max_batch_size, 8u);   // flag over file
  EXPECT_EQ(c->pool_size, 4);         // empty env var ignored
  EXPECT_EQ(c->model, "/models/minilm");
  std::filesystem::remove_all(dir);
}

TEST(ServeConfig, Errors) {
  ServiceConfig c;
  Status s = apply_service_config_toml(c, "[serve]\nprot = 80\n", "a.toml");
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("a.toml: serve.prot: unknown setting"), std::string::npos) << s.message();
  s = apply_service_config_toml(c, "port = 80\n", "a.toml");
  EXPECT_NE(s.message().find("unknown top-level setting"), std::string::npos) << s.message();
  s = apply_service_config_toml(c, "[serve]\nport = 70000\n", "a.toml");
  EXPECT_NE(s.message().find("a.toml: serve.port: '70000' is not a whole number in [0, 65535]"), std::string::npos)
      << s.message();
  s = apply_service_config_toml(c, "[serve]\nport = [1]\n", "a.toml");
  EXPECT_NE(s.message().find("must be a string, integer or boolean"), std::string::npos) << s.message();
  s = apply_service_config_toml(c, "[serve\nport = 1\n", "a.toml");
  EXPECT_NE(s.message().find("a.toml:1:"), std::string::npos) << s.message();
  s = apply_service_config_env(c, env_of({{"DLRT_SERVE_MAX_BATCH_SIZE", "lots"}}));
  EXPECT_NE(s.message().find("DLRT_SERVE_MAX_BATCH_SIZE: 'lots'"), std::string::npos) << s.message();
  s = apply_service_config_env(c, env_of({{"DLRT_STRICT", "maybe"}}));
  EXPECT_NE(s.message().find("DLRT_STRICT: 'maybe' is not a boolean"), std::string::npos) << s.message();
  auto r = resolve_service_config("", env_of({}), {{"max_batch_size", "0"}});
  EXPECT_NE(r.status().message().find("--max-batch-size: '0'"), std::string::npos) << r.status().message();
  r = resolve_service_config("", env_of({}), {});
  EXPECT_NE(r.status().message().find("no model folder"), std::string::npos) << r.status().message();
  r = resolve_service_config("", env_of({}), {{"model", "m"}, {"max_queue", "10"}, {"max_inputs_per_request", "11"}});
  EXPECT_NE(r.status().message().find("must not exceed max_queue"), std::string::npos) << r.status().message();
  // Unset, the input limit is OpenAI's 2048 within max_queue: a smaller queue is no error.
  r = resolve_service_config("", env_of({}), {{"model", "m"}, {"max_queue", "10"}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(inputs_per_request_limit(*r), 10u);
  EXPECT_EQ(inputs_per_request_limit(ServiceConfig{}), 2048u);
  r = resolve_service_config("/nonexistent/serve.toml", env_of({}), {});
  EXPECT_EQ(r.status().code(), StatusCode::kIoError);
}

TEST(ServeConfig, CpuPrecision) {
  ServiceConfig c;
  ASSERT_TRUE(apply_service_config_toml(c, "cpu_precision = \"auto\"\n", "p.toml").ok());
  EXPECT_EQ(c.cpu_precision, "auto");
  Status bad = apply_service_config_toml(c, "cpu_precision = \"fast\"\n", "p.toml");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("auto"), std::string::npos) << bad.message();
}

TEST(ServeConfig, EveryKeyHasEnvAndFlag) {
  for (const auto& k : service_config_keys()) {
    EXPECT_FALSE(k.env.empty()) << k.key;
    EXPECT_FALSE(k.flag.empty()) << k.key;
    EXPECT_FALSE(k.help.empty()) << k.key;
    ServiceConfig c;
    // Every key accepts a sensible value.
    std::string v = k.is_switch || k.key == "truncate" || k.key == "access_log" ? "true"
                    : k.key == "cpu_precision"                                   ? "auto"
                    : (k.key == "device" || k.key == "model" || k.key == "host" || k.key == "model_name" ||
                       k.key == "cache_dir")
                        ? "x"
                        : "100";
    Status s = set_service_config_value(c, k.key, v, "test");
    EXPECT_TRUE(s.ok()) << k.key << ": " << s.to_string();
  }
}

TEST(ServeConfig, SecuritySettings) {
  ServiceConfig c;
  EXPECT_TRUE(c.access_log);
  EXPECT_FALSE(c.json_logs);
  EXPECT_FALSE(set_service_config_value(c, "api_key", "has space", "test").ok());
  EXPECT_FALSE(set_service_config_value(c, "api_key", "tab\there", "test").ok());
  EXPECT_TRUE(set_service_config_value(c, "api_key", "s3cr3t-KEY_1", "test").ok());
  EXPECT_EQ(c.api_key, "s3cr3t-KEY_1");
  c.model = "m";
  c.tls_cert = "cert.pem";
  Status s = validate_service_config(c);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("tls_cert and tls_key"), std::string::npos) << s.message();
  c.tls_key = "key.pem";
  EXPECT_TRUE(validate_service_config(c).ok());
  auto r = resolve_service_config("", [](const char* n) -> const char* {
    return std::string(n) == "DLRT_SERVE_API_KEY" ? "from-env" : nullptr;
  }, {{"model", "m"}, {"access_log", "false"}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->api_key, "from-env");
  EXPECT_FALSE(r->access_log);
}

}  // namespace
}  // namespace dlrt::embed
