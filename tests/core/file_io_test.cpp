// read_whole_file: contents, empty and special files, errors.
#include "core/file_io.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace dlrt {
namespace {

namespace fs = std::filesystem;

class FileIo : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("dlrt_file_io_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write(const std::string& name, const std::string& bytes) {
    std::string p = (dir_ / name).string();
    std::ofstream(p, std::ios::binary) << bytes;
    return p;
  }

  fs::path dir_;
};

std::string pattern(size_t n) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>((i * 131 + 7) & 0xff);  // includes NUL bytes
  return s;
}

TEST_F(FileIo, ReadsWholeFilesOfManySizes) {
  for (size_t n : {size_t{0}, size_t{1}, size_t{4095}, size_t{65536}, size_t{3} << 20}) {
    const std::string want = pattern(n);
    const std::string p = write("f" + std::to_string(n), want);
    auto got = read_whole_file(p);
    ASSERT_TRUE(got.ok()) << got.status().to_string();
    EXPECT_EQ(got.value(), want) << n << " bytes";
  }
}

TEST_F(FileIo, SpecialFilesWithoutASizeAreReadToTheEnd) {
  // /proc files report size 0; they are still read to the end.
  auto got = read_whole_file("/proc/self/status");
  ASSERT_TRUE(got.ok()) << got.status().to_string();
  EXPECT_NE(got.value().find("Pid:"), std::string::npos);
}

TEST_F(FileIo, ReadsAreBoundedEndlessStreamsIncluded) {
  const std::string p = write("ten", pattern(10));
  EXPECT_TRUE(read_whole_file(p, 10).ok());
  auto over = read_whole_file(p, 9);
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(over.status().message().find("more than 9 bytes"), std::string::npos) << over.status().message();
  // A device that never ends stops at the stream limit, whatever the caller allows.
  auto zero = read_whole_file("/dev/zero");
  ASSERT_FALSE(zero.ok());
  EXPECT_EQ(zero.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(zero.status().message().find("endless stream"), std::string::npos) << zero.status().message();
  EXPECT_FALSE(read_whole_file("/dev/zero", 4096).ok());
}

TEST_F(FileIo, MissingFilesAndFoldersAreIoErrorsNamingThePath) {
  const std::string missing = (dir_ / "nope.onnx").string();
  auto a = read_whole_file(missing);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().code(), StatusCode::kIoError);
  EXPECT_NE(a.status().message().find(missing), std::string::npos) << a.status().message();
  auto b = read_whole_file(dir_.string());
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().code(), StatusCode::kIoError);
  EXPECT_NE(b.status().message().find("folder"), std::string::npos) << b.status().message();
}

}  // namespace
}  // namespace dlrt
