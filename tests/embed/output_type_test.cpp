// output_type: sentence-transformers' quantize_embeddings (6.x) at its bucket edges. The
// expected buckets are what the library returns for these float32 values (numpy 2.4,
// sentence-transformers 6.2.0); tests/python/test_output_types.py compares the rest.
#include "embed/models/output_type.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

namespace dlrt::embed {
namespace {

std::vector<int> quantized(const std::vector<float>& v, OutputType type, const QuantizationRanges* ranges) {
  std::vector<uint8_t> bytes;
  quantize_into(v.data(), v.size(), type, ranges, &bytes);
  std::vector<int> out;
  for (uint8_t b : bytes) out.push_back(quantized_value(type, b));
  return out;
}

TEST(OutputType, Names) {
  for (const char* name : {"float32", "int8", "uint8", "binary", "ubinary"})
    EXPECT_STREQ(output_type_name(*output_type_from_name(name)), name);
  EXPECT_EQ(output_type_from_name("float"), OutputType::kFloat32);
  EXPECT_FALSE(output_type_from_name("float16"));
  EXPECT_FALSE(output_type_from_name("INT8"));
  EXPECT_EQ(quantized_bytes(OutputType::kInt8, 13), 13u);
  EXPECT_EQ(quantized_bytes(OutputType::kUbinary, 13), 2u);
  EXPECT_EQ(quantized_bytes(OutputType::kBinary, 16), 2u);
}

// Each step rounded to float32 as numpy does: the first two values are one bucket lower, the
// next two one higher, than exact arithmetic gives; the range's own maximum lands in 254
// ((0.7 + 0.3) / step is 254.99998 in float32); values outside the range are clipped.
TEST(OutputType, Int8BucketEdgesAreNumpysFloat32Ones) {
  const float lo = -0.3f, hi = 0.7f;
  const std::vector<float> v = {-0x1.b9b9bcp-4f,
                                -0x1.99999cp-4f,
                                -0x1.21212ep-6f,
                                -0x1.c1c1dcp-7f,
                                lo,
                                hi,
                                -0.31f,
                                0.71f,
                                std::nextafter(hi, 0.0f),
                                0.2f};
  const std::vector<int> uint8 = {48, 50, 72, 73, 0, 254, 0, 255, 254, 127};
  QuantizationRanges ranges{std::vector<float>(v.size(), lo), std::vector<float>(v.size(), hi)};
  EXPECT_EQ(quantized(v, OutputType::kUint8, &ranges), uint8);
  std::vector<int> int8;
  for (int q : uint8) int8.push_back(q - 128);  // floor, then - 128: 0.2 is -1 (5.x truncated -0.5 to 0)
  EXPECT_EQ(quantized(v, OutputType::kInt8, &ranges), int8);
}

TEST(OutputType, ZeroWidthRangeStepsByOneAndNanIsBucketZero) {
  QuantizationRanges ranges{{0.5f, 0.5f, 0.5f, 0.0f}, {0.5f, 0.5f, 0.5f, 1.0f}};
  // step 1 where max == min: floor(x - min), clipped.
  EXPECT_EQ(quantized({0.5f, 3.7f, -2.0f, NAN}, OutputType::kUint8, &ranges), (std::vector<int>{0, 3, 0, 0}));
  EXPECT_EQ(quantized({0.5f, 300.0f, 0.4f, INFINITY}, OutputType::kInt8, &ranges),
            (std::vector<int>{-128, 127, -128, 127}));
}

// Bits of x > 0, most significant first, each row padded with zero bits (packbits(axis=-1)):
// 0, -0 and NaN are 0 bits, a denormal-small positive value a 1 bit.
TEST(OutputType, BinaryPacksSignBits) {
  const std::vector<float> v = {0.5f, -0.5f, 0.0f, 1e-30f, -0.0f, 2.0f, 3.0f, -1.0f, 0.1f, 0.0f, NAN, 0.0f, 0.0f};
  EXPECT_EQ(quantized(v, OutputType::kUbinary, nullptr), (std::vector<int>{150, 128}));
  EXPECT_EQ(quantized(v, OutputType::kBinary, nullptr), (std::vector<int>{22, 0}));
  EXPECT_EQ(quantized({1, 1, 1, 1, 1, 1, 1, 1}, OutputType::kBinary, nullptr), (std::vector<int>{127}));
  EXPECT_EQ(quantized({-1}, OutputType::kBinary, nullptr), (std::vector<int>{-128}));
}

// Where the ranges come from: given ranges, else calibration rows, else the rows themselves
// (two at least, as the library).
TEST(OutputType, RangesFromCalibrationOrTheRows) {
  const std::vector<std::vector<float>> rows = {{0.0f, 1.0f}, {1.0f, 3.0f}, {0.5f, 2.0f}};
  std::vector<uint8_t> out;
  ASSERT_EQ(quantize_rows(rows, OutputType::kUint8, {}, &out), "");
  EXPECT_EQ(out, (std::vector<uint8_t>{0, 0, 254, 254, 127, 127}));  // each maximum: 254.99998 in float32
  const std::vector<float> calibration = {0.0f, 0.0f, 2.0f, 4.0f};   // rows {0, 0} and {2, 4}
  out.clear();
  ASSERT_EQ(quantize_rows(rows, OutputType::kUint8, {std::nullopt, calibration.data(), 2}, &out), "");
  EXPECT_EQ(out, (std::vector<uint8_t>{0, 63, 127, 191, 63, 127}));
  out.clear();
  QuantizationSource given{QuantizationRanges{{0.0f, 0.0f}, {2.0f, 4.0f}}};
  ASSERT_EQ(quantize_rows(rows, OutputType::kUint8, given, &out), "");
  EXPECT_EQ(out, (std::vector<uint8_t>{0, 63, 127, 191, 63, 127}));

  out.clear();
  EXPECT_NE(quantize_rows({{0.0f, 1.0f}}, OutputType::kInt8, {}, &out).find("single embedding"), std::string::npos);
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(quantize_rows({{0.0f, 1.0f}}, OutputType::kUbinary, {}, &out), "");  // bits need no ranges
  out.clear();
  QuantizationSource narrow{QuantizationRanges{{0.0f}, {1.0f}}};
  EXPECT_NE(quantize_rows(rows, OutputType::kInt8, narrow, &out).find("1 values per row"), std::string::npos);
  EXPECT_NE(quantize_rows({{0.0f}, {1.0f, 2.0f}}, OutputType::kInt8, {}, &out), "");
  EXPECT_EQ(quantize_rows(std::vector<std::vector<float>>{}, OutputType::kInt8, {}, &out), "");  // nothing to do
}

}  // namespace
}  // namespace dlrt::embed
