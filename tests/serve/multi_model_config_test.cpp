// Settings of a server of several models: --model NAME=DIR (repeated, or a
// comma list in DLRT_SERVE_MODEL), [[serve.models]] tables, default_model,
// and the checks on them.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>

#include <unistd.h>

#include "embed/serve/service_config.h"

namespace dlrt::embed {
namespace {

GetEnv multi_env_of(std::map<std::string, std::string> vars) {
  auto shared = std::make_shared<std::map<std::string, std::string>>(std::move(vars));
  return [shared](const char* n) -> const char* {
    auto it = shared->find(n);
    return it == shared->end() ? nullptr : it->second.c_str();
  };
}

std::vector<std::string> served_names(const std::vector<ServedModelConfig>& models) {
  std::vector<std::string> out;
  for (const auto& m : models) out.push_back(m.name + "=" + m.path);
  return out;
}

TEST(ServeMultiConfig, RepeatedModelFlagsNameEachModel) {
  auto c = resolve_service_config("", multi_env_of({}), {{"model", "e5=/m/e5"}, {"model", "BAAI/bge-small=/m/bge"}});
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  EXPECT_TRUE(c->model.empty());
  EXPECT_EQ(served_names(c->models), (std::vector<std::string>{"e5=/m/e5", "BAAI/bge-small=/m/bge"}));
  EXPECT_EQ(served_names(served_models(*c)), served_names(c->models));
  // A bare folder is the one model, named by model_name (or its folder, once loaded).
  c = resolve_service_config("", multi_env_of({}), {{"model", "/m/e5"}, {"model_name", "e5"}});
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  EXPECT_EQ(served_names(served_models(*c)), (std::vector<std::string>{"e5=/m/e5"}));
}

TEST(ServeMultiConfig, DefaultModelGoesFirst) {
  auto c = resolve_service_config("", multi_env_of({}), {{"model", "a=/m/a"}, {"model", "b=/m/b"}, {"default_model", "b"}});
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  EXPECT_EQ(served_names(served_models(*c)), (std::vector<std::string>{"b=/m/b", "a=/m/a"}));
  c = resolve_service_config("", multi_env_of({}), {{"model", "a=/m/a"}, {"default_model", "c"}});
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("default_model 'c' is not a served model (served: a)"), std::string::npos)
      << c.status().message();
}

TEST(ServeMultiConfig, BadListsAreRefused) {
  auto err = [](std::vector<std::pair<std::string, std::string>> flags) {
    auto c = resolve_service_config("", multi_env_of({}), flags);
    return c.ok() ? std::string() : c.status().message();
  };
  EXPECT_NE(err({{"model", "/m/a"}, {"model", "b=/m/b"}}).find("name each: --model NAME=DIR"), std::string::npos);
  EXPECT_NE(err({{"model", "a=/m/a"}, {"model", "a=/m/b"}}).find("two models are named 'a'"), std::string::npos);
  EXPECT_NE(err({{"model", "-a=/m/a"}}).find("is not NAME=DIR"), std::string::npos);
  EXPECT_NE(err({{"model", "a="}}).find("is not NAME=DIR"), std::string::npos);
  EXPECT_NE(err({{"model", "a b=/m"}}).find("is not NAME=DIR"), std::string::npos);
  EXPECT_NE(err({{"model", "a=/m/a"}, {"model_name", "x"}}).find("model_name names the one bare model"), std::string::npos);
  EXPECT_NE(err({}).find("--model NAME=DIR"), std::string::npos);
  // Two bare folders: not one replacing the other.
  EXPECT_NE(err({{"model", "/m/a"}, {"model", "/m/b"}}).find("'--model' given more than once"), std::string::npos);
}

TEST(ServeMultiConfig, AnExistingFolderWithAnEqualsSignIsBare) {
  const auto dir = std::filesystem::temp_directory_path() / ("dlrt_multi_cfg_" + std::to_string(::getpid())) / "x=1";
  std::filesystem::create_directories(dir);
  auto c = resolve_service_config("", multi_env_of({}), {{"model", dir.string()}});
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  EXPECT_EQ(c->model, dir.string());
  EXPECT_TRUE(c->models.empty());
  std::filesystem::remove_all(dir.parent_path());
}

TEST(ServeMultiConfig, TomlTablesEnvAndFlagsEachReplaceTheModels) {
  const char* toml = R"(
[serve]
default_model = "rr"
[[serve.models]]
name = "e5"
path = "/m/e5"
max_input_tokens = 128
[[serve.models]]
name = "rr"
path = "/m/rr"
)";
  ServiceConfig c;
  Status s = apply_service_config_toml(c, toml, "serve.toml");
  ASSERT_TRUE(s.ok()) << s.to_string();
  ASSERT_EQ(c.models.size(), 2u);
  EXPECT_EQ(c.models[0].max_input_tokens, 128u);
  EXPECT_EQ(c.models[1].max_input_tokens, 0u);
  EXPECT_EQ(served_names(served_models(c)), (std::vector<std::string>{"rr=/m/rr", "e5=/m/e5"}));

  const auto file = std::filesystem::temp_directory_path() / ("dlrt_multi_cfg_" + std::to_string(::getpid()) + ".toml");
  {
    std::ofstream(file) << "[serve]\n[[serve.models]]\nname = \"e5\"\npath = \"/m/e5\"\n";
  }
  auto r = resolve_service_config(file.string(), multi_env_of({{"DLRT_SERVE_MODEL", "x=/m/x,y=/m/y"}}), {});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(served_names(r->models), (std::vector<std::string>{"x=/m/x", "y=/m/y"}));  // the env's replace the file's
  r = resolve_service_config(file.string(), multi_env_of({{"DLRT_SERVE_MODEL", "x=/m/x"}}), {{"model", "z=/m/z"}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(served_names(r->models), (std::vector<std::string>{"z=/m/z"}));  // the flags' replace both
  // TEI's MODEL_ID replaces the file's models too, and DLRT_SERVE_MODEL replaces it.
  r = resolve_service_config(file.string(), multi_env_of({{"MODEL_ID", "/m/tei"}}), {});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->model, "/m/tei");
  EXPECT_TRUE(r->models.empty());
  r = resolve_service_config(file.string(),
                             multi_env_of({{"MODEL_ID", "/m/tei"}, {"DLRT_SERVE_MODEL", "/m/dlrt"}}), {});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->model, "/m/dlrt");
  std::filesystem::remove(file);

  for (const char* bad : {"[[serve.models]]\nname = \"a\"\n",                        // no path
                          "[[serve.models]]\npath = \"/m\"\n",                        // no name
                          "[[serve.models]]\nname = \"a\"\npath = \"/m\"\npool = 1\n",  // unknown key
                          "[serve]\nmodels = \"a=/m\"\n"}) {                          // not tables
    ServiceConfig b;
    Status e = apply_service_config_toml(b, bad, "bad.toml");
    EXPECT_FALSE(e.ok()) << bad;
    EXPECT_NE(e.message().find("serve.models"), std::string::npos) << e.message();
  }
}

}  // namespace
}  // namespace dlrt::embed
