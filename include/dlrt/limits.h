// Bounds that every surface of dlrt applies the same way (docs/limits.md has
// the whole table).
#pragma once

namespace dlrt {

// The most intra-op threads a session may have (SessionOptions::threads, the
// CLI's --threads, the config files' threads, the C and Python APIs): more is
// refused with kInvalidArgument before any thread starts.
inline constexpr int kMaxThreads = 4096;

}  // namespace dlrt
