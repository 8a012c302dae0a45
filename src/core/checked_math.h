// Integer arithmetic on sizes a model's attributes choose (block sizes,
// strides, pads, group counts): each returns nullopt where the exact result
// does not fit int64_t, so a hostile attribute is refused instead of wrapping
// into a size that happens to fit.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>

namespace dlrt {

inline std::optional<int64_t> checked_add(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}

inline std::optional<int64_t> checked_sub(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_sub_overflow(a, b, &r)) return std::nullopt;
  return r;
}

inline std::optional<int64_t> checked_mul(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

inline std::optional<int64_t> checked_product(std::initializer_list<int64_t> factors) {
  int64_t r = 1;
  for (int64_t f : factors)
    if (__builtin_mul_overflow(r, f, &r)) return std::nullopt;
  return r;
}

// ceil(a / b) for a >= 0 and b > 0, without forming a + b - 1 (which wraps
// for b near INT64_MAX).
constexpr int64_t ceil_div_exact(int64_t a, int64_t b) { return a == 0 ? 0 : 1 + (a - 1) / b; }

}  // namespace dlrt
