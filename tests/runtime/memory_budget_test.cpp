// The memory budget (issue 53): the default per-tensor limit from the
// physical memory, the memory cgroup and RLIMIT_AS less what the process
// holds; allocation failures as OutOfMemory, never an abort. The process
// tests run the built `dlrt` in a child under an address-space limit (as
// `ulimit -v` sets it) or in a memory cgroup made for the test: a huge
// Resize, a model whose weights exceed the limit, a server request that
// would, each a clear error with exit code 1-4 and no signal.
#include <gtest/gtest.h>
#include <httplib.h>

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "../onnx_proto_util.h"
#include "../serve/serve_model_folder.h"
#include "../tools/dlrt_process.h"
#include "core/memory_limit.h"

namespace dlrt {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
constexpr uint64_t kMiB = uint64_t{1} << 20, kGiB = uint64_t{1} << 30;

// ---- the rule -------------------------------------------------------------

TEST(MemoryBudget, PhysicalMemoryAloneKeepsTodaysDefault) {
  MemoryBudget b;
  b.physical = 16 * kGiB;
  b.rss = 100 * kMiB;
  b.vm_size = 2 * kGiB;
  b = compute_memory_budget(b);
  EXPECT_EQ(b.source, "physical memory");
  EXPECT_EQ(b.available, 16 * kGiB - 100 * kMiB);
  EXPECT_EQ(b.tensor_default, b.available / 2);
  b.physical = kGiB;  // a small machine: never under 1 GiB, as before
  EXPECT_EQ(compute_memory_budget(b).tensor_default, kGiB);
}

TEST(MemoryBudget, TheSmallestBoundLessWhatIsHeldAgainstItWins) {
  MemoryBudget b;
  b.physical = 16 * kGiB;
  b.rss = 100 * kMiB;
  b.vm_size = 1 * kGiB;
  b.rlimit_as = 3 * kGiB;  // less VmSize: 2 GiB
  b = compute_memory_budget(b);
  EXPECT_EQ(b.source, "RLIMIT_AS");
  EXPECT_EQ(b.available, 2 * kGiB);
  EXPECT_EQ(b.tensor_default, kGiB);
  EXPECT_EQ(b.describe(), "RLIMIT_AS 3.0 GiB less 1.0 GiB mapped");

  b.cgroup = 1 * kGiB;  // less RSS: 924 MiB, under RLIMIT_AS's 2 GiB
  b.cgroup_source = "cgroup memory.max";
  b = compute_memory_budget(b);
  EXPECT_EQ(b.source, "cgroup memory.max");
  EXPECT_EQ(b.available, kGiB - 100 * kMiB);
  EXPECT_EQ(b.tensor_default, (kGiB - 100 * kMiB) / 2);  // no 1 GiB floor under a limit

  b.rss = 2 * kGiB;  // holding more than the limit: the 16 MiB floor
  EXPECT_EQ(compute_memory_budget(b).tensor_default, 16 * kMiB);
}

class CgroupFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("dlrt_cgroup_files_" + std::to_string(::getpid()));
    fs::remove_all(root_);
  }
  void TearDown() override { fs::remove_all(root_); }
  void write(const std::string& rel, const std::string& text) {
    fs::create_directories((root_ / rel).parent_path());
    std::ofstream(root_ / rel) << text;
  }
  fs::path root_;
};

TEST_F(CgroupFiles, V2TakesTheSmallestMemoryMaxOfTheCgroupAndItsAncestors) {
  write("memory.max", "max\n");
  write("kube/memory.max", "1073741824\n");
  write("kube/pod/memory.max", "max\n");
  std::string source;
  auto l = cgroup_memory_limit("0::/kube/pod\n", root_.string(), &source);
  ASSERT_TRUE(l.has_value());
  EXPECT_EQ(*l, kGiB);
  EXPECT_EQ(source, "cgroup memory.max");
  write("kube/memory.max", "max\n");
  EXPECT_FALSE(cgroup_memory_limit("0::/kube/pod\n", root_.string(), &source).has_value()) << "\"max\" is no limit";
}

TEST_F(CgroupFiles, V1ReadsTheMemoryControllersLimitInBytes) {
  write("memory/job/memory.limit_in_bytes", "536870912\n");
  write("memory/memory.limit_in_bytes", "9223372036854771712\n");  // unlimited
  std::string source;
  auto l = cgroup_memory_limit("5:cpu,cpuacct:/job\n4:memory:/job\n0::/\n", root_.string(), &source);
  ASSERT_TRUE(l.has_value());
  EXPECT_EQ(*l, 512 * kMiB);
  EXPECT_EQ(source, "cgroup v1 memory.limit_in_bytes");
  EXPECT_FALSE(cgroup_memory_limit("4:memory:/\n", root_.string(), &source).has_value());
  EXPECT_FALSE(cgroup_memory_limit("", root_.string(), &source).has_value());
}

