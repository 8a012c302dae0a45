#include "backend/dynamic_library.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <thread>

#include "backend/plugin_backend.h"
#include "plugin_test_util.h"

namespace dlrt::backend {
namespace {

namespace fs = std::filesystem;
using testing::plugin_dir;
using testing::plugin_path;
using testing::ScopedEnv;

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }
bool ends_with(const std::string& s, const std::string& end) {
  return s.size() >= end.size() && s.compare(s.size() - end.size(), end.size(), end) == 0;
}

LibrarySearch good_search(const std::string& env_var) {
  return {"test plugin", env_var, {"libdlrt_plugin_good.so"}, {}, "set " + env_var};
}

// A fresh temporary folder, removed at the end of the test.
struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() / ("dlrt_dl_test_" + std::to_string(::getpid()) + "_" +
                                        std::to_string(counter()++));
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  static std::atomic<int>& counter() {
    static std::atomic<int> c{0};
    return c;
  }
};

TEST(DynamicLibrary, EnvVarNamingAFileLoadsIt) {
  ScopedEnv env("DLRT_DLTEST_LIB", plugin_path("good"));
  std::vector<std::string> tried;
  auto lib = DynamicLibrary::open(good_search("DLRT_DLTEST_LIB"), &tried);
  ASSERT_TRUE(lib.ok()) << lib.status().to_string();
  EXPECT_EQ(fs::canonical((*lib)->path()), fs::canonical(plugin_path("good")));
  EXPECT_NE((*lib)->symbol("dlrt_plugin_api_version"), nullptr);
  EXPECT_EQ((*lib)->symbol("no_such_symbol"), nullptr);
  ASSERT_EQ(tried.size(), 1u);
  EXPECT_TRUE(contains(tried[0], "$DLRT_DLTEST_LIB -> ")) << tried[0];
  EXPECT_TRUE(ends_with(tried[0], ": loaded")) << tried[0];
}

TEST(DynamicLibrary, EnvVarNamingAFolderSearchesIt) {
  ScopedEnv env("DLRT_DLTEST_LIB", plugin_dir());
  auto lib = DynamicLibrary::open(good_search("DLRT_DLTEST_LIB"));
  ASSERT_TRUE(lib.ok()) << lib.status().to_string();
  EXPECT_TRUE(ends_with((*lib)->path(), "/libdlrt_plugin_good.so")) << (*lib)->path();
}

TEST(DynamicLibrary, FolderSearchFindsVersionedSonamesNewestFirst) {
  TempDir dir;
  fs::copy_file(plugin_path("good"), dir.path / "libdlrt_plugin_good.so.1");
  fs::copy_file(plugin_path("good"), dir.path / "libdlrt_plugin_good.so.10");
  ScopedEnv env("DLRT_DLTEST_LIB", dir.path.string());
  auto lib = DynamicLibrary::open(good_search("DLRT_DLTEST_LIB"));
  ASSERT_TRUE(lib.ok()) << lib.status().to_string();
  EXPECT_TRUE(ends_with((*lib)->path(), "libdlrt_plugin_good.so.10")) << (*lib)->path();
}

TEST(DynamicLibrary, LoaderPathByBareName) {
  LibrarySearch s{"C library", "", {"libdlrt_no_such_library.so", "libc.so.6"}, {}, ""};
  std::vector<std::string> tried;
  auto lib = DynamicLibrary::open(s, &tried);
  ASSERT_TRUE(lib.ok()) << lib.status().to_string();
  EXPECT_NE((*lib)->symbol("malloc"), nullptr);
  EXPECT_TRUE(contains((*lib)->path(), "/")) << "resolved to a full path: " << (*lib)->path();
  ASSERT_EQ(tried.size(), 2u);
  EXPECT_TRUE(contains(tried[0], "libdlrt_no_such_library.so")) << tried[0];
}

TEST(DynamicLibrary, WellKnownFoldersAreGlobbedWhenNothingElseLoads) {
  ScopedEnv env("DLRT_DLTEST_LIB", std::nullopt);
  LibrarySearch s = good_search("DLRT_DLTEST_LIB");
  s.folders = {"/nonexistent/dlrt_a*", fs::path(plugin_dir()).parent_path().string() + "/plugin*"};
  std::vector<std::string> tried;
  auto lib = DynamicLibrary::open(s, &tried);
  ASSERT_TRUE(lib.ok()) << lib.status().to_string();
  EXPECT_TRUE(ends_with((*lib)->path(), "plugins/libdlrt_plugin_good.so")) << (*lib)->path();
  // In search order: env var, loader path, folders.
  ASSERT_GE(tried.size(), 4u);
  EXPECT_EQ(tried[0], "$DLRT_DLTEST_LIB: not set");
  EXPECT_TRUE(contains(tried[1], "libdlrt_plugin_good.so")) << tried[1];
  EXPECT_EQ(tried[2], "/nonexistent/dlrt_a*: no such folder");
}

