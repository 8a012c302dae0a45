#include "core/npy.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace dlrt {
namespace {

// Builds a .npy file from a header dict and raw data, as numpy would lay it out.
std::string make_npy(const std::string& dict, const std::string& data, int major = 1) {
  std::string out("\x93NUMPY", 6);
  out += static_cast<char>(major);
  out += '\0';
  std::string header = dict + "\n";
  size_t n = header.size();
  int len_bytes = major == 1 ? 2 : 4;
  for (int i = 0; i < len_bytes; ++i) out += static_cast<char>((n >> (8 * i)) & 0xff);
  return out + header + data;
}

template <typename T>
std::string raw(const std::vector<T>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

std::string error_of(const std::string& bytes) {
  auto r = parse_npy(bytes, "x.npy");
  EXPECT_FALSE(r.ok());
  return r.ok() ? "" : r.status().message();
}

TEST(Npy, ReadsWhatNumpyWrites) {
  // Bytes of np.save(np.array([[1.5,2],[3,4]], dtype=np.float32)).
  std::string numpy_bytes(
      "\x93NUMPY\x01\x00v\x00{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }"
      "                                                          \n"
      "\x00\x00\xc0?\x00\x00\x00@\x00\x00@@\x00\x00\x80@",
      128 + 16);
  auto r = parse_npy(numpy_bytes);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->dtype(), DType::kFloat32);
  EXPECT_EQ(r->shape(), (Shape{2, 2}));
  EXPECT_EQ(r->data<float>()[0], 1.5f);
  EXPECT_EQ(r->data<float>()[3], 4.0f);
}

TEST(Npy, ZeroDimensionalArray) {
  auto r = parse_npy(make_npy("{'descr': '<i8', 'fortran_order': False, 'shape': (), }", raw<int64_t>({7})));
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->rank(), 0u);
  EXPECT_EQ(r->size(), 1);
  EXPECT_EQ(r->data<int64_t>()[0], 7);
}

TEST(Npy, EmptyArray) {
  auto r = parse_npy(make_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (0, 3), }", ""));
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->shape(), (Shape{0, 3}));
}

TEST(Npy, Versions2And3) {
  for (int v : {2, 3}) {
    auto r = parse_npy(make_npy("{'descr': '<i4', 'fortran_order': False, 'shape': (3,)}", raw<int32_t>({1, 2, 3}), v));
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    EXPECT_EQ(r->data<int32_t>()[2], 3);
  }
  EXPECT_NE(error_of(make_npy("{'descr': '<i4', 'fortran_order': False, 'shape': (1,)}", raw<int32_t>({1}), 4))
                .find("version"),
            std::string::npos);
}

TEST(Npy, AllDtypesRoundTrip) {
  std::vector<Tensor> ts = {
      Tensor::from_vector<float>({2}, {1.0f, -2.5f}),
      Tensor::from_vector<double>({2}, {1.0, -2.5}),
      Tensor::from_vector<Float16>({2}, {Float16(1.0f), Float16(-2.5f)}),
      Tensor::from_vector<int8_t>({2}, {-1, 2}),
      Tensor::from_vector<int16_t>({2}, {-1, 2}),
      Tensor::from_vector<int32_t>({2}, {-1, 2}),
      Tensor::from_vector<int64_t>({2}, {-1, 2}),
      Tensor::from_vector<uint8_t>({2}, {255, 2}),
      Tensor::from_vector<uint16_t>({2}, {65535, 2}),
      Tensor::from_vector<uint32_t>({2}, {4000000000u, 2}),
      Tensor::from_vector<uint64_t>({2}, {18000000000000000000ull, 2}),
      Tensor::from_vector<bool>({1, 2}, {true, false}),
      Tensor::scalar<float>(3.0f),
  };
  for (const Tensor& t : ts) {
    auto bytes = serialize_npy(t);
    ASSERT_TRUE(bytes.ok()) << bytes.status().to_string();
    EXPECT_EQ(bytes->size() - t.nbytes(), 128u);  // header padded to 64 bytes
    auto back = parse_npy(*bytes);
    ASSERT_TRUE(back.ok()) << dtype_name(t.dtype()) << ": " << back.status().to_string();
    EXPECT_EQ(back->dtype(), t.dtype());
    EXPECT_EQ(back->shape(), t.shape());
    EXPECT_EQ(std::memcmp(back->raw_data(), t.raw_data(), t.nbytes()), 0) << dtype_name(t.dtype());
  }
}