TEST(MemoryBudget, ThisProcessHasOne) {
  const MemoryBudget b = read_memory_budget();
  EXPECT_GT(b.physical, 0u);
  EXPECT_GT(b.rss, 0u);
  EXPECT_GE(b.vm_size, b.rss);
  EXPECT_GT(b.available, 0u);
  EXPECT_FALSE(b.source.empty());
}

// ---- the processes --------------------------------------------------------

// Input x [1, 1, 1000, 1000] Resized by `scale` along both spatial axes.
void write_resize_model(const fs::path& path, float scale) {
  onnx::ModelProto m;
  auto* g = testing::start_model(m, 13, "resize");
  testing::add_value_info(g->add_input(), "x", onnx::TensorProto::FLOAT, {1, 1, 1000, 1000});
  testing::add_unshaped_value_info(g->add_output(), "y", onnx::TensorProto::FLOAT);
  auto* s = g->add_initializer();
  s->set_name("scales");
  s->set_data_type(onnx::TensorProto::FLOAT);
  s->add_dims(4);
  for (float v : {1.f, 1.f, scale, scale}) s->add_float_data(v);
  auto* n = testing::add_onnx_node(g, "Resize", {"x", "", "scales"}, "y");
  n->set_name("upsample");
  std::ofstream f(path, std::ios::binary);
  m.SerializeToOstream(&f);
}

// y = x @ W with W float [rows, 1024] of zeros (rows * 4 KiB of weights).
void write_weights_model(const fs::path& path, int64_t rows) {
  onnx::ModelProto m;
  auto* g = testing::start_model(m, 13, "weights");
  testing::add_value_info(g->add_input(), "x", onnx::TensorProto::FLOAT, {1, rows});
  testing::add_unshaped_value_info(g->add_output(), "y", onnx::TensorProto::FLOAT);
  auto* w = g->add_initializer();
  w->set_name("W");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(rows);
  w->add_dims(1024);
  w->set_raw_data(std::string(static_cast<size_t>(rows) * 1024 * 4, '\0'));
  testing::add_onnx_node(g, "MatMul", {"x", "W"}, "y")->set_name("dense");
  std::ofstream f(path, std::ios::binary);
  m.SerializeToOstream(&f);
}

// `dlrt ARGS...` under RLIMIT_AS = `as_bytes` (0: none), in the cgroup whose
// cgroup.procs is `cgroup_procs` ("": none), with `env` added; stdout and
// stderr together in its output().
testing::DlrtProcessOptions child(std::vector<std::string> args, uint64_t as_bytes,
                                  std::map<std::string, std::string> env = {}, const std::string& cgroup_procs = "") {
  testing::DlrtProcessOptions o;
  o.args = std::move(args);
  o.env = std::move(env);
  o.address_space = as_bytes;
  o.cgroup_procs = cgroup_procs;
  return o;
}

class MemoryLimitProcess : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(testing::dlrt_binary())) GTEST_SKIP() << testing::dlrt_binary() << " is not built (ninja dlrt_cli)";
    dir_ = fs::temp_directory_path() / ("dlrt_memory_limit_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }
  fs::path dir_;
};

constexpr uint64_t kAddressSpace = 2 * kGiB;  // `ulimit -v 2097152`

// The case: an output (3.4 GiB) under the old default (half the
// physical memory) but over what the address space allows.
TEST_F(MemoryLimitProcess, HugeResizeUnderUlimitIsOutOfMemoryNotAnAbort) {
  const fs::path model = dir_ / "resize.onnx";
  write_resize_model(model, 30.f);
  {  // the default budget knows the limit: refused before allocating, naming it
    testing::DlrtProcess c(child({"run", model.string(), "--device", "cpu"}, kAddressSpace));
    const int rc = c.wait_exit();
    EXPECT_EQ(rc, 1) << c.output();
    EXPECT_NE(c.output().find("OutOfMemory: node 'upsample' (Resize)"), std::string::npos) << c.output();
    EXPECT_NE(c.output().find("3.4 GiB"), std::string::npos) << c.output();
    EXPECT_NE(c.output().find("RLIMIT_AS"), std::string::npos) << c.output();
  }
  {  // a budget set over the limit: the allocation itself fails, still a Status
    testing::DlrtProcess c(
        child({"run", model.string(), "--device", "cpu"}, kAddressSpace, {{"DLRT_MAX_TENSOR_MB", "100000"}}));
    const int rc = c.wait_exit();
    EXPECT_EQ(rc, 1) << c.output();
    EXPECT_NE(c.output().find("OutOfMemory: node 'upsample' (Resize)"), std::string::npos) << c.output();
    EXPECT_EQ(c.output().find("terminate called"), std::string::npos) << c.output();
  }
}