TEST(DynamicLibrary, BrokenEnvVarIsListedWhenALaterLocationLoads) {
  ScopedEnv env("DLRT_DLTEST_LIB", "/nonexistent/libdlrt_plugin_good.so");
  LibrarySearch s = good_search("DLRT_DLTEST_LIB");
  s.folders = {plugin_dir()};
  std::vector<std::string> tried;
  auto lib = DynamicLibrary::open(s, &tried);
  ASSERT_TRUE(lib.ok()) << lib.status().to_string();
  ASSERT_FALSE(tried.empty());
  EXPECT_TRUE(contains(tried[0], "$DLRT_DLTEST_LIB -> /nonexistent/libdlrt_plugin_good.so")) << tried[0];
}

// The message is one short line (the set variable's attempt, how many places, the
// fix); `tried` lists every place.
TEST(DynamicLibrary, FailureListsEveryPathTriedAndTheFix) {
  TempDir empty;
  ScopedEnv env("DLRT_DLTEST_LIB", "/nonexistent/libfoo.so");
  LibrarySearch s{"Foo runtime", "DLRT_DLTEST_LIB", {"libdlrt_foo.so", "libdlrt_foo.so.3"},
                  {"/nonexistent/foo*/lib", empty.path.string()}, "install Foo, or set DLRT_DLTEST_LIB"};
  std::vector<std::string> tried;
  auto lib = DynamicLibrary::open(s, &tried);
  ASSERT_FALSE(lib.ok());
  const Status& st = lib.status();
  EXPECT_EQ(st.code(), StatusCode::kDeviceUnavailable);
  const std::string& m = st.message();
  EXPECT_TRUE(contains(m, "Foo runtime not found")) << m;
  EXPECT_TRUE(contains(m, "$DLRT_DLTEST_LIB -> /nonexistent/libfoo.so")) << m;
  EXPECT_TRUE(contains(m, "5 places searched; `dlrt devices --verbose` lists them")) << m;
  EXPECT_FALSE(contains(m, "/nonexistent/foo*/lib")) << m;
  EXPECT_TRUE(ends_with(m, "Fix: install Foo, or set DLRT_DLTEST_LIB")) << m;
  ASSERT_EQ(tried.size(), 5u);
  std::string all;
  for (const auto& t : tried) all += t + "\n";
  EXPECT_TRUE(contains(all, "libdlrt_foo.so: cannot open shared object file")) << all;
  EXPECT_TRUE(contains(all, "libdlrt_foo.so.3")) << all;
  EXPECT_TRUE(contains(all, "/nonexistent/foo*/lib: no such folder")) << all;
  EXPECT_TRUE(contains(all, empty.path.string() + ": no libdlrt_foo.so or libdlrt_foo.so.3 there")) << all;
}

TEST(DynamicLibrary, NotALibraryReportsTheLoaderError) {
  TempDir dir;
  std::string fake = (dir.path / "libdlrt_plugin_good.so").string();
  { FILE* f = std::fopen(fake.c_str(), "w"); ASSERT_NE(f, nullptr); std::fputs("not an ELF file", f); std::fclose(f); }
  auto lib = DynamicLibrary::open_file(fake);
  ASSERT_FALSE(lib.ok());
  EXPECT_EQ(lib.status().code(), StatusCode::kDeviceUnavailable);
  EXPECT_TRUE(contains(lib.status().message(), fake)) << lib.status().message();
}

#define DLRT_TEST_SYMBOLS(X)                     \
  X(dlrt_plugin_api_version, uint32_t, (void))   \
  X(dlrt_plugin_name, const char*, (void))       \
  X(dlrt_plugin_execute, int,                    \
    (void*, const dlrt_plugin_tensor*, size_t, const dlrt_plugin_output_allocator*, size_t, char*, size_t))
DLRT_DYNAMIC_SYMBOL_TABLE(TestSymbols, DLRT_TEST_SYMBOLS);

TEST(DynamicSymbolTable, ResolvesEveryEntryTyped) {
  auto lib = DynamicLibrary::open_file(plugin_path("good"));
  ASSERT_TRUE(lib.ok()) << lib.status().to_string();
  TestSymbols t;
  ASSERT_TRUE(t.resolve(**lib).ok());
  EXPECT_EQ(t.dlrt_plugin_api_version(), DLRT_PLUGIN_API_VERSION);
  EXPECT_STREQ(t.dlrt_plugin_name(), "good");
  EXPECT_NE(t.dlrt_plugin_execute, nullptr);
  EXPECT_EQ(TestSymbols::symbol_names(),
            (std::vector<std::string>{"dlrt_plugin_api_version", "dlrt_plugin_name", "dlrt_plugin_execute"}));
}

