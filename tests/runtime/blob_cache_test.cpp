// The blob cache: hits, and every way an entry can be bad.
#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>

#include "backends/cpu/cpu_backend.h"
#include "runtime/blob_cache.h"

namespace dlrt {
namespace {

namespace fs = std::filesystem;

backend::Blob make_blob(size_t n, uint8_t fill) {
  backend::Blob b;
  b.format = "test-v1";
  b.data.assign(n, fill);
  return b;
}

class BlobCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("dlrt_cache_test_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(BlobCacheTest, StoresAndLoads) {
  BlobCache c(dir_.string(), 1 << 20);
  ASSERT_TRUE(c.store("key-a", make_blob(100, 7)).ok());
  auto b = c.load("key-a");
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->format, "test-v1");
  EXPECT_EQ(b->data.size(), 100u);
  EXPECT_EQ(b->data[99], 7);
  std::string why;
  EXPECT_FALSE(c.load("key-b", &why).has_value());
  EXPECT_EQ(why, "no entry");
  for (const auto& e : fs::directory_iterator(dir_)) EXPECT_EQ(e.path().extension(), ".blob") << "temp file left behind";
}

TEST_F(BlobCacheTest, CorruptEntryIsRejectedAndRemoved) {
  BlobCache c(dir_.string(), 1 << 20);
  ASSERT_TRUE(c.store("k", make_blob(64, 1)).ok());
  std::string path = c.entry_path("k");
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(40);
    f.put('\x5a');
  }
  std::string why;
  EXPECT_FALSE(c.load("k", &why).has_value());
  EXPECT_NE(why.find("checksum"), std::string::npos) << why;
  EXPECT_FALSE(fs::exists(path));
}

TEST_F(BlobCacheTest, TruncatedEntryIsRejected) {
  BlobCache c(dir_.string(), 1 << 20);
  ASSERT_TRUE(c.store("k", make_blob(64, 1)).ok());
  std::string path = c.entry_path("k");
  fs::resize_file(path, fs::file_size(path) - 10);
  std::string why;
  EXPECT_FALSE(c.load("k", &why).has_value());
  EXPECT_NE(why.find("rejected"), std::string::npos) << why;
}

TEST_F(BlobCacheTest, EmptyOrForeignFileIsRejected) {
  BlobCache c(dir_.string(), 1 << 20);
  fs::create_directories(dir_);
  std::ofstream(c.entry_path("k")) << "hello";
  std::string why;
  EXPECT_FALSE(c.load("k", &why).has_value());
  EXPECT_NE(why.find("not a dlrt cache entry"), std::string::npos) << why;
}

TEST_F(BlobCacheTest, EvictsLeastRecentlyUsed) {
  BlobCache c(dir_.string(), 2500);  // room for two 1000-byte entries
  ASSERT_TRUE(c.store("old", make_blob(1000, 1)).ok());
  ASSERT_TRUE(c.store("mid", make_blob(1000, 2)).ok());
  fs::last_write_time(c.entry_path("old"), fs::file_time_type::clock::now() - std::chrono::hours(2));
  fs::last_write_time(c.entry_path("mid"), fs::file_time_type::clock::now() - std::chrono::hours(1));
  ASSERT_TRUE(c.load("old").has_value());  // use refreshes "old"
  ASSERT_TRUE(c.store("new", make_blob(1000, 3)).ok());
  EXPECT_TRUE(c.load("old").has_value());
  EXPECT_FALSE(c.load("mid").has_value());
  EXPECT_TRUE(c.load("new").has_value());
}

// Counts compiles, computing through the CPU backend.
class CountingBackend final : public backend::Backend {
 public:
  std::atomic<int> compiles{0};
  std::string version = "1.0";
  std::string name() const override { return "counting"; }
  backend::Availability is_available(bool) override {
    backend::Availability a;
    a.available = true;
    a.version = version;
    return a;
  }
  std::vector<backend::BackendDevice> devices(const std::vector<Device>&) override { return {}; }
  std::vector<backend::NodeSupport> supports(const ir::Graph&, const backend::BackendDevice&) override { return {}; }
  Result<backend::Blob> compile(const ir::Graph& g, const backend::BackendDevice& d,
                                const backend::CompileOptions& o) override {
    ++compiles;
    return cpu_->compile(g, d, o);
  }
  Result<backend::Executable*> init(const backend::Blob&, const backend::CompileOptions&,
                                    const backend::BackendDevice&) override {
    return Unsupported("not used");
  }
  Result<std::vector<Tensor>> execute(backend::Executable*, std::span<const Tensor>) override {
    return Unsupported("not used");
  }
  void destroy(backend::Executable*) override {}

 private:
  std::shared_ptr<backend::Backend> cpu_ = cpu::make_cpu_backend();
};

ir::Graph tiny_graph(float bias) {
  ir::Graph g;
  g.opsets[""] = 17;
  ir::TypeInfo t;
  t.dtype = DType::kFloat32;
  ir::ValueId x = g.add_value("x", t);
  ir::ValueId b = g.add_value("b", t);
  g.values[b].constant = Tensor::from_vector<float>({1}, {bias});
  ir::ValueId y = g.add_value("y", t);
  g.inputs = {x};
  g.outputs = {y};
  ir::Node n;
  n.op_type = "Add";
  n.opset = 17;
  n.inputs = {x, b};
  n.outputs = {y};
  g.nodes.push_back(n);
  return g;
}

TEST_F(BlobCacheTest, CompileWithCacheHitsAndKeysOnContentVersionAndOptions) {
  setenv("DLRT_CACHE_DIR", dir_.c_str(), 1);
  CountingBackend be;
  backend::BackendDevice dev;
  dev.backend = "counting";
  dev.name = "0";
  backend::CompileOptions opts;
  ASSERT_TRUE(compile_with_cache(be, tiny_graph(1), dev, opts).ok());
  ASSERT_TRUE(compile_with_cache(be, tiny_graph(1), dev, opts).ok());
  EXPECT_EQ(be.compiles.load(), 1);  // second one hit
  ASSERT_TRUE(compile_with_cache(be, tiny_graph(2), dev, opts).ok());
  EXPECT_EQ(be.compiles.load(), 2);  // different weights
  be.version = "2.0";
  ASSERT_TRUE(compile_with_cache(be, tiny_graph(1), dev, opts).ok());
  EXPECT_EQ(be.compiles.load(), 3);  // runtime upgraded: stale
  opts.values["performance_hint"] = "THROUGHPUT";
  ASSERT_TRUE(compile_with_cache(be, tiny_graph(1), dev, opts).ok());
  EXPECT_EQ(be.compiles.load(), 4);  // different options
  unsetenv("DLRT_CACHE_DIR");
}

}  // namespace
}  // namespace dlrt
