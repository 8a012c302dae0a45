// The runtime config file (runtime/config.h): parsing, errors, and the
// precedence options > environment > file as a session sees it.
#include <gtest/gtest.h>

#include <onnx/onnx_pb.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>

#include "../onnx_proto_util.h"
#include "core/memory_limit.h"
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
  auto mb = parse_runtime_config("max_tensor_mb = 4096\n", "m.toml");
  ASSERT_TRUE(mb.ok()) << mb.status().to_string();
  EXPECT_EQ(mb->max_tensor_mb.value_or(0), 4096u);
  auto bad = parse_runtime_config("cpu_precision = \"fp16\"\n", "p.toml");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("cpu_precision"), std::string::npos) << bad.status().message();
  auto empty = parse_runtime_config("", "e.toml");
  ASSERT_TRUE(empty.ok());
  EXPECT_FALSE(empty->device || empty->strict || empty->threads || empty->cache_dir || empty->cpu_precision ||
               empty->max_tensor_mb);
}

TEST(RuntimeConfig, ErrorsNameFileKeyAndPosition) {
  auto typo = parse_runtime_config("devcie = \"npu\"\n", "typo.toml");
  ASSERT_FALSE(typo.ok());
  EXPECT_NE(typo.status().message().find("typo.toml"), std::string::npos);
  EXPECT_NE(typo.status().message().find("'devcie'"), std::string::npos);
  auto syntax = parse_runtime_config("device = \"npu\"\nstrict = \n", "syntax.toml");
  ASSERT_FALSE(syntax.ok());
  EXPECT_NE(syntax.status().message().find("line 2"), std::string::npos) << syntax.status().message();
  for (const char* bad : {"strict = \"yes\"\n", "threads = -1\n", "threads = 1.5\n", "device = 3\n", "cache_dir = \"\"\n",
                          "max_tensor_mb = 0\n", "max_tensor_mb = \"4G\"\n"}) {
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

// y = ConstantOfShape(shape): a float tensor as large as an input asks.
std::string constant_of_shape_model() {
  onnx::ModelProto m;
  auto* g = testing::start_model(m, 17, "fill");
  testing::add_value_info(g->add_input(), "shape", onnx::TensorProto::INT64, {1});
  testing::add_unshaped_value_info(g->add_output(), "y", onnx::TensorProto::FLOAT);
  testing::add_onnx_node(g, "ConstantOfShape", {"shape"}, "y");
  return m.SerializeAsString();
}

// The tensor budget (issue 41): SessionOptions::max_tensor_bytes over
// DLRT_MAX_TENSOR_MB over the config file's max_tensor_mb; the error names
// the node, the size, the limit and where the limit came from.
TEST(RuntimeConfig, TensorLimitFromOptionsAndConfigFile) {
  const std::string model = constant_of_shape_model();
  auto fill = [](int64_t n) { return std::map<std::string, Tensor>{{"shape", Tensor::from_vector<int64_t>({1}, {n})}}; };
  ScopedEnv cfg("DLRT_CONFIG", write_file("limit.toml", "max_tensor_mb = 1\n"));
  SessionOptions o;
  o.max_tensor_bytes = 8 << 20;
  auto s = Session::create_from_bytes(model, o);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  EXPECT_TRUE((*s)->run(fill(1 << 20)).ok());  // 4 MiB: within the option's 8 MiB, over the file's 1 MiB
  auto over = (*s)->run(fill(3 << 20));          // 12 MiB
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.status().code(), StatusCode::kOutOfMemory);
  EXPECT_NE(over.status().message().find("(ConstantOfShape)"), std::string::npos) << over.status().message();
  EXPECT_NE(over.status().message().find("would allocate 12.0 MiB, over the 8.0 MiB limit (SessionOptions::max_tensor_bytes)"),
            std::string::npos)
      << over.status().message();
  EXPECT_TRUE((*s)->run(fill(4)).ok());  // the session stays usable
  if (env_max_tensor_bytes()) GTEST_SKIP() << "DLRT_MAX_TENSOR_MB is set: it wins over the config file";
  auto from_file = Session::create_from_bytes(model);
  ASSERT_TRUE(from_file.ok()) << from_file.status().to_string();
  auto r = (*from_file)->run(fill(1 << 20));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kOutOfMemory);
  EXPECT_NE(r.status().message().find("over the 1.0 MiB limit (max_tensor_mb in the config file)"), std::string::npos)
      << r.status().message();
  EXPECT_EQ(max_tensor_bytes(), default_tensor_limit().bytes) << "a session's limit must not stay on the thread";
}

}  // namespace
}  // namespace dlrt