TEST(DynamicSymbolTable, AMissingSymbolLeavesNothingHalfFilled) {
  auto good = DynamicLibrary::open_file(plugin_path("good"));
  auto nosym = DynamicLibrary::open_file(plugin_path("nosym"));
  ASSERT_TRUE(good.ok() && nosym.ok());
  TestSymbols t;
  ASSERT_TRUE(t.resolve(**good).ok());
  Status st = t.resolve(**nosym);  // api_version and name exist there, execute does not
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kDeviceUnavailable);
  EXPECT_TRUE(contains(st.message(), "symbol dlrt_plugin_execute missing from")) << st.message();
  EXPECT_TRUE(contains(st.message(), "libdlrt_plugin_nosym.so")) << st.message();
  EXPECT_EQ(t.dlrt_plugin_api_version, nullptr);
  EXPECT_EQ(t.dlrt_plugin_name, nullptr);
  EXPECT_EQ(t.dlrt_plugin_execute, nullptr);

  PluginSymbols all;  // the real plugin table, same rule
  EXPECT_FALSE(all.resolve(**nosym).ok());
  EXPECT_EQ(all.dlrt_plugin_compile, nullptr);
  EXPECT_TRUE(all.resolve(**good).ok());
  EXPECT_NE(all.dlrt_plugin_destroy, nullptr);
}

TEST(LazyLibrary, SixteenThreadsAtOnceLoadOnce) {
  ScopedEnv env("DLRT_DLTEST_LIB", plugin_path("good"));
  std::atomic<int> on_load_calls{0};
  LazyLibrary lazy(good_search("DLRT_DLTEST_LIB"), [&](const DynamicLibrary&) -> Result<std::string> {
    ++on_load_calls;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // widen the race window
    return std::string("1.2.3");
  });
  EXPECT_EQ(lazy.library(), nullptr);
  std::atomic<int> ready{0}, available{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 16; ++i)
    threads.emplace_back([&] {
      ++ready;
      while (ready.load() < 16) std::this_thread::yield();
      Availability a = lazy.get();
      if (a.available && a.version == "1.2.3") ++available;
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(available.load(), 16);
  EXPECT_EQ(lazy.load_attempts(), 1);
  EXPECT_EQ(on_load_calls.load(), 1);
  ASSERT_NE(lazy.library(), nullptr);
  EXPECT_NE(lazy.library()->symbol("dlrt_plugin_init"), nullptr);
}

TEST(LazyLibrary, FailureIsRememberedAndRefreshRetriesAfterTheEnvIsFixed) {
  ScopedEnv env("DLRT_DLTEST_LIB", "/nonexistent/libdlrt_plugin_good.so");
  LazyLibrary lazy(good_search("DLRT_DLTEST_LIB"));
  auto before = std::chrono::system_clock::now();
  Availability a = lazy.get();
  EXPECT_FALSE(a.available);
  EXPECT_TRUE(contains(a.reason, "/nonexistent/libdlrt_plugin_good.so")) << a.reason;
  EXPECT_EQ(a.fix, "set DLRT_DLTEST_LIB");
  EXPECT_FALSE(a.tried.empty());
  EXPECT_GE(a.checked_at, before);

  env.set(plugin_path("good"));
  Availability again = lazy.get();  // remembered: no new attempt
  EXPECT_FALSE(again.available);
  EXPECT_EQ(again.checked_at, a.checked_at);
  EXPECT_EQ(lazy.load_attempts(), 1);

  Availability fixed = lazy.get(/*refresh=*/true);
  EXPECT_TRUE(fixed.available) << fixed.reason;
  EXPECT_TRUE(fixed.reason.empty());
  EXPECT_EQ(fs::canonical(fixed.library_path), fs::canonical(plugin_path("good")));
  EXPECT_EQ(lazy.load_attempts(), 2);

  env.set("/nonexistent/again.so");  // a success is final: refresh does not unload it
  EXPECT_TRUE(lazy.get(true).available);
  EXPECT_EQ(lazy.load_attempts(), 2);
}

TEST(LazyLibrary, OnLoadFailureFailsTheLoad) {
  ScopedEnv env("DLRT_DLTEST_LIB", plugin_path("good"));
  LazyLibrary lazy(good_search("DLRT_DLTEST_LIB"), [](const DynamicLibrary& lib) -> Result<std::string> {
    return Status(StatusCode::kDeviceUnavailable, "version too old in " + lib.path());
  });
  Availability a = lazy.get();
  EXPECT_FALSE(a.available);
  EXPECT_TRUE(contains(a.reason, "version too old in ")) << a.reason;
  EXPECT_FALSE(a.library_path.empty());
  EXPECT_EQ(lazy.library(), nullptr);
}

}  // namespace
}  // namespace dlrt::backend
