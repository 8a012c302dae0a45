// libFuzzer harness: bytes -> the .npy reader (header parsing, dtype, shape,
// sizes).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto t = dlrt::parse_npy(std::string_view(reinterpret_cast<const char*>(data), size));
  (void)t;
  return 0;
}