TEST_F(MemoryLimitProcess, DevicesReportsTheBudgetUnderUlimit) {
  testing::DlrtProcess c(child({"devices", "--json"}, kAddressSpace));
  ASSERT_EQ(c.wait_exit(), 0) << c.output();
  const std::string& out = c.output();
  json j = json::parse(out.substr(out.find('{')), nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << out;
  const json& m = j["memory"];
  EXPECT_EQ(m["available_source"], "RLIMIT_AS") << m.dump();
  EXPECT_EQ(m["rlimit_as_bytes"].get<uint64_t>(), kAddressSpace);
  const uint64_t avail = m["available_bytes"].get<uint64_t>();
  EXPECT_EQ(avail, kAddressSpace - m["vm_size_bytes"].get<uint64_t>());
  EXPECT_EQ(m["max_tensor_bytes"].get<uint64_t>(), avail / 2);
}

TEST_F(MemoryLimitProcess, WeightsOverTheLimitFailToLoadWithAClearError) {
  const fs::path model = dir_ / "weights.onnx";
  write_weights_model(model, 96 * 1024);  // 384 MiB of weights
  for (const char* budget : {"", "100000"}) {  // the default budget, then one over the address space
    std::map<std::string, std::string> env;
    if (*budget) env["DLRT_MAX_TENSOR_MB"] = budget;
    testing::DlrtProcess c(child({"run", model.string(), "--device", "cpu"}, 512 * kMiB, env));
    const int rc = c.wait_exit();
    EXPECT_GE(rc, 1) << c.output();
    EXPECT_LE(rc, 4) << c.output();
    EXPECT_NE(c.output().find("OutOfMemory"), std::string::npos) << c.output();
    EXPECT_EQ(c.output().find("terminate called"), std::string::npos) << c.output();
  }
}

// A model folder whose run grows with the square of the sequence: for T
// tokens a [1, T, T, 4096] float intermediate (T = 450: 3.1 GiB), its
// hidden state [1, T, 4096] the mean of it.
bool write_quadratic_folder(const fs::path& dir) {
  using embed::testing::detail::add_io;
  embed::testing::write_vocab_and_config(dir, 512, "quadratic");
  onnx::ModelProto m;
  auto* g = testing::start_model(m, 17, "quadratic");
  add_io(g->mutable_input(), "input_ids", onnx::TensorProto::INT64, {"batch", "sequence"});
  add_io(g->mutable_input(), "attention_mask", onnx::TensorProto::INT64, {"batch", "sequence"});
  add_io(g->mutable_output(), "last_hidden_state", onnx::TensorProto::FLOAT, {"batch", "sequence"}, 4096);
  testing::add_int64_initializer(g, "axes_a", {2}, {2, 3});
  testing::add_int64_initializer(g, "axes_b", {2}, {1, 3});
  auto* ones = g->add_initializer();
  ones->set_name("ones");
  ones->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : {1, 1, 1, 4096}) ones->add_dims(d);
  for (int i = 0; i < 4096; ++i) ones->add_float_data(1.f);
  auto* cast = testing::add_onnx_node(g, "Cast", {"input_ids"}, "ids_f");
  auto* to = cast->add_attribute();
  to->set_name("to");
  to->set_type(onnx::AttributeProto::INT);
  to->set_i(onnx::TensorProto::FLOAT);
  auto* cast_m = testing::add_onnx_node(g, "Cast", {"attention_mask"}, "mask_f");
  cast_m->add_attribute()->CopyFrom(*to);
  testing::add_onnx_node(g, "Unsqueeze", {"ids_f", "axes_a"}, "a");
  testing::add_onnx_node(g, "Unsqueeze", {"mask_f", "axes_b"}, "b");
  testing::add_onnx_node(g, "Mul", {"a", "b"}, "ab");
  testing::add_onnx_node(g, "Mul", {"ab", "ones"}, "big");
  auto* mean = testing::add_onnx_node(g, "ReduceMean", {"big"}, "last_hidden_state");
  auto* axes = mean->add_attribute();
  axes->set_name("axes");
  axes->set_type(onnx::AttributeProto::INTS);
  axes->add_ints(2);
  auto* keep = mean->add_attribute();
  keep->set_name("keepdims");
  keep->set_type(onnx::AttributeProto::INT);
  keep->set_i(0);
  std::ofstream f(dir / "model.onnx", std::ios::binary);
  return m.SerializeToOstream(&f) && f.good();
}

