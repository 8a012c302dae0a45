// Content hashes for cache keys and checksums: 64-bit FNV-1a, and its
// fixed-width hex form for file names. Not cryptographic.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace dlrt {

inline constexpr uint64_t kFnv1aOffset = 1469598103934665603ull;

// Continues hash `h` (default: a fresh one) over `n` bytes at `data`.
inline uint64_t fnv1a(const void* data, size_t n, uint64_t h = kFnv1aOffset) {
  const auto* p = static_cast<const uint8_t*>(data);
  for (size_t i = 0; i < n; ++i) {
    h ^= p[i];
    h *= 1099511628211ull;
  }
  return h;
}

inline uint64_t fnv1a(std::string_view s, uint64_t h = kFnv1aOffset) { return fnv1a(s.data(), s.size(), h); }

// 16 lower-case hex digits.
inline std::string hex64(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace dlrt