TEST(Npy, FileRoundTrip) {
  auto dir = std::filesystem::temp_directory_path() / ("dlrt_npy_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::string path = (dir / "a.npy").string();
  Tensor t = Tensor::from_vector<int64_t>({2, 1, 3}, {1, 2, 3, 4, 5, 6});
  ASSERT_TRUE(write_npy_file(path, t).ok());
  auto r = read_npy_file(path);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->shape(), (Shape{2, 1, 3}));
  EXPECT_EQ(r->data<int64_t>()[5], 6);
  std::filesystem::remove_all(dir);
}

TEST(Npy, MissingFileIsIoError) {
  auto r = read_npy_file("/nonexistent/dir/x.npy");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kIoError);
  EXPECT_NE(r.status().message().find("/nonexistent/dir/x.npy"), std::string::npos);
}

TEST(Npy, BoolBytesAreNormalised) {
  auto r = parse_npy(make_npy("{'descr': '|b1', 'fortran_order': False, 'shape': (2,), }", std::string("\x00\x07", 2)));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(static_cast<const unsigned char*>(r->raw_data())[1], 1);
}

TEST(Npy, CannotWriteBFloat16) {
  EXPECT_EQ(serialize_npy(Tensor::from_vector<BFloat16>({1}, {BFloat16(1.0f)})).status().code(), StatusCode::kUnsupported);
  EXPECT_FALSE(serialize_npy(Tensor()).ok());
}