std::string embed_body(size_t words) {
  return json({{"input", embed::testing::serve_sentence(words, 3)}, {"model", "quadratic"}}).dump();
}

TEST_F(MemoryLimitProcess, EmbedOfATextOverTheLimitExitsOne) {
  ASSERT_TRUE(write_quadratic_folder(dir_ / "model"));
  for (const char* budget : {"", "100000"}) {
    SCOPED_TRACE(std::string("DLRT_MAX_TENSOR_MB=") + budget);
    std::map<std::string, std::string> env = {{"DLRT_DEVICE", ""}};
    if (*budget) env["DLRT_MAX_TENSOR_MB"] = budget;
    testing::DlrtProcess c(child(
        {"embed", "--model", (dir_ / "model").string(), "--device", "cpu", embed::testing::serve_sentence(450, 3)},
        3 * kGiB, env));
    const int rc = c.wait_exit();
    EXPECT_EQ(rc, 1) << c.output();
    EXPECT_NE(c.output().find("OutOfMemory: node 'Mul_big' (Mul)"), std::string::npos) << c.output();
  }
}

TEST_F(MemoryLimitProcess, ServerAnswers507AndKeepsServing) {
  ASSERT_TRUE(write_quadratic_folder(dir_ / "model"));
  constexpr uint64_t kServerAddressSpace = 3 * kGiB;
  for (const char* budget : {"", "100000"}) {  // the default budget, then one over the address space
    SCOPED_TRACE(std::string("DLRT_MAX_TENSOR_MB=") + budget);
    std::map<std::string, std::string> env = {{"DLRT_DEVICE", ""}};
    if (*budget) env["DLRT_MAX_TENSOR_MB"] = budget;
    testing::DlrtProcess c(
        child({"serve", "--model", (dir_ / "model").string(), "--port", "0", "--device", "cpu", "--threads", "1"},
              kServerAddressSpace, env));
    const int port = c.wait_port();
    ASSERT_GT(port, 0) << c.output();
    httplib::Client cl("127.0.0.1", port);
    cl.set_read_timeout(60, 0);
    for (int i = 0; i < 600; ++i) {  // wait for the model
      auto h = cl.Get("/health");
      if (h && h->status == 200) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    auto info = cl.Get("/info");
    ASSERT_TRUE(info) << c.output();
    json ij = json::parse(info->body, nullptr, false);
    ASSERT_TRUE(ij.contains("memory")) << info->body;
    EXPECT_EQ(ij["memory"]["rlimit_as_bytes"].get<uint64_t>(), kServerAddressSpace);
    if (!*budget) {
      EXPECT_EQ(ij["memory"]["available_source"], "RLIMIT_AS") << info->body;
    }

    auto small = cl.Post("/v1/embeddings", embed_body(6), "application/json");
    ASSERT_TRUE(small) << c.output();
    EXPECT_EQ(small->status, 200) << small->body;
    auto huge = cl.Post("/v1/embeddings", embed_body(450), "application/json");
    ASSERT_TRUE(huge) << "no answer: " << c.output();
    EXPECT_EQ(huge->status, 507) << huge->body;
    EXPECT_NE(huge->body.find("OutOfMemory: node 'Mul_big' (Mul)"), std::string::npos) << huge->body;
    EXPECT_NE(huge->body.find("insufficient_storage"), std::string::npos) << huge->body;
    auto health = cl.Get("/health");
    ASSERT_TRUE(health) << "the server went down: " << c.output();
    EXPECT_EQ(health->status, 200) << health->body;
    auto again = cl.Post("/v1/embeddings", embed_body(6), "application/json");
    ASSERT_TRUE(again);
    EXPECT_EQ(again->status, 200) << again->body;
    EXPECT_FALSE(c.exited()) << c.output();
  }
}

// The memory cgroup this process is in, as a folder we may make a child
// cgroup in ("" and `why` when there is none we can write).
std::string writable_memory_cgroup(std::string* why, bool* v2) {
  std::ifstream f("/proc/self/cgroup");
  std::string line, v1_path, v2_path;
  bool has_v2 = false;
  while (std::getline(f, line)) {
    const size_t a = line.find(':'), b = line.find(':', a + 1);
    if (b == std::string::npos) continue;
    const std::string ctl = line.substr(a + 1, b - a - 1), path = line.substr(b + 1);
    if (line.compare(0, a, "0") == 0 && ctl.empty()) has_v2 = true, v2_path = path;
    if (("," + ctl + ",").find(",memory,") != std::string::npos) v1_path = path;
  }
  if (has_v2 && fs::exists("/sys/fs/cgroup/cgroup.controllers")) {
    *v2 = true;
    const std::string dir = "/sys/fs/cgroup" + (v2_path == "/" ? "" : v2_path);
    std::ifstream sub(dir + "/cgroup.subtree_control");
    std::string ctl((std::istreambuf_iterator<char>(sub)), std::istreambuf_iterator<char>());
    if (ctl.find("memory") == std::string::npos) {
      *why = "cgroup v2: the memory controller is not enabled for children of " + dir;
      return "";
    }
    if (::access(dir.c_str(), W_OK) != 0) {
      *why = "cgroup v2: " + dir + " is not writable";
      return "";
    }
    return dir;
  }
  *v2 = false;
  if (!v1_path.empty() && fs::exists("/sys/fs/cgroup/memory")) {
    const std::string dir = "/sys/fs/cgroup/memory" + (v1_path == "/" ? "" : v1_path);
    if (::access(dir.c_str(), W_OK) != 0) {
      *why = "cgroup v1: " + dir + " is not writable";
      return "";
    }
    return dir;
  }
  *why = "no memory cgroup is mounted at /sys/fs/cgroup";
  return "";
}

TEST_F(MemoryLimitProcess, InAMemoryCgroupTheBudgetFollowsItsLimit) {
  std::string why;
  bool v2 = false;
  const std::string parent = writable_memory_cgroup(&why, &v2);
  if (parent.empty()) GTEST_SKIP() << why;
  const fs::path cg = fs::path(parent) / ("dlrt_test_" + std::to_string(::getpid()));
  if (::mkdir(cg.c_str(), 0755) != 0) GTEST_SKIP() << "cannot make the cgroup " << cg << ": " << std::strerror(errno);
  struct Remove {
    fs::path p;
    ~Remove() { ::rmdir(p.c_str()); }  // empty again once the children have exited
  } remove{cg};
  const uint64_t limit = 768 * kMiB;
  {
    std::ofstream lim(cg / (v2 ? "memory.max" : "memory.limit_in_bytes"));
    lim << limit;
    lim.flush();
    if (!lim) GTEST_SKIP() << "cannot set the limit of " << cg;
  }
  const std::string procs = (cg / "cgroup.procs").string();
  const std::string source = v2 ? "cgroup memory.max" : "cgroup v1 memory.limit_in_bytes";
  {
    testing::DlrtProcess c(child({"devices", "--json"}, 0, {}, procs));
    const int rc = c.wait_exit();
    if (rc == testing::kChildCgroupFailed)
      GTEST_SKIP() << "cannot move a process into " << procs;  // e.g. cgroup v2's no-internal-process rule
    ASSERT_EQ(rc, 0) << c.output();
    const std::string& out = c.output();
    json j = json::parse(out.substr(out.find('{')), nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << out;
    EXPECT_EQ(j["memory"]["available_source"], source) << j["memory"].dump();
    EXPECT_EQ(j["memory"]["cgroup_limit_bytes"].get<uint64_t>(), limit);
    EXPECT_EQ(j["memory"]["available_bytes"].get<uint64_t>(), limit - j["memory"]["rss_bytes"].get<uint64_t>());
  }
  {  // the Resize is refused by the budget before the kernel's OOM killer answers
    const fs::path model = dir_ / "resize.onnx";
    write_resize_model(model, 30.f);
    testing::DlrtProcess c(child({"run", model.string(), "--device", "cpu"}, 0, {}, procs));
    const int rc = c.wait_exit();
    EXPECT_EQ(rc, 1) << c.output();
    EXPECT_NE(c.output().find("OutOfMemory: node 'upsample' (Resize)"), std::string::npos) << c.output();
    EXPECT_NE(c.output().find(source), std::string::npos) << c.output();
  }
}

}  // namespace
}  // namespace dlrt
