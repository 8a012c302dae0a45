// The runtime config file (runtime/config.h): parsing, errors, and the
// precedence options > environment > file as a session sees it.
#include <gtest/gtest.h>

#include <onnx/onnx_pb.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>

#include "dlrt/session.h"
#include "runtime/config.h"

namespace dlrt {
namespace {

namespace fs = std::filesystem;

// Sets (or unsets, with nullopt) an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) setenv(name, value->c_str(), 1);
    else unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_) setenv(name_, old_->c_str(), 1);
    else unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

std::string write_file(const std::string& name, const std::string& text) {
  fs::path dir = fs::temp_directory_path() / ("dlrt_config_test_" + std::to_string(getpid()));
  fs::create_directories(dir);
  fs::path p = dir / name;
  std::ofstream(p) << text;
  return p.string();
}

std::string relu_model() {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name("relu");
  for (auto* vi : {g->add_input(), g->add_output()}) {
    vi->set_name(vi == &g->input(0) ? "x" : "y");
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx::TensorProto::FLOAT);
    tt->mutable_shape()->add_dim()->set_dim_value(2);
  }
  auto* n = g->add_node();
  n->set_op_type("Relu");
  n->add_input("x");
  n->add_output("y");
  return m.SerializeAsString();
}

TEST(RuntimeConfig, ParsesKnownKeysAndIgnoresApplicationTables) {
  auto c = parse_runtime_config(
      "device = \"openvino:NPU,cpu\"\nstrict = true\nthreads = 3\ncache_dir = \"/tmp/c\"\ncpu_precision = \"bf16x3\"\n"
      "[serve]\nport = 9000\n",
      "t.toml");
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  EXPECT_EQ(c->device.value_or(""), "openvino:NPU,cpu");
  EXPECT_EQ(c->strict.value_or(false), true);
  EXPECT_EQ(c->threads.value_or(-1), 3);
  EXPECT_EQ(c->cache_dir.value_or(""), "/tmp/c");
  EXPECT_EQ(c->cpu_precision.value_or(""), "bf16x3");
  auto bad = parse_runtime_config("cpu_precision = \"fp16\"\n", "p.toml");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("cpu_precision"), std::string::npos) << bad.status().message();
  auto empty = parse_runtime_config("", "e.toml");
  ASSERT_TRUE(empty.ok());
  EXPECT_FALSE(empty->device || empty->strict || empty->threads || empty->cache_dir || empty->cpu_precision);
}

TEST(RuntimeConfig, ErrorsNameFileKeyAndPosition) {
  auto typo = parse_runtime_config("devcie = \"npu\"\n", "typo.toml");
  ASSERT_FALSE(typo.ok());
  EXPECT_NE(typo.status().message().find("typo.toml"), std::string::npos);
  EXPECT_NE(typo.status().message().find("'devcie'"), std::string::npos);
  auto syntax = parse_runtime_config("device = \"npu\"\nstrict = \n", "syntax.toml");
  ASSERT_FALSE(syntax.ok());
  EXPECT_NE(syntax.status().message().find("line 2"), std::string::npos) << syntax.status().message();
  for (const char* bad : {"strict = \"yes\"\n", "threads = -1\n", "threads = 1.5\n", "device = 3\n", "cache_dir = \"\"\n"}) {
    auto r = parse_runtime_config(bad, "bad.toml");
    EXPECT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  }
}

TEST(RuntimeConfig, DefaultPathIsOptionalButDlrtConfigMustExist) {
  ScopedEnv home("XDG_CONFIG_HOME", fs::temp_directory_path().string() + "/dlrt_no_such_config_home");
  {
    ScopedEnv cfg("DLRT_CONFIG", std::nullopt);
    bool required = true;
    EXPECT_NE(runtime_config_path(&required).find("dlrt_no_such_config_home/dlrt/config.toml"), std::string::npos);
    EXPECT_FALSE(required);
    auto c = load_runtime_config();
    ASSERT_TRUE(c.ok());
    EXPECT_TRUE(c->path.empty());
  }
  ScopedEnv cfg("DLRT_CONFIG", "/nonexistent/dlrt.toml");
  auto c = load_runtime_config();
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("/nonexistent/dlrt.toml"), std::string::npos);
}

// file < environment < options, for device and strict.
TEST(RuntimeConfig, SessionPrecedenceOptionsOverEnvOverFile) {
  ScopedEnv dev("DLRT_DEVICE", std::nullopt);
  ScopedEnv strict_env("DLRT_STRICT", std::nullopt);
  ScopedEnv cfg("DLRT_CONFIG", write_file("strict_npu.toml", "device = \"npu\"\nstrict = true\nthreads = 1\n"));
  const std::string model = relu_model();

  // The file alone: npu, strict -> no NPU here, so creation fails.
  auto s = Session::create_from_bytes(model);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kDeviceUnavailable) << s.status().to_string();

  {  // DLRT_STRICT=0 overrides the file's strict: falls back and says why.
    ScopedEnv off("DLRT_STRICT", "0");
    auto r = Session::create_from_bytes(model);
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    auto p = (*r)->placement();
    ASSERT_EQ(p.partitions.size(), 1u);
    EXPECT_EQ(p.partitions[0].backend, "cpu");
    EXPECT_TRUE(p.partitions[0].degraded);
    EXPECT_NE(p.partitions[0].reason.find("npu"), std::string::npos);
  }
  {  // DLRT_DEVICE=cpu overrides the file's device.
    ScopedEnv cpu("DLRT_DEVICE", "cpu");
    auto r = Session::create_from_bytes(model);
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    EXPECT_FALSE((*r)->placement().partitions[0].degraded);
  }
  {  // The option overrides both.
    ScopedEnv npu("DLRT_DEVICE", "npu");
    SessionOptions o;
    o.device = "cpu";
    auto r = Session::create_from_bytes(model, o);
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    EXPECT_FALSE((*r)->placement().partitions[0].degraded);
  }
  {  // A broken file is an error naming it, not a silent default.
    ScopedEnv broken("DLRT_CONFIG", write_file("broken.toml", "device = [\n"));
    auto r = Session::create_from_bytes(model);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find("broken.toml"), std::string::npos) << r.status().message();
  }
}

}  // namespace
}  // namespace dlrt
