// libFuzzer harness: bytes -> the runtime's TOML config parser.
#include <cstddef>
#include <cstdint>
#include <string>

#include "runtime/config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto c = dlrt::parse_runtime_config(std::string(reinterpret_cast<const char*>(data), size), "fuzz.toml");
  (void)c;
  return 0;
}
