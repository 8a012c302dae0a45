// The narrow types' conversions (core/narrow_types.h) against values that
// ml_dtypes (what ONNX's reference Cast uses) gives for the same inputs.
#include "core/narrow_types.h"

#include <cmath>
#include <iterator>
#include <limits>

#include <gtest/gtest.h>

namespace dlrt {
namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

TEST(NarrowTypes, Float8E4M3FN) {
  const DType t = DType::kFloat8E4M3FN;
  EXPECT_EQ(narrow_from_double(t, 448, false), 0x7E);   // the largest finite value
  EXPECT_EQ(narrow_from_double(t, 464, false), 0x7E);   // a tie: to the even mantissa
  EXPECT_EQ(narrow_from_double(t, 1000, false), 0x7F);  // overflow: NaN (no infinity)
  EXPECT_EQ(narrow_from_double(t, -1000, false), 0xFF);
  EXPECT_EQ(narrow_from_double(t, 1000, true), 0x7E);   // saturate: the largest
  EXPECT_EQ(narrow_from_double(t, -kInf, true), 0xFE);
  EXPECT_EQ(narrow_from_double(t, kNaN, true), 0x7F);
  EXPECT_EQ(narrow_from_double(t, -10.7, true), 211);
  EXPECT_EQ(narrow_from_double(t, 2.5, true), 66);
  EXPECT_EQ(narrow_from_double(t, 1e-9, true), 0);
  EXPECT_DOUBLE_EQ(narrow_to_double(t, 0x7E), 448);
  EXPECT_DOUBLE_EQ(narrow_to_double(t, 0x01), std::ldexp(1.0, -9));  // the smallest subnormal
  EXPECT_TRUE(std::isnan(narrow_to_double(t, 0x7F)));
}

TEST(NarrowTypes, Float8E5M2AndFnuz) {
  EXPECT_EQ(narrow_from_double(DType::kFloat8E5M2, 1000, false), 100);
  EXPECT_EQ(narrow_from_double(DType::kFloat8E5M2, kInf, false), 124);
  EXPECT_EQ(narrow_from_double(DType::kFloat8E5M2, -kInf, false), 252);
  EXPECT_EQ(narrow_from_double(DType::kFloat8E5M2, kNaN, false), 126);
  EXPECT_EQ(narrow_from_double(DType::kFloat8E5M2, kInf, true), 123);  // 57344
  EXPECT_TRUE(std::isinf(narrow_to_double(DType::kFloat8E5M2, 124)));
  EXPECT_EQ(narrow_from_double(DType::kFloat8E5M2FNUZ, 1000, false), 104);
  EXPECT_EQ(narrow_from_double(DType::kFloat8E5M2FNUZ, kInf, false), 0x80);
  EXPECT_EQ(narrow_from_double(DType::kFloat8E4M3FNUZ, -0.0, true), 0);  // no negative zero
  EXPECT_EQ(narrow_from_double(DType::kFloat8E4M3FNUZ, 1000, false), 0x80);
  EXPECT_TRUE(std::isnan(narrow_to_double(DType::kFloat8E4M3FNUZ, 0x80)));
}

TEST(NarrowTypes, EveryFloat8PatternRoundTrips) {
  for (DType t : {DType::kFloat8E4M3FN, DType::kFloat8E4M3FNUZ, DType::kFloat8E5M2, DType::kFloat8E5M2FNUZ}) {
    for (int c = 0; c < 256; ++c) {
      const double v = narrow_to_double(t, static_cast<uint8_t>(c));
      if (std::isnan(v)) continue;
      EXPECT_EQ(narrow_from_double(t, v, false), c) << dtype_name(t) << " pattern " << c << " = " << v;
    }
  }
}

TEST(NarrowTypes, Float4E2M1) {
  const DType t = DType::kFloat4E2M1;
  EXPECT_EQ(narrow_from_double(t, -10.7, false), 15);  // always saturates: -6
  EXPECT_EQ(narrow_from_double(t, 1.5, false), 3);
  EXPECT_EQ(narrow_from_double(t, 2.5, false), 4);  // tie: to 2 (even)
  EXPECT_EQ(narrow_from_double(t, kInf, false), 7);
  EXPECT_EQ(narrow_from_double(t, kNaN, false), 8);
  for (int c = 0; c < 16; ++c) EXPECT_EQ(narrow_from_double(t, narrow_to_double(t, static_cast<uint8_t>(c)), false), c == 8 ? 8 : c);
}

TEST(NarrowTypes, SmallIntegersRoundToEvenThenWrap) {
  // ONNX's notes on int4/int2: round to nearest (ties to even), then keep the
  // low bits. (Before, values were truncated toward zero: -1.7 gave -1.)
  auto i4 = [](double x) { return static_cast<int8_t>(narrow_from_double(DType::kInt4, x, false)); };
  const double in[] = {-1.7, 3.5, 7.9, -8.6, 2.5, -2.5, 0.5, 1.5, -0.5, 8.5};
  const int want[] = {-2, 4, -8, 7, 2, -2, 0, 2, 0, -8};  // 7.9 -> 8 -> -8, -8.6 -> -9 -> 7
  for (size_t i = 0; i < std::size(in); ++i) EXPECT_EQ(i4(in[i]), want[i]) << "int4 of " << in[i];
  EXPECT_EQ(i4(-10.7), 5);  // -11 = ...0101
  EXPECT_EQ(i4(8), -8);
  EXPECT_EQ(narrow_from_double(DType::kUInt4, -2.5, false), 14);  // -2
  EXPECT_EQ(narrow_from_double(DType::kUInt4, -1.5, false), 14);  // -2
  EXPECT_EQ(narrow_from_double(DType::kUInt4, 15.5, false), 0);   // 16
  EXPECT_EQ(narrow_from_double(DType::kUInt4, 14.5, false), 14);
  EXPECT_EQ(static_cast<int8_t>(narrow_from_double(DType::kInt2, 2.5, false)), -2);  // 2
  EXPECT_EQ(static_cast<int8_t>(narrow_from_double(DType::kInt2, 3.5, false)), 0);   // 4
  EXPECT_EQ(narrow_from_double(DType::kUInt2, 7.5, false), 0);                       // 8
  EXPECT_EQ(narrow_from_double(DType::kUInt2, 6.5, false), 2);                       // 6
  EXPECT_EQ(narrow_from_double(DType::kInt4, kNaN, false), 0);
  EXPECT_EQ(narrow_from_double(DType::kInt4, 1e300, false), 0);
  EXPECT_DOUBLE_EQ(narrow_to_double(DType::kInt2, 0xFE), -2);
}

TEST(NarrowTypes, Float8E8M0Rounding) {
  const DType t = DType::kFloat8E8M0;
  EXPECT_EQ(narrow_from_double(t, 0.3, true, E8M0Rounding::kUp), 126);
  EXPECT_EQ(narrow_from_double(t, 0.3, true, E8M0Rounding::kDown), 125);
  EXPECT_EQ(narrow_from_double(t, 0.3, true, E8M0Rounding::kNearest), 125);
  EXPECT_EQ(narrow_from_double(t, 1.0, true, E8M0Rounding::kUp), 127);
  EXPECT_EQ(narrow_from_double(t, kNaN, true), 255);
  EXPECT_EQ(narrow_from_double(t, 3e38, true, E8M0Rounding::kUp), 254);   // saturate at the largest
  EXPECT_EQ(narrow_from_double(t, 3e38, false, E8M0Rounding::kUp), 255);  // else NaN
  EXPECT_DOUBLE_EQ(narrow_to_double(t, 127), 1.0);
}

}  // namespace
}  // namespace dlrt
