// Numeric value conversion and integer arithmetic without undefined
// behaviour, for Cast, for ops that compute in one type and store in another
// (Pow with mixed dtypes), and for wrapping (two's complement) integer math.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "dlrt/dtype.h"

namespace dlrt::cpu {

template <typename T>
inline constexpr bool is_half_v = std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>;

// The type arithmetic on T is done in: float for the 16-bit floats, T otherwise.
template <typename T>
using compute_t = std::conditional_t<is_half_v<T>, float, T>;

template <typename T>
inline constexpr bool is_float_v = std::is_floating_point_v<T> || is_half_v<T>;

// Float -> integer like numpy on x86: truncate toward zero, wrap modulo 2^bits
// for narrow types; NaN and values outside int64 give INT64_MIN's bit pattern
// (the hardware's "integer indefinite"), so no input is undefined behaviour.
template <typename To>
inline To float_to_int(double v) {
  static_assert(std::is_integral_v<To>);
  if constexpr (std::is_same_v<To, uint64_t>) {
    if (v >= 9223372036854775808.0 && v < 18446744073709551616.0) return static_cast<uint64_t>(v);
  }
  if (!(v >= -9223372036854775808.0 && v < 9223372036854775808.0)) return static_cast<To>(std::numeric_limits<int64_t>::min());
  return static_cast<To>(static_cast<int64_t>(v));  // modular since C++20
}

// Converts one value of type From to To (bool: non-zero is true).
template <typename To, typename From>
inline To convert_value(From v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (std::is_same_v<To, bool>) {
    return static_cast<compute_t<From>>(v) != 0;
  } else if constexpr (is_half_v<From>) {
    return convert_value<To, float>(static_cast<float>(v));
  } else if constexpr (is_half_v<To>) {
    return To(static_cast<float>(v));
  } else if constexpr (std::is_integral_v<To> && std::is_floating_point_v<From>) {
    return float_to_int<To>(static_cast<double>(v));
  } else {
    return static_cast<To>(v);
  }
}

// Unsigned type wide enough that arithmetic on it never promotes to int.
template <typename T>
using wrap_t = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;

template <typename T>
T wrap_add(T a, T b) {
  if constexpr (std::is_integral_v<T>) return static_cast<T>(static_cast<wrap_t<T>>(a) + static_cast<wrap_t<T>>(b));
  else return static_cast<compute_t<T>>(a) + static_cast<compute_t<T>>(b);
}
template <typename T>
T wrap_sub(T a, T b) {
  if constexpr (std::is_integral_v<T>) return static_cast<T>(static_cast<wrap_t<T>>(a) - static_cast<wrap_t<T>>(b));
  else return static_cast<compute_t<T>>(a) - static_cast<compute_t<T>>(b);
}
template <typename T>
T wrap_mul(T a, T b) {
  if constexpr (std::is_integral_v<T>) return static_cast<T>(static_cast<wrap_t<T>>(a) * static_cast<wrap_t<T>>(b));
  else return static_cast<compute_t<T>>(a) * static_cast<compute_t<T>>(b);
}

}  // namespace dlrt::cpu