// numpy's str arrays ('<U': UTF-32 code units, NUL-padded) as string tensors (UTF-8).
TEST(Npy, TextReadsAsUtf8AndRoundTrips) {
  // np.array([["ab", "\u00e9"], ["", "\U0001F600x"]]): '<U2'.
  const std::vector<uint32_t> units = {'a', 'b', 0xE9, 0, 0, 0, 0x1F600, 'x'};
  auto r = parse_npy(make_npy("{'descr': '<U2', 'fortran_order': False, 'shape': (2, 2), }", raw(units)));
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  ASSERT_EQ(r->dtype(), DType::kString);
  ASSERT_EQ(r->shape(), (Shape{2, 2}));
  const std::string* s = r->data<std::string>();
  EXPECT_EQ(s[0], "ab");
  EXPECT_EQ(s[1], "\xc3\xa9");
  EXPECT_EQ(s[2], "");
  EXPECT_EQ(s[3], "\xf0\x9f\x98\x80x");
  auto bytes = serialize_npy(*r);
  ASSERT_TRUE(bytes.ok()) << bytes.status().to_string();
  EXPECT_NE(bytes->find("'descr': '<U2'"), std::string::npos);
  auto back = parse_npy(*bytes);
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  for (int i = 0; i < 4; ++i) EXPECT_EQ(back->data<std::string>()[i], s[i]);
  // Not UTF-8 inside dlrt, or not a code point in the file: errors, not garbage.
  EXPECT_EQ(serialize_npy(Tensor::from_vector<std::string>({1}, {std::string("\xff")})).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_NE(error_of(make_npy("{'descr': '<U1', 'fortran_order': False, 'shape': (1,), }", raw<uint32_t>({0xD800})))
                .find("invalid code point"),
            std::string::npos);
  EXPECT_NE(error_of(make_npy("{'descr': '<U0', 'fortran_order': False, 'shape': (1,), }", "")).find("text width"),
            std::string::npos);
  EXPECT_NE(error_of(make_npy("{'descr': '<U99999999', 'fortran_order': False, 'shape': (1,), }", "")).find("text width"),
            std::string::npos);
}

TEST(Npy, MalformedFilesAreErrors) {
  const std::string ok_dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
  const std::string two = raw<float>({1, 2});
  EXPECT_NE(error_of("").find("bad magic"), std::string::npos);
  EXPECT_NE(error_of("PK\x03\x04 zip file").find("bad magic"), std::string::npos);
  EXPECT_NE(error_of(std::string("\x93NUMPY", 6)).find("truncated"), std::string::npos);
  EXPECT_NE(error_of(std::string("\x93NUMPY\x01\x00\x50", 9)).find("truncated"), std::string::npos);
  std::string full = make_npy(ok_dict, two);
  EXPECT_NE(error_of(full.substr(0, 30)).find("truncated"), std::string::npos);
  EXPECT_NE(error_of(full.substr(0, full.size() - 1)).find("truncated .npy data"), std::string::npos);
  EXPECT_NE(error_of(full + "x").find("trailing"), std::string::npos);
  EXPECT_NE(error_of(make_npy("{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }", two)).find("Fortran"),
            std::string::npos);
  EXPECT_NE(error_of(make_npy("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", two)).find("big-endian"),
            std::string::npos);
  EXPECT_NE(error_of(make_npy("{'descr': '|S3', 'fortran_order': False, 'shape': (2,), }", two)).find("unsupported .npy dtype"),
            std::string::npos);
  EXPECT_NE(error_of(make_npy("{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }", two)).find("unsupported"),
            std::string::npos);
  EXPECT_NE(error_of(make_npy("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }", two))
                .find("structured"),
            std::string::npos);
  EXPECT_NE(error_of(make_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", two)).find("needs 12 bytes"),
            std::string::npos);
  EXPECT_NE(error_of(make_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }", two))
                .find("overflows"),
            std::string::npos);
  EXPECT_NE(error_of(make_npy("{'descr': '<f8', 'fortran_order': False, 'shape': (2305843009213693952,), }", two))
                .find("overflows"),
            std::string::npos);
  EXPECT_NE(error_of(make_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }", two))
                .find("64 bits"),
            std::string::npos);
  EXPECT_NE(error_of(make_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }", two)).find("non-negative"),
            std::string::npos);
  EXPECT_NE(error_of(make_npy("{'descr': '<f4', 'shape': (2,), }", two)).find("fortran_order"), std::string::npos);
  EXPECT_NE(error_of(make_npy("{'fortran_order': False, 'shape': (2,), }", two)).find("descr"), std::string::npos);
  EXPECT_NE(error_of(make_npy("{'descr': '<f4', 'fortran_order': False}", two)).find("shape"), std::string::npos);
  EXPECT_NE(error_of(make_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}", two)).find("unexpected key"),
            std::string::npos);
  EXPECT_NE(error_of(make_npy("{'descr': '<f4", two)).find("unterminated"), std::string::npos);
  EXPECT_NE(error_of(make_npy("not a dict", two)).find("malformed"), std::string::npos);
  EXPECT_NE(error_of(make_npy("{'descr': '<f4', 'fortran_order': Maybe, 'shape': (2,)}", two)).find("True or False"),
            std::string::npos);
  // Every message names the source.
  EXPECT_EQ(error_of("").rfind("x.npy", 0), 0u);
}

TEST(Npy, EveryTruncationIsAnErrorNotACrash) {
  std::string full = make_npy("{'descr': '<i2', 'fortran_order': False, 'shape': (3, 1), }", raw<int16_t>({1, 2, 3}));
  for (size_t n = 0; n < full.size(); ++n) EXPECT_FALSE(parse_npy(full.substr(0, n)).ok()) << n;
  EXPECT_TRUE(parse_npy(full).ok());
}

}  // namespace
}  // namespace dlrt
